// The kept estimates after a job starts: those of rings whose nearby load
// the job changed are forgotten (else the search would score them on the
// old load), the others kept (they would come out the same).
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fabric/synthetic.h"
#include "placement/objective.h"
#include "placement/traffic.h"

namespace topo {
namespace {

class EstimateMemoTest : public ::testing::Test {
 protected:
  // 4 leaves of 8 hosts (gpu001-gpu008 on the first), 2:1 to 2 spines.
  Fabric fabric = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  SwitchTree tree{fabric};

  std::vector<NodeId> ring(std::initializer_list<int> names) const {
    std::vector<NodeId> out;
    for (int i : names) out.push_back(*fabric.find_host(fmt::format("gpu{:03}", i)));
    return out;
  }
  // All GPUs free but the running rings' hosts, with their traffic.
  FreeMap running(const std::vector<std::vector<NodeId>>& rings) const {
    FreeMap free = FreeMap::all_free(fabric, 8);
    for (const auto& r : rings) {
      free.running.push_back({r, Profile::AllReduce, 8, 1.0});
      for (NodeId h : r) free.free_gpus[h] = 0;
    }
    fill_traffic(tree, free);
    return free;
  }
  static PlacementRequest two_hosts() {
    PlacementRequest r;
    r.hosts = 2;
    r.gpus_per_host = 8;
    return r;
  }
  double estimate_on(const FreeMap& free, const std::vector<NodeId>& r) const {
    return score(tree, free, two_hosts(), r, Weights{}).estimate_s;
  }
};

TEST_F(EstimateMemoTest, StartsForgetTheRingsNearTheirCablesOnly) {
  const std::vector<NodeId> first = ring({1, 2});
  // Leaf 2 to leaf 4, enough to fill their uplinks.
  const std::vector<std::vector<NodeId>> started = {ring({12, 25}), ring({13, 26}), ring({14, 28}), ring({15, 29}),
                                                    ring({16, 30})};
  const std::vector<std::vector<NodeId>> rings = {
      ring({3, 4}),    // leaf 1 alone: away from the new job
      ring({5, 20}),   // leaves 1 and 3: away from it
      ring({10, 27}),  // leaves 2 and 4: shares their uplinks
      ring({12, 3}),   // shares gpu012's own cable
  };
  FreeMap before = running({first});
  std::vector<std::vector<NodeId>> now = started;
  now.push_back(first);
  FreeMap after = running(now);
  EstimateMemo memo;
  before.estimates = &memo;
  for (const auto& r : rings) (void)estimate_on(before, r);
  ASSERT_EQ(memo.size(), rings.size());
  // The test bites: the rings near the new job are estimated slower.
  ASSERT_GT(estimate_on(after, rings[2]), estimate_on(before, rings[2]));

  memo.forget_changed(tree, before.load, after.load);
  EXPECT_EQ(memo.size(), 2u);
  after.estimates = &memo;
  for (const auto& r : rings) {
    const double kept = estimate_on(after, r);
    after.estimates = nullptr;
    EXPECT_EQ(kept, estimate_on(after, r)) << "a stale estimate kept for a ring near the started job";
    after.estimates = &memo;
  }
}

TEST_F(EstimateMemoTest, AnEndForgetsTheRingsItsTrafficLeft) {
  const std::vector<NodeId> ended = ring({12, 25});
  FreeMap before = running({ring({1, 2}), ended});
  FreeMap after = running({ring({1, 2})});
  EstimateMemo memo;
  before.estimates = &memo;
  (void)estimate_on(before, ring({10, 27}));
  (void)estimate_on(before, ring({3, 4}));
  memo.forget_changed(tree, before.load, after.load);
  EXPECT_EQ(memo.size(), 1u);
  after.estimates = &memo;
  const double kept = estimate_on(after, ring({10, 27}));
  after.estimates = nullptr;
  EXPECT_EQ(kept, estimate_on(after, ring({10, 27})));
}

// A job whose traffic crosses the cables above the leaves (spine to core)
// changes what every ring's estimate reads: all are forgotten.
TEST(EstimateMemo, ALoadAboveTheLeavesForgetsEveryRing) {
  Fabric f = make_synthetic("clos3:pods=2,leaves_per_pod=2,hosts_per_leaf=4,spines_per_pod=1,cores=1,oversub=4");
  SwitchTree tree(f);
  auto host = [&](int i) { return *f.find_host(fmt::format("gpu{:03}", i)); };
  FreeMap before = FreeMap::all_free(f, 8);
  FreeMap after = FreeMap::all_free(f, 8);
  after.running.push_back({{host(1), host(16)}, Profile::AllReduce, 8, 1.0});  // pod 1 to pod 2
  fill_traffic(tree, after);
  EstimateMemo memo;
  before.estimates = &memo;
  PlacementRequest two;
  two.hosts = 2;
  two.gpus_per_host = 8;
  (void)score(tree, before, two, std::vector<NodeId>{host(5), host(6)}, Weights{});
  ASSERT_EQ(memo.size(), 1u);
  memo.forget_changed(tree, before.load, after.load);
  EXPECT_EQ(memo.size(), 0u);
}

}  // namespace
}  // namespace topo
