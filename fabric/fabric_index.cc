#include "fabric/fabric_index.h"

#include <algorithm>
#include <type_traits>

#include <fmt/format.h>

#include "common/error.h"
#include "fabric/fabric.h"

namespace topo {

static_assert(std::is_same_v<FabricIndex::NodeId, NodeId>, "the index names fabric vertices by their descriptor");

namespace {

bool routed(const Link& l) { return l.kind == LinkKind::Cable && l.gbps() > 0; }

}  // namespace

FabricIndex::FabricIndex(const Fabric& fabric) {
  index_cables(fabric);
  index_lids(fabric);
  index_leaves(fabric);
  index_hosts(fabric);
}

// Cable ends and the (node, port) -> cable table.
void FabricIndex::index_cables(const Fabric& fabric) {
  const size_t nodes = fabric.node_count();
  ends_.resize(fabric.cables().size());
  std::vector<int> highest(nodes, -1);
  for (size_t c = 0; c < ends_.size(); ++c) {
    const Link& l = fabric.link(fabric.cables()[c]);
    ends_[c] = {PortRef{l.end_a, l.port_a}, PortRef{l.end_b, l.port_b}};
    highest[l.end_a] = std::max(highest[l.end_a], l.port_a);
    highest[l.end_b] = std::max(highest[l.end_b], l.port_b);
  }
  port_begin_.assign(nodes + 1, 0);
  for (size_t v = 0; v < nodes; ++v) port_begin_[v + 1] = port_begin_[v] + static_cast<uint32_t>(highest[v] + 1);
  port_cable_.assign(port_begin_[nodes], -1);
  for (size_t c = 0; c < ends_.size(); ++c)
    for (const PortRef& end : ends_[c])
      if (end.port >= 0) port_cable_[port_begin_[end.node] + static_cast<uint32_t>(end.port)] = static_cast<int>(c);
}

// LIDs, sorted; one given twice is an error of the fabric.
void FabricIndex::index_lids(const Fabric& fabric) {
  const FabricGraph& g = fabric.graph();
  for (NodeId v = 0; v < fabric.node_count(); ++v)
    if (uint32_t lid = g[v].lid; lid != 0) by_lid_.emplace_back(lid, v);
  std::sort(by_lid_.begin(), by_lid_.end());
  for (size_t i = 1; i < by_lid_.size(); ++i)
    if (by_lid_[i].first == by_lid_[i - 1].first)
      throw FabricError(fmt::format("LID {} is given to both '{}' and '{}'", by_lid_[i].first,
                                    g[by_lid_[i - 1].second].id, g[by_lid_[i].second].id));
}

// Leaves: switches with a routed HCA cable.
void FabricIndex::index_leaves(const Fabric& fabric) {
  const FabricGraph& g = fabric.graph();
  leaf_id_.assign(fabric.node_count(), -1);
  for (NodeId s : fabric.switches())
    for (auto e : boost::make_iterator_range(boost::out_edges(s, g)))
      if (routed(g[e]) && g[fabric.peer(e, s)].kind == NodeKind::Hca) {
        leaf_id_[s] = static_cast<int>(leaves_.size());
        leaves_.push_back(s);
        break;
      }
}

// Hosts and their ports; a host's home leaf is that of its first routed port.
void FabricIndex::index_hosts(const Fabric& fabric) {
  const FabricGraph& g = fabric.graph();
  host_id_.assign(fabric.node_count(), -1);
  host_ports_begin_.assign(1, 0);
  home_leaf_.assign(fabric.hosts().size(), -1);
  for (size_t h = 0; h < fabric.hosts().size(); ++h) {
    NodeId host = fabric.hosts()[h];
    host_id_[host] = static_cast<int>(h);
    for (NodeId hca : fabric.hcas_of(host))
      for (auto e : boost::make_iterator_range(boost::out_edges(hca, g))) {
        const Link& l = g[e];
        NodeId sw = fabric.peer(e, hca);
        if (l.kind != LinkKind::Cable || g[sw].kind != NodeKind::Switch) continue;
        HostPort p;
        p.hca = hca;
        p.rail = g[hca].rail;
        p.cable = l.id;
        p.leaf_switch = sw;
        p.leaf_port = fabric.local_port(e, sw);
        p.leaf = leaf_id_[sw];
        p.routed = routed(l);
        p.gbps = p.routed ? l.gbps() : 0;
        if (p.routed && home_leaf_[h] < 0) home_leaf_[h] = p.leaf;
        host_ports_.push_back(p);
      }
    host_ports_begin_.push_back(static_cast<int>(host_ports_.size()));
  }
}

std::vector<FabricIndex::NodeId> FabricIndex::switches_of(int host) const {
  std::vector<NodeId> out;
  for (const HostPort& p : host_ports(host))
    if (std::find(out.begin(), out.end(), p.leaf_switch) == out.end()) out.push_back(p.leaf_switch);
  return out;
}

int FabricIndex::leaf_on_rail(int host, int rail) const {
  for (const HostPort& p : host_ports(host))
    if (p.routed && p.rail == rail) return p.leaf;
  return -1;
}

int FabricIndex::cable_at(NodeId node, int port) const {
  if (node + 1 >= port_begin_.size() || port < 0) return -1;
  uint32_t slot = port_begin_[node] + static_cast<uint32_t>(port);
  return slot < port_begin_[node + 1] ? port_cable_[slot] : -1;
}

std::optional<FabricIndex::NodeId> FabricIndex::node_by_lid(uint32_t lid) const {
  auto it = std::lower_bound(by_lid_.begin(), by_lid_.end(), std::make_pair(lid, NodeId{0}));
  if (it == by_lid_.end() || it->first != lid) return std::nullopt;
  return it->second;
}

}  // namespace topo
