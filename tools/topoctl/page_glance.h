// The first screen of `topoctl serve`: cards that say how the cluster is
// at a glance (hosts and GPUs, running jobs, faults, the snapshot and what
// changed, the fabric and its routing, counters, NVLink domains), each
// linking to the page that says more. Pure: the facts are gathered by the
// server and handed over as values.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "db/placement_store.h"
#include "db/snapshot_store.h"
#include "fabric/diff.h"
#include "fabric/fabric.h"
#include "tools/view/page_parts.h"

namespace topoctl {

// Above this estimate over ideal a running job counts as slow.
inline constexpr double kSlowJob = 1.10;

struct Glance {
  const topo::Fabric* fabric = nullptr;  // the snapshot's
  topo::SnapshotInfo info;
  std::optional<int64_t> previous;          // the snapshot before, when any
  std::vector<topo::FabricChange> changes;  // from `previous` to this one
  std::vector<topo::PlacementRecord> running;
  size_t routing_findings = 0;
  // Counters between the last two collections; nullopt: fewer than two.
  std::optional<size_t> rated, sick_rated;
  double now_s = 0;  // seconds since the epoch
};

std::vector<topo::view::Card> glance_cards(const Glance& g);

// "12 s", "5 min", "3 h", "2 days": how long ago, coarse.
std::string age_text(double seconds);

}  // namespace topoctl
