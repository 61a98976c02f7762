// How well a schedule served its jobs on a fabric: per job, the structure of
// its allocation and what its collectives cost against the ideal, judged
// with the traffic of the jobs running beside it; per policy, the summary.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "comm_model/ring_steps.h"
#include "placement/switch_tree.h"
#include "simulation/domain_figures.h"
#include "simulation/schedule.h"
#include "simulation/stretch.h"

namespace topo {

struct JobOutcome {
  std::string id;
  Profile profile = Profile::AllReduce;  // how it communicates; None for single-host jobs
  int gpus = 0;
  int hosts = 0;
  std::vector<std::string> ring;  // its hosts' names in ring order (for pictures)
  double wait_s = 0;
  int free_hosts_at_start = -1;  // ScheduledJob's; equal to `hosts`: it had no choice of hosts
  int leaves = 0;                // distinct home leaves of its hosts
  int pods = 0;
  int spines = 0;            // spine and core switches its traffic crosses
  int spine_ring_edges = 0;  // ring edges between hosts of different leaves
  int pod_ring_edges = 0;    // ... of different pods (they also cross the core)
  // Its profile's collectives (placement/traffic.h profile_requests: ring
  // AllReduce for an allreduce job, AllGather + ReduceScatter for fsdp, ...)
  // in the job's ring order, routed as the fabric routes: their time over
  // the ideal (the same hosts alone on a non-blocking fabric), averaged
  // over the job's run weighted by time, with the traffic of the jobs
  // running beside it at each moment as their neighbours
  // (comm_model/neighbours.h: per-flow max-min). 1 for single-host jobs.
  // The key keeps its old name: for allreduce jobs it is exactly that.
  double allreduce_slowdown = 1;
  double allreduce_alone_slowdown = 1;  // the same, with no other job running
  double alltoall_slowdown = 1;         // AllToAll alone on the fabric, over its ideal, whatever the profile
  // How long it ran (stretched by its slowdown when the replay or the judge
  // stretches runs, simulation/stretch.h), and its completion time: wait
  // plus run.
  double run_s = 0;
  double jct_s = 0;
  // NVLink domains (simulation/domain_figures.h): the segment size it asked
  // for (0: none) and how many of its segments were split across domains;
  // whether it ran on CPUs only (no collectives, not counted as GPU work).
  int segment = 0;
  int segments_split = 0;
  bool cpu_only = false;
};

// A profile's jobs in one outcome.
struct ProfileSummary {
  int jobs = 0;
  double mean_slowdown = 1;
  double p95_slowdown = 1;
};

struct PolicyOutcome {
  std::string policy;
  std::string routing;           // routing_name() of the fabric judged on, and the QPS hint if any
  std::vector<JobOutcome> jobs;  // in the schedule's order
  std::vector<std::string> rejected;
  std::map<std::string, double> scheduler;

  // Summary, over all jobs unless said otherwise.
  int multi_host_jobs = 0;
  double mean_allreduce_slowdown = 1;              // multi-host allreduce-profile jobs
  double p95_allreduce_slowdown = 1;               // multi-host allreduce-profile jobs
  double mean_alltoall_slowdown = 1;               // multi-host jobs, AllToAll alone
  double mean_slowdown = 1;                        // multi-host jobs, each by its own profile
  std::map<std::string, ProfileSummary> profiles;  // by profile name, multi-host jobs
  long spine_ring_edges = 0;                       // summed over jobs
  long pod_ring_edges = 0;
  double mean_leaves = 0;      // multi-host jobs
  double makespan_s = 0;       // first submission to last end
  double gpu_utilization = 0;  // GPU-seconds run / (fabric GPUs x makespan)
  double mean_wait_s = 0;
  double mean_jct_s = 0;  // job completion time: wait + run, every job
  double p95_jct_s = 0;
  // On a fabric with NVLink domains: free whole domains per decision,
  // segments split, CPU-only jobs (nvlink.domains is 0 otherwise).
  DomainFigures nvlink;
};

// Tensor-parallel bytes per data-parallel byte of a segmented job
// (simulation/domain_judge.h: Megatron-LM's GPT-3 175B).
inline constexpr double kSegmentTraffic = 28;

struct OutcomeOptions {
  double message_bytes = kMessageBytes;  // each collective's size, as placement asks it
  int fabric_gpus = 0;                   // for utilization
  // Under ECMP routing: the queue pairs per connection that jobs whose ring
  // crosses leaves run with, because the policy put NCCL_IB_QPS_PER_CONNECTION
  // in their environment (the Slurm plugin's EcmpQpsPerConnection, for
  // topo-aware). Such a job is judged with max(this, the fabric's QPS), the
  // others with the fabric's. 0: no hint, every job keeps the fabric's.
  int ecmp_qps_hint = 0;
  // How a job shares its cables with the jobs running beside it
  // (comm_model/ring_steps.h): per flow, with every job joined to it
  // through shared cables, however far (the default: within a few percent
  // of SimGrid, tests/simgrid/simgrid_check.cc); on average with its
  // direct neighbours; or its rings step by step beside theirs (each of a
  // neighbour's collectives as a job of its own, all starting with it),
  // slower to judge. The last two leave out the neighbours' own neighbours.
  Sharing sharing = Sharing::Flows;
  // Per flow: step the rings where that is cheap and exact (jobs that
  // always send, few sends: comm_model/ring_steps.h kStepSends); false
  // keeps the per-flow bounds everywhere.
  bool step_rings = true;
  // Runs stretched by their slowdowns (simulation/stretch.h) after the
  // fact, for schedules whose runs were not (a real cluster's): each run
  // times its factor at its slowdown over the run, nothing moved in time.
  // A schedule the replay stretched already is not stretched again.
  Stretch stretch;
  // On a fabric with NVLink domains: the tensor-parallel AllReduce inside
  // each segment of a segmented job, in bytes per byte of `message_bytes`
  // (simulation/domain_judge.h, where the default comes from); 0: none.
  double segment_traffic = kSegmentTraffic;
};

class JobAwareTables;

// Throws FabricError for a job on a host the tree's fabric does not have.
// With `tables` (job_aware.h), jobs are judged on the tables it keeps in
// force, re-planned at every start and end (judge_job_aware).
PolicyOutcome judge(const SwitchTree& tree, const Schedule& schedule, const OutcomeOptions& options,
                    JobAwareTables* tables = nullptr);

}  // namespace topo
