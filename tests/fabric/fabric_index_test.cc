// The dense per-snapshot index: host ids, host ports and their leaves,
// cable ends, LIDs; and that every layer reads a host's leaf from it.
#include "fabric/fabric_index.h"

#include <gtest/gtest.h>

#include "comm_model/paths.h"
#include "common/error.h"
#include "fabric/fabric.h"
#include "fabric/synthetic.h"
#include "placement/switch_tree.h"

namespace topo {
namespace {

// Two leaves; gpu1 has one HCA per leaf (rails 0 and 1), its rail-0 cable
// down; gpu2 sits on leaf b alone; gpu3 has an HCA and no cable.
Fabric two_leaves() {
  FabricBuilder b;
  b.add_switch("a", "leafa", 8);
  b.add_switch("b", "leafb", 8);
  b.add_switch("s", "spine", 8);
  b.add_hca("h1r0", "gpu1 mlx5_0");
  b.add_hca("h1r1", "gpu1 mlx5_1");
  b.add_hca("h2", "gpu2 mlx5_0");
  b.add_hca("h3", "gpu3 mlx5_0");
  LinkRate rate;
  b.connect("h1r0", 1, "a", 3, rate, PortState::Down);
  b.connect("h1r1", 1, "b", 4, rate);
  b.connect("h2", 1, "b", 1, rate);
  b.connect("a", 7, "s", 1, rate);
  b.connect("b", 7, "s", 2, rate);
  b.set_lid("a", 1);
  b.set_lid("b", 2);
  b.set_lid("s", 3);
  b.set_lid("h1r0", 10);
  b.set_lid("h1r1", 11);
  b.set_lid("h2", 12);
  b.set_lid("h3", 13);
  return std::move(b).finish();
}

TEST(FabricIndex, HostPortsKeepEveryCableAndMarkTheRoutedOnes) {
  Fabric f = two_leaves();
  const FabricIndex& ix = f.index();
  ASSERT_EQ(ix.host_count(), 3u);
  int gpu1 = ix.host_id(*f.find_host("gpu1"));
  ASSERT_EQ(gpu1, 0);
  EXPECT_EQ(ix.host_id(*f.find("a")), -1);
  auto ports = ix.host_ports(gpu1);
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].rail, 0);
  EXPECT_FALSE(ports[0].routed);
  EXPECT_EQ(ports[0].gbps, 0);
  EXPECT_EQ(f.node(ports[0].leaf_switch).name, "leafa");
  EXPECT_EQ(ports[0].leaf_port, 3);
  EXPECT_EQ(ports[1].rail, 1);
  EXPECT_TRUE(ports[1].routed);
  EXPECT_EQ(ports[1].leaf_port, 4);
  EXPECT_EQ(ports[1].cable, f.link(*f.cable_at(*f.find("b"), 4)).id);
  EXPECT_TRUE(ix.host_ports(ix.host_id(*f.find_host("gpu3"))).empty());
}

TEST(FabricIndex, ALeafIsASwitchWithARoutedHostCable) {
  Fabric f = two_leaves();
  const FabricIndex& ix = f.index();
  // leafa's only host cable is down: classification calls it a leaf (a host
  // is cabled to it), routing has no use for it.
  EXPECT_EQ(f.node(*f.find("a")).level, Level::Leaf);
  ASSERT_EQ(ix.leaves().size(), 1u);
  EXPECT_EQ(f.node(ix.leaves()[0]).name, "leafb");
  EXPECT_EQ(ix.leaf_id(*f.find("a")), -1);
  EXPECT_EQ(ix.leaf_id(*f.find("b")), 0);
  int gpu1 = ix.host_id(*f.find_host("gpu1"));
  EXPECT_EQ(ix.home_leaf(gpu1), 0);  // its rail 0 is down: rail 1's leaf
  EXPECT_EQ(ix.leaf_on_rail(gpu1, 1), 0);
  EXPECT_EQ(ix.leaf_on_rail(gpu1, 0), -1);
  EXPECT_EQ(ix.home_leaf(ix.host_id(*f.find_host("gpu3"))), -1);
  // The cabling view still names both switches.
  ASSERT_EQ(f.leaves_of(*f.find_host("gpu1")).size(), 2u);
  EXPECT_EQ(f.node(f.leaves_of(*f.find_host("gpu1"))[0]).name, "leafa");
}

TEST(FabricIndex, CablesByPortAndBothEnds) {
  Fabric f = two_leaves();
  const FabricIndex& ix = f.index();
  EXPECT_EQ(ix.cable_count(), f.cables().size());
  int c = ix.cable_at(*f.find("s"), 2);
  ASSERT_GE(c, 0);
  EXPECT_EQ(ix.cable_at(*f.find("b"), 7), c);
  const auto& ends = ix.cable_ends(c);
  EXPECT_EQ(f.node(ends[0].node).name, "leafb");
  EXPECT_EQ(ends[0].port, 7);
  EXPECT_EQ(f.node(ends[1].node).name, "spine");
  EXPECT_EQ(ends[1].port, 2);
  EXPECT_EQ(ix.cable_at(*f.find("s"), 3), -1);
  EXPECT_EQ(ix.cable_at(*f.find("s"), 99), -1);
  EXPECT_EQ(ix.cable_at(*f.find("s"), -1), -1);
  EXPECT_EQ(ix.cable_at(*f.find("h3"), 1), -1);
}

TEST(FabricIndex, LidsFindTheirPort) {
  Fabric f = two_leaves();
  EXPECT_EQ(f.index().node_by_lid(12), f.find("h2"));
  EXPECT_EQ(f.index().node_by_lid(3), f.find("s"));
  EXPECT_FALSE(f.index().node_by_lid(4).has_value());
  EXPECT_FALSE(f.index().node_by_lid(0).has_value());
}

TEST(FabricIndex, ALidGivenTwiceIsRefused) {
  FabricBuilder b;
  b.add_switch("a", "leafa", 8);
  b.add_hca("h", "gpu1 mlx5_0");
  b.connect("h", 1, "a", 1, LinkRate{});
  b.set_lid("a", 5);
  b.set_lid("h", 5);
  EXPECT_THROW(std::move(b).finish(), FabricError);
}

TEST(FabricIndex, TravelsWithACopyOfTheFabric) {
  Fabric f = two_leaves();
  Fabric copy = f;
  EXPECT_EQ(copy.index().leaves().size(), 1u);
  EXPECT_EQ(copy.cable_at(*copy.find("b"), 4).has_value(), true);
  EXPECT_EQ(copy.link(*copy.cable_at(*copy.find("b"), 4)).id, f.link(*f.cable_at(*f.find("b"), 4)).id);
}

// PathIndex and SwitchTree take leaves and homes from the index, so a
// leaf id and a host's leaf agree in all three, on every synthetic shape.
TEST(FabricIndex, PathIndexAndSwitchTreeAgreeWithIt) {
  for (const char* spec : {"leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2",
                           "railopt:hosts=16,rails=4,spines=2", "clos3:pods=2,leaves_per_pod=2,hosts_per_leaf=4"}) {
    Fabric f = make_synthetic(spec);
    const FabricIndex& ix = f.index();
    PathIndex paths(f);
    SwitchTree tree(f);
    ASSERT_EQ(paths.leaves().size(), ix.leaves().size()) << spec;
    for (size_t l = 0; l < ix.leaves().size(); ++l) EXPECT_EQ(paths.leaves()[l], ix.leaves()[l]) << spec;
    for (NodeId h : f.hosts()) {
      int id = ix.host_id(h);
      ASSERT_GE(ix.home_leaf(id), 0) << spec;
      EXPECT_EQ(paths.ports(id).front().leaf, ix.home_leaf(id)) << spec;
      EXPECT_EQ(tree.leaves()[tree.home_leaf(h)].node, ix.leaves()[ix.home_leaf(id)]) << spec;
    }
    // Every cable is an HCA's, a leaf's uplink or one above the leaves, and
    // only a three-level fabric has the last.
    int above = 0;
    for (size_t id = 0; id < f.cables().size(); ++id) {
      const Link& l = f.link(f.cables()[id]);
      const bool hca_cable = f.node(l.end_a).kind != NodeKind::Switch || f.node(l.end_b).kind != NodeKind::Switch;
      const int kinds =
          hca_cable + (tree.uplink_of(static_cast<int>(id)) >= 0) + tree.above_leaves(static_cast<int>(id));
      EXPECT_EQ(kinds, 1) << spec << " cable " << id;
      above += tree.above_leaves(static_cast<int>(id));
    }
    EXPECT_EQ(above > 0, std::string_view(spec).starts_with("clos3")) << spec;
  }
}

}  // namespace
}  // namespace topo
