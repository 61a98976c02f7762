// What a collective costs on an ordered allocation: the time, the algorithm
// and bus bandwidth as nccl-tests reports them, and the link that limits it.
//
// The model, in short:
// - Ranks: every host of the allocation runs `gpus_per_host` GPUs; the
//   hosts' order is the ring order (rank r lives on host r / G).
// - Each GPU talks to the network through one HCA port: the one hwloc found
//   closest to it when the fabric carries GPU data, else GPU g of G uses port
//   g*H/G of the host's H ports. A flow between hosts splits over the ports
//   by the GPUs behind them and lands on the receiver's port of the same
//   rail, as NCCL's rail-matched rings do.
// - Bandwidth: every flow is routed as the fabric routes (routes.h): on its
//   one path through the forwarding tables under static routing, spread
//   over equal paths under adaptive routing. Flows that share a cable split
//   it per flow, max-min fair, with other jobs' flows too (neighbours.h);
//   the cable that leaves the collective's flows the least, at its line
//   rate times the network efficiency less background load, sets the pace.
//   Inside a host, NVLink runs in parallel with the network (or before and
//   after it, for Hierarchical) at `nvlink_gbps` per GPU.
// - The pipeline, a file per stage: traffic.h (who sends how much to whom)
//   -> routes.h (the directed cables each flow takes) -> sharing.h (the rate
//   each flow gets) -> time.h (bandwidth, latency, the bottleneck).
// - Latency: steps times a per-step latency, from NCCL's tuning tables, plus
//   one switch latency per switch on the longest path a step takes.
// - Algorithms: Ring (2(n-1) steps for AllReduce), Tree (NCCL's double binary
//   tree between hosts, a chain inside them; AllReduce only), Hierarchical
//   (NVLink reduce-scatter, one ring per GPU slot between hosts, NVLink
//   all-gather), Direct (AllToAll as point-to-point: each rank sends size/n
//   to every rank). Unless one is asked for, the fastest algorithm and
//   protocol win, as NCCL's tuner picks by predicted time.
// - PXN (AllToAll): data for a GPU of another rail first hops over NVLink to
//   the local GPU of that rail, so it stays on the rail's leaf; without it
//   the flow crosses from rail to rail through the spines. Both are modelled.
//
// Everything is a pure function of its inputs; one PathIndex serves any
// number of estimates, from any number of threads.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "comm_model/collective.h"
#include "comm_model/link_load.h"
#include "comm_model/paths.h"

namespace topo {

struct Request {
  Collective collective = Collective::AllReduce;
  double bytes = 0;  // nccl-tests "size": the whole buffer, a multiple of the dtype's size
  Dtype dtype = Dtype::Fp32;
  int gpus_per_host = 1;
};

enum class Pxn : uint8_t { Auto, On, Off };

struct ModelOptions {
  std::optional<Algorithm> algorithm;  // none: the fastest that NCCL runs for the collective
  std::optional<Protocol> protocol;    // none: the fastest
  Pxn pxn = Pxn::Auto;                 // Auto: whichever is faster

  // NVLink bandwidth one GPU gets per direction. 2960 Gb/s = 370 GB/s, what
  // NCCL reaches on H100 NVLink4 after protocol overhead (NVIDIA,
  // github.com/NVIDIA/nccl-tests/issues/212).
  double nvlink_gbps = 2960;
  // Share of a cable's line rate NCCL moves: 0.96, from 24 GB/s per HDR 200
  // Gb/s NIC and 192 GB/s AllReduce bus bandwidth over 8 of them on a
  // DGX-A100 (NVIDIA, github.com/NVIDIA/nccl-tests/issues/160 and
  // github.com/NVIDIA/nccl/issues/812).
  double network_efficiency = 0.96;
  // Added per switch a step's longest path passes. Vendors quote 130-400 ns
  // port to port for NDR switches; an assumption, not a measurement.
  double switch_latency_us = 0.3;

  // true: NCCL's per-step latencies and protocol factors (nccl_tuning.h).
  // false: the textbook alpha-beta model, with no protocol overheads and
  // these latencies per step.
  bool nccl_tuning = true;
  // ECMP routing (fabric/routing.h): which draw of the switches' hash to
  // take; one draw is one run of the job. Other routings ignore it.
  uint64_t ecmp_draw = 0;
  // ECMP: queue pairs per connection this job runs with (its
  // NCCL_IB_QPS_PER_CONNECTION), when it differs from the fabric's
  // Routing::qps; 0 takes the fabric's. Other routings ignore it.
  int ecmp_qps = 0;
  double alpha_us = 0;         // per step between hosts
  double nvlink_alpha_us = 0;  // per step inside a host
};

struct Bottleneck {
  enum class Where : uint8_t { None, Cable, NvLink };
  Where where = Where::None;
  std::optional<LinkId> cable;
  int directed_cable = -1;     // routing/route.h directed_cable(); -1 when not a cable
  NodeId from = 0;             // traffic leaves this end of the cable
  std::string name;            // "leaf01:9 -> spine01:1", or "NVLink"
  double flows = 0;            // this collective's flows on it; fractional under ECMP
  double neighbour_flows = 0;  // other jobs' flows on it (neighbours.h)
  double gbps = 0;             // room on it for this collective
  double share_gbps = 0;       // gbps / flows: what each flow gets
};

struct Estimate {
  std::string routing;  // how the fabric routed the flows: routing_name(), "adaptive" or "static:ftree"
  Collective collective = Collective::AllReduce;
  Algorithm algorithm = Algorithm::Ring;
  Protocol protocol = Protocol::Simple;
  bool pxn = false;  // AllToAll only
  int hosts = 0;
  int gpus_per_host = 0;
  int ranks = 0;
  double bytes = 0;
  double time_s = 0;      // +inf when a needed cable has no room left
  double latency_s = 0;   // the part of time_s that does not depend on size
  double algbw_gbps = 0;  // bytes / time, in Gb/s (nccl-tests prints GB/s: divide by 8)
  double busbw_gbps = 0;  // algbw times bus_factor(collective, ranks)
  // The same hosts alone on a non-blocking fabric: only their own cables
  // limit, every path crosses one switch. Never more than time_s.
  double ideal_time_s = 0;
  // With neighbours (neighbours.h): the time with none, and how many of
  // them have a flow on a cable this collective crosses.
  double alone_time_s = 0;
  int neighbours = 0;
  Bottleneck bottleneck;
};

// Throws std::invalid_argument for a bad request or options (an algorithm
// the collective does not run with, a host listed twice, a node that is not
// a host), FabricError for a host with no usable HCA cable or no path.
// An allocation of fewer than two ranks costs nothing: time 0.
Estimate estimate(const PathIndex& index, std::span<const NodeId> hosts, const Request& request,
                  const BackgroundLoad& background = {}, const ModelOptions& options = {});

// The bytes one run of the collective puts on each directed cable when its
// ranks form a ring in `hosts` order (a chain for Broadcast), routed as
// estimate() routes them: what a scheduler needs to know which cables a job
// loads, and how heavily. Throws like estimate().
LinkLoad ring_load(const PathIndex& index, std::span<const NodeId> hosts, const Request& request);

}  // namespace topo
