// Slurm blocks (topology/block): a topology.conf of BlockName= lines, or a
// topology.yaml, by the input's first byte ('-': YAML). Accepted
// blocks are given to a fabric of their hosts, written back as blocks and
// read again: the same blocks (by their hosts) come back. What is refused
// names the file and a line of it.
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "discovery/slurm_topology.h"
#include "discovery/slurm_topology_yaml.h"
#include "fabric/fabric.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

constexpr uint64_t kMaxNames = 256;

std::set<std::set<std::string>> host_sets(const topo::SlurmBlocks& b) {
  std::set<std::set<std::string>> out;
  for (const topo::SlurmBlock& block : b.blocks) out.emplace(block.hosts.begin(), block.hosts.end());
  return out;
}

topo::SlurmBlocks read(std::string_view input, const std::string& file, bool yaml) {
  std::istringstream in{std::string(input)};
  if (yaml) return topo::read_slurm_topology_yaml(in, file, kMaxNames).blocks;
  return topo::read_slurm_blocks(in, file, kMaxNames);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input = topo_fuzz::text(data, size);
  bool yaml = !input.empty() && input[0] == '-';
  const std::string file = yaml ? "topology.yaml" : "topology.conf";
  topo::SlurmBlocks blocks;
  try {
    blocks = read(input, file, yaml);
  } catch (const topo::ParseError& e) {
    if (e.file() != file && e.line() > 0) return 0;  // inside an Include
    topo_fuzz::check_parse_error(e, file, topo_fuzz::line_count(input),
                                 {"no block defined", "no block topology", "the file is empty"});
    return 0;
  }
  std::set<std::string> hosts;
  for (const topo::SlurmBlock& b : blocks.blocks) hosts.insert(b.hosts.begin(), b.hosts.end());
  topo::FabricBuilder builder;
  for (const std::string& h : hosts) builder.add_host(h);
  topo::Fabric fabric = std::move(builder).finish();
  try {
    topo::attach_slurm_blocks(fabric, blocks, topo::NvlinkSpec{"any", 1, 1 << 20, 1 << 20, ""});
  } catch (const topo::ParseError& e) {
    topo_fuzz::fail(fmt::format("blocks read do not attach to a fabric of their hosts: {}", e.what()));
  }
  std::ostringstream out;
  try {
    topo::write_slurm_blocks(fabric, out);
  } catch (const topo::FabricError&) {
    return 0;  // a host name Slurm cannot take (documented)
  }
  std::istringstream back(out.str());
  topo::SlurmBlocks again = topo::read_slurm_blocks(back, "written.conf", 1 << 20);
  if (host_sets(again) != host_sets(blocks))
    topo_fuzz::fail(fmt::format("written blocks read back differently:\n{}", out.str()));
  return 0;
}
