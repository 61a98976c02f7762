#include "placement/objective.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "placement/ring_order.h"
#include "placement/seams.h"
#include "placement/traffic.h"

namespace topo {
namespace {

// Used GPUs of a job's host: the whole request, or what the host has free.
int gpus_on(const FreeMap& free, const PlacementRequest& request, NodeId host) {
  return request.hosts > 0 ? request.gpus_per_host : free.free(host);
}

double excess(const Estimate& e) {
  if (!std::isfinite(e.time_s) || e.ideal_time_s <= 0) return 9.9;
  return std::clamp(e.time_s / e.ideal_time_s - 1.0, 0.0, 9.9);
}

// The running jobs' load on the cables this job's flows can cross: its
// leaves' uplinks and the cables above the spines. The estimate walks every
// entry it is given, and a busy fabric has thousands.
BackgroundLoad near(const SwitchTree& tree, const FreeMap& free, const std::map<int, int>& per_leaf) {
  BackgroundLoad out;
  if (free.load.empty()) return out;
  const Fabric& f = tree.fabric();
  std::set<NodeId> leaves;
  for (auto [leaf, n] : per_leaf)
    if (leaf >= 0) leaves.insert(tree.leaves()[leaf].node);
  for (const auto& [cable, entry] : free.load.entries()) {
    const Link& l = f.link(cable);
    NodeId a = l.end_a, b = l.end_b;
    bool mine = leaves.contains(a) || leaves.contains(b);
    bool above = f.node(a).kind == NodeKind::Switch && f.node(b).kind == NodeKind::Switch &&
                 f.node(a).level != Level::Leaf && f.node(b).level != Level::Leaf;
    if (!mine && !above) continue;
    if (entry.from_a_gbps > 0) out.add(f, cable, a, entry.from_a_gbps);
    if (entry.from_b_gbps > 0) out.add(f, cable, b, entry.from_b_gbps);
  }
  return out;
}

// Under static routing: the most flows on one cable the ring's seams use,
// beyond one, as a tie-break inside tier 4 (at most 0.5 of its unit).
double seam_term(double seam_flows) { return seam_flows > 1 ? 0.05 * std::min(seam_flows - 1, 10.0) : 0; }

}  // namespace

double uplink_pressure(const SwitchTree& tree, const FreeMap& free, int leaf, bool multi_leaf) {
  const SwitchTree::Leaf& l = tree.leaves()[leaf];
  double p = l.degraded_uplinks.empty() ? 0 : 0.5;
  if (multi_leaf) {
    p += std::clamp(l.oversubscription - 1.0, 0.0, 3.0) / 30;  // 4:1 adds 0.1
    double used = 0;
    for (LinkId e : l.uplinks) {
      auto it = free.load.entries().find(e);
      if (it != free.load.entries().end()) used += std::max(it->second.from_a_gbps, it->second.from_b_gbps);
    }
    if (l.up_gbps > 0) p += 0.3 * std::clamp(used / l.up_gbps, 0.0, 1.0);
  }
  return std::min(p, 0.9);
}

Score score(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
            std::span<const NodeId> ring, const Weights& w, bool with_estimate) {
  Score s;
  std::map<int, int> per_leaf;  // hosts of the job on each leaf
  std::set<int> pods;
  for (NodeId h : ring) {
    int leaf = tree.home_leaf(h);
    ++per_leaf[leaf];
    if (leaf >= 0) pods.insert(tree.leaves()[leaf].pod);
    s.degraded_links += static_cast<int>(tree.degraded_cables(h).size());
  }
  s.leaves = static_cast<int>(per_leaf.size());
  s.pods = static_cast<int>(pods.size());
  RingCrossings crossings = ring_crossings(tree, ring);
  s.spine_edges = crossings.spine_edges;
  s.pod_edges = crossings.pod_edges;
  bool multi_leaf = s.leaves > 1;
  for (auto [leaf, used] : per_leaf) {
    if (leaf < 0) continue;
    const SwitchTree::Leaf& l = tree.leaves()[leaf];
    if (multi_leaf) s.degraded_links += static_cast<int>(l.degraded_uplinks.size());
    s.pressure += uplink_pressure(tree, free, leaf, multi_leaf);
    int left = 0;
    for (NodeId h : l.hosts)
      if (free.free(h) > 0 && !free.avoid_hosts.contains(h)) ++left;
    left -= used;
    if (!l.hosts.empty()) s.fragment += std::clamp(double(left) / double(l.hosts.size()), 0.0, 0.99);
  }

  std::vector<Request> collectives =
      profile_requests(request.profile, request.message_bytes, gpus_on(free, request, ring.front()));
  if (with_estimate && !collectives.empty() && ring.size() > 1) {
    double total_excess = 0;
    s.estimate_s = s.ideal_s = 0;
    const BackgroundLoad background = near(tree, free, per_leaf);
    for (const Request& r : collectives) {
      Estimate e = estimate(tree.paths(), ring, r, background);
      s.estimate_s += e.time_s;
      s.ideal_s += e.ideal_time_s;
      total_excess += excess(e);
    }
    s.slowdown = 1 + total_excess / static_cast<double>(collectives.size());
    s.seam_flows = seam_cost(tree, free, request, ring).worst;
  }

  s.total = w.degraded * s.degraded_links + w.pod_edge * s.pod_edges + w.spine_edge * s.spine_edges +
            w.leaf * s.leaves + w.pressure * s.pressure + w.slowdown * (s.slowdown - 1 + seam_term(s.seam_flows)) + w.fragment * s.fragment;
  return s;
}

}  // namespace topo
