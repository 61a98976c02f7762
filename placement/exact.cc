#include "placement/exact.h"

#include <stdexcept>

#include <fmt/format.h>

namespace topo {
namespace {

long binomial(long n, long k) {
  if (k < 0 || k > n) return 0;
  long r = 1;
  for (long i = 1; i <= k; ++i) {
    r = r * (n - k + i) / i;
    if (r > (1L << 40)) return r;
  }
  return r;
}

}  // namespace

Placement place_exact(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                      const Weights& weights, long max_sets) {
  if (request.hosts <= 0) throw std::invalid_argument("the exact solver takes whole-host requests only");
  std::vector<NodeId> pool;
  for (NodeId h : tree.fabric().hosts())
    if (eligible(tree, free, request, h)) pool.push_back(h);
  int n = static_cast<int>(pool.size()), k = request.hosts;
  Placement best;
  best.reasons.push_back(fmt::format("only {} eligible hosts free, {} needed", n, k));
  if (k > n) return best;
  long sets = binomial(n, k);
  if (sets > max_sets)
    throw std::invalid_argument(
        fmt::format("{} host sets to try exceed the exact solver's limit of {}", sets, max_sets));

  std::vector<int> pick(k);
  for (int i = 0; i < k; ++i) pick[i] = i;
  bool any = false;
  while (true) {
    std::vector<NodeId> hosts;
    for (int i : pick) hosts.push_back(pool[i]);
    Placement p = make_placement(tree, free, request, std::move(hosts), weights, true);
    if (within_limits(p, request) && (!any || p.score.total < best.score.total - 1e-12)) {
      best = std::move(p);
      any = true;
    }
    int i = k - 1;
    while (i >= 0 && pick[i] == n - k + i) --i;
    if (i < 0) break;
    ++pick[i];
    for (int j = i + 1; j < k; ++j) pick[j] = pick[j - 1] + 1;
  }
  if (any)
    best.reasons = {fmt::format("exact: best of {} host sets", sets)};
  else
    best.reasons = {"no host set within the limits"};
  return best;
}

}  // namespace topo
