#include "db/snapshot_store.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <ctime>
#include <map>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "common/error.h"
#include "db/nvlink_store.h"
#include "db/schema.h"
#include "fabric/classify.h"

namespace topo {
namespace {

constexpr std::string_view kInfoColumns =
    "id, taken_at, source, hosts, hcas, switches, leaves, spines, cores, links, pods, rails, rail_optimized, "
    "faults, routing, routing_engine";

SnapshotInfo read_info(const Statement& s) {
  SnapshotInfo info;
  info.id = s.column_int(0);
  info.taken_at = s.column_text(1);
  info.source = s.column_text(2);
  auto count = [&](int i) { return static_cast<int>(s.column_int(i)); };
  info.summary.hosts = count(3);
  info.summary.hcas = count(4);
  info.switches = count(5);
  info.summary.leaves = count(6);
  info.summary.spines = count(7);
  info.summary.cores = count(8);
  info.summary.links = count(9);
  info.summary.pods = count(10);
  info.summary.rails = count(11);
  info.summary.rail_optimized = s.column_int(12) != 0;
  info.faults = count(13);
  info.routing = s.column_text(14);
  if (!s.column_text(15).empty()) info.routing += ":" + s.column_text(15);
  return info;
}

std::string utc_now() {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(now));
}

std::optional<PortState> parse_state(std::string_view text) {
  for (PortState s : {PortState::Down, PortState::Init, PortState::Armed, PortState::Active})
    if (name(s) == text) return s;
  return std::nullopt;
}

// What a node row says, kept to check the rebuilt classification against.
struct StoredNode {
  bool seen = false;
  NodeKind kind = NodeKind::Host;
  std::string id, name;
  uint64_t guid = 0;
  int ports = 0;
  uint32_t lid = 0;
  std::string host, device;  // HCA
  int rail = -1;
  std::string level;  // switch
  int pod = -1;
  double down_gbps = 0, up_gbps = 0;
};

struct StoredLink {
  std::string tier, expected;
  double gbps = 0;
  bool degraded = false;
};

// Rebuilds one snapshot; every surprise in the stored rows is an Inconsistent DbError.
class SnapshotReader {
 public:
  SnapshotReader(const Connection& c, int64_t id) : c_(c), id_(id) {}

  Fabric read(const SnapshotInfo& info, const std::string& host_pattern) {
    HostNaming naming;
    try {
      if (!host_pattern.empty()) naming = HostNaming(host_pattern);
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
    FabricBuilder builder(naming);
    read_nodes(info.summary.hosts + info.summary.hcas + info.switches);
    try {
      for (size_t i = 0; i < nodes_.size(); ++i) {
        const StoredNode& n = nodes_[i];
        NodeId v = 0;
        switch (n.kind) {
          case NodeKind::Host:
            v = builder.add_host(n.name);
            break;
          case NodeKind::Hca:
            v = builder.add_hca(n.id, n.name, n.ports, n.guid);
            break;
          case NodeKind::Switch:
            v = builder.add_switch(n.id, n.name, n.ports, n.guid);
            break;
        }
        if (v != i) fail(fmt::format("node '{}' lands at position {} instead of {}", n.id, v, i));
      }
      read_links(builder);
      for (const StoredNode& n : nodes_)
        if (n.lid != 0) builder.set_lid(n.id, n.lid);
    } catch (const FabricError& e) {
      fail(e.what());
    }
    Fabric fabric = [&] {
      try {
        return std::move(builder).finish();
      } catch (const FabricError& e) {
        fail(e.what());
      }
    }();
    fabric.set_source(info.source);
    read_gpus(fabric);
    read_nvlink(c_, id_, fabric);
    check(fabric, info);
    read_routing(fabric);
    return fabric;
  }

 private:
  [[noreturn]] void fail(std::string_view what) const {
    throw DbError(DbErrorKind::Inconsistent, c_.path(), fmt::format("snapshot {}: {}", id_, what));
  }

  StoredNode& slot(int64_t ordinal, std::string_view table) {
    if (ordinal < 0 || static_cast<size_t>(ordinal) >= nodes_.size() || nodes_[ordinal].seen)
      fail(fmt::format("{} row with ordinal {} is out of place ({} nodes)", table, ordinal, nodes_.size()));
    nodes_[ordinal].seen = true;
    return nodes_[ordinal];
  }

  void read_nodes(size_t total) {
    nodes_.assign(total, {});
    std::string what = fmt::format("cannot read snapshot {}", id_);
    Statement hosts = c_.prepare("SELECT ordinal, name FROM host WHERE snapshot_id = ?1", what);
    hosts.bind(1, id_);
    while (hosts.step()) {
      StoredNode& n = slot(hosts.column_int(0), "host");
      n.kind = NodeKind::Host;
      n.name = hosts.column_text(1);
    }
    Statement hcas = c_.prepare(
        "SELECT ordinal, node_id, description, host, device, rail, guid, ports, lid FROM hca WHERE snapshot_id = ?1",
        what);
    hcas.bind(1, id_);
    while (hcas.step()) {
      StoredNode& n = slot(hcas.column_int(0), "hca");
      n.kind = NodeKind::Hca;
      n.id = hcas.column_text(1);
      n.name = hcas.column_text(2);
      n.host = hcas.column_text(3);
      n.device = hcas.column_text(4);
      n.rail = static_cast<int>(hcas.column_int(5));
      n.guid = std::bit_cast<uint64_t>(hcas.column_int(6));
      n.ports = static_cast<int>(hcas.column_int(7));
      n.lid = read_lid(hcas.column_int(8), n.id);
    }
    Statement switches = c_.prepare(
        "SELECT ordinal, node_id, name, guid, ports, level, pod, down_gbps, up_gbps, lid FROM switch "
        "WHERE snapshot_id = ?1",
        what);
    switches.bind(1, id_);
    while (switches.step()) {
      StoredNode& n = slot(switches.column_int(0), "switch");
      n.kind = NodeKind::Switch;
      n.id = switches.column_text(1);
      n.name = switches.column_text(2);
      n.guid = std::bit_cast<uint64_t>(switches.column_int(3));
      n.ports = static_cast<int>(switches.column_int(4));
      n.level = switches.column_text(5);
      n.pod = static_cast<int>(switches.column_int(6));
      n.down_gbps = switches.column_double(7);
      n.up_gbps = switches.column_double(8);
      n.lid = read_lid(switches.column_int(9), n.id);
    }
    for (size_t i = 0; i < nodes_.size(); ++i)
      if (!nodes_[i].seen) fail(fmt::format("node at position {} is missing", i));
  }

  uint32_t read_lid(int64_t lid, std::string_view node) const {
    // Unicast LIDs are 16 bits: 0xc000 and above are multicast.
    if (lid < 0 || lid >= 0xc000) fail(fmt::format("node '{}' has LID {}, not a unicast LID", node, lid));
    return static_cast<uint32_t>(lid);
  }

  // The routing row and, for static routing, one table per switch.
  void read_routing(Fabric& fabric) const {
    Statement s =
        c_.prepare("SELECT routing, routing_engine, routing_emulated, routing_source FROM snapshot WHERE id = ?1",
                   fmt::format("cannot read the routing of snapshot {}", id_));
    s.bind(1, id_);
    if (!s.step()) fail("its row is gone");
    Routing routing;
    std::string kind = s.column_text(0);
    if (kind == "adaptive") return;
    // ECMP has no tables: its queue pairs per connection ride in the name.
    if (auto spec = parse_routing_spec(kind); spec && spec->kind == RoutingKind::Ecmp) {
      fabric.set_routing(ecmp_routing(spec->qps));
      return;
    }
    if (kind != "static") fail(fmt::format("routing '{}' is neither 'adaptive', 'static' nor 'ecmp:QPS'", kind));
    routing.kind = RoutingKind::Static;
    routing.engine = s.column_text(1);
    routing.emulated = s.column_int(2) != 0;
    routing.source = s.column_text(3);
    routing.lft.resize(fabric.switches().size());
    std::vector<bool> seen(fabric.switches().size(), false);
    Statement tables = c_.prepare("SELECT switch, ports FROM lft WHERE snapshot_id = ?1",
                                  fmt::format("cannot read the forwarding tables of snapshot {}", id_));
    tables.bind(1, id_);
    while (tables.step()) {
      int64_t ordinal = tables.column_int(0);
      int index = ordinal >= 0 && static_cast<size_t>(ordinal) < fabric.node_count()
                      ? fabric.switch_index(static_cast<NodeId>(ordinal))
                      : -1;
      if (index < 0 || seen[index])
        fail(fmt::format("forwarding table for node {}, which is not a switch or has two", ordinal));
      seen[index] = true;
      routing.lft[index] = tables.column_blob(1);
    }
    for (size_t i = 0; i < seen.size(); ++i)
      if (!seen[i])
        fail(fmt::format("static routing without a forwarding table for switch {}",
                         fabric.node(fabric.switches()[i]).name));
    fabric.set_routing(std::move(routing));
  }

  void read_links(FabricBuilder& builder) {
    Statement links = c_.prepare(
        "SELECT ordinal, a_node, a_port, b_node, b_port, width, speed, state, tier, expected, gbps, degraded "
        "FROM link WHERE snapshot_id = ?1 ORDER BY ordinal",
        fmt::format("cannot read the links of snapshot {}", id_));
    links.bind(1, id_);
    while (links.step()) {
      int64_t ordinal = links.column_int(0);
      if (ordinal != static_cast<int64_t>(links_.size()))
        fail(fmt::format("link at position {} is missing", links_.size()));
      std::string width = links.column_text(5), speed = links.column_text(6), state = links.column_text(7);
      auto w = parse_width(width);
      auto s = parse_speed(speed);
      auto st = parse_state(state);
      if (!w || !s || !st)
        fail(fmt::format("link {} has width '{}', speed '{}', state '{}'", ordinal, width, speed, state));
      builder.connect(links.column_text(1), static_cast<int>(links.column_int(2)), links.column_text(3),
                      static_cast<int>(links.column_int(4)), LinkRate{*w, *s}, *st);
      links_.push_back(
          {links.column_text(8), links.column_text(9), links.column_double(10), links.column_int(11) != 0});
    }
  }

  void read_gpus(Fabric& fabric) {
    Statement gpus = c_.prepare(
        "SELECT host, gpu_index, name, pci_bus, numa, closest_hca, rail FROM gpu WHERE snapshot_id = ?1 "
        "ORDER BY host, gpu_index",
        fmt::format("cannot read the GPUs of snapshot {}", id_));
    gpus.bind(1, id_);
    std::map<std::string, std::vector<Gpu>> by_host;
    while (gpus.step()) {
      Gpu g;
      g.index = static_cast<int>(gpus.column_int(1));
      g.name = gpus.column_text(2);
      g.pci_bus = gpus.column_text(3);
      g.numa = static_cast<int>(gpus.column_int(4));
      g.closest_hca = gpus.column_text(5);
      g.rail = static_cast<int>(gpus.column_int(6));
      by_host[gpus.column_text(0)].push_back(std::move(g));
    }
    for (auto& [host, list] : by_host) {
      auto v = fabric.find_host(host);
      if (!v) fail(fmt::format("GPUs of host '{}', which the snapshot does not have", host));
      fabric.set_gpus(*v, std::move(list));
    }
  }

  // The classification computed now must be the one computed when saved.
  void check(const Fabric& f, const SnapshotInfo& info) const {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const StoredNode& s = nodes_[i];
      const Node& n = f.node(i);
      if (s.kind == NodeKind::Switch) {
        if (s.level != name(n.level) || s.pod != n.pod || s.down_gbps != n.down_gbps || s.up_gbps != n.up_gbps)
          fail(fmt::format(
              "switch {} was saved as {} of pod {} ({:g} Gb/s down, {:g} up) but classifies as {} "
              "of pod {} ({:g} down, {:g} up)",
              n.name, s.level, s.pod, s.down_gbps, s.up_gbps, name(n.level), n.pod, n.down_gbps, n.up_gbps));
      } else if (s.kind == NodeKind::Hca) {
        if (s.host != n.host || s.device != n.device || s.rail != n.rail)
          fail(fmt::format("HCA '{}' was saved as host {} device {} rail {} but reads as host {} device {} rail {}",
                           n.name, s.host, s.device, s.rail, n.host, n.device, n.rail));
      }
    }
    size_t k = 0;
    for (auto e : boost::make_iterator_range(boost::edges(f.graph()))) {
      const Link& l = f.link(e);
      if (l.kind != LinkKind::Cable) continue;
      const StoredLink& s = links_.at(k++);
      if (s.tier != name(l.tier) || s.expected != l.expected.str() || s.degraded != l.degraded || s.gbps != l.gbps())
        fail(fmt::format("link {} was saved as {} (expected {}, {}) but classifies as {} (expected {}, {})",
                         describe_link(f, e), s.tier, s.expected, s.degraded ? "degraded" : "not degraded",
                         name(l.tier), l.expected.str(), l.degraded ? "degraded" : "not degraded"));
    }
    const FabricSummary& a = f.summary();
    const FabricSummary& b = info.summary;
    if (a.hosts != b.hosts || a.hcas != b.hcas || a.leaves != b.leaves || a.spines != b.spines || a.cores != b.cores ||
        a.links != b.links || a.pods != b.pods || a.rails != b.rails || a.rail_optimized != b.rail_optimized ||
        static_cast<int>(f.faults().size()) != info.faults)
      fail("its summary counts differ from the rebuilt fabric's");
  }

  const Connection& c_;
  int64_t id_;
  std::vector<StoredNode> nodes_;
  std::vector<StoredLink> links_;
};

}  // namespace

SnapshotStore::SnapshotStore(std::string path) : SnapshotStore(std::move(path), Options{}) {}

SnapshotStore::SnapshotStore(std::string path, Options options)
    : connection_(std::move(path), options.busy_timeout, options.access) {
  open_schema(connection_);
}

int SnapshotStore::schema_version() const { return topo::schema_version(connection_); }

namespace {

constexpr const char* kCannotSave = "cannot save the snapshot";

// The snapshot's row: when, from what, its summary and its routing; its id.
int64_t insert_snapshot_row(Connection& c, const Fabric& f) {
  const FabricSummary& sum = f.summary();
  Statement snapshot = c.prepare(
      "INSERT INTO snapshot (taken_at, source, host_pattern, hosts, hcas, switches, leaves, spines, cores, links, "
      "pods, rails, rail_optimized, faults, routing, routing_engine, routing_emulated, routing_source) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
      kCannotSave);
  snapshot.bind(1, utc_now()).bind(2, f.source()).bind(3, f.naming().pattern());
  snapshot.bind(4, sum.hosts).bind(5, sum.hcas).bind(6, static_cast<int>(f.switches().size()));
  snapshot.bind(7, sum.leaves).bind(8, sum.spines).bind(9, sum.cores).bind(10, sum.links);
  snapshot.bind(11, sum.pods).bind(12, sum.rails).bind(13, sum.rail_optimized ? 1 : 0);
  snapshot.bind(14, static_cast<int>(f.faults().size()));
  const Routing& routing = f.routing();
  snapshot.bind(15, routing.is_static() ? "static"
                    : routing.is_ecmp() ? routing_name(routing)
                                        : "adaptive")
      .bind(16, routing.engine);
  snapshot.bind(17, routing.emulated ? 1 : 0).bind(18, routing.source);
  snapshot.run();
  return c.last_insert_rowid();
}

// Hosts, HCAs and switches, each at its ordinal (its NodeId), so that a
// load rebuilds the same graph.
void insert_nodes(Connection& c, const Fabric& f, int64_t id) {
  Statement host = c.prepare("INSERT INTO host VALUES (?1, ?2, ?3)", kCannotSave);
  Statement hca = c.prepare(
      "INSERT INTO hca (snapshot_id, ordinal, node_id, description, host, device, rail, guid, ports, lid) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
      kCannotSave);
  Statement sw = c.prepare(
      "INSERT INTO switch (snapshot_id, ordinal, node_id, name, guid, ports, level, pod, down_gbps, up_gbps, lid) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
      kCannotSave);
  for (NodeId v = 0; v < f.node_count(); ++v) {
    const Node& n = f.node(v);
    const auto ordinal = static_cast<int64_t>(v);
    switch (n.kind) {
      case NodeKind::Host:
        host.bind(1, id).bind(2, ordinal).bind(3, n.name).run();
        break;
      case NodeKind::Hca:
        hca.bind(1, id).bind(2, ordinal).bind(3, n.id).bind(4, n.name).bind(5, n.host).bind(6, n.device);
        hca.bind(7, n.rail).bind(8, std::bit_cast<int64_t>(n.guid)).bind(9, n.ports);
        hca.bind(10, static_cast<int64_t>(n.lid)).run();
        break;
      case NodeKind::Switch:
        sw.bind(1, id).bind(2, ordinal).bind(3, n.id).bind(4, n.name).bind(5, std::bit_cast<int64_t>(n.guid));
        sw.bind(6, n.ports).bind(7, name(n.level)).bind(8, n.pod).bind(9, n.down_gbps).bind(10, n.up_gbps);
        sw.bind(11, static_cast<int64_t>(n.lid)).run();
        break;
    }
  }
}

void insert_gpus(Connection& c, const Fabric& f, int64_t id) {
  Statement gpu = c.prepare("INSERT INTO gpu VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                            fmt::format("{} (GPU indices must be unique within a host)", kCannotSave));
  for (NodeId h : f.hosts())
    for (const Gpu& x : f.node(h).gpus) {
      gpu.bind(1, id).bind(2, f.node(h).name).bind(3, x.index).bind(4, x.name).bind(5, x.pci_bus).bind(6, x.numa);
      gpu.bind(7, x.closest_hca).bind(8, x.rail).run();
    }
}

// Every cable, in the graph's edge order (a load adds them in that order).
void insert_cables(Connection& c, const Fabric& f, int64_t id) {
  const FabricGraph& g = f.graph();
  Statement link =
      c.prepare("INSERT INTO link VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)", kCannotSave);
  int64_t ordinal = 0;
  for (auto e : boost::make_iterator_range(boost::edges(g))) {
    const Link& l = g[e];
    if (l.kind != LinkKind::Cable) continue;
    link.bind(1, id).bind(2, ordinal++).bind(3, g[l.end_a].id).bind(4, l.port_a).bind(5, g[l.end_b].id);
    link.bind(6, l.port_b).bind(7, name(l.rate.width)).bind(8, name(l.rate.speed)).bind(9, l.gbps());
    link.bind(10, name(l.state)).bind(11, name(l.tier)).bind(12, l.expected.str()).bind(13, l.degraded ? 1 : 0);
    link.run();
  }
}

// A static routing's forwarding tables, a blob per switch.
void insert_lfts(Connection& c, const Fabric& f, int64_t id) {
  const Routing& routing = f.routing();
  if (!routing.is_static()) return;
  Statement lft = c.prepare("INSERT INTO lft (snapshot_id, switch, ports) VALUES (?1, ?2, ?3)", kCannotSave);
  for (size_t i = 0; i < routing.lft.size(); ++i)
    lft.bind(1, id).bind(2, static_cast<int64_t>(f.switches()[i])).bind_blob(3, routing.lft[i]).run();
}

}  // namespace

int64_t SnapshotStore::save(const Fabric& f) {
  Transaction tx(connection_, "a snapshot");
  const int64_t id = insert_snapshot_row(connection_, f);
  insert_nodes(connection_, f, id);
  insert_gpus(connection_, f, id);
  insert_nvlink(connection_, f, id);
  insert_cables(connection_, f, id);
  insert_lfts(connection_, f, id);
  tx.commit();
  return id;
}

std::vector<SnapshotInfo> SnapshotStore::list() const {
  Statement s = connection_.prepare(fmt::format("SELECT {} FROM snapshot ORDER BY id", kInfoColumns),
                                    "cannot list the snapshots");
  std::vector<SnapshotInfo> out;
  while (s.step()) out.push_back(read_info(s));
  return out;
}

std::optional<int64_t> SnapshotStore::latest() const {
  Statement s = connection_.prepare("SELECT max(id) FROM snapshot", "cannot find the latest snapshot");
  if (!s.step() || s.column_is_null(0)) return std::nullopt;
  return s.column_int(0);
}

SnapshotInfo SnapshotStore::info(int64_t id) const {
  Statement s = connection_.prepare(fmt::format("SELECT {} FROM snapshot WHERE id = ?1", kInfoColumns),
                                    fmt::format("cannot read snapshot {}", id));
  s.bind(1, id);
  if (!s.step()) {
    auto newest = latest();
    throw DbError(DbErrorKind::UnknownSnapshot, path(),
                  newest ? fmt::format("no snapshot {} (the latest is {})", id, *newest)
                         : fmt::format("no snapshot {} (the database holds none yet)", id));
  }
  return read_info(s);
}

int64_t SnapshotStore::resolve(std::string_view reference) const {
  if (reference == "latest") {
    if (auto id = latest()) return *id;
    throw DbError(DbErrorKind::UnknownSnapshot, path(), "no latest snapshot: the database holds none yet");
  }
  int64_t n = 0;
  auto [end, ec] = std::from_chars(reference.data(), reference.data() + reference.size(), n);
  if (reference.empty() || ec != std::errc() || end != reference.data() + reference.size() || n == 0)
    throw DbError(DbErrorKind::UnknownSnapshot, path(),
                  fmt::format("'{}' names no snapshot: use an id, 'latest', or -N for the Nth newest", reference));
  if (n > 0) return info(n).id;
  Statement s = connection_.prepare("SELECT id FROM snapshot ORDER BY id DESC LIMIT 1 OFFSET ?1",
                                    fmt::format("cannot resolve snapshot {}", reference));
  s.bind(1, -(n + 1));  // -n - 1 would overflow for INT64_MIN
  if (!s.step()) {
    int64_t count = connection_.query_int("SELECT count(*) FROM snapshot", "cannot count the snapshots");
    throw DbError(
        DbErrorKind::UnknownSnapshot, path(),
        fmt::format("no snapshot {}: the database holds {} snapshot{}", reference, count, count == 1 ? "" : "s"));
  }
  return s.column_int(0);
}

Fabric SnapshotStore::load(int64_t id) const {
  SnapshotInfo meta = info(id);
  Statement s = connection_.prepare("SELECT host_pattern FROM snapshot WHERE id = ?1",
                                    fmt::format("cannot read snapshot {}", id));
  s.bind(1, id);
  std::string pattern = s.step() ? s.column_text(0) : "";
  return SnapshotReader(connection_, id).read(meta, pattern);
}

}  // namespace topo
