#include "placement/traffic.h"

#include <algorithm>
#include <map>

#include "comm_model/ring_demand.h"
#include "routing/route.h"

namespace topo {

std::vector<Request> profile_requests(Profile profile, double bytes, int gpus_per_host) {
  auto r = [&](Collective c) { return Request{c, bytes, Dtype::Bf16, std::max(1, gpus_per_host)}; };
  switch (profile) {
    case Profile::AllReduce:
      return {r(Collective::AllReduce)};
    case Profile::Fsdp:
      return {r(Collective::AllGather), r(Collective::ReduceScatter)};
    case Profile::AllToAll:
      return {r(Collective::AllToAll)};
    case Profile::Pipeline:
      return {r(Collective::Broadcast)};
    case Profile::Mixed:
      return {r(Collective::AllReduce), r(Collective::AllToAll)};
    case Profile::None:
      return {};
  }
  return {};
}

bool follows_ring(Profile profile) { return profile != Profile::AllToAll && profile != Profile::None; }

void switch_cables(const PathIndex& paths, NodeId from, NodeId to, std::vector<int>& out) {
  std::span<const PathIndex::Port> a = paths.ports(paths.host_index(from)), b = paths.ports(paths.host_index(to));
  thread_local std::vector<int> path;
  const size_t rails = std::min(a.size(), b.size());
  for (size_t r = 0; r < rails; ++r) {
    trace_static_cables(paths.fabric(), a[r].hca, b[r].hca, path);
    // The first cable is the source's own, the last (on a complete route) the
    // destination's. The rails' routes climb as high: room for all of them
    // at once, not a reallocation every few cables.
    if (r == 0 && path.size() > 2) out.reserve(out.size() + rails * (path.size() - 2));
    for (size_t i = 1; i + 1 < path.size(); ++i) out.push_back(path[i]);
  }
}

namespace {

std::vector<std::pair<int, double>> sorted(const std::map<int, double>& m) {
  std::vector<std::pair<int, double>> out;
  for (auto [c, v] : m)
    if (v > 0) out.emplace_back(c, v);
  return out;
}

// (from, to, weight) for every flow of one run of `c` over `ring`.
template <class F>
void each_flow(Collective c, std::span<const NodeId> ring, F&& f) {
  size_t n = ring.size();
  if (n < 2) return;
  if (c == Collective::AllToAll) {
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j)
        if (i != j) f(ring[i], ring[j], 1.0 / static_cast<double>(n - 1));
    return;
  }
  size_t edges = c == Collective::Broadcast ? n - 1 : n;
  for (size_t i = 0; i < edges; ++i) f(ring[i], ring[(i + 1) % n], 1.0);
}

}  // namespace

JobTraffic job_traffic(const SwitchTree& tree, const RunningJob& job, double bytes) {
  JobTraffic out;
  if (job.ring.size() < 2) return out;
  const Fabric& fabric = tree.fabric();
  std::vector<Request> requests = profile_requests(job.profile, bytes, job.gpus_per_host);
  if (requests.empty()) return out;
  const double each = job.duty / static_cast<double>(requests.size());
  std::map<int, double> gbps, flows;
  std::vector<int> cables;
  for (const Request& r : requests) {
    const RingDemand demand = ring_demand(tree.paths(), job.ring, r, each);
    if (!demand.paced()) continue;
    for (auto [cable, g] : demand.gbps) gbps[cable] += g;
    if (!fabric.routing().is_static()) continue;
    each_flow(r.collective, job.ring, [&](NodeId a, NodeId b, double w) {
      cables.clear();
      switch_cables(tree.paths(), a, b, cables);
      for (int c : cables) flows[c] += w * each;
    });
  }
  out.gbps = sorted(gbps);
  out.flows = sorted(flows);
  return out;
}

TrafficMap::TrafficMap(const Fabric& fabric)
    : gbps_(2 * fabric.cables().size(), 0.0), flows_(2 * fabric.cables().size(), 0.0) {}

void TrafficMap::apply(const JobTraffic& job, double sign) {
  for (auto [c, v] : job.gbps) gbps_[c] = std::max(0.0, gbps_[c] + sign * v);
  for (auto [c, v] : job.flows) flows_[c] = std::max(0.0, flows_[c] + sign * v);
}

void TrafficMap::write(const Fabric& fabric, FreeMap& free) const {
  free.load = BackgroundLoad{};
  for (size_t c = 0; c < gbps_.size(); ++c)
    if (gbps_[c] > 1e-9) add_directed(fabric, static_cast<int>(c), gbps_[c], free.load);
  free.cable_flows = flows_;
}

void fill_traffic(const SwitchTree& tree, FreeMap& free) {
  TrafficMap map(tree.fabric());
  for (const RunningJob& job : free.running) map.add(job_traffic(tree, job));
  map.write(tree.fabric(), free);
}

}  // namespace topo
