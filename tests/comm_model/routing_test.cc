// Static routing in the model: every flow on its one path through the
// tables, checked against paths walked independently with
// trace_static_route; and the adaptive spread where the fabric says so.
#include <map>
#include <numeric>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "comm_model/estimate.h"
#include "common/error.h"
#include "fabric/synthetic.h"
#include "routing/route.h"
#include "tests/support/static_routing_fixture.h"

namespace topo {
namespace {

using testing::host;
using testing::textbook;

NodeId hca_of(const Fabric& f, NodeId h) { return f.hcas_of(h).front(); }

// Flows per directed cable of a ring, walked hop by hop through the tables.
std::map<int, int> ring_flows(const Fabric& f, const std::vector<NodeId>& ring) {
  std::map<int, int> count;
  for (size_t i = 0; i < ring.size(); ++i) {
    StaticRoute r = trace_static_route(f, hca_of(f, ring[i]), hca_of(f, ring[(i + 1) % ring.size()]));
    EXPECT_EQ(r.status, RouteStatus::Ok);
    for (const RouteHop& h : r.hops) ++count[directed_cable(f.link(h.cable), h.from)];
  }
  return count;
}

TEST(CommModelRouting, RingsFollowTheTablesOnePathPerFlow) {
  for (const std::string spec : {"leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2",
                                 "clos3:pods=3,leaves_per_pod=2,hosts_per_leaf=4,oversub=2",
                                 "leafspine:leaves=6,hosts_per_leaf=4,spines=2,oversub=2,degrade=leaf03:6"}) {
    Fabric f = make_synthetic(spec);
    f.set_routing(testing::dmodk_tables(f));
    PathIndex index(f);
    std::mt19937 rng(7);
    for (int trial = 0; trial < 30; ++trial) {
      std::vector<NodeId> ring(f.hosts().begin(), f.hosts().end());
      std::shuffle(ring.begin(), ring.end(), rng);
      ring.resize(std::uniform_int_distribution<size_t>(2, ring.size())(rng));
      Request r{Collective::AllReduce, 1 << 26, Dtype::Fp32, 1};
      Estimate e = estimate(index, ring, r, {}, textbook());
      // The slowest cable: most flows for its rate.
      double worst = 0;
      int worst_flows = 0;
      for (auto [d, n] : ring_flows(f, ring)) {
        double s = n / (f.link(f.cables()[d / 2]).gbps() * 0.96);
        if (s > worst * (1 + 1e-12)) worst_flows = n;
        worst = std::max(worst, s);
      }
      double edge = 2.0 * (ring.size() - 1) / ring.size() * r.bytes;
      SCOPED_TRACE(fmt::format("{} trial {} N={}", spec, trial, ring.size()));
      EXPECT_EQ(e.routing, "static:dmodk");
      EXPECT_NEAR(e.time_s, edge * 8 * worst / 1e9, e.time_s * 1e-9);
      EXPECT_EQ(e.bottleneck.where, Bottleneck::Where::Cable);
      EXPECT_DOUBLE_EQ(e.bottleneck.flows, worst_flows);
      ASSERT_GE(e.bottleneck.directed_cable, 0);
      EXPECT_EQ(directed_cable(f.link(*e.bottleneck.cable), e.bottleneck.from), e.bottleneck.directed_cable);
    }
  }
}

// The two-leaf trunk (static_routing_fixture.h): destination-mod-2 sends
// gpu009 and gpu011 (even positions under leaf02) up the same uplink of
// leaf01, where adaptive routing spreads both flows over both uplinks.
TEST(CommModelRouting, StaticFlowsCollideWhereAdaptiveSpreads) {
  Fabric f = testing::two_leaf_trunk(/*routed=*/false);
  std::vector<NodeId> ring = testing::trunk_ring(f);
  Request r{Collective::AllReduce, 1 << 26, Dtype::Fp32, 1};
  PathIndex index(f);
  Estimate adaptive = estimate(index, ring, r, {}, textbook());
  f.set_routing(testing::dmodk_tables(f));
  Estimate pinned = estimate(index, ring, r, {}, textbook());
  EXPECT_EQ(adaptive.routing, "adaptive");
  EXPECT_EQ(pinned.routing, "static:dmodk");
  EXPECT_DOUBLE_EQ(pinned.time_s, 2 * adaptive.time_s);
  EXPECT_DOUBLE_EQ(pinned.bottleneck.flows, 2);
  EXPECT_EQ(pinned.bottleneck.name.rfind("leaf01:", 0), 0u) << pinned.bottleneck.name;
  EXPECT_DOUBLE_EQ(pinned.ideal_time_s, adaptive.ideal_time_s);
}

TEST(CommModelRouting, AHoleInTheTablesNamesTheSwitchAndHost) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=1");
  Routing tables = testing::dmodk_tables(f);
  NodeId to = host(f, 5);
  tables.lft[f.switch_index(*f.find("spine01"))][f.node(hca_of(f, to)).lid] = kNoPort;
  f.set_routing(tables);
  PathIndex index(f);
  std::vector<NodeId> ring = {host(f, 1), to};
  try {
    estimate(index, ring, Request{Collective::AllReduce, 1 << 20, Dtype::Fp32, 1});
    FAIL();
  } catch (const FabricError& e) {
    EXPECT_NE(std::string(e.what()).find("gpu005"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no table entry"), std::string::npos) << e.what();
  }
}

TEST(CommModelRouting, AllToAllAndTreeUnderStaticTablesAreNeverBelowAdaptiveOnAHealthyClos) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  PathIndex index(f);
  Fabric g = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  g.set_routing(testing::dmodk_tables(g));
  PathIndex pinned(g);
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<size_t> pick(f.hosts().size());
    std::iota(pick.begin(), pick.end(), 0);
    std::shuffle(pick.begin(), pick.end(), rng);
    pick.resize(2 + trial);
    std::vector<NodeId> a, b;
    for (size_t p : pick) {
      a.push_back(f.hosts()[p]);
      b.push_back(g.hosts()[p]);
    }
    for (Collective c : {Collective::AllToAll, Collective::AllReduce}) {
      Request r{c, 1 << 28, Dtype::Fp32, 2};
      ModelOptions o;
      if (c == Collective::AllReduce) o.algorithm = Algorithm::Tree;
      Estimate ea = estimate(index, a, r, {}, o), eb = estimate(pinned, b, r, {}, o);
      EXPECT_GE(eb.time_s, ea.time_s * (1 - 1e-9)) << trial;
      EXPECT_DOUBLE_EQ(eb.ideal_time_s, ea.ideal_time_s) << trial;
    }
  }
}

}  // namespace
}  // namespace topo
