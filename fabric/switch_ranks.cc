#include "fabric/switch_ranks.h"

#include <algorithm>
#include <deque>

namespace topo {

bool admits(RankCables which, const Link& l) {
  if (l.kind != LinkKind::Cable) return false;
  switch (which) {
    case RankCables::Any:
      return true;
    case RankCables::Active:
      return l.state == PortState::Active;
    case RankCables::Routed:
      return l.gbps() > 0;
  }
  return false;
}

// A breadth-first walk up from every leaf over the admitted cables between
// switches.
SwitchRanks::SwitchRanks(const Fabric& fabric, RankCables which)
    : fabric_(&fabric), which_(which), rank_(fabric.node_count(), -1) {
  const FabricGraph& g = fabric.graph();
  std::deque<NodeId> queue;
  for (NodeId s : fabric.switches())
    for (auto e : boost::make_iterator_range(boost::out_edges(s, g)))
      if (admits(which, g[e]) && g[fabric.peer(e, s)].kind == NodeKind::Hca) {
        rank_[s] = 0;
        queue.push_back(s);
        break;
      }
  while (!queue.empty()) {
    NodeId s = queue.front();
    queue.pop_front();
    for (auto e : boost::make_iterator_range(boost::out_edges(s, g))) {
      NodeId t = fabric.peer(e, s);
      if (!admits(which, g[e]) || g[t].kind != NodeKind::Switch || rank_[t] >= 0) continue;
      rank_[t] = rank_[s] + 1;
      queue.push_back(t);
    }
  }
  for (NodeId s : fabric.switches())
    if (rank_[s] >= 0) by_rank_.push_back(s);
  std::stable_sort(by_rank_.begin(), by_rank_.end(), [&](NodeId a, NodeId b) { return rank_[a] < rank_[b]; });
}

std::vector<SwitchRanks::SwitchCable> SwitchRanks::switch_cables(NodeId s) const {
  const Fabric& f = *fabric_;
  std::vector<SwitchCable> out;
  for (auto e : boost::make_iterator_range(boost::out_edges(s, f.graph()))) {
    NodeId peer = f.peer(e, s);
    if (admits(which_, f.link(e)) && f.node(peer).kind == NodeKind::Switch)
      out.push_back({f.local_port(e, s), e, peer});
  }
  std::sort(out.begin(), out.end(), [](const SwitchCable& a, const SwitchCable& b) { return a.port < b.port; });
  return out;
}

// Down hops first, from the leaf up in rank order; then up/down hops, from
// the top down, each switch taking the better of going down now or climbing
// to a parent that is nearer.
SwitchRanks::Hops SwitchRanks::hops_to(NodeId leaf) const {
  Hops h;
  h.down.assign(rank_.size(), kNoPath);
  h.down[leaf] = 0;
  for (NodeId s : by_rank_)
    for (const SwitchCable& c : switch_cables(s))
      if (one_above(s, c.peer) && h.down[c.peer] + 1 < h.down[s]) h.down[s] = h.down[c.peer] + 1;
  h.updown = h.down;
  for (auto it = by_rank_.rbegin(); it != by_rank_.rend(); ++it)
    for (const SwitchCable& c : switch_cables(*it))
      if (one_above(c.peer, *it) && h.updown[c.peer] + 1 < h.updown[*it]) h.updown[*it] = h.updown[c.peer] + 1;
  return h;
}

}  // namespace topo
