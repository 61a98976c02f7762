#include "comm_model/domain_tier.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include "comm_model/traffic.h"

namespace topo {
namespace {

constexpr double kBitsPerByte = 8;

// Seconds to move `bytes` at `gbps`.
double seconds(double bytes, double gbps) {
  return gbps > 0 ? bytes * kBitsPerByte / (gbps * 1e9) : std::numeric_limits<double>::infinity();
}

// Ring steps of the collective over `n` ranks.
int ring_steps(Collective c, int n) { return c == Collective::AllReduce ? 2 * (n - 1) : n - 1; }

// The whole collective over NVLink inside one group of `n` ranks.
void inside_one(const Request& r, int n, double gbps, const DomainModelOptions& o, DomainEstimate& out) {
  out.nvlink_s = nvlink_time_s(r, n, gbps, o);
  out.estimate.time_s = out.nvlink_s;
  out.estimate.latency_s = ring_steps(r.collective, n) * o.nvlink_step_us * 1e-6;
  out.estimate.ideal_time_s = out.estimate.alone_time_s = out.nvlink_s;
  out.estimate.bottleneck.where = Bottleneck::Where::NvLink;
  out.estimate.bottleneck.name = "NVLink";
  out.estimate.bottleneck.gbps = gbps;
}

// Bytes each GPU moves in the network phase, of a shard 1/m of the buffer.
double network_share(Collective c, int groups, int m, double bytes) {
  double shard = bytes / m;
  switch (c) {
    case Collective::AllReduce:
      return 2.0 * (groups - 1) / groups * shard;
    case Collective::Broadcast:
      return bytes;
    default:
      return 1.0 * (groups - 1) / groups * shard;
  }
}

// NVLink phases around the network one: reduce-scatter and all-gather for
// AllReduce, one of them for AllGather and ReduceScatter, the broadcast
// inside for Broadcast.
double nvlink_phases(Collective c, int m, double bytes, double gbps, const DomainModelOptions& o) {
  if (m <= 1) return 0;
  double one = seconds(1.0 * (m - 1) / m * bytes, gbps) + (m - 1) * o.nvlink_step_us * 1e-6;
  switch (c) {
    case Collective::AllReduce:
      return 2 * one;
    case Collective::Broadcast:
      return seconds(bytes, gbps) + (m - 1) * o.nvlink_step_us * 1e-6;
    default:
      return one;
  }
}

void across(const PathIndex& index, const DomainGroups& g, const Request& r, const BackgroundLoad& background,
            const DomainModelOptions& o, double gbps, int n, DomainEstimate& out) {
  int m = std::numeric_limits<int>::max();
  size_t smallest = 0;
  for (size_t i = 0; i < g.count(); ++i)
    if (static_cast<int>(g.hosts[i].size()) * r.gpus_per_host < m) {
      m = static_cast<int>(g.hosts[i].size()) * r.gpus_per_host;
      smallest = i;
    }
  // The smallest group paces the NVLink phases: a lone host's GPUs meet
  // over its own NVLink, at the model's intra-host rate.
  if (g.domain[smallest] < 0) gbps = o.model.nvlink_gbps;
  const int groups = static_cast<int>(g.count());
  std::vector<NodeId> ring = interleave_groups(g);
  Request net = r;
  if (r.collective != Collective::AllToAll && r.collective != Collective::Broadcast) {
    // A shard of whole elements: the estimate takes sizes as nccl-tests does.
    const double element = dtype_bytes(r.dtype);
    net.bytes = std::max(element, std::floor(r.bytes / m / element) * element);
  }
  Estimate e = estimate(index, ring, net, background, o.model);
  if (r.collective == Collective::AllToAll) {
    // Each rank's pairs outside its group over the network, inside over NVLink.
    double cross = 1.0 * (n - m) / (n - 1);
    out.network_s = e.time_s * cross;
    out.nvlink_s = seconds(r.bytes * (m - 1) / n, gbps);
    out.estimate.time_s = std::max(out.network_s, out.nvlink_s);
    out.estimate.ideal_time_s = std::max(e.ideal_time_s * cross, out.nvlink_s);
    out.estimate.alone_time_s = std::max(e.alone_time_s * cross, out.nvlink_s);
  } else {
    double share = network_share(r.collective, groups, m, r.bytes);
    // The cross-domain ring's bus bandwidth is what a host's lanes carry
    // together (nccl-tests reports about G NICs' worth between hosts of G
    // GPUs): each GPU slot's share crosses on its own lane, a G-th of it.
    out.network_s = seconds(share * r.gpus_per_host, e.busbw_gbps) + e.latency_s;
    out.nvlink_s = nvlink_phases(r.collective, m, r.bytes, gbps, o);
    double scale_ideal = e.time_s > 0 ? e.ideal_time_s / e.time_s : 1;
    double scale_alone = e.time_s > 0 ? e.alone_time_s / e.time_s : 1;
    out.estimate.time_s = out.nvlink_s + out.network_s;
    out.estimate.ideal_time_s = out.nvlink_s + out.network_s * scale_ideal;
    out.estimate.alone_time_s = out.nvlink_s + out.network_s * scale_alone;
  }
  out.estimate.latency_s = e.latency_s;
  out.estimate.bottleneck = e.bottleneck;
  out.estimate.routing = e.routing;
  out.estimate.neighbours = e.neighbours;
  out.network = std::move(e);
}

}  // namespace

double nvlink_gbps(const Fabric& f, const DomainModelOptions& o) {
  const NvlinkSpec spec = f.domains().reports().empty() ? NvlinkSpec{} : f.domains().spec();
  return spec.gpu_gbytes_per_s * kBitsPerByte * o.nvlink_efficiency;
}

double nvlink_time_s(const Request& r, int n, double gbps, const DomainModelOptions& o) {
  if (n < 2) return 0;
  double bytes =
      r.collective == Collective::AllToAll ? r.bytes * (n - 1) / n : ring_edge_bytes(r.collective, n, r.bytes);
  return seconds(bytes, gbps) + ring_steps(r.collective, n) * o.nvlink_step_us * 1e-6;
}

DomainGroups group_by_domain(const Fabric& f, std::span<const NodeId> hosts) {
  DomainGroups out;
  std::map<int, size_t> by_domain;
  for (NodeId h : hosts) {
    int d = f.domains().domain_of(f.index().host_id(h));
    if (d >= 0) {
      auto [it, fresh] = by_domain.emplace(d, out.hosts.size());
      if (!fresh) {
        out.hosts[it->second].push_back(h);
        continue;
      }
    }
    out.hosts.push_back({h});
    out.domain.push_back(d);
  }
  return out;
}

std::vector<NodeId> interleave_groups(const DomainGroups& g) {
  std::vector<NodeId> out;
  size_t longest = 0;
  for (const auto& hosts : g.hosts) longest = std::max(longest, hosts.size());
  for (size_t k = 0; k < longest; ++k)
    for (const auto& hosts : g.hosts)
      if (k < hosts.size()) out.push_back(hosts[k]);
  return out;
}

DomainEstimate estimate_with_domains(const PathIndex& index, std::span<const NodeId> hosts, const Request& request,
                                     const BackgroundLoad& background, const DomainModelOptions& options) {
  if (request.gpus_per_host < 1) throw std::invalid_argument("gpus_per_host must be at least 1");
  if (!(options.nvlink_efficiency > 0 && options.nvlink_efficiency <= 1))
    throw std::invalid_argument("nvlink_efficiency must be in (0, 1]");
  const Fabric& f = index.fabric();
  DomainEstimate out;
  DomainGroups g = group_by_domain(f, hosts);
  const int n = static_cast<int>(hosts.size()) * request.gpus_per_host;
  out.groups = static_cast<int>(g.count());
  out.nvlink_gbps = nvlink_gbps(f, options);
  Estimate& e = out.estimate;
  e.collective = request.collective;
  e.hosts = static_cast<int>(hosts.size());
  e.gpus_per_host = request.gpus_per_host;
  e.ranks = n;
  e.bytes = request.bytes;
  e.routing = routing_name(f.routing());
  if (n < 2) return out;
  if (f.domains().empty()) {
    out.estimate = estimate(index, hosts, request, background, options.model);
    out.network_s = out.estimate.time_s;
    return out;
  }
  if (g.count() == 1)
    inside_one(request, n, g.domain[0] >= 0 ? out.nvlink_gbps : options.model.nvlink_gbps, options, out);
  else
    across(index, g, request, background, options, out.nvlink_gbps, n, out);
  if (e.time_s > 0) {
    e.algbw_gbps = request.bytes * kBitsPerByte / e.time_s / 1e9;
    e.busbw_gbps = e.algbw_gbps * bus_factor(request.collective, n);
  }
  return out;
}

}  // namespace topo
