#include "placement/switch_tree.h"

#include <algorithm>
#include <map>
#include <set>

namespace topo {

SwitchTree::SwitchTree(const Fabric& fabric)
    : fabric_(&fabric), paths_(std::make_unique<PathIndex>(fabric)) {
  const FabricGraph& g = fabric.graph();
  size_t n = fabric.node_count();
  home_.assign(n, -1);
  port_.assign(n, 0);
  cables_.resize(n);
  degraded_.resize(n);

  std::map<NodeId, int> leaf_index;
  for (NodeId s : fabric.switches_at(Level::Leaf)) {
    Leaf leaf;
    leaf.node = s;
    leaf.pod = std::max(0, fabric.node(s).pod);
    leaf.up_gbps = fabric.node(s).up_gbps;
    leaf.oversubscription = fabric.node(s).oversubscription();
    for (auto e : boost::make_iterator_range(boost::out_edges(s, g))) {
      NodeId p = fabric.peer(e, s);
      const Link& l = fabric.link(e);
      if (fabric.node(p).kind != NodeKind::Switch || l.state != PortState::Active) continue;
      if (fabric.node(p).level == Level::Leaf) continue;
      leaf.uplinks.push_back(e);
      if (l.degraded) leaf.degraded_uplinks.push_back(e);
    }
    leaf_index[s] = static_cast<int>(leaves_.size());
    leaves_.push_back(std::move(leaf));
  }

  uplink_of_.assign(fabric.cables().size(), -1);
  for (size_t i = 0; i < leaves_.size(); ++i)
    for (LinkId e : leaves_[i].uplinks) uplink_of_[fabric.link(e).id] = static_cast<int>(i);

  std::set<int> pods;
  for (const Leaf& l : leaves_) pods.insert(l.pod);
  pods_ = static_cast<int>(pods.size());

  // A host's leaf is the one PathIndex gives its first port (the lowest
  // rail's Active cable): the model and the placement read the same fact.
  const PathIndex& paths = *paths_;
  std::vector<int> tree_leaf(paths.leaves().size(), -1);
  for (size_t i = 0; i < paths.leaves().size(); ++i)
    if (auto it = leaf_index.find(paths.leaves()[i]); it != leaf_index.end()) tree_leaf[i] = it->second;
  for (NodeId h : fabric.hosts()) {
    for (NodeId hca : fabric.hcas_of(h))
      for (auto e : boost::make_iterator_range(boost::out_edges(hca, g))) {
        const Link& l = fabric.link(e);
        if (l.kind != LinkKind::Cable || fabric.node(fabric.peer(e, hca)).kind != NodeKind::Switch) continue;
        cables_[h].push_back(e);
        if (l.degraded) degraded_[h].push_back(e);
      }
    std::span<const PathIndex::Port> ports = paths.ports(paths.host_index(h));
    if (ports.empty() || tree_leaf[ports.front().leaf] < 0) continue;
    home_[h] = tree_leaf[ports.front().leaf];
    port_[h] = fabric.local_port(ports.front().cable, leaves_[home_[h]].node);
    leaves_[home_[h]].hosts.push_back(h);
  }
  for (Leaf& l : leaves_)
    std::sort(l.hosts.begin(), l.hosts.end(), [&](NodeId a, NodeId b) { return port_[a] < port_[b]; });
}

std::span<const LinkId> SwitchTree::degraded_cables(NodeId host) const {
  if (host >= degraded_.size()) return {};
  return degraded_[host];
}

std::span<const LinkId> SwitchTree::cables(NodeId host) const {
  if (host >= cables_.size()) return {};
  return cables_[host];
}

}  // namespace topo
