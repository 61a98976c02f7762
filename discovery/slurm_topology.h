// Slurm's topology.conf for the topology/tree plugin: read and write.
//
// The file names switches and their children, one switch per line:
//   SwitchName=leaf01 Nodes=gpu[001-008]          a leaf and its hosts
//   SwitchName=spine01 Switches=leaf[01-04]       a switch above others
//   SwitchName=s0 Nodes=dev[0-5] LinkSpeed=100    LinkSpeed: a whole number in
//                                                 arbitrary units Slurm ignores
// The syntax is Slurm's own (src/common/parse_config.c): keys are case
// insensitive, "#" starts a comment unless written "\#", a line ending in an
// odd number of backslashes continues on the next one, a value may be
// quoted ("..."), and "Include <file>" reads another file (relative to the
// including file's directory). Names take Slurm hostlist expressions
// (common/hostlist.h).
//
// Reading gives a Fabric: every host gets one HCA per leaf it is listed
// under, described "<host> mlx5_<i>" so that the default HostNaming maps it
// back to the host (and rail i), and every switch-child pair becomes a cable
// at a configurable rate. The file carries no port numbers, so ports are
// counted out: a switch's ports towards its children come first, in the
// order they are listed, then its ports towards its parents. Levels follow
// from the shape (classify.h), never from the names.
//
// Writing gives what topology/tree in Slurm 22.05 accepts (checked against
// Debian's slurmctld 22.05.8, whose `scontrol show topology` gives back the
// levels and node sets written); see write_slurm_topology for how hosts
// cabled to several leaves are listed.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "fabric/fabric.h"
#include "fabric/link_rate.h"
#include "fabric/nvlink_domain.h"

namespace topo {

// The rate every cable gets: topology.conf records none Slurm uses.
inline constexpr LinkRate kSlurmTopologyDefaultRate{LinkWidth::X4, LinkSpeed::NDR};

// Names all Nodes= and Switches= of a file may expand to, together (with
// its includes): each hostlist is bounded on its own, but a few bytes per
// line can expand to a million hosts, and a fabric of billions of HCAs is
// no cluster's (a 100k-host, 8-rail cluster lists 800k).
inline constexpr uint64_t kMaxSlurmTopologyNames = 1 << 20;

// Reads a topology.conf; `filename` names it in errors and in the fabric's
// source ("slurm-topology:<filename>") and anchors relative Include paths.
// Throws ParseError naming the file, the line and what was expected for: a
// line that does not start with SwitchName=, an unknown key, a key given
// twice on one line, a malformed hostlist or LinkSpeed, a switch with both
// or neither of Nodes= and Switches=, a switch defined twice, a child switch
// no line defines, switches that form a cycle, an Include that cannot be
// read or includes its includer, a file with no switch at all, and one whose
// hostlists together expand past `max_names` (no name past it is written
// out).
Fabric read_slurm_topology(std::istream& in, const std::string& filename, LinkRate rate = kSlurmTopologyDefaultRate,
                           uint64_t max_names = kMaxSlurmTopologyNames);
Fabric read_slurm_topology_file(const std::string& path, LinkRate rate = kSlurmTopologyDefaultRate);

// Writes a topology.conf that Slurm's topology/tree accepts, bottom-up:
// leaves with Nodes= (compressed hostlists), then each level above with
// Switches=, each line's names sorted. A header comment says it was
// generated and from which source.
//
// topology/tree wants every host under exactly one leaf; a host under
// several leaves makes Slurm 22.05 log "Multiple leaf switches contain
// nodes" at every start. Hosts with several HCAs on different leaves (a
// rail-optimized fabric, or dual-homed hosts) are therefore listed under the
// leaf of their lowest-rail HCA only. That keeps locality exact for a
// rail-optimized fabric: the hosts of one rail-0 leaf share a leaf on every
// rail, so "same leaf" means the same thing on all rails. Leaves then left
// without hosts, and switches with nothing listed below them, are left out
// (Slurm rejects a switch with neither Nodes= nor Switches=) and named in
// the header.
//
// Switch names Slurm cannot take as they are (anything outside
// [A-Za-z0-9._-], or longer than 64 characters, as IB node descriptions
// often are) are replaced by "switch-<guid>" (or "switch-<n>" when the GUID
// is unknown), with a header line giving the original name.
//
// Throws FabricError when no host is cabled to a switch (nothing to write)
// or a host name cannot be a Slurm node name.
void write_slurm_topology(const Fabric& fabric, std::ostream& out);

// ---- topology/block: NVLink domains as Slurm blocks -------------------------
//
// A topology.conf for topology/block lists blocks and, optionally, the
// sizes jobs are planned in (Slurm 26.05 src/plugins/topology/block/):
//   BlockName=b01 Nodes=gpu[001-018]
//   BlockName=b02 Nodes=gpu[019-036]
//   BlockSizes=18,36
// BlockSizes are node counts: the first is the base block, each next one the
// base times a power of two (at most 2^15). The same syntax rules as above.

struct SlurmBlock {
  std::string name;
  std::vector<std::string> hosts;
  std::string file;  // where it was defined, for errors about its hosts
  int line = 0;
};

struct SlurmBlocks {
  std::vector<SlurmBlock> blocks;
  std::vector<int> block_sizes;  // empty: Slurm's default (the first block's size, times 1..16)
};

// Throws ParseError naming the file and line for: a line that is neither
// BlockName= nor BlockSizes=, an unknown key, a block without Nodes=, a block
// defined twice, a host in two blocks, BlockSizes that are not whole
// positive numbers or not the base times powers of two, a file with no block.
SlurmBlocks read_slurm_blocks(std::istream& in, const std::string& filename,
                              uint64_t max_names = kMaxSlurmTopologyNames);
// A topology.conf (BlockName= lines) or, for a name ending in .yaml or .yml,
// a topology.yaml (slurm_topology_yaml.h).
SlurmBlocks read_slurm_blocks_file(const std::string& path);
// Every block named once and every host in one block; throws ParseError
// naming the second block's file and line.
void check_unique_blocks(const SlurmBlocks& blocks);
// Checks BlockSizes as Slurm does; `where` and `line` name them in errors.
void check_block_sizes(const std::vector<int>& sizes, const std::string& where, int line);

// Gives the fabric NVLink domains from blocks: every host of a block
// claims the domain named by the block (no GPU records). Throws ParseError
// naming the block's file and line for a host the fabric does not have.
void attach_slurm_blocks(Fabric& fabric, const SlurmBlocks& blocks, const NvlinkSpec& spec);

// The blocks of the fabric's NVLink domains, for topology/block: one block
// per domain, named by the domain's block name when it came from a block,
// else "nvl<NN>" in domain order; BlockSizes from the smallest domain (the
// base) times powers of two up to the domain count. Hosts outside every
// domain are left out (Slurm warns "Blocks lack access to N nodes" and
// never gives them to a job that wants a block). Throws FabricError when the
// fabric has no domain or a host name cannot be a Slurm node name.
struct BlockPlan {
  std::vector<SlurmBlock> blocks;
  std::vector<int> block_sizes;
  std::vector<std::string> outside;  // hosts in no block
};
BlockPlan plan_slurm_blocks(const Fabric& fabric);
// topology.conf lines for topology/block: a header comment, BlockName=
// lines, BlockSizes=.
void write_slurm_blocks(const Fabric& fabric, std::ostream& out);

}  // namespace topo
