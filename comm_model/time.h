// The last stage of an estimate: what a candidate algorithm and protocol
// cost, from how fast the network carries its routed pattern (sharing.h),
// NVLink inside the hosts, and the per-step latencies (nccl_tuning.h).
#pragma once

#include "comm_model/estimate.h"

namespace topo {

// A routed pattern's pace: seconds its network part takes per unit of the
// pattern (per byte of a ring or tree edge; per run for AllToAll), on the
// fabric as it is and on the ideal one (only the hosts' own cables limit,
// every path crosses one switch), and the most switches a step passes.
struct Pace {
  double seconds = 0;
  double ideal_seconds = 0;
  int switches = 0;
};

struct Candidate {
  Algorithm algorithm = Algorithm::Ring;
  Protocol protocol = Protocol::Simple;
  bool pxn = false;
  int pattern = -1;  // which routed pattern it runs on; -1 for none (one host)
  double net_s = 0, nvl_s = 0, bw_s = 0, latency_s = 0;
  double total() const { return bw_s + latency_s; }
};

// The allocation's shape as the time stage needs it.
struct Shape {
  int hosts = 0;
  int gpus_per_host = 1;
  int tree_depth = 0;  // of the double binary tree between hosts
};

// Fills c's times for its algorithm, protocol and PXN choice on `pace`
// (nullptr: no network part), on the real fabric or the ideal one.
void cost(const Request& request, const ModelOptions& options, const Shape& shape, const Pace* pace, bool ideal,
          Candidate& c);

}  // namespace topo
