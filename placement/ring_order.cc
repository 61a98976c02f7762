#include "placement/ring_order.h"

#include <algorithm>
#include <cstdint>

namespace topo {

std::vector<NodeId> ring_order(const SwitchTree& tree, std::span<const NodeId> hosts) {
  // Sorted on one packed key (pod, leaf, port), ties by host: candidates
  // are ordered by the hundred.
  std::vector<std::pair<uint64_t, NodeId>> keyed;
  keyed.reserve(hosts.size());
  for (NodeId h : hosts) {
    int leaf = tree.home_leaf(h);
    uint64_t pod = leaf >= 0 ? static_cast<uint64_t>(tree.leaves()[leaf].pod) : 0xFFFFF;
    uint64_t l = leaf >= 0 ? static_cast<uint64_t>(leaf) : 0xFFFFF;
    uint64_t port = static_cast<uint32_t>(tree.leaf_port(h)) & 0xFFFFFu;
    keyed.emplace_back(std::min<uint64_t>(pod, 0xFFFFF) << 40 | std::min<uint64_t>(l, 0xFFFFF) << 20 | port, h);
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<NodeId> ring;
  ring.reserve(hosts.size());
  for (const auto& [key, h] : keyed) ring.push_back(h);
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
