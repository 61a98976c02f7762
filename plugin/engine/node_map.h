// Slurm's node table (names by Slurm node index, given once by
// topo_engine_set_nodes) mapped onto the fabric hosts of one snapshot.
// Every call after set_nodes speaks in node indices; the map turns them
// into fabric hosts and back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabric/fabric.h"
#include "placement/switch_tree.h"
#include "plugin/engine/engine_config.h"

namespace topo::engine {

constexpr size_t kNoNode = static_cast<size_t>(-1);

// Slurm's node table as set_nodes gave it: a name per node index, where
// Slurm had one.
struct NodeTable {
  std::vector<std::string> names;
  std::vector<bool> named;
  uint64_t generation = 0;  // counts set_nodes calls

  // The NodeNames of node indices, for records and ring strings.
  std::vector<std::string> names_of(const size_t* nodes, size_t count) const;
};

// Slurm's node table mapped onto one snapshot under one config: built once
// per change of any of the three, then read by index only.
struct NodeMap {
  std::vector<std::optional<NodeId>> host;  // per Slurm node index
  std::vector<size_t> node;                 // per fabric NodeId: Slurm node index, or kNoNode
  size_t unknown = 0;                       // named nodes with no fabric host
  std::string first_unknown;
  // What it was built from.
  int64_t snapshot_id = -1;
  uint64_t config_generation = 0, table_generation = 0;

  // The fabric host of a node index, if it has one.
  std::optional<NodeId> host_of(size_t node_index) const {
    return node_index < host.size() ? host[node_index] : std::nullopt;
  }
};

NodeMap build_node_map(const Fabric& fabric, const EngineConfig& config, const NodeTable& table);

// Nodes Slurm chose, in ring order: the best ring over the hosts the
// fabric knows, the others after them in node order (all of them in node
// order without a map; `tree`, the map's, is read only with one).
std::vector<size_t> ring_of_nodes(const SwitchTree* tree, const NodeMap* map, const size_t* nodes, size_t count);

// NCCL_IB_HCA for the job: the HCAs hwloc found closest to each host's
// GPUs, by rail; "" unless every host has them and they agree (one
// environment value serves every node).
std::string job_hcas(const Fabric& fabric, const std::vector<std::optional<NodeId>>& hosts);

}  // namespace topo::engine
