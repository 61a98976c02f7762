#include "db/health_store.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <string_view>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "db/schema.h"

namespace topo {
namespace {

constexpr const char* kSampleColumns =
    "node, port, symbol_errors, link_recoveries, link_downed, rcv_errors, xmit_discards, xmit_wait, xmit_data, "
    "rcv_data, xmit_packets, rcv_packets, extended";

std::string iso(int64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(t));
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

CollectionInfo info_row(const Statement& s) {
  return {s.column_int(0),         s.column_int(1),  s.column_text(2),
          s.column_int(3),         s.column_text(4), static_cast<int>(s.column_int(5)),
          lines(s.column_text(6)), s.column_text(7)};
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The collection's row, inside the caller's transaction; its id.
int64_t insert_collection(Connection& c, std::string_view kind, int64_t snapshot_id, int64_t ms,
                          const std::string& source, size_t count, const std::vector<std::string>& unanswered) {
  {
    Statement known = c.prepare("SELECT count(*) FROM snapshot WHERE id = ?1");
    known.bind(1, snapshot_id).step();
    if (known.column_int(0) == 0)
      throw DbError(DbErrorKind::UnknownSnapshot, c.path(),
                    fmt::format("no snapshot {} to save {} counters against", snapshot_id, kind));
  }
  std::string missing;
  for (const std::string& u : unanswered) missing += u + "\n";
  Statement s = c.prepare(
      "INSERT INTO health_collection (snapshot_id, taken_at, taken_ms, source, ports, unanswered, kind) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
      "cannot save a counter collection");
  s.bind(1, snapshot_id).bind(2, iso(ms)).bind(3, ms).bind(4, source).bind(5, static_cast<int64_t>(count));
  s.bind(6, missing).bind(7, std::string(kind)).run();
  return c.last_insert_rowid();
}

std::vector<CollectionInfo> list_kind(const Connection& c, int64_t snapshot_id, std::string_view kind) {
  Statement s = c.prepare(
      "SELECT id, snapshot_id, taken_at, taken_ms, source, ports, unanswered, kind FROM health_collection "
      "WHERE snapshot_id = ?1 AND kind = ?2 ORDER BY id",
      "cannot list the counter collections");
  s.bind(1, snapshot_id).bind(2, std::string(kind));
  std::vector<CollectionInfo> out;
  while (s.step()) out.push_back(info_row(s));
  return out;
}

// The newest `count` collection ids of a kind, oldest first.
std::vector<int64_t> newest_ids(const Connection& c, int64_t snapshot_id, std::string_view kind, int count) {
  Statement s =
      c.prepare("SELECT id FROM health_collection WHERE snapshot_id = ?1 AND kind = ?2 ORDER BY id DESC LIMIT ?3",
                "cannot list the counter collections");
  s.bind(1, snapshot_id).bind(2, std::string(kind)).bind(3, count);
  std::vector<int64_t> ids;
  while (s.step()) ids.push_back(s.column_int(0));
  std::reverse(ids.begin(), ids.end());
  return ids;
}

}  // namespace

HealthStore::HealthStore(std::string path, Access access)
    : connection_(std::move(path), std::chrono::milliseconds(5000), access) {
  open_schema(connection_);
}

int64_t HealthStore::add(int64_t snapshot_id, const std::vector<PortSample>& samples, const std::string& source,
                         const std::vector<std::string>& unanswered, std::optional<int64_t> taken_ms) {
  Transaction tx(connection_, "a port counter collection");
  int64_t id = insert_collection(connection_, "port", snapshot_id, taken_ms.value_or(now_ms()), source, samples.size(),
                                 unanswered);
  Statement s = connection_.prepare(
      fmt::format("INSERT INTO port_sample (collection_id, {}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
                  "?11, ?12, ?13, ?14)",
                  kSampleColumns),
      "cannot save a port's counters");
  for (const PortSample& p : samples) {
    const PortCounters& k = p.counters;
    auto v = [](uint64_t x) { return static_cast<int64_t>(x); };  // bit for bit
    s.bind(1, id).bind(2, p.node).bind(3, p.port).bind(4, v(k.symbol_errors)).bind(5, v(k.link_recoveries));
    s.bind(6, v(k.link_downed)).bind(7, v(k.rcv_errors)).bind(8, v(k.xmit_discards)).bind(9, v(k.xmit_wait));
    s.bind(10, v(k.xmit_data)).bind(11, v(k.rcv_data)).bind(12, v(k.xmit_packets)).bind(13, v(k.rcv_packets));
    s.bind(14, k.extended ? 1 : 0).run();
  }
  tx.commit();
  return id;
}

int64_t HealthStore::add_nics(int64_t snapshot_id, const std::vector<NicSample>& nics, const std::string& source,
                              const std::vector<std::string>& unread, std::optional<int64_t> taken_ms) {
  Transaction tx(connection_, "a NIC counter collection");
  if (!taken_ms && !nics.empty() &&
      std::all_of(nics.begin(), nics.end(), [](const NicSample& n) { return n.taken_ms > 0; }))
    taken_ms = std::max_element(nics.begin(), nics.end(), [](const NicSample& a, const NicSample& b) {
                 return a.taken_ms < b.taken_ms;
               })->taken_ms;
  int64_t id =
      insert_collection(connection_, "ethtool", snapshot_id, taken_ms.value_or(now_ms()), source, nics.size(), unread);
  Statement n = connection_.prepare("INSERT INTO nic (collection_id, host, iface, taken_ms) VALUES (?1, ?2, ?3, ?4)",
                                    "cannot save a NIC");
  Statement k = connection_.prepare(
      "INSERT INTO nic_counter (collection_id, host, iface, counter, value) VALUES (?1, ?2, ?3, ?4, ?5)",
      "cannot save a NIC's counters");
  for (const NicSample& nic : nics) {
    n.bind(1, id).bind(2, nic.host).bind(3, nic.iface).bind(4, nic.taken_ms).run();
    for (const auto& [name, value] : nic.counters)
      k.bind(1, id).bind(2, nic.host).bind(3, nic.iface).bind(4, name).bind(5, static_cast<int64_t>(value)).run();
  }
  tx.commit();
  return id;
}

std::vector<CollectionInfo> HealthStore::list(int64_t snapshot_id) const {
  return list_kind(connection_, snapshot_id, "port");
}

std::vector<CollectionInfo> HealthStore::list_nics(int64_t snapshot_id) const {
  return list_kind(connection_, snapshot_id, "ethtool");
}

std::optional<int64_t> HealthStore::newest() const {
  Statement s = connection_.prepare("SELECT max(id) FROM health_collection", "cannot read the newest collection");
  s.step();
  if (s.column_is_null(0)) return std::nullopt;
  return s.column_int(0);
}

CounterCollection HealthStore::load(int64_t collection_id) const {
  Statement h = connection_.prepare("SELECT taken_at, taken_ms FROM health_collection WHERE id = ?1",
                                    "cannot read a port counter collection");
  h.bind(1, collection_id);
  if (!h.step())
    throw DbError(DbErrorKind::UnknownSnapshot, connection_.path(),
                  fmt::format("no port counter collection {}", collection_id));
  CounterCollection out{collection_id, h.column_text(0), h.column_int(1), {}};
  Statement s = connection_.prepare(
      fmt::format("SELECT {} FROM port_sample WHERE collection_id = ?1 ORDER BY node, port", kSampleColumns),
      "cannot read a collection's port counters");
  s.bind(1, collection_id);
  while (s.step()) {
    PortSample p;
    p.node = s.column_text(0);
    p.port = static_cast<int>(s.column_int(1));
    auto v = [&](int i) { return static_cast<uint64_t>(s.column_int(i)); };
    p.counters = {v(2), v(3), v(4), v(5), v(6), v(7), v(8), v(9), v(10), v(11), s.column_int(12) != 0};
    out.samples.push_back(std::move(p));
  }
  return out;
}

std::vector<CounterCollection> HealthStore::latest(int64_t snapshot_id, int count) const {
  std::vector<CounterCollection> out;
  for (int64_t id : newest_ids(connection_, snapshot_id, "port", count)) out.push_back(load(id));
  return out;
}

std::vector<NicCollection> HealthStore::latest_nics(int64_t snapshot_id, int count) const {
  std::vector<NicCollection> out;
  for (int64_t id : newest_ids(connection_, snapshot_id, "ethtool", count)) out.push_back(load_nics(id));
  return out;
}

NicCollection HealthStore::load_nics(int64_t collection_id) const {
  Statement h = connection_.prepare("SELECT taken_at, taken_ms FROM health_collection WHERE id = ?1",
                                    "cannot read a NIC counter collection");
  h.bind(1, collection_id);
  if (!h.step())
    throw DbError(DbErrorKind::UnknownSnapshot, connection_.path(),
                  fmt::format("no NIC counter collection {}", collection_id));
  NicCollection out{collection_id, h.column_text(0), h.column_int(1), {}};
  Statement n =
      connection_.prepare("SELECT host, iface, taken_ms FROM nic WHERE collection_id = ?1 ORDER BY host, iface",
                          "cannot read a collection's NICs");
  n.bind(1, collection_id);
  std::map<std::pair<std::string, std::string>, size_t> at;
  while (n.step()) {
    at[{n.column_text(0), n.column_text(1)}] = out.samples.size();
    out.samples.push_back({n.column_text(0), n.column_text(1), {}, n.column_int(2)});
  }
  Statement k = connection_.prepare("SELECT host, iface, counter, value FROM nic_counter WHERE collection_id = ?1",
                                    "cannot read a collection's NIC counters");
  k.bind(1, collection_id);
  while (k.step()) {
    auto it = at.find({k.column_text(0), k.column_text(1)});
    if (it == at.end()) continue;  // the foreign key keeps this from happening
    out.samples[it->second].counters[k.column_text(2)] = static_cast<uint64_t>(k.column_int(3));
  }
  return out;
}

std::vector<NicRates> latest_nic_rates(const HealthStore& store, const Fabric& fabric, int64_t snapshot_id) {
  std::vector<NicCollection> last = store.latest_nics(snapshot_id, 2);
  if (last.size() < 2) return {};
  return nic_rates(fabric, last[0], last[1]);
}

std::vector<CableHealth> latest_cable_health(const HealthStore& store, const Fabric& fabric, int64_t snapshot_id) {
  std::vector<CounterCollection> last = store.latest(snapshot_id, 2);
  if (last.size() < 2) return {};
  return cable_health(fabric, last[0], last[1]);
}

}  // namespace topo
