// The path one flow takes under static routing, walked through the
// switches' forwarding tables.
//
// A flow leaves its source HCA port on that port's cable, and every switch
// it reaches sends it out of the port its table gives for the destination's
// LID, until the destination is reached. The walk stops, and says why, at a
// table with no entry (a hole), a port with no Active cable, or a loop.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabric/fabric.h"

namespace topo {

// A cable in one direction, as a dense id: 2 * Link::id, plus 1 when
// traffic leaves Link::end_b. Per-direction tables are indexed by it.
inline int directed_cable(const Link& link, NodeId from) { return 2 * link.id + (from == link.end_a ? 0 : 1); }

struct RouteHop {
  NodeId from = 0;   // the switch or HCA the packet leaves
  int out_port = 0;  // by this port
  LinkId cable;      // on this cable
};

enum class RouteStatus : uint8_t {
  Ok,
  NoEntry,       // a switch's table has no port for the destination
  DeadPort,      // the table's port has no Active cable
  Loop,          // the walk passed more switches than the fabric has
  Misdelivered,  // the table led to another HCA than the destination
  NotRouted,     // the source or destination has no LID, or the fabric routes adaptively
};
std::string_view name(RouteStatus s);

struct StaticRoute {
  RouteStatus status = RouteStatus::Ok;
  std::vector<RouteHop> hops;  // the source's own cable first; on failure, as far as it went
  NodeId stuck_at = 0;         // the switch where a failed walk stopped
};

// The path from HCA port `source` to the switch or HCA port `destination`
// under fabric.routing(), which must be static (else NotRouted).
StaticRoute trace_static_route(const Fabric& fabric, NodeId source, NodeId destination);

// The same, appending only directed cable ids to `out` (cleared first); for
// hot loops. Returns the status.
RouteStatus trace_static_cables(const Fabric& fabric, NodeId source, NodeId destination, std::vector<int>& out);

}  // namespace topo
