#include "placement/objective.h"

#include "comm_model/estimate_times.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
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

double excess(const EstimateTimes& e) {
  if (!std::isfinite(e.time_s) || e.ideal_time_s <= 0) return 9.9;
  return std::clamp(e.time_s / e.ideal_time_s - 1.0, 0.0, 9.9);
}

// Under static routing: the most flows on one cable the ring's seams use,
// beyond one, as a tie-break inside tier 4 (at most 0.5 of its unit).
double seam_term(double seam_flows) { return seam_flows > 1 ? 0.05 * std::min(seam_flows - 1, 10.0) : 0; }

}  // namespace

namespace {

// A leaf's uplink pressure when its uplinks carry `used` Gb/s of running
// jobs' traffic (the busier direction of each, summed).
double pressure_at(const SwitchTree::Leaf& l, double used, bool multi_leaf) {
  double p = l.degraded_uplinks.empty() ? 0 : 0.5;
  if (multi_leaf) {
    p += std::clamp(l.oversubscription - 1.0, 0.0, 3.0) / 30;  // 4:1 adds 0.1
    if (l.up_gbps > 0) p += 0.3 * std::clamp(used / l.up_gbps, 0.0, 1.0);
  }
  return std::min(p, 0.9);
}

double busier(const BackgroundLoad::Entry& e) { return std::max(e.from_a_gbps, e.from_b_gbps); }

}  // namespace

double uplink_pressure(const SwitchTree& tree, const FreeMap& free, int leaf, bool multi_leaf) {
  const SwitchTree::Leaf& l = tree.leaves()[leaf];
  double used = 0;
  const Fabric& f = tree.fabric();
  for (LinkId e : l.uplinks)
    if (const BackgroundLoad::Entry* entry = free.load.find(f.link(e).id)) used += busier(*entry);
  return pressure_at(l, used, multi_leaf);
}

FreeIndex::FreeIndex(const SwitchTree& tree, const FreeMap& free) : FreeIndex(tree, free, {}, true) {}

FreeIndex::FreeIndex(const SwitchTree& tree, const FreeMap& free, std::span<const NodeId> ring)
    : FreeIndex(tree, free, ring, false) {}

// One pass over the running jobs' load, each entry sorted to the leaf whose
// uplink it is or to the cables above the leaves.
FreeIndex::FreeIndex(const SwitchTree& tree, const FreeMap& free, std::span<const NodeId> ring, bool every_leaf) {
  const size_t leaves = tree.leaves().size();
  std::vector<double> used(leaves, 0.0);
  for (const auto& [cable, entry] : free.load.entries()) {
    if (int l = tree.uplink_of(cable); l >= 0)
      used[l] += busier(entry);
    else if (tree.above_leaves(cable))
      above_.emplace_back(cable, entry);
  }
  std::vector<char> wanted(leaves, every_leaf);
  for (NodeId h : ring)
    if (int l = tree.home_leaf(h); l >= 0) wanted[l] = true;
  free_hosts_.assign(leaves, 0);
  pressure_[0].assign(leaves, 0);
  pressure_[1].assign(leaves, 0);
  for (size_t l = 0; l < leaves; ++l) {
    if (!wanted[l]) continue;
    for (NodeId h : tree.leaves()[l].hosts)
      if (free.free(h) > 0 && !free.avoid_hosts.contains(h)) ++free_hosts_[l];
    pressure_[0][l] = pressure_at(tree.leaves()[l], used[l], false);
    pressure_[1][l] = pressure_at(tree.leaves()[l], used[l], true);
  }
}

BackgroundLoad FreeIndex::near(const SwitchTree& tree, const FreeMap& free, std::span<const NodeId> ring) const {
  BackgroundLoad out;
  if (free.load.empty()) return out;
  const Fabric& f = tree.fabric();
  auto copy = [&](int id, const BackgroundLoad::Entry& entry) {
    LinkId cable = f.cables()[static_cast<size_t>(id)];
    const Link& l = f.link(cable);
    if (entry.from_a_gbps > 0) out.add(f, cable, l.end_a, entry.from_a_gbps);
    if (entry.from_b_gbps > 0) out.add(f, cable, l.end_b, entry.from_b_gbps);
  };
  auto copy_loaded = [&](LinkId cable) {
    int id = f.link(cable).id;
    if (const BackgroundLoad::Entry* entry = free.load.find(id)) copy(id, *entry);
  };
  std::vector<int> leaves;  // a ring spans a few
  for (NodeId h : ring) {
    for (LinkId e : tree.cables(h)) copy_loaded(e);
    const int l = tree.home_leaf(h);
    if (l < 0 || std::find(leaves.begin(), leaves.end(), l) != leaves.end()) continue;
    leaves.push_back(l);
    for (LinkId e : tree.leaves()[l].uplinks) copy_loaded(e);
  }
  for (const auto& [cable, entry] : above_) copy(cable, entry);
  return out;
}

namespace {

// The cables (by Link::id) whose load differs between two loads, marked in
// a vector of the fabric's cable count; both loads are ordered by cable id.
std::vector<char> changed_cables(size_t cables, const BackgroundLoad& before, const BackgroundLoad& after) {
  std::vector<char> changed(cables, 0);
  auto mark = [&](int id) {
    if (id >= 0 && static_cast<size_t>(id) < cables) changed[static_cast<size_t>(id)] = 1;
  };
  auto b = before.entries(), a = after.entries();
  size_t i = 0, j = 0;
  while (i < b.size() || j < a.size()) {
    if (j == a.size() || (i < b.size() && b[i].first < a[j].first)) {
      mark(b[i++].first);
    } else if (i == b.size() || a[j].first < b[i].first) {
      mark(a[j++].first);
    } else {
      if (b[i].second.from_a_gbps != a[j].second.from_a_gbps || b[i].second.from_b_gbps != a[j].second.from_b_gbps)
        mark(a[j].first);
      ++i, ++j;
    }
  }
  return changed;
}

}  // namespace

void EstimateMemo::forget_changed(const SwitchTree& tree, const BackgroundLoad& before, const BackgroundLoad& after) {
  if (kept_.empty()) return;
  const Fabric& f = tree.fabric();
  const std::vector<char> changed = changed_cables(f.cables().size(), before, after);
  auto changed_link = [&](LinkId e) {
    const int id = f.link(e).id;
    return id >= 0 && static_cast<size_t>(id) < changed.size() && changed[static_cast<size_t>(id)];
  };
  // What every ring reads: the cables above the leaves (FreeIndex's above_).
  for (size_t id = 0; id < changed.size(); ++id)
    if (changed[id] && tree.uplink_of(static_cast<int>(id)) < 0 && tree.above_leaves(static_cast<int>(id))) {
      clear();
      return;
    }
  std::vector<char> leaf_changed(tree.leaves().size(), 0);
  for (size_t l = 0; l < leaf_changed.size(); ++l)
    leaf_changed[l] = std::any_of(tree.leaves()[l].uplinks.begin(), tree.leaves()[l].uplinks.end(), changed_link);
  auto host_changed = [&](NodeId h) {
    const std::span<const LinkId> own = tree.cables(h);
    if (std::any_of(own.begin(), own.end(), changed_link)) return true;
    const int l = tree.home_leaf(h);
    return l >= 0 && leaf_changed[static_cast<size_t>(l)];
  };
  std::erase_if(kept_, [&](const auto& kept) {
    const std::vector<NodeId>& ring = std::get<3>(kept.first);
    return std::any_of(ring.begin(), ring.end(), host_changed);
  });
}

Score score(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request, std::span<const NodeId> ring,
            const Weights& w, bool with_estimate) {
  return score(tree, free, FreeIndex(tree, free, ring), request, ring, w, with_estimate);
}

namespace {

// Tier 4's figures for the ring: the comm_model's estimate of each of the
// profile's collectives beside the running load near the ring, or what
// the memo kept of them on this load.
EstimateMemo::Estimated estimated(const SwitchTree& tree, const FreeMap& free, const FreeIndex& index,
                                  const PlacementRequest& request, std::span<const NodeId> ring,
                                  const std::vector<Request>& collectives) {
  std::optional<EstimateMemo::Key> key;
  if (free.estimates) {
    key.emplace(static_cast<int>(request.profile), request.message_bytes, gpus_on(free, request, ring.front()),
                std::vector<NodeId>(ring.begin(), ring.end()));
    if (const EstimateMemo::Estimated* kept = free.estimates->find(*key)) return *kept;
  }
  EstimateMemo::Estimated out;
  double total_excess = 0;
  const BackgroundLoad background = index.near(tree, free, ring);
  for (const Request& r : collectives) {
    const EstimateTimes e = estimate_times(tree.paths(), ring, r, background);
    out.estimate_s += e.time_s;
    out.ideal_s += e.ideal_time_s;
    total_excess += excess(e);
  }
  out.slowdown = 1 + total_excess / static_cast<double>(collectives.size());
  if (key) free.estimates->keep(std::move(*key), out);
  return out;
}

// The job's hosts on each leaf, by leaf (-1: hosts on no leaf), in leaf
// order, written into `out` (room for one a host); returns how many leaves.
// A ring spans a few leaves, so a sorted array, not a map.
size_t hosts_per_leaf(const SwitchTree& tree, std::span<const NodeId> ring, std::span<std::pair<int, int>> out) {
  size_t leaves = 0;
  for (NodeId h : ring) {
    const int leaf = tree.home_leaf(h);
    size_t at = 0;
    while (at < leaves && out[at].first < leaf) ++at;
    if (at == leaves || out[at].first != leaf) {
      std::move_backward(out.begin() + static_cast<long>(at), out.begin() + static_cast<long>(leaves),
                         out.begin() + static_cast<long>(leaves) + 1);
      out[at] = {leaf, 0};
      ++leaves;
    }
    ++out[at].second;
  }
  return leaves;
}

// The distinct pods of the leaves in `per_leaf`.
int pods_of(const SwitchTree& tree, std::span<const std::pair<int, int>> per_leaf) {
  int pods = 0;
  for (size_t i = 0; i < per_leaf.size(); ++i) {
    if (per_leaf[i].first < 0) continue;
    const int pod = tree.leaves()[per_leaf[i].first].pod;
    bool seen = false;
    for (size_t k = 0; k < i && !seen; ++k)
      seen = per_leaf[k].first >= 0 && tree.leaves()[per_leaf[k].first].pod == pod;
    pods += !seen;
  }
  return pods;
}

}  // namespace

Score score(const SwitchTree& tree, const FreeMap& free, const FreeIndex& index, const PlacementRequest& request,
            std::span<const NodeId> ring, const Weights& w, bool with_estimate, SeamRoutes* routes) {
  Score s;
  // Hosts of the job on each leaf: on the stack for a job of a few hosts.
  std::array<std::pair<int, int>, 16> few;
  std::vector<std::pair<int, int>> many(ring.size() > few.size() ? ring.size() : 0);
  const std::span<std::pair<int, int>> room = many.empty() ? std::span(few) : std::span(many);
  const std::span<const std::pair<int, int>> per_leaf = room.first(hosts_per_leaf(tree, ring, room));
  for (NodeId h : ring) s.degraded_links += static_cast<int>(tree.degraded_cables(h).size());
  s.leaves = static_cast<int>(per_leaf.size());
  s.pods = pods_of(tree, per_leaf);
  RingCrossings crossings = ring_crossings(tree, ring);
  s.spine_edges = crossings.spine_edges;
  s.pod_edges = crossings.pod_edges;
  bool multi_leaf = s.leaves > 1;
  const bool alltoall = request.profile == Profile::AllToAll;
  for (auto [leaf, used] : per_leaf) {
    if (leaf < 0) continue;
    const SwitchTree::Leaf& l = tree.leaves()[leaf];
    if (multi_leaf) s.degraded_links += static_cast<int>(l.degraded_uplinks.size());
    if (alltoall && multi_leaf && overloads_uplinks(l, used, static_cast<int>(ring.size()))) ++s.overloaded_leaves;
    s.pressure += index.pressure(leaf, multi_leaf);
    s.fragment += leaf_fragment(tree, index, leaf, used);
  }
  s.structure = w.degraded * s.degraded_links + w.pod_edge * s.pod_edges +
                (alltoall ? w.overloaded_leaf * s.overloaded_leaves : w.spine_edge * s.spine_edges) +
                w.leaf * s.leaves + w.pressure * s.pressure + w.fragment * s.fragment;

  // The collectives only for a ring that gets the estimate: most scores of
  // a search are of its structure alone.
  std::vector<Request> collectives;
  if (with_estimate && ring.size() > 1)
    collectives = profile_requests(request.profile, request.message_bytes, gpus_on(free, request, ring.front()));
  if (!collectives.empty()) {
    EstimateMemo::Estimated e = estimated(tree, free, index, request, ring, collectives);
    s.estimate_s = e.estimate_s;
    s.ideal_s = e.ideal_s;
    s.slowdown = e.slowdown;
    const SeamCost seams =
        routes ? seam_cost(tree, free, request, ring, *routes) : seam_cost(tree, free, request, ring);
    s.seam_flows = seams.worst;
  }
  s.total = s.structure + w.slowdown * (s.slowdown - 1 + seam_term(s.seam_flows));
  return s;
}

bool overloads_uplinks(const SwitchTree::Leaf& leaf, int on_leaf, int hosts) {
  if (hosts <= 1 || on_leaf <= 0) return false;
  // A host sends to the hosts - 1 others at its full rate, hosts - on_leaf of them elsewhere.
  const double out_gbps = leaf.host_gbps * on_leaf * (hosts - on_leaf) / (hosts - 1);
  return out_gbps > leaf.up_gbps * (1 + 1e-9);
}

int uplink_fit(const SwitchTree::Leaf& leaf, int hosts, int limit) {
  for (int h = std::min(limit, hosts); h > 0; --h)
    if (!overloads_uplinks(leaf, h, hosts)) return h;
  return 0;
}

double leaf_fragment(const SwitchTree& tree, const FreeIndex& index, int leaf, int used) {
  size_t hosts = tree.leaves()[leaf].hosts.size();
  if (hosts == 0) return 0;
  double left = index.free_hosts(leaf) - used;
  return std::clamp(left / static_cast<double>(hosts), 0.0, 0.99);
}

}  // namespace topo
