// Slurm's topology.yaml (25.05 and later): several named topologies in one
// file, each of one plugin type, read by Slurm's data_parser
// (src/plugins/data_parser/v0.0.4x/parsers.c, TOPOLOGY_CONF_ARRAY):
//
//   - topology: nvlink
//     cluster_default: true
//     block:
//       block_sizes: [18, 36]
//       blocks:
//         - block: b01
//           nodes: gpu[001-018]
//   - topology: fabric
//     cluster_default: false
//     tree:
//       switches:
//         - switch: leaf01
//           nodes: gpu[001-018]
//         - switch: spine01
//           children: leaf[01-02]
//
// The reader takes the block-style YAML such files are written in: block
// sequences and mappings by indentation, plain, 'single' and "double"
// quoted scalars, flow sequences of scalars ([18, 36]), comments, a
// leading "---". Anchors, tags, multi-line scalars and flow mappings are
// refused. Keys are Slurm's; an unknown key is an error naming its line.
#pragma once

#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "discovery/slurm_topology.h"
#include "fabric/fabric.h"

namespace topo {

inline constexpr uint64_t kMaxSlurmTopologyYamlBytes = uint64_t{64} << 20;

struct SlurmTopologyYaml {
  std::vector<std::string> topologies;  // every topology's name, in order
  std::string block_topology;           // the one read into `blocks`; empty when none
  SlurmBlocks blocks;
};

// The file's topologies and the blocks of its block topology (the
// cluster_default one when several are blocks, else the first). Throws
// ParseError naming the file, the line and the key for malformed YAML, an
// unknown key, a topology of no or several types, a block without nodes,
// bad block_sizes, and a file with no block topology.
// `max_names` bounds what the nodes: hostlists expand to, together.
SlurmTopologyYaml read_slurm_topology_yaml(std::istream& in, const std::string& filename,
                                           uint64_t max_names = kMaxSlurmTopologyNames);

// A topology.yaml with a block topology "nvlink" (the fabric's NVLink
// domains, plan_slurm_blocks; cluster_default) and a tree topology
// "fabric" (the switches write_slurm_topology lists). Throws FabricError
// as those do.
void write_slurm_topology_yaml(const Fabric& fabric, std::ostream& out);

}  // namespace topo
