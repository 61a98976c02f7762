// Deferring a job whose best placement now would run slow: the scheduler
// leaves it queued and asks again at its next pass (a job ends or
// arrives), for at most a share of its time limit, then starts it on the
// best hosts it has. Slurm has no such rule: a job starts as soon as
// enough nodes are free, whichever they are.
//
// The share is counted from the first pass that deferred the job, not
// from its submission: the time it queued for lack of hosts is not what
// deferring costs it. On a saturated cluster that difference is the rule:
// every job has queued longer than its share by the time enough hosts are
// free, and the hosts then free are the scattered ones the last jobs left,
// so a share counted from submission never holds a job back where it
// matters most (measured: README, "Deferring slow placements").
//
// Why it pays on a busy cluster: a job that starts the moment it fits by
// count often gets the last free host of several leaves (no choice of
// hosts, only of their ring order), and under static routing its
// cross-leaf flows queue on the uplinks of the jobs around it. A few
// minutes later another job ends and the same job fits on fewer leaves,
// beside less traffic. What it bought in the routing goal's replays, and
// what it cost in waiting: README, "Static routing: the routing goal".
//
// The rule reads the model's estimate of the placement (Score::slowdown,
// beside the running jobs' traffic), so placements without one (Slurm's
// own policies, single-host jobs) are never deferred; and it measures it
// against the job's best on an idle fabric, which no wait can beat: a
// 64-host AllToAll on an oversubscribed fabric is slow anywhere, and
// holding it back would cost its wait and buy nothing.
#pragma once

#include <functional>
#include <string>

#include "placement/search.h"

namespace topo {

struct DeferRule {
  // How much slower than its best on an idle fabric a job's best
  // placement now may be before the job waits (1.10: 10%); 0 never
  // defers (the default: deferring trades a job's start for its speed, an
  // admin's choice).
  double above_slowdown = 0;
  // The longest a job waits for a better placement, from the first pass
  // that deferred it, as a share of its time limit (the replay: of its run
  // time, the trace's only figure).
  double max_wait_share = 1.0;

  bool enabled() const { return above_slowdown > 0; }
};

// Whether `placement`, found for a job with a time limit of
// `time_limit_s` that has been deferred for `deferred_s` so far (0 at the
// first pass that would defer it; the caller keeps when that was), should
// be declined for now: its estimated slowdown is above
// rule.above_slowdown x the same job's best placement on the idle fabric
// (>= 1), which `idle_slowdown` gives: it is asked only for a placement
// slow enough that the answer matters, since finding it is a search.
// Never for an infeasible placement, one without an estimate, or one of a
// single host.
bool defer(const DeferRule& rule, const Placement& placement, const std::function<double()>& idle_slowdown,
           double deferred_s, double time_limit_s);

// Why a rule is not usable ("" when it is): a threshold that is neither 0
// nor above 1, a share that is not positive and finite.
std::string defer_rule_problem(const DeferRule& rule);

}  // namespace topo
