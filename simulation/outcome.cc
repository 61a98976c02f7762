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
#include "simulation/percentile.h"

namespace topo {
namespace {

// A multi-host job while the outcome is worked out: its collectives, the
// directed cables they load, and its slowdown as its neighbours change.
struct Running {
  const ScheduledJob* job = nullptr;
  size_t outcome = 0;                      // index into PolicyOutcome::jobs
  std::vector<Request> requests;           // its profile's collectives
  std::vector<NeighbourJob> as_neighbour;  // the same, as others see it (duty split evenly)
  std::vector<FlowJob> flow_jobs;          // the same, routed for the per-flow sharing (Sharing::Flows)
  std::vector<int> cables;                 // directed cables its flows cross, sorted
  int qps = 0;                             // under ECMP: its QPs per connection, 0 the fabric's
  double ideal_s = 0;                      // summed over its collectives
  double alone_slowdown = 1;
  std::vector<int> sharing;  // the neighbours it was last judged with
  double slowdown = 1;       // now
  double weighted = 0;       // slowdown x seconds, so far
  double since = 0;          // when `slowdown` took effect
};

// The judge runs NCCL's ring (Simple protocol) for every collective a ring
// carries, as the placement's seams assume; AllToAll as NCCL does.
// Under ECMP, `qps` (when above 0) is the job's own queue pairs per
// connection.
ModelOptions judged(const Request& r, int qps) {
  ModelOptions o;
  if (r.collective != Collective::AllToAll) o.algorithm = Algorithm::Ring;
  o.protocol = Protocol::Simple;
  o.ecmp_qps = qps;
  return o;
}

// The queue pairs per connection a job runs with under ECMP: the hint's
// when its ring crosses leaves (the hint only ever raises them), else 0
// (the fabric's).
int job_qps(const Routing& routing, const JobOutcome& o, const OutcomeOptions& options) {
  if (!routing.is_ecmp() || options.ecmp_qps_hint <= 0 || o.spine_ring_edges == 0) return 0;
  return std::max(options.ecmp_qps_hint, routing.qps);
}

// The structure of one allocation: leaves, pods and ring edges.
JobOutcome shape_of(const SwitchTree& tree, const ScheduledJob& job) {
  JobOutcome o;
  o.id = job.id;
  o.gpus = job.gpus;
  o.hosts = static_cast<int>(job.ring.size());
  for (NodeId h : job.ring) o.ring.push_back(tree.fabric().node(h).name);
  o.wait_s = job.start_s - job.submit_s;
  o.free_hosts_at_start = job.free_hosts_at_start;
  std::set<int> leaves, pods;
  for (NodeId h : job.ring) {
    int leaf = tree.home_leaf(h);
    if (leaf < 0) continue;
    leaves.insert(leaf);
    pods.insert(tree.leaves()[leaf].pod);
  }
  o.leaves = static_cast<int>(leaves.size());
  o.pods = static_cast<int>(pods.size());
  if (job.ring.size() > 1) {
    RingCrossings c = ring_crossings(tree, job.ring);
    o.spine_ring_edges = c.spine_edges;
    o.pod_ring_edges = c.pod_edges;
  }
  return o;
}

// The switches above the leaves that a job's directed cables touch.
int spines_touched(const Fabric& fabric, std::span<const int> cables) {
  std::set<NodeId> above_leaves;
  for (int c : cables) {
    const Link& l = fabric.link(fabric.cables()[c / 2]);
    for (NodeId sw : {static_cast<NodeId>(l.end_a), static_cast<NodeId>(l.end_b)})
      if (fabric.node(sw).kind == NodeKind::Switch && fabric.node(sw).level != Level::Leaf) above_leaves.insert(sw);
  }
  return static_cast<int>(above_leaves.size());
}

// A multi-host job with a profile, alone on the fabric: its collectives, the
// cables they load, what they cost it; the outcome's alone figures are set.
Running measure_alone(const PathIndex& paths, const ScheduledJob& job, JobOutcome& o, size_t outcome,
                      const OutcomeOptions& options) {
  Running r;
  r.job = &job;
  r.outcome = outcome;
  r.qps = job_qps(paths.fabric().routing(), o, options);
  int per_host = job.host_gpus.empty() ? 1 : *std::min_element(job.host_gpus.begin(), job.host_gpus.end());
  per_host = std::max(per_host, 1);
  r.requests = profile_requests(o.profile, options.message_bytes, per_host);
  double alone_s = 0;
  Neighbours self(paths);
  for (const Request& q : r.requests) {
    Estimate alone = estimate(paths, job.ring, q, {}, judged(q, r.qps));
    r.ideal_s += alone.ideal_time_s;
    alone_s += alone.time_s;
    NeighbourJob n{job.ring, q, std::clamp(job.duty, 1e-6, 1.0) / static_cast<double>(r.requests.size()),
                   judged(q, r.qps)};
    self.add(n, judged(q, r.qps));
    if (options.sharing == Sharing::Flows) r.flow_jobs.push_back(flow_job(paths, n, judged(q, r.qps)));
    r.as_neighbour.push_back(std::move(n));
  }
  for (const Neighbours::Job& j : self.jobs())
    for (auto [key, flows] : j.flows) paths.for_each_cable(key, [&r](int c) { r.cables.push_back(c); });
  std::sort(r.cables.begin(), r.cables.end());
  r.cables.erase(std::unique(r.cables.begin(), r.cables.end()), r.cables.end());
  o.allreduce_alone_slowdown = r.ideal_s > 0 ? alone_s / r.ideal_s : 1;
  r.slowdown = r.alone_slowdown = o.allreduce_alone_slowdown;
  o.spines = spines_touched(paths.fabric(), r.cables);

  Request a2a{Collective::AllToAll, options.message_bytes, Dtype::Bf16, per_host};
  ModelOptions a2a_options;
  a2a_options.ecmp_qps = r.qps;
  Estimate all = estimate(paths, job.ring, a2a, BackgroundLoad(), a2a_options);
  o.alltoall_slowdown = all.time_s / all.ideal_time_s;
  return r;
}

// The jobs running on each directed cable, by index into the running jobs.
using CableUsers = std::vector<std::vector<int>>;

// Judges job `self` again beside every running job with a flow on one of
// its cables: per-flow max-min among them (their own neighbours beyond are
// left out). Its slowdown so far is first weighted up to `now`.
void rejudge(std::vector<Running>& running, int self, double now, const CableUsers& users, const PathIndex& paths,
             const OutcomeOptions& options) {
  Running& r = running[self];
  r.weighted += r.slowdown * (now - r.since);
  r.since = now;
  std::vector<int> sharing;
  for (int c : r.cables)
    for (int j : users[c])
      if (j != self) sharing.push_back(j);
  std::sort(sharing.begin(), sharing.end());
  sharing.erase(std::unique(sharing.begin(), sharing.end()), sharing.end());
  if (sharing == r.sharing) return;
  r.sharing = sharing;
  if (sharing.empty()) {
    r.slowdown = r.alone_slowdown;
    return;
  }
  double time_s = 0;
  if (options.sharing == Sharing::Steps) {
    std::vector<NeighbourJob> near;
    for (int j : sharing) near.insert(near.end(), running[j].as_neighbour.begin(), running[j].as_neighbour.end());
    for (const Request& q : r.requests)
      time_s += estimate_by_steps(paths, r.job->ring, q, near, judged(q, r.qps)).time_s;
  } else {
    Neighbours others(paths);
    for (int j : sharing)
      for (const NeighbourJob& n : running[j].as_neighbour) others.add(n);
    for (const Request& q : r.requests) time_s += estimate(paths, r.job->ring, q, others, judged(q, r.qps)).time_s;
  }
  r.slowdown = time_s / r.ideal_s;
}

// Every running job joined to `seed` through cables they share, however
// far: what the per-flow sharing of one of them depends on. Marks them
// with `moment` in `stamp`.
std::vector<int> component_of(int seed, const std::vector<Running>& running, const CableUsers& users,
                              std::vector<int>& stamp, int moment) {
  std::vector<int> members{seed};
  stamp[seed] = moment;
  for (size_t i = 0; i < members.size(); ++i)
    for (int c : running[members[i]].cables)
      for (int j : users[c])
        if (stamp[j] != moment) {
          stamp[j] = moment;
          members.push_back(j);
        }
  return members;
}

// Judges the jobs of one component again, all at once, sharing per flow
// (comm_model/ring_steps.h). Their slowdowns so far are first weighted up
// to `now`.
void rejudge_flows(std::vector<Running>& running, const std::vector<int>& members, double now, const PathIndex& paths) {
  for (int j : members) {
    Running& r = running[j];
    r.weighted += r.slowdown * (now - r.since);
    r.since = now;
    r.slowdown = r.alone_slowdown;
  }
  if (members.size() < 2) return;
  std::vector<const FlowJob*> all;
  for (int j : members)
    for (const FlowJob& f : running[j].flow_jobs) all.push_back(&f);
  const std::vector<Estimate> shared = share_by_flows(paths, all, judged({}, 0).network_efficiency);
  size_t at = 0;
  for (int j : members) {
    Running& r = running[j];
    double time_s = 0;
    for (size_t k = 0; k < r.flow_jobs.size(); ++k) time_s += shared[at++].time_s;
    r.slowdown = time_s / r.ideal_s;
  }
}

struct Event {
  double at;
  bool start;
  int job;  // index into the running jobs
};

// Every start and end in time order, ends first at equal times.
std::vector<Event> events_of(const std::vector<Running>& running) {
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

// Replays the starts and ends, keeping every directed cable's users; a job is
// judged again only when a job sharing one of its cables starts or ends, once
// for all the events of one moment. Leaves each job's slowdown x seconds.
void replay(std::vector<Running>& running, const PathIndex& paths, const OutcomeOptions& options) {
  const std::vector<Event> events = events_of(running);
  CableUsers users(2 * paths.fabric().cables().size());
  std::vector<int> stamp(running.size(), -1);  // last moment a job was judged in
  for (size_t first = 0, moment = 0; first < events.size(); ++moment) {
    size_t last = first;
    while (last < events.size() && events[last].at == events[first].at) ++last;
    const double now = events[first].at;
    std::vector<int> touched;
    for (size_t e = first; e < last; ++e) {
      Running& r = running[events[e].job];
      if (events[e].start) {
        r.since = now;
        r.slowdown = r.alone_slowdown;
        r.sharing.clear();
      } else {
        r.weighted += r.slowdown * (now - r.since);
        r.since = now;
      }
      for (int c : r.cables) {
        if (events[e].start)
          users[c].push_back(events[e].job);
        else
          std::erase(users[c], events[e].job);
        touched.push_back(c);
      }
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (int c : touched)
      for (int j : users[c])
        if (stamp[j] != static_cast<int>(moment)) {
          if (options.sharing == Sharing::Flows) {
            rejudge_flows(running, component_of(j, running, users, stamp, static_cast<int>(moment)), now, paths);
            continue;
          }
          stamp[j] = static_cast<int>(moment);
          rejudge(running, j, now, users, paths, options);
        }
    first = last;
  }
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 1.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// Each multi-host job's slowdown over its run, and their means and tails.
void summarize_slowdowns(const std::vector<Running>& running, PolicyOutcome& out) {
  std::vector<double> allreduce, alltoall, all;
  std::map<std::string, std::vector<double>> by_profile;
  for (const Running& r : running) {
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
    if (o.hosts > 1) leaves += o.leaves;
  }
  if (!schedule.jobs.empty()) {
    out.makespan_s = last_end - first_submit;
    out.mean_wait_s = waits / static_cast<double>(schedule.jobs.size());
    if (options.fabric_gpus > 0 && out.makespan_s > 0)
      out.gpu_utilization = gpu_seconds / (options.fabric_gpus * out.makespan_s);
  }
  if (out.multi_host_jobs > 0) out.mean_leaves = leaves / out.multi_host_jobs;
}

}  // namespace

PolicyOutcome judge(const SwitchTree& tree, const Schedule& schedule, const OutcomeOptions& options) {
  const Fabric& fabric = tree.fabric();
  PolicyOutcome out;
  out.policy = schedule.policy;
  out.routing = routing_name(fabric.routing());
  if (fabric.routing().is_ecmp() && options.ecmp_qps_hint > fabric.routing().qps)
    out.routing += fmt::format(" ({} QPs on rings crossing leaves)", options.ecmp_qps_hint);
  out.rejected = schedule.rejected;
  out.scheduler = schedule.scheduler;
  out.jobs.reserve(schedule.jobs.size());

  std::vector<Running> running;
  for (const ScheduledJob& job : schedule.jobs) {
    for (NodeId h : job.ring)
      if (h >= fabric.node_count() || fabric.node(h).kind != NodeKind::Host)
        throw FabricError(fmt::format("job {}: node {} is not a host of the fabric", job.id, h));
    JobOutcome o = shape_of(tree, job);
    o.profile = job.ring.size() > 1 ? job.profile : Profile::None;
    if (job.ring.size() > 1 && !profile_requests(o.profile, options.message_bytes, 1).empty())
      running.push_back(measure_alone(tree.paths(), job, o, out.jobs.size(), options));
    out.jobs.push_back(std::move(o));
  }
  replay(running, tree.paths(), options);
  summarize_slowdowns(running, out);
  summarize_schedule(schedule, options, out);
  return out;
}

}  // namespace topo
