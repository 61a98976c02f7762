// The route planner's working state (routing/job_routes.h): the ring flows
// it routes, each with its candidate up/down paths and the one chosen, and
// the flows per directed cable. Shared by the planner's passes inside the
// routing folder; nothing outside it uses these.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "fabric/fabric.h"

namespace topo::planner {

// The switch an HCA port is cabled to, and that cable; nullopt when none is
// Active.
struct Attachment {
  NodeId sw;
  LinkId cable;
};
std::optional<Attachment> attachment(const Fabric& f, NodeId hca);

// One ring flow: rank to next rank, one rail.
struct Flow {
  size_t job = 0;
  NodeId src = 0, dst = 0;  // HCA ports
  uint32_t lid = 0;
  NodeId src_leaf = 0, dst_leaf = 0;
  int src_cable = 0;  // directed, the source's own cable
};

// One hop of a candidate path: a switch's entry for the flow's LID.
struct Hop {
  int switch_index;
  uint8_t port;
  int cable;  // directed
};
using Path = std::vector<Hop>;

// The directed cables of `flow` on path `p`, the source's own cable first.
inline std::vector<int> cables_of(const Flow& flow, const Path& p) {
  std::vector<int> out{flow.src_cable};
  for (const Hop& h : p) out.push_back(h.cable);
  return out;
}

// How many flows one flow on a directed cable counts as: its tier's rate
// over its own.
inline double cable_weight(const Link& l) {
  const double own = l.gbps(), expected = l.expected.gbps();
  return own > 0 && expected > own ? expected / own : 1.0;
}

// Weighted flows and plain flow counts per directed cable.
struct Loads {
  std::vector<double> weighted;
  std::vector<int> flows;
  std::vector<double> weight;  // per directed cable
  explicit Loads(const Fabric& f) : weighted(2 * f.cables().size()), flows(weighted.size()), weight(weighted.size()) {
    for (size_t c = 0; c < f.cables().size(); ++c)
      weight[2 * c] = weight[2 * c + 1] = cable_weight(f.link(f.cables()[c]));
  }
  void add(const std::vector<int>& cables, int sign) {
    for (int c : cables) {
      weighted[c] += sign * weight[c];
      flows[c] += sign;
    }
  }
};

// A flow the planner routes: its candidates and the one chosen.
struct Planned {
  const Flow* flow;
  std::vector<Path> paths;
  std::vector<int> path_changes;  // entries each path changes from the base tables
  std::vector<int> base_cables;   // its walk on the base tables; empty when that fails
  int chosen = -1;                // -1: its base path

  std::vector<int> cables() const { return chosen >= 0 ? cables_of(*flow, paths[chosen]) : base_cables; }
  int changes() const { return chosen >= 0 ? path_changes[chosen] : 0; }
};

}  // namespace topo::planner
