// The nearest-rank percentile, the one definition the replay's figures use.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace topo {

// The smallest value with at least q of the values at or below it, for q in
// (0, 1]; `empty` when there are none.
inline double nearest_rank(std::vector<double> values, double q, double empty) {
  if (values.empty()) return empty;
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  rank = std::clamp<size_t>(rank, 1, values.size());
  std::nth_element(values.begin(), values.begin() + static_cast<long>(rank - 1), values.end());
  return values[rank - 1];
}

}  // namespace topo
