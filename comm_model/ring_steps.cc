#include "comm_model/ring_steps.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "comm_model/routes.h"
#include "comm_model/sharing.h"
#include "comm_model/time.h"
#include "comm_model/traffic.h"

namespace topo {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// A send is done when less than this share of its chunk is left: the
// rounding of time steps, not bytes anyone waits for.
constexpr double kDone = 1e-9;

// One ring edge: the flows it puts on each directed cable, and how many
// bytes of the edge's traffic one of those flows carries.
struct Edge {
  std::vector<std::pair<int, double>> flows;
  double flow_bytes = 1;
  int switches = 0;
};

Edge route_edge(const PathIndex& index, NodeId from, NodeId to, int gpus) {
  const NodeId pair[] = {from, to};
  const Allocation al = allocate(index, pair, gpus);
  const CableLoad load = route(index, al, ring_traffic(index, al, 1.0, /*chain=*/true));
  return {flows_of(load.bytes, load.flow_bytes), load.flow_bytes, load.max_switches};
}

// A ring job as the simulation runs it. Ranks are its hosts; sends and
// steps count over all its runs.
struct Stepper {
  size_t job = 0;
  std::vector<Edge> edges;  // host i to host i + 1
  int steps = 0;            // per run
  double chunk = 0;         // bytes of an edge's traffic per step
  double pause_s = 0;       // computing between two runs
  std::vector<int> sent;
  std::vector<double> left;  // bytes of the send in flight; negative when none
  std::vector<double> wake;  // between runs: when the host may start again; negative when not waiting
  double first_run_s = -1;

  size_t size() const { return edges.size(); }
};

// Steps of one run of a ring of `hosts`.
int steps_of(Collective c, int hosts) { return c == Collective::AllReduce ? 2 * (hosts - 1) : hosts - 1; }

bool steps_apply(const NeighbourJob& job, const Estimate& alone) {
  const Collective c = job.request.collective;
  return job.ring.size() >= 2 && job.request.bytes > 0 && alone.algorithm == Algorithm::Ring &&
         (c == Collective::AllReduce || c == Collective::AllGather || c == Collective::ReduceScatter);
}

Stepper make_stepper(const PathIndex& index, size_t j, const NeighbourJob& job, const Estimate& alone) {
  Stepper s;
  s.job = j;
  const size_t n = job.ring.size();
  for (size_t i = 0; i < n; ++i)
    s.edges.push_back(route_edge(index, job.ring[i], job.ring[(i + 1) % n], job.request.gpus_per_host));
  // Steps between hosts: a host's GPUs pass a chunk on over NVLink in no
  // time here, so the ranks inside a host add steps but no waits.
  s.steps = steps_of(job.request.collective, static_cast<int>(n));
  s.chunk = ring_edge_bytes(job.request.collective, alone.ranks, job.request.bytes) / s.steps;
  s.pause_s = alone.time_s * (1 - job.duty) / job.duty;
  s.sent.assign(n, 0);
  s.left.assign(n, -1);
  s.wake.assign(n, -1);
  return s;
}

// Starts every send of the job whose inputs are there: a host sends its
// k-th chunk once its (k-1)-th left and the host before it sent its k-th
// (k > 0); the first chunk of a new run also waits out the job's pause.
void start_ready(Stepper& s, double now) {
  const size_t n = s.size();
  for (size_t i = 0; i < n; ++i) {
    if (s.left[i] >= 0) continue;
    const int k = s.sent[i];
    if (k > 0 && s.sent[(i + n - 1) % n] < k) continue;
    if (k > 0 && k % s.steps == 0 && s.pause_s > 0) {
      if (s.wake[i] < 0) s.wake[i] = now + s.pause_s;
      if (now < s.wake[i]) continue;
      s.wake[i] = -1;
    }
    s.left[i] = s.chunk;
  }
}

// The fluid simulation, until every stepper has run once or, with `only`,
// that one: each first run in seconds (+inf when a flow of it can never
// move), beside the constant sharers.
void simulate(std::vector<Stepper>& steppers, std::span<const Sharer> constant, const CableRoom& room,
              const Stepper* only) {
  double now = 0;
  for (Stepper& s : steppers) start_ready(s, now);
  std::vector<Sharer> sharers;
  std::vector<std::pair<Stepper*, size_t>> sending;
  auto unfinished = [&] {
    if (only) return only->first_run_s < 0;
    return std::any_of(steppers.begin(), steppers.end(), [](const Stepper& s) { return s.first_run_s < 0; });
  };
  while (unfinished()) {
    sharers.clear();
    sending.clear();
    for (Stepper& s : steppers)
      for (size_t i = 0; i < s.size(); ++i)
        if (s.left[i] >= 0) {
          sharers.push_back({s.edges[i].flows});
          sending.emplace_back(&s, i);
        }
    sharers.insert(sharers.end(), constant.begin(), constant.end());
    const std::vector<Share> shares = share_max_min(sharers, room);
    // Bytes of edge traffic per second, per send in flight.
    std::vector<double> speed(sending.size());
    double dt = kInf;
    for (size_t k = 0; k < sending.size(); ++k) {
      auto [s, i] = sending[k];
      speed[k] = shares[k].flow_gbps * 1e9 / 8 / s->edges[i].flow_bytes;
      if (speed[k] > 0) dt = std::min(dt, s->left[i] / speed[k]);
    }
    for (const Stepper& s : steppers)
      for (double w : s.wake)
        if (w >= 0) dt = std::min(dt, w - now);
    if (!std::isfinite(dt)) break;  // nothing can move: the rest never finish
    now += dt;
    for (size_t k = 0; k < sending.size(); ++k) {
      auto [s, i] = sending[k];
      s->left[i] -= speed[k] * dt;
      if (s->left[i] <= kDone * s->chunk) {
        s->left[i] = -1;
        ++s->sent[i];
      }
    }
    for (Stepper& s : steppers) {
      start_ready(s, now);
      if (s.first_run_s < 0 && *std::min_element(s.sent.begin(), s.sent.end()) >= s.steps) s.first_run_s = now;
    }
  }
  for (Stepper& s : steppers)
    if (s.first_run_s < 0 && (!only || &s == only)) s.first_run_s = kInf;
}

// The stationary estimate with the ring's network time replaced by the
// simulated one.
Estimate stepped(const Stepper& s, const NeighbourJob& job, const Estimate& alone, Estimate out,
                 const ModelOptions& options) {
  const double edge_bytes = s.chunk * s.steps;
  Pace pace;
  pace.seconds = s.first_run_s / edge_bytes;
  for (const Edge& e : s.edges) pace.switches = std::max(pace.switches, e.switches);
  Candidate c{Algorithm::Ring, alone.protocol, false, 0};
  cost(job.request, options, Shape{alone.hosts, alone.gpus_per_host, 0}, &pace, /*ideal=*/false, c);
  out.algorithm = Algorithm::Ring;
  out.protocol = alone.protocol;
  out.pxn = false;
  out.time_s = c.total();
  out.latency_s = c.latency_s;
  out.ideal_time_s = std::min(out.ideal_time_s, out.time_s);
  out.algbw_gbps = out.busbw_gbps = 0;
  if (std::isfinite(out.time_s) && out.time_s > 0) {
    out.algbw_gbps = job.request.bytes * 8 / out.time_s / 1e9;
    out.busbw_gbps = out.algbw_gbps * bus_factor(job.request.collective, out.ranks);
  }
  return out;
}

// The jobs as the simulation takes them: rings that step, the others as
// constant sharers at their demand.
struct Stepped {
  std::vector<Stepper> steppers;  // the jobs that step, in job order
  std::vector<int> stepper_of;    // -1 for a job that does not step
};

// `all`: `jobs`, added in order. `only`: the job whose time is wanted (the
// others' only as far as that job runs); none for every job's.
Stepped run_steps(const Neighbours& all, std::span<const NeighbourJob> jobs, const ModelOptions& options,
                  std::optional<size_t> only) {
  Stepped out;
  std::vector<Sharer> constant;
  out.stepper_of.assign(jobs.size(), -1);
  for (size_t j = 0; j < jobs.size(); ++j) {
    const Neighbours::Job& n = all.jobs()[j];
    if (steps_apply(jobs[j], n.alone)) {
      out.stepper_of[j] = static_cast<int>(out.steppers.size());
      out.steppers.push_back(make_stepper(all.index(), j, jobs[j], n.alone));
    } else if (!n.flows.empty()) {
      constant.push_back({n.flows, n.demand_gbps});
    }
  }
  const Stepper* wanted = nullptr;
  if (only) {
    if (out.stepper_of[*only] < 0) return out;
    wanted = &out.steppers[out.stepper_of[*only]];
  }
  simulate(out.steppers, constant, CableRoom(all.index(), BackgroundLoad(), options.network_efficiency), wanted);
  return out;
}

Neighbours added(const PathIndex& index, std::span<const NeighbourJob> jobs, const ModelOptions& options) {
  Neighbours all(index);
  for (const NeighbourJob& j : jobs) all.add(j, options);
  return all;
}

}  // namespace

Estimate estimate_by_steps(const PathIndex& index, std::span<const NodeId> hosts, const Request& request,
                           std::span<const NeighbourJob> neighbours, const ModelOptions& options) {
  std::vector<NeighbourJob> jobs;
  jobs.reserve(1 + neighbours.size());
  jobs.push_back({std::vector<NodeId>(hosts.begin(), hosts.end()), request});
  jobs.insert(jobs.end(), neighbours.begin(), neighbours.end());
  const Neighbours all = added(index, jobs, options);
  Estimate out = estimate_among(all, 0, jobs[0], options);
  Stepped run = run_steps(all, jobs, options, 0);
  if (run.stepper_of[0] < 0) return out;
  return stepped(run.steppers[run.stepper_of[0]], jobs[0], all.jobs()[0].alone, out, options);
}

std::vector<Estimate> estimate_each_by_steps(const PathIndex& index, std::span<const NeighbourJob> jobs,
                                             const ModelOptions& options) {
  const Neighbours all = added(index, jobs, options);
  std::vector<Estimate> out;
  out.reserve(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) out.push_back(estimate_among(all, j, jobs[j], options));
  Stepped run = run_steps(all, jobs, options, std::nullopt);
  for (const Stepper& s : run.steppers)
    out[s.job] = stepped(s, jobs[s.job], all.jobs()[s.job].alone, out[s.job], jobs[s.job].options.value_or(options));
  return out;
}

}  // namespace topo
