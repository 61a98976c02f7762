// Forwarding tables emulated from the rules of OpenSM's routing engines
// (OpenSM 3.3), for fabrics whose tables were not read: synthetic fabrics,
// topology.conf, what-ifs.
//
// Exact means: given the fabric's LIDs and GUIDs, every entry of every
// switch's table is the one OpenSM 3.3 writes. Checked against OpenSM under
// ibsim (tests/system/opensm_routing_test.cc, the fabric discovered live so
// that its LIDs and GUIDs are the subnet's) on two-level leaf/spine (2 and
// 3 spines, 2:1), three-level clos3 and k=4 fat tree, rail-optimized, a
// leaf/spine with a degraded uplink and a 4 x 8 one whose leaf03 uplinks
// all run at 1x (link width changed no port choice of OpenSM's there: the
// emulation, which never reads width, equals it), and on a CA cabled to two leaves
// (tests/fixtures/routing). A synthetic fabric's LIDs are numbered by
// FabricBuilder::finish(), not as a subnet manager would number them, so
// its emulated tables are OpenSM's for those LIDs: the same rules and the
// same balance, not the same destination-to-cable assignment as a live
// subnet built from that fabric.
//
// minhop (OpenSM's default; osm_ucast_mgr.c, osm_switch.c): destinations
//   are CA ports taken switch by switch (switches with the most CA ports
//   first, ties in OpenSM's switch-table order: GUIDs in network byte
//   order), each switch's ports in port order. Every switch, on its own,
//   sends a destination out of the min-hop port (hops to the destination's
//   leaf, over Active cables) that carries the fewest CA destinations so
//   far, ties to the lowest port. Switch LIDs take the same rule after all
//   CAs and count for nothing. EXACT on the shapes above.
// updn (osm_ucast_updn.c): minhop over hop counts restricted to up*/down*
//   paths. Roots are found as OpenSM does (switches that see over 90% of
//   the CAs at one hop distance and no other distance over 5%), ranks by
//   BFS from them, equal ranks ordered by GUID; the BFS keeps the direction
//   each switch was first reached in, as OpenSM's does. Without roots
//   OpenSM falls back to minhop, and so does this. EXACT on the shapes
//   above (on fat trees it equals minhop for CA LIDs; spine-to-spine LIDs
//   have no path, as in OpenSM).
// ftree (osm_ucast_ftree.c): switches indexed by OpenSM's fat-tree tuples
//   (a BFS from the first leaf in switch-table order); leaves in tuple
//   order, each leaf's CAs in port order; a destination climbs through the
//   up port group with the fewest downward routes (ties: lowest tuple) and
//   its least-loaded port; every switch on the way sends it down, every
//   switch below routes it up through the least-loaded port of its group
//   (upward counters); groups not on the main path get their least-loaded
//   port without counting. Leaves with fewer CAs than the fullest route
//   dummy destinations, and switch LIDs are routed afterwards off the main
//   paths, both as OpenSM does. EXACT on the shapes above, all of them
//   symmetric; the dummy routes of uneven leaves follow OpenSM's code but
//   were not checked against it. Not emulated: OpenSM's options (root or
//   CN GUID files, IO nodes, quasi-fat-tree indexing, reverse hops), and
//   sibling links between switches of one rank, which this ignores.
//   Refuses (FabricError) a fabric that is not a tree of leaves under roots.
// dfsssp: not emulated. Its tables come from Dijkstra over edge weights
//   updated after every destination, then virtual-lane assignment to break
//   cycles; emulate_routing throws FabricError saying so. Read OpenSM's own
//   tables instead (opensm_lfts.h, or read_lfts_live in ibnetdisc.h).
#pragma once

#include <string_view>

#include "fabric/fabric.h"

namespace topo {

// Tables for every switch of `fabric` by the rules of `engine`; the result
// is static, emulated, with that engine, its source "emulated". Throws
// FabricError for an unknown engine, for "dfsssp", and for a fabric the
// engine cannot route (ftree on a non-tree) and for a switch cabled on a
// port above 254, which no LFT entry can name.
Routing emulate_routing(const Fabric& fabric, std::string_view engine);

}  // namespace topo
