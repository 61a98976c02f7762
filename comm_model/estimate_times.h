// The two figures of an estimate (estimate.h) a placement search scores a
// ring by: the time beside the background load and the ideal time. The
// same numbers estimate() gives, without the rest it works out for people
// (the time alone, the bottleneck named in words, bus bandwidth): a search
// after a job's start or end estimates a few rings per decision, inside
// Slurm's scheduling pass, and reads nothing else of them.
#pragma once

#include <span>

#include "comm_model/estimate.h"

namespace topo {

struct EstimateTimes {
  double time_s = 0;        // Estimate::time_s
  double ideal_time_s = 0;  // Estimate::ideal_time_s
};

// estimate(index, hosts, request, background) with the default options,
// reduced to its times. Throws like estimate().
EstimateTimes estimate_times(const PathIndex& index, std::span<const NodeId> hosts, const Request& request,
                             const BackgroundLoad& background = {});

}  // namespace topo
