// The planner's second pass: lowering the most flows on any cable where
// moving one flow at a time to its cheapest path stops.
//
// Moving one flow at a time gets stuck when every free path of a flow on
// the busiest cable passes a cable that is full at the target: leaf A's
// flow could take spine 2 if spine 2's cable down to leaf B had room, and
// it would, if one of B's flows through spine 2 moved to spine 1, which
// A's flow just left. The pass looks for such chains as a bipartite
// matching looks for augmenting paths: it moves a flow off the busiest
// cable onto a path that fills at most one cable to the target level, then
// moves another flow off that cable the same way, until a move fills none
// (every cable of the chain below the level) or there is nowhere left to
// look (each cable is searched once per chain, so it ends). It takes a
// chain only when it completes, so no cable ever reaches the level it
// lowers; it lowers the busiest cables one by one, then the next level.
#pragma once

#include <vector>

#include "routing/planned_flows.h"

namespace topo::planner {

// Moves `planned` flows (updating `loads`) while a chain lowers a cable
// at the highest level; entries changed from the base tables stay within
// `max_changes` (0: no limit). Deterministic.
void exchange_flows(std::vector<Planned>& planned, Loads& loads, int max_changes);

}  // namespace topo::planner
