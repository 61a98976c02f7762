#include "comm_model/ring_demand.h"

namespace topo {

RingDemand ring_demand(const PathIndex& index, std::span<const NodeId> ring, const Request& request, double duty,
                       const ModelOptions& options) {
  RingDemand out;
  out.alone_s = estimate(index, ring, request, {}, options).time_s;
  if (!out.paced()) return out;
  // Named: cables() refers into the load, which a temporary would free.
  const LinkLoad load = ring_load(index, ring, request);
  out.gbps.reserve(load.cables().size());
  // Summed in this order to the last bit: the placement breaks ties
  // between candidates on these figures.
  for (auto [cable, bytes] : load.cables()) out.gbps.emplace_back(cable, bytes * 8 / 1e9 / out.alone_s * duty);
  return out;
}

}  // namespace topo
