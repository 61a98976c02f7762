// How well a schedule served its jobs on a fabric: per job, the structure of
// its allocation and what its collectives cost against the ideal, judged
// with the traffic of the jobs running beside it; per policy, the summary.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "placement/switch_tree.h"
#include "simulation/schedule.h"

namespace topo {

struct JobOutcome {
  std::string id;
  int gpus = 0;
  int hosts = 0;
  double wait_s = 0;
  int leaves = 0;            // distinct home leaves of its hosts
  int pods = 0;
  int spines = 0;            // spine and core switches its ring traffic crosses
  int spine_ring_edges = 0;  // ring edges between hosts of different leaves
  int pod_ring_edges = 0;    // ... of different pods (they also cross the core)
  // AllReduce (ring, in the job's ring order) time over the ideal (the same
  // hosts alone on a non-blocking fabric), averaged over the job's run time
  // weighted by time, with the other jobs' traffic on shared cables as it
  // was while they ran beside it. 1 for single-host jobs.
  double allreduce_slowdown = 1;
  double allreduce_alone_slowdown = 1;  // the same, with no other job running
  double alltoall_slowdown = 1;         // AllToAll alone on the fabric, over its ideal
};

struct PolicyOutcome {
  std::string policy;
  std::vector<JobOutcome> jobs;      // in the schedule's order
  std::vector<std::string> rejected;
  std::map<std::string, double> scheduler;

  // Summary, over all jobs unless said otherwise.
  int multi_host_jobs = 0;
  double mean_allreduce_slowdown = 1;  // multi-host jobs
  double p95_allreduce_slowdown = 1;   // multi-host jobs
  double mean_alltoall_slowdown = 1;   // multi-host jobs
  long spine_ring_edges = 0;           // summed over jobs
  long pod_ring_edges = 0;
  double mean_leaves = 0;              // multi-host jobs
  double makespan_s = 0;               // first submission to last end
  double gpu_utilization = 0;          // GPU-seconds run / (fabric GPUs x makespan)
  double mean_wait_s = 0;
};

struct OutcomeOptions {
  double message_bytes = 1024.0 * 1024 * 1024;  // AllReduce / AllToAll size judged
  // Share of its run time a job spends in collectives: its traffic on a
  // shared cable is its bytes over its ideal time times this.
  double comm_duty = 0.5;
  int fabric_gpus = 0;                           // for utilization
};

// Throws FabricError for a job on a host the tree's fabric does not have.
PolicyOutcome judge(const SwitchTree& tree, const Schedule& schedule, const OutcomeOptions& options);

}  // namespace topo
