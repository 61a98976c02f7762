// The floor under any tables: how few flows the busiest cable of a
// running ring can carry, whatever the forwarding tables.
//
// Every ring flow between two leaves leaves its source leaf by an uplink
// and enters its destination leaf by a downlink, whichever path tables
// give it. A leaf that sends (or receives) more cross-leaf ring flows than
// it has usable uplinks must put two on one cable, so no table reaches one
// flow a cable for a job with a flow through that leaf: that part of a
// job's slowdown belongs to where it was placed, beside whom, not to the
// routes. Flows on a degraded cable count as in the planner (a 1x cable of
// a 4x tier: four), so a leaf's capacity is the sum over its uplinks of
// their rate over their tier's.
#pragma once

#include <vector>

#include "fabric/fabric.h"
#include "routing/job_routes.h"

namespace topo {

// Per job of `jobs` (all the running rings, each other's neighbours): the
// fewest flows the busiest cable its ring flows cross could carry under
// any tables, counted on leaf uplinks and downlinks (whole flows where
// every uplink runs at its tier's rate). 1 for a ring whose flows all have
// room; 0 for a job with no flow (a single host).
std::vector<double> ring_floors(const Fabric& fabric, const std::vector<RingJob>& jobs);

}  // namespace topo
