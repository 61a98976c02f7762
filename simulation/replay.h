// Replaying a trace on a fabric under one placement policy: a small batch
// scheduler (first come, first served, with EASY backfill as Slurm's
// sched/backfill does it) that asks the policy where each job goes.
//
// The scheduler, in short:
// - A job of g GPUs on hosts of G: one host with g GPUs when g <= G, else
//   ceil(g / G) whole hosts (`sbatch --nodes=N --gres=gpu:G`), so it holds
//   N x G GPUs. A job larger than the fabric is rejected.
// - Jobs run for the trace's duration on an ideal placement; with a Stretch
//   (stretch.h) a slower placement runs longer: while it runs, each job is
//   judged as judge() judges it (live_judge.h: again whenever a job
//   sharing one of its cables starts or ends), and its remaining work goes
//   at 1 / ((1 - share) + share x slowdown) of the trace's pace, so its end
//   moves and the jobs queued behind it wait for it. Without one, every
//   job runs the trace's duration and every policy replays the same work.
// - At every arrival and end, the queue is walked in submission order. The
//   first job that cannot start gets a reservation at the earliest time
//   enough hosts free up (counting hosts with enough free GPUs as running
//   jobs end); later jobs start only if they fit now and either end before
//   that time or leave the reserved hosts alone (counted, as EASY does).
// - The running jobs' traffic (placement/traffic.h), kept as jobs start and
//   end, is written into the FreeMap before a policy that reads it is asked.
// - Counting is checked before a policy is asked, so a policy only runs
//   when the job fits by count; a policy that still finds no room (hard
//   limits), or whose placement a DeferRule declines, leaves the job
//   queued.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "placement/defer.h"
#include "placement/search.h"
#include "simulation/job_aware.h"
#include "simulation/job_kinds.h"
#include "simulation/mix.h"
#include "simulation/outcome.h"
#include "simulation/schedule.h"
#include "simulation/stretch.h"
#include "simulation/trace.h"

namespace topo {

// Where a job goes, given what is free: one of placement/'s searches.
struct PlacementPolicy {
  std::string name;
  // Whether it reads the running jobs' traffic (FreeMap::load and
  // cable_flows): Slurm's policies do not, so the replay skips filling it.
  bool reads_traffic = false;
  // The last argument: the seam search's routes, which the replay keeps
  // for its tree (placement/seams.h); Slurm's policies do not read them.
  std::function<Placement(const SwitchTree&, const FreeMap&, const PlacementRequest&, SeamRoutes*)> place;
};

// "linear" (cons_tres alone: a best-fit run of consecutive nodes), "tree"
// (cons_tres with Slurm's topology/tree: the lowest switch that holds the
// job, best fit over its leaves), "block" (cons_tres with Slurm 26.05's
// topology/block over the fabric's NVLink domains, as `topoctl export
// --slurm block` writes them; a fabric without domains throws FabricError)
// or "topo-aware" (placement/search.h), for replays on `fabric`.
// Throws std::invalid_argument naming the known policies for any other name.
PlacementPolicy policy_named(std::string_view name, const Fabric& fabric);

// Whether a policy's jobs get the Slurm plugin's NCCL hints in their
// environment (topo-aware's do: NCCL_IB_QPS_PER_CONNECTION for rings that
// cross leaves under ECMP, plugin/engine/engine.h), so that a judge runs them
// with those hints (OutcomeOptions::ecmp_qps_hint). Slurm's own policies
// set none.
bool policy_sets_nccl_hints(std::string_view name);

// The request a trace job of `gpus` GPUs makes on hosts of `gpus_per_host`.
PlacementRequest job_request(int gpus, int gpus_per_host, Profile profile = Profile::AllReduce);
// The same job run on CPUs only: as many hosts, held whole (an exclusive
// job), no collectives and no NVLink (PlacementRequest::nvlink off).
PlacementRequest cpu_only_request(int gpus, int gpus_per_host);

struct ReplayOptions {
  int gpus_per_host = 8;
  // How each multi-host job communicates: drawn per job from the mix; the
  // placement is asked with that profile, and the schedule keeps it for
  // the judge. An empty mix gives every job `profile`.
  Mix mix;
  Profile profile = Profile::AllReduce;
  // Which jobs run on CPUs only and which ask for NVLink segments, drawn
  // per job; none by default.
  JobKinds kinds;
  double comm_duty = 0.5;                // every job's share of its run in collectives
  double message_bytes = kMessageBytes;  // what its collectives move
  size_t backfill_depth = 100;           // queued jobs looked at per pass, as Slurm's bf_max_job_test
  // Jobs whose best placement now is estimated slower than this wait for a
  // later pass (placement/defer.h), their share counted from the first
  // pass that deferred them; the trace's run time stands for their time
  // limit. Off by default. A deferred job at the head of the queue holds
  // EASY's reservation, as a job that does not fit would.
  DeferRule defer_rule;
  // Runs stretched by their slowdowns (off by default), judged as
  // `judging` says (its message size is message_bytes above).
  Stretch stretch;
  OutcomeOptions judging;
  // With a Stretch and the tree's fabric on static tables: job-aware
  // routing (job_aware.h), the running jobs judged on tables re-planned at
  // every start and end of a multi-host job, so their runs stretch by
  // their slowdowns on the tables in force. Policies still place on the
  // tree's tables. None: jobs are judged on the tree's tables.
  std::optional<JobAwareOptions> job_aware;
  // Called now and then with the share of jobs submitted so far; from the
  // replaying thread.
  std::function<void(double)> progress;
};

// The schedule the policy makes of the trace. scheduler["placement_*"]
// gives the policy's own time per call (mean, p50, p99 in µs, and calls);
// with a DeferRule, "placement_deferrals" counts the placements it
// declined and "deferred_jobs" the jobs they were of.
Schedule replay(const SwitchTree& tree, const Trace& trace, const PlacementPolicy& policy,
                const ReplayOptions& options);

}  // namespace topo
