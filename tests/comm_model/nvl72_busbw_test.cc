// The domain tier against published NCCL bus bandwidth on GB200 NVL72
// (docs/placement.md, "How close to NCCL on NVL72").
//
// CoreWeave's figures: github.com/coreweave/nccl-tests README, "Expected
// Performance" / GB200 (added in commit bee97e7): all_reduce_perf, float
// sum, out-of-place, NCCL 2.26.2, NCCL_MNNVL_ENABLE=1, the algorithm NCCL's
// own choice, 4 GPUs a tray, InfiniBand scale-out. The synthetic fabric
// matches it as far as it is known: one 400 Gb/s HCA a GPU (rails=4,
// 4xNDR), a non-blocking scale-out (oversub=1).
//
// The tier prices NVLink as a ring at NCCL's per-GPU rate; inside a rack
// NCCL runs NVLS (the NVSwitch reduces), which passes the ring's bound, so
// the model sits below there. Every case the model is within kTolerance
// of is pinned to it, so a model change that drifts away fails; the case
// it misses (20 racks) is pinned to the hand calculation instead.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "comm_model/domain_tier.h"
#include "fabric/synthetic.h"

namespace topo {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
// The model's busbw against a published figure: within 25% either way.
constexpr double kTolerance = 0.25;
// NCCL's NVLink 5 rate the tier uses (domain_tier.h), in bytes/s.
constexpr double kNvlinkBytesPerS = 900e9 * 0.802;

std::vector<NodeId> trays(const Fabric& f, std::span<const int> numbers) {
  std::vector<NodeId> out;
  for (int i : numbers) out.push_back(*f.find_host(fmt::format("gpu{:03}", i)));
  return out;
}

// An AllReduce of `bytes` fp32 on the given trays of `racks` NVL72 racks.
DomainEstimate allreduce_on(int racks, std::span<const int> numbers, double bytes) {
  Fabric f = make_synthetic(fmt::format("nvl72:racks={},oversub=1", racks));
  PathIndex index(f);
  return estimate_with_domains(index, trays(f, numbers), {Collective::AllReduce, bytes, Dtype::Fp32, 4});
}

// Every tray of `racks` whole racks.
DomainEstimate whole_racks(int racks, double bytes) {
  std::vector<int> all(18 * racks);
  for (int i = 0; i < 18 * racks; ++i) all[i] = i + 1;
  return allreduce_on(racks, all, bytes);
}

// The first `each` trays of each of three racks: three NVLink partitions
// that meet over the scale-out only.
DomainEstimate three_partitions(int each) {
  std::vector<int> numbers;
  for (int rack = 0; rack < 3; ++rack)
    for (int t = 0; t < each; ++t) numbers.push_back(18 * rack + t + 1);
  return allreduce_on(3, numbers, 16 * kGiB);
}

// nccl-tests' busbw, GB/s.
double busbw(const DomainEstimate& d) { return d.estimate.busbw_gbps / 8; }

void expect_within_tolerance(const DomainEstimate& d, double published) {
  double ratio = busbw(d) / published;
  ::testing::Test::RecordProperty("model_busbw", fmt::format("{:.1f}", busbw(d)));
  ::testing::Test::RecordProperty("model_over_published", fmt::format("{:.3f}", ratio));
  EXPECT_GT(ratio, 1 - kTolerance) << busbw(d) << " GB/s against " << published;
  EXPECT_LT(ratio, 1 + kTolerance) << busbw(d) << " GB/s against " << published;
}

TEST(Nvl72Busbw, OneRackIsTheRingAtNcclsNvlinkRateByHand) {
  // 72 ranks, 4 GiB: a ring moves 2(n-1)/n of the buffer over each GPU's
  // NVLink, plus 2(n-1) steps of 1 us.
  const double n = 72, bytes = 4 * kGiB;
  const double moved = 2 * (n - 1) / n * bytes;
  const double by_hand = moved / (moved / kNvlinkBytesPerS + 2 * (n - 1) * 1e-6) / 1e9;
  DomainEstimate d = whole_racks(1, bytes);
  EXPECT_EQ(d.groups, 1);
  EXPECT_NEAR(busbw(d), by_hand, 1e-6 * by_hand);  // 713.2 GB/s
}

TEST(Nvl72Busbw, OneRackIsWithinToleranceOfCoreWeavesFigure) {
  // Published: 72 GPUs, 4 GiB, busbw 839.16 GB/s (NVLS: above the ring).
  expect_within_tolerance(whole_racks(1, 4 * kGiB), 839.16);
}

TEST(Nvl72Busbw, TwoRacksAreWithinToleranceOfCoreWeavesFigure) {
  // Published: 144 GPUs, 16 GiB, busbw 810.41 GB/s.
  DomainEstimate d = whole_racks(2, 16 * kGiB);
  EXPECT_EQ(d.groups, 2);
  expect_within_tolerance(d, 810.41);
}

TEST(Nvl72Busbw, TwentyRacksAreTheHandCalculationAndMissCoreWeavesFigure) {
  const double n = 1440, m = 72, bytes = 16 * kGiB;
  DomainEstimate d = whole_racks(20, bytes);
  EXPECT_EQ(d.groups, 20);
  // Reduce-scatter and all-gather inside each rack, (m-1)/m of the buffer
  // each and m-1 steps, then the network phase the comm_model estimates.
  const double nvlink_s = 2 * ((m - 1) / m * bytes / kNvlinkBytesPerS + (m - 1) * 1e-6);
  EXPECT_NEAR(d.nvlink_s, nvlink_s, 1e-9);
  ASSERT_GT(d.network_s, 0);
  const double by_hand = 2 * (n - 1) / n * bytes / (nvlink_s + d.network_s) / 1e9;
  EXPECT_NEAR(busbw(d), by_hand, 1e-6 * by_hand);  // 582.4 GB/s
  // Published: 1440 GPUs, 16 GiB, busbw 405.74 GB/s. The model misses it
  // (1.44 times): it sees nothing that slows NCCL at this scale.
  RecordProperty("model_over_published", fmt::format("{:.3f}", busbw(d) / 405.74));
  EXPECT_GT(busbw(d) / 405.74, 1 + kTolerance);
}

// github.com/NVIDIA/nccl/issues/1801: GB200 NVL72, NCCL 2.27.3,
// NCCL_NVLS_ENABLE=0, three NVLink partitions on three racks (they meet
// over InfiniBand only), 16 GiB, NCCL's default there (ring). The HCAs are
// not given; one 400 Gb/s HCA a GPU is assumed.
TEST(Nvl72Busbw, ThreeOneTrayPartitionsAreWithinToleranceOfNcclsRing) {
  // Published: 12 GPUs (3 x 4), busbw 196.72 GB/s.
  DomainEstimate d = three_partitions(1);
  EXPECT_EQ(d.groups, 3);
  expect_within_tolerance(d, 196.72);
}

TEST(Nvl72Busbw, ThreeTwoTrayPartitionsAreWithinToleranceOfNcclsRing) {
  // Published: 24 GPUs (3 x 8), busbw 393.66 GB/s.
  DomainEstimate d = three_partitions(2);
  EXPECT_EQ(d.groups, 3);
  expect_within_tolerance(d, 393.66);
}

}  // namespace
}  // namespace topo
