// A running ring's demand: what a job that runs a collective around its
// ring, again and again, puts on each directed cable on average. The bytes
// one run puts on a cable (ring_load) over the time that run takes alone
// (estimate), times the job's duty (the share of its time it spends in
// collectives: a job that computes half of the time loads its cables half
// as much).
//
// It is what the placement subtracts from a cable's room for the jobs
// already running (placement/traffic.h, on slurmctld's scheduling thread)
// and what `topoctl estimate --collective pipeline --concurrent` puts
// beside a pipeline's stage boundaries.
#pragma once

#include <cmath>
#include <span>
#include <utility>
#include <vector>

#include "comm_model/estimate.h"

namespace topo {

struct RingDemand {
  // (directed cable, Gb/s) for every directed cable the ring loads, ordered
  // by cable (routing/route.h directed_cable).
  std::vector<std::pair<int, double>> gbps;
  // One run's time alone (Estimate::time_s), which the rates rest on.
  double alone_s = 0;
  // Whether that time gives a rate, positive and finite; when not, no cables.
  bool paced() const { return alone_s > 0 && std::isfinite(alone_s); }
};

// The demand of `request` run around `ring` (a chain for Broadcast) at
// `duty`, the ring estimated alone with `options`. Throws like estimate().
RingDemand ring_demand(const PathIndex& index, std::span<const NodeId> ring, const Request& request, double duty,
                       const ModelOptions& options = {});

// Adds `gbps` to `load` in the direction the directed cable id `directed`
// names (routing/route.h directed_cable), as a demand's entries name them.
// Inline: the engine writes every loaded directed cable this way when the
// running jobs changed, on slurmctld's scheduling thread.
inline void add_directed(const Fabric& fabric, int directed, double gbps, BackgroundLoad& load) {
  const LinkId cable = fabric.cables()[static_cast<size_t>(directed / 2)];
  const Link& l = fabric.link(cable);
  load.add(fabric, cable, directed % 2 == 0 ? l.end_a : l.end_b, gbps);
}

}  // namespace topo
