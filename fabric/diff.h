// What changed between two fabrics: the answer to "what broke since
// yesterday's snapshot?".
//
// Nodes are matched by id (GUID-based for InfiniBand, names for synthetic
// and topology.conf fabrics), hosts by name, and cables by their two ends,
// each a (node id, port). A cable present in both fabrics is compared for
// rate and port state; a switch present in both for its level.
//
// The links of a switch or host that is gone (or new) are not listed one by
// one: the switch or host change says it. A lone HCA that disappears from a
// host that stays is reported through its cable going.
//
// Routing: a change of kind or engine ("adaptive" to "static:ftree", or
// emulated tables replaced by read ones) is one change. When both fabrics
// route statically, each switch present in both is compared destination by
// destination: an HCA port present in both (matched by id, so a LID that
// changed is no route change by itself) whose out port differs is a moved
// route, and a switch with any is one change listing them. Switch LIDs are
// not compared: no flow of a job ends at a switch.
//
// NVLink domains: a host present in both whose counted domain changed
// (nvlink_domain.h: a faulty host counts in none) left its domain, and
// joined the new one when it has one; domains are matched by their key.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/fabric.h"

namespace topo {

enum class ChangeKind : uint8_t {
  HostAdded,
  HostGone,
  SwitchAdded,
  SwitchGone,
  SwitchLevelChanged,  // e.g. a spine that lost its leaves' links became unreachable
  LinkAdded,
  LinkGone,          // unplugged, or both ends no longer see each other
  LinkSlower,        // width narrowed or speed dropped
  LinkFaster,        // restored, or upgraded
  LinkStateChanged,  // port state, e.g. Active -> Down
  RoutingChanged,    // adaptive <-> static, another engine, or read tables for emulated ones
  RoutesChanged,     // a switch sends some destinations out of another port
  HostLeftDomain,    // counted in an NVLink domain before, in none or another after
  HostJoinedDomain,  // counts in an NVLink domain it was not in before
};

// One destination a switch forwards differently. A port of -1 is no path.
struct RouteMove {
  std::string destination;  // the HCA port's description, "gpu017 mlx5_0"
  int before_port = -1;
  int after_port = -1;
};

struct FabricChange {
  ChangeKind kind;
  std::string subject;                 // host or switch name, or "leaf02:9 <-> spine01:3"
  std::string detail;                  // a sentence for the admin
  std::vector<RouteMove> routes = {};  // RoutesChanged: every destination that moved, in LID order
};

std::string_view name(ChangeKind k);  // "link_gone"

// Pure: the changes that turn `before` into `after`, hosts first (with their
// NVLink domains), then switches, then links, then routing; within each, in the fabrics' own
// order. Identical fabrics give an empty list.
std::vector<FabricChange> diff(const Fabric& before, const Fabric& after);

}  // namespace topo
