// Forwarding tables built by hand for tests that need a static routing
// without any engine: every switch sends each destination LID towards it on
// a shortest path over Active cables, picking among the equal ports by the
// LID modulo their count (destination-mod-k, as a fat-tree's tables are).
#pragma once

#include <algorithm>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "topology/fabric.h"
#include "topology/routing.h"

namespace topo::testing {

inline Routing shortest_path_routing(const Fabric& f, std::string engine = "", std::string source = "hand-made") {
  Routing r;
  r.kind = RoutingKind::Static;
  r.engine = std::move(engine);
  r.source = std::move(source);
  uint32_t top = 0;
  for (NodeId v = 0; v < f.node_count(); ++v) top = std::max(top, f.node(v).lid);
  r.lft.assign(f.switches().size(), std::vector<uint8_t>(top + 1, kNoPort));
  constexpr int kFar = std::numeric_limits<int>::max();
  for (NodeId dest = 0; dest < f.node_count(); ++dest) {
    uint32_t lid = f.node(dest).lid;
    if (lid == 0) continue;
    // Hops from every node to `dest`, through switches only.
    std::vector<int> dist(f.node_count(), kFar);
    std::deque<NodeId> queue{dest};
    dist[dest] = 0;
    while (!queue.empty()) {
      NodeId at = queue.front();
      queue.pop_front();
      if (at != dest && f.node(at).kind != NodeKind::Switch) continue;
      for (auto e : boost::make_iterator_range(boost::out_edges(at, f.graph()))) {
        const Link& l = f.link(e);
        if (l.kind != LinkKind::Cable || l.state != PortState::Active) continue;
        NodeId next = f.peer(e, at);
        if (dist[next] == kFar) {
          dist[next] = dist[at] + 1;
          queue.push_back(next);
        }
      }
    }
    for (size_t s = 0; s < f.switches().size(); ++s) {
      NodeId sw = f.switches()[s];
      if (sw == dest) {
        r.lft[s][lid] = 0;
        continue;
      }
      if (dist[sw] == kFar) continue;
      std::vector<int> ports;
      for (auto e : boost::make_iterator_range(boost::out_edges(sw, f.graph()))) {
        const Link& l = f.link(e);
        if (l.kind == LinkKind::Cable && l.state == PortState::Active && dist[f.peer(e, sw)] == dist[sw] - 1)
          ports.push_back(f.local_port(e, sw));
      }
      std::sort(ports.begin(), ports.end());
      if (!ports.empty()) r.lft[s][lid] = static_cast<uint8_t>(ports[lid % ports.size()]);
    }
  }
  return r;
}

}  // namespace topo::testing
