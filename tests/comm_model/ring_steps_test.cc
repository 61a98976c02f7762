// Concurrent rings simulated step by step (comm_model/ring_steps.h): times
// worked out by hand on the two-leaf trunk, and one busy snapshot whose
// time SimGrid computed.
#include <gtest/gtest.h>

#include "comm_model/ring_steps.h"
#include "fabric/synthetic.h"
#include "routing/routing_engine.h"
#include "tests/support/static_routing_fixture.h"

namespace topo {
namespace {

using testing::host;
using testing::textbook;

// The two-leaf trunk (static_routing_fixture.h). Times in tau: a flow
// alone on a cable moves S bytes in one tau.
struct TrunkSteps : testing::Trunk {
  void SetUp() override {
    Trunk::SetUp();
    tau = S * 8 / (C * 1e9);
  }
  double tau = 0;
};

TEST_F(TrunkSteps, AJobAloneTakesItsEstimate) {
  PathIndex index(f);
  for (const ModelOptions& o : {textbook(), ModelOptions{}}) {
    std::vector<NeighbourJob> alone = {{a, request()}};
    Estimate stepped = estimate_each_by_steps(index, alone, o).front();
    Estimate e = estimate(index, a, request(), {}, o);
    EXPECT_NEAR(stepped.time_s, e.time_s, e.time_s * 1e-9);
    EXPECT_EQ(stepped.algorithm, e.algorithm);
    EXPECT_EQ(stepped.protocol, e.protocol);
  }
}

// Three flows on leaf01's first uplink the whole time (B starts again as
// soon as it ends): A's 1.5 S per edge and B's S per edge at a third each.
TEST_F(TrunkSteps, RingsAlwaysOnShareTheTrunkPerFlow) {
  PathIndex index(f);
  std::vector<NeighbourJob> jobs = {{a, request()}, {b, request()}};
  std::vector<Estimate> e = estimate_each_by_steps(index, jobs, textbook());
  EXPECT_NEAR(e[0].time_s, 4.5 * tau, tau * 1e-9);
  EXPECT_NEAR(e[1].time_s, 3 * tau, tau * 1e-9);
}

// B computes three quarters of its time: after its first run (3 tau at a
// third of the trunk) it pauses 3 tau, its alone time three times over.
// A's edges on the trunk moved S of their 1.5 S by then; the last half S
// runs at half the trunk: tau more.
TEST_F(TrunkSteps, ANeighbourThatComputesLeavesTheTrunkBetweenRuns) {
  PathIndex index(f);
  std::vector<NeighbourJob> jobs = {{a, request()}, {b, request(), 0.25}};
  std::vector<Estimate> e = estimate_each_by_steps(index, jobs, textbook());
  EXPECT_NEAR(e[0].time_s, 4 * tau, tau * 1e-9);
  EXPECT_NEAR(e[1].time_s, 3 * tau, tau * 1e-9);
}

// A job that does not run a ring keeps its stationary estimate, and loads
// the cables at its stationary demand.
TEST_F(TrunkSteps, OnlyRingsStep) {
  PathIndex index(f);
  Request all_to_all{Collective::AllToAll, S, Dtype::Fp32, 1};
  std::vector<NeighbourJob> jobs = {{b, all_to_all}, {a, request()}};
  ModelOptions o;
  std::vector<Estimate> stationary = estimate_each(index, jobs, o);
  std::vector<Estimate> stepped = estimate_each_by_steps(index, jobs, o);
  EXPECT_DOUBLE_EQ(stepped[0].time_s, stationary[0].time_s);
  EXPECT_GT(stepped[1].time_s, estimate(index, a, request(), {}, o).time_s);
  std::vector<NeighbourJob> one_host = {{{host(f, 5)}, request()}, {a, request()}};
  EXPECT_EQ(estimate_each_by_steps(index, one_host, o)[0].time_s, 0);
  EXPECT_TRUE(estimate_each_by_steps(index, {}, o).empty());
}

// A ring judged with its algorithm fixed beside a neighbour that runs
// AllToAll: each is estimated its own way, as the simulation's judge asks.
TEST_F(TrunkSteps, ANeighbourKeepsItsOwnOptions) {
  PathIndex index(f);
  ModelOptions ring;
  ring.algorithm = Algorithm::Ring;
  NeighbourJob all_to_all{b, {Collective::AllToAll, S, Dtype::Fp32, 1}};
  EXPECT_THROW(estimate_by_steps(index, a, request(), {&all_to_all, 1}, ring), std::invalid_argument);
  all_to_all.options = ModelOptions{};
  Estimate beside = estimate_by_steps(index, a, request(), {&all_to_all, 1}, ring);
  EXPECT_EQ(beside.algorithm, Algorithm::Ring);
  EXPECT_GT(beside.time_s, estimate(index, a, request(), {}, ring).time_s);
  std::vector<NeighbourJob> both = {all_to_all, {a, request()}};
  std::vector<Estimate> each = estimate_each_by_steps(index, both, ring);
  EXPECT_EQ(each[0].algorithm, Algorithm::Direct);
  EXPECT_DOUBLE_EQ(each[1].time_s, beside.time_s);
}

// Snapshot 4 of tests/simgrid/simgrid_check.cc (static minhop, five jobs):
// SimGrid took 7.009 ms for the 10-host ring, whose four edges crossing
// leaves are paced at 128-153 Gb/s while its six others send at line rate
// 36% of the run and wait; the stationary model, pacing them all evenly,
// said 5.033 ms.
std::vector<NeighbourJob> busy_snapshot(const Fabric& f, double duty = 1) {
  const std::vector<std::vector<int>> rings = {{25, 18, 32, 22, 13, 12, 14},
                                               {16, 19, 2, 9, 6, 28, 23, 10},
                                               {1, 3, 5, 7, 8, 17, 26, 27, 30, 31},
                                               {4, 15},
                                               {11, 20, 24}};
  std::vector<NeighbourJob> jobs;
  for (const auto& ring : rings) {
    NeighbourJob j{{}, {Collective::AllReduce, 64.0 * 1024 * 1024, Dtype::Fp32, 1}, duty};
    for (int n : ring) j.ring.push_back(host(f, n));
    jobs.push_back(j);
  }
  return jobs;
}

Fabric minhop_leafspine() {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  f.set_routing(emulate_routing(f, "minhop"));
  return f;
}

TEST(RingSteps, ABusySnapshotTakesSimGridsTime) {
  const Fabric f = minhop_leafspine();
  PathIndex index(f);
  const std::vector<NeighbourJob> jobs = busy_snapshot(f);
  ModelOptions o = textbook();
  o.network_efficiency = 0.96;
  EXPECT_NEAR(estimate_each_by_steps(index, jobs, o)[2].time_s, 7.009e-3, 0.001e-3);
  EXPECT_NEAR(estimate_each(index, jobs, o)[2].time_s, 5.033e-3, 0.001e-3);
}

// The same snapshot judged per flow: every job sends all the time and
// their rings make few sends, so the per-flow judge steps them all at once
// and gives SimGrid's time; its bounds alone, which it keeps for a
// component that computes part of its time, cannot.
TEST(RingSteps, PerFlowStepsSmallComponentsThatAlwaysSend) {
  const Fabric f = minhop_leafspine();
  PathIndex index(f);
  ModelOptions o = textbook();
  o.network_efficiency = 0.96;
  const std::vector<NeighbourJob> jobs = busy_snapshot(f);
  const std::vector<Estimate> stepped = estimate_each_by_steps(index, jobs, o);
  const std::vector<Estimate> flows = estimate_each_by_flows(index, jobs, o);
  for (size_t j = 0; j < jobs.size(); ++j)
    EXPECT_NEAR(flows[j].time_s, stepped[j].time_s, stepped[j].time_s * 1e-9) << j;
  EXPECT_NEAR(flows[2].time_s, 7.009e-3, 0.001e-3);

  std::vector<FlowJob> flow_jobs;
  std::vector<const FlowJob*> of;
  flow_jobs.reserve(jobs.size());
  for (const NeighbourJob& j : jobs) of.push_back(&flow_jobs.emplace_back(flow_job(index, j, o)));
  const std::vector<Estimate> bounds = share_by_flows(index, of, o.network_efficiency, /*steps=*/false);
  EXPECT_GT(std::abs(bounds[2].time_s / 7.009e-3 - 1), 0.05) << bounds[2].time_s;

  // At duty 0.5 every job computes half its time: the bounds stand.
  const std::vector<NeighbourJob> half = busy_snapshot(f, 0.5);
  flow_jobs.clear();
  of.clear();
  for (const NeighbourJob& j : half) of.push_back(&flow_jobs.emplace_back(flow_job(index, j, o)));
  const std::vector<Estimate> half_bounds = share_by_flows(index, of, o.network_efficiency, false);
  const std::vector<Estimate> half_flows = share_by_flows(index, of, o.network_efficiency);
  for (size_t j = 0; j < half.size(); ++j) EXPECT_DOUBLE_EQ(half_flows[j].time_s, half_bounds[j].time_s) << j;
}

}  // namespace
}  // namespace topo
