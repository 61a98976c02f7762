// Slurm 26.05's topology/block as the block baseline (place_block), each
// case worked out by hand from eval_nodes_block.c's rules named beside it.
// The real slurmctld's choice of the last of equal blocks is seen in
// tests/slurm/domains.sh.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "fabric/synthetic.h"
#include "placement/slurm_policy.h"

namespace topo {
namespace {

// 4 racks of 4 four-GPU trays, one NVLink domain (block) each: b1 =
// gpu001-004 ... b4 = gpu013-016, BlockSizes=4,8,16; gpu017-020 are 8-GPU
// hosts in no block.
class SlurmBlock : public ::testing::Test {
 protected:
  Fabric fabric = make_synthetic("nvl72:racks=4,trays=4,hgx=4,hosts_per_leaf=8");
  SwitchTree tree{fabric};
  FreeMap free = all_free();

  FreeMap all_free() {
    FreeMap f;
    f.free_gpus.assign(fabric.node_count(), 0);
    for (NodeId h : fabric.hosts()) f.free_gpus[h] = static_cast<int>(fabric.node(h).gpus.size());
    return f;
  }
  NodeId host(int i) const { return *fabric.find_host(fmt::format("gpu{:03}", i)); }
  void busy(std::initializer_list<int> hosts) {
    for (int i : hosts) free.free_gpus[host(i)] = 0;
  }
  static PlacementRequest job(int hosts, int gpus = 4, int segment = 0) {
    PlacementRequest r;
    r.hosts = hosts;
    r.gpus_per_host = gpus;
    r.segment = segment;
    return r;
  }
  std::string names(const Placement& p) const {
    std::vector<std::string> out;
    for (NodeId h : p.hosts) out.push_back(fabric.node(h).name);
    return fmt::format("{}", fmt::join(out, ","));
  }
  std::string place(const PlacementRequest& r) const {
    Placement p = place_block(tree, free, r);
    return p.feasible ? names(p) : "infeasible: " + p.reasons.front();
  }
};

TEST_F(SlurmBlock, TableFollowsTheWrittenBlocks) {
  SlurmBlockTable t = slurm_block_table(fabric);
  ASSERT_EQ(t.bblocks.size(), 4u);
  EXPECT_EQ(t.bblock_nodes, 4);
  EXPECT_EQ(t.levels, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(t.bblocks[1], (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(std::count(t.in_block.begin(), t.in_block.end(), 1), 16);
  EXPECT_THROW(slurm_block_table(make_synthetic("leafspine:leaves=2,hosts_per_leaf=4")), FabricError);
}

// Of the blocks that hold the job, the fewest usable nodes, the last of
// equals (`bnc <= block_node_cnt` with one node weight).
TEST_F(SlurmBlock, AJobTakesTheLastOfTheSmallestBlocksThatHoldIt) {
  EXPECT_EQ(place(job(4)), "gpu013,gpu014,gpu015,gpu016");
  busy({9, 13});
  EXPECT_EQ(place(job(3)), "gpu014,gpu015,gpu016");
  EXPECT_EQ(place(job(4)), "gpu005,gpu006,gpu007,gpu008");
}

// 8 nodes: level 1, blocks of two base blocks (b1+b2, b3+b4).
TEST_F(SlurmBlock, LargerJobsTakeAnAggregatedBlockOfTheirSize) {
  EXPECT_EQ(place(job(8)), "gpu009,gpu010,gpu011,gpu012,gpu013,gpu014,gpu015,gpu016");
  busy({16});
  EXPECT_EQ(place(job(8)), "gpu001,gpu002,gpu003,gpu004,gpu005,gpu006,gpu007,gpu008");
  // 7 free in each pair: no block of 8 holds it, whatever is free elsewhere.
  busy({1});
  EXPECT_NE(place(job(8)).find("infeasible: Slurm topology/block: no block holds 8"), std::string::npos)
      << place(job(8));
}

// Inside the aggregated block, base blocks one at a time: one that holds
// the rest, else the largest (_choose_best_bblock), nodes in node order.
TEST_F(SlurmBlock, InsideABlockTheLargestBaseBlockFirst) {
  busy({5, 6});  // b1+b2 hold 6, b3+b4 8: the smaller pair
  EXPECT_EQ(place(job(6)), "gpu001,gpu002,gpu003,gpu004,gpu007,gpu008");
}

// --segment: each segment planned as a job of its own size.
TEST_F(SlurmBlock, SegmentsEachTakeABlock) {
  busy({1, 16});
  EXPECT_EQ(place(job(8, 4, 4)), "gpu005,gpu006,gpu007,gpu008,gpu009,gpu010,gpu011,gpu012");
  // Segments of 3: b1 and b4 hold 3 each, the fewest: b4 (the last), then b1.
  EXPECT_EQ(place(job(6, 4, 3)), "gpu002,gpu003,gpu004,gpu013,gpu014,gpu015");
  EXPECT_NE(place(job(6, 4, 4)).find("segment_size (4) does not fit the job size (6)"), std::string::npos);
  EXPECT_EQ(place(job(4, 4, 8)), place(job(4)));  // larger than the job: ignored
}

// No usable node in a block: Slurm's common evaluation (place_linear).
TEST_F(SlurmBlock, WithoutUsableBlockNodesLinearDecides) { EXPECT_EQ(place(job(2, 8)), "gpu017,gpu018"); }

// BlockSizes=4,16 (levels 0 and 2): an 8-node job is planned in the block
// of all four, spanning at most two llblocks (base blocks here), the
// largest first.
TEST_F(SlurmBlock, SkippedLevelsLimitTheLowerBlocksAJobSpans) {
  SlurmBlockTable t = slurm_block_table(fabric);
  t.levels = {0, 2};
  busy({1});
  Placement p = place_block(t, tree, free, job(8));
  ASSERT_TRUE(p.feasible) << p.reasons.front();
  EXPECT_EQ(names(p), "gpu009,gpu010,gpu011,gpu012,gpu013,gpu014,gpu015,gpu016");
}

}  // namespace
}  // namespace topo
