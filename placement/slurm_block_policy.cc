// Slurm 26.05.3's topology/block (src/plugins/topology/block/
// eval_nodes_block.c, topology_block.c, block_record.c), reimplemented from
// reading its source for a job with no required nodes, one node weight and
// a per-node GRES; no Slurm code is copied. Function names cited are
// Slurm's, so a reader can hold one against the other.
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>

#include "discovery/slurm_topology.h"
#include "placement/slurm_ask.h"
#include "placement/slurm_policy.h"

namespace topo {

using namespace slurm_detail;

SlurmBlockTable slurm_block_table(const Fabric& fabric) {
  const BlockPlan plan = plan_slurm_blocks(fabric);
  SlurmBlockTable t;
  t.node_order = slurm_node_order(fabric);
  std::unordered_map<std::string, int> index;
  for (size_t i = 0; i < t.node_order.size(); ++i) index[fabric.node(t.node_order[i]).name] = static_cast<int>(i);
  t.in_block.assign(t.node_order.size(), 0);
  for (const SlurmBlock& b : plan.blocks) {
    std::vector<int> nodes;
    for (const std::string& h : b.hosts) nodes.push_back(index.at(h));
    std::sort(nodes.begin(), nodes.end());
    for (int i : nodes) t.in_block[i] = 1;
    t.bblocks.push_back(std::move(nodes));
  }
  t.bblock_nodes = plan.block_sizes.front();
  for (int size : plan.block_sizes) t.levels.push_back(static_cast<int>(std::lround(std::log2(size / t.bblock_nodes))));
  return t;
}

namespace {

// The aggregated blocks a job of `rem` nodes is planned in (_get_block_level
// and what eval_nodes_block derives from it).
struct BlockShape {
  int per_block = 0;  // base blocks in an aggregated block
  int count = 0;      // aggregated blocks
  int ll_level = 0;   // the level below: its blocks are "llblocks"
  int per_ll = 1;     // base blocks in an llblock
  int max_ll = 0;     // llblocks the job may span
  bool use_ll = false;
};

bool has_level(const SlurmBlockTable& t, int level) {
  return std::find(t.levels.begin(), t.levels.end(), level) != t.levels.end();
}

BlockShape block_shape(const SlurmBlockTable& t, int rem) {
  const int blocks = static_cast<int>(t.bblocks.size());
  const int bblocks_needed = (rem + t.bblock_nodes - 1) / t.bblock_nodes;
  const int wanted = static_cast<int>(std::ceil(std::log2(std::max(bblocks_needed, 1))));
  BlockShape s;
  // llblock: the highest configured level below the wanted one.
  for (int l = wanted - 1; l >= 0 && wanted > 0; --l)
    if (has_level(t, l)) {
      s.ll_level = l;
      break;
    }
  int level = -1;
  for (int l = wanted; l < 16 && level < 0; ++l)
    if (has_level(t, l)) level = l;
  s.per_block = level < 0 ? blocks : 1 << level;
  s.count = level < 0 ? 1 : (blocks + s.per_block - 1) / s.per_block;
  s.per_ll = 1 << s.ll_level;
  s.max_ll = (rem + s.per_ll * t.bblock_nodes - 1) / (s.per_ll * t.bblock_nodes);
  s.use_ll = s.per_block != s.per_ll * s.max_ll;
  return s;
}

bool same_ll(int a, int b, int level) { return a >= 0 && (a >> level) == (b >> level); }

// What _choose_best_bblock weighs for one segment.
struct BblockState {
  std::vector<int> on_bblock, on_ll;
  std::vector<char> required;
  int best = -1;
  bool best_fit = false, best_same = true;
};

void take_as_best(BblockState& st, int i, bool fit, bool same) {
  st.best = i;
  st.best_fit = fit;
  st.best_same = same;
}

// _choose_best_bblock's llblock part: true when it decided.
bool choose_by_llblock(const BlockShape& s, BblockState& st, int i, int rem, bool fit) {
  if (!s.use_ll || same_ll(st.best, i, s.ll_level)) return false;
  bool same = false;
  const int first = i & (~0 << s.ll_level), last = i | ~(~0 << s.ll_level);
  for (int j = first; j < static_cast<int>(st.required.size()) && j <= last && !same; ++j) same = st.required[j];
  if (st.best == -1 || (same && !st.best_same)) return take_as_best(st, i, fit, same), true;
  if (!same && st.best_same) return true;
  const int best_ll = st.on_ll[st.best >> s.ll_level], ll = st.on_ll[i >> s.ll_level];
  const bool ll_fit = ll >= rem, best_ll_fit = best_ll >= rem;
  if (ll_fit != best_ll_fit) {
    if (ll_fit) take_as_best(st, i, fit, same);
    return true;
  }
  // Both hold the rest: the smaller llblock; neither: the larger.
  if (ll != best_ll) {
    if (ll_fit ? ll < best_ll : ll > best_ll) take_as_best(st, i, fit, same);
    return true;
  }
  return false;
}

void choose_best_bblock(const BlockShape& s, BblockState& st, int i, int rem) {
  const bool fit = st.on_bblock[i] >= rem;
  if (choose_by_llblock(s, st, i, rem, fit)) return;
  // The fewest base blocks: one that holds the rest, the smallest such;
  // else the largest.
  if (st.best == -1 || (fit && !st.best_fit) || (!fit && !st.best_fit && st.on_bblock[i] >= st.on_bblock[st.best]) ||
      (fit && st.on_bblock[i] <= st.on_bblock[st.best])) {
    st.best = i;
    st.best_fit = fit;
  }
}

// The aggregated block a segment goes to: of those whose largest max_ll
// llblocks hold it, the one with the fewest usable nodes, the last of
// equals (one node weight: `bnc <= block_node_cnt`); -1 when none.
int choose_block(const SlurmBlockTable& t, const BlockShape& s, const std::vector<int>& on_bblock, int rem) {
  const int n = static_cast<int>(t.bblocks.size());
  std::vector<int> on_block(s.count, 0), on_ll(s.use_ll ? (n + s.per_ll - 1) / s.per_ll : 0, 0);
  for (int i = 0; i < n; ++i) {
    on_block[i / s.per_block] += on_bblock[i];
    if (s.use_ll) on_ll[i / s.per_ll] += on_bblock[i];
  }
  int best = -1;
  for (int b = 0; b < s.count; ++b) {
    int avail = on_block[b];
    if (s.use_ll) {
      const int per = s.per_block / s.per_ll, offset = b * per;
      std::vector<int> lls(on_ll.begin() + offset, on_ll.begin() + std::min<int>(offset + per, on_ll.size()));
      std::sort(lls.rbegin(), lls.rend());
      avail = 0;
      for (int j = 0; j < std::min<int>(s.max_ll, lls.size()); ++j) avail += lls[j];
    }
    if (avail < rem || on_block[b] == 0) continue;
    if (best == -1 || on_block[b] <= on_block[best]) best = b;
  }
  return best;
}

// One segment (or the whole job) of `rem` nodes from the usable nodes not
// yet taken (`map`); the nodes taken, or none.
std::vector<int> block_segment(const SlurmBlockTable& t, const BlockShape& s, const std::vector<char>& map, int rem) {
  const int n = static_cast<int>(t.bblocks.size());
  BblockState st;
  st.on_bblock.assign(n, 0);
  for (int i = 0; i < n; ++i)
    for (int node : t.bblocks[i]) st.on_bblock[i] += map[node];
  const int block = choose_block(t, s, st.on_bblock, rem);
  if (block < 0) return {};
  st.required.assign(n, 0);
  if (s.use_ll) st.on_ll.assign((n + s.per_ll - 1) / s.per_ll, 0);
  for (int i = 0; i < n; ++i)
    if (i / s.per_block == block && s.use_ll) st.on_ll[i / s.per_ll] += st.on_bblock[i];
  std::vector<int> taken;
  int max_ll = s.max_ll;
  for (int prev = rem + 1; prev != rem && rem > 0;) {
    prev = rem;
    st.best = -1;
    st.best_fit = false;
    st.best_same = true;
    for (int i = 0; i < n; ++i)
      if (i / s.per_block == block && !st.required[i]) choose_best_bblock(s, st, i, rem);
    if (st.best == -1 || (max_ll <= 0 && !st.best_same)) break;
    st.required[st.best] = 1;
    for (int node : t.bblocks[st.best])
      if (map[node] && rem > 0) {
        taken.push_back(node);
        --rem;
      }
    if (!st.best_same) --max_ll;
  }
  if (rem > 0) return {};
  return taken;
}

}  // namespace

Placement place_block(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request) {
  return place_block(slurm_block_table(tree.fabric()), tree, free, request);
}

// topology_p_eval_nodes: eval_nodes_block when a usable node is in a block,
// else Slurm's common evaluation (place_linear).
Placement place_block(const SlurmBlockTable& t, const SwitchTree& tree, const FreeMap& free,
                      const PlacementRequest& request) {
  const SlurmAsk ask = slurm_ask(request);
  if (ask.nodes <= 0 || ask.gpus_per_node <= 0)
    return infeasible("the request asks for nothing: give hosts x GPUs per host, or a GPU count");
  int usable_count = 0;
  std::vector<char> map = usable_nodes(t.node_order, tree, free, ask, usable_count);
  bool any_in_block = false;
  for (size_t i = 0; i < map.size() && !any_in_block; ++i) any_in_block = map[i] && t.in_block[i];
  if (!any_in_block) {
    SlurmSwitchTable order_only;
    order_only.node_order = t.node_order;
    return place_linear(order_only, tree, free, request);
  }
  int segment = request.segment > ask.nodes ? 0 : request.segment;  // "Ignoring segment_size"
  if (segment > 0 && ask.nodes % segment != 0)
    return infeasible(fmt::format("segment_size ({}) does not fit the job size ({})", segment, ask.nodes));
  const int per = segment > 0 ? segment : ask.nodes;
  const BlockShape shape = block_shape(t, per);
  std::vector<int> chosen;
  for (int s = 0; s < ask.nodes / per; ++s) {
    std::vector<int> part = block_segment(t, shape, map, per);
    if (part.empty())
      return infeasible(fmt::format("Slurm topology/block: no block holds {} of {} usable nodes{}", per, ask.text(),
                                    segment > 0 ? fmt::format(" (segment {} of {})", s + 1, ask.nodes / per) : ""));
    for (int i : part) map[i] = 0;
    chosen.insert(chosen.end(), part.begin(), part.end());
  }
  return finish(tree, free, request, ask, t.node_order, std::move(chosen),
                fmt::format("Slurm topology/block for {}{}", ask.text(),
                            segment > 0 ? fmt::format(" --segment={}", segment) : ""));
}

}  // namespace topo
