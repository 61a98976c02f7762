// What is wrong with how a fabric routes: findings for `topoctl lint`.
#pragma once

#include <string>
#include <vector>

#include "fabric/fabric.h"

namespace topo {

enum class RoutingFindingKind : uint8_t {
  Unrouted,       // a host pair with no path (a hole in a table), or a dead port
  Loop,           // a destination whose walk loops
  OverShare,      // an up cable carrying more destinations than its share of the trunk
  DegradedRoute,  // destinations routed through a degraded cable at a full share
  SingleSpine,    // a leaf every other leaf enters through one spine only
};
std::string_view name(RoutingFindingKind k);

struct RoutingFinding {
  RoutingFindingKind kind;
  std::string subject;  // a cable "leaf01:9 -> spine01:3", a host, or "gpu001 -> gpu017"
  std::string detail;   // a sentence for the admin
};

// Nothing for an adaptive fabric. Walks every leaf-to-destination route once.
std::vector<RoutingFinding> check_routing(const Fabric& fabric);

}  // namespace topo
