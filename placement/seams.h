// Where a ring crosses from leaf to leaf, under static routing.
//
// A ring taken leaf by leaf leaves each leaf's segment once: the host that
// ends one segment (its exit) sends to the host that starts the next (its
// entry). Under static routing that flow follows the one path the tables
// give the entry host's LID, so the choice of entry and exit hosts decides
// which uplink and which spine-to-leaf cable it takes; D-mod-k tables
// (OpenSM's ftree) send a destination through the spine its index under
// its leaf picks, so two seams whose entry hosts share that index collide.
// The flows that matter are the job's own and the running jobs'
// (FreeMap::cable_flows).
//
// seam_ring chooses, starting from ring_order():
// - for each leaf's segment, its entry and exit host; the others follow in
//   port order between them;
// - the order of the segments: the fabric's or reversed, then pairs of
//   segments of one pod swapped where that helps (which leaf a segment
//   sends to picks the uplink its seam flow takes);
// - for whole-host requests, a free eligible host of the same leaf (with as
//   many free GPUs and as many degraded cables as the one it replaces, so
//   the objective's structure, fit and fragmentation tiers stay equal) may
//   replace one of the job's hosts when it makes a better entry.
// It minimises, over the job's cross-leaf flows, the most flows any of
// their switch-to-switch cables carries (the job's own plus the running
// jobs'), then their sum: a flow's share of a cable is what max-min sharing
// gives it, and the ring runs at its slowest edge. Coordinate descent over
// the segments' seams and order, up to three passes; the result never
// scores worse than ring_order() on this measure. The fabric's order is
// searched first, the reversed one only when the first leaves a cable with
// a second flow: at one flow a cable the worst can go no lower (and the
// worst is what the objective scores); only routes with fewer cables could
// lower the sum, and between two leaves of a tree of leaves and spines they
// all have as many.
//
// Under adaptive routing, or for a profile whose traffic does not follow
// the ring (AllToAll, None), or a job on one leaf, it returns ring_order().
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "placement/request.h"
#include "placement/switch_tree.h"

namespace topo {

// How crowded a ring's cross-leaf cables are: lower is better.
struct SeamCost {
  double worst = 0;  // the most flows on one cable its cross-leaf flows use
  double sum = 0;    // flows on those cables, summed over its flows
  bool operator<(const SeamCost& o) const {
    return worst < o.worst - 1e-9 || (worst <= o.worst + 1e-9 && sum < o.sum - 1e-9);
  }
};

// The switch-to-switch cables of the flows from one host to another
// (placement/traffic.h switch_cables), each routed once and kept: the seam
// search tries the same exits and entries again and again, over its
// passes, both directions and the candidates of one decision, and walking
// the tables is most of its cost. Forwarding tables route by destination,
// so past the sender's own cables a route depends only on the leaves the
// sender's ports reach: every exit of one leaf shares one walk. Valid while
// the fabric's tables and cables stay as they were, so one may serve every
// decision on one SwitchTree (the replay keeps one a run, the Slurm plugin
// one a tree): most decisions then route nothing, and a route is found by
// two indexed reads (a row per leaf set, made when first asked, with a
// slot per destination host), not a hash. At most one route per (sender's
// leaves, destination host) is kept; rank_placements() forgets them all
// once they hold kMaxKeptBytes.
class SeamRoutes {
 public:
  explicit SeamRoutes(const PathIndex& paths)
      : paths_(paths),
        by_leaf_set_(static_cast<size_t>(paths.leaf_set_count())),
        scratch_(new int[2 * paths.fabric().cables().size()]()) {}
  const std::vector<int>& cables(NodeId from, NodeId to);  // stable until clear()
  const PathIndex& paths() const { return paths_; }
  // Routes kept; forgetting them all invalidates what cables() returned.
  size_t size() const { return routes_.size(); }
  void clear();
  // What the rows and routes kept take, near enough: a row is 8 bytes a host
  // of the fabric (128 KB on 16,384 hosts), a route a vector and a few ints.
  size_t bytes() const { return bytes_; }
  // A bound on what is kept across decisions: on 512 hosts every route
  // there is takes under 2 MB; a fabric of hundreds of leaves and thousands
  // of hosts starts afresh now and then.
  static constexpr size_t kMaxKeptBytes = size_t{32} << 20;
  // Equal for senders whose ports reach the same leaves in the same order
  // (PathIndex::leaf_set): their routes to any host are the same. A sender
  // with a port on no leaf has a key of its own.
  uint64_t sender_key(NodeId from) const;
  // Zeroes, one per directed cable of the fabric, that one seam search at a
  // time borrows and leaves zero again.
  int* scratch() { return scratch_.get(); }

 private:
  const PathIndex& paths_;
  // By leaf set, then destination host index: the route in routes_, null
  // while unrouted. A row is sized when first asked.
  std::vector<std::vector<const std::vector<int>*>> by_leaf_set_;
  std::unordered_map<uint64_t, const std::vector<int>*> lone_;  // senders of no leaf set: by sender key << 32 | to
  std::deque<std::vector<int>> routes_;                         // a deque: what cables() returned stays put as it grows
  size_t bytes_ = 0;
  std::unique_ptr<int[]> scratch_;
};

// The ring for `hosts` (which may come back with some hosts swapped for
// equally good ones of the same leaf, see above).
std::vector<NodeId> seam_ring(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                              std::span<const NodeId> hosts);
// The same, reading and filling routes kept for the decision.
std::vector<NodeId> seam_ring(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                              std::span<const NodeId> hosts, SeamRoutes& routes);

// A floor under the worst that seam_ring can reach for `hosts`: no ring that
// takes them leaf by leaf (one segment per leaf, any order, any entry and
// exit, spares swapped in) puts fewer flows on the busiest cable of its
// cross-leaf flows. Every segment is entered once and left once (in a chain
// all but one), and each such flow adds itself to what the running jobs
// already put on its cables: the floor is the largest, over segments, of the
// least any flow into it (or out of it) could meet. When seam_ring's worst
// equals it, no ring order of these hosts does better, and what is left of
// their contention is the hosts' own (which ones, beside which jobs).
// Zero where seam_ring keeps ring_order() (see above).
double seam_floor(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                  std::span<const NodeId> hosts);

// The measure seam_ring minimises, for a ring as given (a chain for a
// pipeline profile). Zero under adaptive routing.
SeamCost seam_cost(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                   std::span<const NodeId> ring);
// The same, reading and filling routes kept for the decision.
SeamCost seam_cost(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                   std::span<const NodeId> ring, SeamRoutes& routes);

}  // namespace topo
