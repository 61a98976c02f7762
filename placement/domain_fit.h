// Placement into NVLink domains (fabric/nvlink_domain.h), before the leaf
// search: which domains a job gets, then the leaf search (search.h) inside
// each for the hosts and their order.
//
// - Segments (`--network=topo-aware,segment=N`, Slurm's --segment): every N
//   consecutive hosts of the ring inside one domain, or the job waits, with
//   the reason. The job's host count must be a multiple of N.
// - A job that fits in one domain gets one: best fit, the domain it leaves
//   the fewest free hosts in, so whole domains stay free for large jobs; on
//   a tie the one whose leaves' uplinks are least loaded.
//   When no domain has room now it takes hosts outside every domain if
//   enough are free, else it waits (an infeasible placement saying why)
//   rather than split over the remnants of several domains.
// - A larger job takes whole free domains where it can, the least loaded
//   first (the uplinks of their leaves carry the least of the running jobs'
//   traffic, so the cross-domain ring crosses the fewest loaded uplinks),
//   then the rest from the domain it fits best; with segments, each domain
//   gives whole segments.
// - The ring visits a domain's hosts one after another (a segment's hosts
//   are consecutive) before it leaves the domain. Without segments, where
//   it leaves one domain and enters the next is chosen against the running
//   jobs' flows under static routing, as the leaf search chooses its seams.
// - A job that asks for no NVLink (no GPUs, or PlacementRequest::nvlink
//   off) goes to hosts outside every domain when enough are free, else to
//   the domains with the fewest free hosts first (the most fragmented): a
//   preference, never a refusal.
// A job the domains cannot hold without segments falls back to the leaf
// search over every eligible host.
#pragma once

#include <optional>
#include <vector>

#include "placement/search.h"

namespace topo {

// Free whole domains and the largest free block after a decision: what
// `place --json`, the simulator and the metrics report.
struct Fragmentation {
  int domains = 0;
  int free_whole_domains = 0;  // every counted host of the domain free
  int largest_free_block = 0;  // most free hosts in one domain
  int free_hosts_in_domains = 0;
};
// A host is free when it has all its GPUs free (any when the fabric does
// not know its GPUs) and is not avoided.
Fragmentation fragmentation(const Fabric& fabric, const FreeMap& free);

// Whether `place` sends the request through the domains: the fabric has
// them and the request is for whole hosts.
bool uses_domains(const SwitchTree& tree, const PlacementRequest& request);

// The best `count` placements through the domains (see above), or one
// infeasible placement with the reason; nullopt when the leaf search over
// every host should decide (a job without segments the domains cannot
// hold). `kept`: the seam search's routes kept across decisions (seams.h),
// for the seams of a ring over several domains; null: routed afresh.
std::optional<std::vector<Placement>> rank_in_domains(const SwitchTree& tree, const FreeMap& free,
                                                      const PlacementRequest& request, int count,
                                                      const SearchOptions& options, SeamRoutes* kept = nullptr);

}  // namespace topo
