// NVLink domains through topoctl, as admins and scripts run it: discover
// from nvidia-smi files, show, lint, diff, export as Slurm blocks, and place
// with segments.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "discovery/slurm_topology.h"
#include "discovery/slurm_topology_yaml.h"
#include "tests/support/temp_dir.h"
#include "tests/support/topoctl_run.h"

namespace topo {
namespace {

using nlohmann::json;
using testing::Ran;
Ran topoctl(const std::string& args) { return testing::run_topoctl(args); }

const std::string kGb200 = std::string(TOPO_FIXTURES) + "/nvidia-smi/gb200";
constexpr const char* kEight = "leafspine:leaves=2,hosts_per_leaf=4,spines=2";

class NvlinkCli : public ::testing::Test {
 protected:
  std::string db() const { return "--db " + (dir_.path() / "fabric.db").string(); }
  testing::TempDir dir_;
};

TEST_F(NvlinkCli, DiscoverFromNvidiaSmiFilesThenShowLintAndDiff) {
  Ran d = topoctl(fmt::format("discover {} --synthetic {} --nvidia-smi {} --json", db(), kEight, kGb200));
  ASSERT_EQ(d.code, 0) << d.err;
  json nvlink = json::parse(d.out).at("nvlink");
  EXPECT_EQ(nvlink.at("generation"), "nvlink5");
  ASSERT_EQ(nvlink.at("domains").size(), 2u);
  EXPECT_EQ(nvlink.at("domains")[1].at("host_list"), "gpu[005,007-008]");
  EXPECT_EQ(nvlink.at("counted_outside"), "gpu006");

  Ran show = topoctl("show " + db());
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_NE(show.out.find("nvlink    2 domains (nvlink5, at most 18 hosts, 900 GB/s per GPU), 7 hosts in them"),
            std::string::npos)
      << show.out;
  Ran lint = topoctl("lint --json " + db());
  EXPECT_EQ(lint.code, 1);
  json faults = json::parse(lint.out).at("faults");
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].at("kind"), "nvlink_fabric_state");
  EXPECT_EQ(faults[0].at("subject"), "gpu006 GPU 00000018:01:00.0");

  // The same fabric without gpu008's report: it left its domain.
  testing::TempDir smi;
  for (const char* h :
       {"gpu001.xml", "gpu002.xml", "gpu003.xml", "gpu004.xml", "gpu005.txt", "gpu006.txt", "gpu007.txt"})
    std::filesystem::copy_file(kGb200 + "/" + h, smi.path() / h);
  ASSERT_EQ(topoctl(fmt::format("discover {} --synthetic {} --nvidia-smi {}", db(), kEight, smi.path().string())).code,
            0);
  Ran diff = topoctl("diff --json " + db() + " 1 2");
  EXPECT_EQ(diff.code, 1);
  json changes = json::parse(diff.out).at("changes");
  ASSERT_EQ(changes.size(), 1u) << diff.out;
  EXPECT_EQ(changes[0].at("kind"), "host_left_domain");
  EXPECT_EQ(changes[0].at("subject"), "gpu008");
}

TEST_F(NvlinkCli, AFileOfAnUnknownHostIsAnErrorNamingIt) {
  testing::TempDir smi;
  std::filesystem::copy_file(kGb200 + "/gpu001.xml", smi.path() / "node17.xml");
  Ran d = topoctl(fmt::format("discover {} --synthetic {} --nvidia-smi {}", db(), kEight, smi.path().string()));
  EXPECT_NE(d.code, 0);
  EXPECT_NE(d.err.find("node17.xml"), std::string::npos) << d.err;
  EXPECT_NE(d.err.find("no host 'node17' in the fabric"), std::string::npos) << d.err;
}

TEST_F(NvlinkCli, ExportWritesBlocksAndATopologyYamlThatReadBack) {
  Ran conf = topoctl("export --slurm block --synthetic nvl72:racks=4,oversub=2,hgx=2");
  ASSERT_EQ(conf.code, 0) << conf.err;
  EXPECT_NE(conf.out.find("BlockName=nvl01 Nodes=gpu[001-018]\n"), std::string::npos) << conf.out;
  EXPECT_NE(conf.out.find("BlockSizes=18,36,72\n"), std::string::npos) << conf.out;
  EXPECT_NE(conf.out.find("left out of every block: gpu[073-074]"), std::string::npos) << conf.out;
  std::istringstream in(conf.out);
  EXPECT_EQ(read_slurm_blocks(in, "exported.conf").blocks.size(), 4u);

  Ran yaml = topoctl("export --yaml --synthetic nvl72:racks=2");
  ASSERT_EQ(yaml.code, 0) << yaml.err;
  std::istringstream yin(yaml.out);
  SlurmTopologyYaml y = read_slurm_topology_yaml(yin, "exported.yaml");
  EXPECT_EQ(y.blocks.blocks.size(), 2u);
  EXPECT_EQ(y.topologies.size(), 2u);

  Ran none = topoctl(std::string("export --slurm block --synthetic ") + kEight);
  EXPECT_NE(none.code, 0);
  EXPECT_NE(none.err.find("no NVLink domain"), std::string::npos) << none.err;
}

TEST_F(NvlinkCli, PlaceKeepsSegmentsInsideDomainsAndReportsFragmentation) {
  const std::string fabric = "--synthetic nvl72:racks=4,oversub=2,hgx=4";
  Ran p = topoctl("place --json --gpus 64 --gpus-per-host 4 --segment 8 " + fabric);
  ASSERT_EQ(p.code, 0) << p.err;
  json out = json::parse(p.out);
  ASSERT_EQ(out.at("nvlink").at("domains").size(), 1u) << p.out;
  EXPECT_EQ(out.at("nvlink").at("before").at("free_whole_domains"), 4);
  EXPECT_EQ(out.at("nvlink").at("after").at("free_whole_domains"), 3);
  EXPECT_EQ(out.at("nvlink").at("after").at("largest_free_block"), 18);

  Ran cpu = topoctl("place --json --gpus 16 --gpus-per-host 4 --no-nvlink " + fabric);
  ASSERT_EQ(cpu.code, 0) << cpu.err;
  EXPECT_EQ(json::parse(cpu.out).at("nvlink").at("hosts_outside_domains"), 4);

  // SchedMD's slurm PR #225: a --segment=12 job of 36 nodes landed 17+17+2.
  Ran twelve = topoctl("place --json --gpus 144 --gpus-per-host 4 --segment 12 " + fabric);
  ASSERT_EQ(twelve.code, 0) << twelve.err;
  json t = json::parse(twelve.out);
  EXPECT_EQ(t.at("nvlink").at("domains").size(), 3u) << twelve.out;

  Ran wait = topoctl("place --gpus 360 --gpus-per-host 4 --segment 18 " + fabric);
  EXPECT_EQ(wait.code, 1);
  EXPECT_NE(wait.err.find("hold 4 whole segments of 18 hosts, 5 needed; the job waits"), std::string::npos) << wait.err;
}

}  // namespace
}  // namespace topo
