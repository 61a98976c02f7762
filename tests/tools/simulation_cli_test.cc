// topoctl simulate and topoctl score, as a script would run them.
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/topoctl_run.h"

namespace {

using topo::testing::Ran;
using topo::testing::run_topoctl;

const std::string kInterleaved =
    "--synthetic leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,naming=interleaved";
const std::string kItp4 = std::string(TOPO_FIXTURES) + "/traces/itp/cluster04.csv";

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "simulation_cli." + std::to_string(getpid()) + "." + name;
}

TEST(SimulationCli, JsonHasTheIssuesKeysPerPolicy) {
  Ran r = run_topoctl("simulate --generate jobs=300,load=0.9,seed=2,median=600 --json " + kInterleaved);
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const char* policy : {"linear", "tree", "topo-aware"}) {
    ASSERT_TRUE(j["policies"].contains(policy)) << policy;
    const auto& p = j["policies"][policy];
    for (const char* key : {"mean_allreduce_slowdown", "p95_allreduce_slowdown", "spine_ring_edges", "makespan_s",
                            "gpu_utilization", "mean_wait_s", "multi_host_jobs", "scheduler"})
      EXPECT_TRUE(p.contains(key)) << policy << " " << key;
    EXPECT_FALSE(p.contains("jobs")) << "the summary leaves the per-job list to --output";
    EXPECT_GE(p["mean_allreduce_slowdown"].get<double>(), 1.0);
    EXPECT_GT(p["gpu_utilization"].get<double>(), 0.0);
    EXPECT_LE(p["gpu_utilization"].get<double>(), 1.0);
  }
  EXPECT_LT(j["policies"]["topo-aware"]["spine_ring_edges"].get<long>(),
            j["policies"]["tree"]["spine_ring_edges"].get<long>());
  EXPECT_NE(r.err.find("100% of jobs submitted"), std::string::npos) << "progress goes to stderr";
}

// Runs stretched by default: a slow tree ring holds its hosts longer, so
// completion times grow against --no-stretch; a share of 0 is --no-stretch.
TEST(SimulationCli, StretchedRunsShowInCompletionTimes) {
  const std::string base = "simulate --generate jobs=300,load=0.9,seed=2,median=600 --policies tree --json " +
                           kInterleaved + " --routing static:ftree --profile allreduce";
  auto summary = [](const Ran& r) { return nlohmann::json::parse(r.out)["policies"]["tree"]; };
  Ran stretched = run_topoctl(base + " --comm-share 0.5");
  Ran plain = run_topoctl(base + " --no-stretch");
  Ran zero = run_topoctl(base + " --comm-share allreduce=0");
  ASSERT_EQ(stretched.code, 0) << stretched.err;
  ASSERT_EQ(plain.code, 0) << plain.err;
  ASSERT_EQ(zero.code, 0) << zero.err;
  for (const Ran* r : {&stretched, &plain})
    for (const char* key : {"mean_jct_s", "p95_jct_s"}) EXPECT_TRUE(summary(*r).contains(key)) << key;
  EXPECT_GT(summary(stretched)["mean_jct_s"].get<double>(), summary(plain)["mean_jct_s"].get<double>() * 1.01);
  EXPECT_GE(summary(plain)["mean_jct_s"].get<double>(), summary(plain)["mean_wait_s"].get<double>());
  EXPECT_DOUBLE_EQ(summary(zero)["mean_jct_s"].get<double>(), summary(plain)["mean_jct_s"].get<double>());
  EXPECT_NE(nlohmann::json::parse(stretched.out)["trace"].get<std::string>().find("allreduce=0.50"), std::string::npos);
  EXPECT_NE(nlohmann::json::parse(plain.out)["trace"].get<std::string>().find("no stretch"), std::string::npos);

  Ran bad = run_topoctl(base + " --comm-share allreduce=2");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--comm-share"), std::string::npos) << bad.err;
  Ran both = run_topoctl(base + " --comm-share 0.3 --no-stretch");
  EXPECT_EQ(both.code, 2) << both.err;
}

// Job-aware routing with runs stretched (the default): minhop's tables
// re-planned for tree's scattered rings leave them faster than minhop's
// own (ftree's already give this small fabric's rings no cable to spare),
// and the reroutes are reported.
TEST(SimulationCli, JobAwareRoutingStretchesRunsOnItsTables) {
  const std::string base = "simulate --generate jobs=300,load=0.9,seed=2,median=600 --policies tree --json " +
                           kInterleaved + " --profile allreduce --routing ";
  auto summary = [](const Ran& r) { return nlohmann::json::parse(r.out)["policies"]["tree"]; };
  Ran aware = run_topoctl(base + "job-aware:minhop --reroute-delay 5");
  Ran fixed = run_topoctl(base + "static:minhop");
  ASSERT_EQ(aware.code, 0) << aware.err;
  ASSERT_EQ(fixed.code, 0) << fixed.err;
  const std::string trace = nlohmann::json::parse(aware.out)["trace"].get<std::string>();
  EXPECT_NE(trace.find("runs stretched"), std::string::npos) << trace;
  EXPECT_NE(trace.find("holding after 5 s"), std::string::npos) << trace;
  EXPECT_EQ(summary(aware)["routing"], "job-aware:minhop");
  EXPECT_GT(summary(aware)["scheduler"]["reroutes"].get<double>(), 0);
  EXPECT_GT(summary(aware)["scheduler"]["entries_per_reroute"].get<double>(), 0);
  EXPECT_LT(summary(aware)["mean_allreduce_slowdown"].get<double>(),
            summary(fixed)["mean_allreduce_slowdown"].get<double>());
}

// --max-changes caps each plan's entries against the base tables, so a
// reroute (from one plan to the next) changes at most twice the cap, and
// the rings left on their base paths run slower.
TEST(SimulationCli, MaxChangesCapsTheJobAwarePlans) {
  const std::string base = "simulate --generate jobs=300,load=0.9,seed=2,median=600 --policies tree --json " +
                           kInterleaved + " --profile allreduce --routing job-aware:minhop --max-changes ";
  auto summary = [](const Ran& r) { return nlohmann::json::parse(r.out)["policies"]["tree"]; };
  Ran free = run_topoctl(base + "0"), capped = run_topoctl(base + "1");
  ASSERT_EQ(free.code, 0) << free.err;
  ASSERT_EQ(capped.code, 0) << capped.err;
  const double free_entries = summary(free)["scheduler"]["entries_per_reroute"].get<double>();
  const double capped_entries = summary(capped)["scheduler"]["entries_per_reroute"].get<double>();
  EXPECT_GT(free_entries, 2.0);
  EXPECT_GT(capped_entries, 0.0);
  EXPECT_LE(capped_entries, 2.0);
  EXPECT_GT(summary(capped)["mean_allreduce_slowdown"].get<double>(),
            summary(free)["mean_allreduce_slowdown"].get<double>());
  EXPECT_EQ(run_topoctl(base + "-1").code, 2);
}

TEST(SimulationCli, ReplaysARealTraceScaledToTheFabric) {
  Ran r = run_topoctl("simulate --trace " + kItp4 +
                      " --jobs 400 --scale-gpus 2 --load 0.9 --policies tree,topo-aware --json " + kInterleaved);
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["policies"].size(), 2u);
  EXPECT_NE(j["trace"].get<std::string>().find("cluster04.csv"), std::string::npos);
  EXPECT_NE(j["trace"].get<std::string>().find("400 jobs"), std::string::npos);
}

TEST(SimulationCli, OutputFeedsTheReport) {
  std::string results = temp_path("results.json"), dir = temp_path("report");
  Ran r = run_topoctl("simulate --generate jobs=200,seed=3 --policies tree,topo-aware --output " + results + " " +
                      kInterleaved);
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(std::ifstream(results));
  EXPECT_EQ(doc["policies"]["tree"]["jobs"].size(), 200u);
  Ran report = run_topoctl("report --results " + results + " --out " + dir);
  ASSERT_EQ(report.code, 0) << report.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/report.md"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/slowdown-cdf.svg"));
  std::filesystem::remove_all(dir);
  std::filesystem::remove(results);
}

TEST(SimulationCli, BadInputExitsTwoAndSaysWhy) {
  Ran policy = run_topoctl("simulate --generate jobs=10 --policies tree,random " + kInterleaved);
  EXPECT_EQ(policy.code, 2);
  EXPECT_NE(policy.err.find("random"), std::string::npos) << policy.err;

  std::string bad = std::string(TOPO_FIXTURES) + "/trace/bad_duration.csv";
  Ran trace = run_topoctl("simulate --trace " + bad + " " + kInterleaved);
  EXPECT_EQ(trace.code, 2);
  EXPECT_NE(trace.err.find("bad_duration.csv:"), std::string::npos) << trace.err;

  // Each value whole and jobs bounded: "1e9" is not 1, "-1" not 2^64 - 1.
  const std::vector<std::pair<std::string, std::string>> shapes{{"jobs=ten", "jobs=ten"},
                                                                {"jobs=1e9", "jobs=1e9"},
                                                                {"jobs=-1", "jobs=-1"},
                                                                {"jobs=1000000000", "jobs=1000000000"},
                                                                {"jobs=10,load=0.9x", "load=0.9x"}};
  for (const auto& [spec, bad_item] : shapes) {
    Ran shape = run_topoctl("simulate --generate " + spec + " " + kInterleaved);
    EXPECT_EQ(shape.code, 2) << spec;
    EXPECT_NE(shape.err.find("bad '" + bad_item + "'"), std::string::npos) << shape.err;
  }

  Ran both = run_topoctl("simulate --generate jobs=10 --trace " + bad + " " + kInterleaved);
  EXPECT_EQ(both.code, 2);

  EXPECT_EQ(run_topoctl("simulate --help").code, 0);
  EXPECT_EQ(run_topoctl("score --help").code, 0);
}

// A schedule as tests/slurm/replay.sh writes it: two jobs whose rings cross
// the same uplinks at the same time.
std::string write_schedule(const std::string& name, const std::string& host_a) {
  std::string path = temp_path(name);
  nlohmann::json doc = {{"policy", "tree"},
                        {"trace", "hand-made"},
                        {"scheduler", {{"sdiag_main_mean_cycle_us", 120}}},
                        {"jobs",
                         {{{"id", "1"},
                           {"gpus", 16},
                           {"submit_s", 0},
                           {"start_s", 1},
                           {"end_s", 11},
                           {"ring", {host_a, "gpu002"}},
                           {"host_gpus", {8, 8}}},
                          {{"id", "2"},
                           {"gpus", 8},
                           {"submit_s", 2},
                           {"start_s", 2},
                           {"end_s", 5},
                           {"ring", {"gpu003"}},
                           {"host_gpus", {8}}}}}};
  std::ofstream(path) << doc.dump();
  return path;
}

TEST(SimulationCli, ScoreJudgesARealClustersSchedule) {
  std::string schedule = write_schedule("good.json", "gpu001");
  Ran r = run_topoctl("score --schedule " + schedule + " --json " + kInterleaved);
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& tree = j["policies"]["tree"];
  EXPECT_EQ(tree["multi_host_jobs"], 1);
  // Interleaved names: gpu001 and gpu002 sit on different leaves.
  EXPECT_EQ(tree["spine_ring_edges"], 2);
  EXPECT_DOUBLE_EQ(tree["makespan_s"].get<double>(), 11);
  EXPECT_DOUBLE_EQ(tree["mean_wait_s"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(tree["scheduler"]["sdiag_main_mean_cycle_us"].get<double>(), 120);
  std::filesystem::remove(schedule);
}

TEST(SimulationCli, ScoreNamesAnUnknownHostAndTheFile) {
  std::string schedule = write_schedule("unknown.json", "nosuch7");
  Ran r = run_topoctl("score --schedule " + schedule + " " + kInterleaved);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("nosuch7"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown.json"), std::string::npos) << r.err;
  std::filesystem::remove(schedule);
}

}  // namespace
