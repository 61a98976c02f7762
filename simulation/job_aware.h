// The judge under job-aware routing: the forwarding tables re-planned for
// the running multi-leaf jobs' rings (routing/job_routes.h) at every start
// and end of a multi-host job, as `topoctl route apply` would hand them to
// OpenSM, each plan holding `delay_s` after its event.
//
// Between two moments where the running set or the tables change, every
// running multi-host job is judged (judge(), simulation/outcome.h) beside
// the others on the tables in force; a job's slowdown is the time-weighted
// mean over its run. Placement is not affected: the schedule is the one
// placed on the base tables, and its runs are not stretched (a replay that
// stretches runs does so by the base tables' slowdowns).
#pragma once

#include <string>

#include "fabric/fabric.h"
#include "simulation/outcome.h"

namespace topo {

struct JobAwareOptions {
  double delay_s = 0;   // from a job's start or end until its plan's tables hold
  int max_changes = 0;  // the planner's churn cap (0: none)
};

// How often the tables changed, and how much.
struct RerouteFigures {
  int reroutes = 0;          // plans whose tables differ from those in force
  long entries_changed = 0;  // summed over reroutes: entries that differ from the tables before
  double span_s = 0;         // first start to last end of the multi-host jobs
  double per_hour() const { return span_s > 0 ? reroutes * 3600.0 / span_s : 0; }
  double entries_per_reroute() const { return reroutes > 0 ? static_cast<double>(entries_changed) / reroutes : 0; }
};

// `fabric` carries the base static tables. The result is judge()'s, with
// each multi-host job's slowdown and the summary judged as above and the
// routing named "job-aware:<base>". Throws FabricError when the fabric's
// routing is not static, std::invalid_argument when `options` stretch runs.
PolicyOutcome judge_job_aware(const Fabric& fabric, const Schedule& schedule, const OutcomeOptions& options,
                              const JobAwareOptions& job_aware, RerouteFigures* figures = nullptr);

}  // namespace topo
