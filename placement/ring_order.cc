#include "placement/ring_order.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace topo {

namespace {

// Sorted on one packed key (pod, leaf, port), ties by host: candidates
// are ordered by the hundred.
uint64_t ring_key(const SwitchTree& tree, NodeId h) {
  int leaf = tree.home_leaf(h);
  uint64_t pod = leaf >= 0 ? static_cast<uint64_t>(tree.leaves()[leaf].pod) : 0xFFFFF;
  uint64_t l = leaf >= 0 ? static_cast<uint64_t>(leaf) : 0xFFFFF;
  uint64_t port = static_cast<uint32_t>(tree.leaf_port(h)) & 0xFFFFFu;
  return std::min<uint64_t>(pod, 0xFFFFF) << 40 | std::min<uint64_t>(l, 0xFFFFF) << 20 | port;
}

void sort_by_key(const SwitchTree& tree, std::span<NodeId> hosts, std::span<std::pair<uint64_t, NodeId>> keyed) {
  for (size_t i = 0; i < hosts.size(); ++i) keyed[i] = {ring_key(tree, hosts[i]), hosts[i]};
  std::sort(keyed.begin(), keyed.end());
  for (size_t i = 0; i < hosts.size(); ++i) hosts[i] = keyed[i].second;
}

}  // namespace

void order_ring(const SwitchTree& tree, std::vector<NodeId>& hosts) {
  // A job of a few hosts, what a search orders most, keys them on the stack.
  std::array<std::pair<uint64_t, NodeId>, 16> few;
  if (hosts.size() <= few.size()) {
    sort_by_key(tree, hosts, std::span(few).first(hosts.size()));
  } else {
    std::vector<std::pair<uint64_t, NodeId>> keyed(hosts.size());
    sort_by_key(tree, hosts, keyed);
  }
}

std::vector<NodeId> ring_order(const SwitchTree& tree, std::span<const NodeId> hosts) {
  std::vector<NodeId> ring(hosts.begin(), hosts.end());
  order_ring(tree, ring);
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
