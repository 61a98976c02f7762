// Forwarding tables emulated from the rules of OpenSM's routing engines,
// for fabrics whose tables were not read (synthetic fabrics, topology.conf,
// what-ifs).
//
// Engines: "ftree" (OpenSM's fat-tree: destinations routed up through the
// least-loaded port group, down mirrored; destination-mod-k on a symmetric
// tree), "minhop" (every switch on its own: destinations in LID order, the
// min-hop port with the fewest routes so far, ties to the lowest port),
// "updn" (minhop restricted to up*/down* paths from the leaves' roots),
// "dfsssp". Which of them reproduce OpenSM's tables exactly, and on which
// shapes, is stated per engine in routing_engine.cc and checked against
// OpenSM under ibsim by the system tests.
#pragma once

#include <string_view>

#include "topology/fabric.h"

namespace topo {

// Tables for every switch of `fabric` by the rules of `engine`; the result
// is static, emulated, with that engine. Throws FabricError for an unknown
// engine or a fabric the engine cannot route (ftree on a non-tree).
Routing emulate_routing(const Fabric& fabric, std::string_view engine);

}  // namespace topo
