// Forwarding tables emulated from the rules of OpenSM's routing engines
// (OpenSM 3.3), for fabrics whose tables were not read: synthetic fabrics,
// topology.conf, what-ifs.
//
// minhop (OpenSM's default; osm_ucast_mgr.c, osm_switch.c):
//   Destinations are CA ports taken switch by switch (switches with the
//   most CA ports first, ties in OpenSM's GUID-table order), each switch's
//   ports in port order. Every switch, on its own, sends a destination out
//   of the min-hop port (hops to the destination's leaf, over Active
//   cables) that carries the fewest CA destinations so far, ties to the
//   lowest port. Switch LIDs take the same rule after all CAs and count for
//   nothing. EXACT: on every shape the rules are reproduced, so tables equal
//   OpenSM's entry for entry whenever the fabric's LIDs and GUIDs are the
//   subnet's (checked under ibsim: two- and three-level, rail-optimized,
//   degraded). Synthetic fabrics have GUIDs 1..N and LIDs numbered by
//   FabricBuilder::finish(); OpenSM under ibsim numbers LIDs otherwise, so
//   the tables differ in which destination goes where, not in how many.
// updn (osm_ucast_updn.c): minhop over hop counts restricted to up*/down*
//   paths; roots are found as OpenSM does (switches that see over 90% of
//   the CAs at one hop distance and no other distance over 5%), ranks by
//   BFS from them, equal ranks ordered by GUID. Without roots OpenSM falls
//   back to minhop, and so does this. EXACT on the same terms as minhop. On
//   fat trees every min-hop path is already up*/down*, so updn = minhop.
// ftree (osm_ucast_ftree.c): leaves in index order, each leaf's CA ports in
//   port order; a destination climbs from its leaf through the up port
//   group with the fewest downward routes (ties: the lowest switch index),
//   the least-loaded port in that group; every switch on the way sends it down
//   towards the leaf, and every switch below routes it up through the
//   least-loaded port of its group (upward counters). Switches off the
//   main path get the first port of each group; switch LIDs go by min hop.
//   APPROXIMATE: OpenSM indexes switches by fat-tree tuples from its own
//   BFS, here by their order in Fabric::switches(), and leaves with fewer
//   CAs than the fullest get no dummy routes. On symmetric trees (every
//   leaf alike) this is destination-mod-k: each leaf's uplinks carry equal
//   shares, as OpenSM's do; which destination takes which uplink may
//   differ from OpenSM's by a rotation. Refuses (FabricError) a fabric
//   that is not a tree of leaves under roots (a switch with no path up).
// dfsssp: not emulated. Its tables come from Dijkstra over edge weights
//   updated after every destination plus virtual-lane deadlock removal;
//   emulate_routing throws FabricError saying so. Read OpenSM's own tables
//   instead (opensm_lfts.h, or live).
#pragma once

#include <string_view>

#include "topology/fabric.h"

namespace topo {

// Tables for every switch of `fabric` by the rules of `engine`; the result
// is static, emulated, with that engine, its source "emulated". Throws
// FabricError for an unknown engine, for "dfsssp", and for a fabric the
// engine cannot route (ftree on a non-tree).
Routing emulate_routing(const Fabric& fabric, std::string_view engine);

}  // namespace topo
