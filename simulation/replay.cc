#include "simulation/replay.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "placement/defer.h"
#include "placement/deferral_ledger.h"
#include "placement/slurm_policy.h"
#include "placement/traffic.h"
#include "simulation/live_judge.h"
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
  if (name == "block") {
    // Throws FabricError on a fabric without NVLink domains (no blocks).
    auto table = std::make_shared<const SlurmBlockTable>(slurm_block_table(fabric));
    return {"block", false, [table](const SwitchTree& t, const FreeMap& f, Request r, SeamRoutes*) {
              return place_block(*table, t, f, r);
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
  throw std::invalid_argument(fmt::format("unknown policy '{}'; expected linear, tree, block or topo-aware", name));
}

bool policy_sets_nccl_hints(std::string_view name) { return name == "topo-aware"; }

PlacementRequest job_request(int gpus, int gpus_per_host, Profile profile) {
  PlacementRequest r;
  r.profile = gpus <= gpus_per_host ? Profile::None : profile;
  r.hosts = gpus <= gpus_per_host ? 1 : (gpus + gpus_per_host - 1) / gpus_per_host;
  r.gpus_per_host = std::min(gpus, gpus_per_host);
  return r;
}

PlacementRequest cpu_only_request(int gpus, int gpus_per_host) {
  PlacementRequest r = job_request(gpus, gpus_per_host, Profile::None);
  r.gpus_per_host = gpus_per_host;
  r.nvlink = false;
  return r;
}

namespace {

struct Job {
  const TraceJob* trace;
  PlacementRequest request;
  bool cpu_only = false;
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

namespace {

// One replay's state: the cluster, the queue, the running jobs, and what
// the policy and the scheduler did, with one step of the scheduler per
// method.
class Replayer {
 public:
  Replayer(const SwitchTree& tree, const PlacementPolicy& policy, const ReplayOptions& options)
      : tree_(tree),
        policy_(policy),
        options_(options),
        cluster_(tree, options.gpus_per_host),
        traffic_(tree.fabric()),
        routes_(tree.paths()) {
    if (options.stretch.on) {
      OutcomeOptions judging = options.judging;
      judging.message_bytes = options.message_bytes;
      if (options.job_aware) tables_.emplace(tree.fabric(), *options.job_aware);
      live_.emplace(judged_paths(), judging);
      judging_ = judging;
    }
  }

  Schedule run(const Trace& trace);

 private:
  double idle_slowdown(const PlacementRequest& r);
  bool deferred(const Job& job, const Placement& p, double now);
  bool try_start(const Job& job, double now);
  void start(const Job& job, Placement& p, double now);
  void pass(double now);
  void end_jobs(double now);
  Job job_of(const TraceJob& tj) const;
  void submit(const Trace& trace, size_t& next, double now);
  void summarize();
  void judge_start(size_t index, double now);
  void stretch_runs(double now);
  bool hold_before(double next_event);
  // The tables jobs are judged on: job-aware ones, or the tree's.
  const PathIndex& judged_paths() const { return tables_ ? tables_->paths() : tree_.paths(); }

  const SwitchTree& tree_;
  const PlacementPolicy& policy_;
  const ReplayOptions& options_;
  Schedule schedule_;
  Cluster cluster_;
  std::list<Job> queue_;
  std::set<Run> running_;
  std::vector<double> call_us_;
  int failures_ = 0;
  int deferrals_ = 0;
  DeferralLedger<const TraceJob*> deferred_;  // when each deferred job was first deferred
  TrafficMap traffic_;
  SeamRoutes routes_;                       // the tree's routes, asked again and again over the replay
  std::vector<JobTraffic> job_traffic_of_;  // by schedule index
  bool traffic_written_ = true;
  // A job's best estimated slowdown on the idle fabric, by request.
  IdleSlowdowns idle_slowdowns_;
  // With a Stretch: the running jobs judged as they start and end, and
  // per judged job its schedule index, the trace seconds of work left, and
  // since when at what factor it has been running.
  struct Pace {
    size_t index;
    double work_s;
    double since;
    double factor;
  };
  std::optional<JobAwareTables> tables_;  // under job-aware routing, before live_ that reads them
  std::optional<LiveJudge> live_;
  bool judged_changed_ = false;  // a judged job started or ended since the last plan
  OutcomeOptions judging_;
  std::vector<Pace> pace_;      // by live judge index
  std::vector<int> judged_of_;  // live judge index by schedule index, -1 none
};

double Replayer::idle_slowdown(const PlacementRequest& r) {
  return idle_slowdowns_.of(
      r, [&] { return policy_.place(tree_, FreeMap::all_free(tree_.fabric(), options_.gpus_per_host), r, &routes_); });
}

// Deferring needs a job that will end and free hosts; the trace's run time
// stands for the time limit it does not record, and the job's share counts
// from its first deferral.
bool Replayer::deferred(const Job& job, const Placement& p, double now) {
  if (running_.empty()) return false;
  double deferred_s = deferred_.deferred_s(job.trace, now);
  if (!defer(
          options_.defer_rule, p, [&] { return idle_slowdown(job.request); }, deferred_s, job.trace->duration_s))
    return false;
  ++deferrals_;
  deferred_.note(job.trace, now);
  return true;
}

bool Replayer::try_start(const Job& job, double now) {
  if (policy_.reads_traffic && !traffic_written_) {
    traffic_.write(tree_.fabric(), cluster_.mutable_free());
    traffic_written_ = true;
  }
  auto t0 = std::chrono::steady_clock::now();
  Placement p = policy_.place(tree_, cluster_.free(), job.request, &routes_);
  call_us_.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  if (!p.feasible) {
    ++failures_;
    return false;
  }
  if (deferred(job, p, now)) return false;
  start(job, p, now);
  return true;
}

// The job takes the placement's hosts now; its traffic joins the running
// jobs' when the policy reads it.
void Replayer::start(const Job& job, Placement& p, double now) {
  ScheduledJob s;
  s.id = job.trace->id;
  s.submit_s = job.trace->submit_s;
  s.start_s = now;
  s.end_s = now + job.trace->duration_s;
  s.ring = std::move(p.hosts);
  s.host_gpus = std::move(p.gpus);
  s.profile = job.request.profile;
  s.duty = options_.comm_duty;
  s.free_hosts_at_start = cluster_.hosts_with(job.request.gpus_per_host);
  s.segment = job.request.segment;
  s.cpu_only = job.cpu_only;
  for (size_t i = 0; i < s.ring.size(); ++i) {
    cluster_.take(s.ring[i], s.host_gpus[i]);
    if (!s.cpu_only) s.gpus += s.host_gpus[i];
  }
  job_traffic_of_.emplace_back();
  if (policy_.reads_traffic && s.ring.size() > 1) {
    RunningJob rj{s.ring, s.profile, *std::min_element(s.host_gpus.begin(), s.host_gpus.end()), s.duty};
    job_traffic_of_.back() = topo::job_traffic(tree_, rj, options_.message_bytes);
    traffic_.add(job_traffic_of_.back());
    traffic_written_ = false;
  }
  running_.insert({s.end_s, schedule_.jobs.size()});
  schedule_.jobs.push_back(std::move(s));
  judge_start(schedule_.jobs.size() - 1, now);
}

// With a Stretch, a job with collectives joins the live judge; its end is
// set once it is judged (stretch_runs).
void Replayer::judge_start(size_t index, double now) {
  if (!live_) return;
  judged_of_.push_back(-1);
  const ScheduledJob& job = schedule_.jobs[index];
  if (!has_collectives(job, judging_)) return;
  JobOutcome o = shape_of(tree_, job);
  o.profile = job.profile;
  // The judge reads the job through a pointer: schedule_.jobs never
  // reallocates (run() reserves every trace job).
  int j = live_->add(measure_alone(judged_paths(), job, o, index, judging_));
  live_->start(j, now);
  judged_changed_ = true;
  pace_.push_back({index, job.end_s - job.start_s, now, 1});
  judged_of_[index] = j;
}

// Every job judged again at `now` runs its remaining work at its new
// factor from now on: its end moves, in the running set too. Under
// job-aware routing, a judged job's start or end first re-plans the
// tables, and plans due by now hold.
void Replayer::stretch_runs(double now) {
  if (!live_) return;
  if (tables_) {
    if (judged_changed_) tables_->plan(now, *live_);
    judged_changed_ = false;
    tables_->hold(now, *live_);
  }
  for (int j : live_->settle(now)) {
    Pace& p = pace_[j];
    p.work_s = std::max(0.0, p.work_s - (now - p.since) / p.factor);
    p.since = now;
    p.factor = options_.stretch.factor(schedule_.jobs[p.index].profile, live_->job(j).slowdown);
    ScheduledJob& job = schedule_.jobs[p.index];
    running_.erase({job.end_s, p.index});
    job.end_s = now + p.work_s * p.factor;
    running_.insert({job.end_s, p.index});
  }
}

// Under job-aware routing, a plan that holds before the next start or end
// is its own moment: the running jobs are judged on it from then on.
bool Replayer::hold_before(double next_event) {
  if (!tables_ || !(tables_->next_hold() < next_event)) return false;
  stretch_runs(tables_->next_hold());
  return true;
}

// One scheduling pass over the queue: first come first served, then EASY
// backfill behind the first job that cannot start.
void Replayer::pass(double now) {
  bool reserved = false;
  double shadow = 0;
  int extra = 0;
  size_t looked = 0;
  for (auto it = queue_.begin(); it != queue_.end() && looked < options_.backfill_depth; ++looked) {
    if (cluster_.hosts_with(1) == 0) break;
    const Job& job = *it;
    bool fits = cluster_.fits(job.request);
    if (!reserved) {
      if (fits && try_start(job, now)) {
        it = queue_.erase(it);
        continue;
      }
      std::tie(shadow, extra) = cluster_.reserve(job.request, running_, schedule_);
      reserved = true;
    } else if (fits) {
      bool before_shadow = now + job.trace->duration_s <= shadow;
      if ((before_shadow || job.request.hosts <= extra) && try_start(job, now)) {
        if (!before_shadow) extra -= job.request.hosts;
        it = queue_.erase(it);
        continue;
      }
    }
    ++it;
  }
}

// Every job that has ended by `now` gives its hosts and traffic back.
void Replayer::end_jobs(double now) {
  while (!running_.empty() && running_.begin()->end <= now) {
    const ScheduledJob& done = schedule_.jobs[running_.begin()->schedule_index];
    if (live_ && judged_of_[running_.begin()->schedule_index] >= 0) {
      live_->end(judged_of_[running_.begin()->schedule_index], now);
      judged_changed_ = true;
    }
    for (size_t i = 0; i < done.ring.size(); ++i) cluster_.give(done.ring[i], done.host_gpus[i]);
    if (const JobTraffic& t = job_traffic_of_[running_.begin()->schedule_index]; !t.gbps.empty() || !t.flows.empty()) {
      traffic_.remove(t);
      traffic_written_ = false;
    }
    running_.erase(running_.begin());
  }
}

// What the trace job asks: its kind (CPU-only, segments) and profile drawn.
Job Replayer::job_of(const TraceJob& tj) const {
  const int G = options_.gpus_per_host;
  if (draw_cpu_only(options_.kinds, tj.id)) return {&tj, cpu_only_request(tj.gpus, G), true};
  Profile profile = options_.mix.shares.empty() ? options_.profile : draw_profile(options_.mix, tj.id);
  PlacementRequest r = job_request(tj.gpus, G, profile);
  r.message_bytes = options_.message_bytes;
  r.segment = draw_segment(options_.kinds, tj.id, r.hosts);
  return {&tj, r, false};
}

// Every job submitted by `now` joins the queue, or is rejected when the
// fabric could never hold it.
void Replayer::submit(const Trace& trace, size_t& next, double now) {
  while (next < trace.jobs.size() && trace.jobs[next].submit_s <= now) {
    Job job = job_of(trace.jobs[next++]);
    if (job.request.hosts > cluster_.usable_hosts())
      schedule_.rejected.push_back(job.trace->id);
    else
      queue_.push_back(job);
  }
}

// The policy's own figures: calls, failures, deferrals and time per call.
void Replayer::summarize() {
  double sum = 0;
  for (double us : call_us_) sum += us;
  schedule_.scheduler["placement_calls"] = static_cast<double>(call_us_.size());
  schedule_.scheduler["placement_failures"] = failures_;
  if (options_.defer_rule.enabled()) {
    schedule_.scheduler["placement_deferrals"] = deferrals_;
    schedule_.scheduler["deferred_jobs"] = static_cast<double>(deferred_.size());
  }
  schedule_.scheduler["placement_mean_us"] = call_us_.empty() ? 0 : sum / static_cast<double>(call_us_.size());
  schedule_.scheduler["placement_p50_us"] = nearest_rank(call_us_, 0.50, 0.0);
  schedule_.scheduler["placement_p99_us"] = nearest_rank(call_us_, 0.99, 0.0);
}

Schedule Replayer::run(const Trace& trace) {
  schedule_.policy = policy_.name;
  schedule_.jobs.reserve(trace.jobs.size());
  size_t next = 0;
  const size_t n = trace.jobs.size();
  size_t reported = 0;
  while (next < n || !running_.empty()) {
    double now = std::numeric_limits<double>::infinity();
    if (next < n) now = trace.jobs[next].submit_s;
    if (!running_.empty()) now = std::min(now, running_.begin()->end);
    if (hold_before(now)) continue;
    end_jobs(now);
    submit(trace, next, now);
    pass(now);
    stretch_runs(now);
    // A job no policy can ever place (its hard limits never hold) must not
    // hold the replay forever.
    if (running_.empty() && next == n && !queue_.empty()) {
      for (const Job& j : queue_) schedule_.rejected.push_back(j.trace->id);
      queue_.clear();
    }
    if (options_.progress && (next * 100 / std::max<size_t>(n, 1)) > reported) {
      reported = next * 100 / std::max<size_t>(n, 1);
      options_.progress(static_cast<double>(next) / static_cast<double>(n));
    }
  }
  summarize();
  schedule_.runs_stretched = live_.has_value();
  return std::move(schedule_);
}

}  // namespace

Schedule replay(const SwitchTree& tree, const Trace& trace, const PlacementPolicy& policy,
                const ReplayOptions& options) {
  if (options.gpus_per_host < 1) throw std::invalid_argument("gpus_per_host must be at least 1");
  if (std::string problem = job_kinds_problem(options.kinds); !problem.empty()) throw std::invalid_argument(problem);
  return Replayer(tree, policy, options).run(trace);
}

}  // namespace topo
