// Routing engines emulated from OpenSM's rules, walking routes through
// tables, and the routing findings of `topoctl lint`.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "common/error.h"
#include "discovery/ibnetdiscover.h"
#include "fabric/synthetic.h"
#include "routing/opensm_lfts.h"
#include "routing/route.h"
#include "routing/routing_check.h"
#include "routing/routing_engine.h"

namespace topo {
namespace {

const std::string kDir = std::string(TOPO_FIXTURES) + "/routing/";

Fabric routed(const std::string& spec, const std::string& engine) {
  Fabric f = make_synthetic(spec);
  f.set_routing(emulate_routing(f, engine));
  return f;
}

// Per up cable of `leaf`: how many CA destinations the leaf sends out of it.
std::map<int, int> uplink_loads(const Fabric& f, NodeId leaf) {
  std::map<int, int> load;
  size_t s = static_cast<size_t>(f.switch_index(leaf));
  for (auto e : boost::make_iterator_range(boost::out_edges(leaf, f.graph())))
    if (f.node(f.peer(e, leaf)).kind == NodeKind::Switch) load[f.local_port(e, leaf)] = 0;
  for (NodeId h : f.hcas()) {
    int p = f.routing().out_port(s, f.node(h).lid);
    if (load.contains(p)) ++load[p];
  }
  return load;
}

size_t count(const std::vector<RoutingFinding>& fs, RoutingFindingKind k) {
  size_t n = 0;
  for (const auto& x : fs) n += x.kind == k;
  return n;
}

TEST(RoutingEngine, MinhopAndUpdnEqualOpenSmsTables) {
  // The fabric as ibnetdiscover saw it under ibsim (its LIDs and GUIDs are
  // the subnet's), and the tables OpenSM 3.3.23 computed for it.
  for (const char* engine : {"minhop", "updn"}) {
    SCOPED_TRACE(engine);
    Fabric f = read_ibnetdiscover_file(kDir + "multiport.ibnetdiscover");
    Routing opensm = read_opensm_lfts_file(kDir + "multiport." + std::string(engine) + ".lfts", f);
    Routing ours = emulate_routing(f, engine);
    EXPECT_EQ(ours.engine, engine);
    EXPECT_TRUE(ours.emulated);
    ASSERT_EQ(ours.lft.size(), opensm.lft.size());
    for (size_t s = 0; s < ours.lft.size(); ++s)
      for (uint32_t lid = 1; lid < 9; ++lid)
        EXPECT_EQ(ours.out_port(s, lid), opensm.out_port(s, lid)) << f.node(f.switches()[s]).name << " LID " << lid;
  }
}

TEST(RoutingEngine, FtreeOnASymmetricTwoToOneLeafSpineIsDestinationModK) {
  Fabric f = routed("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2", "ftree");
  for (NodeId leaf : f.switches_at(Level::Leaf)) {
    auto load = uplink_loads(f, leaf);
    ASSERT_EQ(load.size(), 4u);
    for (const auto& [port, n] : load) EXPECT_EQ(n, 24 / 4) << f.node(leaf).name << ":" << port;
  }
  // Every leaf sends a destination up the same uplink index: its position mod 4.
  std::vector<NodeId> leaves = f.switches_at(Level::Leaf);
  for (NodeId h : f.hcas()) {
    std::set<int> ports;
    for (NodeId leaf : leaves)
      if (f.leaves_of(*f.find_host(f.node(h).host))[0] != leaf)
        ports.insert(f.routing().out_port(static_cast<size_t>(f.switch_index(leaf)), f.node(h).lid));
    EXPECT_EQ(ports.size(), 1u) << f.node(h).name;
  }
}

TEST(RoutingEngine, MinhopLeavesSpineCablesUnbalancedWhereFtreeDoesNot) {
  const char* spec = "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2";
  auto fs = check_routing(routed(spec, "ftree"));
  EXPECT_EQ(count(fs, RoutingFindingKind::OverShare), 0u);
  // Every leaf's uplinks still carry equal shares under minhop (each switch balances its own ports)...
  Fabric m = routed(spec, "minhop");
  for (NodeId leaf : m.switches_at(Level::Leaf))
    for (const auto& [port, n] : uplink_loads(m, leaf)) EXPECT_EQ(n, 6) << m.node(leaf).name << ":" << port;
}

TEST(RoutingEngine, NoHolesOrLoopsOnAnySyntheticShape) {
  for (const char* spec :
       {"leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2", "leafspine:leaves=3,hosts_per_leaf=6,spines=3",
        "railopt:hosts=16,rails=4,spines=2", "clos3:pods=2,leaves_per_pod=2,hosts_per_leaf=4", "fattree:k=4",
        "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,degrade=leaf02:9"})
    for (const char* engine : {"ftree", "minhop", "updn"}) {
      SCOPED_TRACE(std::string(spec) + " " + engine);
      Fabric f = routed(spec, engine);
      auto fs = check_routing(f);
      EXPECT_EQ(count(fs, RoutingFindingKind::Unrouted), 0u) << (fs.empty() ? "" : fs[0].subject + fs[0].detail);
      EXPECT_EQ(count(fs, RoutingFindingKind::Loop), 0u);
      for (NodeId a : f.hcas())
        for (NodeId b : f.hcas()) {
          if (a == b) continue;
          StaticRoute r = trace_static_route(f, a, b);
          ASSERT_EQ(r.status, RouteStatus::Ok) << f.node(a).name << " -> " << f.node(b).name;
          ASSERT_EQ(f.peer(r.hops.back().cable, r.hops.back().from), b);
        }
    }
}

TEST(RoutingEngine, DfssspAndUnknownEnginesAreRefused) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=2,spines=2");
  try {
    emulate_routing(f, "dfsssp");
    FAIL();
  } catch (const FabricError& e) {
    EXPECT_NE(std::string(e.what()).find("not emulated"), std::string::npos);
  }
  EXPECT_THROW(emulate_routing(f, "lash"), FabricError);
}

// 20 leaves x 16 uplinks land on one spine's ports 1..320; an LFT entry is
// one byte, so every engine refuses, naming the switch and the port.
TEST(RoutingEngine, SwitchesWithPortsPast254AreRefused) {
  Fabric f = make_synthetic("leafspine:leaves=20,hosts_per_leaf=16,spines=1");
  for (const char* engine : {"ftree", "minhop", "updn"}) {
    try {
      emulate_routing(f, engine);
      ADD_FAILURE() << engine << " routed a 320-port switch";
    } catch (const FabricError& e) {
      EXPECT_NE(std::string(e.what()).find("spine01 has a cable on port 320"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(emulate_routing(make_synthetic("leafspine:leaves=15,hosts_per_leaf=16,spines=1"), "ftree"));
}

// Every leaf sends leaf04's destinations up to spine01: everything sent to
// leaf04 enters it through one spine of two.
TEST(RoutingCheck, ALeafEnteredThroughOneSpine) {
  Fabric f = routed("leafspine:leaves=4,hosts_per_leaf=4,spines=2", "ftree");
  Routing r = f.routing();
  NodeId spine1 = *f.find("spine01");
  NodeId leaf4 = *f.find("leaf04");
  for (NodeId leaf : f.switches_at(Level::Leaf)) {
    if (leaf == leaf4) continue;
    int to_spine1 = 0;
    for (int p = 1; p < 16 && !to_spine1; ++p)
      if (auto c = f.cable_at(leaf, p); c && f.peer(*c, leaf) == spine1) to_spine1 = p;
    ASSERT_NE(to_spine1, 0);
    for (NodeId h : f.hosts_under(leaf4)) {
      uint32_t lid = f.node(f.hcas_of(h).front()).lid;
      r.lft[static_cast<size_t>(f.switch_index(leaf))][lid] = static_cast<uint8_t>(to_spine1);
    }
  }
  f.set_routing(r);
  auto fs = check_routing(f);
  ASSERT_EQ(count(fs, RoutingFindingKind::SingleSpine), 1u);
  for (const auto& x : fs) {
    if (x.kind == RoutingFindingKind::SingleSpine) {
      EXPECT_EQ(x.subject, "leaf04");
      EXPECT_NE(x.detail.find("spine01"), std::string::npos) << x.detail;
    }
  }
}

// Tables edited by hand: a hole, a loop, a dead port.
TEST(RoutingWalk, HoleLoopAndDeadPort) {
  Fabric f = routed("leafspine:leaves=2,hosts_per_leaf=2,spines=2", "minhop");
  NodeId a = f.hcas()[0], b = f.hcas()[3];
  ASSERT_EQ(trace_static_route(f, a, b).status, RouteStatus::Ok);
  size_t leaf1 = static_cast<size_t>(f.switch_index(*f.find("leaf01")));
  size_t leaf2 = static_cast<size_t>(f.switch_index(*f.find("leaf02")));
  uint32_t lid = f.node(b).lid;

  Routing hole = f.routing();
  hole.lft[leaf1][lid] = kNoPort;
  f.set_routing(hole);
  StaticRoute r = trace_static_route(f, a, b);
  EXPECT_EQ(r.status, RouteStatus::NoEntry);
  EXPECT_EQ(f.node(r.stuck_at).name, "leaf01");
  auto fs = check_routing(f);
  ASSERT_GE(count(fs, RoutingFindingKind::Unrouted), 1u);

  // leaf02 sends b's LID back up to a spine, which sends it to leaf02 again... a loop
  // through spine01 <-> leaf01 instead: leaf01 -> spine01 -> leaf01.
  Routing loop = emulate_routing(f, "minhop");
  size_t spine1 = static_cast<size_t>(f.switch_index(*f.find("spine01")));
  int up = loop.lft[leaf1][lid];
  NodeId spine_up = f.peer(*f.cable_at(*f.find("leaf01"), up), *f.find("leaf01"));
  size_t sp = static_cast<size_t>(f.switch_index(spine_up));
  loop.lft[sp][lid] = static_cast<uint8_t>(f.local_port(*f.cable_at(*f.find("leaf01"), up), spine_up));
  (void)spine1;
  (void)leaf2;
  f.set_routing(loop);
  EXPECT_EQ(trace_static_route(f, a, b).status, RouteStatus::Loop);
  fs = check_routing(f);
  EXPECT_GE(count(fs, RoutingFindingKind::Loop), 1u);

  Routing dead = emulate_routing(f, "minhop");
  dead.lft[leaf1][lid] = 40;  // no cable there
  f.set_routing(dead);
  EXPECT_EQ(trace_static_route(f, a, b).status, RouteStatus::DeadPort);
}

TEST(RoutingCheck, Findings) {
  // ftree ignores speed: the 1x uplink carries a full share.
  Fabric d = routed("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,degrade=leaf02:9", "ftree");
  auto fs = check_routing(d);
  ASSERT_EQ(count(fs, RoutingFindingKind::DegradedRoute), 1u);
  for (const auto& x : fs) {
    if (x.kind == RoutingFindingKind::DegradedRoute) {
      EXPECT_EQ(x.subject.rfind("leaf02:9 -> spine", 0), 0u) << x.subject;
    }
  }
  // Destination-mod-k sends each destination through one spine, and a
  // leaf's destinations through all of them: no single-spine leaf.
  EXPECT_EQ(count(fs, RoutingFindingKind::SingleSpine), 0u);
  // Adaptive: nothing to say.
  EXPECT_TRUE(check_routing(make_synthetic("leafspine:leaves=2,hosts_per_leaf=2,spines=2")).empty());
  // A leaf whose uplinks are all sent to one spine carries more than its share.
  Fabric m = routed("leafspine:leaves=2,hosts_per_leaf=4,spines=2", "minhop");
  Routing r = m.routing();
  size_t leaf1 = static_cast<size_t>(m.switch_index(*m.find("leaf01")));
  NodeId leaf = *m.find("leaf01");
  int first_up = 0;
  for (int p = 1; p < 16 && !first_up; ++p)
    if (auto c = m.cable_at(leaf, p); c && m.node(m.peer(*c, leaf)).kind == NodeKind::Switch) first_up = p;
  for (NodeId h : m.hcas())
    if (r.lft[leaf1][m.node(h).lid] > 4) r.lft[leaf1][m.node(h).lid] = static_cast<uint8_t>(first_up);
  m.set_routing(r);
  EXPECT_EQ(count(check_routing(m), RoutingFindingKind::OverShare), 1u);
}

}  // namespace
}  // namespace topo
