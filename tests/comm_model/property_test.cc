// Properties over random allocations on synthetic fabrics: an estimate is
// never below the ideal bound, an extra spine crossing never makes a ring
// faster, and host names play no part.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <span>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "comm_model/double_binary_tree.h"
#include "comm_model/estimate.h"
#include "fabric/synthetic.h"

namespace topo {
namespace {

const std::vector<std::string> kFabrics = {
    "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2",
    "leafspine:leaves=6,hosts_per_leaf=4,spines=2,oversub=2,degrade=leaf03:6",
    "clos3:pods=3,leaves_per_pod=2,hosts_per_leaf=4,oversub=2",
    "fattree:k=4",
    "railopt:hosts=16,rails=4,spines=2,hosts_per_leaf=8,oversub=2",
};

const std::vector<Collective> kCollectives = {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter,
                                              Collective::Broadcast, Collective::AllToAll};

std::vector<NodeId> random_hosts(const Fabric& f, std::mt19937& rng, int count) {
  std::vector<NodeId> all(f.hosts().begin(), f.hosts().end());
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(count);
  return all;
}

// The ideal is computed here from the hosts' own cables alone: a ring edge
// carries 2(n-1)/n of the buffer, and on a non-blocking fabric with no
// latencies nothing but the slowest sending port limits it.
double ideal_ring_seconds(const PathIndex& index, std::span<const NodeId> hosts, double bytes) {
  double slowest = 1e300;
  for (NodeId h : hosts) slowest = std::min(slowest, index.ports(index.host_index(h)).front().gbps * 0.96);
  const double n = static_cast<double>(hosts.size());
  return 2 * (n - 1) / n * bytes * 8 / (slowest * 1e9);
}

TEST(CommModelProperties, NeverBelowTheIdealBound) {
  std::mt19937 rng(11);
  ModelOptions ring;
  ring.nccl_tuning = false;
  ring.switch_latency_us = 0;
  ring.algorithm = Algorithm::Ring;
  ring.protocol = Protocol::Simple;
  for (const std::string& spec : kFabrics) {
    Fabric f = make_synthetic(spec);
    PathIndex index(f);
    for (int trial = 0; trial < 40; ++trial) {
      int N = std::uniform_int_distribution<int>(2, static_cast<int>(f.hosts().size()))(rng);
      int G = std::uniform_int_distribution<int>(1, 4)(rng);
      Request r;
      r.collective = kCollectives[trial % kCollectives.size()];
      r.bytes = 4.0 * std::uniform_int_distribution<int>(1, 1 << 26)(rng);
      r.gpus_per_host = G;
      auto hosts = random_hosts(f, rng, N);
      Estimate e = estimate(index, hosts, r);
      SCOPED_TRACE(fmt::format("{} N={} G={} {} {} bytes", spec, N, G, name(r.collective), r.bytes));
      EXPECT_GT(e.ideal_time_s, 0);
      if (G == 1) {
        // No GPU moves its bus bytes faster than its host's cables allow.
        double host_gbps = 1e300;
        for (NodeId h : hosts) {
          double sum = 0;
          for (const auto& p : index.ports(index.host_index(h))) sum += p.gbps;
          host_gbps = std::min(host_gbps, sum);
        }
        double bound = bus_factor(r.collective, N) * r.bytes * 8 / (host_gbps * 0.96 * 1e9);
        EXPECT_GE(e.time_s, bound * (1 - 1e-12));
        EXPECT_GE(e.ideal_time_s, bound * (1 - 1e-12));
        EXPECT_LE(e.busbw_gbps, host_gbps * 0.96 * (1 + 1e-12));
      }
      // A ring AllReduce of one GPU per host against the ideal computed here.
      Request ar{Collective::AllReduce, r.bytes, Dtype::Fp32, 1};
      Estimate re = estimate(index, hosts, ar, {}, ring);
      double ideal = ideal_ring_seconds(index, hosts, r.bytes);
      EXPECT_NEAR(re.ideal_time_s, ideal, ideal * 1e-12);
      EXPECT_GE(re.time_s, ideal * (1 - 1e-12));
    }
  }
}

// Replace a host whose ring neighbours share its leaf by a free host on
// another leaf: both of its ring edges now cross the spines.
TEST(CommModelProperties, AnotherSpineCrossingNeverHelps) {
  std::mt19937 rng(5);
  int checked = 0;
  for (const std::string& spec : kFabrics) {
    Fabric f = make_synthetic(spec);
    PathIndex index(f);
    auto leaf = [&](NodeId h) { return index.ports(index.host_index(h)).front().leaf; };
    for (int trial = 0; trial < 60; ++trial) {
      int N = std::uniform_int_distribution<int>(3, static_cast<int>(f.hosts().size()) - 1)(rng);
      auto hosts = random_hosts(f, rng, N);
      // Cluster by leaf so that some host has both neighbours on its leaf.
      std::stable_sort(hosts.begin(), hosts.end(), [&](NodeId a, NodeId b) { return leaf(a) < leaf(b); });
      std::vector<int> candidates;
      for (int i = 0; i < N; ++i)
        if (leaf(hosts[(i + N - 1) % N]) == leaf(hosts[i]) && leaf(hosts[(i + 1) % N]) == leaf(hosts[i]))
          candidates.push_back(i);
      if (candidates.empty()) continue;
      int i = candidates[rng() % candidates.size()];
      std::vector<NodeId> elsewhere;
      for (NodeId h : f.hosts())
        if (leaf(h) != leaf(hosts[i]) && std::find(hosts.begin(), hosts.end(), h) == hosts.end())
          elsewhere.push_back(h);
      if (elsewhere.empty()) continue;
      auto moved = hosts;
      moved[i] = elsewhere[rng() % elsewhere.size()];
      Request r;
      r.collective = kCollectives[trial % 4];  // the ring-shaped ones
      r.bytes = 4.0 * std::uniform_int_distribution<int>(1, 1 << 26)(rng);
      r.gpus_per_host = std::uniform_int_distribution<int>(1, 4)(rng);
      for (Algorithm a : {Algorithm::Ring, Algorithm::Hierarchical}) {
        ModelOptions o;
        o.algorithm = a;
        double before = estimate(index, hosts, r, {}, o).time_s;
        double after = estimate(index, moved, r, {}, o).time_s;
        SCOPED_TRACE(fmt::format("{} N={} {} {}", spec, N, name(r.collective), name(a)));
        EXPECT_GE(after, before * (1 - 1e-12));
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100);
}

// Contiguous and interleaved naming build the same cables with different
// host names: the same physical ring must cost the same.
TEST(CommModelProperties, IndependentOfHostNaming) {
  std::mt19937 rng(3);
  for (const std::string base : {"leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2",
                                 "clos3:pods=2,leaves_per_pod=2,hosts_per_leaf=4,oversub=2"}) {
    Fabric a = make_synthetic(base + ",naming=contiguous");
    Fabric b = make_synthetic(base + ",naming=interleaved");
    ASSERT_NE(a.node(a.hosts()[1]).name, b.node(b.hosts()[1]).name);
    PathIndex ia(a), ib(b);
    for (int trial = 0; trial < 30; ++trial) {
      int N = std::uniform_int_distribution<int>(2, static_cast<int>(a.hosts().size()))(rng);
      std::vector<size_t> positions(a.hosts().size());
      std::iota(positions.begin(), positions.end(), 0);
      std::shuffle(positions.begin(), positions.end(), rng);
      std::vector<NodeId> ha, hb;
      for (int k = 0; k < N; ++k) {
        ha.push_back(a.hosts()[positions[k]]);
        hb.push_back(b.hosts()[positions[k]]);
      }
      Request r;
      r.collective = kCollectives[trial % kCollectives.size()];
      r.bytes = 1 << 24;
      r.gpus_per_host = 1 + trial % 3;
      Estimate ea = estimate(ia, ha, r), eb = estimate(ib, hb, r);
      EXPECT_DOUBLE_EQ(ea.time_s, eb.time_s);
      EXPECT_DOUBLE_EQ(ea.busbw_gbps, eb.busbw_gbps);
      EXPECT_EQ(ea.algorithm, eb.algorithm);
      EXPECT_EQ(ea.protocol, eb.protocol);
      EXPECT_DOUBLE_EQ(ea.bottleneck.flows, eb.bottleneck.flows);
    }
  }
}

TEST(CommModelProperties, DoubleBinaryTreesAreBalanced) {
  for (int n = 1; n <= 300; ++n) {
    DoubleBinaryTree t = double_binary_tree(n);
    std::vector<int> inner(n, 0);
    for (const BinaryTree* tree : {&t.first, &t.second}) {
      std::vector<int> children(n, 0);
      int roots = 0;
      for (int r = 0; r < n; ++r) {
        if (tree->parent[r] < 0)
          ++roots;
        else
          ++children[tree->parent[r]];
      }
      EXPECT_EQ(roots, 1) << n;
      for (int r = 0; r < n; ++r) {
        EXPECT_LE(children[r], 2) << n;
        if (children[r] > 0) ++inner[r];
      }
      EXPECT_EQ(tree->depth, n == 1 ? 0 : static_cast<int>(std::ceil(std::log2(n)))) << n;
    }
    // Inner in both trees: at most the root of an odd-sized pair.
    EXPECT_LE(std::count(inner.begin(), inner.end(), 2), n % 2 == 1 ? 1 : 0) << n;
  }
  EXPECT_THROW(double_binary_tree(0), std::invalid_argument);
}

}  // namespace
}  // namespace topo
