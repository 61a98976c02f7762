#include "simulation/replay.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "placement/defer.h"
#include "placement/deferral_ledger.h"
#include "placement/slurm_policy.h"
#include "placement/traffic.h"
#include "simulation/percentile.h"

namespace topo {

PlacementPolicy policy_named(std::string_view name, const Fabric& fabric) {
  using Request = const PlacementRequest&;
  // Slurm's switch table and node order, built once for the whole replay.
  if (name == "linear" || name == "tree") {
    auto table = std::make_shared<const SlurmSwitchTable>(slurm_switch_table(fabric));
    if (name == "linear")
      return {"linear", false, [table](const SwitchTree& t, const FreeMap& f, Request r, SeamRoutes*) {
                return place_linear(*table, t, f, r);
              }};
    return {"tree", false, [table](const SwitchTree& t, const FreeMap& f, Request r, SeamRoutes*) {
              return place_tree(*table, t, f, r);
            }};
  }
  if (name == "topo-aware") {
    // The replay keeps hosts and ring order, not the reasons: like the
    // Slurm plugin, it does not word them for every decision.
    SearchOptions options;
    options.with_reasons = false;
    return {"topo-aware", true, [options](const SwitchTree& t, const FreeMap& f, Request r, SeamRoutes* routes) {
              return place(t, f, r, options, routes);
            }};
  }
  throw std::invalid_argument(fmt::format("unknown policy '{}'; expected linear, tree or topo-aware", name));
}

bool policy_sets_nccl_hints(std::string_view name) { return name == "topo-aware"; }

PlacementRequest job_request(int gpus, int gpus_per_host, Profile profile) {
  PlacementRequest r;
  r.profile = gpus <= gpus_per_host ? Profile::None : profile;
  r.hosts = gpus <= gpus_per_host ? 1 : (gpus + gpus_per_host - 1) / gpus_per_host;
  r.gpus_per_host = std::min(gpus, gpus_per_host);
  return r;
}

namespace {

struct Job {
  const TraceJob* trace;
  PlacementRequest request;
};

struct Run {
  double end;
  size_t schedule_index;
  bool operator<(const Run& o) const { return end != o.end ? end < o.end : schedule_index < o.schedule_index; }
};

// The cluster as the scheduler tracks it: free GPUs per host, and how many
// usable hosts have each count free, so that "does it fit" costs O(G).
class Cluster {
 public:
  Cluster(const SwitchTree& tree, int gpus_per_host) : G_(gpus_per_host) {
    const Fabric& fabric = tree.fabric();
    free_.free_gpus.assign(fabric.node_count(), 0);
    free_by_count_.assign(G_ + 1, 0);
    for (NodeId h : fabric.hosts())
      if (tree.home_leaf(h) >= 0) {
        free_.free_gpus[h] = G_;
        ++free_by_count_[G_];
        ++usable_;
      }
  }

  const FreeMap& free() const { return free_; }
  FreeMap& mutable_free() { return free_; }
  int usable_hosts() const { return usable_; }

  // Hosts with at least `gpus` free.
  int hosts_with(int gpus) const { return hosts_with(free_by_count_, gpus); }
  bool fits(const PlacementRequest& r) const { return hosts_with(r.gpus_per_host) >= r.hosts; }

  void take(NodeId h, int gpus) { set(h, free_.free_gpus[h] - gpus); }
  void give(NodeId h, int gpus) { set(h, free_.free_gpus[h] + gpus); }

  // EASY's reservation for `r`: the earliest end of a running job after
  // which enough hosts are free, and how many hosts beyond its need are
  // free then. Counting only: which hosts is left to the policy.
  std::pair<double, int> reserve(const PlacementRequest& r, const std::set<Run>& running,
                                 const Schedule& schedule) const {
    std::vector<int> by_count = free_by_count_;
    std::unordered_map<NodeId, int> freed;
    for (const Run& run : running) {
      const ScheduledJob& job = schedule.jobs[run.schedule_index];
      for (size_t i = 0; i < job.ring.size(); ++i) {
        NodeId h = job.ring[i];
        int before = free_.free_gpus[h] + freed[h];
        freed[h] += job.host_gpus[i];
        --by_count[before];
        ++by_count[std::min(before + job.host_gpus[i], G_)];
      }
      if (int n = hosts_with(by_count, r.gpus_per_host); n >= r.hosts) return {run.end, n - r.hosts};
    }
    return {std::numeric_limits<double>::infinity(), 0};
  }

 private:
  // Of hosts counted by free GPUs (index = GPUs free), those with at least `gpus`.
  int hosts_with(const std::vector<int>& by_count, int gpus) const {
    int n = 0;
    for (int k = std::max(gpus, 1); k <= G_; ++k) n += by_count[k];
    return n;
  }
  void set(NodeId h, int gpus) {
    --free_by_count_[free_.free_gpus[h]];
    free_.free_gpus[h] = gpus;
    ++free_by_count_[gpus];
  }
  int G_;
  FreeMap free_;
  std::vector<int> free_by_count_;
  int usable_ = 0;
};

}  // namespace

Schedule replay(const SwitchTree& tree, const Trace& trace, const PlacementPolicy& policy,
                const ReplayOptions& options) {
  if (options.gpus_per_host < 1) throw std::invalid_argument("gpus_per_host must be at least 1");
  Schedule schedule;
  schedule.policy = policy.name;
  schedule.jobs.reserve(trace.jobs.size());
  Cluster cluster(tree, options.gpus_per_host);
  std::list<Job> queue;
  std::set<Run> running;
  std::vector<double> call_us;
  int failures = 0;
  int deferrals = 0;
  DeferralLedger<const TraceJob*> deferred;  // when each deferred job was first deferred

  TrafficMap traffic(tree.fabric());
  SeamRoutes routes(tree.paths());         // the tree's routes, asked again and again over the replay
  std::vector<JobTraffic> job_traffic_of;  // by schedule index
  bool traffic_written = true;

  // A job's best estimated slowdown on the idle fabric, by request.
  IdleSlowdowns idle_slowdowns;
  auto idle_slowdown = [&](const PlacementRequest& r) {
    return idle_slowdowns.of(
        r, [&] { return policy.place(tree, FreeMap::all_free(tree.fabric(), options.gpus_per_host), r, &routes); });
  };

  auto try_start = [&](const Job& job, double now) {
    if (policy.reads_traffic && !traffic_written) {
      traffic.write(tree.fabric(), cluster.mutable_free());
      traffic_written = true;
    }
    auto t0 = std::chrono::steady_clock::now();
    Placement p = policy.place(tree, cluster.free(), job.request, &routes);
    call_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    if (!p.feasible) {
      ++failures;
      return false;
    }
    // Deferring needs a job that will end and free hosts; the trace's run
    // time stands for the time limit it does not record, and the job's
    // share counts from its first deferral.
    if (!running.empty()) {
      double deferred_s = deferred.deferred_s(job.trace, now);
      if (defer(
              options.defer_rule, p, [&] { return idle_slowdown(job.request); }, deferred_s, job.trace->duration_s)) {
        ++deferrals;
        deferred.note(job.trace, now);
        return false;
      }
    }
    ScheduledJob s;
    s.id = job.trace->id;
    s.submit_s = job.trace->submit_s;
    s.start_s = now;
    s.end_s = now + job.trace->duration_s;
    s.ring = std::move(p.hosts);
    s.host_gpus = std::move(p.gpus);
    s.profile = job.request.profile;
    s.duty = options.comm_duty;
    s.free_hosts_at_start = cluster.hosts_with(job.request.gpus_per_host);
    for (size_t i = 0; i < s.ring.size(); ++i) {
      cluster.take(s.ring[i], s.host_gpus[i]);
      s.gpus += s.host_gpus[i];
    }
    job_traffic_of.emplace_back();
    if (policy.reads_traffic && s.ring.size() > 1) {
      RunningJob rj{s.ring, s.profile, *std::min_element(s.host_gpus.begin(), s.host_gpus.end()), s.duty};
      job_traffic_of.back() = topo::job_traffic(tree, rj, options.message_bytes);
      traffic.add(job_traffic_of.back());
      traffic_written = false;
    }
    running.insert({s.end_s, schedule.jobs.size()});
    schedule.jobs.push_back(std::move(s));
    return true;
  };

  auto pass = [&](double now) {
    bool reserved = false;
    double shadow = 0;
    int extra = 0;
    size_t looked = 0;
    for (auto it = queue.begin(); it != queue.end() && looked < options.backfill_depth; ++looked) {
      if (cluster.hosts_with(1) == 0) break;
      const Job& job = *it;
      bool fits = cluster.fits(job.request);
      if (!reserved) {
        if (fits && try_start(job, now)) {
          it = queue.erase(it);
          continue;
        }
        std::tie(shadow, extra) = cluster.reserve(job.request, running, schedule);
        reserved = true;
      } else if (fits) {
        bool before_shadow = now + job.trace->duration_s <= shadow;
        if ((before_shadow || job.request.hosts <= extra) && try_start(job, now)) {
          if (!before_shadow) extra -= job.request.hosts;
          it = queue.erase(it);
          continue;
        }
      }
      ++it;
    }
  };

  size_t next = 0;
  const size_t n = trace.jobs.size();
  size_t reported = 0;
  while (next < n || !running.empty()) {
    double now = std::numeric_limits<double>::infinity();
    if (next < n) now = trace.jobs[next].submit_s;
    if (!running.empty()) now = std::min(now, running.begin()->end);
    while (!running.empty() && running.begin()->end <= now) {
      const ScheduledJob& done = schedule.jobs[running.begin()->schedule_index];
      for (size_t i = 0; i < done.ring.size(); ++i) cluster.give(done.ring[i], done.host_gpus[i]);
      if (const JobTraffic& t = job_traffic_of[running.begin()->schedule_index]; !t.gbps.empty() || !t.flows.empty()) {
        traffic.remove(t);
        traffic_written = false;
      }
      running.erase(running.begin());
    }
    while (next < n && trace.jobs[next].submit_s <= now) {
      const TraceJob& tj = trace.jobs[next++];
      Profile profile = options.mix.shares.empty() ? options.profile : draw_profile(options.mix, tj.id);
      PlacementRequest r = job_request(tj.gpus, options.gpus_per_host, profile);
      r.message_bytes = options.message_bytes;
      if (r.hosts > cluster.usable_hosts())
        schedule.rejected.push_back(tj.id);
      else
        queue.push_back({&tj, r});
    }
    pass(now);
    // A job no policy can ever place (its hard limits never hold) must not
    // hold the replay forever.
    if (running.empty() && next == n && !queue.empty()) {
      for (const Job& j : queue) schedule.rejected.push_back(j.trace->id);
      queue.clear();
    }
    if (options.progress && (next * 100 / std::max<size_t>(n, 1)) > reported) {
      reported = next * 100 / std::max<size_t>(n, 1);
      options.progress(static_cast<double>(next) / static_cast<double>(n));
    }
  }

  double sum = 0;
  for (double us : call_us) sum += us;
  schedule.scheduler["placement_calls"] = static_cast<double>(call_us.size());
  schedule.scheduler["placement_failures"] = failures;
  if (options.defer_rule.enabled()) {
    schedule.scheduler["placement_deferrals"] = deferrals;
    schedule.scheduler["deferred_jobs"] = static_cast<double>(deferred.size());
  }
  schedule.scheduler["placement_mean_us"] = call_us.empty() ? 0 : sum / static_cast<double>(call_us.size());
  schedule.scheduler["placement_p50_us"] = nearest_rank(call_us, 0.50, 0.0);
  schedule.scheduler["placement_p99_us"] = nearest_rank(call_us, 0.99, 0.0);
  return schedule;
}

}  // namespace topo
