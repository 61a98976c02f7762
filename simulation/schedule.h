// Where and when a replayed job sequence ran: the output of the simulator's
// scheduler, or of a real Slurm cluster replaying the same trace.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fabric/fabric.h"
#include "placement/request.h"

namespace topo {

struct ScheduledJob {
  std::string id;
  int gpus = 0;  // GPUs the job ran on
  double submit_s = 0;
  double start_s = 0;
  double end_s = 0;
  std::vector<NodeId> ring;              // its hosts, in the ring order the job used
  std::vector<int> host_gpus;            // GPUs used on each host, same order
  Profile profile = Profile::AllReduce;  // how it communicates (simulation/mix.h)
  double duty = 0.5;                     // share of its run spent in collectives
  // Hosts with the GPUs it asks of each free when it started, its own
  // included; -1 when not known (a real cluster's schedule). As many as it
  // took: the policy had no choice of hosts, only of their ring order.
  int free_hosts_at_start = -1;
  // What it asked of the NVLink domains (simulation/job_kinds.h): every
  // `segment` consecutive hosts of its ring in one domain (0: no segments);
  // a CPU-only job holds its hosts whole (host_gpus: all their GPUs) but
  // runs none of them (gpus is 0).
  int segment = 0;
  bool cpu_only = false;
};

struct Schedule {
  std::string policy;  // "linear", "tree", "topo-aware"
  std::vector<ScheduledJob> jobs;
  // Jobs the policy could never place (larger than the fabric), by id.
  std::vector<std::string> rejected;
  // Figures about the scheduler itself, by name: the simulator's placement
  // times ("placement_mean_us", ...) or a real slurmctld's sdiag figures.
  std::map<std::string, double> scheduler;
  // Whether runs were stretched by their slowdowns as the schedule was made
  // (simulation/stretch.h): the simulator's, unless --no-stretch.
  bool runs_stretched = false;
};

}  // namespace topo
