#include "comm_model/estimate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "comm_model/double_binary_tree.h"
#include "comm_model/nccl_tuning.h"
#include "topology/error.h"

namespace topo {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A GPU slot's way out of a host: an HCA port and how many of the host's
// GPUs send through it.
struct Lane {
  int port;
  int gpus;
  int rail;
};

// The allocation as the model uses it: hosts by index, and their lanes
// (one flat array, so that a thousand hosts cost one allocation).
struct Allocation {
  std::vector<int> host;
  std::vector<int> lane_begin{0};
  std::vector<Lane> lane;
  int gpus_per_host = 1;

  std::span<const Lane> lanes(int i) const {
    return {lane.data() + lane_begin[i], static_cast<size_t>(lane_begin[i + 1] - lane_begin[i])};
  }
};

// Appends the lanes of host `h` (index number) running `gpus` GPUs.
void add_lanes(const PathIndex& index, NodeId host, int h, int gpus, Allocation& al) {
  auto ports = index.ports(h);
  const int H = static_cast<int>(ports.size());
  const std::vector<Gpu>& known = index.fabric().node(host).gpus;
  size_t first = al.lane.size();
  for (int p = 0; p < H; ++p) al.lane.push_back({p, 0, ports[p].rail});
  for (int g = 0; g < gpus && H > 0; ++g) {
    int port = static_cast<int>(static_cast<long>(g) * H / gpus);
    // hwloc's closest HCA wins when the fabric carries it.
    if (static_cast<size_t>(g) < known.size() && known[g].rail >= 0)
      for (int p = 0; p < H; ++p)
        if (ports[p].rail == known[g].rail) {
          port = p;
          break;
        }
    ++al.lane[first + port].gpus;
  }
  // Ports no GPU uses carry nothing.
  al.lane.erase(std::remove_if(al.lane.begin() + static_cast<long>(first), al.lane.end(),
                               [](const Lane& l) { return l.gpus == 0; }),
                al.lane.end());
  al.host.push_back(h);
  al.lane_begin.push_back(static_cast<int>(al.lane.size()));
}

// Bytes between two hosts, split over the sender's lanes by their GPUs, each
// landing on the receiver's lane of the same rail (or the k-th lane when
// rails do not match up).
void add_host_flow(LinkLoad& load, const Allocation& al, int from, int to, double bytes) {
  std::span<const Lane> src = al.lanes(from), dst = al.lanes(to);
  for (size_t k = 0; k < src.size(); ++k) {
    const Lane* match = nullptr;
    if (src[k].rail >= 0)
      for (const Lane& d : dst)
        if (d.rail == src[k].rail) match = &d;
    if (!match) match = &dst[k % dst.size()];
    load.add(from, src[k].port, to, match->port, bytes * src[k].gpus / al.gpus_per_host);
  }
}

// The allocation of `hosts` running `gpus` GPUs each. Throws for a node
// that is not a host, a host listed twice, or one that cannot reach the
// others.
Allocation allocate(const PathIndex& index, std::span<const NodeId> hosts, int gpus) {
  const Fabric& fabric = index.fabric();
  Allocation al;
  al.gpus_per_host = gpus;
  al.host.reserve(hosts.size());
  al.lane_begin.reserve(hosts.size() + 1);
  std::vector<bool> seen(fabric.hosts().size(), false);
  for (NodeId h : hosts) {
    int i = index.host_index(h);
    if (i < 0)
      throw std::invalid_argument(
          fmt::format("node {} is not a host", h < fabric.node_count() ? fabric.node(h).name : "?"));
    if (seen[i]) throw std::invalid_argument(fmt::format("host {} is listed twice", fabric.node(h).name));
    seen[i] = true;
    add_lanes(index, h, i, gpus, al);
    if (hosts.size() > 1 && al.lanes(static_cast<int>(al.host.size()) - 1).empty())
      throw FabricError(fmt::format("host {} has no Active HCA cable: it cannot reach the other hosts",
                                    fabric.node(h).name));
  }
  return al;
}

// Bytes one edge of a ring (or chain, for Broadcast) carries: the whole
// collective's traffic between two neighbours.
double ring_edge_bytes(Collective coll, int ranks, double bytes) {
  switch (coll) {
    case Collective::AllReduce: return 2.0 * (ranks - 1) / ranks * bytes;
    case Collective::Broadcast: return bytes;
    default: return 1.0 * (ranks - 1) / ranks * bytes;
  }
}

// A routed traffic pattern: the tightest cable on the real fabric and on the
// ideal one, per `unit` bytes routed, and the longest path.
struct Pattern {
  LinkLoad::Peak actual, ideal;
  int switches = 0;
  double flow_bytes = 1;  // bytes one flow put on the fabric when routed
};

Pattern measure(const LinkLoad& load, const LinkCapacity& capacity, const LinkCapacity& ideal_capacity,
                double flow_bytes) {
  Pattern p;
  p.actual = load.peak(capacity);
  p.ideal = load.peak(ideal_capacity, /*ports_only=*/true);
  p.switches = load.max_switches();
  p.flow_bytes = flow_bytes;
  return p;
}

// AllToAll as point-to-point: every rank sends `per_rank` bytes to every
// other rank. Summed in closed form per leaf pair, so a thousand hosts cost
// leaves^2, not hosts^2.
LinkLoad alltoall_load(const PathIndex& index, const Allocation& al, double per_rank, bool pxn) {
  LinkLoad load(index, al.host);
  const int N = static_cast<int>(al.host.size());
  const int G = al.gpus_per_host;
  const double remote_ranks = static_cast<double>(N - 1) * G;
  std::vector<int> compact(index.leaves().size(), -1);
  std::vector<int> used;
  auto slot = [&](int leaf) {
    if (compact[leaf] < 0) {
      compact[leaf] = static_cast<int>(used.size());
      used.push_back(leaf);
    }
    return compact[leaf];
  };
  for (int i = 0; i < N; ++i)
    for (const Lane& l : al.lanes(i)) slot(index.ports(al.host[i])[l.port].leaf);
  const size_t U = used.size();
  std::vector<double> between(U * U, 0.0);

  if (!pxn) {
    std::vector<double> gpus_on(U, 0.0);
    for (int i = 0; i < N; ++i)
      for (const Lane& l : al.lanes(i)) {
        double bytes = l.gpus * per_rank * remote_ranks;
        load.add_port(i, l.port, bytes, bytes);
        gpus_on[compact[index.ports(al.host[i])[l.port].leaf]] += l.gpus;
      }
    for (size_t x = 0; x < U; ++x)
      for (size_t y = 0; y < U; ++y) between[x * U + y] = per_rank * gpus_on[x] * gpus_on[y];
    // A host's GPUs do not send to each other over the fabric.
    for (int i = 0; i < N; ++i)
      for (const Lane& a : al.lanes(i))
        for (const Lane& b : al.lanes(i)) {
          int x = compact[index.ports(al.host[i])[a.port].leaf], y = compact[index.ports(al.host[i])[b.port].leaf];
          between[x * U + y] -= per_rank * a.gpus * b.gpus;
        }
  } else {
    // Rail r of every host sends all its host's data for the rail-r GPUs of
    // the other hosts; the rail set is the same on every host (checked by
    // the caller), so rail-r lanes meet only rail-r lanes.
    std::map<int, double> gpus_on_rail;  // rail -> GPUs of the allocation behind it
    for (int i = 0; i < N; ++i)
      for (const Lane& l : al.lanes(i)) gpus_on_rail[l.rail] += l.gpus;
    std::map<int, std::vector<double>> senders, receivers;  // rail -> per used leaf
    for (int i = 0; i < N; ++i)
      for (const Lane& l : al.lanes(i)) {
        int x = compact[index.ports(al.host[i])[l.port].leaf];
        double up = G * per_rank * (gpus_on_rail[l.rail] - l.gpus);
        double down = l.gpus * per_rank * remote_ranks;
        load.add_port(i, l.port, up, down);
        auto& s = senders.try_emplace(l.rail, U, 0.0).first->second;
        auto& r = receivers.try_emplace(l.rail, U, 0.0).first->second;
        s[x] += 1;
        r[x] += l.gpus;
      }
    for (const auto& [rail, s] : senders) {
      const std::vector<double>& r = receivers[rail];
      for (size_t x = 0; x < U; ++x)
        if (s[x] > 0)
          for (size_t y = 0; y < U; ++y) between[x * U + y] += G * per_rank * s[x] * r[y];
    }
  }
  for (size_t x = 0; x < U; ++x)
    for (size_t y = 0; y < U; ++y) {
      double bytes = between[x * U + y];
      // Subtracting a host's own pairs can leave rounding dust behind.
      if (x != y && bytes > 1e-9 * per_rank) load.add_between_leaves(used[x], used[y], bytes);
    }
  return load;
}

// PXN needs every host to reach the same rails.
bool pxn_applies(const Allocation& al) {
  if (al.gpus_per_host < 2 || al.host.size() < 2) return false;
  auto rails = [](std::span<const Lane> lanes) {
    std::vector<int> r;
    for (const Lane& l : lanes) r.push_back(l.rail);
    std::sort(r.begin(), r.end());
    return r;
  };
  std::vector<int> first = rails(al.lanes(0));
  if (first.size() < 2 || first.front() < 0 || std::adjacent_find(first.begin(), first.end()) != first.end())
    return false;
  for (size_t i = 1; i < al.host.size(); ++i)
    if (rails(al.lanes(static_cast<int>(i))) != first) return false;
  return true;
}

struct Candidate {
  Algorithm algorithm;
  Protocol protocol;
  bool pxn = false;
  double net_s = 0, nvl_s = 0, bw_s = 0, latency_s = 0;
  const Pattern* pattern = nullptr;
  double total() const { return bw_s + latency_s; }
};

void check_options(const Request& r, const ModelOptions& o) {
  if (!std::isfinite(r.bytes) || r.bytes < 0)
    throw std::invalid_argument(fmt::format("size {} bytes is not a size", r.bytes));
  if (std::fmod(r.bytes, dtype_bytes(r.dtype)) != 0)
    throw std::invalid_argument(fmt::format("size {} bytes is not a whole number of {} elements ({} bytes each)",
                                            r.bytes, name(r.dtype), dtype_bytes(r.dtype)));
  if (r.gpus_per_host < 1)
    throw std::invalid_argument(fmt::format("{} GPUs per host: need at least one", r.gpus_per_host));
  if (o.algorithm && !supports(r.collective, *o.algorithm))
    throw std::invalid_argument(fmt::format("NCCL does not run {} with the {} algorithm", name(r.collective),
                                            name(*o.algorithm)));
  if (o.protocol == Protocol::LL128 && r.collective == Collective::AllToAll)
    throw std::invalid_argument("AllToAll runs point-to-point, which has no LL128 protocol");
  if (!(o.nvlink_gbps > 0)) throw std::invalid_argument("nvlink_gbps must be positive");
  if (!(o.network_efficiency > 0 && o.network_efficiency <= 1))
    throw std::invalid_argument("network_efficiency must be in (0, 1]");
  if (!(o.switch_latency_us >= 0 && o.alpha_us >= 0 && o.nvlink_alpha_us >= 0))
    throw std::invalid_argument("latencies must not be negative");
}

}  // namespace

std::vector<NodeId> find_hosts(const Fabric& fabric, std::span<const std::string> names) {
  std::vector<NodeId> out;
  std::vector<std::string> unknown;
  for (const std::string& n : names) {
    if (auto h = fabric.find_host(n)) out.push_back(*h);
    else unknown.push_back(n);
  }
  if (!unknown.empty())
    throw FabricError(fmt::format("unknown host{} {}: not in the fabric", unknown.size() > 1 ? "s" : "",
                                  fmt::join(unknown, ", ")));
  return out;
}

Estimate estimate(const PathIndex& index, std::span<const NodeId> hosts, const Request& request,
                  const BackgroundLoad& background, const ModelOptions& options) {
  check_options(request, options);
  const Collective coll = request.collective;
  const int N = static_cast<int>(hosts.size());
  const int G = request.gpus_per_host;
  const int n = N * G;
  const double S = request.bytes;

  const Allocation al = allocate(index, hosts, G);

  Estimate out;
  out.collective = coll;
  out.hosts = N;
  out.gpus_per_host = G;
  out.ranks = n;
  out.bytes = S;
  out.algorithm = options.algorithm.value_or(coll == Collective::AllToAll ? Algorithm::Direct : Algorithm::Ring);
  out.protocol = options.protocol.value_or(Protocol::Simple);
  if (n < 2 || S == 0) return out;

  // Candidates, in the order ties are broken.
  std::vector<Algorithm> algorithms;
  if (options.algorithm) algorithms = {*options.algorithm};
  else
    for (Algorithm a : {Algorithm::Ring, Algorithm::Tree, Algorithm::Hierarchical, Algorithm::Direct})
      if (supports(coll, a)) algorithms.push_back(a);
  std::vector<Protocol> protocols;
  if (options.protocol) protocols = {*options.protocol};
  else if (!options.nccl_tuning) protocols = {Protocol::Simple};
  else protocols = {Protocol::Simple, Protocol::LL128, Protocol::LL};

  // Routed patterns, built only for the algorithms in play.
  std::optional<LinkCapacity> capacity, ideal_capacity;
  std::optional<Pattern> ring, tree, a2a_plain, a2a_pxn;
  int tree_depth = 0;
  if (N > 1) {
    capacity.emplace(index, al.host, background, options.network_efficiency);
    ideal_capacity.emplace(index, al.host, BackgroundLoad(), options.network_efficiency);
    bool wants_ring = std::any_of(algorithms.begin(), algorithms.end(),
                                  [](Algorithm a) { return a == Algorithm::Ring || a == Algorithm::Hierarchical; });
    if (wants_ring) {
      LinkLoad load(index, al.host);
      // Broadcast pipelines down a chain: the ring without its closing edge.
      int edges = coll == Collective::Broadcast ? N - 1 : N;
      for (int i = 0; i < edges; ++i) add_host_flow(load, al, i, (i + 1) % N, 1.0);
      ring = measure(load, *capacity, *ideal_capacity, 1.0);
    }
    if (std::find(algorithms.begin(), algorithms.end(), Algorithm::Tree) != algorithms.end()) {
      LinkLoad load(index, al.host);
      DoubleBinaryTree t = double_binary_tree(N);
      for (const BinaryTree* half : {&t.first, &t.second})
        for (int r = 0; r < N; ++r)
          if (int p = half->parent[r]; p >= 0) {
            add_host_flow(load, al, r, p, 1.0);  // reduce, up the tree
            add_host_flow(load, al, p, r, 1.0);  // broadcast, down it
          }
      tree = measure(load, *capacity, *ideal_capacity, 1.0);
      tree_depth = t.depth();
    }
    if (coll == Collective::AllToAll) {
      double per_rank = S / n;
      double pair = per_rank * G * G;
      if (options.pxn != Pxn::On || !pxn_applies(al))
        a2a_plain = measure(alltoall_load(index, al, per_rank, false), *capacity, *ideal_capacity, pair);
      if (options.pxn != Pxn::Off && pxn_applies(al))
        a2a_pxn = measure(alltoall_load(index, al, per_rank, true), *capacity, *ideal_capacity, pair);
    }
  }

  const double nvl_Bps = options.nvlink_gbps * 1e9 / 8;
  const double bus_bytes = bus_factor(coll, n) * S;
  const bool AR = coll == Collective::AllReduce;

  // Latency of one step between hosts whose longest path passes `switches` switches.
  auto net_step = [&](Algorithm a, Protocol p, int switches) {
    double hop = options.switch_latency_us * switches;
    return (options.nccl_tuning ? nccl::hw_latency_us(nccl::Hw::Net, a, p) : options.alpha_us) + hop;
  };
  auto nvl_step = [&](Algorithm a, Protocol p) {
    return options.nccl_tuning ? nccl::hw_latency_us(nccl::Hw::NvLink, a, p) : options.nvlink_alpha_us;
  };
  auto base = [&](Algorithm a, Protocol p) { return options.nccl_tuning ? nccl::base_latency_us(a, p) : 0.0; };

  // Time of one candidate on the real fabric (ideal=false) or the ideal one.
  auto cost = [&](Algorithm a, Protocol p, const Pattern* pat, bool pxn, bool ideal, Candidate& c) {
    auto net_seconds = [&](double per_unit_bytes) {
      if (!pat || N < 2) return 0.0;
      return per_unit_bytes * (ideal ? pat->ideal.seconds : pat->actual.seconds);
    };
    const int switches = !pat || N < 2 ? 0 : ideal ? 1 : pat->switches;
    double net = 0, nvl_bytes = 0, lat_us = base(a, p);
    bool sequential = false;
    switch (a) {
      case Algorithm::Ring: {
        double edge = ring_edge_bytes(coll, n, S);
        net = net_seconds(edge);
        if (G > 1) nvl_bytes = edge * (N > 1 ? (G - 1.0) / G : 1.0);
        int total = AR ? 2 * (n - 1) : n - 1;
        int inter = N > 1 ? (AR ? 2 * (N - 1) : N - 1) : 0;
        double intra_step = nvl_step(a, p);
        if (N > 1 && options.nccl_tuning) intra_step = std::max(intra_step, nccl::net_overhead_us(p));
        lat_us += inter * net_step(a, p, switches) + (total - inter) * intra_step;
        break;
      }
      case Algorithm::Hierarchical: {
        double share = (G - 1.0) / G * S;  // what one GPU moves over NVLink per phase
        double edge = AR ? 2.0 * (N - 1) / N * S : coll == Collective::Broadcast ? S : (N - 1.0) / N * S;
        net = net_seconds(edge);
        nvl_bytes = AR ? 2 * share : share;
        sequential = true;
        int inter = N > 1 ? (AR ? 2 * (N - 1) : N - 1) : 0;
        int intra = AR ? 2 * (G - 1) : G - 1;
        lat_us += inter * net_step(a, p, switches) + intra * nvl_step(a, p);
        break;
      }
      case Algorithm::Tree: {
        net = net_seconds(S / 2);
        if (G > 1) nvl_bytes = 2 * S * (G - 1.0) / G;
        lat_us += 2 * ((G - 1) * nvl_step(a, p) + tree_depth * net_step(a, p, switches));
        break;
      }
      case Algorithm::Direct: {
        net = net_seconds(1.0);
        double per_rank = S / n;
        if (G > 1) nvl_bytes = per_rank * (G - 1) + (pxn ? per_rank * (n - G) * (G - 1.0) / G : 0.0);
        lat_us += (N - 1) * net_step(a, p, switches) + (G - 1) * nvl_step(a, p);
        break;
      }
    }
    double nvl = nvl_bytes / nvl_Bps;
    double factor = options.nccl_tuning ? nccl::bandwidth_factor(coll, a, p, N, G) : 1.0;
    double bw = (sequential ? net + nvl : std::max(net, nvl)) / factor;
    if (options.nccl_tuning && p == Protocol::LL) bw = std::max(bw, bus_bytes / (nccl::ll_max_busbw_gbytes(N) * 1e9));
    c.net_s = net;
    c.nvl_s = nvl;
    c.bw_s = bw;
    c.latency_s = lat_us * 1e-6;
  };

  std::optional<Candidate> best;
  double ideal = kInf;
  for (Algorithm a : algorithms)
    for (Protocol p : protocols) {
      if (a == Algorithm::Direct && p == Protocol::LL128) continue;
      std::vector<std::pair<const Pattern*, bool>> variants;
      switch (a) {
        case Algorithm::Ring:
        case Algorithm::Hierarchical: variants = {{ring ? &*ring : nullptr, false}}; break;
        case Algorithm::Tree: variants = {{tree ? &*tree : nullptr, false}}; break;
        case Algorithm::Direct:
          if (a2a_plain || N < 2) variants.push_back({a2a_plain ? &*a2a_plain : nullptr, false});
          if (a2a_pxn) variants.push_back({&*a2a_pxn, true});
          break;
      }
      for (auto [pat, pxn] : variants) {
        Candidate c{a, p, pxn};
        c.pattern = pat;
        Candidate i = c;
        cost(a, p, pat, pxn, /*ideal=*/true, i);
        cost(a, p, pat, pxn, /*ideal=*/false, c);
        ideal = std::min(ideal, i.total());
        if (!best || c.total() < best->total()) best = c;
      }
    }

  const Candidate& c = *best;
  out.algorithm = c.algorithm;
  out.protocol = c.protocol;
  out.pxn = c.pxn;
  out.time_s = c.total();
  out.latency_s = c.latency_s;
  out.ideal_time_s = std::min(ideal, out.time_s);
  if (std::isfinite(out.time_s) && out.time_s > 0) {
    out.algbw_gbps = S * 8 / out.time_s / 1e9;
    out.busbw_gbps = out.algbw_gbps * bus_factor(coll, n);
  }
  Bottleneck& b = out.bottleneck;
  if (c.pattern && c.net_s > 0 && c.net_s >= c.nvl_s && c.pattern->actual.found) {
    const LinkLoad::Peak& peak = c.pattern->actual;
    b.where = Bottleneck::Where::Cable;
    b.cable = peak.cable;
    b.from = peak.from;
    b.name = index.describe(peak.cable, peak.from);
    b.flows = peak.bytes / c.pattern->flow_bytes;
    b.gbps = peak.gbps;
    b.share_gbps = b.flows > 0 ? b.gbps / b.flows : b.gbps;
  } else if (c.nvl_s > 0) {
    b.where = Bottleneck::Where::NvLink;
    b.name = "NVLink";
    b.flows = 1;
    b.gbps = b.share_gbps = options.nvlink_gbps;
  }
  return out;
}

LinkLoad ring_load(const PathIndex& index, std::span<const NodeId> hosts, const Request& request) {
  check_options(request, ModelOptions{});
  const Allocation al = allocate(index, hosts, request.gpus_per_host);
  LinkLoad load(index, al.host);
  const int N = static_cast<int>(hosts.size());
  if (N < 2) return load;
  const double edge = ring_edge_bytes(request.collective, N * request.gpus_per_host, request.bytes);
  const int edges = request.collective == Collective::Broadcast ? N - 1 : N;
  for (int i = 0; i < edges; ++i) add_host_flow(load, al, i, (i + 1) % N, edge);
  return load;
}

}  // namespace topo
