// What ECMP hashing costs a collective: the spread over hash draws.
//
// Under `ecmp:QPS` routing (fabric/routing.h) each queue pair keeps the
// one path the switches' hash gives it, so a run's time depends on where
// the hash put its QPs: two QPs on one uplink while another stays idle is a
// collision, and the collective goes at the pace of its most loaded cable.
// routes.h draws the hash; here the collective is estimated once per draw
// (draws 0..N-1, each a run of the job) and the times are summed up against
// the even spread, which is adaptive routing's estimate on the same fabric
// and what ECMP gives in expectation per cable (but not per run).
#pragma once

#include <span>
#include <vector>

#include "comm_model/estimate.h"

namespace topo {

struct EcmpSpread {
  int draws = 0;
  double mean_s = 0;  // expected time over the draws
  double p95_s = 0;   // 95th percentile (nearest rank)
  double best_s = 0;
  double worst_s = 0;
  double even_s = 0;  // the even spread's time (adaptive routing)
  // Share of draws slower than the even spread (by more than 0.1%): how
  // often the hash makes QPs collide on a cable that sets the pace.
  double collision_probability = 0;
};

// Sums up per-draw times against the even spread's. Throws
// std::invalid_argument when `times` is empty.
EcmpSpread summarize_draws(std::vector<double> times, double even_s);

// The collective on `hosts` (ring order) under the index's ECMP routing,
// estimated for `draws` draws, and under adaptive routing for the even
// spread. Throws std::invalid_argument when the fabric does not route by
// ECMP or draws < 1, and whatever estimate() throws.
EcmpSpread estimate_ecmp(const PathIndex& index, std::span<const NodeId> hosts, const Request& request, int draws,
                         const BackgroundLoad& background = {}, const ModelOptions& options = {});

}  // namespace topo
