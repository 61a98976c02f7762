#include "comm_model/double_binary_tree.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace topo {
namespace {

// Parent of position r in the in-order tree over [0, n): clear r's lowest set
// bit and set the next one up; when that lands past the end, the parent is
// the position with the bit cleared.
int in_order_parent(int r, int n) {
  if (r == 0) return -1;
  int low = r & -r;
  int up = (r ^ low) | (low << 1);
  return up < n ? up : r ^ low;
}

// Trees of N positions are log2(N) deep, so walking up from each is cheap.
int depth_of(const std::vector<int>& parent) {
  int deepest = 0;
  for (size_t r = 0; r < parent.size(); ++r) {
    int d = 0;
    for (int at = parent[r]; at >= 0; at = parent[at]) ++d;
    deepest = std::max(deepest, d);
  }
  return deepest;
}

}  // namespace

DoubleBinaryTree double_binary_tree(int n) {
  if (n < 1) throw std::invalid_argument(fmt::format("a tree needs at least one position, not {}", n));
  DoubleBinaryTree t;
  t.first.parent.resize(n);
  t.second.parent.resize(n);
  for (int r = 0; r < n; ++r) t.first.parent[r] = in_order_parent(r, n);
  // Position r of the second tree plays the part of `role(r)` in the first.
  auto role = [n](int r) { return n % 2 == 0 ? n - 1 - r : (r - 1 + n) % n; };
  auto position = [n](int s) { return n % 2 == 0 ? n - 1 - s : (s + 1) % n; };
  for (int r = 0; r < n; ++r) {
    int p = t.first.parent[role(r)];
    t.second.parent[r] = p < 0 ? -1 : position(p);
  }
  t.first.depth = depth_of(t.first.parent);
  t.second.depth = depth_of(t.second.parent);
  return t;
}

}  // namespace topo
