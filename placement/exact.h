// The exact answer for small instances: every set of eligible hosts of the
// requested size, each completed by make_placement() (ring order and, under
// static routing, the seams of placement/seams.h) and scored.
//
// It shares the objective with the search: it has no scoring of its own.
// So it proves that the search finds the best host set the objective can
// see (the tests hold the search against it), not that the objective is
// right; that is the judge's business (simulation/outcome.h, checked
// against SimGrid). Its ring orders are those make_placement() gives, not an
// enumeration of every order. `topoctl place --exact` offers it as a what-if
// on small fabrics.
#pragma once

#include "placement/search.h"

namespace topo {

// Whole-host requests only. Throws std::invalid_argument for a GPU-count
// request, or when there are more than `max_sets` host sets to try.
Placement place_exact(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                      const Weights& weights = {}, long max_sets = 2'000'000);

}  // namespace topo
