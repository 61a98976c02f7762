// The estimate: textbook results on non-blocking fabrics, contention that
// the bottleneck predicts exactly, degraded and loaded links, PXN, NCCL's
// protocol choice, and the errors.
#include "comm_model/estimate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "fabric/synthetic.h"

namespace topo {
namespace {

constexpr double kGbps = 1e9 / 8;  // bytes per second in one Gb/s

// The textbook alpha-beta model: no protocol overheads, 2 us per step between
// hosts, 0.5 us inside them, no switch latency, the full line rate.
ModelOptions textbook() {
  ModelOptions o;
  o.nccl_tuning = false;
  o.alpha_us = 2;
  o.nvlink_alpha_us = 0.5;
  o.switch_latency_us = 0;
  o.network_efficiency = 1;
  return o;
}

std::vector<NodeId> named(const Fabric& f, int first, int count) {
  std::vector<std::string> names;
  for (int i = first; i < first + count; ++i) names.push_back(fmt::format("gpu{:03}", i));
  return find_hosts(f, names);
}

Request request(Collective c, double bytes, int gpus_per_host = 1) {
  Request r;
  r.collective = c;
  r.bytes = bytes;
  r.gpus_per_host = gpus_per_host;
  return r;
}

void expect_close(double actual, double expected) { EXPECT_NEAR(actual, expected, expected * 1e-12); }

LinkId cable_at(const Fabric& f, std::string_view name, int port) {
  NodeId s = *f.find(name);
  for (auto e : boost::make_iterator_range(boost::out_edges(s, f.graph())))
    if (f.local_port(e, s) == port) return e;
  throw std::runtime_error("no such cable");
}

class CommModelTextbook : public ::testing::Test {
 protected:
  // Non-blocking: 8 uplinks per leaf for 8 hosts.
  Fabric fabric = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2");
  PathIndex index{fabric};
  const double S = 1 << 30;
  const double B = 400 * kGbps;
  const double alpha = 2e-6;
  // Any order is non-blocking here; a shuffled one shows it.
  std::vector<NodeId> hosts = [this] {
    auto h = named(fabric, 1, 32);
    std::shuffle(h.begin(), h.end(), std::mt19937(7));
    return h;
  }();
  const int N = 32;
};

TEST_F(CommModelTextbook, RingAllReduce) {
  ModelOptions o = textbook();
  o.algorithm = Algorithm::Ring;
  Estimate e = estimate(index, hosts, request(Collective::AllReduce, S), {}, o);
  expect_close(e.time_s, 2.0 * (N - 1) / N * S / B + 2 * (N - 1) * alpha);
  expect_close(e.latency_s, 2 * (N - 1) * alpha);
  expect_close(e.busbw_gbps, 2.0 * (N - 1) / N * S * 8 / e.time_s / 1e9);
  EXPECT_EQ(e.algorithm, Algorithm::Ring);
  EXPECT_EQ(e.protocol, Protocol::Simple);
  expect_close(e.ideal_time_s, e.time_s);
  EXPECT_EQ(e.bottleneck.where, Bottleneck::Where::Cable);
  EXPECT_DOUBLE_EQ(e.bottleneck.flows, 1);
  EXPECT_DOUBLE_EQ(e.bottleneck.share_gbps, 400);
}

TEST_F(CommModelTextbook, AllGatherAndReduceScatter) {
  for (Collective c : {Collective::AllGather, Collective::ReduceScatter}) {
    ModelOptions o = textbook();
    o.algorithm = Algorithm::Ring;
    Estimate e = estimate(index, hosts, request(c, S), {}, o);
    expect_close(e.time_s, (N - 1.0) / N * S / B + (N - 1) * alpha);
    expect_close(e.busbw_gbps, (N - 1.0) / N * S * 8 / e.time_s / 1e9);
  }
}

TEST_F(CommModelTextbook, BroadcastPipelinesDownAChain) {
  Estimate e = estimate(index, hosts, request(Collective::Broadcast, S), {}, textbook());
  expect_close(e.time_s, S / B + (N - 1) * alpha);
  expect_close(e.busbw_gbps, e.algbw_gbps);
}

TEST_F(CommModelTextbook, TreeHasLogarithmicSteps) {
  ModelOptions o = textbook();
  o.algorithm = Algorithm::Tree;
  Estimate e = estimate(index, hosts, request(Collective::AllReduce, S), {}, o);
  // Half the data per tree; an inner node sends its half to two children and
  // its parent, and as a leaf of the other tree the other half up: 2S in all.
  const int depth = 5;  // ceil(log2 32)
  expect_close(e.time_s, 2 * S / B + 2 * depth * alpha);
  EXPECT_EQ(e.algorithm, Algorithm::Tree);
  Estimate small = estimate(index, hosts, request(Collective::AllReduce, 4096), {}, textbook());
  EXPECT_EQ(small.algorithm, Algorithm::Tree);  // 10 steps beat 62 when latency rules
}

TEST_F(CommModelTextbook, AllToAll) {
  ModelOptions o = textbook();
  o.alpha_us = 0;
  Estimate e = estimate(index, hosts, request(Collective::AllToAll, S), {}, o);
  expect_close(e.time_s, (N - 1.0) / N * S / B);
  EXPECT_EQ(e.algorithm, Algorithm::Direct);
  expect_close(e.busbw_gbps, 400);
}

TEST_F(CommModelTextbook, HierarchicalOnOneGpuPerHostIsTheRing) {
  ModelOptions o = textbook();
  o.algorithm = Algorithm::Hierarchical;
  Estimate e = estimate(index, hosts, request(Collective::AllReduce, S), {}, o);
  expect_close(e.time_s, 2.0 * (N - 1) / N * S / B + 2 * (N - 1) * alpha);
}

TEST(CommModelGpus, RingWithEightGpusAndEightRailsPerHost) {
  Fabric f = make_synthetic("railopt:hosts=16,rails=8,spines=2");
  PathIndex index(f);
  auto hosts = named(f, 1, 16);
  const int N = 16, G = 8, n = N * G;
  const double S = 1 << 30;
  ModelOptions o = textbook();
  o.algorithm = Algorithm::Ring;
  o.nvlink_gbps = 2400;
  Estimate e = estimate(index, hosts, request(Collective::AllReduce, S, G), {}, o);
  double edge = 2.0 * (n - 1) / n * S;
  double net = edge / G / (400 * kGbps);               // each rail carries an eighth
  double nvl = edge * (G - 1.0) / G / (2400 * kGbps);  // the other hops of the ring
  double lat = 2 * (N - 1) * 2e-6 + (2 * (n - 1) - 2 * (N - 1)) * 0.5e-6;
  expect_close(e.time_s, std::max(net, nvl) + lat);
  EXPECT_EQ(e.bottleneck.where, Bottleneck::Where::NvLink);
  o.nvlink_gbps = 1e6;
  e = estimate(index, hosts, request(Collective::AllReduce, S, G), {}, o);
  expect_close(e.time_s, net + lat);
  EXPECT_EQ(e.bottleneck.where, Bottleneck::Where::Cable);
}

// A 2:1 leaf (8 hosts, 4 uplinks) crossed by k flows each way: every uplink
// carries k/4 of a flow, so a flow gets min(400, 4 x 400 / k) Gb/s.
TEST(CommModelContention, OversubscribedLeafSlowsByTheBottleneckShare) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=8,spines=2,oversub=2");
  PathIndex index(f);
  const double S = 1 << 30;
  const int N = 16;
  ModelOptions o = textbook();
  o.alpha_us = 0;
  o.algorithm = Algorithm::Ring;
  for (int k : {1, 2, 4, 8}) {
    // k blocks per leaf, alternating: the ring leaves each leaf k times.
    std::vector<NodeId> order;
    auto left = named(f, 1, 8), right = named(f, 9, 8);
    for (int block = 0; block < k; ++block) {
      for (int i = block * 8 / k; i < (block + 1) * 8 / k; ++i) order.push_back(left[i]);
      for (int i = block * 8 / k; i < (block + 1) * 8 / k; ++i) order.push_back(right[i]);
    }
    Estimate e = estimate(index, order, request(Collective::AllReduce, S), {}, o);
    double per_flow = std::min(400.0, 4 * 400.0 / k);
    expect_close(e.time_s, 2.0 * (N - 1) / N * S / (per_flow * kGbps));
    if (k > 4) {
      EXPECT_NE(e.bottleneck.name.find("spine"), std::string::npos) << e.bottleneck.name;
      EXPECT_DOUBLE_EQ(e.bottleneck.flows, k / 4.0);
      EXPECT_DOUBLE_EQ(e.bottleneck.share_gbps, per_flow);
      EXPECT_GT(e.time_s, e.ideal_time_s);
    }
  }
}

int most_crossings(const Fabric& f, const std::vector<NodeId>& order) {
  std::map<NodeId, int> out;
  for (size_t i = 0; i < order.size(); ++i) {
    NodeId a = f.leaves_of(order[i]).front(), b = f.leaves_of(order[(i + 1) % order.size()]).front();
    if (a != b) ++out[a];
  }
  int most = 0;
  for (auto [leaf, n] : out) most = std::max(most, n);
  return most;
}

TEST(CommModelContention, LeafByLeafRingBeatsRandomOrders) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  PathIndex index(f);
  auto ordered = named(f, 1, 32);
  Request r = request(Collective::AllReduce, 1 << 30);
  ModelOptions o;
  o.algorithm = Algorithm::Ring;
  double leaf_by_leaf = estimate(index, ordered, r, {}, o).time_s;
  int slower = 0;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    auto shuffled = ordered;
    std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(seed));
    double t = estimate(index, shuffled, r, {}, o).time_s;
    EXPECT_GE(t, leaf_by_leaf * (1 - 1e-12));
    // More than 4 flows out of a leaf with 4 uplinks must cost time.
    if (most_crossings(f, shuffled) > 4) {
      EXPECT_GT(t, leaf_by_leaf * 1.01) << "seed " << seed;
      ++slower;
    }
  }
  EXPECT_GT(slower, 10);
}

// Alternating leaves on a non-blocking fabric put exactly one flow on every
// uplink; a 1x cable among them carries its flow at a quarter of the rate.
TEST(CommModelContention, DegradedUplinkSlowsByItsRate) {
  const std::string spec = "leafspine:leaves=2,hosts_per_leaf=8,spines=2";
  Fabric healthy = make_synthetic(spec), degraded = make_synthetic(spec + ",degrade=leaf02:9");
  PathIndex hi(healthy), di(degraded);
  auto alternate = [](const Fabric& f) {
    std::vector<std::string> names;
    for (int i = 1; i <= 8; ++i) {
      names.push_back(fmt::format("gpu{:03}", i));
      names.push_back(fmt::format("gpu{:03}", i + 8));
    }
    return find_hosts(f, names);
  };
  Request r = request(Collective::AllReduce, 1 << 30);
  ModelOptions o = textbook();
  o.algorithm = Algorithm::Ring;
  Estimate a = estimate(hi, alternate(healthy), r, {}, o);
  Estimate b = estimate(di, alternate(degraded), r, {}, o);
  expect_close((b.time_s - b.latency_s) / (a.time_s - a.latency_s), 400.0 / 100.0);
  EXPECT_NE(b.bottleneck.name.find("leaf02:9"), std::string::npos) << b.bottleneck.name;
  EXPECT_DOUBLE_EQ(b.bottleneck.gbps, 100);
  // The fault lies outside a ring that stays on leaf01.
  Estimate c = estimate(di, named(degraded, 1, 8), r, {}, o);
  Estimate d = estimate(hi, named(healthy, 1, 8), r, {}, o);
  expect_close(c.time_s, d.time_s);
}

TEST(CommModelContention, BackgroundLoadLeavesLessForThisJob) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=8,spines=2");
  PathIndex index(f);
  std::vector<std::string> names;
  for (int i = 1; i <= 8; ++i) {
    names.push_back(fmt::format("gpu{:03}", i));
    names.push_back(fmt::format("gpu{:03}", i + 8));
  }
  auto order = find_hosts(f, names);
  Request r = request(Collective::AllReduce, 1 << 30);
  ModelOptions o = textbook();
  o.algorithm = Algorithm::Ring;
  Estimate quiet = estimate(index, order, r, {}, o);
  BackgroundLoad bg;
  bg.add(f.link(cable_at(f, "leaf01", 12)).id, 200);  // another job uses half of one uplink
  Estimate busy = estimate(index, order, r, bg, o);
  expect_close((busy.time_s - busy.latency_s) / (quiet.time_s - quiet.latency_s), 2.0);
  expect_close(busy.ideal_time_s, quiet.ideal_time_s);
  EXPECT_NE(busy.bottleneck.name.find("leaf01:12"), std::string::npos) << busy.bottleneck.name;
  // A cable with no room left stops the collective.
  BackgroundLoad full;
  full.add(f.link(cable_at(f, "leaf01", 12)).id, 400);
  EXPECT_TRUE(std::isinf(estimate(index, order, r, full, o).time_s));
}

TEST(CommModelPxn, RailHopOverNvlinkKeepsAllToAllOffTheSpines) {
  // One leaf per rail, 2:1 towards the spines: cross-rail traffic is costly.
  Fabric f = make_synthetic("railopt:hosts=16,rails=4,spines=2,oversub=2");
  PathIndex index(f);
  auto hosts = named(f, 1, 16);
  Request r = request(Collective::AllToAll, 1 << 30, 4);
  ModelOptions on, off;
  on.pxn = Pxn::On;
  off.pxn = Pxn::Off;
  Estimate with = estimate(index, hosts, r, {}, on), without = estimate(index, hosts, r, {}, off);
  EXPECT_TRUE(with.pxn);
  EXPECT_FALSE(without.pxn);
  EXPECT_LT(with.time_s, without.time_s);
  EXPECT_NE(without.bottleneck.name.find("spine"), std::string::npos) << without.bottleneck.name;
  EXPECT_EQ(with.bottleneck.name.find("spine"), std::string::npos) << with.bottleneck.name;
  Estimate best = estimate(index, hosts, r);
  EXPECT_TRUE(best.pxn);
  EXPECT_DOUBLE_EQ(best.time_s, with.time_s);
  // One GPU per host has nothing to hop over.
  EXPECT_FALSE(estimate(index, hosts, request(Collective::AllToAll, 1 << 30, 1), {}, on).pxn);
}

TEST(CommModelNcclTuning, SmallMessagesPickLowLatencyProtocols) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2");
  PathIndex index(f);
  auto hosts = named(f, 1, 16);
  Estimate small = estimate(index, hosts, request(Collective::AllReduce, 1024, 8));
  Estimate large = estimate(index, hosts, request(Collective::AllReduce, double(1ull << 33), 8));
  EXPECT_EQ(small.protocol, Protocol::LL);
  EXPECT_EQ(large.protocol, Protocol::Simple);
  EXPECT_GT(small.latency_s, 10e-6);
  EXPECT_LT(small.time_s, large.time_s);
  ModelOptions forced;
  forced.protocol = Protocol::LL;
  forced.algorithm = Algorithm::Ring;
  Estimate ll = estimate(index, hosts, request(Collective::AllReduce, double(1ull << 33), 8), {}, forced);
  // LL moves a quarter of the wire rate, and tops out at 20.4 GB/s bus bandwidth across 4+ hosts.
  EXPECT_LE(ll.busbw_gbps, 20.4 * 8 * (1 + 1e-9));
  EXPECT_GT(ll.time_s, large.time_s * 3);
}

TEST(CommModelErrors, BadInputIsNamed) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=1,unplug=leaf01:1");
  PathIndex index(f);
  try {
    std::vector<std::string> names = {"gpu002", "nope1", "gpu003", "nope2"};
    find_hosts(f, names);
    FAIL();
  } catch (const FabricError& e) {
    EXPECT_NE(std::string(e.what()).find("nope1, nope2"), std::string::npos) << e.what();
  }
  auto two = named(f, 2, 2);
  std::vector<NodeId> twice = {two[0], two[1], two[0]};
  EXPECT_THROW(estimate(index, twice, request(Collective::AllReduce, 1024)), std::invalid_argument);
  std::vector<NodeId> not_host = {two[0], *f.find("leaf01")};
  EXPECT_THROW(estimate(index, not_host, request(Collective::AllReduce, 1024)), std::invalid_argument);
  ModelOptions tree;
  tree.algorithm = Algorithm::Tree;
  EXPECT_THROW(estimate(index, two, request(Collective::AllGather, 1024), {}, tree), std::invalid_argument);
  EXPECT_THROW(estimate(index, two, request(Collective::AllReduce, 1023)), std::invalid_argument);
  EXPECT_THROW(estimate(index, two, request(Collective::AllReduce, -4)), std::invalid_argument);
  EXPECT_THROW(estimate(index, two, request(Collective::AllReduce, 1024, 0)), std::invalid_argument);
  try {
    estimate(index, named(f, 1, 3), request(Collective::AllReduce, 1024));
    FAIL();
  } catch (const FabricError& e) {
    EXPECT_NE(std::string(e.what()).find("gpu001"), std::string::npos) << e.what();
  }
}

TEST(CommModelErrors, FewerThanTwoRanksCostNothing) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=1");
  PathIndex index(f);
  Estimate e = estimate(index, named(f, 1, 1), request(Collective::AllReduce, 1 << 20));
  EXPECT_EQ(e.time_s, 0);
  EXPECT_EQ(e.ranks, 1);
  // One host with eight GPUs runs over NVLink only.
  Estimate g = estimate(index, named(f, 1, 1), request(Collective::AllReduce, 1 << 30, 8));
  EXPECT_GT(g.time_s, 0);
  EXPECT_EQ(g.bottleneck.where, Bottleneck::Where::NvLink);
}

}  // namespace
}  // namespace topo
