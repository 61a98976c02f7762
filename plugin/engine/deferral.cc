#include "plugin/engine/deferral.h"

#include <optional>

#include <fmt/format.h>

#include "placement/defer.h"

namespace topo::engine {

namespace {

// The job's best estimated slowdown with every host Slurm knows free and
// nothing running: what no wait can beat (placement/defer.h). 1 when that
// search finds nothing or has no estimate.
double idle_slowdown(Engine& e, const NodeMap& map, const Question& q) {
  const PlacementRequest request = request_of(q);
  return e.idle_slowdowns.of(request, [&] {
    FreeMap idle;
    idle.free_gpus.assign(e.fabric->node_count(), 0);
    for (const std::optional<NodeId>& h : map.host)
      if (h) idle.free_gpus[*h] = static_cast<int>(q.gpus_per_host);
    SearchOptions options;
    options.weights = e.config.weights;
    options.with_reasons = false;
    return place(*e.tree, idle, request, options);
  });
}

// A job cancelled while deferred never starts, so its entry in the ledger
// would stay: past kKeptDeferrals entries, those of jobs first deferred
// over a week ago go (a week past any share a job waiting for a placement
// is likely to have). The same for the reasons jobs were held back for.
constexpr size_t kKeptDeferrals = 10000;
constexpr double kWeek_s = 7 * 24 * 3600.0;

void forget_stale_deferrals(Engine& e, double now_s) {
  if (e.deferred.size() < kKeptDeferrals) return;
  e.deferred.forget_older_than(now_s, kWeek_s);
}

}  // namespace

std::string deferral(Engine& e, const NodeMap& map, const Question& q, const topo_engine_job& job,
                     const Placement& best) {
  const DeferRule& rule = e.config.defer;
  if (job.time_limit_s <= 0) return "";
  const double deferred_s = e.deferred.deferred_s(job.job_id, job.now_s);
  double idle = 1;
  if (!defer(
          rule, best, [&] { return idle = idle_slowdown(e, map, q); }, deferred_s, job.time_limit_s))
    return "";
  if (!e.deferred.deferred(job.job_id)) {
    forget_stale_deferrals(e, job.now_s);
    e.deferred.note(job.job_id, job.now_s);
  }
  return fmt::format(
      "deferred: its best placement now is estimated at {:.2f}x its ideal, more than "
      "DeferAbove={} times its best on the idle fabric ({:.2f}x); deferred for {:.0f} s of {:.0f} "
      "(DeferShare={} of a time limit of {:.0f} s)",
      best.score.slowdown, rule.above_slowdown, idle, deferred_s, rule.max_wait_share * job.time_limit_s,
      rule.max_wait_share, job.time_limit_s);
}

void note_held_back(Engine& e, const topo_engine_job& job, std::string why) {
  if (e.held_back.size() >= kKeptDeferrals)
    std::erase_if(e.held_back, [&](const auto& entry) { return job.now_s - entry.second.at_s > kWeek_s; });
  e.held_back[job.job_id] = HeldBack{std::move(why), job.now_s};
}

std::string starts(Engine& e, uint32_t job_id) {
  e.deferred.forget(job_id);
  auto it = e.held_back.find(job_id);
  if (it == e.held_back.end()) return "";
  std::string why = std::move(it->second.why);
  e.held_back.erase(it);
  return why;
}

}  // namespace topo::engine
