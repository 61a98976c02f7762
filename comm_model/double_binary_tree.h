// The double binary tree NCCL's Tree algorithm runs between hosts.
//
// Two binary trees over the same N positions (Sanders, Speck, Träff,
// "Two-tree algorithms for full bandwidth broadcast, reduction and scan",
// 2009): each carries half of the data, and a position that is inner in one
// tree is a leaf in the other, so every host sends and receives about the
// same amount. The first tree numbers positions in order: a position's
// height is the number of trailing zero bits of its index, its parent the
// nearest index one level up, and position 0 is the root above the highest
// power of two, so inner positions are the even ones. The second tree is the
// first mirrored when N is even and shifted by one position when N is odd,
// which makes the odd positions inner.
#pragma once

#include <vector>

namespace topo {

struct BinaryTree {
  std::vector<int> parent;  // -1 for the root
  int depth = 0;            // edges from the root to the deepest position
};

struct DoubleBinaryTree {
  BinaryTree first, second;
  int depth() const { return first.depth > second.depth ? first.depth : second.depth; }
};

// Throws std::invalid_argument for n < 1.
DoubleBinaryTree double_binary_tree(int n);

}  // namespace topo
