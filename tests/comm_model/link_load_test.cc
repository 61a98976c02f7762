// Where a collective's bytes land (ring_load, LinkLoad): on the routes the
// fabric's routing gives, spread under adaptive, one path under static.
#include "comm_model/link_load.h"

#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "comm_model/estimate.h"
#include "comm_model/sharing.h"
#include "common/error.h"
#include "fabric/synthetic.h"
#include "placement/traffic.h"
#include "routing/route.h"
#include "tests/support/dmodk_routing.h"

namespace topo {
namespace {

LinkId cable_at(const Fabric& f, std::string_view name, int port) { return f.cable_at(*f.find(name), port).value(); }

// Two leaves with four uplinks each (ports 9-12, two to each spine): the
// adaptive spread puts a quarter of a flow on each, a static table all of
// it on one.
constexpr const char* kSpec = "leafspine:leaves=2,hosts_per_leaf=8,spines=2,oversub=2";

std::vector<NodeId> ring(const Fabric& f) { return {*f.find_host("gpu001"), *f.find_host("gpu009")}; }

const Request kAllReduce{Collective::AllReduce, 1 << 20, Dtype::Bf16, 1};

// Bytes leaving `leaf` on each of its uplinks, by port.
std::vector<double> uplink_bytes(const Fabric& f, const LinkLoad& load, std::string_view leaf) {
  std::vector<double> out;
  for (int port = 9; port <= 12; ++port) out.push_back(load.bytes_on(cable_at(f, leaf, port), *f.find(leaf)));
  return out;
}

TEST(LinkLoad, AdaptiveRoutingSpreadsOverEveryUplink) {
  Fabric f = make_synthetic(kSpec);
  PathIndex index(f);
  LinkLoad load = ring_load(index, ring(f), kAllReduce);
  // Two ranks: each sends the whole buffer to the other once.
  for (double b : uplink_bytes(f, load, "leaf01")) EXPECT_DOUBLE_EQ(b, (1 << 20) / 4.0);
  EXPECT_EQ(load.max_switches(), 3);
}

// The uplink trunk from `leaf` to `spine`.
int trunk_between(const PathIndex& index, std::string_view leaf, std::string_view spine) {
  const Fabric& f = index.fabric();
  for (size_t k = 0; k < index.trunks().size(); ++k)
    if (index.trunks()[k].from == *f.find(leaf) && index.trunks()[k].to == *f.find(spine)) return static_cast<int>(k);
  ADD_FAILURE() << "no trunk " << leaf << " -> " << spine;
  return -1;
}

TEST(LinkLoad, TheSpreadNamesATrunkOnceAndPerCableWritesOutItsCables) {
  Fabric f = make_synthetic(kSpec);
  PathIndex index(f);
  const std::vector<NodeId> hosts = ring(f);
  const Allocation al = allocate(index, hosts, 1);
  const CableLoad load = route(index, al, ring_traffic(index, al, 1.0));
  // Two cables to each spine: each trunk out of leaf01 is one entry, a
  // quarter of the flow on each of its cables.
  for (std::string_view spine : {"spine01", "spine02"}) {
    const int k = trunk_between(index, "leaf01", spine);
    ASSERT_EQ(index.trunks()[k].cables.size(), 2u);
    EXPECT_DOUBLE_EQ(load.on(index.trunk_key(k)), 0.25);
  }
  const CableLoad cables = per_cable(index, load);
  EXPECT_TRUE(std::is_sorted(cables.bytes.begin(), cables.bytes.end()));
  int trunks = 0;
  for (auto [key, bytes] : load.bytes) trunks += index.trunk_of_key(key) >= 0;
  EXPECT_EQ(cables.bytes.size(), load.bytes.size() + trunks);  // two cables a trunk
  const NodeId leaf = *f.find("leaf01");
  for (int port = 9; port <= 12; ++port)
    EXPECT_DOUBLE_EQ(cables.on(directed_cable(f.link(cable_at(f, "leaf01", port)), leaf)), 0.25) << port;
}

// AllToAll summed per leaf pair loads every cable with the same bytes, to
// the last bit, as summed per receiving port: the spread adds them in the
// same order. With and without PXN, on one port a host and on rails.
TEST(LinkLoad, AllToAllPerLeafLoadsWhatPerPortLoads) {
  for (const char* spec : {"leafspine:leaves=4,hosts_per_leaf=4,spines=2,oversub=2",
                           "railopt:hosts=16,rails=4,spines=2,hosts_per_leaf=8"}) {
    Fabric f = make_synthetic(spec);
    PathIndex index(f);
    std::vector<NodeId> hosts(f.hosts().begin(), f.hosts().end());
    hosts.erase(hosts.begin() + 1);  // leaves unevenly used
    const Allocation al = allocate(index, hosts, 8);
    for (bool pxn : {false, true}) {
      if (pxn && !pxn_applies(al)) continue;
      const Traffic per_port = alltoall_traffic(index, al, 1000.0, pxn);
      const Traffic per_leaf = alltoall_traffic(index, al, 1000.0, pxn, true);
      EXPECT_LT(per_leaf.crossings.size(), per_port.crossings.size()) << spec;
      const CableLoad a = route(index, al, per_port), b = route(index, al, per_leaf);
      EXPECT_EQ(a.bytes, b.bytes) << spec << " pxn " << pxn;
      EXPECT_EQ(a.max_switches, b.max_switches) << spec;
    }
  }
}

TEST(LinkLoad, CrossingsSummedPerLeafAreNotRoutedByTables) {
  Fabric f = make_synthetic(kSpec);
  f.set_routing(testing::dmodk_routing(f));
  PathIndex index(f);
  const Allocation al = allocate(index, ring(f), 1);
  EXPECT_THROW(route(index, al, alltoall_traffic(index, al, 1.0, false, true)), std::invalid_argument);
  EXPECT_NO_THROW(route(index, al, alltoall_traffic(index, al, 1.0, false)));
}

// The entries come out in cable order and summed per cable and direction,
// whatever order the load was added in.
TEST(BackgroundLoad, EntriesAreInCableOrderWhateverTheOrderAdded) {
  BackgroundLoad load;
  load.add(7, 1.0);
  load.add(2, 2.0);
  load.add(9, 3.0);
  load.add(2, 0.5);
  load.add(5, 4.0);
  std::vector<int> ids;
  for (const auto& [id, entry] : load.entries()) ids.push_back(id);
  EXPECT_EQ(ids, (std::vector<int>{2, 5, 7, 9}));
  ASSERT_NE(load.find(2), nullptr);
  EXPECT_DOUBLE_EQ(load.find(2)->from_a_gbps, 2.5);
  EXPECT_DOUBLE_EQ(load.find(2)->from_b_gbps, 2.5);
  EXPECT_EQ(load.find(3), nullptr);
  EXPECT_EQ(load.find(10), nullptr);
  EXPECT_THROW(load.add(4, -1.0), std::invalid_argument);
  EXPECT_EQ(load.find(4), nullptr);  // a refused rate adds no entry
}

TEST(CableRoom, ATrunkFillsAtItsTightestCable) {
  Fabric f = make_synthetic(kSpec);
  PathIndex index(f);
  const int k = trunk_between(index, "leaf01", "spine02");
  const PathIndex::Trunk& t = index.trunks()[k];
  ASSERT_EQ(t.cables.size(), 2u);
  const int first = directed_cable(f.link(t.cables[0]), t.from), second = directed_cable(f.link(t.cables[1]), t.from);
  const double line = f.link(t.cables[0]).gbps();
  CableRoom idle(index, BackgroundLoad(), 0.5);
  EXPECT_DOUBLE_EQ(idle.gbps(index.trunk_key(k)), 0.5 * line);
  EXPECT_EQ(idle.cable_of(index.trunk_key(k)), std::min(first, second));  // a tie: the lowest id
  BackgroundLoad busy;
  busy.add(f, t.cables[1], t.from, 0.25 * line);
  busy.add(f, t.cables[1], t.to, 0.5 * line);  // the other direction: another trunk
  CableRoom room(index, busy, 0.5);
  EXPECT_DOUBLE_EQ(room.gbps(index.trunk_key(k)), 0.25 * line);
  EXPECT_EQ(room.cable_of(index.trunk_key(k)), second);
  EXPECT_EQ(room.cable_of(first), first);
  EXPECT_DOUBLE_EQ(room.gbps(index.trunk_key(trunk_between(index, "leaf01", "spine01"))), 0.5 * line);
}

// Progressive filling stopped once the first sharer stops gives it what the
// full filling gives: a hand-worked case, then random ones on few cables.
TEST(Sharing, FirstShareIsTheFirstOfTheFullFilling) {
  Fabric f = make_synthetic(kSpec);
  const CableRoom room(f, BackgroundLoad(), 1.0);
  const int cable = directed_cable(f.link(f.cables()[0]), f.link(f.cables()[0]).end_a);
  const double line = room.gbps(cable);
  const std::vector<std::pair<int, double>> one{{cable, 1.0}}, two{{cable, 2.0}};
  // A neighbour asking a tenth leaves the rest; one asking all is cut to a fair per-flow share.
  const Sharer modest[] = {{one}, {one, 0.1 * line}};
  EXPECT_DOUBLE_EQ(first_share(modest, room).flow_gbps, 0.9 * line);
  EXPECT_EQ(first_share(modest, room).limit, cable);
  const Sharer greedy[] = {{one}, {two, line}};
  EXPECT_DOUBLE_EQ(first_share(greedy, room).flow_gbps, line / 3);

  std::mt19937 rng(7);
  std::vector<int> keys;
  for (size_t c = 0; c < 6; ++c) keys.push_back(directed_cable(f.link(f.cables()[c]), f.link(f.cables()[c]).end_b));
  for (int instance = 0; instance < 300; ++instance) {
    std::vector<std::vector<std::pair<int, double>>> flows(2 + rng() % 10);
    std::vector<Sharer> sharers;
    for (size_t s = 0; s < flows.size(); ++s) {
      for (int k : keys)
        if (rng() % 3 == 0) flows[s].emplace_back(k, 0.5 + (rng() % 8) / 2.0);
      const double demand = s == 0 ? std::numeric_limits<double>::infinity() : line * (rng() % 100) / 100.0;
      sharers.push_back({flows[s], demand});
    }
    const Share all = share_max_min(sharers, room)[0], first = first_share(sharers, room);
    EXPECT_EQ(first.flow_gbps, all.flow_gbps) << "instance " << instance;
    EXPECT_EQ(first.limit, all.limit) << "instance " << instance;
  }
}

TEST(LinkLoad, StaticRoutingFollowsTheTablesOnOnePath) {
  Fabric f = make_synthetic(kSpec);
  f.set_routing(testing::dmodk_routing(f));
  PathIndex index(f);
  LinkLoad load = ring_load(index, ring(f), kAllReduce);
  NodeId a = f.hcas_of(*f.find_host("gpu001")).front(), b = f.hcas_of(*f.find_host("gpu009")).front();
  for (auto [from, to, leaf] : {std::tuple{a, b, "leaf01"}, std::tuple{b, a, "leaf02"}}) {
    StaticRoute route = trace_static_route(f, from, to);
    ASSERT_EQ(route.status, RouteStatus::Ok);
    ASSERT_EQ(route.hops.size(), 4u);  // HCA, leaf, spine, leaf
    std::vector<double> up = uplink_bytes(f, load, leaf);
    int loaded = 0;
    for (double x : up) loaded += x > 0;
    EXPECT_EQ(loaded, 1) << leaf;
    // Every cable of the table's path carries the whole flow.
    for (const RouteHop& hop : route.hops) EXPECT_DOUBLE_EQ(load.bytes_on(hop.cable, hop.from), 1 << 20) << leaf;
  }
  // Nothing else: the two paths, four hops each, are every loaded cable.
  EXPECT_EQ(load.cables().size(), 8u);
  EXPECT_EQ(load.max_switches(), 3);
}

TEST(LinkLoad, RunningJobsGbpsLandOnTheirStaticPaths) {
  Fabric f = make_synthetic(kSpec);
  f.set_routing(testing::dmodk_routing(f));
  SwitchTree tree(f);
  RunningJob job{ring(f), Profile::AllReduce, 1, 0.5};
  JobTraffic t = job_traffic(tree, job);
  // Gb/s on the same switch-to-switch cables as the flows, and only there
  // beside the hosts' own cables.
  std::vector<int> switch_cables;
  for (auto [c, g] : t.gbps) {
    EXPECT_GT(g, 0);
    const Link& l = f.link(f.cables()[c / 2]);
    if (f.node(l.end_a).kind == NodeKind::Switch && f.node(l.end_b).kind == NodeKind::Switch)
      switch_cables.push_back(c);
  }
  std::vector<int> flow_cables;
  for (auto [c, n] : t.flows) flow_cables.push_back(c);
  EXPECT_EQ(switch_cables, flow_cables);
  EXPECT_EQ(flow_cables.size(), 4u);
}

TEST(LinkLoad, AStaticTableThatLeadsNowhereNamesBothHosts) {
  Fabric f = make_synthetic(kSpec);
  Routing r = testing::dmodk_routing(f);
  NodeId to = f.hcas_of(*f.find_host("gpu009")).front();
  r.lft[f.switch_index(*f.find("leaf01"))][f.node(to).lid] = kNoPort;  // a hole
  f.set_routing(std::move(r));
  PathIndex index(f);
  std::vector<int> hosts = {index.host_index(*f.find_host("gpu001")), index.host_index(*f.find_host("gpu009"))};
  LinkLoad load(index, hosts);
  try {
    load.add(0, 0, 1, 0, 1);
    FAIL() << "a hole, no error";
  } catch (const FabricError& e) {
    EXPECT_NE(std::string(e.what()).find("gpu001"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gpu009"), std::string::npos) << e.what();
  }
  load.add(1, 0, 0, 0, 1);  // the other way is routed
  EXPECT_EQ(load.max_switches(), 3);
}

// Tables route by destination alone, so a leaf that sends a host of its
// own up gets it back and sends it up again: a loop, whatever the spine
// does. A flow within a leaf is delivered straight down or not at all, and
// an entry that is not straight down must still be reported.
TEST(LinkLoad, AFlowWithinALeafWhoseTableSendsItUpIsALoop) {
  Fabric f = make_synthetic(kSpec);
  Routing r = testing::dmodk_routing(f);
  const NodeId leaf = *f.find("leaf01");
  const NodeId to = f.hcas_of(*f.find_host("gpu002")).front();
  std::optional<LinkId> up;
  for (LinkId e : f.cables())
    if ((f.link(e).end_a == leaf || f.link(e).end_b == leaf) && f.node(f.peer(e, leaf)).kind == NodeKind::Switch)
      up = e;
  ASSERT_TRUE(up);
  r.lft[f.switch_index(leaf)][f.node(to).lid] = static_cast<uint8_t>(f.local_port(*up, leaf));
  f.set_routing(std::move(r));
  PathIndex index(f);
  std::vector<int> hosts = {index.host_index(*f.find_host("gpu001")), index.host_index(*f.find_host("gpu002"))};
  LinkLoad load(index, hosts);
  try {
    load.add(0, 0, 1, 0, 1);
    FAIL() << "a loop, no error";
  } catch (const FabricError& e) {
    EXPECT_NE(std::string(e.what()).find("loop"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gpu002"), std::string::npos) << e.what();
  }

  // The tables as OpenSM writes them: the leaf delivers it itself.
  f.set_routing(testing::dmodk_routing(f));
  PathIndex direct(f);
  LinkLoad shortcut(direct, hosts);
  shortcut.add(0, 0, 1, 0, 1);
  EXPECT_EQ(shortcut.max_switches(), 1);
  EXPECT_DOUBLE_EQ(shortcut.bytes_on(*up, leaf), 0);
  EXPECT_DOUBLE_EQ(shortcut.bytes_on(f.cable_at(to, 1).value(), leaf), 1);
}

}  // namespace
}  // namespace topo
