// Slurm's baselines: select/cons_tres without topology (place_linear) and
// with topology/tree (place_tree), each case worked out by hand from the
// rules of Slurm 22.05.8's job_test.c named beside it. The real cluster's
// choices are held against place_tree by tests/slurm/tree_check.sh.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include "tests/support/topoctl_run.h"

#include "common/hostlist.h"
#include "fabric/synthetic.h"
#include "placement/slurm_policy.h"

namespace topo {
namespace {

NodeId host(const Fabric& f, int i) { return *f.find_host(fmt::format("gpu{:03}", i)); }

void busy(const Fabric& f, FreeMap& free, std::initializer_list<int> hosts) {
  for (int i : hosts) free.free_gpus[host(f, i)] = 0;
}

PlacementRequest hosts_x8(int n) {
  PlacementRequest r;
  r.hosts = n;
  r.gpus_per_host = 8;
  return r;
}

PlacementRequest gpus(int n) {
  PlacementRequest r;
  r.gpus = n;
  return r;
}

// Host names as a Slurm hostlist, in the placement's order.
std::string names(const Fabric& f, const Placement& p) {
  std::vector<std::string> out;
  for (NodeId h : p.hosts) out.push_back(f.node(h).name);
  return fmt::format("{}", fmt::join(out, ","));
}

std::string leaves(const Fabric& f, const Placement& p) {
  std::vector<std::string> out;
  for (NodeId l : p.leaves) out.push_back(f.node(l).name);
  return fmt::format("{}", fmt::join(out, ","));
}

// 4 leaves of 4 hosts: leaf01 = gpu001-004, ..., leaf04 = gpu013-016.
class SlurmBaseline : public ::testing::Test {
 protected:
  Fabric fabric = make_synthetic("leafspine:leaves=4,hosts_per_leaf=4,spines=2");
  SwitchTree tree{fabric};
  FreeMap free = FreeMap::all_free(fabric, 8);
};

TEST_F(SlurmBaseline, NodeOrderIsNaturalNameOrder) {
  // slurmctld sorts its node table by name (strnatcmp), whatever slurm.conf says.
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=4,spines=2,naming=interleaved");
  std::vector<NodeId> order = slurm_node_order(f);
  ASSERT_EQ(order.size(), 16u);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(f.node(order[i]).name, fmt::format("gpu{:03}", i + 1));
}

TEST_F(SlurmBaseline, SwitchTableFollowsTheWrittenTopologyConf) {
  SlurmSwitchTable t = slurm_switch_table(fabric);
  ASSERT_EQ(t.switches.size(), 6u);  // leaf01-04, spine01-02
  EXPECT_EQ(t.switches[0].name, "leaf01");
  EXPECT_EQ(t.switches[0].level, 0);
  EXPECT_EQ(t.switches[0].nodes, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(t.switches[5].name, "spine02");
  EXPECT_EQ(t.switches[5].level, 1);
  EXPECT_EQ(t.switches[5].nodes.size(), 16u);
  // Both spines list every leaf: the last one listing it is its parent;
  // a root's parent stays 0, as Slurm's zeroed table leaves it.
  EXPECT_EQ(t.switches[0].parent, 5);
  EXPECT_EQ(t.switches[4].parent, 0);
  EXPECT_EQ(t.distance[0][1], 2u);
  EXPECT_EQ(t.distance[0][4], 1u);
}

// --- linear: _eval_nodes -----------------------------------------------------

TEST_F(SlurmBaseline, LinearTakesTheFirstHostsWhenAllAreFree) {
  Placement p = place_linear(tree, free, hosts_x8(3));
  ASSERT_TRUE(p.feasible) << p.reasons.at(0);
  EXPECT_EQ(names(fabric, p), "gpu001,gpu002,gpu003");
  EXPECT_EQ(p.gpus, (std::vector<int>{8, 8, 8}));
}

TEST_F(SlurmBaseline, LinearTakesTheBestFitRunOfConsecutiveHosts) {
  // Runs: [001] [003-004] [006-016]. _eval_nodes: of the runs that hold the
  // job the one with the fewest (there: CPUs), else the largest.
  busy(fabric, free, {2, 5});
  EXPECT_EQ(names(fabric, place_linear(tree, free, hosts_x8(1))), "gpu001");
  EXPECT_EQ(names(fabric, place_linear(tree, free, hosts_x8(2))), "gpu003,gpu004");
  EXPECT_EQ(names(fabric, place_linear(tree, free, hosts_x8(3))), "gpu006,gpu007,gpu008");
}

TEST_F(SlurmBaseline, LinearSpillsOverTheLargestRunsFirst) {
  // Runs [001-002] [004-006] [008-010] [012-014] [016]; 8 hosts: none holds
  // them, so the first largest whole ([004-006]), then again for 5
  // ([008-010]), then the smallest that holds 2 ([001-002]).
  busy(fabric, free, {3, 7, 11, 15});
  Placement p = place_linear(tree, free, hosts_x8(8));
  ASSERT_TRUE(p.feasible) << p.reasons.at(0);
  EXPECT_EQ(names(fabric, p), "gpu001,gpu002,gpu004,gpu005,gpu006,gpu008,gpu009,gpu010");
  EXPECT_EQ(leaves(fabric, p), "leaf01,leaf02,leaf03");
  // The same on a table built once.
  EXPECT_EQ(names(fabric, place_linear(slurm_switch_table(fabric), tree, free, hosts_x8(8))), names(fabric, p));
}

TEST_F(SlurmBaseline, LinearIsInfeasibleWithTooFewHosts) {
  busy(fabric, free, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13});
  Placement p = place_linear(tree, free, hosts_x8(4));
  EXPECT_FALSE(p.feasible);
  ASSERT_FALSE(p.reasons.empty());
  EXPECT_NE(p.reasons[0].find("only 3 hosts"), std::string::npos) << p.reasons[0];
}

// --- tree: _eval_nodes_topo ----------------------------------------------------

TEST_F(SlurmBaseline, TreeTakesTheLeafThatFitsWithTheFewestFreeHosts) {
  // Usable hosts per leaf: leaf01 4, leaf02 2, leaf03 3, leaf04 4.
  // _topo_compare_switches: of two leaves that hold the job, the smaller.
  busy(fabric, free, {5, 6, 9});
  EXPECT_EQ(names(fabric, place_tree(tree, free, hosts_x8(2))), "gpu007,gpu008");
  EXPECT_EQ(names(fabric, place_tree(tree, free, hosts_x8(3))), "gpu010,gpu011,gpu012");
  // Equal leaves: the first in topology.conf (a later one must be strictly better).
  EXPECT_EQ(names(fabric, place_tree(tree, free, hosts_x8(4))), "gpu001,gpu002,gpu003,gpu004");
  // Linear sees runs [001-004] [007-008] [010-016]: for 3 the first run,
  // the smallest that holds them.
  EXPECT_EQ(names(fabric, place_linear(tree, free, hosts_x8(3))), "gpu001,gpu002,gpu003");
}

TEST(SlurmBaselineWide, PartlyUsedHostsTakeJobsThatFitTheirFreeGpus) {
  // As slurmctld 22.05.8 chose for --nodes=3 --gres=gpu:4 (tree_check.sh's
  // first busy state): gpu004 has 4 GPUs free, so leaf01 has 5 usable hosts,
  // the fewest of the leaves that hold 3.
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  SwitchTree tree(f);
  FreeMap free = FreeMap::all_free(f, 8);
  busy(f, free, {1, 2, 3, 9, 10, 11, 12, 13, 14, 17});
  free.free_gpus[host(f, 4)] = 4;
  PlacementRequest r;
  r.hosts = 3;
  r.gpus_per_host = 4;
  Placement p = place_tree(tree, free, r);
  ASSERT_TRUE(p.feasible) << p.reasons.at(0);
  EXPECT_EQ(names(f, p), "gpu004,gpu005,gpu006");
  EXPECT_EQ(p.gpus, (std::vector<int>{4, 4, 4}));
  // For 8 GPUs gpu004 is out: leaf01 holds 4, leaf02 2 (gpu015-016).
  EXPECT_EQ(names(f, place_tree(tree, free, hosts_x8(3))), "gpu005,gpu006,gpu007");
}

TEST_F(SlurmBaseline, TreeSpansLeavesLargestFirstThenBestFit) {
  // 6 hosts fit no leaf: the leaves share a parent, so the larger wins
  // (leaf01, first of the 4s), then the smallest leaf holding the other 2.
  busy(fabric, free, {5, 6, 9});
  Placement p = place_tree(tree, free, hosts_x8(6));
  ASSERT_TRUE(p.feasible) << p.reasons.at(0);
  EXPECT_EQ(names(fabric, p), "gpu001,gpu002,gpu003,gpu004,gpu007,gpu008");
  EXPECT_EQ(leaves(fabric, p), "leaf01,leaf02");
  EXPECT_EQ(p.gpus, std::vector<int>(6, 8));
}

TEST_F(SlurmBaseline, TreeIsInfeasibleWithTooFewHosts) {
  busy(fabric, free, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13});
  Placement p = place_tree(tree, free, hosts_x8(4));
  EXPECT_FALSE(p.feasible);
  ASSERT_FALSE(p.reasons.empty());
  EXPECT_NE(p.reasons[0].find("only 3 hosts"), std::string::npos) << p.reasons[0];
}

TEST_F(SlurmBaseline, SmallJobsGoToTheLeafWithTheFewestUsableHosts) {
  // --nodes=1 --gres=gpu:1: every host with a free GPU is usable; leaf03
  // has one (gpu010, half used), so it is the best fit.
  busy(fabric, free, {9, 11, 12});
  free.free_gpus[host(fabric, 10)] = 4;
  Placement p = place_tree(tree, free, gpus(1));
  ASSERT_TRUE(p.feasible) << p.reasons.at(0);
  EXPECT_EQ(names(fabric, p), "gpu010");
  EXPECT_EQ(p.gpus, std::vector<int>{1});
  // Linear: the run [010] alone is the best fit too.
  EXPECT_EQ(names(fabric, place_linear(tree, free, gpus(1))), "gpu010");
  // --gres=gpu:8 cannot use gpu010: leaf03 has no usable host left, the
  // other leaves tie and the first wins; linear best-fits run [013-016].
  EXPECT_EQ(names(fabric, place_tree(tree, free, gpus(8))), "gpu001");
  EXPECT_EQ(names(fabric, place_linear(tree, free, gpus(8))), "gpu013");
}

TEST(SlurmBaselineInterleaved, HostsOfOneLeafAreNotConsecutive) {
  // naming=interleaved: leaf01 = gpu001,005,009,013, leaf02 = gpu002,...
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=4,spines=2,naming=interleaved");
  SwitchTree tree(f);
  FreeMap free = FreeMap::all_free(f, 8);
  Placement t = place_tree(tree, free, hosts_x8(2));
  EXPECT_EQ(names(f, t), "gpu001,gpu005");
  EXPECT_EQ(leaves(f, t), "leaf01");
  // 6: all of leaf01, then the first 2 of leaf02 by node index; node order.
  EXPECT_EQ(names(f, place_tree(tree, free, hosts_x8(6))), "gpu001,gpu002,gpu005,gpu006,gpu009,gpu013");
  Placement l = place_linear(tree, free, hosts_x8(2));
  EXPECT_EQ(names(f, l), "gpu001,gpu002");
  EXPECT_EQ(leaves(f, l), "leaf01,leaf02");
}

TEST(SlurmBaselineClos, NearerLeafWinsOnlyWhenItFitsNoWorse) {
  // pod 1: leaf01 (gpu001-004), leaf02 (005-008); pod 2: leaf03, leaf04.
  Fabric f = make_synthetic("clos3:pods=2,leaves_per_pod=2,hosts_per_leaf=4");
  SwitchTree tree(f);
  FreeMap free = FreeMap::all_free(f, 8);
  // Usable: leaf01 3, leaf02 1, leaf03 2, leaf04 4.
  busy(f, free, {1, 5, 6, 7, 9, 10});
  Placement p = place_tree(tree, free, hosts_x8(5));
  ASSERT_TRUE(p.feasible) << p.reasons.at(0);
  // No leaf holds 5; leaves of different pods are compared by their pod
  // spines (pod 2 holds 6 >= 5, pod 1 only 4), so pod 2's larger leaf04
  // first. For the last host _topo_choose_best_switch keeps leaf02 (4 hops,
  // 1 usable host, the tightest fit) over leaf03 (2 hops, 2 usable): a
  // nearer leaf replaces the best only when it fits no worse.
  EXPECT_EQ(names(f, p), "gpu008,gpu013,gpu014,gpu015,gpu016");
  EXPECT_EQ(leaves(f, p), "leaf02,leaf04");
}

TEST(SlurmBaselineRails, RailOptimizedHostsCountUnderTheirRailZeroLeaf) {
  Fabric f = make_synthetic("railopt:hosts=16,rails=4,spines=2,hosts_per_leaf=8");
  SwitchTree tree(f);
  FreeMap free = FreeMap::all_free(f, 8);
  SlurmSwitchTable t = slurm_switch_table(f);
  int leaves_with_hosts = 0;
  for (const auto& sw : t.switches)
    if (sw.level == 0) {
      ++leaves_with_hosts;
      EXPECT_EQ(sw.nodes.size(), 8u) << sw.name;
    }
  EXPECT_EQ(leaves_with_hosts, 2);
  Placement p = place_tree(t, tree, free, hosts_x8(8));
  ASSERT_TRUE(p.feasible) << p.reasons.at(0);
  EXPECT_EQ(p.leaves.size(), 1u);
}

// --- topoctl place --policy ----------------------------------------------------

using topo::testing::Ran;
Ran topoctl(const std::string& args) { return topo::testing::run_topoctl(args); }

TEST(SlurmBaselineCli, PlacePolicyTreeReadsTheBusyFile) {
  std::string busy_file = ::testing::TempDir() + "baseline_busy." + std::to_string(getpid());
  {
    std::ofstream out(busy_file);
    out << "gpu[005-006]\ngpu009 8\n";
  }
  const std::string spec = "--synthetic leafspine:leaves=4,hosts_per_leaf=4,spines=2 --busy " + busy_file;
  // Usable per leaf 4, 2, 3, 4; runs [001-004] [007-008] [010-016].
  Ran tree = topoctl("place --policy tree --gpus 24 --json " + spec);
  Ran linear = topoctl("place --policy linear --gpus 24 --json " + spec);
  Ran ours = topoctl("place --gpus 16 --json " + spec);
  Ran bad = topoctl("place --policy fifo --gpus 16 " + spec);
  std::remove(busy_file.c_str());
  ASSERT_EQ(tree.code, 0) << tree.out;
  auto t = nlohmann::json::parse(tree.out);
  EXPECT_EQ(t["policy"], "tree");
  EXPECT_EQ(t["hosts"], nlohmann::json({"gpu010", "gpu011", "gpu012"}));
  EXPECT_EQ(t["gpus"], nlohmann::json({8, 8, 8}));
  ASSERT_EQ(linear.code, 0) << linear.out;
  EXPECT_EQ(nlohmann::json::parse(linear.out)["hosts"], nlohmann::json({"gpu001", "gpu002", "gpu003"}));
  ASSERT_EQ(ours.code, 0) << ours.out;
  EXPECT_EQ(nlohmann::json::parse(ours.out)["policy"], "topo-aware");
  EXPECT_EQ(bad.code, 2);
}

TEST(SlurmBaselineCli, InfeasibleIsAFinding) {
  Ran r = topoctl("place --policy tree --gpus 256 --json --synthetic leafspine:leaves=4,hosts_per_leaf=4,spines=2");
  ASSERT_EQ(r.code, 1) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["feasible"].get<bool>());
  EXPECT_EQ(j["policy"], "tree");
}

}  // namespace
}  // namespace topo
