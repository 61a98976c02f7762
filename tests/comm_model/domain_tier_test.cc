// The NVLink domain tier: a job inside one NVL72 domain runs at NVLink
// speed, one split over domains pays for the scale-out, and the network
// phase is the comm_model's own estimate on the real routes.
#include "comm_model/domain_tier.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fabric/synthetic.h"

namespace topo {
namespace {

std::vector<NodeId> hosts(const Fabric& f, int first, int count) {
  std::vector<NodeId> out;
  for (int i = first; i < first + count; ++i) out.push_back(*f.find_host(fmt::format("gpu{:03}", i + 1)));
  return out;
}

Request allreduce(double bytes = 1024.0 * 1024 * 1024) { return {Collective::AllReduce, bytes, Dtype::Fp32, 4}; }

TEST(DomainTier, AJobInsideOneDomainRunsAtNcclsNvlinkRate) {
  Fabric f = make_synthetic("nvl72:racks=2,oversub=2");
  PathIndex index(f);
  DomainEstimate d = estimate_with_domains(index, hosts(f, 0, 18), allreduce());
  EXPECT_EQ(d.groups, 1);
  EXPECT_NEAR(d.nvlink_gbps, 900 * 8 * 0.802, 1e-9);
  // A ring's bus bandwidth is the per-GPU rate, less the step latencies
  // (142 of them over 72 ranks: 5% of a 1 GiB AllReduce).
  EXPECT_GT(d.estimate.busbw_gbps, 0.93 * d.nvlink_gbps);
  EXPECT_LE(d.estimate.busbw_gbps, d.nvlink_gbps);
  EXPECT_EQ(d.estimate.bottleneck.where, Bottleneck::Where::NvLink);
  EXPECT_FALSE(d.network);
}

TEST(DomainTier, SplittingAGroupOverTwoDomainsCostsTheScaleOut) {
  Fabric f = make_synthetic("nvl72:racks=2,oversub=2");
  PathIndex index(f);
  DomainEstimate one = estimate_with_domains(index, hosts(f, 0, 16), allreduce());
  std::vector<NodeId> split = hosts(f, 10, 16);  // 8 in rack 1, 8 in rack 2
  DomainEstimate two = estimate_with_domains(index, split, allreduce());
  EXPECT_EQ(two.groups, 2);
  ASSERT_TRUE(two.network);
  EXPECT_GT(two.network_s, 0);
  EXPECT_GT(two.estimate.time_s, 1.05 * one.estimate.time_s);
  // Hierarchical beats a flat ring over the network between the same hosts.
  Estimate flat = estimate(index, split, allreduce());
  EXPECT_LT(two.estimate.time_s, flat.time_s);
}

TEST(DomainTier, AShardThatIsNoWholeNumberOfElementsIsRoundedNotRefused) {
  Fabric f = make_synthetic("nvl72:racks=2");
  PathIndex index(f);
  // 36 hosts over two domains: 72 ranks a domain, 1 GiB / 72 is no whole
  // number of fp32 elements.
  DomainEstimate d = estimate_with_domains(index, hosts(f, 0, 36), allreduce());
  EXPECT_EQ(d.groups, 2);
  EXPECT_GT(d.estimate.busbw_gbps, 0);
}

TEST(DomainTier, GroupsAreDomainsAndLoneHostsInOrderOfFirstAppearance) {
  Fabric f = make_synthetic("nvl72:racks=2,hgx=2");
  std::vector<NodeId> mix = {*f.find_host("gpu020"), *f.find_host("gpu037"), *f.find_host("gpu001"),
                             *f.find_host("gpu021"), *f.find_host("gpu038")};
  DomainGroups g = group_by_domain(f, mix);
  ASSERT_EQ(g.count(), 4u);
  EXPECT_EQ(g.hosts[0].size(), 2u);
  EXPECT_EQ(g.domain[1], -1);
  EXPECT_EQ(g.domain[2], 0);
  std::vector<NodeId> ring = interleave_groups(g);
  EXPECT_EQ(ring[0], mix[0]);
  EXPECT_EQ(ring[1], mix[1]);
  EXPECT_EQ(ring[4], mix[3]);
}

TEST(DomainTier, AllToAllPaysTheNetworkOnlyForPairsAcrossDomains) {
  Fabric f = make_synthetic("nvl72:racks=2,oversub=2");
  PathIndex index(f);
  Request a2a{Collective::AllToAll, 256.0 * 1024 * 1024, Dtype::Fp16, 4};
  DomainEstimate inside = estimate_with_domains(index, hosts(f, 0, 8), a2a);
  DomainEstimate across = estimate_with_domains(index, hosts(f, 14, 8), a2a);
  EXPECT_GT(across.estimate.time_s, 2 * inside.estimate.time_s);
}

TEST(DomainTier, AFabricWithoutDomainsIsThePlainEstimate) {
  Fabric f = make_synthetic("railopt:hosts=8,rails=4,spines=2");
  PathIndex index(f);
  std::vector<NodeId> all(f.hosts().begin(), f.hosts().end());
  DomainEstimate d = estimate_with_domains(index, all, allreduce());
  EXPECT_DOUBLE_EQ(d.estimate.time_s, estimate(index, all, allreduce()).time_s);
}

}  // namespace
}  // namespace topo
