// topoctl estimate as users and scripts run it.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include "tests/support/topoctl_run.h"

#include "comm_model/ring_steps.h"
#include "db/placement_store.h"
#include "db/snapshot_store.h"
#include "fabric/synthetic.h"
#include "routing/routing_engine.h"

namespace {

using topo::testing::Ran;
Ran topoctl(const std::string& args) { return topo::testing::run_topoctl(args); }

const std::string kTwoToOne = "--synthetic leafspine:leaves=4,hosts_per_leaf=16,spines=2,oversub=2";

TEST(CommModelCli, SizingAloneNeedsNoFabric) {
  Ran r = topoctl("estimate --params 1e9 --dtype fp16 --gpus 64 --step-time 100ms --overlap 0.5 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j.at("bytes_per_gpu_per_step").get<double>(), 2.0 * 63 / 64 * 2e9);
  EXPECT_DOUBLE_EQ(j.at("required_gbps_per_gpu").get<double>(), 2.0 * 63 / 64 * 2e9 * 8 / 0.05 / 1e9);
  EXPECT_FALSE(j.contains("allreduce_s"));
}

TEST(CommModelCli, OneLeafAgainstFourLeavesAtTwoToOne) {
  std::string common =
      "estimate --params 7B --dtype bf16 --gpus 128 --gpus-per-host 8 --step-time 2s --json " + kTwoToOne;
  Ran one = topoctl(common + " --leaves 1"), four = topoctl(common + " --leaves 4");
  ASSERT_EQ(one.code, 0) << one.err;
  ASSERT_EQ(four.code, 0) << four.err;
  auto a = nlohmann::json::parse(one.out), b = nlohmann::json::parse(four.out);
  for (const auto& j : {a, b}) {
    for (const char* key : {"bytes_per_gpu_per_step", "required_gbps_per_gpu", "allreduce_s", "ideal_allreduce_s",
                            "bus_gbps", "algorithm", "protocol", "bottleneck", "allocation", "warnings"})
      EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_GE(j.at("allreduce_s").get<double>(), j.at("ideal_allreduce_s").get<double>());
    EXPECT_EQ(j.at("allocation").at("hosts").size(), 16u);
  }
  EXPECT_GE(b.at("allreduce_s").get<double>(), a.at("allreduce_s").get<double>());
  EXPECT_EQ(a.at("allocation").at("hosts")[15], "gpu016");
  EXPECT_EQ(b.at("allocation").at("hosts")[4], "gpu017");  // four per leaf
}

TEST(CommModelCli, WarnsWhenTheHcasCannotCarryTheStep) {
  Ran r = topoctl("estimate --params 1e9 --dtype fp16 --gpus 64 --step-time 100ms " + kTwoToOne);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("allreduce_s"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("warning: the step needs 630 Gb/s"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("400 Gb/s"), std::string::npos) << r.err;
}

TEST(CommModelCli, NamedHostsAndUnknownOnes) {
  Ran ok = topoctl("estimate --params 1e9 --step-time 1s --gpus-per-host 1 --json --hosts gpu001,gpu017,gpu033 " +
                   kTwoToOne);
  ASSERT_EQ(ok.code, 0) << ok.err;
  auto j = nlohmann::json::parse(ok.out);
  EXPECT_EQ(j.at("gpus").get<int>(), 3);
  EXPECT_NE(j.at("bottleneck").at("link").get<std::string>(), "");
  Ran bad = topoctl("estimate --params 1e9 --step-time 1s --hosts gpu001,nosuch1,nosuch2 " + kTwoToOne);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("nosuch1, nosuch2"), std::string::npos) << bad.err;
}

// --hosts takes a Slurm hostlist as place and ring do, in the order written.
TEST(CommModelCli, HostsAreASlurmHostlistInRingOrder) {
  const std::string common = "estimate --params 1e9 --step-time 1s --gpus-per-host 1 --json " + kTwoToOne;
  Ran ok = topoctl(common + " --hosts 'gpu[017,001-002],gpu033'");
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out).at("allocation").at("hosts"),
            nlohmann::json({"gpu017", "gpu001", "gpu002", "gpu033"}));
  Ran bad = topoctl(common + " --hosts 'gpu[001-'");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("gpu[001-"), std::string::npos) << bad.err;
}

// Other jobs on the same hosts' cables: the estimate slows down, says how
// much of it comes from them, and a bad line is named by file and line.
TEST(CommModelCli, ConcurrentJobsShareTheCables) {
  std::string file = ::testing::TempDir() + "/concurrent.txt";
  std::ofstream(file) << "# running jobs\n"
                         "gpu[002-003]  allreduce duty=1\n"
                         "\n"
                         "gpu004,gpu001 duty=0.5   # half of its time in collectives\n";
  std::string common =
      "estimate --params 1e9 --step-time 1s --gpus-per-host 1 --json --hosts gpu001,gpu002,gpu003 " + kTwoToOne;
  Ran alone = topoctl(common), busy = topoctl(common + " --concurrent " + file);
  ASSERT_EQ(alone.code, 0) << alone.err;
  ASSERT_EQ(busy.code, 0) << busy.err;
  auto a = nlohmann::json::parse(alone.out), b = nlohmann::json::parse(busy.out);
  EXPECT_EQ(b.at("routing"), "adaptive");
  EXPECT_GT(b.at("allreduce_s").get<double>(), a.at("allreduce_s").get<double>() * 1.5);
  EXPECT_DOUBLE_EQ(b.at("neighbours").at("alone_allreduce_s").get<double>(), a.at("allreduce_s").get<double>());
  EXPECT_EQ(b.at("neighbours").at("jobs").get<int>(), 2);
  EXPECT_GT(b.at("bottleneck").at("neighbour_flows").get<double>(), 0);

  std::ofstream(file) << "gpu001,gpu002\ngpu003 duty=2\n";
  Ran bad = topoctl(common + " --concurrent " + file);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("concurrent.txt:2: duty"), std::string::npos) << bad.err;
  Ran routing = topoctl(common + " --routing static");
  EXPECT_EQ(routing.code, 2);
  EXPECT_NE(routing.err.find("no forwarding tables"), std::string::npos) << routing.err;
}

// --sharing steps: the rings simulated step by step, what the library's
// estimate_each_by_steps() gives for the same jobs.
TEST(CommModelCli, ConcurrentRingsStepByStep) {
  std::string file = ::testing::TempDir() + "/concurrent_steps.txt";
  std::ofstream(file) << "gpu017,gpu002 duty=1\ngpu018,gpu033,gpu003\n";
  std::string common = "estimate --params 1e9 --step-time 1s --gpus-per-host 1 --json --hosts gpu001,gpu049,gpu050 " +
                       kTwoToOne + " --routing static:ftree --concurrent " + file;
  Ran stepped = topoctl(common + " --sharing steps"), stationary = topoctl(common);
  ASSERT_EQ(stepped.code, 0) << stepped.err;
  ASSERT_EQ(stationary.code, 0) << stationary.err;
  auto j = nlohmann::json::parse(stepped.out);
  EXPECT_EQ(j.at("neighbours").at("sharing"), "steps");
  EXPECT_EQ(nlohmann::json::parse(stationary.out).at("neighbours").at("sharing"), "stationary");

  topo::Fabric f = topo::make_synthetic("leafspine:leaves=4,hosts_per_leaf=16,spines=2,oversub=2");
  f.set_routing(topo::emulate_routing(f, "ftree"));
  topo::PathIndex index(f);
  topo::Request r{topo::Collective::AllReduce, 2e9, topo::Dtype::Bf16, 1};
  auto ring = [&](std::initializer_list<const char*> names) {
    std::vector<topo::NodeId> out;
    for (const char* n : names) out.push_back(*f.find_host(n));
    return out;
  };
  std::vector<topo::NeighbourJob> jobs = {{ring({"gpu001", "gpu049", "gpu050"}), r},
                                          {ring({"gpu017", "gpu002"}), r},
                                          {ring({"gpu018", "gpu033", "gpu003"}), r}};
  EXPECT_DOUBLE_EQ(j.at("allreduce_s").get<double>(), topo::estimate_each_by_steps(index, jobs).front().time_s);

  Ran bad = topoctl(common + " --sharing sometimes");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--sharing"), std::string::npos) << bad.err;
}

TEST(CommModelCli, HelpAndBadValues) {
  Ran help = topoctl("estimate --help");
  EXPECT_EQ(help.code, 0);
  for (const char* flag : {"--params", "--step-time", "--overlap", "--hosts", "--leaves", "--synthetic", "--json"})
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
  EXPECT_EQ(topoctl("estimate --params 1e9 --gpus 8 --step-time 100parsecs").code, 2);
  EXPECT_EQ(topoctl("estimate --params lots --gpus 8 --step-time 1s").code, 2);
  EXPECT_EQ(topoctl("estimate --params 1e9 --gpus 8 --step-time 1s --dtype fp13").code, 2);
  EXPECT_EQ(topoctl("estimate --params 1e9 --gpus 8 --step-time 1s --overlap 1.5").code, 2);
  EXPECT_EQ(topoctl("estimate --params 1e9 --gpus 12 --step-time 1s " + kTwoToOne).code, 2);
  EXPECT_EQ(topoctl("estimate --params 1e9 --step-time 1s").code, 2);
}

TEST(CommModelCli, EstimatesARecordedSlurmJobOnItsSnapshot) {
  std::string db = ::testing::TempDir() + "estimate_job." + std::to_string(getpid()) + ".db";
  std::remove(db.c_str());
  int64_t snapshot = topo::SnapshotStore(db).save(
      topo::make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,naming=interleaved"));
  topo::PlacementRecord placed;
  placed.job_id = 4242;
  placed.snapshot_id = snapshot;
  placed.hosts = {"gpu001", "gpu002", "gpu005", "gpu006"};
  placed.ring_order = {"gpu001", "gpu005", "gpu002", "gpu006"};
  placed.profile = "allreduce";
  topo::PlacementStore(db).record(placed);

  Ran r = topoctl("estimate --params 1e9 --dtype bf16 --step-time 1s --gpus-per-host 8 --json --job 4242 --db " + db);
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("allocation").at("hosts"), nlohmann::json(placed.ring_order));
  EXPECT_EQ(j.at("allocation").at("snapshot").get<int64_t>(), snapshot);
  EXPECT_EQ(j.at("gpus").get<int>(), 32);

  Ran missing = topoctl("estimate --params 1e9 --step-time 1s --job 7 --db " + db);
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("no placement recorded for job 7"), std::string::npos) << missing.err;
}

}  // namespace
