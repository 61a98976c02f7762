// Slurm blocks (topology/block) as NVLink domains: topology.conf and
// topology.yaml read, bad files refused with file, line and key, and the
// domains written back as blocks that read back the same.
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "discovery/slurm_topology.h"
#include "discovery/slurm_topology_yaml.h"
#include "fabric/synthetic.h"

namespace topo {
namespace {

const std::string kSlurm = std::string(TOPO_FIXTURES) + "/slurm/";

Fabric eight_hosts() { return make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2"); }

template <typename F>
std::string error_of(F read) {
  try {
    read();
  } catch (const ParseError& e) {
    return e.what();
  }
  return "no error";
}

std::string conf_error(const std::string& text) {
  return error_of([&] {
    std::istringstream in(text);
    read_slurm_blocks(in, "t.conf");
  });
}

std::string yaml_error(const std::string& text) {
  return error_of([&] {
    std::istringstream in(text);
    read_slurm_topology_yaml(in, "t.yaml");
  });
}

TEST(SlurmBlocks, TopologyConfBlocksBecomeDomains) {
  SlurmBlocks b = read_slurm_blocks_file(kSlurm + "blocks.conf");
  ASSERT_EQ(b.blocks.size(), 2u);
  EXPECT_EQ(b.blocks[1].hosts, (std::vector<std::string>{"gpu005", "gpu006", "gpu007"}));
  EXPECT_EQ(b.block_sizes, (std::vector<int>{3, 6}));
  Fabric f = eight_hosts();
  attach_slurm_blocks(f, b, NvlinkSpec{});
  ASSERT_EQ(f.domains().count(), 2u);
  EXPECT_EQ(f.domains().key(1).str(), "rack2");
  EXPECT_EQ(f.domains().domain_of(7), -1);
}

TEST(SlurmBlocks, TheBlockTopologyOfATopologyYamlBecomesDomains) {
  std::ifstream in(kSlurm + "topology.yaml");
  SlurmTopologyYaml y = read_slurm_topology_yaml(in, "topology.yaml");
  EXPECT_EQ(y.topologies, (std::vector<std::string>{"fabric", "nvl"}));
  EXPECT_EQ(y.block_topology, "nvl");
  EXPECT_EQ(y.blocks.block_sizes, (std::vector<int>{4, 8}));
  ASSERT_EQ(y.blocks.blocks.size(), 2u);
  EXPECT_EQ(y.blocks.blocks[1].name, "rack2");
  EXPECT_EQ(y.blocks.blocks[1].hosts.size(), 4u);
  EXPECT_EQ(y.blocks.blocks[1].line, 22);
  Fabric f = eight_hosts();
  attach_slurm_blocks(f, read_slurm_blocks_file(kSlurm + "topology.yaml"), NvlinkSpec{});
  EXPECT_EQ(f.domains().count(), 2u);
}

TEST(SlurmBlocks, BadTopologyConfIsRefusedNamingLineAndKey) {
  EXPECT_EQ(conf_error("SwitchName=s1 Nodes=a\n"),
            "t.conf:1: expected BlockName= or BlockSizes= (topology/block), found SwitchName=");
  EXPECT_EQ(conf_error("BlockName=b1 Nodes=a Speed=1\n"),
            "t.conf:1: unknown key 'Speed' for block 'b1'; expected Nodes");
  EXPECT_EQ(conf_error("BlockName=b1\n"), "t.conf:1: block 'b1' has no Nodes=");
  EXPECT_EQ(conf_error("BlockName=b1 Nodes=a\nBlockName=b1 Nodes=b\n"),
            "t.conf:2: block 'b1' is already defined at t.conf:1");
  EXPECT_EQ(conf_error("BlockName=b1 Nodes=a[1-2]\nBlockName=b2 Nodes=a2\n"),
            "t.conf:2: host 'a2' is in block 'b1' and in block 'b2'; expected one block per host");
  EXPECT_EQ(conf_error("BlockName=b1 Nodes=a\nBlockSizes=18,27\n"),
            "t.conf:2: BlockSizes 27 is not the base block (18 nodes) times a power of two up to 2^15");
  EXPECT_EQ(conf_error("BlockName=b1 Nodes=a\nBlockSizes=18,x\n"),
            "t.conf:2: BlockSizes: 'x' is not a positive whole number of nodes");
  EXPECT_EQ(conf_error("# nothing\n"), "t.conf: no block defined; expected BlockName= lines");
}

TEST(SlurmBlocks, BadTopologyYamlIsRefusedNamingLineAndKey) {
  EXPECT_EQ(yaml_error("- topology: t\n  block:\n    blocks:\n      - block: b\n        nodez: a\n"),
            "t.yaml:5: unknown key 'nodez' in a block; expected block or nodes");
  EXPECT_EQ(yaml_error("- topology: t\n  tree:\n    switches: []\n"),
            "t.yaml: no block topology ('block:') in the file");
  EXPECT_EQ(yaml_error("- topology: t\n  block:\n    blocks:\n      - block: b\n        nodes: a\n  tree:\n"),
            "t.yaml:1: topology 't' has 2 types; expected exactly one");
  EXPECT_EQ(
      yaml_error("- topology: t\n  block:\n    block_sizes: [4, 6]\n    blocks:\n      - block: b\n        nodes: a\n"),
      "t.yaml:3: BlockSizes 6 is not the base block (4 nodes) times a power of two up to 2^15");
  EXPECT_EQ(yaml_error("- topology: t\n   block: x\n"), "t.yaml:2: indented deeper than the mapping around it");
  EXPECT_EQ(yaml_error("- topology: 't\n"), "t.yaml:1: a quoted scalar is never closed");
  EXPECT_EQ(yaml_error("topology: t\n"), "t.yaml:1: expected a list of topologies ('- topology: NAME')");
  EXPECT_EQ(yaml_error(""), "t.yaml: the file is empty; expected a list of topologies");
}

TEST(SlurmBlocks, AHostOfABlockThatTheFabricLacksIsNamedWithItsBlocksLine) {
  std::istringstream in("BlockName=b1 Nodes=gpu001\nBlockName=b2 Nodes=node[1-2]\n");
  SlurmBlocks b = read_slurm_blocks(in, "t.conf");
  Fabric f = eight_hosts();
  EXPECT_EQ(error_of([&] { attach_slurm_blocks(f, b, NvlinkSpec{}); }),
            "t.conf:2: block 'b2' lists host 'node1', which the fabric does not have");
}

TEST(SlurmBlocks, DomainsWrittenAsBlocksReadBackTheSame) {
  Fabric f = eight_hosts();
  attach_slurm_blocks(f, read_slurm_blocks_file(kSlurm + "blocks.conf"), NvlinkSpec{});
  std::ostringstream conf;
  write_slurm_blocks(f, conf);
  EXPECT_NE(conf.str().find("BlockName=rack2 Nodes=gpu[005-007]\n"), std::string::npos) << conf.str();
  EXPECT_NE(conf.str().find("BlockSizes=3,6\n"), std::string::npos) << conf.str();
  EXPECT_NE(conf.str().find("left out of every block: gpu008\n"), std::string::npos) << conf.str();
  std::istringstream back(conf.str());
  SlurmBlocks again = read_slurm_blocks(back, "written.conf");
  EXPECT_EQ(again.blocks.size(), 2u);

  std::ostringstream yaml;
  write_slurm_topology_yaml(f, yaml);
  std::istringstream yback(yaml.str());
  SlurmTopologyYaml y = read_slurm_topology_yaml(yback, "written.yaml");
  EXPECT_EQ(y.topologies, (std::vector<std::string>{"nvlink", "fabric"}));
  ASSERT_EQ(y.blocks.blocks.size(), 2u);
  EXPECT_EQ(y.blocks.blocks[0].hosts, again.blocks[0].hosts);
  EXPECT_EQ(y.blocks.block_sizes, again.block_sizes);
  EXPECT_NE(yaml.str().find("      - switch: spine01\n        children: leaf[01-02]\n"), std::string::npos)
      << yaml.str();
}

}  // namespace
}  // namespace topo
