#include "comm_model/ring_steps.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

#include "comm_model/evaluate.h"
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

// A stepper of job `j` on its routed edges.
Stepper make_stepper(size_t j, std::vector<Edge> edges, const NeighbourJob& job, const Estimate& alone) {
  Stepper s;
  s.job = j;
  s.edges = std::move(edges);
  const size_t n = s.edges.size();
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

Stepper make_stepper(const PathIndex& index, size_t j, const NeighbourJob& job, const Estimate& alone) {
  std::vector<Edge> edges;
  const size_t n = job.ring.size();
  for (size_t i = 0; i < n; ++i)
    edges.push_back(route_edge(index, job.ring[i], job.ring[(i + 1) % n], job.request.gpus_per_host));
  return make_stepper(j, std::move(edges), job, alone);
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
// move), beside the constant sharers. `budget` bounds its work (the sends
// in flight summed over the instants it shares the cables at): false, and
// the first runs left unset, when it would take more.
bool simulate(std::vector<Stepper>& steppers, std::span<const Sharer> constant, const CableRoom& room,
              const Stepper* only, double budget = kInf) {
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
    budget -= static_cast<double>(sharers.size());
    if (budget < 0) return false;
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
  return true;
}

}  // namespace

Estimate ring_estimate(double pace_s, int switches, const Request& request, const Estimate& alone, Estimate out,
                       const ModelOptions& options) {
  Pace pace;
  pace.seconds = pace_s;
  pace.switches = switches;
  Candidate c{Algorithm::Ring, alone.protocol, false, 0};
  cost(request, options, Shape{alone.hosts, alone.gpus_per_host, 0}, &pace, /*ideal=*/false, c);
  out.algorithm = Algorithm::Ring;
  out.protocol = alone.protocol;
  out.pxn = false;
  out.time_s = c.total();
  out.latency_s = c.latency_s;
  return out;
}

namespace {

// The rates that follow from out.time_s, which never beats the ideal.
Estimate with_rates(Estimate out, const Request& request) {
  out.ideal_time_s = std::min(out.ideal_time_s, out.time_s);
  out.algbw_gbps = out.busbw_gbps = 0;
  if (std::isfinite(out.time_s) && out.time_s > 0) {
    out.algbw_gbps = request.bytes * 8 / out.time_s / 1e9;
    out.busbw_gbps = out.algbw_gbps * bus_factor(request.collective, out.ranks);
  }
  return out;
}

// The stationary estimate with the ring's network time replaced by the
// simulated one.
Estimate stepped(const Stepper& s, const NeighbourJob& job, const Estimate& alone, Estimate out,
                 const ModelOptions& options) {
  const double edge_bytes = s.chunk * s.steps;
  int switches = 0;
  for (const Edge& e : s.edges) switches = std::max(switches, e.switches);
  return with_rates(ring_estimate(s.first_run_s / edge_bytes, switches, job.request, alone, std::move(out), options),
                    job.request);
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

namespace {

// Seconds per unit of a part whose flows run at `gbps` each.
double seconds_at(double flow_bytes, double gbps) { return gbps > 0 ? flow_bytes * 8 / (gbps * 1e9) : kInf; }

// Each ring edge's rate with its job alone, every edge sharing apart.
void share_alone(FlowJob& f, const CableRoom& room) {
  std::vector<Sharer> sharers;
  for (const FlowJob::Part& p : f.parts) sharers.push_back({p.flows});
  const std::vector<Share> shares = share_max_min(sharers, room);
  for (size_t k = 0; k < f.parts.size(); ++k) f.parts[k].alone_gbps = shares[k].flow_gbps;
}

// The pace of a job's parts alone: seconds per unit of its slowest.
double alone_pace(const FlowJob& f) {
  double pace = 0;
  for (const FlowJob::Part& p : f.parts) pace = std::max(pace, seconds_at(p.flow_bytes, p.alone_gbps));
  return pace;
}

// How much longer the network part of a job takes than alone when each of
// its flows runs at `gbps`, its slowest part setting the pace.
double network_factor(const FlowJob& f, double gbps) {
  double pace = 0;
  for (const FlowJob::Part& p : f.parts) pace = std::max(pace, seconds_at(p.flow_bytes, gbps));
  const double alone = alone_pace(f);
  if (!std::isfinite(pace)) return kInf;
  if (!(alone > 0) || !std::isfinite(alone)) return 1;
  return std::max(1.0, pace / alone);
}

// The jobs as sharers, one way: apart (a sharer per part) or tied (a
// sharer per job, its parts' flows summed), each at most its duty times
// its rate alone.
struct Sharers {
  std::vector<std::vector<std::pair<int, double>>> tied_flows;  // what tied sharers' spans point into
  std::vector<Sharer> list;
  std::vector<size_t> owner;  // the job of each sharer
};

Sharers sharers_of(std::span<const FlowJob* const> jobs, bool tied) {
  Sharers out;
  out.tied_flows.resize(tied ? jobs.size() : 0);
  for (size_t j = 0; j < jobs.size(); ++j) {
    const FlowJob& f = *jobs[j];
    if (!tied) {
      for (const FlowJob::Part& p : f.parts) {
        out.list.push_back({p.flows, f.job.duty * p.alone_gbps});
        out.owner.push_back(j);
      }
      continue;
    }
    std::map<int, double> on;
    double slowest = kInf;
    for (const FlowJob::Part& p : f.parts) {
      for (auto [key, n] : p.flows) on[key] += n;
      slowest = std::min(slowest, p.alone_gbps);
    }
    out.tied_flows[j].assign(on.begin(), on.end());
    out.list.push_back({out.tied_flows[j], f.job.duty * slowest});
    out.owner.push_back(j);
  }
  return out;
}

// The rate a flow of a job gets on one cable while the job sends, when
// every other flow there keeps the rate it has on average: max-min on that
// cable alone (water filling), with `own` flows of the job.
double level_on(double room, double own, std::vector<std::pair<double, double>>& others) {  // (rate, flows)
  std::sort(others.begin(), others.end());
  double left = room, rising = own;
  for (auto [rate, flows] : others) rising += flows;
  for (auto [rate, flows] : others) {
    if (rate * rising >= left) break;
    left -= rate * flows;
    rising -= flows;
  }
  return rising > 0 ? std::max(0.0, left) / rising : kInf;
}

// Each job's rate while it sends: its slowest cable's level with every
// other job at the rate the sharing gave it (a job at its duty's cap is
// an average of sending and computing; the job judged is sending).
std::vector<double> sending_rates(const Sharers& s, std::span<const Share> shares, size_t jobs, const CableRoom& room) {
  struct Entry {
    int key;
    size_t job;
    double flows, rate;
  };
  std::vector<Entry> all;
  for (size_t k = 0; k < s.list.size(); ++k)
    for (auto [key, n] : s.list[k].flows)
      if (n > 0) all.push_back({key, s.owner[k], n, shares[k].flow_gbps});
  std::sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
  std::vector<double> rate(jobs, kInf);
  std::vector<std::pair<double, double>> others;
  for (size_t i = 0; i < all.size();) {
    size_t end = i;
    while (end < all.size() && all[end].key == all[i].key) ++end;
    for (size_t e = i; e < end; ++e) {
      const size_t j = all[e].job;
      double own = 0;
      others.clear();
      for (size_t o = i; o < end; ++o)
        if (all[o].job == j)
          own += all[o].flows;
        else
          others.emplace_back(all[o].rate, all[o].flows);
      rate[j] = std::min(rate[j], level_on(room.gbps(all[i].key), own, others));
    }
    i = end;
  }
  return rate;
}

// Each job's rate while it sends, with the jobs sharing apart or tied.
std::vector<double> shared_rates(std::span<const FlowJob* const> jobs, const CableRoom& room, bool tied) {
  const Sharers s = sharers_of(jobs, tied);
  if (s.list.empty()) return std::vector<double>(jobs.size(), kInf);
  const std::vector<Share> shares = share_max_min(s.list, room);
  return sending_rates(s, shares, jobs.size(), room);
}

// `out` (the job's estimate alone or among its neighbours) with the time
// the per-flow sharing gives the job.
Estimate flowed(const FlowJob& f, double gbps, Estimate out) {
  const double factor = network_factor(f, gbps);
  const ModelOptions& options = *f.job.options;
  if (factor <= 1) {
    out.time_s = f.alone.time_s;
    out.latency_s = f.alone.latency_s;
    out.algorithm = f.alone.algorithm;
    out.protocol = f.alone.protocol;
    out.pxn = f.alone.pxn;
  } else if (f.ring) {
    out = ring_estimate(alone_pace(f) * factor, f.switches, f.job.request, f.alone, out, options);
  } else {
    out.time_s = f.alone.time_s + f.alone_net_s * (factor - 1);
  }
  return with_rates(out, f.job.request);
}

// Whether the per-flow sharing steps these jobs' rings: every job sends
// all the time (duty 1: at a lower duty the simulation's jobs, all starting
// together, would meet each other's collectives all the way through, which
// averaging their load does not assume), and their rings make at most
// kStepSends sends in a run together.
bool worth_stepping(std::span<const FlowJob* const> jobs) {
  double sends = 0;
  bool rings = false;
  for (const FlowJob* f : jobs) {
    if (f->job.duty < 1) return false;
    if (!f->ring) continue;
    // A ring with edges inside an NVLink domain taken off the network
    // (domain_flows.h) keeps the bounds: its steps there are not flows.
    if (f->parts.size() != f->job.ring.size()) return false;
    rings = true;
    const int n = static_cast<int>(f->parts.size());
    sends += static_cast<double>(n) * steps_of(f->job.request.collective, n);
  }
  return rings && sends <= kStepSends;
}

// The rings of `jobs` stepped beside each other (the others as constant
// sharers at their demand), when worth_stepping() and the simulation ends
// within kStepWork: each ring job's time from its simulated first run.
void step_rings(std::span<const FlowJob* const> jobs, const CableRoom& room, std::vector<Estimate>& out) {
  if (!worth_stepping(jobs)) return;
  std::vector<Stepper> steppers;
  std::vector<Sharer> constant;
  for (size_t j = 0; j < jobs.size(); ++j) {
    const FlowJob& f = *jobs[j];
    if (f.ring) {
      std::vector<Edge> edges;
      for (const FlowJob::Part& p : f.parts) edges.push_back({p.flows, p.flow_bytes, f.switches});
      steppers.push_back(make_stepper(j, std::move(edges), f.job, f.alone));
    } else if (!f.parts.empty()) {
      constant.push_back({f.parts[0].flows, f.job.duty * f.parts[0].alone_gbps});
    }
  }
  if (!simulate(steppers, constant, room, nullptr, kStepWork)) return;
  for (const Stepper& s : steppers) {
    const FlowJob& f = *jobs[s.job];
    const double pace = s.first_run_s / (s.chunk * s.steps);
    Estimate e = f.alone;
    if (pace > alone_pace(f)) e = ring_estimate(pace, f.switches, f.job.request, f.alone, e, *f.job.options);
    out[s.job] = with_rates(e, f.job.request);
  }
}

}  // namespace

FlowJob flow_job(const PathIndex& index, const NeighbourJob& job, const ModelOptions& options) {
  if (!(job.duty > 0 && job.duty <= 1)) throw std::invalid_argument("a job's duty must be in (0, 1]");
  FlowJob f;
  f.job = job;
  f.job.options = job.options.value_or(options);
  detail::Evaluation alone = detail::evaluate(index, job.ring, job.request, BackgroundLoad(), {}, *f.job.options);
  f.alone = alone.estimate;
  f.alone_net_s = alone.alone_net_s;
  if (alone.flows.empty()) return f;
  // Under ECMP a ring's edges hash onto paths by the job's queue pairs,
  // which only the whole pattern's routing draws: it shares tied.
  f.ring = steps_apply(job, f.alone) && !index.fabric().routing().is_ecmp();
  if (!f.ring) {
    f.parts.push_back({std::move(alone.flows), 1.0, alone.alone_flow_gbps});
    return f;
  }
  const size_t n = job.ring.size();
  for (size_t i = 0; i < n; ++i) {
    Edge e = route_edge(index, job.ring[i], job.ring[(i + 1) % n], job.request.gpus_per_host);
    f.switches = std::max(f.switches, e.switches);
    f.parts.push_back({std::move(e.flows), e.flow_bytes, 0});
  }
  share_alone(f, CableRoom(index, BackgroundLoad(), f.job.options->network_efficiency));
  return f;
}

std::vector<Estimate> share_by_flows(const PathIndex& index, std::span<const FlowJob* const> jobs, double efficiency,
                                     bool steps) {
  const CableRoom room(index, BackgroundLoad(), efficiency);
  const std::vector<double> apart = shared_rates(jobs, room, false), tied = shared_rates(jobs, room, true);
  std::vector<Estimate> out;
  out.reserve(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    const double gbps = std::isfinite(apart[j]) && std::isfinite(tied[j]) ? std::sqrt(apart[j] * tied[j]) : kInf;
    out.push_back(flowed(*jobs[j], gbps, jobs[j]->alone));
  }
  if (steps) step_rings(jobs, room, out);
  return out;
}

std::vector<Estimate> estimate_each_by_flows(const PathIndex& index, std::span<const NeighbourJob> jobs,
                                             const ModelOptions& options) {
  const Neighbours all = added(index, jobs, options);
  std::vector<FlowJob> flow_jobs;
  std::vector<const FlowJob*> of;
  flow_jobs.reserve(jobs.size());
  for (const NeighbourJob& j : jobs) of.push_back(&flow_jobs.emplace_back(flow_job(index, j, options)));
  std::vector<Estimate> out = share_by_flows(index, of, options.network_efficiency);
  // The stationary estimate's neighbours and bottleneck, with the per-flow time.
  for (size_t j = 0; j < jobs.size(); ++j) {
    Estimate among = estimate_among(all, j, jobs[j], options);
    among.time_s = out[j].time_s;
    among.latency_s = out[j].latency_s;
    among.algorithm = out[j].algorithm;
    among.protocol = out[j].protocol;
    among.pxn = out[j].pxn;
    out[j] = with_rates(among, jobs[j].request);
  }
  return out;
}

Estimate estimate_by_flows(const PathIndex& index, std::span<const NodeId> hosts, const Request& request,
                           std::span<const NeighbourJob> neighbours, const ModelOptions& options) {
  std::vector<NeighbourJob> jobs;
  jobs.reserve(1 + neighbours.size());
  jobs.push_back({std::vector<NodeId>(hosts.begin(), hosts.end()), request});
  jobs.insert(jobs.end(), neighbours.begin(), neighbours.end());
  return estimate_each_by_flows(index, jobs, options)[0];
}

}  // namespace topo
