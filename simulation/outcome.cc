#include "simulation/outcome.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <span>

#include <fmt/format.h>

#include "comm_model/estimate.h"
#include "comm_model/neighbours.h"
#include "comm_model/ring_steps.h"
#include "common/error.h"
#include "placement/ring_order.h"
#include "placement/traffic.h"
#include "simulation/job_aware.h"
#include "simulation/live_judge.h"
#include "simulation/percentile.h"

namespace topo {
namespace {

struct Event {
  double at;
  bool start;
  int job;  // index into the running jobs
};

// Every start and end in time order, ends first at equal times.
std::vector<Event> events_of(const std::vector<JudgedJob>& running) {
  std::vector<Event> events;
  events.reserve(running.size() * 2);
  for (size_t i = 0; i < running.size(); ++i) {
    events.push_back({running[i].job->start_s, true, static_cast<int>(i)});
    events.push_back({running[i].job->end_s, false, static_cast<int>(i)});
  }
  std::sort(events.begin(), events.end(),
            [](const Event& a, const Event& b) { return a.at != b.at ? a.at < b.at : a.start < b.start; });
  return events;
}

// Replays the starts and ends through the live judge, once for all the
// events of one moment; with job-aware `tables`, each moment re-plans them
// and every plan holds when it is due, between moments too. Leaves each
// job's slowdown x seconds.
void replay(LiveJudge& live, JobAwareTables* tables) {
  const std::vector<Event> events = events_of(live.jobs());
  for (size_t first = 0; first < events.size();) {
    size_t last = first;
    while (last < events.size() && events[last].at == events[first].at) ++last;
    const double now = events[first].at;
    for (double at = tables ? tables->next_hold() : now; at < now; at = tables->next_hold()) {
      tables->hold(at, live);
      live.settle(at);
    }
    for (size_t e = first; e < last; ++e) {
      if (events[e].start)
        live.start(events[e].job, now);
      else
        live.end(events[e].job, now);
    }
    if (tables) {
      tables->plan(now, live);
      tables->hold(now, live);
    }
    live.settle(now);
    first = last;
  }
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 1.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// Each multi-host job's slowdown over its run, and their means and tails.
void summarize_slowdowns(const std::vector<JudgedJob>& running, PolicyOutcome& out) {
  std::vector<double> allreduce, alltoall, all;
  std::map<std::string, std::vector<double>> by_profile;
  for (const JudgedJob& r : running) {
    JobOutcome& o = out.jobs[r.outcome];
    double ran = r.job->end_s - r.job->start_s;
    o.allreduce_slowdown = ran > 0 ? r.weighted / ran : o.allreduce_alone_slowdown;
    if (o.profile == Profile::AllReduce) allreduce.push_back(o.allreduce_slowdown);
    all.push_back(o.allreduce_slowdown);
    by_profile[std::string(name(o.profile))].push_back(o.allreduce_slowdown);
    alltoall.push_back(o.alltoall_slowdown);
  }
  out.multi_host_jobs = static_cast<int>(running.size());
  out.mean_allreduce_slowdown = mean(allreduce);
  out.p95_allreduce_slowdown = nearest_rank(allreduce, 0.95, 1.0);
  out.mean_alltoall_slowdown = mean(alltoall);
  out.mean_slowdown = mean(all);
  for (auto& [profile, v] : by_profile)
    out.profiles[profile] = {static_cast<int>(v.size()), mean(v), nearest_rank(v, 0.95, 1.0)};
}

// Makespan, waits, utilization and the allocations' structure over all jobs.
void summarize_schedule(const Schedule& schedule, const OutcomeOptions& options, PolicyOutcome& out) {
  double first_submit = std::numeric_limits<double>::infinity(), last_end = 0, gpu_seconds = 0, waits = 0, leaves = 0;
  for (size_t i = 0; i < schedule.jobs.size(); ++i) {
    const ScheduledJob& job = schedule.jobs[i];
    const JobOutcome& o = out.jobs[i];
    first_submit = std::min(first_submit, job.submit_s);
    last_end = std::max(last_end, job.end_s);
    gpu_seconds += job.gpus * (job.end_s - job.start_s);
    waits += o.wait_s;
    out.spine_ring_edges += o.spine_ring_edges;
    out.pod_ring_edges += o.pod_ring_edges;
    if (o.hosts > 1 && !o.cpu_only) leaves += o.leaves;
  }
  if (!schedule.jobs.empty()) {
    out.makespan_s = last_end - first_submit;
    out.mean_wait_s = waits / static_cast<double>(schedule.jobs.size());
    if (options.fabric_gpus > 0 && out.makespan_s > 0)
      out.gpu_utilization = gpu_seconds / (options.fabric_gpus * out.makespan_s);
  }
  if (out.multi_host_jobs > 0) out.mean_leaves = leaves / out.multi_host_jobs;
}

// Every job's run and completion time (wait + run), and their mean and
// p95. Runs the schedule did not stretch are stretched here when the
// options say so, at the job's slowdown over its run.
void summarize_completion(const Schedule& schedule, const OutcomeOptions& options, PolicyOutcome& out) {
  std::vector<double> jct;
  jct.reserve(schedule.jobs.size());
  for (size_t i = 0; i < schedule.jobs.size(); ++i) {
    JobOutcome& o = out.jobs[i];
    o.run_s = schedule.jobs[i].end_s - schedule.jobs[i].start_s;
    if (!schedule.runs_stretched) o.run_s *= options.stretch.factor(o.profile, o.allreduce_slowdown);
    o.jct_s = o.wait_s + o.run_s;
    jct.push_back(o.jct_s);
  }
  if (jct.empty()) return;
  out.mean_jct_s = std::accumulate(jct.begin(), jct.end(), 0.0) / static_cast<double>(jct.size());
  out.p95_jct_s = nearest_rank(jct, 0.95, 0.0);
}

}  // namespace

PolicyOutcome judge(const SwitchTree& tree, const Schedule& schedule, const OutcomeOptions& options,
                    JobAwareTables* tables) {
  const Fabric& fabric = tree.fabric();
  PolicyOutcome out;
  out.policy = schedule.policy;
  out.routing = routing_name(fabric.routing());
  if (fabric.routing().is_ecmp() && options.ecmp_qps_hint > fabric.routing().qps)
    out.routing += fmt::format(" ({} QPs on rings crossing leaves)", options.ecmp_qps_hint);
  out.rejected = schedule.rejected;
  out.scheduler = schedule.scheduler;
  out.jobs.reserve(schedule.jobs.size());

  const PathIndex& paths = tables ? tables->paths() : tree.paths();
  LiveJudge live(paths, options);
  for (const ScheduledJob& job : schedule.jobs) {
    for (NodeId h : job.ring)
      if (h >= fabric.node_count() || fabric.node(h).kind != NodeKind::Host)
        throw FabricError(fmt::format("job {}: node {} is not a host of the fabric", job.id, h));
    JobOutcome o = shape_of(tree, job);
    o.profile = job.ring.size() > 1 ? job.profile : Profile::None;
    o.segment = job.segment;
    o.segments_split = segments_split(fabric, job);
    o.cpu_only = job.cpu_only;
    if (has_collectives(job, options)) live.add(measure_alone(paths, job, o, out.jobs.size(), options));
    out.jobs.push_back(std::move(o));
  }
  replay(live, tables);
  summarize_slowdowns(live.jobs(), out);
  summarize_schedule(schedule, options, out);
  summarize_completion(schedule, options, out);
  out.nvlink = domain_figures(fabric, schedule);
  return out;
}

}  // namespace topo
