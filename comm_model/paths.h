// The up/down paths of a fabric, indexed once so that an estimate never
// searches the graph.
//
// Traffic leaves a host on one of its HCAs, enters that HCA's leaf, climbs
// only as far as it must (leaf -> spine -> core) and descends to the leaf of
// the receiving HCA: the shortest up/down path, as a subnet manager's
// up/down or fat-tree routing lays them out. Where several such paths exist,
// a switch spreads the traffic evenly over every cable that lies on one
// (ECMP, or adaptive routing, seen as a fluid): a leaf with 4 uplinks to the
// spines puts a quarter of a flow on each, degraded or not. So two HCAs of
// the same rail on one leaf never load a spine, while a cross-rail flow on a
// rail-optimized fabric climbs to the spines like any other.
//
// Levels here are ranks by switch hops from the nearest HCA, recomputed from
// the Active cables (a switch one hop above a leaf is rank 1, and so on);
// cables between switches of the same rank carry no routed traffic, and
// cables that are not Active carry none at all.
//
// The index keeps a reference to the fabric: the fabric must outlive it and
// must not be moved or copied into (LinkIds belong to one fabric object).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fabric/fabric.h"
#include "routing/route.h"

namespace topo {

class PathIndex {
 public:
  explicit PathIndex(const Fabric& fabric);

  const Fabric& fabric() const { return *fabric_; }

  // An HCA port of a host as routing sees it: only Active cables count.
  struct Port {
    NodeId hca = 0;
    LinkId cable;     // HCA <-> leaf
    int rail = -1;    // the HCA's rail; -1 when its name carries none
    int leaf = -1;    // index into leaves()
    double gbps = 0;  // line rate of the cable
    // The cable's two directions as load keys (directed_cable), and the
    // leaf's port and HCA's LID a table forwards by: every estimate reads
    // them for every host, so they are kept here rather than on the graph.
    int up = -1;    // HCA -> leaf
    int down = -1;  // leaf -> HCA
    int leaf_port = 0;
    uint32_t lid = 0;  // 0 when the snapshot has none
  };

  // The position of `host` in fabric().hosts() (FabricIndex::host_id), or
  // -1 for any other node.
  int host_index(NodeId host) const { return fabric_->index().host_id(host); }
  // The host's routed ports (FabricIndex::host_ports that are routed), in
  // that order; empty when no HCA of the host has an Active cable to a switch.
  // Inline: the traffic patterns ask it for every crossing.
  std::span<const Port> ports(int host_index) const { return ports_.at(static_cast<size_t>(host_index)); }
  // Which leaves the host's routed ports reach, as one id: hosts whose ports
  // reach the same leaves in the same order share it, and forwarding tables,
  // which route by destination, take them over the same switch cables to any
  // host. A one-port host's id is its leaf's; lists of several (or none)
  // are numbered from leaves().size() on. -1 when a port reaches no leaf:
  // such a host routes alone.
  int leaf_set(int host_index) const { return leaf_set_.at(static_cast<size_t>(host_index)); }
  // Ids leaf_set() gives, all below this.
  int leaf_set_count() const { return leaf_set_count_; }

  // The rail of each GPU the fabric knows on the host (Node::gpus, -1 where
  // hwloc named none), read once here: an estimate asks for every host of
  // its job, and the nodes themselves are large and scattered.
  std::span<const int> gpu_rails(int host_index) const {
    return {gpu_rails_.data() + gpu_rails_begin_[host_index],
            static_cast<size_t>(gpu_rails_begin_[host_index + 1] - gpu_rails_begin_[host_index])};
  }
  // Link::gbps() by Link::id (0 for a cable that is not Active), for the
  // sharing's room per cable.
  std::span<const double> cable_gbps() const { return cable_gbps_; }

  // Rank-0 switches: FabricIndex::leaves(), so leaf ids are the same in both.
  std::span<const NodeId> leaves() const { return leaves_; }

  // The Active parallel cables from one switch to a neighbour one rank up or
  // down, in one direction. Under an even spread each cable takes the same
  // share, so the trunk carries at most `cables.size()` times its slowest
  // cable's rate.
  struct Trunk {
    NodeId from = 0;
    NodeId to = 0;
    bool up = false;
    std::vector<LinkId> cables;
    std::vector<double> cable_gbps;
    double slowest_gbps = 0;
    int slowest_cable = 0;  // its position in `cables`
  };
  std::span<const Trunk> trunks() const { return trunks_; }

  // Load keys: one integer space for what per-cable tables (loads, flows,
  // room) are indexed by. Keys below 2 x the fabric's cable count are
  // directed cables (routing/route.h directed_cable); key
  // trunk_key(k) stands for every cable of trunks()[k] at once, each
  // carrying the entry. An even spread never loads a trunk's cables
  // differently, so it names the trunk once: a scattered job then loads
  // a few thousand entries, not tens of thousands.
  int trunk_key(int trunk) const { return trunk_key_base_ + trunk; }
  // The trunk a key stands for; -1 for a directed cable.
  int trunk_of_key(int key) const { return key >= trunk_key_base_ ? key - trunk_key_base_ : -1; }
  // Keys there are: 2 x cables + trunks.
  int key_count() const { return trunk_key_base_ + static_cast<int>(trunks_.size()); }
  // Calls `visit(directed cable)` for each cable a key stands for.
  template <typename Visit>
  void for_each_cable(int key, Visit&& visit) const;

  // Where a cable sits in the index, looked up by LinkId.
  struct CableRef {
    int host = -1;  // an HCA cable: the host index and its port
    int port = -1;
    int trunk_ab = -1;   // a switch cable: the trunk leaving Link::end_a
    int trunk_ba = -1;   // and the one leaving Link::end_b
    int member_ab = -1;  // the cable's position in each of them
    int member_ba = -1;
  };
  // nullopt for a cable the index does not use (inactive, same-rank, attachment).
  std::optional<CableRef> locate(LinkId cable) const;
  // Whether a load key is a routed port's cable (ports()), either way: a
  // host's own, what the ideal fabric keeps. A trunk key never is.
  bool is_port_cable(int key) const {
    return key >= 0 && key < trunk_key_base_ && cables_[static_cast<size_t>(key / 2)].host >= 0;
  }

  // Switches a packet passes from leaf a to leaf b on a shortest up/down
  // path: 1 when a == b, 3 through one spine; nullopt when b cannot be reached.
  std::optional<int> switches_between(int leaf_a, int leaf_b) const {
    uint8_t hops = updown_hops(leaf_slot_[leaf_a], leaf_b);
    if (hops == kUnreachable) return std::nullopt;
    return hops + 1;
  }

  // Adds `bytes` going from leaf a to leaf b onto `trunk_bytes` (indexed like
  // trunks()), spread evenly over every cable of every shortest up/down path.
  // Throws FabricError when b cannot be reached from a.
  void spread(int leaf_a, int leaf_b, double bytes, std::span<double> trunk_bytes) const;

  // Buffers spread() reuses; pass one when spreading many leaf pairs.
  struct Scratch {
    struct Step {
      int slot;
      bool down;  // once descending, a path never climbs again
      double share;
    };
    std::vector<Step> frontier, next;
    std::vector<std::pair<int, int>> options;  // trunk, next slot
    // The climb out of one leaf: switches reached at each height, and the
    // share of the leaf's traffic each trunk of each step carries.
    std::vector<std::vector<Step>> climb;
    std::vector<std::vector<std::pair<int, double>>> climb_trunks;
    std::vector<double> climbing;  // bytes that climb exactly k steps
    // Trunks whose bytes went from zero to more since the caller last
    // cleared this: a caller that keeps one trunk_bytes array for many
    // spreads reads back and zeroes only these, not every trunk of the
    // fabric.
    std::vector<int> touched;
  };
  void spread(int leaf_a, int leaf_b, double bytes, std::span<double> trunk_bytes, Scratch& scratch) const;

  // The same as spread() for every (leaf_b, bytes) in `flows`, all leaving
  // leaf_a, but the climb out of leaf_a over all its uplinks is walked once
  // and only the descent per destination. That is exact when every switch
  // the climb reaches at the turning height starts down towards leaf_b (no
  // uplink on the way led off a shortest path), as in any healthy Clos; a
  // flow for which that fails is walked alone, as spread() would.
  void spread_from(int leaf_a, std::span<const std::pair<int, double>> flows, std::span<double> trunk_bytes,
                   Scratch& scratch) const;

  // "leaf01:9 -> spine01:3": a cable in the direction traffic leaves `from`.
  std::string describe(LinkId cable, NodeId from) const;

 private:
  static constexpr uint8_t kUnreachable = 255;
  // The constructor's stages, in the order it runs them (paths.cc).
  std::vector<int> index_switches();
  void index_hosts();
  void index_trunks(const std::vector<int>& rank);
  void index_hops(const std::vector<int>& order);
  void index_descent(const std::vector<int>& rank, const std::vector<int>& order);

  uint8_t down_hops(int slot, int leaf) const { return down_[static_cast<size_t>(slot) * leaves_.size() + leaf]; }
  uint8_t updown_hops(int slot, int leaf) const { return updown_[static_cast<size_t>(slot) * leaves_.size() + leaf]; }

  const Fabric* fabric_;
  std::vector<std::vector<Port>> ports_;  // by host index
  std::vector<int> leaf_set_;             // by host index
  int leaf_set_count_ = 0;
  std::vector<NodeId> leaves_;
  std::vector<int> slot_;  // switch slot by NodeId, -1 for non-switches
  std::vector<NodeId> slot_node_;
  std::vector<int> leaf_slot_;  // slot of each leaf
  std::vector<Trunk> trunks_;
  std::vector<std::vector<int>> up_trunks_, down_trunks_;  // by slot
  std::vector<uint8_t> down_, updown_;                     // hops, slot x leaf
  // Walks `frontier` (whose paths have `left` hops to go) down to leaf_b.
  void walk(int leaf_b, int left, double bytes, std::span<double> trunk_bytes, Scratch& scratch) const;

  // Hot-loop copies of trunk facts, kept dense so a walk stays in cache.
  std::vector<int> to_slot_;             // by trunk: slot it leads to
  std::vector<double> width_;            // by trunk: its cable count
  std::vector<int> up_begin_, up_list_;  // up trunks of each slot, flattened
  std::vector<int> reverse_;             // the trunk of the other direction
  std::vector<bool> uniform_climb_;      // by slot: all parents reach every leaf in as many hops
  int ranks_ = 0;                        // highest rank + 1
  // Switches k hops straight above each leaf: ancestors_[leaf * ranks_ + k].
  std::vector<std::vector<int>> ancestors_;
  std::vector<CableRef> cables_;    // by Link::id
  int trunk_key_base_ = 0;          // 2 x the fabric's cable count
  std::vector<double> cable_gbps_;  // by Link::id
  std::vector<int> gpu_rails_;      // by host index, a slice from gpu_rails_begin_
  std::vector<int> gpu_rails_begin_;
};

template <typename Visit>
void PathIndex::for_each_cable(int key, Visit&& visit) const {
  const int k = trunk_of_key(key);
  if (k < 0) {
    visit(key);
    return;
  }
  const Trunk& t = trunks_[static_cast<size_t>(k)];
  for (LinkId e : t.cables) visit(directed_cable(fabric_->link(e), t.from));
}

}  // namespace topo
