// How a candidate placement is judged: one number, lower is better, made
// of tiers whose weights keep them in the order the product promises.
//
//   1. degraded links on the job's paths, hosts with degraded cables
//                                                   weight  degraded   1e6
//   2. ring edges that climb to the core / a spine  weights pod_edge   1e4
//                                                           spine_edge 1e3
//      for an AllToAll job, in place of the spine edges: leaves whose
//      uplinks carry less than its own traffic out of them   overloaded_leaf 1e3
//   3. leaves used; pressure on their uplinks        weights leaf       100
//      (oversubscription beyond 1:1, running jobs'          pressure    10
//      load, a degraded uplink even for one-leaf jobs)
//   4. the comm_model estimate over the ideal, minus 1 weight  slowdown  10
//      (averaged over the profile's collectives, with the running jobs'
//      load; under static routing plus 0.05 per flow beyond one on the
//      most crowded cable the ring's seams use, at most 0.5)
//   5. fragmentation: free hosts a used leaf keeps    weight  fragment    1
//      afterwards, as a share of that leaf (best fit)
//
// An AllToAll job's traffic does not follow its ring: every host sends to
// every other, so a leaf holding h of its n hosts sends h (n - h) / (n - 1)
// of a host's bandwidth up, whatever the order. On an oversubscribed fabric
// the fewest leaves overload their uplinks (4 full leaves of 16 hosts under
// 8 uplinks: 12.2 hosts' worth through 8, a 1.5x slower AllToAll), where
// twice the leaves at half the hosts fit (7.1 through 8). Counting
// overloaded leaves instead of ring edges lets the search take the wider
// spread, and tier 3 still prefers the fewest leaves among spreads that fit.
//
// Terms of a lower tier are bounded (pressure per leaf, slowdown and
// fragment per leaf all below one unit of the tier above, for jobs of up to
// ten leaves) so that the tiers act in order; admins may change the weights
// in topo_aware.conf to trade tiers differently.
#pragma once

#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "comm_model/estimate.h"
#include "placement/request.h"
#include "placement/seams.h"
#include "placement/switch_tree.h"

namespace topo {

struct Weights {
  double degraded = 1e6;
  double pod_edge = 1e4;
  double spine_edge = 1e3;
  double overloaded_leaf = 1e3;
  double leaf = 100;
  double pressure = 10;
  double slowdown = 10;
  double fragment = 1;
};

struct Score {
  int degraded_links = 0;  // degraded cables the job's traffic would cross
  int pod_edges = 0;
  int spine_edges = 0;
  int overloaded_leaves = 0;  // AllToAll: leaves whose uplinks carry less than the job's own traffic out of them
  int leaves = 0;
  int pods = 0;
  double pressure = 0;    // sum over used leaves, each in [0, 0.9]
  double estimate_s = 0;  // the profile's collectives on this ring, summed
  double ideal_s = 0;     // the same hosts on a non-blocking fabric
  double slowdown = 1;    // estimate over ideal, mean excess over the profile's collectives
  double seam_flows = 0;  // static routing: most flows on a cable the seams use (placement/seams.h)
  double fragment = 0;    // sum over used leaves, each in [0, 1)
  double structure = 0;   // total without tier 4: what a score without the estimate gives
  double total = 0;
};

// What the objective reads of the cluster state, gathered once per decision
// rather than per candidate (a busy FreeMap holds thousands of loaded
// cables; a candidate touches a few leaves): per leaf, how many of its
// hosts are free and its uplink pressure, and the running jobs' load on
// the cables above the leaves. Built for every leaf, or only for the
// leaves of one ring.
class FreeIndex {
 public:
  FreeIndex(const SwitchTree& tree, const FreeMap& free);
  FreeIndex(const SwitchTree& tree, const FreeMap& free, std::span<const NodeId> ring);

  // Hosts of the leaf with a free GPU and not to be avoided.
  int free_hosts(int leaf) const { return free_hosts_[leaf]; }
  // uplink_pressure(), for a job on one leaf or on several.
  double pressure(int leaf, bool multi_leaf) const { return pressure_[multi_leaf][leaf]; }
  // The running jobs' load on the cables `ring`'s flows can cross: its
  // hosts' own cables, its leaves' uplinks and the cables above the leaves
  // (what the estimate needs, without the thousands of entries it would
  // walk for nothing).
  BackgroundLoad near(const SwitchTree& tree, const FreeMap& free, std::span<const NodeId> ring) const;

 private:
  FreeIndex(const SwitchTree& tree, const FreeMap& free, std::span<const NodeId> ring, bool every_leaf);
  std::vector<int> free_hosts_;
  std::vector<double> pressure_[2];
  std::vector<std::pair<int, BackgroundLoad::Entry>> above_;  // by cable id
};

// Tier 4's estimate of rings on one running load (FreeMap::estimates): the
// comm_model's answer depends on nothing else than the ring, the profile's
// collectives (profile, message size, GPUs per host) and the running
// jobs' load near the ring, so a search after a job started or ended
// elsewhere, with the load unchanged, gets the rings it scores again
// without estimating them again: the same numbers, from a map.
class EstimateMemo {
 public:
  struct Estimated {
    double estimate_s = 0, ideal_s = 0, slowdown = 1;
  };
  using Key = std::tuple<int, double, int, std::vector<NodeId>>;  // profile, message bytes, GPUs, ring
  const Estimated* find(const Key& k) const {
    auto it = kept_.find(k);
    return it == kept_.end() ? nullptr : &it->second;
  }
  void keep(Key k, const Estimated& e) {
    if (kept_.size() >= kKept) kept_.clear();  // a bound, not a policy: the load changes far sooner
    kept_.emplace(std::move(k), e);
  }
  void clear() { kept_.clear(); }
  size_t size() const { return kept_.size(); }
  // The running load went from `before` to `after` (a job started or
  // ended): forgets the estimates of the rings whose load near them
  // (FreeIndex::near: their hosts' cables, their leaves' uplinks, the
  // cables above the leaves) is not the same in both; the others would be
  // estimated to the same numbers again.
  void forget_changed(const SwitchTree& tree, const BackgroundLoad& before, const BackgroundLoad& after);

 private:
  static constexpr size_t kKept = 4096;
  std::map<Key, Estimated> kept_;
};

// Scores a ring (hosts in rank order) for `request` on the cluster state
// `free`. `with_estimate` false skips tier 4 (the costly one), for
// pre-ranking many candidates.
Score score(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request, std::span<const NodeId> ring,
            const Weights& weights, bool with_estimate = true);
// The same, reading an index of `free` built for every leaf or for the
// ring's, and the routes a decision keeps (seams.h) when given.
Score score(const SwitchTree& tree, const FreeMap& free, const FreeIndex& index, const PlacementRequest& request,
            std::span<const NodeId> ring, const Weights& weights, bool with_estimate = true,
            SeamRoutes* routes = nullptr);

// Whether an AllToAll job of `hosts` hosts, `on_leaf` of them on `leaf`,
// sends more out of the leaf than its uplinks carry: each of them sends to
// the hosts - 1 others at Leaf::host_gbps, the share (hosts - on_leaf) /
// (hosts - 1) of it to other leaves.
bool overloads_uplinks(const SwitchTree::Leaf& leaf, int on_leaf, int hosts);
// The most hosts of an AllToAll job of `hosts` hosts, at most `limit`, that
// `leaf` takes without overloads_uplinks() (0 when none).
int uplink_fit(const SwitchTree::Leaf& leaf, int hosts, int limit);

// A leaf's uplink pressure in [0, 0.9].
double uplink_pressure(const SwitchTree& tree, const FreeMap& free, int leaf, bool multi_leaf);

// Tier 5 for one leaf: the share of its hosts still free once the job has
// taken `used` of them, in [0, 0.99].
double leaf_fragment(const SwitchTree& tree, const FreeIndex& index, int leaf, int used);

}  // namespace topo
