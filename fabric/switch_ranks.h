// Up and down in a fabric: each switch's rank above the leaves, and the
// up/down hop counts that routing's shortest paths follow.
//
// A leaf is a switch with a cable to an HCA; a switch's rank is the number
// of switch hops from it down to the nearest leaf (0 for a leaf), -1 where
// no leaf reaches it. A cable climbs when it joins a switch to one a rank
// higher; cables between switches of the same rank carry no up/down path.
//
// Which cables count depends on the question, so a ranking names them:
// - classification ranks the cabling, every cable whatever its state
//   (Node::height, fabric/classify.h), so a cable that went down does not
//   move a switch to another level;
// - `topoctl path` ranks the Active cables a flow can take;
// - the comm model's PathIndex ranks the routed ones, Active with a rate,
//   as FabricIndex counts leaves.
// The leaves follow the same rule: a leaf under Routed is a switch with a
// routed HCA cable (FabricIndex::leaves()).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "fabric/fabric.h"

namespace topo {

enum class RankCables : uint8_t {
  Any,     // every cable, whatever its state
  Active,  // Active cables
  Routed,  // Active cables with a rate (Link::gbps() > 0)
};

// Whether a ranking of `which` cables walks link `l` (always a cable).
bool admits(RankCables which, const Link& l);

class SwitchRanks {
 public:
  SwitchRanks(const Fabric& fabric, RankCables which);

  // The switch's rank; -1 where no leaf reaches it, and for hosts and HCAs.
  int rank(NodeId v) const { return rank_[v]; }
  // Every ranked switch, lowest rank first, in Fabric::switches() order
  // within a rank: a walk in this order sees every switch below finished.
  std::span<const NodeId> by_rank() const { return by_rank_; }
  // Whether `upper` is ranked exactly one above a ranked `lower`.
  bool one_above(NodeId upper, NodeId lower) const { return rank_[lower] >= 0 && rank_[upper] == rank_[lower] + 1; }

  // The admitted cables from switch `s` to other switches, by `s`'s port.
  struct SwitchCable {
    int port = 0;  // of `s`
    LinkId cable;
    NodeId peer = 0;
  };
  std::vector<SwitchCable> switch_cables(NodeId s) const;

  // Hops from every switch to one leaf over admitted cables, by NodeId:
  // `down` descending only, `updown` climbing first and then descending
  // (the shortest up/down path); kNoPath where there is none.
  static constexpr int kNoPath = std::numeric_limits<int>::max() / 2;
  struct Hops {
    std::vector<int> down, updown;
  };
  Hops hops_to(NodeId leaf) const;

 private:
  const Fabric* fabric_;
  RankCables which_;
  std::vector<int> rank_;  // by NodeId
  std::vector<NodeId> by_rank_;
};

}  // namespace topo
