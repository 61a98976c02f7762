#include "routing/ring_floor.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "routing/planned_flows.h"

namespace topo {
namespace {

using planner::attachment;

// A leaf's usable uplinks, each counted at its rate over its tier's.
double uplink_capacity(const Fabric& f, NodeId leaf) {
  double capacity = 0;
  for (auto [e, end] = boost::out_edges(leaf, f.graph()); e != end; ++e) {
    const Link& l = f.link(*e);
    const NodeId peer = f.peer(*e, leaf);
    if (l.kind == LinkKind::Cable && l.gbps() > 0 && f.node(peer).kind == NodeKind::Switch &&
        f.node(peer).height > f.node(leaf).height)
      capacity += 1.0 / planner::cable_weight(l);
  }
  return capacity;
}

// The least the busiest of a leaf's uplinks can carry with `flows` on them.
double leaf_floor(int flows, double capacity) {
  if (capacity <= 0) return flows;
  const double share = flows / capacity;
  const bool whole = std::abs(capacity - std::round(capacity)) < 1e-9;
  return whole ? std::ceil(share - 1e-9) : share;
}

struct CrossFlow {
  size_t job;
  NodeId from, to;  // leaves
};

std::vector<CrossFlow> cross_flows(const Fabric& f, const std::vector<RingJob>& jobs) {
  std::vector<CrossFlow> out;
  for (size_t j = 0; j < jobs.size(); ++j) {
    const auto& ring = jobs[j].ring;
    for (size_t i = 0; ring.size() > 1 && i < ring.size(); ++i) {
      auto from = f.hcas_of(ring[i]), to = f.hcas_of(ring[(i + 1) % ring.size()]);
      for (size_t r = 0; r < std::min(from.size(), to.size()); ++r) {
        auto a = attachment(f, from[r]), b = attachment(f, to[r]);
        if (a && b && a->sw != b->sw) out.push_back({j, a->sw, b->sw});
      }
    }
  }
  return out;
}

}  // namespace

std::vector<double> ring_floors(const Fabric& fabric, const std::vector<RingJob>& jobs) {
  std::vector<double> floors(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) floors[j] = jobs[j].ring.size() > 1 ? 1.0 : 0.0;
  const std::vector<CrossFlow> flows = cross_flows(fabric, jobs);
  std::map<NodeId, int> out, in;
  for (const CrossFlow& c : flows) ++out[c.from], ++in[c.to];
  std::map<NodeId, double> capacity;
  for (const CrossFlow& c : flows)
    for (NodeId leaf : {c.from, c.to})
      if (!capacity.contains(leaf)) capacity[leaf] = uplink_capacity(fabric, leaf);
  for (const CrossFlow& c : flows)
    floors[c.job] =
        std::max({floors[c.job], leaf_floor(out[c.from], capacity[c.from]), leaf_floor(in[c.to], capacity[c.to])});
  return floors;
}

}  // namespace topo
