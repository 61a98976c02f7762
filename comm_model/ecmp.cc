#include "comm_model/ecmp.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace topo {

EcmpSpread summarize_draws(std::vector<double> times, double even_s) {
  if (times.empty()) throw std::invalid_argument("no ECMP draws to sum up");
  std::sort(times.begin(), times.end());
  EcmpSpread s;
  s.draws = static_cast<int>(times.size());
  s.mean_s = std::accumulate(times.begin(), times.end(), 0.0) / s.draws;
  size_t rank = static_cast<size_t>(std::ceil(0.95 * s.draws));
  s.p95_s = times[std::max<size_t>(rank, 1) - 1];
  s.best_s = times.front();
  s.worst_s = times.back();
  s.even_s = even_s;
  long slower = std::count_if(times.begin(), times.end(), [&](double t) { return t > even_s * 1.001; });
  s.collision_probability = static_cast<double>(slower) / s.draws;
  return s;
}

EcmpSpread estimate_ecmp(const PathIndex& index, std::span<const NodeId> hosts, const Request& request, int draws,
                         const BackgroundLoad& background, const ModelOptions& options) {
  if (!index.fabric().routing().is_ecmp())
    throw std::invalid_argument("the fabric routes " + routing_name(index.fabric().routing()) + ", not by ECMP");
  if (draws < 1) throw std::invalid_argument("ECMP needs at least one draw");
  std::vector<double> times;
  ModelOptions o = options;
  for (int d = 0; d < draws; ++d) {
    o.ecmp_draw = static_cast<uint64_t>(d);
    times.push_back(estimate(index, hosts, request, background, o).time_s);
  }
  Fabric even = index.fabric();
  even.set_routing(Routing{});
  PathIndex even_index(even);
  return summarize_draws(std::move(times), estimate(even_index, hosts, request, background, options).time_s);
}

}  // namespace topo
