// topoctl estimate as users and scripts run it.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include "tests/support/topoctl_run.h"

#include "comm_model/domain_tier.h"
#include "comm_model/ring_steps.h"
#include "db/placement_store.h"
#include "db/snapshot_store.h"
#include "fabric/synthetic.h"
#include "routing/routing_engine.h"

namespace {

using topo::testing::Ran;
Ran topoctl(const std::string& args) { return topo::testing::run_topoctl(args); }

const std::string kTwoToOne = "--synthetic leafspine:leaves=4,hosts_per_leaf=16,spines=2,oversub=2";

std::string fmt_host(int n) {
  char name[16];
  std::snprintf(name, sizeof name, "gpu%03d", n);
  return name;
}

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

// NVLink domains (GB200 NVL72 racks of 18 hosts of 4 GPUs): the estimate
// prices NVLink per domain with the comm_model's domain tier, and takes the
// GPUs per host from the fabric.
const std::string kTwoRacks = "--synthetic nvl72:racks=2";
const std::string kSevenB = "estimate --params 7B --dtype bf16 --step-time 1s --json ";

TEST(CommModelCli, OneNvlinkDomainBeatsTwo) {
  Ran one = topoctl(kSevenB + "--hosts 'gpu[001-018]' " + kTwoRacks);
  Ran two = topoctl(kSevenB + "--hosts 'gpu[001-009,019-027]' " + kTwoRacks);
  ASSERT_EQ(one.code, 0) << one.err;
  ASSERT_EQ(two.code, 0) << two.err;
  auto a = nlohmann::json::parse(one.out), b = nlohmann::json::parse(two.out);
  EXPECT_LT(a.at("allreduce_s").get<double>(), b.at("allreduce_s").get<double>());
  ASSERT_EQ(a.at("domains").size(), 1u);
  ASSERT_EQ(b.at("domains").size(), 2u);
  EXPECT_EQ(a.at("domains")[0].at("hosts").size(), 18u);
  EXPECT_EQ(b.at("domains")[1].at("hosts")[0], "gpu019");
  EXPECT_NE(b.at("domains")[0].at("domain"), b.at("domains")[1].at("domain"));
  // One domain: every byte over NVLink; two: a network part across them.
  EXPECT_EQ(a.at("domain_tier").at("network_s").get<double>(), 0);
  EXPECT_FALSE(a.at("domain_tier").contains("network"));
  EXPECT_EQ(a.at("algorithm"), "nvlink");
  EXPECT_GT(b.at("domain_tier").at("network_s").get<double>(), 0);
  EXPECT_GT(b.at("domain_tier").at("nvlink_s").get<double>(), 0);
  EXPECT_EQ(b.at("domain_tier").at("network").at("hosts"), 18);
  EXPECT_DOUBLE_EQ(b.at("allreduce_s").get<double>(), b.at("domain_tier").at("nvlink_s").get<double>() +
                                                          b.at("domain_tier").at("network_s").get<double>());
  // The HCA warning does not hold inside a domain.
  EXPECT_TRUE(a.at("warnings").empty()) << a.at("warnings");

  // The same figure as the domain tier itself gives (comm_model/domain_tier.h).
  topo::Fabric f = topo::make_synthetic("nvl72:racks=2");
  topo::PathIndex index(f);
  std::vector<std::string> names;
  for (int h : {1, 2, 3, 4, 5, 6, 7, 8, 9, 19, 20, 21, 22, 23, 24, 25, 26, 27}) names.push_back(fmt_host(h));
  topo::Request request;
  request.bytes = 7e9 * 2;
  request.dtype = topo::Dtype::Bf16;
  request.gpus_per_host = 4;
  std::vector<topo::NodeId> hosts = topo::find_hosts(f, names);
  EXPECT_DOUBLE_EQ(b.at("allreduce_s").get<double>(),
                   topo::estimate_with_domains(index, hosts, request).estimate.time_s);

  Ran text = topoctl("estimate --params 7B --step-time 1s --hosts 'gpu[001-009,019-027]' " + kTwoRacks);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("  domains                 2 ("), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  nvlink part "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  network part "), std::string::npos) << text.out;
}

// Beside --concurrent jobs the estimate keeps the domain tier, per tier:
// hosts in one domain over NVLink whatever runs beside them; hosts in two
// priced on the network by their edges between the racks, where a job
// across both racks slows them. No warning either way.
TEST(CommModelCli, ConcurrentJobsOnDomainsArePricedPerTier) {
  std::string file = ::testing::TempDir() + "/concurrent_nvl.txt";
  std::ofstream(file) << "gpu[010-018,028-036]\n";
  for (const char* sharing : {"flows", "stationary", "steps"}) {
    const std::string beside = std::string(" --concurrent ") + file + " --sharing " + sharing;
    Ran inside = topoctl(kSevenB + "--hosts 'gpu[001-009]' " + kTwoRacks + beside);
    Ran alone = topoctl(kSevenB + "--hosts 'gpu[001-009]' " + kTwoRacks);
    ASSERT_EQ(inside.code, 0) << inside.err;
    ASSERT_EQ(alone.code, 0) << alone.err;
    EXPECT_EQ(inside.err.find("warning"), std::string::npos) << inside.err;
    auto j = nlohmann::json::parse(inside.out);
    EXPECT_DOUBLE_EQ(j.at("allreduce_s").get<double>(),
                     nlohmann::json::parse(alone.out).at("allreduce_s").get<double>())
        << sharing;
    EXPECT_EQ(j.at("neighbours").at("sharing_cables"), 0) << sharing;
  }
  // One uplink a leaf: it carries both jobs' edges between the racks.
  Ran split = topoctl(kSevenB + "--hosts 'gpu[001-009,019-027]' --synthetic nvl72:racks=2,oversub=18 --concurrent " +
                      file + " --sharing flows");
  ASSERT_EQ(split.code, 0) << split.err;
  EXPECT_EQ(split.err.find("warning"), std::string::npos) << split.err;
  auto j = nlohmann::json::parse(split.out);
  EXPECT_GT(j.at("neighbours").at("sharing_cables").get<int>(), 0);
  // Half the uplink: the network ring's time about doubles.
  EXPECT_GT(j.at("allreduce_s").get<double>(), 1.8 * j.at("neighbours").at("alone_allreduce_s").get<double>());
}

TEST(CommModelCli, GpusPerHostFromTheFabric) {
  Ran from_fabric = topoctl(kSevenB + "--hosts 'gpu[001-002]' " + kTwoRacks);
  ASSERT_EQ(from_fabric.code, 0) << from_fabric.err;
  auto a = nlohmann::json::parse(from_fabric.out);
  EXPECT_EQ(a.at("gpus_per_host"), 4);
  EXPECT_EQ(a.at("gpus"), 8);
  // Without --hosts, --gpus over the fabric's 4 per host: one rack's 18.
  Ran by_gpus = topoctl(kSevenB + "--gpus 72 " + kTwoRacks);
  ASSERT_EQ(by_gpus.code, 0) << by_gpus.err;
  auto g = nlohmann::json::parse(by_gpus.out);
  EXPECT_EQ(g.at("allocation").at("hosts").size(), 18u);
  EXPECT_EQ(g.at("domains").size(), 1u);
  // Given, it wins.
  Ran given = topoctl(kSevenB + "--gpus-per-host 2 --hosts 'gpu[001-002]' " + kTwoRacks);
  ASSERT_EQ(given.code, 0) << given.err;
  auto b = nlohmann::json::parse(given.out);
  EXPECT_EQ(b.at("gpus_per_host"), 2);
  EXPECT_EQ(b.at("gpus"), 4);
  EXPECT_TRUE(b.at("warnings").empty()) << b.at("warnings");
  // A 4-GPU tray and an 8-GPU HGX host: the default 8, with a warning.
  Ran mixed = topoctl(kSevenB + "--hosts gpu018,gpu019 --synthetic nvl72:racks=1,hgx=2");
  ASSERT_EQ(mixed.code, 0) << mixed.err;
  auto m = nlohmann::json::parse(mixed.out);
  EXPECT_EQ(m.at("gpus_per_host"), 8);
  EXPECT_NE(mixed.err.find("warning: the named hosts do not all hold the same GPU count (4 on 1, 8 on 1 hosts)"),
            std::string::npos)
      << mixed.err;
  EXPECT_EQ(m.at("hosts_outside_domains"), nlohmann::json::array({"gpu019"}));
  // A fabric without GPU data keeps the default 8, silently.
  Ran plain = topoctl(kSevenB + "--hosts gpu001,gpu002 " + kTwoToOne);
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(nlohmann::json::parse(plain.out).at("gpus_per_host"), 8);
  EXPECT_FALSE(nlohmann::json::parse(plain.out).contains("domains"));
}

// --collective pipeline: one stage a rack, its boundary over the scale-out
// (non-blocking by default: each GPU's lane at 384 Gb/s), and a
// running job on the same racks' uplinks named as a sharer.
TEST(CommModelCli, PipelineStagesOneARack) {
  const std::string pipeline = "estimate --collective pipeline --json --hosts 'gpu[001-036]' " + kTwoRacks;
  Ran r = topoctl(pipeline + " --stages 2");
  ASSERT_EQ(r.code, 0) << r.err;
  auto p = nlohmann::json::parse(r.out).at("pipeline");
  EXPECT_EQ(p.at("hosts_per_stage").get<int>(), 18);
  EXPECT_EQ(p.at("gpus_per_host").get<int>(), 4);
  ASSERT_EQ(p.at("boundaries").size(), 1u);
  auto b = p.at("boundaries")[0];
  EXPECT_EQ(b.at("tier"), "network");
  const double mib48 = 2048.0 * 12288 * 2;
  EXPECT_DOUBLE_EQ(b.at("bytes").get<double>(), 2 * mib48 * 4 * 18);
  // Leaf, spine, leaf: three switches of 0.3 us.
  EXPECT_NEAR(b.at("forward_s").get<double>(), mib48 * 8 / (400 * 0.96 * 1e9) + 0.9e-6, 1e-9);
  EXPECT_EQ(b.at("shares_with_running"), false);

  std::string file = ::testing::TempDir() + "/pipeline_running.txt";
  // A ring over both racks: its edges between them climb the same uplinks.
  std::ofstream(file) << "gpu[001-002],gpu[019-020]\n";
  Ran busy = topoctl(pipeline + " --stages 2 --concurrent " + file);
  ASSERT_EQ(busy.code, 0) << busy.err;
  auto shared = nlohmann::json::parse(busy.out).at("pipeline").at("boundaries")[0];
  EXPECT_EQ(shared.at("shares_with_running"), true);
  EXPECT_GT(shared.at("seconds").get<double>(), b.at("seconds").get<double>());

  Ran uneven = topoctl(pipeline + " --stages 5");
  EXPECT_EQ(uneven.code, 2);
  EXPECT_NE(uneven.err.find("5 pipeline stages do not divide the 36 hosts"), std::string::npos) << uneven.err;
  EXPECT_EQ(topoctl(pipeline + " --stages 0").code, 2);
  EXPECT_EQ(topoctl(pipeline).code, 2);  // no --stages
  EXPECT_EQ(topoctl(pipeline + " --stages 2 --activation-mib 0").code, 2);
}

}  // namespace
