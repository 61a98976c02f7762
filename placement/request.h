// What a job asks of the fabric, and what the cluster has free for it.
#pragma once

#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "comm_model/link_load.h"
#include "topology/fabric.h"

namespace topo {

// The job's dominant communication, which decides how a candidate is judged
// and how its ring is ordered.
enum class Profile : uint8_t {
  AllReduce,  // data parallel: ring AllReduce of the gradients
  AllToAll,   // MoE expert parallel: every rank to every rank
  Mixed,      // both, weighted equally
  None,       // no collectives worth modelling: structure and fit only
};

std::string_view name(Profile p);
std::optional<Profile> parse_profile(std::string_view text);

struct PlacementRequest {
  // Whole hosts, the common case for training: `hosts` x `gpus_per_host`.
  int hosts = 0;
  int gpus_per_host = 0;
  // Or a GPU count, at least `min_gpus_per_host` on every host used (used
  // when `hosts` is 0).
  int gpus = 0;
  int min_gpus_per_host = 1;

  Profile profile = Profile::AllReduce;
  // Message size the profile's collective is judged at.
  double message_bytes = 256.0 * 1024 * 1024;

  // Hard limits.
  std::optional<int> max_leaves;
  bool one_pod = false;
  bool one_rail_group = false;  // rail-optimized fabrics: hosts on the same leaf group

  // GPUs per host the job will run, for the model.
  int ranks_per_host() const { return hosts > 0 ? gpus_per_host : min_gpus_per_host; }
};

// The cluster's state as the scheduler sees it at one moment.
struct FreeMap {
  // Free GPUs per host, indexed by NodeId; hosts absent or at 0 are busy.
  std::vector<int> free_gpus;
  std::set<NodeId> avoid_hosts;    // drained, failing health checks
  std::set<LinkId> avoid_links;    // links an admin took out of service
  BackgroundLoad load;             // running jobs' traffic

  // Every host of the fabric free with `gpus` GPUs.
  static FreeMap all_free(const Fabric& fabric, int gpus);
  int free(NodeId host) const { return host < free_gpus.size() ? free_gpus[host] : 0; }
};

}  // namespace topo
