// A running ring's demand per directed cable (ring_demand), worked by hand
// on the textbook model: a two-host ring AllReduce across two leaves.
#include "comm_model/ring_demand.h"

#include <gtest/gtest.h>

#include "fabric/synthetic.h"
#include "routing/route.h"

namespace topo {
namespace {

// Two leaves of 8 hosts, 4 uplinks each (ports 9-12, two to each spine),
// every cable 400 Gb/s; adaptive routing spreads a flow evenly over them.
constexpr const char* kSpec = "leafspine:leaves=2,hosts_per_leaf=8,spines=2,oversub=2";

// 2 us a ring step, no switch latency, the full line rate.
ModelOptions textbook() {
  ModelOptions o;
  o.nccl_tuning = false;
  o.algorithm = Algorithm::Ring;
  o.alpha_us = 2;
  o.switch_latency_us = 0;
  o.network_efficiency = 1;
  return o;
}

int directed(const Fabric& f, std::string_view from, int port) {
  NodeId n = *f.find(from);
  return directed_cable(f.link(f.cable_at(n, port).value()), n);
}

// The directed cable from a host's HCA to its leaf (`up`) or back.
int host_cable(const Fabric& f, std::string_view host, bool up) {
  const NodeId hca = f.hcas_of(*f.find_host(host)).front();
  const Link& l = f.link(f.cable_at(hca, 1).value());
  return directed_cable(l, up ? hca : (l.end_a == hca ? l.end_b : l.end_a));
}

// The demand's Gb/s on a directed cable; -1 when it lists no such cable.
double gbps_on(const RingDemand& d, int cable) {
  for (auto [c, g] : d.gbps)
    if (c == cable) return g;
  return -1;
}

class RingDemandByHand : public ::testing::Test {
 protected:
  Fabric fabric = make_synthetic(kSpec);
  PathIndex index{fabric};
  std::vector<NodeId> ring = {*fabric.find_host("gpu001"), *fabric.find_host("gpu009")};
  // 1 GiB, one GPU a host: N = 2 ranks, so each ring edge carries
  // 2 (N-1)/N x 1 GiB = 1 GiB a run, and the run takes 1 GiB at 400 Gb/s
  // plus two steps of 2 us.
  const Request request{Collective::AllReduce, 1 << 30, Dtype::Bf16, 1};
  const double bits = 8.0 * (1 << 30);
  const double run_s = bits / 400e9 + 2 * 2e-6;  // 0.021478836 s
};

TEST_F(RingDemandByHand, AHostCableCarriesAnEdgeAnUplinkAQuarterOfIt) {
  ASSERT_EQ(fabric.link(fabric.cable_at(*fabric.find("leaf01"), 9).value()).gbps(), 400);
  const RingDemand half = ring_demand(index, ring, request, 0.5, textbook());
  EXPECT_NEAR(half.alone_s, run_s, 1e-15);
  EXPECT_TRUE(half.paced());
  // Each way: the sender's own cable, its leaf's 4 uplinks, the spines' 4
  // cables down to the other leaf, the receiver's cable.
  ASSERT_EQ(half.gbps.size(), 20u);
  for (size_t i = 1; i < half.gbps.size(); ++i) EXPECT_LT(half.gbps[i - 1].first, half.gbps[i].first);
  // A whole edge over the run at half duty: 8.589934592 Gb / 0.021478836 s
  // / 2 = 199.9628 Gb/s, just under half the line rate by the two steps.
  const double edge_gbps = bits / 1e9 / run_s * 0.5;
  EXPECT_NEAR(edge_gbps, 199.9628, 1e-4);
  auto on = [&](int cable) { return gbps_on(half, cable); };
  EXPECT_NEAR(on(host_cable(fabric, "gpu001", true)), edge_gbps, 1e-9);
  EXPECT_NEAR(on(host_cable(fabric, "gpu009", false)), edge_gbps, 1e-9);
  for (int port = 9; port <= 12; ++port) EXPECT_NEAR(on(directed(fabric, "leaf01", port)), edge_gbps / 4, 1e-9);
  double sum = 0;
  for (auto [c, g] : half.gbps) sum += g;
  EXPECT_NEAR(sum, 2 * (1 + 4 * 0.25 + 4 * 0.25 + 1) * edge_gbps, 1e-9);

  // The rate is linear in the duty: a job always in collectives asks twice.
  const RingDemand whole = ring_demand(index, ring, request, 1, textbook());
  ASSERT_EQ(whole.gbps.size(), half.gbps.size());
  for (size_t i = 0; i < whole.gbps.size(); ++i) EXPECT_DOUBLE_EQ(whole.gbps[i].second, 2 * half.gbps[i].second);
}

TEST_F(RingDemandByHand, ABroadcastChainLoadsOneWayOnly) {
  // A chain of two: gpu001 sends gpu009 the whole 1 GiB, one step of 2 us:
  // 8.589934592 Gb / 0.021476836 s = 399.9628 Gb/s at full duty.
  Request broadcast = request;
  broadcast.collective = Collective::Broadcast;
  const RingDemand d = ring_demand(index, ring, broadcast, 1, textbook());
  EXPECT_NEAR(d.alone_s, bits / 400e9 + 2e-6, 1e-15);
  ASSERT_EQ(d.gbps.size(), 10u);  // gpu001 to gpu009, nothing back
  EXPECT_NEAR(gbps_on(d, host_cable(fabric, "gpu001", true)), 399.9628, 1e-4);
  EXPECT_NEAR(gbps_on(d, host_cable(fabric, "gpu009", false)), 399.9628, 1e-4);
  EXPECT_EQ(gbps_on(d, host_cable(fabric, "gpu009", true)), -1);
}

TEST_F(RingDemandByHand, ALoneHostHasNoPaceAndLoadsNothing) {
  const std::vector<NodeId> one = {ring[0]};
  const RingDemand d = ring_demand(index, one, request, 1, textbook());
  EXPECT_EQ(d.alone_s, 0);
  EXPECT_FALSE(d.paced());
  EXPECT_TRUE(d.gbps.empty());
}

TEST_F(RingDemandByHand, AHostListedTwiceThrowsLikeTheEstimate) {
  const std::vector<NodeId> twice = {ring[0], ring[0]};
  EXPECT_THROW(ring_demand(index, twice, request, 1, textbook()), std::invalid_argument);
}

// A directed cable id names the cable (id / 2) and the end it leaves (even:
// Link::end_a): the load lands in that direction only.
TEST_F(RingDemandByHand, ADirectedCableLoadsTheDirectionItNames) {
  const NodeId leaf = *fabric.find("leaf01");
  const Link& uplink = fabric.link(fabric.cable_at(leaf, 9).value());
  const NodeId spine = uplink.end_a == leaf ? uplink.end_b : uplink.end_a;
  BackgroundLoad load;
  add_directed(fabric, directed_cable(uplink, leaf), 3.0, load);
  add_directed(fabric, directed_cable(uplink, spine), 1.5, load);
  add_directed(fabric, directed_cable(uplink, leaf), 0.25, load);
  ASSERT_EQ(load.entries().size(), 1u);
  const BackgroundLoad::Entry* e = load.find(uplink.id);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(uplink.end_a == leaf ? e->from_a_gbps : e->from_b_gbps, 3.25);
  EXPECT_EQ(uplink.end_a == leaf ? e->from_b_gbps : e->from_a_gbps, 1.5);
  EXPECT_THROW(add_directed(fabric, directed_cable(uplink, leaf), -1.0, load), std::invalid_argument);
}

}  // namespace
}  // namespace topo
