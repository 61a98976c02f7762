// Static forwarding tables for tests and benchmarks, built here without a
// routing engine: every switch sends a destination HCA out of one of its
// ports that lead one hop closer to the HCA's leaf, chosen by the HCA's
// position under its leaf modulo the number of such ports
// (destination-mod-k, as OpenSM's ftree lays out a symmetric tree).
#pragma once

#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include "fabric/fabric.h"
#include "fabric/routing.h"

namespace topo::testing {

// Throws std::out_of_range when a switch port above 254 would be needed:
// an LFT entry is 8 bits wide.
inline Routing dmodk_tables(const Fabric& f) {
  const auto& g = f.graph();
  uint32_t top = 0;
  for (size_t v = 0; v < f.node_count(); ++v) top = std::max(top, f.node(v).lid);
  Routing r;
  r.kind = RoutingKind::Static;
  r.engine = "dmodk";
  r.emulated = true;
  r.source = "tests";
  r.lft.assign(f.switches().size(), std::vector<uint8_t>(top + 1, kNoPort));
  for (NodeId s : f.switches()) r.lft[f.switch_index(s)][f.node(s).lid] = 0;
  auto port = [](int p) {
    if (p > 254) throw std::out_of_range("dmodk_tables: port " + std::to_string(p) + " does not fit an LFT entry");
    return static_cast<uint8_t>(p);
  };
  auto active = [&](LinkId e) { return f.link(e).kind == LinkKind::Cable && f.link(e).gbps() > 0; };
  for (NodeId leaf : f.switches()) {
    if (f.hosts_under(leaf).empty()) continue;
    // Hops from every switch down to this leaf.
    std::vector<int> dist(f.node_count(), -1);
    std::deque<NodeId> queue{leaf};
    dist[leaf] = 0;
    while (!queue.empty()) {
      NodeId a = queue.front();
      queue.pop_front();
      for (auto e : boost::make_iterator_range(boost::out_edges(a, g))) {
        NodeId b = f.peer(e, a);
        if (!active(e) || f.node(b).kind != NodeKind::Switch || dist[b] >= 0) continue;
        dist[b] = dist[a] + 1;
        queue.push_back(b);
      }
    }
    // Ports one hop closer to the leaf, per switch.
    std::vector<std::vector<int>> closer(f.switches().size());
    for (NodeId s : f.switches()) {
      if (s == leaf || dist[s] < 0) continue;
      auto& ports = closer[f.switch_index(s)];
      for (auto c : boost::make_iterator_range(boost::out_edges(s, g))) {
        NodeId p = f.peer(c, s);
        if (active(c) && f.node(p).kind == NodeKind::Switch && dist[p] == dist[s] - 1)
          ports.push_back(f.local_port(c, s));
      }
      std::sort(ports.begin(), ports.end());
    }
    size_t k = 0;
    for (auto e : boost::make_iterator_range(boost::out_edges(leaf, g))) {
      NodeId hca = f.peer(e, leaf);
      if (!active(e) || f.node(hca).kind != NodeKind::Hca || f.node(hca).lid == 0) continue;
      const uint32_t lid = f.node(hca).lid;
      r.lft[f.switch_index(leaf)][lid] = port(f.local_port(e, leaf));
      for (size_t s = 0; s < closer.size(); ++s)
        if (!closer[s].empty()) r.lft[s][lid] = port(closer[s][k % closer[s].size()]);
      ++k;
    }
  }
  return r;
}

}  // namespace topo::testing
