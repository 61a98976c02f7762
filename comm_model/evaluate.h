// The estimate pipeline's composition, shared by estimate() and the
// neighbours (internal to comm_model).
#pragma once

#include <span>
#include <utility>
#include <vector>

#include "comm_model/estimate.h"
#include "comm_model/sharing.h"

namespace topo::detail {

struct Evaluation {
  Estimate estimate;
  // The chosen candidate's flows per load key (routes.h), and its pace alone:
  // the rate one of its flows runs at, and the network part of its time.
  std::vector<std::pair<int, double>> flows;
  double alone_flow_gbps = 0;
  double alone_net_s = 0;
};

// traffic (traffic.h) -> routes (routes.h) -> sharing with `neighbours`
// (sharing.h) -> time (time.h), for every algorithm and protocol in play;
// the fastest wins. Throws like estimate().
Evaluation evaluate(const PathIndex& index, std::span<const NodeId> hosts, const Request& request,
                    const BackgroundLoad& background, std::span<const Sharer> neighbours, const ModelOptions& options);

}  // namespace topo::detail
