// Switch ranks above the leaves under each rule of cables, and up/down hops.
#include "fabric/switch_ranks.h"

#include <gtest/gtest.h>

#include "fabric/synthetic.h"

namespace topo {
namespace {

NodeId named(const Fabric& f, std::string_view name) {
  for (NodeId v : f.switches())
    if (f.node(v).name == name) return v;
  throw std::runtime_error("no switch " + std::string(name));
}

// h1 - s0 = s2 - s1, with s0 - s1 down and s2 - s3 Active but without a rate.
Fabric ladder() {
  FabricBuilder b;
  b.add_hca("h1", "node1 mlx5_0");
  for (const char* s : {"s0", "s1", "s2", "s3"}) b.add_switch(s, s);
  b.connect("h1", 1, "s0", 1, {});
  b.connect("s0", 2, "s1", 1, {}, PortState::Down);
  b.connect("s0", 3, "s2", 1, {});
  b.connect("s2", 2, "s1", 2, {});
  b.connect("s2", 3, "s3", 1, LinkRate{static_cast<LinkWidth>(0), LinkSpeed::NDR});
  return std::move(b).finish();
}

TEST(SwitchRanks, EachRuleWalksItsCables) {
  Fabric f = ladder();
  const SwitchRanks any(f, RankCables::Any), active(f, RankCables::Active), routed(f, RankCables::Routed);
  EXPECT_EQ(any.rank(named(f, "s1")), 1);  // over the cable that is down
  EXPECT_EQ(active.rank(named(f, "s1")), 2);
  EXPECT_EQ(active.rank(named(f, "s3")), 2);
  EXPECT_EQ(routed.rank(named(f, "s3")), -1);  // its only cable has no rate
  for (const SwitchRanks* r : {&any, &active, &routed}) {
    EXPECT_EQ(r->rank(named(f, "s0")), 0);
    EXPECT_EQ(r->rank(named(f, "s2")), 1);
    for (NodeId v = 0; v < f.node_count(); ++v) {
      if (f.node(v).kind != NodeKind::Switch) {
        EXPECT_EQ(r->rank(v), -1) << f.node(v).name;
      }
    }
  }
}

TEST(SwitchRanks, ClassificationHeightIsTheRankOverEveryCable) {
  Fabric f = ladder();
  const SwitchRanks any(f, RankCables::Any);
  for (NodeId s : f.switches()) EXPECT_EQ(f.node(s).height, any.rank(s)) << f.node(s).name;
}

TEST(SwitchRanks, ByRankListsLowerRanksFirstInSwitchOrder) {
  Fabric f = ladder();
  const SwitchRanks active(f, RankCables::Active);
  std::vector<std::string> names;
  for (NodeId s : active.by_rank()) names.push_back(f.node(s).name);
  EXPECT_EQ(names, (std::vector<std::string>{"s0", "s2", "s1", "s3"}));
  const SwitchRanks routed(f, RankCables::Routed);
  EXPECT_EQ(routed.by_rank().size(), 3u);  // s3 is not ranked
}

TEST(SwitchRanks, SwitchCablesComeInPortOrder) {
  Fabric f = ladder();
  const SwitchRanks any(f, RankCables::Any), active(f, RankCables::Active);
  std::vector<int> ports;
  for (const auto& c : any.switch_cables(named(f, "s0"))) ports.push_back(c.port);
  EXPECT_EQ(ports, (std::vector<int>{2, 3}));  // never the HCA's cable on port 1
  ASSERT_EQ(active.switch_cables(named(f, "s0")).size(), 1u);
  EXPECT_EQ(active.switch_cables(named(f, "s0"))[0].peer, named(f, "s2"));
}

TEST(SwitchRanks, HopsFollowTheShortestUpDownPath) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=2,spines=2,oversub=1");
  const SwitchRanks ranks(f, RankCables::Active);
  const SwitchRanks::Hops h = ranks.hops_to(named(f, "leaf02"));
  EXPECT_EQ(h.down[named(f, "leaf02")], 0);
  EXPECT_EQ(h.down[named(f, "spine01")], 1);
  EXPECT_EQ(h.down[named(f, "leaf01")], SwitchRanks::kNoPath);  // a leaf cannot descend to another
  EXPECT_EQ(h.updown[named(f, "leaf01")], 2);
  EXPECT_EQ(h.updown[named(f, "spine02")], 1);
}

}  // namespace
}  // namespace topo
