#include "simulation/job_aware.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "common/error.h"
#include "placement/switch_tree.h"
#include "routing/job_routes.h"
#include "simulation/percentile.h"

namespace topo {
namespace {

bool judged_on_fabric(const ScheduledJob& job, const JobOutcome& o) {
  return job.ring.size() > 1 && o.profile != Profile::None && job.end_s > job.start_s;
}

// The judged jobs running at `t`, by index into the schedule.
std::vector<size_t> running_at(const Schedule& s, const std::vector<size_t>& judged, double t) {
  std::vector<size_t> out;
  for (size_t i : judged)
    if (s.jobs[i].start_s <= t && t < s.jobs[i].end_s) out.push_back(i);
  return out;
}

// Table entries for HCA LIDs that differ between two table sets.
long entries_between(const Fabric& f, const Routing& a, const Routing& b) {
  long n = 0;
  for (size_t s = 0; s < f.switches().size(); ++s)
    for (NodeId hca : f.hcas()) n += a.out_port(s, f.node(hca).lid) != b.out_port(s, f.node(hca).lid);
  return n;
}

// The jobs of one moment, all started together: what judge() says of each.
std::vector<double> judge_moment(const SwitchTree& tree, const Schedule& s, const std::vector<size_t>& jobs,
                                 const OutcomeOptions& options) {
  Schedule moment;
  moment.policy = s.policy;
  for (size_t i : jobs) {
    ScheduledJob j = s.jobs[i];
    j.submit_s = j.start_s = 0;
    j.end_s = 1;
    moment.jobs.push_back(std::move(j));
  }
  std::vector<double> out;
  for (const JobOutcome& o : judge(tree, moment, options).jobs) out.push_back(o.allreduce_slowdown);
  return out;
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 1.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// The summary judge() gives, over the new slowdowns.
void summarize(const std::vector<size_t>& judged, PolicyOutcome& out) {
  std::vector<double> allreduce, all;
  std::map<std::string, std::vector<double>> by_profile;
  for (size_t i : judged) {
    const JobOutcome& o = out.jobs[i];
    if (o.profile == Profile::AllReduce) allreduce.push_back(o.allreduce_slowdown);
    all.push_back(o.allreduce_slowdown);
    by_profile[std::string(name(o.profile))].push_back(o.allreduce_slowdown);
  }
  out.mean_allreduce_slowdown = mean(allreduce);
  out.p95_allreduce_slowdown = nearest_rank(allreduce, 0.95, 1.0);
  out.mean_slowdown = mean(all);
  for (auto& [profile, v] : by_profile)
    out.profiles[profile] = {static_cast<int>(v.size()), mean(v), nearest_rank(v, 0.95, 1.0)};
}

}  // namespace

PolicyOutcome judge_job_aware(const Fabric& fabric, const Schedule& schedule, const OutcomeOptions& options,
                              const JobAwareOptions& job_aware, RerouteFigures* figures) {
  if (!fabric.routing().is_static())
    throw FabricError("job-aware routing re-plans static tables; the fabric routes " + routing_name(fabric.routing()));
  if (options.stretch.on)
    throw std::invalid_argument(
        "job-aware routing is judged after the replay, on runs as the schedule has them: no stretch");
  PolicyOutcome out = judge(SwitchTree(fabric), schedule, options);
  out.routing = "job-aware:" + (fabric.routing().engine.empty() ? std::string("static") : fabric.routing().engine);

  std::vector<size_t> judged;
  std::vector<double> events;
  for (size_t i = 0; i < schedule.jobs.size(); ++i)
    if (judged_on_fabric(schedule.jobs[i], out.jobs[i])) {
      judged.push_back(i);
      events.push_back(schedule.jobs[i].start_s);
      events.push_back(schedule.jobs[i].end_s);
    }
  std::sort(events.begin(), events.end());
  events.erase(std::unique(events.begin(), events.end()), events.end());
  RerouteFigures fig;
  if (!events.empty()) fig.span_s = events.back() - events.front();

  // The plan made at each event, for the jobs running from then on.
  // Each plan is compared with the one before it, by index: a pointer into
  // `plans` would dangle when push_back reallocates.
  std::vector<Routing> plans;
  plans.reserve(events.size());
  for (double e : events) {
    std::vector<RingJob> rings;
    for (size_t i : running_at(schedule, judged, e))
      rings.push_back(RingJob{schedule.jobs[i].id, schedule.jobs[i].ring});
    plans.push_back(plan_job_routes(fabric, fabric.routing(), rings, RoutePlanOptions{job_aware.max_changes}).routing);
    const Routing& before = plans.size() > 1 ? plans[plans.size() - 2] : fabric.routing();
    const long changed = entries_between(fabric, before, plans.back());
    fig.reroutes += changed > 0;
    fig.entries_changed += changed;
  }

  // Moments: every event, and every event plus the delay (when its plan begins to hold).
  std::vector<double> moments = events;
  for (double e : events) moments.push_back(e + job_aware.delay_s);
  std::sort(moments.begin(), moments.end());
  moments.erase(std::unique(moments.begin(), moments.end()), moments.end());
  std::vector<double> weighted(schedule.jobs.size(), 0.0);
  std::optional<Fabric> routed;  // the tables in force; `tree` reads it
  std::optional<SwitchTree> tree;
  int tree_plan = -2;
  for (size_t k = 0; k + 1 < moments.size(); ++k) {
    const double from = moments[k], to = moments[k + 1];
    const std::vector<size_t> jobs = running_at(schedule, judged, from);
    if (jobs.empty()) continue;
    // The latest plan whose delay has passed at `from` (-1: the base tables).
    const auto held = std::upper_bound(events.begin(), events.end(), from - job_aware.delay_s + 1e-9);
    const int plan = static_cast<int>(held - events.begin()) - 1;
    if (plan != tree_plan) {
      tree.reset();
      routed.emplace(fabric);
      if (plan >= 0) routed->set_routing(plans[static_cast<size_t>(plan)]);
      tree.emplace(*routed);
      tree_plan = plan;
    }
    const std::vector<double> slow = judge_moment(*tree, schedule, jobs, options);
    for (size_t j = 0; j < jobs.size(); ++j) weighted[jobs[j]] += slow[j] * (to - from);
  }
  for (size_t i : judged)
    out.jobs[i].allreduce_slowdown = weighted[i] / (schedule.jobs[i].end_s - schedule.jobs[i].start_s);
  summarize(judged, out);
  if (figures) *figures = fig;
  return out;
}

}  // namespace topo
