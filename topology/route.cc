#include "topology/route.h"

namespace topo {

std::string_view name(RouteStatus s) {
  switch (s) {
    case RouteStatus::Ok: return "ok";
    case RouteStatus::NoEntry: return "no table entry";
    case RouteStatus::DeadPort: return "port without an active cable";
    case RouteStatus::Loop: return "loop";
    case RouteStatus::Misdelivered: return "delivered to another HCA";
    case RouteStatus::NotRouted: return "not routed";
  }
  return "?";
}

namespace {

// Walks the tables, handing each hop to `visit`. The bound on hops is the
// switch count: a loop-free route passes each switch at most once.
template <typename Visit>
RouteStatus walk(const Fabric& fabric, NodeId source, NodeId destination, NodeId& stuck_at, Visit&& visit) {
  const Routing& routing = fabric.routing();
  uint32_t lid = fabric.node(destination).lid;
  if (!routing.is_static() || lid == 0 || fabric.node(source).lid == 0) return RouteStatus::NotRouted;
  NodeId at = source;
  // An HCA port leaves on its one cable; a switch starts at its own table.
  int port = -1;
  if (fabric.node(source).kind != NodeKind::Switch) {
    for (auto e : boost::make_iterator_range(boost::out_edges(source, fabric.graph())))
      if (fabric.link(e).kind == LinkKind::Cable) port = fabric.local_port(e, source);
    if (port < 0) {
      stuck_at = source;
      return RouteStatus::DeadPort;
    }
  }
  size_t budget = fabric.switches().size() + 1;
  while (at != destination) {
    if (port < 0) {
      int s = fabric.switch_index(at);
      uint8_t p = routing.out_port(static_cast<size_t>(s), lid);
      if (p == kNoPort) {
        stuck_at = at;
        return RouteStatus::NoEntry;
      }
      if (p == 0) break;  // the destination is this switch
      port = p;
    }
    auto cable = fabric.cable_at(at, port);
    if (!cable || fabric.link(*cable).state != PortState::Active) {
      stuck_at = at;
      return RouteStatus::DeadPort;
    }
    visit(RouteHop{at, port, *cable});
    at = fabric.peer(*cable, at);
    if (fabric.node(at).kind != NodeKind::Switch) {
      if (at == destination) break;
      stuck_at = at;
      return RouteStatus::Misdelivered;
    }
    if (budget-- == 0) {
      stuck_at = at;
      return RouteStatus::Loop;
    }
    port = -1;
  }
  return RouteStatus::Ok;
}

}  // namespace

StaticRoute trace_static_route(const Fabric& fabric, NodeId source, NodeId destination) {
  StaticRoute route;
  route.status = walk(fabric, source, destination, route.stuck_at,
                      [&](const RouteHop& hop) { route.hops.push_back(hop); });
  return route;
}

RouteStatus trace_static_cables(const Fabric& fabric, NodeId source, NodeId destination, std::vector<int>& out) {
  out.clear();
  NodeId stuck = 0;
  return walk(fabric, source, destination, stuck,
              [&](const RouteHop& hop) { out.push_back(directed_cable(fabric.link(hop.cable), hop.from)); });
}

}  // namespace topo
