// Routing on the real graph: up/down paths, ECMP spread, rails, trunks.
#include "comm_model/paths.h"

#include <numeric>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "comm_model/link_load.h"
#include "comm_model/sharing.h"
#include "common/error.h"
#include "fabric/synthetic.h"

namespace topo {
namespace {

// The cable on switch `name` port `port`.
LinkId cable_at(const Fabric& f, std::string_view name, int port) {
  NodeId s = *f.find(name);
  for (auto e : boost::make_iterator_range(boost::out_edges(s, f.graph())))
    if (f.local_port(e, s) == port) return e;
  throw std::runtime_error(fmt::format("no cable on {}:{}", name, port));
}

NodeId sw(const Fabric& f, std::string_view name) { return *f.find(name); }

int leaf_index(const PathIndex& index, std::string_view name) {
  auto leaves = index.leaves();
  for (size_t i = 0; i < leaves.size(); ++i)
    if (index.fabric().node(leaves[i]).name == name) return static_cast<int>(i);
  throw std::runtime_error("no leaf " + std::string(name));
}

int host(const PathIndex& index, std::string_view name) { return index.host_index(*index.fabric().find_host(name)); }

double total(std::span<const double> v) { return std::accumulate(v.begin(), v.end(), 0.0); }

TEST(CommModelPaths, HostsLeavesAndSwitchCounts) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  PathIndex index(f);
  EXPECT_EQ(index.leaves().size(), 4u);
  auto ports = index.ports(host(index, "gpu009"));
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(ports[0].leaf, leaf_index(index, "leaf02"));
  EXPECT_DOUBLE_EQ(ports[0].gbps, 400);
  EXPECT_EQ(ports[0].rail, 0);
  EXPECT_EQ(index.switches_between(0, 0), 1);
  EXPECT_EQ(index.switches_between(0, 3), 3);
  // Two trunks up per leaf (one per spine, 2 cables each) and one down per spine per leaf.
  int up = 0;
  for (const auto& t : index.trunks())
    if (t.from == sw(f, "leaf01")) {
      EXPECT_TRUE(t.up);
      EXPECT_EQ(t.cables.size(), 2u);
      ++up;
    }
  EXPECT_EQ(up, 2);
  EXPECT_EQ(index.host_index(sw(f, "leaf01")), -1);
}

TEST(CommModelPaths, EcmpSpreadsEvenlyOverEveryUplink) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=8,spines=2,oversub=2");
  PathIndex index(f);
  std::vector<int> hosts = {host(index, "gpu001"), host(index, "gpu009")};
  LinkLoad load(index, hosts);
  load.add(0, 0, 1, 0, 1000);
  EXPECT_EQ(load.max_switches(), 3);
  // leaf01 has 4 uplinks (ports 9..12, two to each spine): a quarter each.
  for (int port = 9; port <= 12; ++port) {
    LinkId up = cable_at(f, "leaf01", port);
    EXPECT_DOUBLE_EQ(load.bytes_on(up, sw(f, "leaf01")), 250) << port;
    EXPECT_DOUBLE_EQ(load.bytes_on(up, f.peer(up, sw(f, "leaf01"))), 0) << port;
    LinkId down = cable_at(f, "leaf02", port);
    EXPECT_DOUBLE_EQ(load.bytes_on(down, f.peer(down, sw(f, "leaf02"))), 250) << port;
  }
  LinkId hca = cable_at(f, "leaf01", 1);
  EXPECT_DOUBLE_EQ(load.bytes_on(hca, *f.find("gpu001/mlx5_0")), 1000);
  EXPECT_DOUBLE_EQ(load.bytes_on(hca, sw(f, "leaf01")), 0);
}

TEST(CommModelPaths, SameLeafTrafficNeverClimbs) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=8,spines=2");
  PathIndex index(f);
  std::vector<int> hosts = {host(index, "gpu001"), host(index, "gpu002")};
  LinkLoad load(index, hosts);
  load.add(0, 0, 1, 0, 1000);
  EXPECT_EQ(load.max_switches(), 1);
  for (int port = 9; port <= 16; ++port)
    EXPECT_DOUBLE_EQ(load.bytes_on(cable_at(f, "leaf01", port), sw(f, "leaf01")), 0);
}

TEST(CommModelPaths, RailTrafficStaysOnItsLeafAndCrossRailClimbs) {
  Fabric f = make_synthetic("railopt:hosts=8,rails=4,spines=2");
  PathIndex index(f);
  int a = host(index, "gpu001"), b = host(index, "gpu002");
  ASSERT_EQ(index.ports(a).size(), 4u);
  EXPECT_EQ(index.ports(a)[2].rail, 2);
  EXPECT_EQ(index.ports(a)[2].leaf, index.ports(b)[2].leaf);
  EXPECT_NE(index.ports(a)[2].leaf, index.ports(b)[3].leaf);
  std::vector<double> trunks(index.trunks().size(), 0.0);
  index.spread(index.ports(a)[2].leaf, index.ports(b)[2].leaf, 100, trunks);
  EXPECT_DOUBLE_EQ(total(trunks), 0);
  EXPECT_EQ(index.switches_between(index.ports(a)[2].leaf, index.ports(b)[3].leaf), 3);
  index.spread(index.ports(a)[2].leaf, index.ports(b)[3].leaf, 100, trunks);
  EXPECT_DOUBLE_EQ(total(trunks), 200);  // up to the spines, down to rail 3's leaf
}

TEST(CommModelPaths, HostsWhosePortsReachTheSameLeavesShareALeafSet) {
  Fabric rails = make_synthetic("railopt:hosts=16,rails=4,spines=2,hosts_per_leaf=8");
  PathIndex r(rails);
  const int a = host(r, "gpu001"), b = host(r, "gpu002"), c = host(r, "gpu009");
  EXPECT_EQ(r.leaf_set(a), r.leaf_set(b));
  EXPECT_NE(r.leaf_set(a), r.leaf_set(c));
  EXPECT_GE(r.leaf_set(a), static_cast<int>(r.leaves().size()));  // four ports: never a leaf's own id
  EXPECT_GE(r.leaf_set(c), static_cast<int>(r.leaves().size()));

  // One port: the leaf's id. No routed port (its cable unplugged): a set of its own.
  Fabric one = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2,unplug=leaf01:1");
  PathIndex o(one);
  EXPECT_EQ(o.leaf_set(host(o, "gpu003")), o.ports(host(o, "gpu003"))[0].leaf);
  EXPECT_EQ(o.leaf_set(host(o, "gpu005")), leaf_index(o, "leaf02"));
  ASSERT_TRUE(o.ports(host(o, "gpu001")).empty());
  EXPECT_GE(o.leaf_set(host(o, "gpu001")), static_cast<int>(o.leaves().size()));
}

TEST(CommModelPaths, CrossPodTrafficGoesThroughTheCores) {
  Fabric f = make_synthetic("clos3:pods=2,leaves_per_pod=2,hosts_per_leaf=4");
  PathIndex index(f);
  int l1 = leaf_index(index, "leaf01"), l2 = leaf_index(index, "leaf02"), l3 = leaf_index(index, "leaf03");
  EXPECT_EQ(index.switches_between(l1, l2), 3);
  EXPECT_EQ(index.switches_between(l1, l3), 5);
  std::vector<double> trunks(index.trunks().size(), 0.0);
  index.spread(l1, l3, 64, trunks);
  double to_core = 0, from_leaf = 0;
  for (size_t t = 0; t < trunks.size(); ++t) {
    const auto& tr = index.trunks()[t];
    if (tr.up && f.node(tr.to).level == Level::Core) to_core += trunks[t];
    if (tr.from == sw(f, "leaf01")) from_leaf += trunks[t];
  }
  EXPECT_DOUBLE_EQ(to_core, 64);
  EXPECT_DOUBLE_EQ(from_leaf, 64);
  EXPECT_DOUBLE_EQ(total(trunks), 64 * 4);  // four hops between switches
}

TEST(CommModelPaths, FatTreeSpreadConservesTraffic) {
  Fabric f = make_synthetic("fattree:k=4");
  PathIndex index(f);
  const int L = static_cast<int>(index.leaves().size());
  for (int a = 0; a < L; ++a)
    for (int b = 0; b < L; ++b) {
      std::vector<double> trunks(index.trunks().size(), 0.0);
      index.spread(a, b, 1.0, trunks);
      double leaving = 0, arriving = 0;
      for (size_t t = 0; t < trunks.size(); ++t) {
        if (index.trunks()[t].from == index.leaves()[a]) leaving += trunks[t];
        if (index.trunks()[t].to == index.leaves()[b]) arriving += trunks[t];
      }
      EXPECT_NEAR(leaving, a == b ? 0 : 1, 1e-12);
      EXPECT_NEAR(arriving, a == b ? 0 : 1, 1e-12);
      EXPECT_NEAR(total(trunks), (*index.switches_between(a, b) - 1) * 1.0, 1e-12);
    }
}

// The shared climb of spread_from() must give exactly what spreading each
// flow alone gives, on healthy fabrics and on ones whose switches differ.
TEST(CommModelPaths, SharedClimbMatchesFlowByFlow) {
  std::mt19937 rng(9);
  for (const char* spec :
       {"clos3:pods=3,leaves_per_pod=4,hosts_per_leaf=4,oversub=2",
        "clos3:pods=3,leaves_per_pod=4,hosts_per_leaf=4,unplug=spine02:10,unplug=leaf04:6", "fattree:k=6",
        "fattree:k=4,unplug=spine03:3", "leafspine:leaves=5,hosts_per_leaf=4,spines=2,unplug=leaf02:5"}) {
    Fabric f = make_synthetic(spec);
    PathIndex index(f);
    const int L = static_cast<int>(index.leaves().size());
    PathIndex::Scratch scratch;
    for (int a = 0; a < L; ++a) {
      std::vector<std::pair<int, double>> flows;
      for (int b = 0; b < L; ++b)
        if (rng() % 3 != 0) flows.emplace_back(b, 1.0 + rng() % 100);
      std::vector<double> shared(index.trunks().size(), 0.0), alone(index.trunks().size(), 0.0);
      index.spread_from(a, flows, shared, scratch);
      for (auto [b, bytes] : flows)
        if (b != a) index.spread(a, b, bytes, alone);
      for (size_t t = 0; t < shared.size(); ++t) EXPECT_NEAR(shared[t], alone[t], 1e-9) << spec << " trunk " << t;
    }
  }
}

// A Scratch keeps its climb's buffers from one source leaf to the next, and
// from a three-level fabric to a two-level one: what is left over from the
// last climb must never reach the next. Bit for bit what a fresh one gives.
TEST(CommModelPaths, ReusedScratchSpreadsAsAFreshOne) {
  std::mt19937 rng(11);
  PathIndex::Scratch kept;
  for (const char* spec : {"clos3:pods=3,leaves_per_pod=4,hosts_per_leaf=4,oversub=2",
                           "leafspine:leaves=5,hosts_per_leaf=4,spines=2,unplug=leaf02:5",
                           "clos3:pods=3,leaves_per_pod=4,hosts_per_leaf=4,unplug=spine02:10,unplug=leaf04:6",
                           "leafspine:leaves=6,hosts_per_leaf=4,spines=2"}) {
    Fabric f = make_synthetic(spec);
    PathIndex index(f);
    const int L = static_cast<int>(index.leaves().size());
    for (int a = 0; a < L; ++a) {
      std::vector<std::pair<int, double>> flows;
      for (int b = 0; b < L; ++b)
        if (rng() % 2 != 0) flows.emplace_back(b, 1.0 + rng() % 100);
      std::vector<double> reused(index.trunks().size(), 0.0), fresh(index.trunks().size(), 0.0);
      index.spread_from(a, flows, reused, kept);
      PathIndex::Scratch first_use;
      index.spread_from(a, flows, fresh, first_use);
      EXPECT_EQ(reused, fresh) << spec << " from leaf " << a;
    }
  }
}

TEST(CommModelPaths, UnpluggedUplinkIsLeftOutOfTheSpread) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=8,spines=2,oversub=2,unplug=leaf01:9");
  PathIndex index(f);
  std::vector<int> hosts = {host(index, "gpu001"), host(index, "gpu009")};
  LinkLoad load(index, hosts);
  load.add(0, 0, 1, 0, 300);
  // Three uplinks left: one to the spine that lost a cable, two to the other.
  for (int port = 10; port <= 12; ++port)
    EXPECT_DOUBLE_EQ(load.bytes_on(cable_at(f, "leaf01", port), sw(f, "leaf01")), 100) << port;
}

TEST(CommModelPaths, DegradedCableLimitsItsTrunk) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=8,spines=2,oversub=2,degrade=leaf02:9");
  PathIndex index(f);
  LinkId degraded = cable_at(f, "leaf02", 9);
  auto ref = index.locate(degraded);
  ASSERT_TRUE(ref);
  int up = f.link(degraded).end_a == sw(f, "leaf02") ? ref->trunk_ab : ref->trunk_ba;
  ASSERT_GE(up, 0);
  EXPECT_DOUBLE_EQ(index.trunks()[up].slowest_gbps, 100);
  EXPECT_EQ(index.trunks()[up].cables.size(), 2u);
  CableRoom room(index, BackgroundLoad(), 1.0);
  // Two cables, evenly loaded: the trunk fills when its 1x cable does.
  EXPECT_DOUBLE_EQ(room.gbps(index.trunk_key(up)), 100);
  EXPECT_EQ(room.cable_of(index.trunk_key(up)), directed_cable(f.link(degraded), sw(f, "leaf02")));
  EXPECT_EQ(index.describe(degraded, sw(f, "leaf02")).rfind("leaf02:9 -> spine", 0), 0u);
}

TEST(CommModelPaths, BackgroundLoadLeavesLessRoomInOneDirection) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=8,spines=2");
  PathIndex index(f);
  LinkId up = cable_at(f, "leaf01", 9);
  BackgroundLoad bg;
  bg.add(f, up, sw(f, "leaf01"), 300);
  bg.add(f.link(cable_at(f, "leaf01", 1)).id, 100);  // gpu001's own cable, both ways
  CableRoom room(index, bg, 1.0);
  auto ref = *index.locate(up);
  bool leaf_is_a = f.link(up).end_a == sw(f, "leaf01");
  int out = leaf_is_a ? ref.trunk_ab : ref.trunk_ba, back = leaf_is_a ? ref.trunk_ba : ref.trunk_ab;
  EXPECT_DOUBLE_EQ(room.gbps(index.trunk_key(out)), 100.0);
  EXPECT_DOUBLE_EQ(room.gbps(index.trunk_key(back)), 400.0);
  const PathIndex::Port& port = index.ports(host(index, "gpu001"))[0];
  const Link& own = f.link(port.cable);
  EXPECT_DOUBLE_EQ(room.gbps(directed_cable(own, port.hca)), 300);
  EXPECT_DOUBLE_EQ(room.gbps(directed_cable(own, f.peer(port.cable, port.hca))), 300);
  EXPECT_THROW(bg.add(f.link(up).id, -1), std::invalid_argument);
  EXPECT_THROW(bg.add(f, up, *f.find("gpu005/mlx5_0"), 1), std::invalid_argument);
}

TEST(CommModelPaths, APortKnowsItsCablesKeysTheLeafsPortAndTheLid) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=8,spines=2");
  PathIndex index(f);
  const PathIndex::Port& port = index.ports(host(index, "gpu003"))[0];
  const Link& own = f.link(port.cable);
  EXPECT_EQ(port.up, directed_cable(own, port.hca));
  EXPECT_EQ(port.down, directed_cable(own, sw(f, "leaf01")));
  EXPECT_EQ(port.leaf_port, f.local_port(port.cable, sw(f, "leaf01")));
  EXPECT_EQ(port.lid, f.node(port.hca).lid);
  EXPECT_TRUE(index.is_port_cable(port.up));
  EXPECT_TRUE(index.is_port_cable(port.down));
  LinkId up = cable_at(f, "leaf01", 9);
  EXPECT_FALSE(index.is_port_cable(directed_cable(f.link(up), sw(f, "leaf01"))));
  EXPECT_FALSE(index.is_port_cable(index.trunk_key(0)));
}

TEST(CommModelPaths, UnreachableLeafIsAnError) {
  // Two leaves with no spine between them.
  FabricBuilder b;
  b.add_switch("leafA", "leafA");
  b.add_switch("leafB", "leafB");
  b.add_hca("h1", "node1 mlx5_0");
  b.add_hca("h2", "node2 mlx5_0");
  b.connect("h1", 1, "leafA", 1, {});
  b.connect("h2", 1, "leafB", 1, {});
  Fabric f = std::move(b).finish();
  PathIndex index(f);
  EXPECT_FALSE(index.switches_between(0, 1));
  std::vector<double> trunks(index.trunks().size(), 0.0);
  EXPECT_THROW(index.spread(0, 1, 1, trunks), FabricError);
  std::vector<int> hosts = {host(index, "node1"), host(index, "node2")};
  LinkLoad load(index, hosts);
  try {
    load.add(0, 0, 1, 0, 1);
    FAIL() << "no path, no error";
  } catch (const FabricError& e) {
    EXPECT_NE(std::string(e.what()).find("node1"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("leafB"), std::string::npos);
  }
}

}  // namespace
}  // namespace topo
