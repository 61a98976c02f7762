// The second stage of an estimate: the directed cables each flow of a
// traffic pattern (traffic.h) takes, as the fabric routes.
//
// - Adaptive (Fabric::routing() is adaptive): every flow spreads evenly
//   over all shortest up/down paths (paths.h), so a leaf's four uplinks each
//   take a quarter of it.
// - Static: a flow from a port follows its one path through the switches'
//   forwarding tables towards the receiving HCA port's base LID (NCCL uses
//   the base LID for every queue pair, so extra QPs add no path diversity).
//   The path from a leaf on depends only on the leaf and the receiver, so a
//   pattern walks each (leaf, receiving port) once.
// - ECMP (`ecmp:QPS`, fabric/routing.h): a flow is split into QPS equal
//   queue pairs and each QP takes one path: at every switch from the
//   sender's leaf on, the next cable is drawn uniformly among those on a
//   shortest up/down path (the cables adaptive routing spreads over), from a
//   generator seeded by the draw number, the flow's sending and receiving
//   ports and the QP's number. A crossing that sums several flows (AllToAll
//   sums per receiving port) is split into flows of Traffic::flow_bytes, each
//   hashed on its own. Averaged over draws, every cable carries what the
//   adaptive spread puts on it; a single draw is what one run sees.
//
// Loads are named by load key (PathIndex::trunk_key): a directed cable
// (routing/route.h directed_cable), or under adaptive routing a whole
// directed trunk between switches, whose cables the spread loads alike.
// per_cable() gives the same load cable by cable.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "comm_model/traffic.h"

namespace topo {

struct CableLoad {
  std::vector<std::pair<int, double>> bytes;  // (load key, bytes on each of its cables), ordered by key
  int max_switches = 0;                       // the most switches any flow passes; 0 before any crossing
  double flow_bytes = 1;                      // bytes of one flow (Traffic::flow_bytes): bytes / flow_bytes = flows

  double on(int key) const;  // 0 for a key no flow takes
};

// `load` with every trunk key written out as its cables: (directed cable,
// bytes), ordered by cable.
CableLoad per_cable(const PathIndex& index, const CableLoad& load);

// The cables `traffic` of allocation `al` loads. Throws FabricError when a
// receiving port cannot be reached: no up/down path (adaptive), or a hole,
// a dead port or a loop in the tables (static), naming the switch and the
// receiving host.
// `draw` picks the ECMP hash draw and `qps` (when above 0) replaces the
// routing's queue pairs per connection; other routings ignore both.
CableLoad route(const PathIndex& index, const Allocation& al, const Traffic& traffic, uint64_t draw = 0, int qps = 0);

}  // namespace topo
