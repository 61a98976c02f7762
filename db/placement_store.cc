#include "db/placement_store.h"

#include <ctime>
#include <stdexcept>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "db/schema.h"

namespace topo {
namespace {

constexpr std::string_view kColumns =
    "id, job_id, placed_at, snapshot_id, hosts, ring_order, profile, estimate_s, ideal_s, reasons, fallback, "
    "fallback_why, deferred_why";

std::string join(const std::vector<std::string>& items, char sep, std::string_view what) {
  std::string out;
  for (const std::string& item : items) {
    if (item.find(sep) != std::string::npos)
      throw std::invalid_argument(
          fmt::format("{} '{}' contains the separator {}", what, item, sep == '\n' ? "newline" : "','"));
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  size_t start = 0;
  for (;;) {
    size_t end = text.find(sep, start);
    out.push_back(text.substr(start, end - start));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

PlacementRecord read_record(const Statement& s) {
  PlacementRecord r;
  r.id = s.column_int(0);
  r.job_id = static_cast<uint32_t>(s.column_int(1));
  r.placed_at = s.column_text(2);
  if (!s.column_is_null(3)) r.snapshot_id = s.column_int(3);
  r.hosts = split(s.column_text(4), ',');
  r.ring_order = split(s.column_text(5), ',');
  r.profile = s.column_text(6);
  r.estimate_s = s.column_double(7);
  r.ideal_s = s.column_double(8);
  r.reasons = split(s.column_text(9), '\n');
  r.fallback = s.column_int(10) != 0;
  r.fallback_why = s.column_text(11);
  r.deferred_why = s.column_text(12);
  return r;
}

constexpr std::string_view kInsert =
    "INSERT INTO placement (job_id, placed_at, snapshot_id, hosts, ring_order, profile, estimate_s, ideal_s, "
    "reasons, fallback, fallback_why, deferred_why) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";

void insert(Statement& s, const PlacementRecord& r) {
  check_placement_record(r);
  s.bind(1, static_cast<int64_t>(r.job_id));
  s.bind(2, r.placed_at.empty() ? placement_time_now() : r.placed_at);
  if (r.snapshot_id) s.bind(3, *r.snapshot_id);
  s.bind(4, join(r.hosts, ',', "host")).bind(5, join(r.ring_order, ',', "host")).bind(6, r.profile);
  s.bind(7, r.estimate_s).bind(8, r.ideal_s);
  s.bind(9, join(r.reasons, '\n', "reason")).bind(10, r.fallback ? 1 : 0).bind(11, r.fallback_why);
  s.bind(12, r.deferred_why);
  s.run();
}

}  // namespace

std::string placement_time_now() {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(now));
}

void check_placement_record(const PlacementRecord& r) {
  if (r.job_id == 0) throw std::invalid_argument("a placement record needs a job id");
  (void)join(r.hosts, ',', "host");
  (void)join(r.ring_order, ',', "host");
  (void)join(r.reasons, '\n', "reason");
}

PlacementStore::PlacementStore(std::string path) : PlacementStore(std::move(path), Options{}) {}

PlacementStore::PlacementStore(std::string path, Options options)
    : connection_(std::move(path), options.busy_timeout, options.access) {
  open_schema(connection_);
  if (!options.sync_each_record && options.access == Access::ReadWrite)
    connection_.exec("PRAGMA synchronous = NORMAL", "cannot relax the placement log's syncing");
}

int64_t PlacementStore::record(const PlacementRecord& r) {
  Statement s = connection_.prepare(kInsert, fmt::format("cannot record the placement of job {}", r.job_id));
  insert(s, r);
  return connection_.last_insert_rowid();
}

size_t PlacementStore::record_all(std::span<const PlacementRecord> records, bool skip_recorded) {
  if (records.empty()) return 0;
  for (const PlacementRecord& r : records) check_placement_record(r);
  Transaction t(connection_, "placement records");
  Statement add = connection_.prepare(kInsert, "cannot record placements");
  Statement seen = connection_.prepare(
      "SELECT 1 FROM placement WHERE job_id = ?1 AND placed_at = ?2 AND hosts = ?3 AND ring_order = ?4 LIMIT 1",
      "cannot look for a recorded placement");
  size_t added = 0;
  for (const PlacementRecord& r : records) {
    if (skip_recorded && !r.placed_at.empty()) {
      seen.bind(1, static_cast<int64_t>(r.job_id)).bind(2, r.placed_at);
      seen.bind(3, join(r.hosts, ',', "host")).bind(4, join(r.ring_order, ',', "host"));
      bool found = seen.step();
      seen.reset();
      if (found) continue;
    }
    insert(add, r);
    ++added;
  }
  t.commit();
  return added;
}

std::optional<PlacementRecord> PlacementStore::latest_for_job(uint32_t job_id) const {
  Statement s =
      connection_.prepare(fmt::format("SELECT {} FROM placement WHERE job_id = ?1 ORDER BY id DESC LIMIT 1", kColumns),
                          fmt::format("cannot read the placement of job {}", job_id));
  s.bind(1, static_cast<int64_t>(job_id));
  if (!s.step()) return std::nullopt;
  return read_record(s);
}

std::vector<PlacementRecord> PlacementStore::recent(size_t limit) const {
  // The newest row of each job, newest job first.
  Statement s = connection_.prepare(
      fmt::format("SELECT {} FROM placement WHERE id IN (SELECT MAX(id) FROM placement GROUP BY job_id) "
                  "ORDER BY id DESC LIMIT ?1",
                  kColumns),
      "cannot list the recent placements");
  s.bind(1, static_cast<int64_t>(limit));
  std::vector<PlacementRecord> out;
  while (s.step()) out.push_back(read_record(s));
  return out;
}

std::vector<PlacementRecord> PlacementStore::history(uint32_t job_id) const {
  Statement s = connection_.prepare(fmt::format("SELECT {} FROM placement WHERE job_id = ?1 ORDER BY id", kColumns),
                                    fmt::format("cannot read the placements of job {}", job_id));
  s.bind(1, static_cast<int64_t>(job_id));
  std::vector<PlacementRecord> out;
  while (s.step()) out.push_back(read_record(s));
  return out;
}

}  // namespace topo
