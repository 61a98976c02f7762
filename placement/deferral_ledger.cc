#include "placement/deferral_ledger.h"

namespace topo {

double IdleSlowdowns::of(const PlacementRequest& request, const std::function<Placement()>& best_on_idle) {
  // Kept at 1 before the search: a search that throws is not run again.
  auto [it, added] = of_.try_emplace(request, 1.0);
  if (!added) return it->second;
  Placement best = best_on_idle();
  if (best.feasible && best.score.ideal_s > 0) it->second = best.score.slowdown;
  return it->second;
}

}  // namespace topo
