#include "routing/route.h"

namespace topo {

std::string_view name(RouteStatus s) {
  switch (s) {
    case RouteStatus::Ok:
      return "ok";
    case RouteStatus::NoEntry:
      return "no table entry";
    case RouteStatus::DeadPort:
      return "port without an active cable";
    case RouteStatus::Loop:
      return "loop";
    case RouteStatus::Misdelivered:
      return "delivered to another HCA";
    case RouteStatus::NotRouted:
      return "not routed";
  }
  return "?";
}

namespace {

// Walks the tables, handing each hop and its cable to `visit`. The bound
// on hops is the switch count: a loop-free route passes each switch at most
// once. Each hop reads the dense index (the cable on a port, the switch
// index of a node) rather than the graph's nodes: a path is a handful of
// hops, and an estimate walks thousands of paths.
template <typename Visit>
RouteStatus walk(const Fabric& fabric, NodeId source, NodeId destination, NodeId& stuck_at, Visit&& visit) {
  const Routing& routing = fabric.routing();
  uint32_t lid = fabric.node(destination).lid;
  if (!routing.is_static() || lid == 0 || fabric.node(source).lid == 0) return RouteStatus::NotRouted;
  NodeId at = source;
  int at_switch = fabric.switch_index(at);
  // An HCA port leaves on its one cable; a switch starts at its own table.
  int port = -1;
  if (at_switch < 0) {
    for (auto e : boost::make_iterator_range(boost::out_edges(source, fabric.graph())))
      if (fabric.link(e).kind == LinkKind::Cable) port = fabric.local_port(e, source);
    if (port < 0) {
      stuck_at = source;
      return RouteStatus::DeadPort;
    }
  }
  const FabricIndex& index = fabric.index();
  size_t budget = fabric.switches().size() + 1;
  while (at != destination) {
    if (port < 0) {
      uint8_t p = routing.out_port(static_cast<size_t>(at_switch), lid);
      if (p == kNoPort) {
        stuck_at = at;
        return RouteStatus::NoEntry;
      }
      if (p == 0) break;  // the destination is this switch
      port = p;
    }
    const int id = index.cable_at(at, port);
    if (id < 0 || fabric.link(fabric.cables()[static_cast<size_t>(id)]).state != PortState::Active) {
      stuck_at = at;
      return RouteStatus::DeadPort;
    }
    const LinkId cable = fabric.cables()[static_cast<size_t>(id)];
    const Link& link = fabric.link(cable);
    visit(RouteHop{at, port, cable}, link);
    at = link.end_a == at ? link.end_b : link.end_a;
    at_switch = fabric.switch_index(at);
    if (at_switch < 0) {
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
                      [&](const RouteHop& hop, const Link&) { route.hops.push_back(hop); });
  return route;
}

RouteStatus trace_static_cables(const Fabric& fabric, NodeId source, NodeId destination, std::vector<int>& out) {
  out.clear();
  NodeId stuck = 0;
  return walk(fabric, source, destination, stuck,
              [&](const RouteHop& hop, const Link& link) { out.push_back(directed_cable(link, hop.from)); });
}

}  // namespace topo
