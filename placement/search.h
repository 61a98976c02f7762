// Choosing the hosts for a job: hierarchical best fit down the switch tree,
// scored by the objective, then a bounded local improvement.
//
// 1. Hosts that can take the job (enough free GPUs, not drained, no cable an
//    admin took out) are grouped by their home leaf, healthy hosts first.
// 2. Candidates: every leaf that fits the job alone; for each pod, the
//    fewest leaves that fit it (largest first), with the last leaf chosen
//    best fit (the smallest that covers the rest); the same across the
//    fewest pods when no pod fits it. AllToAll jobs spread their hosts
//    evenly over the leaves they get, so no leaf's uplinks carry more than
//    its share, and get one candidate more per pod: the fewest leaves whose
//    uplinks each carry what the job sends out of them (objective.h).
// 3. Candidates are pre-ranked without the comm_model, the best few scored
//    with it in that order until structure alone rules the rest out (the
//    estimate only adds to a score: a candidate whose structure reaches
//    the best total so far cannot win), and the winner improved by
//    swapping one of its leaves for an unused one of its pod while that
//    lowers the score: swaps ranked on structure, the comm_model for the
//    first few that win on it.
// The cluster state is read through one FreeIndex per decision.
// The result holds the hosts in ring order and the reasons in words
// (unless SearchOptions::with_reasons is off).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "placement/objective.h"

namespace topo {

struct Placement {
  bool feasible = false;
  std::vector<NodeId> hosts;   // in ring order; the job's NODE_RANK is the index
  std::vector<int> gpus;       // GPUs used on each host, same order
  std::vector<NodeId> leaves;  // distinct, in ring order
  Score score;
  std::vector<std::string> reasons;
};

struct SearchOptions {
  Weights weights;
  int scored_candidates = 6;  // how many pre-ranked candidates get the comm_model
  int improvement_rounds = 2;
  int estimated_swaps = 2;  // per improvement round: swaps that get the comm_model
  // Whether feasible placements come with their reasons in words. Wording
  // them is about a sixth of a small search's instructions (engine_bench's
  // 3-host burst: 129k with them, 110k without); a caller that ranks far
  // more often than it shows one (the Slurm plugin records one placement
  // of many evaluations) asks placement_reasons() for the one it shows.
  bool with_reasons = true;
};

// The best placement, or one with feasible == false and the reason why not.
// `routes`, when given, are the seam search's routes kept across decisions
// on `tree` (seams.h); without them a decision routes its own. Throws
// std::invalid_argument for routes of another tree's PathIndex.
Placement place(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                const SearchOptions& options = {}, SeamRoutes* routes = nullptr);

// The best `count` distinct candidates, best first (the Slurm plugin tries
// them in turn until cons_tres accepts one). On a fabric with NVLink
// domains a whole-host job goes through them first (domain_fit.h).
std::vector<Placement> rank_placements(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                                       int count, const SearchOptions& options = {}, SeamRoutes* routes = nullptr);

// The leaf search alone, whatever NVLink domains the fabric has.
std::vector<Placement> rank_placements_by_leaves(const SwitchTree& tree, const FreeMap& free,
                                                 const PlacementRequest& request, int count,
                                                 const SearchOptions& options = {}, SeamRoutes* routes = nullptr);

// The reasons in words of a feasible placement that rank_placements() gave
// for `request` on `free` (what it puts in Placement::reasons).
std::vector<std::string> placement_reasons(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                                           const Placement& placement);

// Whether a scored placement keeps the request's hard limits (max leaves,
// one pod, one rail group).
bool within_limits(const Placement& placement, const PlacementRequest& request);

// Whether `host` can take part in the job at all.
bool eligible(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request, NodeId host);

// Completes a placement from chosen hosts: ring order, GPUs, leaves, score.
Placement make_placement(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                         std::vector<NodeId> hosts, const Weights& weights, bool with_estimate = true);

}  // namespace topo
