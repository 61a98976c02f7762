// Job-aware routing in the judge and the replay: the forwarding tables
// re-planned for the running multi-leaf jobs' rings (routing/job_routes.h)
// at every start and end of a multi-host job, as `topoctl route apply`
// would hand them to OpenSM, each plan holding `delay_s` after its event.
//
// JobAwareTables keeps the tables in force for a LiveJudge
// (live_judge.h): the judge reads them through paths(), and when a plan
// holds, the running jobs whose destinations it moves are routed again and
// judged beside the others on the new tables. judge() walks a finished
// schedule's starts and ends through it (judge_job_aware); the replay
// walks its own, so that runs are stretched by the slowdowns under the
// tables in force (ReplayOptions::job_aware). Placement is not affected:
// policies place on the base tables.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "comm_model/paths.h"
#include "fabric/fabric.h"
#include "routing/job_routes.h"
#include "simulation/live_judge.h"
#include "simulation/outcome.h"
#include "simulation/plan_memo.h"

namespace topo {

struct JobAwareOptions {
  double delay_s = 0;   // from a job's start or end until its plan's tables hold
  int max_changes = 0;  // the planner's churn cap (0: none)
  // Plans kept by the rings they were made for (plan_memo.h): a replay and
  // the judge of its schedule given the same memo plan each set of
  // running rings once. Null: every plan is made afresh.
  std::shared_ptr<PlanMemo> memo;
};

// How often the tables changed, and how much.
struct RerouteFigures {
  int reroutes = 0;          // plans whose tables differ from the plan before
  long entries_changed = 0;  // summed over reroutes: entries that differ from the plan before
  double span_s = 0;         // first start to last end of the multi-host jobs
  double per_hour() const { return span_s > 0 ? reroutes * 3600.0 / span_s : 0; }
  double entries_per_reroute() const { return reroutes > 0 ? static_cast<double>(entries_changed) / reroutes : 0; }
  // What no table could have helped (routing/ring_floor.h), over the
  // AllReduce jobs: those slower than `slow_above`, those of them that had
  // at some moment of their run a leaf with more cross-leaf ring flows than
  // uplinks (floor above one flow a cable), and the p95 slowdown were every
  // job whose floor stayed at one flow a cable unslowed (what the best
  // tables could reach on these placements, at most).
  double slow_above = 1.10;
  int slow_jobs = 0;
  int slow_jobs_floored = 0;
  double p95_at_floor = 1;
};

class JobAwareTables {
 public:
  // `fabric` carries the base static tables; it is copied. Throws
  // FabricError when its routing is not static.
  JobAwareTables(const Fabric& fabric, const JobAwareOptions& options);

  // The tables in force, for the live judge: its fabric is this object's
  // own copy, whose routing hold() changes.
  const PathIndex& paths() const { return *paths_; }

  // Multi-host jobs started or ended at `now`: a plan for the rings `live`
  // runs now, to hold at now + delay.
  void plan(double now, const LiveJudge& live);
  // When the next plan holds; infinity when none is waiting.
  double next_hold() const;
  // Every plan due by `now` holds (the last one counts): `live` routes
  // again the running jobs whose LIDs it moves. Call settle() after.
  void hold(double now, LiveJudge& live);

  const RerouteFigures& figures() const { return figures_; }
  // Per job id: the highest floor (routing/ring_floor.h) its ring had
  // among the rings planned for while it ran.
  const std::map<std::string, double>& floors() const { return floors_; }
  // "job-aware:ENGINE".
  std::string routing_name() const;

 private:
  Routing planned_tables(const std::vector<RingJob>& rings) const;
  void note_floors(const std::vector<RingJob>& rings);

  std::unique_ptr<Fabric> fabric_;  // on the heap: paths_ points at it
  std::unique_ptr<PathIndex> paths_;
  Routing base_;
  JobAwareOptions options_;
  Routing last_plan_;                           // for counting reroutes
  std::vector<int> planned_for_;                // the live judge's jobs last_plan_ was made for
  std::deque<std::pair<double, Routing>> due_;  // plans made, not yet holding, by when they hold
  RerouteFigures figures_;
  std::map<std::string, double> floors_;
  double first_event_s_ = -1;
};

// judge() on the tables re-planned for `schedule`'s jobs (`fabric`
// carries the base static tables), its routing named "job-aware:<base>".
// Runs the schedule did not stretch are stretched after the fact by the
// options' stretch, at each job's slowdown under the tables in force.
// Throws FabricError when the fabric's routing is not static.
PolicyOutcome judge_job_aware(const Fabric& fabric, const Schedule& schedule, const OutcomeOptions& options,
                              const JobAwareOptions& job_aware, RerouteFigures* figures = nullptr);

}  // namespace topo
