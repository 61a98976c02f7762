// The exact answer for small instances: every set of eligible hosts of the
// requested size, each in its ring order, scored by the same objective.
// The tests hold the search against it; `topoctl place --exact` offers it
// as a what-if on small fabrics.
#pragma once

#include "placement/search.h"

namespace topo {

// Whole-host requests only. Throws std::invalid_argument for a GPU-count
// request, or when there are more than `max_sets` host sets to try.
Placement place_exact(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                      const Weights& weights = {}, long max_sets = 2'000'000);

}  // namespace topo
