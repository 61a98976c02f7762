#include "placement/search.h"

#include "placement/domain_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "placement/ring_order.h"
#include "placement/seams.h"

namespace topo {
namespace {

// The eligible hosts of one leaf, in the order the search takes them.
struct LeafPool {
  int leaf = 0;
  int pod = 0;
  std::vector<NodeId> hosts;
  int capacity = 0;  // whole hosts, or free GPUs for a GPU-count request
  bool degraded_uplink = false;
  double pressure = 0;
};

bool whole_hosts(const PlacementRequest& r) { return r.hosts > 0; }
int need(const PlacementRequest& r) { return whole_hosts(r) ? r.hosts : r.gpus; }
int units(const FreeMap& free, const PlacementRequest& r, NodeId h) { return whole_hosts(r) ? 1 : free.free(h); }

// How much of the fabric a round of candidates may use: everything, or only
// what is healthy, so that degraded parts are used only when nothing else fits.
enum class Health { Any, HealthyHosts, HealthyHostsAndUplinks };

// Every leaf's eligible hosts, degraded ones included.
std::vector<LeafPool> make_pools(const SwitchTree& tree, const FreeMap& free, const FreeIndex& index,
                                 const PlacementRequest& request) {
  std::vector<LeafPool> pools;
  pools.reserve(tree.leaves().size());
  std::vector<NodeId> hosts;                           // one leaf's eligible hosts, in the leaf's order
  std::vector<std::tuple<size_t, int, size_t>> keyed;  // (degraded cables, free GPUs or minus them, position)
  size_t largest = 0;
  for (const SwitchTree::Leaf& l : tree.leaves()) largest = std::max(largest, l.hosts.size());
  hosts.reserve(largest);
  keyed.reserve(largest);
  for (int i = 0; i < static_cast<int>(tree.leaves().size()); ++i) {
    const SwitchTree::Leaf& l = tree.leaves()[i];
    hosts.clear();
    for (NodeId h : l.hosts)
      if (eligible(tree, free, request, h)) hosts.push_back(h);
    if (hosts.empty()) continue;  // asked of every leaf every decision: a busy one costs no allocation
    // Healthy hosts first; for a GPU count, the emptiest hosts first so the
    // job spans few; for whole hosts, the fullest that fit (best fit), so
    // small jobs share hosts and leave whole ones to multi-host jobs. Ties
    // keep the leaf's order (the position is the last key): every leaf of
    // the fabric is sorted per decision, so each key is computed once, and
    // a leaf whose hosts are all alike is already in order.
    keyed.clear();
    for (size_t k = 0; k < hosts.size(); ++k) {
      NodeId h = hosts[k];
      keyed.push_back({tree.degraded_cables(h).size(), whole_hosts(request) ? free.free(h) : -free.free(h), k});
    }
    LeafPool pool{i, l.pod, {}, 0, !l.degraded_uplinks.empty(), index.pressure(i, true)};
    if (std::is_sorted(keyed.begin(), keyed.end())) {
      pool.hosts = hosts;
    } else {
      std::sort(keyed.begin(), keyed.end());
      pool.hosts.reserve(hosts.size());
      for (const auto& key : keyed) pool.hosts.push_back(hosts[std::get<2>(key)]);
    }
    for (NodeId h : pool.hosts) pool.capacity += units(free, request, h);
    if (pool.capacity > 0) pools.push_back(std::move(pool));
  }
  return pools;
}

// `pools` cut down to what `health` allows, without asking every host again
// (dropping hosts from a stably sorted list keeps it sorted).
std::vector<LeafPool> restrict_pools(const SwitchTree& tree, const std::vector<LeafPool>& pools, const FreeMap& free,
                                     const PlacementRequest& request, Health health) {
  if (health == Health::Any) return pools;
  std::vector<LeafPool> out;
  for (const LeafPool& p : pools) {
    if (health == Health::HealthyHostsAndUplinks && p.degraded_uplink) continue;
    LeafPool q = p;
    std::erase_if(q.hosts, [&](NodeId h) { return !tree.degraded_cables(h).empty(); });
    q.capacity = 0;
    for (NodeId h : q.hosts) q.capacity += units(free, request, h);
    if (q.capacity > 0) out.push_back(std::move(q));
  }
  return out;
}

// Whether restrict_pools() would drop anything from `pools`.
bool degraded_somewhere(const SwitchTree& tree, const std::vector<LeafPool>& pools) {
  for (const LeafPool& p : pools) {
    if (p.degraded_uplink) return true;
    for (NodeId h : p.hosts)
      if (!tree.degraded_cables(h).empty()) return true;
  }
  return false;
}

// The first hosts of a pool that make up `want` units.
void take(const LeafPool& pool, int want, const FreeMap& free, const PlacementRequest& r, std::vector<NodeId>& out) {
  for (NodeId h : pool.hosts) {
    if (want <= 0) break;
    out.push_back(h);
    want -= units(free, r, h);
  }
}

// Water-fill: every leaf of `chosen` takes an equal share of `target`
// hosts, capped by its `caps`.
void spread(std::span<const LeafPool* const> chosen, std::span<const int> caps, int target, const FreeMap& free,
            const PlacementRequest& r, std::vector<NodeId>& out) {
  std::vector<int> share(chosen.size(), 0);
  int left = target;
  while (left > 0) {
    bool moved = false;
    for (size_t i = 0; i < chosen.size() && left > 0; ++i)
      if (share[i] < caps[i]) ++share[i], --left, moved = true;
    if (!moved) break;
  }
  for (size_t i = 0; i < chosen.size(); ++i) take(*chosen[i], share[i], free, r, out);
}

// Pools in the order the search fills them from: leaves with healthy
// uplinks first, then those that give the job the most (`gives`), the least
// pressure, the lowest leaf.
template <typename Gives>
void fullest_first(std::vector<const LeafPool*>& pools, Gives gives) {
  std::sort(pools.begin(), pools.end(), [&](const LeafPool* a, const LeafPool* b) {
    return std::make_tuple(a->degraded_uplink, -gives(*a), a->pressure, a->leaf) <
           std::make_tuple(b->degraded_uplink, -gives(*b), b->pressure, b->leaf);
  });
}

// An AllToAll job of whole hosts: the fewest leaves of `pools` that hold it
// with none of them sending more than its uplinks carry (objective.h
// uplink_fit), spread evenly; nullopt when no such spread exists or one
// leaf holds the job (fewest_leaves() gives that one).
std::optional<std::vector<NodeId>> within_uplinks(const SwitchTree& tree, std::vector<const LeafPool*> pools,
                                                  const FreeMap& free, const PlacementRequest& r) {
  const int target = need(r);
  std::vector<int> fit(tree.leaves().size(), 0);
  for (const LeafPool* p : pools) fit[p->leaf] = uplink_fit(tree.leaves()[p->leaf], target, p->capacity);
  fullest_first(pools, [&](const LeafPool& p) { return fit[p.leaf]; });
  std::vector<const LeafPool*> chosen;
  std::vector<int> caps;
  int sum = 0;
  for (size_t k = 0; k < pools.size() && sum < target && fit[pools[k]->leaf] > 0; ++k) {
    chosen.push_back(pools[k]);
    caps.push_back(fit[pools[k]->leaf]);
    sum += caps.back();
  }
  if (sum < target || chosen.size() < 2) return std::nullopt;
  std::vector<NodeId> hosts;
  spread(chosen, caps, target, free, r, hosts);
  return hosts;
}

// The fewest leaves of `pools` that hold the job, the last one best fit.
std::optional<std::vector<NodeId>> fewest_leaves(std::vector<const LeafPool*> pools, const FreeMap& free,
                                                 const PlacementRequest& r) {
  fullest_first(pools, [](const LeafPool& p) { return p.capacity; });
  int target = need(r), sum = 0;
  size_t k = 0;
  while (k < pools.size() && sum < target) sum += pools[k++]->capacity;
  if (sum < target) return std::nullopt;
  std::vector<const LeafPool*> chosen(pools.begin(), pools.begin() + k);
  if (k > 1) {
    int rest = target - (sum - chosen.back()->capacity);
    const LeafPool* fit = chosen.back();
    for (size_t i = k - 1; i < pools.size(); ++i) {
      const LeafPool* p = pools[i];
      if (p->capacity < rest) continue;
      if (std::make_tuple(p->degraded_uplink, p->capacity, p->pressure) <
          std::make_tuple(fit->degraded_uplink, fit->capacity, fit->pressure))
        fit = p;
    }
    chosen.back() = fit;
  }
  std::vector<NodeId> hosts;
  hosts.reserve(static_cast<size_t>(target));  // whole hosts: exactly; a GPU count: at most
  if (r.profile == Profile::AllToAll && whole_hosts(r) && chosen.size() > 1) {
    std::vector<int> caps;
    for (const LeafPool* p : chosen) caps.push_back(p->capacity);
    spread(chosen, caps, target, free, r, hosts);
  } else {
    int left = target;
    for (const LeafPool* p : chosen) {
      int before = static_cast<int>(hosts.size());
      take(*p, left, free, r, hosts);
      for (size_t i = before; i < hosts.size(); ++i) left -= units(free, r, hosts[i]);
    }
  }
  return hosts;
}

// The pools of one pod, and what they hold together.
struct PodPools {
  int pod = 0;
  std::vector<const LeafPool*> members;
  int capacity = 0;
};

// The pools grouped by pod, in pod order (a fabric has a few pods: a
// sorted vector, not a map).
std::vector<PodPools> by_pod(const std::vector<LeafPool>& pools) {
  std::vector<PodPools> out;
  for (const LeafPool& p : pools) {
    auto at = std::lower_bound(out.begin(), out.end(), p.pod, [](const PodPools& g, int pod) { return g.pod < pod; });
    if (at == out.end() || at->pod != p.pod) {
      at = out.insert(at, PodPools{p.pod, {}, 0});
      at->members.reserve(pools.size());
    }
    at->members.push_back(&p);
    at->capacity += p.capacity;
  }
  return out;
}

std::vector<std::vector<NodeId>> candidates(const SwitchTree& tree, const std::vector<LeafPool>& pools,
                                            const FreeMap& free, const PlacementRequest& r) {
  std::vector<std::vector<NodeId>> out;
  out.reserve(pools.size() + 4);  // a leaf each, then a few per pod and across pods
  int target = need(r);
  for (const LeafPool& p : pools)
    if (p.capacity >= target) {
      out.emplace_back().reserve(static_cast<size_t>(target));
      take(p, target, free, r, out.back());
    }
  const std::vector<PodPools> pods = by_pod(pools);
  bool some_pod_fits = false;
  const bool alltoall = r.profile == Profile::AllToAll && whole_hosts(r);
  for (const PodPools& g : pods) {
    if (auto hosts = fewest_leaves(g.members, free, r)) {
      out.push_back(std::move(*hosts));
      some_pod_fits = true;
    }
    if (auto hosts = alltoall ? within_uplinks(tree, g.members, free, r) : std::nullopt)
      out.push_back(std::move(*hosts));
  }
  if (!some_pod_fits || tree.pods() > 1) {
    // The fewest pods, largest first, then the fewest leaves inside them.
    std::vector<const PodPools*> largest;
    for (const PodPools& g : pods) largest.push_back(&g);
    std::sort(largest.begin(), largest.end(),
              [](const PodPools* a, const PodPools* b) { return a->capacity > b->capacity; });
    std::vector<const LeafPool*> members;
    int sum = 0;
    for (const PodPools* g : largest) {
      if (sum >= target) break;
      members.insert(members.end(), g->members.begin(), g->members.end());
      sum += g->capacity;
    }
    if (auto hosts = fewest_leaves(members, free, r)) out.push_back(std::move(*hosts));
    if (auto hosts = alltoall ? within_uplinks(tree, members, free, r) : std::nullopt) out.push_back(std::move(*hosts));
  }
  return out;
}

Placement infeasible(std::string why) {
  Placement p;
  p.reasons.push_back(std::move(why));
  return p;
}

}  // namespace

bool within_limits(const Placement& p, const PlacementRequest& r) {
  if (r.max_leaves && p.score.leaves > *r.max_leaves) return false;
  if (r.one_pod && p.score.pods > 1) return false;
  if (r.one_rail_group && p.score.leaves > 1) return false;
  return true;
}

// Asked for every host of the fabric every decision: the cheapest test
// first (on a busy cluster most hosts fail it), the sets only when not empty.
bool eligible(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request, NodeId host) {
  int need_gpus = whole_hosts(request) ? request.gpus_per_host : request.min_gpus_per_host;
  if (free.free(host) < std::max(1, need_gpus) || tree.home_leaf(host) < 0) return false;
  if (!free.avoid_hosts.empty() && free.avoid_hosts.contains(host)) return false;
  if (free.avoid_links.empty()) return true;
  for (LinkId e : tree.cables(host))
    if (free.avoid_links.contains(e)) return false;
  return true;
}

std::vector<std::string> placement_reasons(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& r,
                                           const Placement& p) {
  const Fabric& f = tree.fabric();
  std::vector<std::string> out;
  std::vector<std::string> leaf_names;
  for (NodeId l : p.leaves) leaf_names.push_back(f.node(l).name);
  if (p.leaves.size() == 1) {
    out.push_back(fmt::format("fits in one leaf, {} (best fit: {:.0f}% of its free hosts stay free)", leaf_names[0],
                              100 * p.score.fragment));
  } else {
    out.push_back(fmt::format("{} leaves ({}) in {} pod{}: no single leaf has {} free {}", p.leaves.size(),
                              fmt::join(leaf_names, ", "), p.score.pods, p.score.pods == 1 ? "" : "s", need(r),
                              whole_hosts(r) ? "hosts" : "GPUs"));
    out.push_back(fmt::format("ring order crosses {} leaf boundar{} ({} over the core)", p.score.spine_edges,
                              p.score.spine_edges == 1 ? "y" : "ies", p.score.pod_edges));
  }
  // Leaves with hosts the job could take but a degraded uplink (the
  // search's pools: leaves with an eligible host), in leaf order.
  for (const SwitchTree::Leaf& l : tree.leaves()) {
    if (l.degraded_uplinks.empty() || std::find(p.leaves.begin(), p.leaves.end(), l.node) != p.leaves.end() ||
        std::none_of(l.hosts.begin(), l.hosts.end(), [&](NodeId h) { return eligible(tree, free, r, h); }))
      continue;
    const Link& link = f.link(l.degraded_uplinks.front());
    const std::string& leaf = f.node(l.node).name;
    out.push_back(fmt::format("{} skipped: uplink {}:{} degraded {}{}", leaf, leaf,
                              f.local_port(l.degraded_uplinks.front(), l.node),
                              link.degraded_why.empty() ? "to " : "by its port counters: ",
                              link.degraded_why.empty() ? link.rate.str() : link.degraded_why));
  }
  if (r.profile == Profile::AllToAll && p.leaves.size() > 1 && p.score.overloaded_leaves == 0)
    out.push_back("AllToAll: every leaf's uplinks carry what its hosts send to the other leaves");
  if (p.score.overloaded_leaves > 0)
    out.push_back(
        fmt::format("AllToAll: {} of its leaves send{} more than their uplinks carry: no spread within them "
                    "fits",
                    p.score.overloaded_leaves, p.score.overloaded_leaves == 1 ? "s" : ""));
  if (p.score.degraded_links > 0)
    out.push_back(fmt::format("crosses {} degraded link{}: nothing healthier fits", p.score.degraded_links,
                              p.score.degraded_links == 1 ? "" : "s"));
  if (p.score.ideal_s > 0 && !std::isfinite(p.score.estimate_s))
    out.push_back(
        fmt::format("{} estimate: the running jobs' load leaves a cable its flows need no room (ideal "
                    "{:.3f} ms; scored as {:.2f}x, the most tier 4 counts)",
                    name(r.profile), p.score.ideal_s * 1e3, p.score.slowdown));
  else if (p.score.ideal_s > 0)
    out.push_back(fmt::format("{} estimate {:.3f} ms vs ideal {:.3f} ms ({:.2f}x)", name(r.profile),
                              p.score.estimate_s * 1e3, p.score.ideal_s * 1e3, p.score.slowdown));
  if (p.score.seam_flows > 0)
    out.push_back(
        fmt::format("seams chosen for the static routes: at most {:.2f} flows (running jobs' and its own) "
                    "on a cable its cross-leaf flows take",
                    p.score.seam_flows));
  return out;
}

namespace {

// The distinct leaves of a ring, in ring order.
std::vector<NodeId> leaves_of(const SwitchTree& tree, std::span<const NodeId> ring) {
  std::vector<NodeId> leaves;
  leaves.reserve(ring.size());
  for (NodeId h : ring) {
    int leaf = tree.home_leaf(h);
    if (leaf >= 0 && (leaves.empty() || leaves.back() != tree.leaves()[leaf].node))
      leaves.push_back(tree.leaves()[leaf].node);
  }
  return leaves;
}

}  // namespace

namespace {

// make_placement() with an index of `free` built once for the decision.
Placement complete(const SwitchTree& tree, const FreeMap& free, const FreeIndex& index, SeamRoutes& routes,
                   const PlacementRequest& request, std::vector<NodeId> hosts, const Weights& weights,
                   bool with_estimate) {
  Placement p;
  std::map<NodeId, int> gpus;  // a GPU-count request's share per host
  if (!whole_hosts(request)) {
    std::vector<NodeId> by_free = hosts;
    std::stable_sort(by_free.begin(), by_free.end(), [&](NodeId a, NodeId b) { return free.free(a) > free.free(b); });
    int left = request.gpus;
    for (NodeId h : by_free) {
      int g = std::min(free.free(h), left);
      if (g > 0) gpus[h] = g;
      left -= g;
    }
    std::erase_if(hosts, [&](NodeId h) { return !gpus.contains(h); });
  }
  // Seams only for candidates that get the estimate: they change neither
  // the structure tiers nor the fit, and cost a route per choice tried.
  if (with_estimate) {
    p.hosts = seam_ring(tree, free, request, hosts, routes);
  } else {
    order_ring(tree, hosts);
    p.hosts = std::move(hosts);
  }
  if (whole_hosts(request))
    p.gpus.assign(p.hosts.size(), request.gpus_per_host);
  else
    for (NodeId h : p.hosts) p.gpus.push_back(gpus[h]);
  p.leaves = leaves_of(tree, p.hosts);
  p.score = score(tree, free, index, request, p.hosts, weights, with_estimate, &routes);
  p.feasible = !p.hosts.empty();
  return p;
}

// What complete(..., true) gives for a candidate built without the
// estimate, without building it again: its ring takes its seams (a new
// order only under static routing) and its score the comm_model.
void add_estimate(const SwitchTree& tree, const FreeMap& free, const FreeIndex& index, SeamRoutes& routes,
                  const PlacementRequest& request, Placement& p, const Weights& weights) {
  std::vector<NodeId> ring = seam_ring(tree, free, request, p.hosts, routes);
  if (ring != p.hosts) {
    if (whole_hosts(request)) {
      p.gpus.assign(ring.size(), request.gpus_per_host);  // every host gives the same
    } else {
      std::map<NodeId, int> gpus;
      for (size_t i = 0; i < p.hosts.size(); ++i) gpus[p.hosts[i]] = p.gpus[i];
      p.gpus.clear();
      for (NodeId h : ring) p.gpus.push_back(gpus[h]);
    }
    p.hosts = std::move(ring);
    p.leaves = leaves_of(tree, p.hosts);
  }
  p.score = score(tree, free, index, request, p.hosts, weights, true, &routes);
}

// Adds the estimate to the first `keep` of `ranked` (sorted on structure)
// in turn and returns how many it estimated. Tier 4 only adds to a score
// (it is never negative, and seams keep the structure tiers as they are),
// so once a candidate's structure alone reaches the `count`-th best total
// estimated so far, neither it nor any after it can be among the best
// `count`: the stable sort on totals would put it behind them. The result
// is the one estimating all of them gives; the Slurm plugin, asking for one
// placement, often stops after the first.
size_t estimate_in_order(const SwitchTree& tree, const FreeMap& free, const FreeIndex& index, SeamRoutes& routes,
                         const PlacementRequest& request, std::vector<Placement>& ranked, size_t keep, int count,
                         const Weights& w) {
  const size_t wanted = static_cast<size_t>(std::max(1, count));
  std::vector<double> totals;  // of the estimated, best first
  for (size_t i = 0; i < keep; ++i) {
    if (w.slowdown >= 0 && totals.size() >= wanted && ranked[i].score.structure >= totals[wanted - 1]) return i;
    add_estimate(tree, free, index, routes, request, ranked[i], w);
    totals.insert(std::upper_bound(totals.begin(), totals.end(), ranked[i].score.total), ranked[i].score.total);
  }
  return keep;
}

// A candidate for the local improvement: the best placement with the
// hosts of one of its leaves given to another leaf of the same pod.
struct Swap {
  double structure;      // the trial's structure tiers (Score::structure)
  int leaf;              // the leaf given up
  const LeafPool* pool;  // the leaf taken instead
};

// The structure tiers of every swap of one leaf of `best` for an unused leaf
// of its pod, from the tiers that change (degraded cables, pressure,
// fragment): the leaves, pods and leaf crossings of the ring stay as they
// are. Exact for the ring order complete() gives the trial.
std::vector<Swap> swaps_of(const SwitchTree& tree, const FreeMap& free, const FreeIndex& index,
                           const PlacementRequest& request, const std::vector<LeafPool>& pools, const Placement& best,
                           const Weights& w) {
  std::map<int, std::vector<NodeId>> on_leaf;
  for (NodeId h : best.hosts) on_leaf[tree.home_leaf(h)].push_back(h);
  // What one leaf adds to the structure tiers with `hosts` of the job on it.
  const int job_hosts = static_cast<int>(best.hosts.size());
  auto leaf_terms = [&](int leaf, std::span<const NodeId> hosts) {
    int degraded = static_cast<int>(tree.leaves()[leaf].degraded_uplinks.size());
    for (NodeId h : hosts) degraded += static_cast<int>(tree.degraded_cables(h).size());
    const int on_leaf = static_cast<int>(hosts.size());
    const bool overloaded =
        request.profile == Profile::AllToAll && overloads_uplinks(tree.leaves()[leaf], on_leaf, job_hosts);
    return w.degraded * degraded + w.pressure * index.pressure(leaf, true) +
           w.fragment * leaf_fragment(tree, index, leaf, on_leaf) + (overloaded ? w.overloaded_leaf : 0);
  };
  std::vector<Swap> out;
  std::vector<NodeId> taken;
  for (auto& [leaf, hosts_there] : on_leaf) {
    if (leaf < 0) continue;
    int units_there = 0;
    for (NodeId h : hosts_there) units_there += units(free, request, h);
    const double without = best.score.structure - leaf_terms(leaf, hosts_there);
    for (const LeafPool& pool : pools) {
      if (on_leaf.contains(pool.leaf) || pool.pod != tree.leaves()[leaf].pod || pool.capacity < units_there) continue;
      taken.clear();
      take(pool, units_there, free, request, taken);
      out.push_back({without + leaf_terms(pool.leaf, taken), leaf, &pool});
    }
  }
  std::sort(out.begin(), out.end(), [](const Swap& a, const Swap& b) {
    return std::tie(a.structure, a.leaf, a.pool->leaf) < std::tie(b.structure, b.leaf, b.pool->leaf);
  });
  return out;
}

// Placements by total, ties in the order given: what std::stable_sort
// gives, by insertion, which moves a few placements and allocates nothing
// (a stable sort takes a buffer for them); a search ranks a handful.
void sort_by_total(std::vector<Placement>& ranked) {
  for (auto it = ranked.begin(); it != ranked.end(); ++it) {
    auto to = std::upper_bound(ranked.begin(), it, it->score.total,
                               [](double total, const Placement& p) { return total < p.score.total; });
    std::rotate(to, it, it + 1);
  }
}

// A host set's key, whatever order its ring takes.
std::vector<NodeId> sorted_hosts(std::vector<NodeId> hosts) {
  std::sort(hosts.begin(), hosts.end());
  return hosts;
}

// Local improvement: swap one leaf of the best for an unused leaf of its
// pod. Swaps are ranked on structure, which costs a few sums each; the
// comm_model, the costly part, only for the first few that already win on
// structure (a swap rarely changes the estimate alone).
void improve_by_swaps(const SwitchTree& tree, const FreeMap& free, const FreeIndex& index, SeamRoutes& routes,
                      const PlacementRequest& request, const std::vector<LeafPool>& pools, const SearchOptions& options,
                      std::vector<Placement>& ranked) {
  const Weights& w = options.weights;
  // The trials given the estimate so far, by their hosts. One that lost to
  // an earlier best loses to this one too (the best only gets better), and
  // a round after a win often tries its way back: leaf B given for X, then
  // for Y, which won; the next round gives Y for X. It still counts against
  // the round's estimated_swaps, so what a round tries does not depend on
  // what the rounds before it saw.
  std::set<std::vector<NodeId>> tried;
  // What a round swaps from: the best's hosts and score, kept apart
  // (ranked.front() moves when a trial wins); swaps_of() reads no more.
  Placement best;
  for (int round = 0; round < options.improvement_rounds && ranked.front().leaves.size() > 1; ++round) {
    best.hosts.assign(ranked.front().hosts.begin(), ranked.front().hosts.end());
    best.score = ranked.front().score;
    bool improved = false;
    int estimated = 0;
    for (const Swap& swap : swaps_of(tree, free, index, request, pools, best, w)) {
      // What the best scores apart from its estimate: a trial must beat it
      // there, as a swap rarely changes the estimate alone.
      const Score& b = ranked.front().score;
      const double to_beat = b.total - w.slowdown * (b.slowdown - 1) - 1e-9;
      if (estimated >= options.estimated_swaps || swap.structure >= to_beat) break;
      std::vector<NodeId> trial;
      trial.reserve(best.hosts.size());  // whole hosts: exactly as many
      int units_there = 0;
      for (NodeId h : best.hosts) {
        if (tree.home_leaf(h) != swap.leaf)
          trial.push_back(h);
        else
          units_there += units(free, request, h);
      }
      take(*swap.pool, units_there, free, request, trial);
      Placement p = complete(tree, free, index, routes, request, std::move(trial), w, false);
      if (!within_limits(p, request) || p.score.total >= to_beat) continue;
      const bool estimated_before = !tried.insert(sorted_hosts(p.hosts)).second;
      ++estimated;
      if (estimated_before) continue;
      add_estimate(tree, free, index, routes, request, p, w);
      if (p.score.total < ranked.front().score.total - 1e-9) {
        ranked.insert(ranked.begin(), std::move(p));
        improved = true;
      }
    }
    if (!improved) break;
  }
}

}  // namespace

Placement make_placement(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                         std::vector<NodeId> hosts, const Weights& weights, bool with_estimate) {
  FreeIndex index(tree, free, hosts);
  SeamRoutes routes(tree.paths());
  return complete(tree, free, index, routes, request, std::move(hosts), weights, with_estimate);
}

std::vector<Placement> rank_placements(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                                       int count, const SearchOptions& options, SeamRoutes* kept) {
  if (uses_domains(tree, request) && request.gpus_per_host > 0)
    if (auto ranked = rank_in_domains(tree, free, request, count, options, kept)) return std::move(*ranked);
  return rank_placements_by_leaves(tree, free, request, count, options, kept);
}

std::vector<Placement> rank_placements_by_leaves(const SwitchTree& tree, const FreeMap& free,
                                                 const PlacementRequest& request, int count,
                                                 const SearchOptions& options, SeamRoutes* kept) {
  if (kept && &kept->paths() != &tree.paths())
    throw std::invalid_argument("the seam routes given were kept for another fabric's switch tree");
  if (need(request) <= 0 || (whole_hosts(request) && request.gpus_per_host <= 0))
    return {infeasible("the request asks for nothing: give hosts x GPUs per host, or a GPU count")};
  const FreeIndex index(tree, free);
  std::optional<SeamRoutes> own;
  if (kept && kept->bytes() > SeamRoutes::kMaxKeptBytes) kept->clear();  // no search holds them now
  SeamRoutes& routes = kept ? *kept : own.emplace(tree.paths());
  std::vector<LeafPool> pools = make_pools(tree, free, index, request);
  int capacity = 0;
  for (const LeafPool& p : pools) capacity += p.capacity;
  if (capacity < need(request))
    return {infeasible(fmt::format("only {} eligible {} free, {} needed", capacity,
                                   whole_hosts(request) ? "hosts" : "GPUs", need(request)))};

  // Pre-rank on structure, then score the best few with the comm_model.
  std::vector<std::vector<NodeId>> seen;  // host sets, sorted: a round finds a few candidates
  std::vector<Placement> ranked;
  // With nothing degraded in the pools every round sees the same pools and
  // finds the same candidates, so one round does (without copying them).
  const bool one_round = !degraded_somewhere(tree, pools);
  for (Health health : {Health::HealthyHostsAndUplinks, Health::HealthyHosts, Health::Any}) {
    std::vector<LeafPool> restricted;
    if (!one_round) restricted = restrict_pools(tree, pools, free, request, health);
    const std::vector<LeafPool>& round = one_round ? pools : restricted;
    std::vector<std::vector<NodeId>> found = candidates(tree, round, free, request);
    ranked.reserve(ranked.size() + found.size());
    for (std::vector<NodeId>& hosts : found) {
      std::vector<NodeId> key = sorted_hosts(hosts);
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
      seen.push_back(std::move(key));
      Placement p = complete(tree, free, index, routes, request, std::move(hosts), options.weights, false);
      if (within_limits(p, request)) ranked.push_back(std::move(p));
    }
    if (one_round) break;
  }
  if (ranked.empty())
    return {infeasible(fmt::format("no placement within the limits (max leaves {}, one pod {}, one rail group {})",
                                   request.max_leaves ? std::to_string(*request.max_leaves) : "none",
                                   request.one_pod ? "yes" : "no", request.one_rail_group ? "yes" : "no"))};
  sort_by_total(ranked);
  size_t keep = std::min<size_t>(ranked.size(), std::max(count, options.scored_candidates));
  ranked.resize(estimate_in_order(tree, free, index, routes, request, ranked, keep, count, options.weights));
  sort_by_total(ranked);

  improve_by_swaps(tree, free, index, routes, request, pools, options, ranked);
  if (static_cast<int>(ranked.size()) > count) ranked.resize(std::max(1, count));
  if (options.with_reasons)
    for (Placement& p : ranked) p.reasons = placement_reasons(tree, free, request, p);
  return ranked;
}

Placement place(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                const SearchOptions& options, SeamRoutes* routes) {
  return rank_placements(tree, free, request, 1, options, routes).front();
}

}  // namespace topo
