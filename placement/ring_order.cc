#include "placement/ring_order.h"

#include <algorithm>
#include <tuple>

namespace topo {

std::vector<NodeId> ring_order(const SwitchTree& tree, std::span<const NodeId> hosts) {
  std::vector<NodeId> ring(hosts.begin(), hosts.end());
  auto key = [&](NodeId h) {
    int leaf = tree.home_leaf(h);
    int pod = leaf >= 0 ? tree.leaves()[leaf].pod : 1 << 30;
    return std::make_tuple(pod, leaf, tree.leaf_port(h), h);
  };
  std::sort(ring.begin(), ring.end(), [&](NodeId a, NodeId b) { return key(a) < key(b); });
  return ring;
}

RingCrossings ring_crossings(const SwitchTree& tree, std::span<const NodeId> ring) {
  RingCrossings out;
  if (ring.size() < 2) return out;
  for (size_t i = 0; i < ring.size(); ++i) {
    int a = tree.home_leaf(ring[i]), b = tree.home_leaf(ring[(i + 1) % ring.size()]);
    if (a == b) continue;
    ++out.spine_edges;
    if (a < 0 || b < 0 || tree.leaves()[a].pod != tree.leaves()[b].pod) ++out.pod_edges;
  }
  return out;
}

}  // namespace topo
