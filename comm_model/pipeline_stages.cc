#include "comm_model/pipeline_stages.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "comm_model/routes.h"
#include "comm_model/sharing.h"
#include "comm_model/traffic.h"

namespace topo {
namespace {

using Pairs = std::vector<std::pair<int, int>>;  // (sending, receiving) positions in the hosts

double seconds_at(double bytes, double gbps) {
  return gbps > 0 ? bytes * 8 / (gbps * 1e9) : std::numeric_limits<double>::infinity();
}

void check(const PipelineRequest& r, size_t hosts, const DomainModelOptions& o) {
  if (r.stages < 1) throw std::invalid_argument(fmt::format("{} pipeline stages: need at least one", r.stages));
  if (hosts % static_cast<size_t>(r.stages) != 0)
    throw std::invalid_argument(fmt::format("{} pipeline stages do not divide the {} hosts", r.stages, hosts));
  if (!(std::isfinite(r.activation_bytes) && r.activation_bytes > 0))
    throw std::invalid_argument(fmt::format("activation size {} bytes: must be positive", r.activation_bytes));
  if (r.gpus_per_host < 1) throw std::invalid_argument("gpus_per_host must be at least 1");
  if (!(o.nvlink_efficiency > 0 && o.nvlink_efficiency <= 1))
    throw std::invalid_argument("nvlink_efficiency must be in (0, 1]");
}

// One way of one boundary over the network.
struct NetworkWay {
  double seconds = 0;
  double gbps_per_gpu = 0;
  std::string bottleneck;
  std::vector<int> keys;  // the load keys its flows take, in order
  bool running = false;   // one of them carries background load
};

// The name of the directed cable behind load key `key`.
std::string cable_name(const PathIndex& index, const CableRoom& room, int key) {
  const Fabric& f = index.fabric();
  const int d = room.cable_of(key);
  const LinkId cable = f.cables()[static_cast<size_t>(d / 2)];
  return index.describe(cable, d % 2 == 0 ? f.link(cable).end_a : f.link(cable).end_b);
}

// Every boundary's network pairs of one way, sending at the same time:
// each boundary a sharer whose flows advance together, max-min fair with
// the others and beside the background load.
std::vector<NetworkWay> price_network(const PathIndex& index, const Allocation& al, const std::vector<Pairs>& pairs,
                                      const PipelineRequest& r, const BackgroundLoad& background,
                                      const DomainModelOptions& o) {
  const CableRoom room(index, background, o.model.network_efficiency);
  const CableRoom bare(index, BackgroundLoad(), o.model.network_efficiency);
  std::vector<NetworkWay> out(pairs.size());
  std::vector<std::vector<std::pair<int, double>>> flows(pairs.size());
  std::vector<int> switches(pairs.size(), 0), sharing;
  std::vector<Sharer> sharers;
  for (size_t b = 0; b < pairs.size(); ++b) {
    if (pairs[b].empty()) continue;
    // A host's flow of one unit: a lane carrying g of its G GPUs is g/G flows.
    CableLoad load = route(index, al, pair_traffic(index, al, pairs[b], 1.0), o.model.ecmp_draw, o.model.ecmp_qps);
    switches[b] = load.max_switches;
    flows[b] = flows_of(std::move(load.bytes), load.flow_bytes);
    sharers.push_back(Sharer{flows[b]});
    sharing.push_back(static_cast<int>(b));
  }
  const std::vector<Share> shares = share_max_min(sharers, room);
  for (size_t s = 0; s < shares.size(); ++s) {
    NetworkWay& w = out[static_cast<size_t>(sharing[s])];
    const auto& own = flows[static_cast<size_t>(sharing[s])];
    w.gbps_per_gpu = shares[s].flow_gbps / r.gpus_per_host;
    w.seconds = seconds_at(r.activation_bytes, w.gbps_per_gpu) +
                switches[static_cast<size_t>(sharing[s])] * o.model.switch_latency_us * 1e-6;
    if (shares[s].limit >= 0) w.bottleneck = cable_name(index, room, shares[s].limit);
    for (const auto& [key, n] : own) {
      w.keys.push_back(key);
      if (room.gbps(key) < bare.gbps(key)) w.running = true;
    }
  }
  return out;
}

bool meet(const std::vector<int>& a, const std::vector<int>& b) {
  auto i = a.begin(), j = b.begin();
  while (i != a.end() && j != b.end()) {
    if (*i == *j) return true;
    *i < *j ? ++i : ++j;
  }
  return false;
}

// Which boundaries share a directed cable with boundary `i`, either way.
std::vector<int> sharing_with(size_t i, const std::vector<NetworkWay>& fw, const std::vector<NetworkWay>& bw) {
  std::vector<int> out;
  for (size_t j = 0; j < fw.size(); ++j)
    if (j != i && (meet(fw[i].keys, fw[j].keys) || meet(bw[i].keys, bw[j].keys))) out.push_back(static_cast<int>(j));
  return out;
}

}  // namespace

std::string_view name(BoundaryTier tier) {
  switch (tier) {
    case BoundaryTier::NvLink:
      return "nvlink";
    case BoundaryTier::Network:
      return "network";
    default:
      return "mixed";
  }
}

PipelineEstimate estimate_pipeline(const PathIndex& index, std::span<const NodeId> hosts,
                                   const PipelineRequest& request, const BackgroundLoad& background,
                                   const DomainModelOptions& options) {
  check(request, hosts.size(), options);
  const Fabric& f = index.fabric();
  PipelineEstimate out;
  out.stages = request.stages;
  out.hosts_per_stage = static_cast<int>(hosts.size()) / request.stages;
  out.gpus_per_host = request.gpus_per_host;
  out.activation_bytes = request.activation_bytes;
  out.nvlink_gbps = nvlink_gbps(f, options);
  const Allocation al = allocate(index, hosts, request.gpus_per_host);  // refuses a host listed twice
  const int h = out.hosts_per_stage, boundaries = request.stages - 1;
  std::vector<Pairs> forward(static_cast<size_t>(boundaries)), backward(forward.size());
  std::vector<int> nvlink_pairs(forward.size(), 0);
  auto domain = [&](int i) { return f.domains().domain_of(f.index().host_id(hosts[static_cast<size_t>(i)])); };
  for (int b = 0; b < boundaries; ++b)
    for (int k = 0; k < h; ++k) {
      const int from = b * h + k, to = from + h;
      if (domain(from) >= 0 && domain(from) == domain(to)) {
        ++nvlink_pairs[static_cast<size_t>(b)];
      } else {
        forward[static_cast<size_t>(b)].emplace_back(from, to);
        backward[static_cast<size_t>(b)].emplace_back(to, from);
      }
    }
  const std::vector<NetworkWay> fw = price_network(index, al, forward, request, background, options);
  const std::vector<NetworkWay> bw = price_network(index, al, backward, request, background, options);
  const double nvlink_one = seconds_at(request.activation_bytes, out.nvlink_gbps) + options.nvlink_step_us * 1e-6;
  for (size_t b = 0; b < forward.size(); ++b) {
    StageBoundary s;
    s.from_stage = static_cast<int>(b);
    s.pairs = h;
    s.network_pairs = static_cast<int>(forward[b].size());
    s.tier = s.network_pairs == 0   ? BoundaryTier::NvLink
             : s.network_pairs == h ? BoundaryTier::Network
                                    : BoundaryTier::Mixed;
    s.bytes = 2.0 * request.activation_bytes * request.gpus_per_host * h;
    s.nvlink_s = nvlink_pairs[b] > 0 ? nvlink_one : 0;
    s.forward_s = std::max(s.nvlink_s, fw[b].seconds);
    s.backward_s = std::max(s.nvlink_s, bw[b].seconds);
    s.seconds = s.forward_s + s.backward_s;
    const bool slow_back = bw[b].seconds > fw[b].seconds;
    s.network_gbps_per_gpu = slow_back ? bw[b].gbps_per_gpu : fw[b].gbps_per_gpu;
    s.bottleneck = std::max(fw[b].seconds, bw[b].seconds) > s.nvlink_s ? (slow_back ? bw[b] : fw[b]).bottleneck
                   : s.nvlink_s > 0                                    ? "NVLink"
                                                                       : "";
    s.shares_with = sharing_with(b, fw, bw);
    s.shares_with_running = fw[b].running || bw[b].running;
    out.bytes += s.bytes;
    out.seconds += s.seconds;
    out.boundaries.push_back(std::move(s));
  }
  return out;
}

}  // namespace topo
