// The order a job's hosts should take in its ring.
//
// A ring that visits hosts leaf by leaf crosses each leaf boundary once per
// direction, so only (leaves) of its edges climb to a spine, against nearly
// every edge for hosts taken in name order on a fabric cabled across rows.
// Order: by pod, then leaf (in fabric order), then port on the leaf, which
// is also the rail-aligned order inside a leaf group of a rail-optimized
// fabric.
#pragma once

#include <span>
#include <vector>

#include "placement/switch_tree.h"

namespace topo {

std::vector<NodeId> ring_order(const SwitchTree& tree, std::span<const NodeId> hosts);
// The same order, in place: a search that owns the hosts allocates nothing.
void order_ring(const SwitchTree& tree, std::vector<NodeId>& hosts);

// Ring edges (including the closing one) whose ends sit on different leaves
// or pods: the edges that climb to a spine, and those that climb to the core.
struct RingCrossings {
  int spine_edges = 0;
  int pod_edges = 0;
};
RingCrossings ring_crossings(const SwitchTree& tree, std::span<const NodeId> ring);

}  // namespace topo
