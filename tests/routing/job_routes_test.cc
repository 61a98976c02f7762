// Routes for the running jobs: the planner's balance, its limits (only the
// running multi-leaf jobs' LIDs, churn cap, degraded cables), and the
// up/down check that keeps its tables deadlock-free.
#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "fabric/synthetic.h"
#include "routing/job_routes.h"
#include "routing/opensm_lfts.h"
#include "routing/ring_floor.h"
#include "routing/route.h"
#include "routing/routing_check.h"
#include "routing/routing_engine.h"

namespace topo {
namespace {

constexpr const char* kFabric = "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2";

Fabric routed(const std::string& spec, const std::string& engine) {
  Fabric f = make_synthetic(spec);
  f.set_routing(emulate_routing(f, engine));
  return f;
}

NodeId host(const Fabric& f, const std::string& name) { return *f.find_host(name); }

// 16 hosts, 4 from each leaf, in an order where every ring edge crosses
// leaves: gpu001 gpu009 gpu017 gpu025 gpu002 gpu010 ...
RingJob scattered(const Fabric& f, const std::string& id, int first) {
  RingJob job{id, {}};
  for (int i = 0; i < 4; ++i)
    for (int leaf = 0; leaf < 4; ++leaf) job.ring.push_back(host(f, fmt::format("gpu{:03}", leaf * 8 + first + i)));
  return job;
}

std::set<uint32_t> lids_of(const Fabric& f, const RingJob& job) {
  std::set<uint32_t> lids;
  for (NodeId h : job.ring)
    for (NodeId hca : f.hcas_of(h)) lids.insert(f.node(hca).lid);
  return lids;
}

// The first port of switch `from` cabled to `to`.
uint8_t port_to(const Fabric& f, const std::string& from, const std::string& to) {
  NodeId a = *f.find(from), b = *f.find(to);
  for (auto e : boost::make_iterator_range(boost::out_edges(a, f.graph())))
    if (f.peer(e, a) == b) return static_cast<uint8_t>(f.local_port(e, a));
  throw std::logic_error(from + " is not cabled to " + to);
}

// The switch an HCA is cabled to.
NodeId switch_of(const Fabric& f, NodeId hca) {
  for (auto e : boost::make_iterator_range(boost::out_edges(hca, f.graph())))
    if (f.node(f.peer(e, hca)).kind == NodeKind::Switch) return f.peer(e, hca);
  throw std::logic_error("HCA not cabled");
}

Fabric with_routing(const Fabric& f, const Routing& r) {
  Fabric out = f;
  out.set_routing(r);
  return out;
}

TEST(JobRoutes, ScatteredRingGetsACablePerFlow) {
  for (const char* engine : {"ftree", "minhop", "updn"}) {
    SCOPED_TRACE(engine);
    Fabric f = routed(kFabric, engine);
    std::vector<RingJob> jobs{scattered(f, "a", 1)};
    RoutePlan plan = plan_job_routes(f, f.routing(), jobs);
    // Each leaf sends four flows up and has four uplinks: one flow a cable.
    EXPECT_DOUBLE_EQ(plan.after.most, 1.0);
    EXPECT_EQ(plan.after.shared_cables, 0);
    EXPECT_DOUBLE_EQ(plan.after.excess, 0.0);
    EXPECT_LE(plan.after.most, plan.before.most);
    EXPECT_EQ(plan.after, ring_load(f, plan.routing, jobs));
    // ftree's destination-mod-k already gives this ring a cable per flow: nothing to change then.
    EXPECT_EQ(plan.changes.empty(), plan.before.most == 1.0);
    EXPECT_TRUE(check_up_down(f, plan.routing).empty());
    EXPECT_TRUE(check_routing(with_routing(f, plan.routing)).empty());
  }
}

TEST(JobRoutes, MinhopBaseSharesCablesThePlanDoesNot) {
  Fabric f = routed(kFabric, "minhop");
  std::vector<RingJob> jobs{scattered(f, "a", 1), scattered(f, "b", 5)};
  RoutePlan plan = plan_job_routes(f, f.routing(), jobs);
  EXPECT_DOUBLE_EQ(plan.before.most, 4.0);
  EXPECT_GT(plan.before.shared_cables, 0);
  // Two such jobs send eight flows up from each leaf over four uplinks.
  EXPECT_DOUBLE_EQ(plan.after.most, 2.0);
  EXPECT_LT(plan.after.excess, plan.before.excess);
  EXPECT_TRUE(check_up_down(f, plan.routing).empty());
}

TEST(JobRoutes, IsDeterministic) {
  Fabric f = routed(kFabric, "ftree");
  std::vector<RingJob> jobs{scattered(f, "a", 1), scattered(f, "b", 5)};
  RoutePlan one = plan_job_routes(f, f.routing(), jobs), two = plan_job_routes(f, f.routing(), jobs);
  EXPECT_EQ(one.routing.lft, two.routing.lft);
  ASSERT_EQ(one.changes.size(), two.changes.size());
}

TEST(JobRoutes, ChangesOnlyTheRunningMultiLeafJobsLids) {
  Fabric f = routed(kFabric, "ftree");
  RingJob one_leaf{"c", {host(f, "gpu005"), host(f, "gpu006"), host(f, "gpu007")}};
  std::vector<RingJob> jobs{scattered(f, "a", 1), one_leaf};
  RoutePlan plan = plan_job_routes(f, f.routing(), jobs);
  const std::set<uint32_t> mine = lids_of(f, jobs[0]);
  EXPECT_EQ(std::set<uint32_t>(plan.lids.begin(), plan.lids.end()), mine);
  for (const EntryChange& c : plan.changes) {
    EXPECT_TRUE(mine.contains(c.lid)) << c.lid;
    EXPECT_EQ(c.base_port, f.routing().out_port(static_cast<size_t>(c.switch_index), c.lid));
    EXPECT_EQ(c.port, plan.routing.out_port(static_cast<size_t>(c.switch_index), c.lid));
  }
  for (size_t s = 0; s < f.switches().size(); ++s)
    for (NodeId hca : f.hcas())
      if (!mine.contains(f.node(hca).lid)) {
        EXPECT_EQ(plan.routing.out_port(s, f.node(hca).lid), f.routing().out_port(s, f.node(hca).lid));
      }
}

TEST(JobRoutes, AJobThatEndedGetsItsBaseEntriesBack) {
  Fabric f = routed(kFabric, "minhop");
  RingJob a = scattered(f, "a", 1), b = scattered(f, "b", 5);
  RoutePlan both = plan_job_routes(f, f.routing(), {a, b});
  RoutePlan after_b = plan_job_routes(f, f.routing(), {a});
  bool b_was_changed = false;
  for (const EntryChange& c : both.changes) b_was_changed |= lids_of(f, b).contains(c.lid);
  EXPECT_TRUE(b_was_changed);
  for (uint32_t lid : lids_of(f, b))
    for (size_t s = 0; s < f.switches().size(); ++s)
      EXPECT_EQ(after_b.routing.out_port(s, lid), f.routing().out_port(s, lid));
}

TEST(JobRoutes, ChurnCapLimitsTheEntriesChanged) {
  Fabric f = routed(kFabric, "minhop");
  std::vector<RingJob> jobs{scattered(f, "a", 1)};
  const size_t free_changes = plan_job_routes(f, f.routing(), jobs).changes.size();
  for (int cap : {1, 3, 6}) {
    RoutePlan plan = plan_job_routes(f, f.routing(), jobs, RoutePlanOptions{cap});
    EXPECT_LE(plan.changes.size(), static_cast<size_t>(cap));
    EXPECT_LE(plan.after.most, plan.before.most);
    if (static_cast<size_t>(cap) < free_changes) {
      EXPECT_GT(plan.capped_flows, 0);
    }
    EXPECT_TRUE(check_up_down(f, plan.routing).empty());
  }
}

TEST(JobRoutes, DegradedUplinkCountsByItsRate) {
  // leaf01's first uplink (port 9) runs at 1x: a flow on it counts four.
  Fabric f = routed(std::string(kFabric) + ",degrade=leaf01:9", "ftree");
  std::vector<RingJob> jobs{scattered(f, "a", 1)};
  RoutePlan plan = plan_job_routes(f, f.routing(), jobs);
  const size_t leaf01 = static_cast<size_t>(f.switch_index(*f.find("leaf01")));
  const auto& ring = jobs[0].ring;
  for (size_t i = 0; i < ring.size(); ++i)
    if (f.leaves_of(ring[i]).at(0) == *f.find("leaf01")) {
      const uint32_t lid = f.node(f.hcas_of(ring[(i + 1) % ring.size()])[0]).lid;
      EXPECT_NE(plan.routing.out_port(leaf01, lid), 9) << lid;
    }
  // Four flows leave leaf01 over three full uplinks: one shares.
  EXPECT_DOUBLE_EQ(plan.after.most, 2.0);
}

TEST(JobRoutes, ThreeLevelFabric) {
  Fabric f = routed("clos3:pods=2,leaves_per_pod=2,hosts_per_leaf=4", "ftree");
  RingJob job{"a", {}};
  for (int i = 1; i <= 4; ++i)
    for (int leaf = 0; leaf < 4; ++leaf) job.ring.push_back(host(f, fmt::format("gpu{:03}", leaf * 4 + i)));
  RoutePlan plan = plan_job_routes(f, f.routing(), {job});
  EXPECT_LE(plan.after.most, plan.before.most);
  EXPECT_LE(plan.after.excess, plan.before.excess);
  EXPECT_TRUE(check_up_down(f, plan.routing).empty());
  EXPECT_TRUE(check_routing(with_routing(f, plan.routing)).empty());
}

// Hosts with an HCA on each rail, each rail its own leaves (rail r's HCA of
// a host to rail r's HCA of the next): the planner routes every rail's
// flows, within that rail's leaves, at the fewest flows a cable its leaves
// allow.
TEST(JobRoutes, MultiRailRingsStayOnTheirRails) {
  for (const char* engine : {"ftree", "minhop"}) {
    SCOPED_TRACE(engine);
    // Per rail two leaves of 8 hosts, 4 uplinks each, to 2 shared spines.
    Fabric f = routed("railopt:hosts=16,rails=2,spines=2,hosts_per_leaf=8,oversub=2", engine);
    RingJob job{"a", {}};
    for (int i = 1; i <= 8; ++i)
      for (int leaf : {0, 1}) job.ring.push_back(host(f, fmt::format("gpu{:03}", leaf * 8 + i)));
    RoutePlan plan = plan_job_routes(f, f.routing(), {job});
    // Every rail's 16 HCAs are planned for.
    EXPECT_EQ(plan.lids.size(), 32u);
    // Each leaf sends its 8 ring flows up over 4 uplinks: 2 a cable at best.
    EXPECT_DOUBLE_EQ(plan.after.most, 2.0);
    EXPECT_LE(plan.after.excess, plan.before.excess);
    EXPECT_TRUE(check_up_down(f, plan.routing).empty());
    const Fabric planned = with_routing(f, plan.routing);
    EXPECT_TRUE(check_routing(planned).empty());
    for (size_t i = 0; i < job.ring.size(); ++i) {
      auto from = f.hcas_of(job.ring[i]), to = f.hcas_of(job.ring[(i + 1) % job.ring.size()]);
      ASSERT_EQ(from.size(), 2u);
      for (size_t r = 0; r < 2; ++r) {
        StaticRoute route = trace_static_route(planned, from[r], to[r]);
        ASSERT_EQ(route.status, RouteStatus::Ok);
        // Both ends on rail r's leaves: the walk leaves from and arrives by them.
        EXPECT_EQ(route.hops.at(1).from, switch_of(f, from[r]));
        EXPECT_EQ(route.hops.back().from, switch_of(f, to[r]));
        EXPECT_NE(switch_of(f, from[r]), switch_of(f, from[1 - r]));
      }
    }
  }
}

// Four rings on a 6-leaf fabric of 4 uplinks a leaf (from random busy
// sets): no leaf sends or receives more than 8 cross-leaf flows, so 2 a
// cable is possible, but moving one flow at a time to its cheapest path
// stops at 3: every free path of a flow on the busiest cable passes a
// cable already at 2. Moving two at once (a flow, and one that leaves room
// for it) reaches 2.
RingJob ring_of(const Fabric& f, const std::string& id, const std::vector<int>& hosts) {
  RingJob job{id, {}};
  for (int h : hosts) job.ring.push_back(host(f, fmt::format("gpu{:03}", h)));
  return job;
}

TEST(JobRoutes, ExchangesReachTwoFlowsACableWhereSingleMovesStopAtThree) {
  for (const char* engine : {"ftree", "minhop"}) {
    SCOPED_TRACE(engine);
    Fabric f = routed("leafspine:leaves=6,hosts_per_leaf=8,spines=4,oversub=2,naming=contiguous", engine);
    std::vector<RingJob> jobs{
        ring_of(f, "a", {36, 7, 11, 2, 42, 41, 10, 27}),
        ring_of(f, "b", {13, 17, 12, 35, 15, 3, 24, 43, 33, 32, 48, 14}),
        ring_of(f, "c", {47, 38, 23, 29, 25, 22, 9, 21, 37, 28}),
        ring_of(f, "d", {4, 18, 31, 44, 6, 39, 1, 19, 8, 26, 30, 45, 5, 20, 16}),
    };
    const std::vector<double> floors = ring_floors(f, jobs);
    EXPECT_DOUBLE_EQ(*std::max_element(floors.begin(), floors.end()), 2.0);
    RoutePlan plan = plan_job_routes(f, f.routing(), jobs);
    EXPECT_DOUBLE_EQ(plan.after.most, 2.0);
    EXPECT_EQ(plan.after, ring_load(f, plan.routing, jobs));
    EXPECT_TRUE(check_up_down(f, plan.routing).empty());
    // Every host reaches every host, no loop (an uplink may carry more
    // destinations than its share now: that is the point).
    for (const RoutingFinding& finding : check_routing(with_routing(f, plan.routing)))
      EXPECT_EQ(finding.kind, RoutingFindingKind::OverShare) << finding.subject << ": " << finding.detail;
    EXPECT_EQ(plan_job_routes(f, f.routing(), jobs).routing.lft, plan.routing.lft);  // deterministic
    // The exchanges keep to the churn cap.
    for (int cap : {5, 20}) {
      RoutePlan capped = plan_job_routes(f, f.routing(), jobs, RoutePlanOptions{cap});
      EXPECT_LE(capped.changes.size(), static_cast<size_t>(cap));
      EXPECT_LE(capped.after.most, capped.before.most);
      EXPECT_TRUE(check_up_down(f, capped.routing).empty());
    }
  }
}

// The floor under any tables: a leaf with more cross-leaf ring flows than
// uplinks shares one, and the plan reaches the floor where it is the most.
TEST(RingFloor, LeafUplinksBoundTheBusiestCable) {
  Fabric f = routed(kFabric, "minhop");
  RingJob one_leaf{"c", {host(f, "gpu005"), host(f, "gpu006"), host(f, "gpu007")}};
  RingJob alone{"d", {host(f, "gpu008")}};
  // One scattered ring: 4 flows out of each leaf over its 4 uplinks.
  EXPECT_EQ(ring_floors(f, {scattered(f, "a", 1), one_leaf, alone}), (std::vector<double>{1.0, 1.0, 0.0}));
  // Two: 8 flows over 4 uplinks, whatever the tables.
  std::vector<RingJob> two{scattered(f, "a", 1), scattered(f, "b", 5), one_leaf};
  EXPECT_EQ(ring_floors(f, two), (std::vector<double>{2.0, 2.0, 1.0}));
  EXPECT_DOUBLE_EQ(plan_job_routes(f, f.routing(), two).after.most, 2.0);
}

TEST(RingFloor, DegradedUplinkCountsByItsRate) {
  // leaf01's uplink at 1x counts a quarter: 4 flows over 3.25 uplinks.
  Fabric f = routed(std::string(kFabric) + ",degrade=leaf01:9", "ftree");
  EXPECT_DOUBLE_EQ(ring_floors(f, {scattered(f, "a", 1)}).at(0), 4 / 3.25);
  EXPECT_GE(plan_job_routes(f, f.routing(), {scattered(f, "a", 1)}).after.most, 4 / 3.25);
}

TEST(JobRoutes, AdaptiveBaseIsRefused) {
  Fabric f = make_synthetic(kFabric);
  EXPECT_THROW(plan_job_routes(f, f.routing(), {scattered(f, "a", 1)}), FabricError);
}

// The check itself: OpenSM's engines pass it, a table with a down-up turn,
// a hole or a loop does not.
TEST(UpDownCheck, EnginesPass) {
  for (const char* engine : {"ftree", "minhop", "updn"}) {
    Fabric f = routed(kFabric, engine);
    EXPECT_TRUE(check_up_down(f, f.routing()).empty()) << engine;
  }
}

TEST(UpDownCheck, FindsADownUpTurn) {
  Fabric f = routed(kFabric, "ftree");
  const uint32_t lid = f.node(f.hcas_of(host(f, "gpu009"))[0]).lid;  // under leaf02
  const size_t spine01 = static_cast<size_t>(f.switch_index(*f.find("spine01")));
  const size_t leaf01 = static_cast<size_t>(f.switch_index(*f.find("leaf01")));
  Routing bad = f.routing();
  // spine01 sends the LID down to leaf01, and leaf01 up to spine02.
  bad.lft[spine01][lid] = port_to(f, "spine01", "leaf01");
  bad.lft[leaf01][lid] = port_to(f, "leaf01", "spine02");
  auto faults = check_destination(f, bad, lid);
  ASSERT_FALSE(faults.empty());
  bool down_up = false;
  for (const TurnFault& t : faults)
    down_up |= t.kind == TurnFault::Kind::DownUp && t.switch_index == static_cast<int>(leaf01);
  EXPECT_TRUE(down_up) << describe(f, faults[0]);
  EXPECT_FALSE(check_up_down(f, bad).empty());
}

TEST(UpDownCheck, FindsHolesAndLoops) {
  Fabric f = routed(kFabric, "ftree");
  const uint32_t lid = f.node(f.hcas_of(host(f, "gpu009"))[0]).lid;
  const size_t spine01 = static_cast<size_t>(f.switch_index(*f.find("spine01")));
  const size_t leaf01 = static_cast<size_t>(f.switch_index(*f.find("leaf01")));
  Routing hole = f.routing();
  hole.lft[spine01][lid] = kNoPort;
  EXPECT_EQ(check_destination(f, hole, lid).at(0).kind, TurnFault::Kind::NoPath);
  Routing loop = f.routing();
  loop.lft[spine01][lid] = port_to(f, "spine01", "leaf01");
  loop.lft[leaf01][lid] = port_to(f, "leaf01", "spine01");
  bool looped = false;
  for (const TurnFault& t : check_destination(f, loop, lid)) looped |= t.kind == TurnFault::Kind::Loop;
  EXPECT_TRUE(looped);
}

TEST(JobRoutes, PlannedTablesRoundTripThroughTheDumpFormat) {
  Fabric f = routed(kFabric, "ftree");
  RoutePlan plan = plan_job_routes(f, f.routing(), {scattered(f, "a", 1)});
  Fabric planned = with_routing(f, plan.routing);
  std::stringstream dump;
  write_opensm_lfts(planned, dump);
  Routing back = read_opensm_lfts(dump, "plan.lfts", f);
  for (size_t s = 0; s < f.switches().size(); ++s)
    for (NodeId n : f.hcas()) EXPECT_EQ(back.out_port(s, f.node(n).lid), plan.routing.out_port(s, f.node(n).lid));
}

}  // namespace
}  // namespace topo
