// nccl-tests baselines judged (health/nccl_baseline.h): each likely
// cause, and the rule against the model, on runs read from the real
// outputs of tests/fixtures/nccl-tests with their bus bandwidths lowered
// after reading (the files stay as they were posted).
#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "comm_model/estimate.h"
#include "fabric/classify.h"
#include "fabric/diff.h"
#include "fabric/synthetic.h"
#include "health/nccl_baseline.h"
#include "routing/routing_engine.h"

namespace topo {
namespace {

NcclTestsRun fixture(const std::string& name) {
  return read_nccl_tests_file(std::string(TOPO_FIXTURES) + "/nccl-tests/" + name);
}

// Every row's bus (and algorithm) bandwidth times `factor`, as a run on a
// sick fabric would print it.
NcclTestsRun slowed(NcclTestsRun run, double factor) {
  for (NcclTestsRow& r : run.rows) {
    r.oop_busbw *= factor;
    r.oop_algbw *= factor;
    r.oop_time_us /= factor;
  }
  return run;
}

class NcclBaselineCheck : public ::testing::Test {
 protected:
  // Run ids count up: the store lists runs oldest first.
  NcclRunRecord run(const NcclTestsRun& r, std::vector<std::string> hosts, int64_t snapshot = 1) {
    NcclRunRecord x;
    x.id = ++ids_;
    x.snapshot_id = snapshot;
    std::sort(hosts.begin(), hosts.end());
    x.hosts = std::move(hosts);
    x.run = r;
    x.model_busbw.resize(r.rows.size());
    return x;
  }
  static std::vector<std::string> kinds(const topo::BaselineCheck& c, CauseKind kind) {
    std::vector<std::string> out;
    for (const LikelyCause& x : c.causes)
      if (x.kind == kind) out.push_back(x.subject);
    return out;
  }

  Fabric fabric = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2");
  NcclTestsRun spark = fixture("spark-all_reduce_perf.txt");
  int64_t ids_ = 0;
};

TEST_F(NcclBaselineCheck, AHostSlowInEverySetItJoinsAndItsOwnCable) {
  std::vector<NcclRunRecord> runs;
  for (const std::vector<std::string>& hosts :
       {std::vector<std::string>{"gpu001", "gpu003"}, {"gpu003", "gpu004"}, {"gpu005", "gpu006"}})
    runs.push_back(run(spark, hosts));
  runs.push_back(run(slowed(spark, 0.5), {"gpu001", "gpu003"}));
  runs.push_back(run(slowed(spark, 0.8), {"gpu003", "gpu004"}));
  runs.push_back(run(spark, {"gpu005", "gpu006"}));
  topo::BaselineCheck c = check_baselines(runs, {{1, fabric}});
  ASSERT_EQ(c.sets.size(), 3u);
  EXPECT_EQ(c.slow(), 2u);
  EXPECT_TRUE(c.sets[0].slower_than_baseline);
  EXPECT_EQ(c.sets[0].size, 65536);
  EXPECT_DOUBLE_EQ(c.sets[0].baseline_busbw, 0.96);
  EXPECT_DOUBLE_EQ(c.sets[0].newest_busbw, 0.48);
  EXPECT_FALSE(c.sets[2].slow());
  EXPECT_EQ(kinds(c, CauseKind::Host), std::vector<std::string>{"gpu003"});
  // Both slow sets load gpu003's cable; gpu001's and gpu004's only one each.
  EXPECT_EQ(kinds(c, CauseKind::Cable), std::vector<std::string>{"gpu003 mlx5_0:1 <-> leaf01:3"});
  EXPECT_TRUE(kinds(c, CauseKind::FabricChange).empty());
  // A 5% drop is within the default threshold; a 10% one is past 0.05.
  runs[4] = run(slowed(spark, 0.95), {"gpu003", "gpu004"});
  runs[3] = run(spark, {"gpu001", "gpu003"});
  EXPECT_EQ(check_baselines(runs, {{1, fabric}}).slow(), 0u);
  EXPECT_EQ(check_baselines(runs, {{1, fabric}}, {.drop = 0.04}).slow(), 1u);
}

// Under static routing a pair of hosts on different leaves crosses one
// spine in each direction, chosen by the forwarding tables. One spine cable
// is sick: the pairs whose tables take it are slow, every other pair (and
// each host with its leaf neighbour) is healthy. The cable, no host, is
// the cause.
TEST_F(NcclBaselineCheck, ACableEverySlowSetCrossesUnderTheForwardingTables) {
  Fabric routed = fabric;
  routed.set_routing(emulate_routing(routed, "ftree"));
  PathIndex index(routed);
  auto cables = [&](const std::vector<std::string>& hosts) {
    std::vector<std::string> out;
    Request r;
    r.bytes = 1 << 20;
    r.gpus_per_host = 1;
    LinkLoad load = ring_load(index, find_hosts(routed, hosts), r);
    for (const auto& [directed, bytes] : load.cables())
      out.push_back(describe_link(routed, routed.cables()[static_cast<size_t>(directed / 2)]));
    return out;
  };
  std::string sick;
  for (const std::string& c : cables({"gpu001", "gpu005"}))
    if (sick.empty() && c.find("spine") != std::string::npos) sick = c;
  ASSERT_FALSE(sick.empty());
  std::vector<std::vector<std::string>> slow_sets,
      healthy_sets{{"gpu001", "gpu002"}, {"gpu003", "gpu004"}, {"gpu005", "gpu006"}, {"gpu007", "gpu008"}};
  for (int a = 1; a <= 4; ++a)
    for (int b = 5; b <= 8; ++b) {
      std::vector<std::string> hosts{fmt::format("gpu{:03}", a), fmt::format("gpu{:03}", b)};
      std::vector<std::string> c = cables(hosts);
      (std::find(c.begin(), c.end(), sick) != c.end() ? slow_sets : healthy_sets).push_back(hosts);
    }
  ASSERT_GE(slow_sets.size(), 2u);
  ASSERT_GT(healthy_sets.size(), 4u);
  std::vector<NcclRunRecord> runs;
  for (const auto& hosts : slow_sets) runs.push_back(run(spark, hosts));
  for (const auto& hosts : healthy_sets) runs.push_back(run(spark, hosts));
  for (const auto& hosts : slow_sets) runs.push_back(run(slowed(spark, 0.6), hosts));
  for (const auto& hosts : healthy_sets) runs.push_back(run(spark, hosts));
  topo::BaselineCheck c = check_baselines(runs, {{1, routed}});
  EXPECT_EQ(c.slow(), slow_sets.size());
  std::vector<std::string> found = kinds(c, CauseKind::Cable);
  EXPECT_NE(std::find(found.begin(), found.end(), sick), found.end()) << sick;
  // Dest-mod-k tables on two leaves: the sick cable's twin on the other
  // leaf (same spine) carries the same pairs, and cannot be told apart.
  EXPECT_LE(found.size(), 2u);
  for (const std::string& f : found) EXPECT_NE(f.find("spine"), std::string::npos) << f;
  EXPECT_TRUE(kinds(c, CauseKind::Host).empty()) << "every host is in a healthy set too";
  // Adaptive routing spreads every pair over both spines: healthy pairs
  // load every spine cable too, so no cable is the slow sets' alone.
  EXPECT_TRUE(kinds(check_baselines(runs, {{1, fabric}}), CauseKind::Cable).empty());
}

TEST_F(NcclBaselineCheck, AFabricChangeBetweenTheBaselineAndTheSlowRun) {
  Fabric changed = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=1");
  std::vector<NcclRunRecord> runs{run(spark, {"gpu001", "gpu005"}, 1), run(slowed(spark, 0.7), {"gpu001", "gpu005"}, 2),
                                  run(spark, {"gpu002", "gpu003"}, 1), run(spark, {"gpu002", "gpu003"}, 2)};
  std::map<int64_t, Fabric> snapshots{{1, fabric}, {2, changed}};
  topo::BaselineCheck c = check_baselines(runs, snapshots);
  ASSERT_EQ(c.slow(), 1u);
  ASSERT_EQ(kinds(c, CauseKind::FabricChange), std::vector<std::string>{"snapshot 1 -> 2"});
  auto why =
      std::find_if(c.causes.begin(), c.causes.end(), [](auto& x) { return x.kind == CauseKind::FabricChange; })->why;
  EXPECT_NE(why.find(fmt::format("{} change", diff(fabric, changed).size())), std::string::npos) << why;
  EXPECT_NE(why.find("topoctl diff 1 2"), std::string::npos) << why;
  // A change with no slow set is no finding.
  runs[1] = run(spark, {"gpu001", "gpu005"}, 2);
  EXPECT_TRUE(check_baselines(runs, snapshots).causes.empty());
}

// The model's figure is taken as calibrated where bandwidth decides: a run
// of 112 MiB below it by more than 15% is slow, even with no baseline;
// one at 64 KB is never held against it.
TEST_F(NcclBaselineCheck, ARunFarBelowTheModelIsSlowWithoutABaseline) {
  NcclTestsRun a100 = fixture("a100-all_gather_perf.txt");  // up to 112 MiB
  NcclRunRecord good = run(a100, {"gpu001", "gpu005"});
  std::string why_not;
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2,rate=4xNDR");
  good.model_busbw = predict_busbw(f, good.hosts, a100, why_not);
  ASSERT_TRUE(good.model_busbw.back()) << why_not;
  // The model for these rows, scaled so that the real figures sit 5% under it.
  const double measured = a100.rows.back().oop_busbw;
  const double scale = measured / 0.95 / *good.model_busbw.back();
  for (auto& m : good.model_busbw) m = *m * scale;
  topo::BaselineCheck ok = check_baselines({good}, {{1, f}});
  ASSERT_EQ(ok.sets.size(), 1u);
  EXPECT_FALSE(ok.sets[0].baseline_run);
  EXPECT_EQ(ok.sets[0].model_size, 117440512);
  EXPECT_DOUBLE_EQ(ok.sets[0].measured_at_model_size, measured);
  EXPECT_FALSE(ok.sets[0].slow());

  NcclRunRecord bad = good;
  bad.run = slowed(a100, 0.8);  // 24% below the model
  topo::BaselineCheck c = check_baselines({bad}, {{1, f}});
  ASSERT_EQ(c.sets.size(), 1u);
  EXPECT_TRUE(c.sets[0].slower_than_model);
  EXPECT_EQ(c.slow(), 1u);
  EXPECT_FALSE(check_baselines({bad}, {{1, f}}, {.model_drop = 0.30}).sets[0].slow());
  // Only sizes of model_min_bytes or more count.
  EXPECT_TRUE(check_baselines({bad}, {{1, f}}, {.model_min_bytes = int64_t{1} << 30}).sets.empty());

  // spark's largest size is 64 KB: predicted, stored, never judged.
  NcclRunRecord small = run(slowed(spark, 0.1), {"gpu001", "gpu005"});
  small.model_busbw = predict_busbw(f, small.hosts, spark, why_not);
  ASSERT_TRUE(small.model_busbw.back());
  EXPECT_TRUE(check_baselines({small}, {{1, f}}).sets.empty());
}

TEST_F(NcclBaselineCheck, TheModelsFigureIsTheEstimateForTheSameHostsAndSize) {
  std::string why_not;
  std::vector<std::optional<double>> m = predict_busbw(fabric, {"gpu001", "gpu005"}, spark, why_not);
  ASSERT_EQ(m.size(), spark.rows.size());
  PathIndex index(fabric);
  Request r{Collective::AllReduce, 65536, Dtype::Fp32, 1};
  std::vector<std::string> hosts{"gpu001", "gpu005"};
  EXPECT_DOUBLE_EQ(*m.back(), estimate(index, find_hosts(fabric, hosts), r).busbw_gbps / 8);
  m = predict_busbw(fabric, {"gpu001", "nosuch"}, spark, why_not);
  EXPECT_FALSE(m.front());
  EXPECT_NE(why_not.find("nosuch"), std::string::npos) << why_not;
}

}  // namespace
}  // namespace topo
