// Slurm's own choices, as the baselines replays compare topo-aware with.
// linear and tree reimplement Slurm 22.05.8's select/cons_tres (checked
// against its source and against a real slurmctld, tests/slurm/tree_check.sh),
// block Slurm 26.05.3's topology/block; all return hosts in Slurm's node
// order, which is also the ring order a job that takes SLURM_JOB_NODELIST
// as it comes would use.
//
// Slurm's node order: slurmctld sorts its node table by name, naturally
// (read_config.c _sort_node_record_table_ptr, strnatcmp; topology/tree ranks
// no nodes), whatever order slurm.conf lists them in. So node order here is
// the hosts' names under natural_less, not Fabric::hosts() (which for
// naming=interleaved goes leaf by leaf).
//
// What Slurm is asked: a request for `hosts` x `gpus_per_host` is
// `sbatch --nodes=hosts --gres=gpu:gpus_per_host`; a GPU-count request is
// `sbatch --nodes=1 --gres=gpu:gpus` (one host with that many free GPUs;
// min_gpus_per_host plays no part). A host is usable when eligible() says so
// for that per-host GPU count; hosts other jobs use in part are usable (no
// --exclusive). Node weights are all equal and CPUs are not modelled.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "placement/search.h"

namespace topo {

// The switch table topology/tree builds (topology_tree.c _validate_switches)
// from the topology.conf write_slurm_topology writes for a fabric: the file
// is written and read back, so both always agree on which switches Slurm
// sees, how hosts of several leaves (rails) are listed, and in what order.
struct SlurmSwitchTable {
  static constexpr uint32_t kUnreachable = std::numeric_limits<uint32_t>::max();
  struct Switch {
    std::string name;
    int level = 0;           // 0 for a leaf, else 1 + its highest child
    int parent = 0;          // the last switch listing it; 0 when none lists it, as in Slurm
    std::vector<int> nodes;  // the hosts below it, as ascending node indexes
  };
  std::vector<Switch> switches;                 // Slurm's switch index: topology.conf line order
  std::vector<std::vector<uint32_t>> distance;  // switch hops, kUnreachable between trees
  std::vector<NodeId> node_order;               // every host of the fabric, by node index
};

// Throws FabricError when write_slurm_topology does (no host cabled).
SlurmSwitchTable slurm_switch_table(const Fabric& fabric);

// Every host of the fabric in Slurm's node order (natural name order).
std::vector<NodeId> slurm_node_order(const Fabric& fabric);

// select/cons_tres without a topology plugin (job_test.c _eval_nodes): the
// usable hosts fall into runs of consecutive node indexes; the job takes the
// first run that holds it with the fewest hosts (best fit), or when none
// does, the largest run whole (the first on ties) and then again for the
// rest. Within a run it takes the first hosts. Slurm sizes runs by their
// free CPUs; with CPUs not modelled, a run is sized by its hosts.
Placement place_linear(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request);
// The same with the node order of a table built once per fabric.
Placement place_linear(const SlurmSwitchTable& table, const SwitchTree& tree, const FreeMap& free,
                       const PlacementRequest& request);

// select/cons_tres with TopologyPlugin=topology/tree (job_test.c
// _eval_nodes_topo): the highest-level switch with enough usable hosts
// below it bounds the job, then leaves are taken one at a time, each the
// best by _topo_choose_best_switch (nearest to those taken, then the leaf
// that holds the rest with the fewest usable hosts, else the one with the
// most), hosts of a leaf in node order.
Placement place_tree(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request);
// The same on a table built once per fabric (replays place many jobs).
Placement place_tree(const SlurmSwitchTable& table, const SwitchTree& tree, const FreeMap& free,
                     const PlacementRequest& request);

// ---- topology/block (Slurm 26.05) ------------------------------------------

// The blocks topology/block reads from the topology.conf write_slurm_blocks
// writes for a fabric's NVLink domains (plan_slurm_blocks): base blocks in
// file order, each its hosts as ascending node indexes; the base block's
// node count (BlockSizes' first) and the levels BlockSizes allows (size =
// base << level).
struct SlurmBlockTable {
  std::vector<std::vector<int>> bblocks;
  int bblock_nodes = 0;
  std::vector<int> levels;
  std::vector<NodeId> node_order;  // every host, by node index
  std::vector<char> in_block;      // by node index
};
// Throws FabricError when the fabric has no NVLink domain.
SlurmBlockTable slurm_block_table(const Fabric& fabric);

// select/cons_tres with topology/block (eval_nodes_block): a job (or each
// --segment of it, PlacementRequest::segment) goes to the aggregated block
// of the smallest configured size that fits it with the fewest usable
// nodes (the last of equals), and inside it base blocks are taken one at a
// time by _choose_best_bblock (fewest llblocks, then the one that holds the
// rest with the fewest usable nodes, else the one with the most), hosts of
// a base block in node order. A job none of whose usable hosts is in a
// block gets place_linear (topology_p_eval_nodes); a job with usable hosts
// in blocks never gets hosts outside them.
Placement place_block(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request);
Placement place_block(const SlurmBlockTable& table, const SwitchTree& tree, const FreeMap& free,
                      const PlacementRequest& request);

}  // namespace topo
