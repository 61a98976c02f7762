#include "simulation/outcome.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "comm_model/estimate.h"
#include "placement/ring_order.h"
#include "simulation/percentile.h"
#include "topology/error.h"

namespace topo {
namespace {

// A multi-host job while the outcome is worked out: what it puts on each
// trunk, and its AllReduce time over the ideal as its neighbours change.
struct Running {
  const ScheduledJob* job = nullptr;
  size_t outcome = 0;              // index into PolicyOutcome::jobs
  Request request;
  struct Use {
    int trunk;
    double bytes;  // one AllReduce's bytes on the trunk
    double gbps;   // what the job asks of the trunk, on average
  };
  std::vector<Use> trunks;
  double ideal_s = 0;
  double alone_slowdown = 1;
  double peak_s = 0;               // its slowest cable's drain time, alone
  double slowdown = 1;             // now
  double weighted = 0;             // slowdown x seconds, so far
  double since = 0;                // when `slowdown` took effect
};

ModelOptions ring_only() {
  ModelOptions o;
  o.algorithm = Algorithm::Ring;
  o.protocol = Protocol::Simple;
  return o;
}

std::vector<int> host_indices(const PathIndex& paths, std::span<const NodeId> hosts) {
  std::vector<int> out;
  out.reserve(hosts.size());
  for (NodeId h : hosts) out.push_back(paths.host_index(h));
  return out;
}

// The structure of one allocation: leaves, pods and ring edges.
JobOutcome shape_of(const SwitchTree& tree, const ScheduledJob& job) {
  JobOutcome o;
  o.id = job.id;
  o.gpus = job.gpus;
  o.hosts = static_cast<int>(job.ring.size());
  o.wait_s = job.start_s - job.submit_s;
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

}  // namespace

PolicyOutcome judge(const SwitchTree& tree, const Schedule& schedule, const OutcomeOptions& options) {
  const Fabric& fabric = tree.fabric();
  const PathIndex& paths = tree.paths();
  const ModelOptions model = ring_only();
  const double efficiency = model.network_efficiency;

  PolicyOutcome out;
  out.policy = schedule.policy;
  out.rejected = schedule.rejected;
  out.scheduler = schedule.scheduler;
  out.jobs.reserve(schedule.jobs.size());

  std::vector<Running> running;
  for (const ScheduledJob& job : schedule.jobs) {
    for (NodeId h : job.ring)
      if (h >= fabric.node_count() || fabric.node(h).kind != NodeKind::Host)
        throw FabricError(fmt::format("job {}: node {} is not a host of the fabric", job.id, h));
    JobOutcome o = shape_of(tree, job);
    if (job.ring.size() > 1) {
      Running r;
      r.job = &job;
      r.outcome = out.jobs.size();
      int per_host = job.host_gpus.empty() ? 1 : *std::min_element(job.host_gpus.begin(), job.host_gpus.end());
      r.request = Request{Collective::AllReduce, options.message_bytes, Dtype::Fp32, std::max(per_host, 1)};
      Estimate alone = estimate(paths, job.ring, r.request, {}, model);
      r.ideal_s = alone.ideal_time_s;
      o.allreduce_alone_slowdown = alone.time_s / alone.ideal_time_s;
      r.slowdown = r.alone_slowdown = o.allreduce_alone_slowdown;

      LinkLoad load = ring_load(paths, job.ring, r.request);
      r.peak_s = load.peak(LinkCapacity(paths, host_indices(paths, job.ring), {}, efficiency)).seconds;
      std::span<const double> bytes = load.trunk_bytes();
      std::set<NodeId> above_leaves;
      for (size_t t = 0; t < bytes.size(); ++t) {
        if (bytes[t] <= 0) continue;
        r.trunks.push_back({static_cast<int>(t), bytes[t], bytes[t] * 8 / 1e9 / r.ideal_s * options.comm_duty});
        for (NodeId sw : {paths.trunks()[t].from, paths.trunks()[t].to})
          if (fabric.node(sw).level != Level::Leaf) above_leaves.insert(sw);
      }
      o.spines = static_cast<int>(above_leaves.size());

      Request a2a = r.request;
      a2a.collective = Collective::AllToAll;
      Estimate all = estimate(paths, job.ring, a2a);
      o.alltoall_slowdown = all.time_s / all.ideal_time_s;
      running.push_back(std::move(r));
    }
    out.jobs.push_back(std::move(o));
  }

  // Replay the starts and ends in time order (ends first at equal times),
  // keeping every trunk's total demand and users; a job's slowdown changes
  // only when a job sharing one of its trunks starts or ends.
  struct Event {
    double at;
    bool start;
    int job;  // index into running
  };
  std::vector<Event> events;
  events.reserve(running.size() * 2);
  for (size_t i = 0; i < running.size(); ++i) {
    events.push_back({running[i].job->start_s, true, static_cast<int>(i)});
    events.push_back({running[i].job->end_s, false, static_cast<int>(i)});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.at != b.at ? a.at < b.at : a.start < b.start;
  });

  const size_t trunks = paths.trunks().size();
  std::vector<double> total(trunks, 0.0);
  std::vector<std::vector<int>> users(trunks);
  std::vector<int> stamp(running.size(), -1);  // last batch a job was re-judged in

  auto rejudge = [&](Running& r, double now) {
    r.weighted += r.slowdown * (now - r.since);
    r.since = now;
    // Others take what they ask of a trunk, but never more than their fair
    // share: congestion control leaves this job at least 1/n of it.
    std::vector<std::pair<int, double>> taken;
    double slowest_s = 0;
    for (const Running::Use& u : r.trunks) {
      const auto& trunk = paths.trunks()[u.trunk];
      double others = total[u.trunk] - u.gbps;
      int sharing = static_cast<int>(users[u.trunk].size());
      if (sharing < 2 || others <= 1e-12) continue;
      double line = trunk.slowest_gbps * static_cast<double>(trunk.cables.size()) * efficiency;
      double gbps = std::min(others, line * (sharing - 1) / sharing);
      taken.emplace_back(u.trunk, gbps);
      slowest_s = std::max(slowest_s, u.bytes * 8 / 1e9 / (line - gbps));
    }
    // Only when a shared trunk becomes the job's slowest cable does the
    // estimate change; the model is asked only then.
    if (slowest_s <= r.peak_s * (1 + 1e-9)) {
      r.slowdown = r.alone_slowdown;
      return;
    }
    BackgroundLoad background;
    for (auto [t, gbps] : taken) {
      const auto& trunk = paths.trunks()[t];
      for (LinkId cable : trunk.cables)
        background.add(fabric, cable, trunk.from, gbps / static_cast<double>(trunk.cables.size()));
    }
    Estimate e = estimate(paths, r.job->ring, r.request, background, model);
    r.slowdown = e.time_s / r.ideal_s;
  };

  for (size_t first = 0, batch = 0; first < events.size(); ++batch) {
    size_t last = first;
    while (last < events.size() && events[last].at == events[first].at) ++last;
    const double now = events[first].at;
    std::vector<int> touched;
    for (size_t e = first; e < last; ++e) {
      Running& r = running[events[e].job];
      if (!events[e].start) {
        r.weighted += r.slowdown * (now - r.since);
        r.since = now;
      }
      for (const Running::Use& u : r.trunks) {
        if (events[e].start) {
          total[u.trunk] += u.gbps;
          users[u.trunk].push_back(events[e].job);
        } else {
          total[u.trunk] -= u.gbps;
          std::erase(users[u.trunk], events[e].job);
        }
        touched.push_back(u.trunk);
      }
      if (events[e].start) r.since = now;
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (int t : touched)
      for (int j : users[t])
        if (stamp[j] != static_cast<int>(batch)) {
          stamp[j] = static_cast<int>(batch);
          rejudge(running[j], now);
        }
    first = last;
  }

  // Summary.
  std::vector<double> allreduce, alltoall;
  for (const Running& r : running) {
    JobOutcome& o = out.jobs[r.outcome];
    double ran = r.job->end_s - r.job->start_s;
    o.allreduce_slowdown = ran > 0 ? r.weighted / ran : o.allreduce_alone_slowdown;
    allreduce.push_back(o.allreduce_slowdown);
    alltoall.push_back(o.alltoall_slowdown);
  }
  out.multi_host_jobs = static_cast<int>(running.size());
  auto mean = [](const std::vector<double>& v) {
    return v.empty() ? 1.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  };
  out.mean_allreduce_slowdown = mean(allreduce);
  out.p95_allreduce_slowdown = nearest_rank(allreduce, 0.95, 1.0);
  out.mean_alltoall_slowdown = mean(alltoall);

  double first_submit = std::numeric_limits<double>::infinity(), last_end = 0, gpu_seconds = 0, waits = 0,
         leaves = 0;
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
  return out;
}

}  // namespace topo
