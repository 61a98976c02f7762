// Placement: best fit, fewest leaves, avoidance of degraded and busy
// uplinks, ring order, limits, and the search held against the exact oracle.
#include <algorithm>
#include <random>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "placement/exact.h"
#include "placement/ring_order.h"
#include "placement/search.h"
#include "topology/synthetic.h"

namespace topo {
namespace {

NodeId host(const Fabric& f, int i) { return *f.find_host(fmt::format("gpu{:03}", i)); }

std::set<std::string> leaf_names(const Fabric& f, const Placement& p) {
  std::set<std::string> out;
  for (NodeId l : p.leaves) out.insert(f.node(l).name);
  return out;
}

// Marks hosts [first, last] (1-based names) busy.
void busy(const Fabric& f, FreeMap& free, int first, int last) {
  for (int i = first; i <= last; ++i) free.free_gpus[host(f, i)] = 0;
}

PlacementRequest hosts_x8(int n) {
  PlacementRequest r;
  r.hosts = n;
  r.gpus_per_host = 8;
  return r;
}

class LeafSpine : public ::testing::Test {
 protected:
  Fabric fabric = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  SwitchTree tree{fabric};
  FreeMap free = FreeMap::all_free(fabric, 8);
};

TEST_F(LeafSpine, OneLeafBestFitNotFirstFit) {
  busy(fabric, free, 1, 2);    // leaf01: 6 free
  busy(fabric, free, 9, 12);   // leaf02: 4 free
  busy(fabric, free, 17, 19);  // leaf03: 5 free
  Placement p = place(tree, free, hosts_x8(4));
  ASSERT_TRUE(p.feasible);
  EXPECT_EQ(leaf_names(fabric, p), (std::set<std::string>{"leaf02"}));
  EXPECT_EQ(p.score.spine_edges, 0);
  EXPECT_EQ(p.hosts.size(), 4u);
}

TEST_F(LeafSpine, FewestLeavesAndRingCrossesEachBoundaryOnce) {
  Placement p = place(tree, free, hosts_x8(12));
  ASSERT_TRUE(p.feasible);
  EXPECT_EQ(p.leaves.size(), 2u);
  EXPECT_EQ(p.score.spine_edges, 2);
  EXPECT_EQ(p.hosts.size(), 12u);
  EXPECT_FALSE(p.reasons.empty());
}

TEST(Placement, NeverTheLeafWithADegradedUplinkWhenAnotherWillDo) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,degrade=leaf03:9");
  SwitchTree tree(f);
  FreeMap free = FreeMap::all_free(f, 8);
  busy(f, free, 1, 3);  // leaf01: 5 free; leaf03 (degraded) is the best fit by size otherwise... make it so:
  busy(f, free, 17, 21);  // leaf03: 3 free
  busy(f, free, 9, 12);   // leaf02: 4 free
  // 3 hosts: leaf03 fits exactly, but its uplink is degraded; leaf02 fits next best.
  Placement p = place(tree, free, hosts_x8(3));
  EXPECT_EQ(leaf_names(f, p), (std::set<std::string>{"leaf02"}));
  // Multi-leaf: 20 hosts over leaves that avoid leaf03's bad uplink.
  FreeMap all = FreeMap::all_free(f, 8);
  Placement big = place(tree, all, hosts_x8(20));
  EXPECT_FALSE(leaf_names(f, big).contains("leaf03"));
  EXPECT_EQ(big.score.degraded_links, 0);
  bool mentions = std::any_of(big.reasons.begin(), big.reasons.end(),
                              [](const std::string& r) { return r.find("leaf03 skipped") != std::string::npos; });
  EXPECT_TRUE(mentions);
}

TEST(Placement, DegradedLinkUsedOnlyWhenNothingElseFits) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=1,degrade=leaf01:2");
  SwitchTree tree(f);
  FreeMap free = FreeMap::all_free(f, 8);
  Placement p = place(tree, free, hosts_x8(4));
  EXPECT_EQ(p.score.degraded_links, 0);  // leaf02 holds 4 healthy hosts
  Placement all = place(tree, free, hosts_x8(8));
  ASSERT_TRUE(all.feasible);
  EXPECT_GT(all.score.degraded_links, 0);
}

TEST(Placement, BusyUplinksAreAvoided) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=4,spines=1");
  SwitchTree tree(f);
  FreeMap free = FreeMap::all_free(f, 8);
  // Running jobs saturate leaf01's and leaf02's uplinks.
  for (int leaf : {0, 1})
    for (LinkId e : tree.leaves()[leaf].uplinks) free.load.add(e, 300);
  Placement p = place(tree, free, hosts_x8(8));
  EXPECT_EQ(leaf_names(f, p), (std::set<std::string>{"leaf03", "leaf04"}));
}

TEST(Placement, RingOrderFollowsLeavesWhenNamesDoNot) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,naming=interleaved");
  SwitchTree tree(f);
  // Hosts 1..16 by name alternate over the four leaves; take those on two leaves.
  std::vector<NodeId> hosts;
  for (int i = 1; i <= 32; ++i)
    if (tree.home_leaf(host(f, i)) <= 1) hosts.push_back(host(f, i));
  ASSERT_EQ(hosts.size(), 16u);
  std::sort(hosts.begin(), hosts.end(), [&](NodeId a, NodeId b) { return f.node(a).name < f.node(b).name; });
  EXPECT_EQ(ring_crossings(tree, hosts).spine_edges, 16);  // name order: every hop
  std::vector<NodeId> ring = ring_order(tree, hosts);
  EXPECT_EQ(ring_crossings(tree, ring).spine_edges, 2);
}

TEST(Placement, AllToAllSpreadsEvenlyOverItsLeaves) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2");
  SwitchTree tree(f);
  FreeMap free = FreeMap::all_free(f, 8);
  PlacementRequest r = hosts_x8(10);
  r.profile = Profile::AllToAll;
  Placement p = place(tree, free, r);
  ASSERT_EQ(p.leaves.size(), 2u);
  std::map<int, int> per_leaf;
  for (NodeId h : p.hosts) ++per_leaf[tree.home_leaf(h)];
  for (auto [leaf, n] : per_leaf) EXPECT_EQ(n, 5);
}

TEST(Placement, LimitsAndInfeasibleRequestsSayWhy) {
  Fabric f = make_synthetic("clos3:pods=2,leaves_per_pod=2,hosts_per_leaf=4");
  SwitchTree tree(f);
  FreeMap free = FreeMap::all_free(f, 8);
  PlacementRequest r = hosts_x8(10);
  Placement across = place(tree, free, r);
  ASSERT_TRUE(across.feasible);
  EXPECT_EQ(across.score.pods, 2);
  r.one_pod = true;
  Placement none = place(tree, free, r);
  EXPECT_FALSE(none.feasible);
  EXPECT_NE(none.reasons.front().find("limits"), std::string::npos);
  PlacementRequest too_big = hosts_x8(17);
  Placement no = place(tree, free, too_big);
  EXPECT_FALSE(no.feasible);
  EXPECT_NE(no.reasons.front().find("16 eligible hosts"), std::string::npos);
  PlacementRequest two_leaves = hosts_x8(6);
  two_leaves.max_leaves = 1;
  EXPECT_FALSE(place(tree, free, two_leaves).feasible);
}

TEST(Placement, GpuCountRequestsUseFewHosts) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=1");
  SwitchTree tree(f);
  FreeMap free = FreeMap::all_free(f, 8);
  free.free_gpus[host(f, 1)] = 2;
  free.free_gpus[host(f, 2)] = 3;
  PlacementRequest r;
  r.gpus = 12;
  r.min_gpus_per_host = 2;
  Placement p = place(tree, free, r);
  ASSERT_TRUE(p.feasible);
  int total = 0;
  for (int g : p.gpus) total += g;
  EXPECT_EQ(total, 12);
  EXPECT_EQ(p.hosts.size(), 2u);
}

TEST(Placement, StableForTheSameInput) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  SwitchTree tree(f);
  FreeMap free = FreeMap::all_free(f, 8);
  busy(f, free, 3, 7);
  busy(f, free, 20, 22);
  Placement a = place(tree, free, hosts_x8(11)), b = place(tree, free, hosts_x8(11));
  EXPECT_EQ(a.hosts, b.hosts);
  EXPECT_EQ(a.reasons, b.reasons);
}

// The search against the exhaustive oracle on random fragmented instances.
TEST(Placement, WithinFivePercentOfTheOptimumAlmostAlways) {
#if defined(__SANITIZE_ADDRESS__)
  const int instances = 200;
#else
  const int instances = 2000;
#endif
  const std::vector<std::string> shapes = {
      "leafspine:leaves=3,hosts_per_leaf=4,spines=2,oversub=2",
      "leafspine:leaves=4,hosts_per_leaf=3,spines=1,degrade=leaf02:4",
      "clos3:pods=2,leaves_per_pod=2,hosts_per_leaf=3,spines_per_pod=1,cores=1",
      "clos3:pods=2,leaves_per_pod=2,hosts_per_leaf=3,spines_per_pod=1,cores=1,oversub=1.5,degrade=leaf03:2",
  };
  std::vector<Fabric> fabrics;
  for (const auto& s : shapes) fabrics.push_back(make_synthetic(s));
  std::vector<std::unique_ptr<SwitchTree>> trees;
  for (const Fabric& f : fabrics) trees.push_back(std::make_unique<SwitchTree>(f));

  std::mt19937 rng(20261202);
  int compared = 0, within = 0, missed = 0;
  double worst = 0;
  std::string worst_case;
  for (int i = 0; i < instances; ++i) {
    size_t which = rng() % fabrics.size();
    const Fabric& f = fabrics[which];
    FreeMap free = FreeMap::all_free(f, 8);
    for (NodeId h : f.hosts())
      if (rng() % 100 < 40) free.free_gpus[h] = 0;
    PlacementRequest r = hosts_x8(1 + static_cast<int>(rng() % 6));
    r.profile = rng() % 3 == 0 ? Profile::AllToAll : Profile::AllReduce;
    Placement oracle = place_exact(*trees[which], free, r);
    Placement found = place(*trees[which], free, r);
    ASSERT_EQ(found.feasible, oracle.feasible) << "instance " << i;
    if (!oracle.feasible) continue;
    ++compared;
    double gap = (found.score.total - oracle.score.total) / std::max(1.0, oracle.score.total);
    EXPECT_GE(gap, -1e-9) << "the search beat the oracle: instance " << i;
    if (gap > 0.05 && std::getenv("TOPO_DEBUG")) {
      auto dump = [&](const char* what, const Placement& p) {
        std::string hs;
        for (NodeId h : p.hosts) hs += f.node(h).name + " ";
        std::printf("  %s: %s total=%.3f deg=%d pod=%d sp=%d leaves=%d press=%.2f slow=%.3f frag=%.2f\n", what, hs.c_str(),
                    p.score.total, p.score.degraded_links, p.score.pod_edges, p.score.spine_edges, p.score.leaves,
                    p.score.pressure, p.score.slowdown, p.score.fragment);
      };
      std::string freestr;
      for (NodeId h : f.hosts()) freestr += free.free(h) ? "1" : "0";
      std::printf("instance %d %s hosts=%d profile=%d free=%s\n", i, shapes[which].c_str(), r.hosts, (int)r.profile, freestr.c_str());
      dump("oracle", oracle);
      dump("found ", found);
    }
    if (gap <= 0.05) ++within;
    else ++missed;
    if (gap > worst) {
      worst = gap;
      worst_case = fmt::format("{} hosts on {}", r.hosts, shapes[which]);
    }
  }
  std::printf("placement vs oracle: %d instances, %d within 5%%, worst gap %.2f%% (%s)\n", compared, within,
              100 * worst, worst_case.c_str());
  ASSERT_GT(compared, instances / 2);
  EXPECT_GE(within, 0.99 * compared);
}

}  // namespace
}  // namespace topo
