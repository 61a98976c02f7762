// The judge on NVLink domains (simulation/domain_judge.h) and the domain
// tier of the per-flow sharing (comm_model/domain_flows.h).
#include <gtest/gtest.h>

#include "comm_model/domain_flows.h"
#include "comm_model/estimate.h"
#include "fabric/synthetic.h"
#include "simulation/outcome.h"

namespace topo {
namespace {

// 4 racks of 6 trays on leaves of 4 hosts a rail, 2:1: rack 0's trays 0-3
// share a leaf, trays 4-5 the next one with rack 1's trays 0-1; so rings
// inside a domain cross spines as rings across domains do.
class DomainJudgeTest : public ::testing::Test {
 protected:
  Fabric f = make_synthetic("nvl72:racks=4,trays=6,hosts_per_leaf=4,oversub=2");
  SwitchTree tree{f};

  // Tray `i` of rack `d`.
  NodeId at(int d, int i) const { return f.hosts()[f.domains().hosts(d)[i]]; }

  ScheduledJob job(std::string id, std::vector<NodeId> ring, int segment = 0) const {
    ScheduledJob j;
    j.id = std::move(id);
    j.end_s = 100;
    j.ring = std::move(ring);
    j.host_gpus.assign(j.ring.size(), 4);
    j.gpus = 4 * static_cast<int>(j.ring.size());
    j.duty = 1;
    j.segment = segment;
    return j;
  }

  static ModelOptions ring_options() {
    ModelOptions o;
    o.algorithm = Algorithm::Ring;
    o.protocol = Protocol::Simple;
    return o;
  }

  // Rack 0's trays alternating between its two leaves: every edge climbs.
  std::vector<NodeId> inside() const { return {at(0, 0), at(0, 4), at(0, 1), at(0, 5)}; }
  // Rack 0's trays 2-3 and rack 1's 0-1, alternating: every edge climbs
  // between the same two leaves, and crosses domains.
  std::vector<NodeId> heavy() const { return {at(0, 2), at(1, 0), at(0, 3), at(1, 1)}; }
};

TEST_F(DomainJudgeTest, TheFabricPutsADomainOnTwoLeaves) {
  ASSERT_EQ(f.domains().count(), 4u);
  EXPECT_EQ(tree.home_leaf(at(0, 0)), tree.home_leaf(at(0, 3)));
  EXPECT_NE(tree.home_leaf(at(0, 0)), tree.home_leaf(at(0, 4)));
  EXPECT_EQ(tree.home_leaf(at(0, 4)), tree.home_leaf(at(1, 0)));
}

TEST_F(DomainJudgeTest, ARingInsideOneDomainLeavesTheNetwork) {
  const Request r{Collective::AllReduce, kMessageBytes, Dtype::Bf16, 4};
  DomainModelOptions o;
  o.model = ring_options();
  const FlowJob in = domain_flow_job(tree.paths(), {inside(), r, 1.0, std::nullopt}, o);
  EXPECT_TRUE(in.parts.empty());
  const double nvlink = nvlink_time_s(r, 16, nvlink_gbps(f, o), o);
  EXPECT_DOUBLE_EQ(in.alone.time_s, nvlink);
  EXPECT_DOUBLE_EQ(in.alone.ideal_time_s, nvlink);
  std::vector<int> cables;
  flow_job_cables(tree.paths(), in, cables);
  EXPECT_TRUE(cables.empty());

  // Two trays of each of two racks: the two edges between racks stay on
  // the network, the two inside a rack leave it.
  const std::vector<NodeId> split{at(0, 2), at(0, 3), at(1, 0), at(1, 1)};
  const FlowJob across = domain_flow_job(tree.paths(), {split, r, 1.0, std::nullopt}, o);
  const FlowJob network = flow_job(tree.paths(), {split, r, 1.0, std::nullopt}, o.model);
  EXPECT_EQ(across.parts.size(), 2u);
  EXPECT_EQ(network.parts.size(), 4u);
  // Its network edges set its pace: alone and ideally as on the network.
  EXPECT_DOUBLE_EQ(across.alone.time_s, network.alone.time_s);
  EXPECT_DOUBLE_EQ(across.alone.ideal_time_s, network.alone.ideal_time_s);
}

TEST_F(DomainJudgeTest, AJobInOneDomainIsNotSlowedByAHeavyNeighbour) {
  Schedule s;
  s.jobs = {job("inside", inside()), job("heavy", heavy())};
  // On the network alone (the judge before the domain tier), the
  // neighbour takes half of the uplinks the inside ring climbs.
  const Request r{Collective::AllReduce, kMessageBytes, Dtype::Bf16, 4};
  const std::vector<NeighbourJob> both{{inside(), r, 1.0, std::nullopt}, {heavy(), r, 1.0, std::nullopt}};
  const std::vector<Estimate> network = estimate_each_by_flows(tree.paths(), both, ring_options());
  ASSERT_GT(network[0].time_s / network[0].ideal_time_s, 1.5);

  OutcomeOptions o;
  o.fabric_gpus = 4 * static_cast<int>(f.hosts().size());
  for (Profile p : {Profile::AllReduce, Profile::Fsdp, Profile::AllToAll, Profile::Pipeline, Profile::Mixed}) {
    for (ScheduledJob& j : s.jobs) j.profile = p;
    const PolicyOutcome judged = judge(tree, s, o);
    EXPECT_DOUBLE_EQ(judged.jobs[0].allreduce_slowdown, 1.0) << name(p);
    EXPECT_DOUBLE_EQ(judged.jobs[0].allreduce_alone_slowdown, 1.0) << name(p);
    EXPECT_DOUBLE_EQ(judged.jobs[0].alltoall_slowdown, 1.0) << name(p);
    EXPECT_EQ(judged.jobs[0].spines, 0) << name(p);
  }
}

TEST_F(DomainJudgeTest, AJobSplitOverTwoDomainsIsPricedOnTheNetwork) {
  // Rack 0's trays 0-1 and rack 2's 0-1 (another leaf pair): the ring's
  // edges between racks climb rack 0's leaf, as the heavy ring's do.
  const std::vector<NodeId> split{at(0, 0), at(0, 1), at(2, 0), at(2, 1)};
  Schedule s;
  s.jobs = {job("split", split), job("heavy", heavy())};
  OutcomeOptions o;
  o.fabric_gpus = 4 * static_cast<int>(f.hosts().size());
  const PolicyOutcome judged = judge(tree, s, o);
  const Estimate alone =
      estimate(tree.paths(), split, {Collective::AllReduce, kMessageBytes, Dtype::Bf16, 4}, {}, ring_options());
  EXPECT_NEAR(judged.jobs[0].allreduce_alone_slowdown, alone.time_s / alone.ideal_time_s, 1e-9);
  EXPECT_GT(judged.jobs[0].allreduce_slowdown, judged.jobs[0].allreduce_alone_slowdown * 1.2);
  EXPECT_GT(judged.jobs[0].spines, 0);
  // Without the neighbour, only its own edges: its time alone.
  s.jobs.pop_back();
  EXPECT_DOUBLE_EQ(judge(tree, s, o).jobs[0].allreduce_slowdown, judged.jobs[0].allreduce_alone_slowdown);
}

TEST_F(DomainJudgeTest, ASplitSegmentPaysItsTensorParallelTrafficOnTheNetwork) {
  OutcomeOptions o;
  o.fabric_gpus = 4 * static_cast<int>(f.hosts().size());
  // One cyclic ring, segments of 2 cut two ways: each segment in one rack,
  // or each over both.
  Schedule whole, split;
  whole.jobs = {job("whole", {at(0, 2), at(0, 3), at(1, 0), at(1, 1)}, 2)};
  split.jobs = {job("split", {at(0, 3), at(1, 0), at(1, 1), at(0, 2)}, 2)};
  const PolicyOutcome w = judge(tree, whole, o), s = judge(tree, split, o);
  EXPECT_EQ(w.nvlink.segments_split, 0);
  EXPECT_EQ(s.nvlink.segments_split, 2);
  // Over NVLink the segments' AllReduce adds its own ideal time; over the
  // scale-out it takes many times that.
  EXPECT_LT(w.jobs[0].allreduce_slowdown, 1.05);
  EXPECT_GT(s.jobs[0].allreduce_slowdown, 3.0);
  // Without tensor-parallel traffic the two are the same ring.
  o.segment_traffic = 0;
  EXPECT_DOUBLE_EQ(judge(tree, whole, o).jobs[0].allreduce_slowdown, judge(tree, split, o).jobs[0].allreduce_slowdown);
}

}  // namespace
}  // namespace topo
