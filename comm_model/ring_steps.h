// Rings side by side, step by step: what the stationary sharing of
// neighbours.h averages away.
//
// A ring collective runs in steps. In each, every rank sends one chunk to
// the next rank and may send its next chunk only once its own send is done
// and the chunk of the rank before it has arrived (as NCCL's ring
// pipelines). So a ring is paced by its slowest edge, and its other edges
// send their chunk at whatever rate the fabric gives them, then wait. While
// they send they hold a full flow's share of every cable they cross; a
// neighbour's flow that is limited elsewhere cannot win that room back
// while they wait. neighbours.h spreads every edge's bytes evenly over the
// run (all of a job's edges at its pace), which gives such a neighbour the
// average room instead: on a busy fabric it comes out too fast, by up to a
// quarter against SimGrid (tests/simgrid/simgrid_check.cc).
//
// This is a fluid simulation of that. Every job starts its collective at
// time 0; each send in flight is a flow over the cables its edge takes
// (routes.h: one path under static tables, an even spread under adaptive
// routing), and at every instant all flows in flight share every cable
// max-min fair per flow (sharing.h, with no demand caps). Time advances
// from one send's end to the next. A job that finishes starts again after
// it computes ((1 - duty) / duty of its time alone), so that every job's
// first run meets the others all the way through; a job's time is its
// first run.
//
// Which jobs step: those whose collective runs the ring algorithm alone
// (AllReduce, AllGather, ReduceScatter; what estimate() picks on their own
// hosts with no neighbours, as NCCL's tuning picks by size and count, not
// by contention). Only the edges between hosts are flows, and the steps
// are the hosts' (2(N - 1) for AllReduce, N - 1 for AllGather and
// ReduceScatter, N hosts), each edge carrying what the ring of all ranks
// puts on it: the ranks inside a host pass chunks on over NVLink in no
// time here, which would add steps but no waits (exact with one GPU a
// host, a coarser pipeline than NCCL's with more). Any
// other job (a tree, AllToAll, Broadcast's chain) keeps loading its cables
// at its stationary demand all the time (neighbours.h).
//
// Exact for what it models: step-synchronous rings, fluid flows, max-min
// per flow, no latency on the wire (tests/simgrid/simgrid_check.cc agrees
// with SimGrid to rounding on 468 jobs). Its cost grows with the sends:
// about hosts x steps share computations per job. The placement keeps the
// stationary model; `topoctl estimate --concurrent FILE --sharing steps`
// and the judge of `topoctl simulate|score --sharing steps` use this one
// (each judged job beside its neighbours, all starting together, a
// neighbour's collectives each as a job of its own).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "comm_model/neighbours.h"

namespace topo {

// How concurrent jobs share the cables over time: per flow (below, the
// judge's default), on average with every flow of a job at the job's pace
// (neighbours.h), or step by step (below).
enum class Sharing : uint8_t { Flows, Stationary, Steps };

// The collective on `hosts` while the neighbours run theirs, all starting
// together: its first run, simulated step by step when it runs a ring (the
// neighbours only as far as that run lasts); otherwise, and for everything
// but the ring's network time, what estimate() with these neighbours
// gives. Throws like estimate() and Neighbours::add().
Estimate estimate_by_steps(const PathIndex& index, std::span<const NodeId> hosts, const Request& request,
                           std::span<const NeighbourJob> neighbours, const ModelOptions& options = {});

// Every job judged with all the others as its neighbours, as
// estimate_each() does, the ring jobs' network time taken from the step
// simulation above (the rest of each estimate, its latencies, algorithm,
// protocol and bottleneck, as estimate_each() gives them). Throws like
// estimate_each().
std::vector<Estimate> estimate_each_by_steps(const PathIndex& index, std::span<const NeighbourJob> jobs,
                                             const ModelOptions& options = {});

// Per flow, the replay's judge: every job joined through shared cables
// shares at once, bounded from both sides. Tied (as neighbours.h), every
// edge of a ring sends all the time at its ring's pace: too fast, because
// in SimGrid (and in the step simulation above) an edge that does not set
// the pace sends its chunk at the rate max-min gives it and then waits,
// and while it sends it takes a full flow's share of its cables. Apart,
// every ring edge a sharer of its own that always sends, max-min fair per
// flow, the ring at its slowest edge: too slow, because those edges do
// wait. A ring's flows run at the geometric mean of the two rates: the
// midpoint of the bounds, no fitted weight. On busy snapshots
// (tests/simgrid/simgrid_check.cc, 3-6 jobs of 1 GPU a host) that is
// within 0.3% of SimGrid per job at p95 under adaptive routing and
// within 0.5% (interleaved names) to 8% (random hosts) under static
// tables; either bound alone reaches 13-16% there. It costs two sharings
// of the jobs together, not a simulation.
//
// Both ways, a job that computes part of its time (duty d < 1) loads its
// cables at most d times its rate alone: its average. The judged job is
// sending: on each of its cables its flows take what max-min on that cable
// leaves them with every other flow at the rate the sharing gave it, and
// its slowest cable sets its rate (at d = 1 that is the sharing's own).
// Collectives that are not rings (a tree, AllToAll, Broadcast's chain), and
// rings under ECMP hashing, share as one sharer both ways.

// Where the per-flow sharing is exact instead. Its bounds cannot tell a
// ring whose pace a shared cable sets for both jobs (SimGrid: both at
// half, the apart bound) from one whose edge there waits for a slower
// edge elsewhere (between the bounds): on random hosts under static tables
// they are 8% off SimGrid at p95. So when every job of the component sends
// all the time (duty 1), no ring has edges inside an NVLink domain
// (domain_flows.h) and their rings make at most kStepSends sends in a run
// together, the rings are stepped beside each other as the step
// simulation above does, the whole component at once (its neighbours'
// neighbours too, which Sharing::Steps leaves out): within 0.5% of SimGrid
// on every busy snapshot of tests/simgrid/simgrid_check.cc. The simulation
// stops, and the bounds stand, once it has shared the cables for more
// than kStepWork sends in flight summed over its instants. At a lower duty
// the bounds stand: the simulation starts all jobs together, so a job's
// first run would meet its neighbours' collectives all the way through,
// an assumption the averaging of the bounds does not make and SimGrid
// cannot settle.
inline constexpr double kStepSends = 1000;
inline constexpr double kStepWork = 3e4;

// One collective of a job as the per-flow sharing takes it, routed once.
struct FlowJob {
  struct Part {
    std::vector<std::pair<int, double>> flows;  // per load key (routes.h)
    double flow_bytes = 1;                      // bytes of the part's unit one flow carries
    double alone_gbps = 0;                      // the rate one flow gets with the job alone
  };
  NeighbourJob job;
  bool ring = false;        // its edges share apart (steps_apply), else one tied part
  std::vector<Part> parts;  // ring edges host i to i + 1, or the whole pattern
  Estimate alone;
  double alone_net_s = 0;  // the network part of alone.time_s
  int switches = 0;        // the most a ring edge crosses
};

// An estimate (`out`) with a ring's network time replaced: its edges at
// `pace_s` seconds per byte of edge traffic, `alone`'s shape and protocol.
Estimate ring_estimate(double pace_s, int switches, const Request& request, const Estimate& alone, Estimate out,
                       const ModelOptions& options);

// Routes the job and shares its own flows alone. Throws like
// Neighbours::add().
FlowJob flow_job(const PathIndex& index, const NeighbourJob& job, const ModelOptions& options = {});

// Every job's estimate with all the others sharing per flow, in their order.
// `efficiency`: the room of a cable over its line rate
// (ModelOptions::network_efficiency). `steps`: step the rings where that
// is cheap and exact (above); false keeps the bounds everywhere.
std::vector<Estimate> share_by_flows(const PathIndex& index, std::span<const FlowJob* const> jobs, double efficiency,
                                     bool steps = true);

// The collective on `hosts` beside the neighbours, all sharing per flow.
// Throws like estimate() and Neighbours::add().
Estimate estimate_by_flows(const PathIndex& index, std::span<const NodeId> hosts, const Request& request,
                           std::span<const NeighbourJob> neighbours, const ModelOptions& options = {});

// Every job with all the others, sharing per flow. Throws like
// estimate_each().
std::vector<Estimate> estimate_each_by_flows(const PathIndex& index, std::span<const NeighbourJob> jobs,
                                             const ModelOptions& options = {});

}  // namespace topo
