// Pipeline stages in the domain tier: a boundary inside an NVLink domain
// moves at NVLink speed, one between domains over the scale-out on its
// routes, and boundaries that share uplinks (with each other or with the
// running jobs) pay for it. The figures are worked out by hand here:
// bytes x 8 / rate, plus the latencies (0.3 us a switch, 1 us an NVLink
// step), with 4xNDR cables at NCCL's 96% and NVLink 5 at 900 GB/s x 0.802.
#include "comm_model/pipeline_stages.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fabric/synthetic.h"

namespace topo {
namespace {

constexpr double kActivation = 64.0 * 1024 * 1024;  // bytes per GPU per micro-batch, each way
constexpr double kCableGbps = 400 * 0.96;           // one 4xNDR lane a GPU
constexpr double kNvlinkGbps = 900 * 8 * 0.802;     // NVLink 5 per GPU, each way
constexpr double kSwitchS = 0.3e-6, kNvlinkStepS = 1e-6;

// gpu001.. by 0-based index, in the order given.
std::vector<NodeId> hosts(const Fabric& f, std::initializer_list<std::pair<int, int>> runs) {
  std::vector<NodeId> out;
  for (auto [first, count] : runs)
    for (int i = first; i < first + count; ++i) out.push_back(*f.find_host(fmt::format("gpu{:03}", i + 1)));
  return out;
}

PipelineRequest stages(int s) { return {s, kActivation, 4}; }

double one_way(double gbps, double latency_s) { return kActivation * 8 / (gbps * 1e9) + latency_s; }

TEST(PipelineStages, StagesInsideOneDomainEachPriceOnlyTheBoundaryOverTheNetwork) {
  // Both racks' trays of a rail under one leaf: a pair crosses one switch.
  Fabric f = make_synthetic("nvl72:racks=2,hosts_per_leaf=36");
  PathIndex index(f);
  PipelineEstimate p = estimate_pipeline(index, hosts(f, {{0, 36}}), stages(2));
  ASSERT_EQ(p.boundaries.size(), 1u);
  const StageBoundary& b = p.boundaries[0];
  EXPECT_EQ(b.tier, BoundaryTier::Network);
  EXPECT_EQ(b.network_pairs, 18);
  EXPECT_EQ(b.nvlink_s, 0);
  EXPECT_NEAR(b.network_gbps_per_gpu, kCableGbps, 1e-6);
  EXPECT_NEAR(b.forward_s, one_way(kCableGbps, kSwitchS), 1e-9);
  EXPECT_NEAR(b.seconds, 2 * one_way(kCableGbps, kSwitchS), 1e-9);
  EXPECT_DOUBLE_EQ(b.bytes, 2 * kActivation * 4 * 18);
  // Nothing inside the stages is priced: the total is the one boundary.
  EXPECT_DOUBLE_EQ(p.seconds, b.seconds);
  EXPECT_TRUE(b.shares_with.empty());
  EXPECT_FALSE(b.shares_with_running);
}

TEST(PipelineStages, TwoStagesInOneDomainCostNvlinkTimeOnly) {
  Fabric f = make_synthetic("nvl72:racks=2");
  PathIndex index(f);
  PipelineEstimate p = estimate_pipeline(index, hosts(f, {{0, 18}}), stages(2));
  ASSERT_EQ(p.boundaries.size(), 1u);
  const StageBoundary& b = p.boundaries[0];
  EXPECT_EQ(b.tier, BoundaryTier::NvLink);
  EXPECT_EQ(b.network_pairs, 0);
  EXPECT_EQ(b.network_gbps_per_gpu, 0);
  EXPECT_EQ(b.bottleneck, "NVLink");
  EXPECT_NEAR(b.forward_s, one_way(kNvlinkGbps, kNvlinkStepS), 1e-12);
  EXPECT_NEAR(p.seconds, 2 * one_way(kNvlinkGbps, kNvlinkStepS), 1e-12);
}

TEST(PipelineStages, AStageSplitOverTwoDomainsIsSlowerThanStagesInOne) {
  Fabric f = make_synthetic("nvl72:racks=2");
  PathIndex index(f);
  PipelineEstimate aligned = estimate_pipeline(index, hosts(f, {{0, 18}}), stages(3));
  // gpu004..gpu021: the third stage has three trays in each rack.
  PipelineEstimate split = estimate_pipeline(index, hosts(f, {{3, 18}}), stages(3));
  EXPECT_EQ(aligned.boundaries[1].tier, BoundaryTier::NvLink);
  const StageBoundary& b = split.boundaries[1];
  EXPECT_EQ(b.tier, BoundaryTier::Mixed);
  EXPECT_EQ(b.network_pairs, 3);
  // Three pairs over the spines (leaf, spine, leaf), each on its own lane;
  // the NVLink pairs are faster and wait for them.
  EXPECT_NEAR(b.forward_s, one_way(kCableGbps, 3 * kSwitchS), 1e-9);
  EXPECT_GT(split.seconds, aligned.seconds);
  EXPECT_NEAR(split.seconds - aligned.seconds,
              2 * (one_way(kCableGbps, 3 * kSwitchS) - one_way(kNvlinkGbps, kNvlinkStepS)), 1e-9);
}

TEST(PipelineStages, BoundariesSharingAnUplinkAreSlowerThanRailAlignedStages) {
  // A leaf per rack and rail, 18 trays down and 9 uplinks (2:1).
  Fabric f = make_synthetic("nvl72:racks=2,oversub=2");
  PathIndex index(f);
  // Stages of 9 trays in rack order: one boundary between the racks.
  PipelineEstimate aligned = estimate_pipeline(index, hosts(f, {{0, 36}}), stages(4));
  // Alternating racks: boundaries 0 and 2 both leave rack 1's leaves
  // (forward) and rack 2's (backward), 18 lanes on 9 uplinks.
  PipelineEstimate alternating = estimate_pipeline(index, hosts(f, {{0, 9}, {18, 9}, {9, 9}, {27, 9}}), stages(4));
  EXPECT_EQ(aligned.boundaries[1].tier, BoundaryTier::Network);
  EXPECT_NEAR(aligned.boundaries[1].forward_s, one_way(kCableGbps, 3 * kSwitchS), 1e-9);
  for (const StageBoundary& b : aligned.boundaries) EXPECT_TRUE(b.shares_with.empty());
  const StageBoundary& first = alternating.boundaries[0];
  EXPECT_EQ(first.shares_with, std::vector<int>{2});
  EXPECT_EQ(alternating.boundaries[2].shares_with, std::vector<int>{0});
  EXPECT_TRUE(alternating.boundaries[1].shares_with.empty());
  EXPECT_NEAR(first.network_gbps_per_gpu, kCableGbps / 2, 1e-6);
  EXPECT_NEAR(first.forward_s, one_way(kCableGbps / 2, 3 * kSwitchS), 1e-9);
  EXPECT_NE(first.bottleneck.find("spine"), std::string::npos) << first.bottleneck;
  EXPECT_GT(alternating.seconds, aligned.seconds);
}

TEST(PipelineStages, RunningJobsOnTheUplinksSlowTheBoundaryAndAreReported) {
  Fabric f = make_synthetic("nvl72:racks=2,oversub=2");
  PathIndex index(f);
  BackgroundLoad running;
  for (LinkId e : f.cables()) {
    const Link& l = f.link(e);
    if (f.node(l.end_a).kind == NodeKind::Switch && f.node(l.end_b).kind == NodeKind::Switch)
      running.add(l.id, kCableGbps / 2);
  }
  PipelineEstimate p = estimate_pipeline(index, hosts(f, {{0, 36}}), stages(4), running);
  EXPECT_FALSE(p.boundaries[0].shares_with_running);
  EXPECT_TRUE(p.boundaries[1].shares_with_running);
  EXPECT_FALSE(p.boundaries[2].shares_with_running);
  EXPECT_NEAR(p.boundaries[1].forward_s, one_way(kCableGbps / 2, 3 * kSwitchS), 1e-9);
  EXPECT_NEAR(p.boundaries[0].forward_s, one_way(kNvlinkGbps, kNvlinkStepS), 1e-12);
}

TEST(PipelineStages, StagesThatDoNotDivideTheHostsOrZeroAreRefused) {
  Fabric f = make_synthetic("nvl72:racks=2");
  PathIndex index(f);
  auto message = [&](int s, double bytes) {
    try {
      estimate_pipeline(index, hosts(f, {{0, 18}}), {s, bytes, 4});
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(5, kActivation), "5 pipeline stages do not divide the 18 hosts");
  EXPECT_EQ(message(0, kActivation), "0 pipeline stages: need at least one");
  EXPECT_EQ(message(2, 0), "activation size 0 bytes: must be positive");
  // One stage: no boundary, nothing to send.
  PipelineEstimate one = estimate_pipeline(index, hosts(f, {{0, 18}}), stages(1));
  EXPECT_TRUE(one.boundaries.empty());
  EXPECT_EQ(one.seconds, 0);
}

}  // namespace
}  // namespace topo
