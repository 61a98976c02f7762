// What a job asks of the fabric, and what the cluster has free for it.
#pragma once

#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "comm_model/link_load.h"
#include "fabric/fabric.h"

namespace topo {

// The job's dominant communication, which decides how a candidate is judged
// and how its ring is ordered.
enum class Profile : uint8_t {
  AllReduce,  // data parallel: ring AllReduce of the gradients
  AllToAll,   // MoE expert parallel: every rank to every rank
  Mixed,      // AllReduce and AllToAll, weighted equally
  None,       // no collectives worth modelling: structure and fit only
  Fsdp,       // sharded data parallel: ring AllGather and ReduceScatter
  Pipeline,   // pipeline parallel: point to point, stage to next stage
};

std::string_view name(Profile p);
// Every profile, in declaration order; for listing and parsing.
inline constexpr Profile kProfiles[] = {Profile::AllReduce, Profile::AllToAll, Profile::Mixed,
                                        Profile::None,      Profile::Fsdp,     Profile::Pipeline};

// The one size a job's collectives are placed and judged at: 256 MiB, a
// gradient bucket or an FSDP layer shard of a large model, where time is
// bandwidth-bound (latency adds under 1% on a 400 Gb/s host).
inline constexpr double kMessageBytes = 256.0 * 1024 * 1024;

// A job already running, whose traffic the search and the estimate avoid.
struct RunningJob {
  std::vector<NodeId> ring;  // its hosts, in ring order
  Profile profile = Profile::AllReduce;
  int gpus_per_host = 1;
  double duty = 0.5;  // share of its run spent in collectives, in (0, 1]
};
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
  double message_bytes = kMessageBytes;

  // Hard limits.
  std::optional<int> max_leaves;
  bool one_pod = false;
  bool one_rail_group = false;  // rail-optimized fabrics: hosts on the same leaf group

  // NVLink domains (fabric/nvlink_domain.h, placement/domain_fit.h): every
  // `segment` consecutive hosts of the ring inside one domain, or the job
  // waits; 0: no segments. A whole-host job only.
  int segment = 0;
  // Whether the job's ranks talk over NVLink: false for CPU-only jobs and
  // jobs that ask for none, which go outside the domains where they can.
  bool nvlink = true;

  // GPUs per host the job will run, for the model.
  int ranks_per_host() const { return hosts > 0 ? gpus_per_host : min_gpus_per_host; }

  // Field by field, every field: a cache keyed on requests (IdleSlowdowns)
  // tells apart any two a search could answer differently.
  auto operator<=>(const PlacementRequest&) const = default;
};

class EstimateMemo;  // placement/objective.h

// The cluster's state as the scheduler sees it at one moment.
struct FreeMap {
  // Free GPUs per host, indexed by NodeId; hosts absent or at 0 are busy.
  std::vector<int> free_gpus;
  std::set<NodeId> avoid_hosts;  // drained, failing health checks
  std::set<LinkId> avoid_links;  // links an admin took out of service
  // Running jobs' traffic (placement/traffic.h fills the last two from the
  // first): their rings and profiles; their average Gb/s on each cable, what
  // the estimate subtracts from the room of a cable and tier 3 of the
  // objective reads on a leaf's uplinks; and under static routing, their
  // flows on each directed switch-to-switch cable (routing/route.h
  // directed_cable), weighted by duty, where the seam search keeps the
  // job's own cross-leaf flows off.
  std::vector<RunningJob> running;
  BackgroundLoad load;
  std::vector<double> cable_flows;
  double flows_on(int directed) const {
    return directed < static_cast<int>(cable_flows.size()) ? cable_flows[directed] : 0;
  }

  // The estimates of rings already scored on this `load`, kept across
  // decisions by an owner that empties it whenever `load` changes (the
  // Slurm engine's); nullptr: none.
  EstimateMemo* estimates = nullptr;

  // Every host of the fabric free with `gpus` GPUs.
  static FreeMap all_free(const Fabric& fabric, int gpus);
  int free(NodeId host) const { return host < free_gpus.size() ? free_gpus[host] : 0; }
};

}  // namespace topo
