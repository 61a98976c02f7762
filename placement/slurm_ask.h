// What the Slurm baselines (slurm_policy.h) share: what sbatch asks of
// Slurm for a request, the hosts Slurm's node_map holds for it, and a
// chosen set of node indexes made into a placement in node order.
#pragma once

#include <string>
#include <vector>

#include <fmt/format.h>

#include "placement/search.h"

namespace topo::slurm_detail {

Placement infeasible(std::string why);

// What sbatch asks of Slurm for a request: --nodes=N --gres=gpu:G.
struct SlurmAsk {
  int nodes = 0;
  int gpus_per_node = 0;
  PlacementRequest per_host;  // the same as whole hosts, for eligible()
  std::string text() const { return fmt::format("--nodes={} --gres=gpu:{}", nodes, gpus_per_node); }
};
SlurmAsk slurm_ask(const PlacementRequest& request);

// The hosts Slurm's node_map holds for the job (_select_nodes drops those
// that cannot run it), by node index; `count` of them.
std::vector<char> usable_nodes(const std::vector<NodeId>& order, const SwitchTree& tree, const FreeMap& free,
                               const SlurmAsk& ask, int& count);

std::string too_few(int usable, const SlurmAsk& ask);

// Hosts (node indexes, any order) into a placement in node order, scored,
// with `why` as its reason.
Placement finish(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request, const SlurmAsk& ask,
                 const std::vector<NodeId>& order, std::vector<int> chosen, std::string why);

}  // namespace topo::slurm_detail
