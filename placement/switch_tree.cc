#include "placement/switch_tree.h"

#include <algorithm>
#include <set>

namespace topo {

SwitchTree::SwitchTree(const Fabric& fabric) : fabric_(&fabric), paths_(std::make_unique<PathIndex>(fabric)) {
  const FabricGraph& g = fabric.graph();
  size_t n = fabric.node_count();
  home_.assign(n, -1);
  port_.assign(n, 0);
  cables_.resize(n);
  degraded_.resize(n);

  const FabricIndex& fi = fabric.index();
  std::vector<int> tree_leaf(fi.leaves().size(), -1);  // by FabricIndex leaf id
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
    if (int id = fi.leaf_id(s); id >= 0) tree_leaf[id] = static_cast<int>(leaves_.size());
    leaves_.push_back(std::move(leaf));
  }

  uplink_of_.assign(fabric.cables().size(), -1);
  for (size_t i = 0; i < leaves_.size(); ++i)
    for (LinkId e : leaves_[i].uplinks) uplink_of_[fabric.link(e).id] = static_cast<int>(i);
  auto above = [&](NodeId n) { return fabric.switch_index(n) >= 0 && fabric.node(n).level != Level::Leaf; };
  above_leaves_.assign(fabric.cables().size(), 0);
  for (size_t id = 0; id < fabric.cables().size(); ++id)
    above_leaves_[id] =
        above(fi.cable_ends(static_cast<int>(id))[0].node) && above(fi.cable_ends(static_cast<int>(id))[1].node);

  std::set<int> pods;
  for (const Leaf& l : leaves_) pods.insert(l.pod);
  pods_ = static_cast<int>(pods.size());

  // A host's leaf is its home leaf in the fabric's index (the lowest rail's
  // routed cable): the model and the placement read the same fact.
  for (NodeId h : fabric.hosts()) {
    int id = fi.host_id(h);
    for (const FabricIndex::HostPort& p : fi.host_ports(id)) {
      LinkId e = fabric.cables()[p.cable];
      cables_[h].push_back(e);
      if (fabric.link(e).degraded) degraded_[h].push_back(e);
    }
    int home = fi.home_leaf(id);
    if (home < 0 || tree_leaf[home] < 0) continue;
    home_[h] = tree_leaf[home];
    for (const FabricIndex::HostPort& p : fi.host_ports(id))
      if (p.routed) {
        port_[h] = p.leaf_port;
        break;
      }
    leaves_[home_[h]].hosts.push_back(h);
  }
  for (Leaf& l : leaves_) {
    std::sort(l.hosts.begin(), l.hosts.end(), [&](NodeId a, NodeId b) { return port_[a] < port_[b]; });
    if (!l.hosts.empty()) l.host_gbps = fabric.node(l.node).down_gbps / static_cast<double>(l.hosts.size());
  }
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
