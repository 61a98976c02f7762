// Synthetic NVLink clusters: GB200 NVL72-like racks, NVL36x2 and a mixed
// cluster with 8-GPU hosts in no domain, on a rail-optimized scale-out.
#include <gtest/gtest.h>

#include "common/error.h"
#include "fabric/synthetic.h"

namespace topo {
namespace {

TEST(NvlSynthetic, Nvl72RacksAreOneDomainEachOnARailOptimizedTwoTierFabric) {
  Fabric f = make_synthetic("nvl72:racks=4,rails=4,oversub=2");
  EXPECT_EQ(f.summary().hosts, 72);
  EXPECT_EQ(f.summary().rails, 4);
  EXPECT_TRUE(f.summary().rail_optimized);
  EXPECT_EQ(f.summary().leaves, 16);  // a leaf per rack and rail: 18 trays each
  EXPECT_EQ(f.summary().spines, 9);   // 9 uplinks a leaf at 2:1, one to each spine
  EXPECT_EQ(f.summary().cores, 0);
  ASSERT_EQ(f.domains().count(), 4u);
  for (int d = 0; d < 4; ++d) EXPECT_EQ(f.domains().hosts(d).size(), 18u);
  EXPECT_EQ(f.domains().domain_of(f.index().host_id(*f.find_host("gpu019"))), 1);
  EXPECT_EQ(f.domains().spec().generation, "nvlink5");
  EXPECT_TRUE(f.faults().empty());
  const Node& tray = f.node(*f.find_host("gpu001"));
  ASSERT_EQ(tray.gpus.size(), 4u);
  EXPECT_EQ(tray.gpus[3].rail, 3);
  double leaf_over = f.node(f.index().leaves()[0]).oversubscription();
  EXPECT_DOUBLE_EQ(leaf_over, 2.0);
}

TEST(NvlSynthetic, Nvl36x2JoinsTwoRacksOfNineTraysIntoADomain) {
  Fabric f = make_synthetic("nvl36x2:racks=4,rails=4");
  EXPECT_EQ(f.summary().hosts, 36);
  ASSERT_EQ(f.domains().count(), 2u);
  EXPECT_EQ(f.domains().hosts(0).size(), 18u);
  EXPECT_TRUE(f.faults().empty());
  EXPECT_THROW(make_synthetic("nvl36x2:racks=3"), FabricError);
}

TEST(NvlSynthetic, AMixedClusterHasEightGpuHostsInNoDomain) {
  Fabric f = make_synthetic("nvl72:racks=2,hgx=4");
  EXPECT_EQ(f.summary().hosts, 40);
  ASSERT_EQ(f.domains().count(), 2u);
  NodeId hgx = *f.find_host("gpu040");
  EXPECT_EQ(f.domains().domain_of(f.index().host_id(hgx)), -1);
  EXPECT_EQ(f.node(hgx).gpus.size(), 8u);
  EXPECT_FALSE(f.domains().reports()[f.index().host_id(hgx)].claimed);
  EXPECT_TRUE(f.faults().empty());
}

TEST(NvlSynthetic, BadSpecsNameTheirKey) {
  try {
    make_synthetic("nvl72:racks=2,nvlink=nvlink9");
    FAIL();
  } catch (const FabricError& e) {
    EXPECT_NE(std::string(e.what()).find("nvlink=nvlink9 is not one of nvlink5, nvlink4"), std::string::npos);
  }
  EXPECT_THROW(make_synthetic("nvl72:racks=2,bogus=1"), FabricError);
  EXPECT_THROW(make_synthetic("nvl72:rails=4"), FabricError);
}

}  // namespace
}  // namespace topo
