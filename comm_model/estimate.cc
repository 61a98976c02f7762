#include "comm_model/estimate.h"

#include "comm_model/estimate_times.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "comm_model/evaluate.h"
#include "comm_model/routes.h"
#include "comm_model/time.h"
#include "comm_model/traffic.h"
#include "common/error.h"
#include "routing/route.h"

namespace topo {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void check_options(const Request& r, const ModelOptions& o) {
  if (!std::isfinite(r.bytes) || r.bytes < 0)
    throw std::invalid_argument(fmt::format("size {} bytes is not a size", r.bytes));
  if (std::fmod(r.bytes, dtype_bytes(r.dtype)) != 0)
    throw std::invalid_argument(fmt::format("size {} bytes is not a whole number of {} elements ({} bytes each)",
                                            r.bytes, name(r.dtype), dtype_bytes(r.dtype)));
  if (r.gpus_per_host < 1)
    throw std::invalid_argument(fmt::format("{} GPUs per host: need at least one", r.gpus_per_host));
  if (o.algorithm && !supports(r.collective, *o.algorithm))
    throw std::invalid_argument(
        fmt::format("NCCL does not run {} with the {} algorithm", name(r.collective), name(*o.algorithm)));
  if (o.protocol == Protocol::LL128 && r.collective == Collective::AllToAll)
    throw std::invalid_argument("AllToAll runs point-to-point, which has no LL128 protocol");
  if (!(o.nvlink_gbps > 0)) throw std::invalid_argument("nvlink_gbps must be positive");
  if (!(o.network_efficiency > 0 && o.network_efficiency <= 1))
    throw std::invalid_argument("network_efficiency must be in (0, 1]");
  if (!(o.switch_latency_us >= 0 && o.alpha_us >= 0 && o.nvlink_alpha_us >= 0))
    throw std::invalid_argument("latencies must not be negative");
  if (o.ecmp_qps < 0 || o.ecmp_qps > kMaxQps)
    throw std::invalid_argument(fmt::format("ecmp_qps {}: expected 0 (the fabric's) to {}", o.ecmp_qps, kMaxQps));
}

// A few values in a fixed array: the choices an estimate walks, without
// an allocation each time the placement search asks for one.
template <typename T, size_t N>
struct Few {
  std::array<T, N> items{};
  size_t count = 0;
  void push_back(T t) { items[count++] = t; }
  const T* begin() const { return items.data(); }
  const T* end() const { return items.data() + count; }
  operator std::span<const T>() const { return {begin(), count}; }
};

// The algorithms and protocols in play, in the order ties are broken.
Few<Algorithm, 4> algorithms_for(Collective coll, const ModelOptions& o) {
  Few<Algorithm, 4> out;
  if (o.algorithm) {
    out.push_back(*o.algorithm);
    return out;
  }
  for (Algorithm a : {Algorithm::Ring, Algorithm::Tree, Algorithm::Hierarchical, Algorithm::Direct})
    if (supports(coll, a)) out.push_back(a);
  return out;
}
Few<Protocol, 3> protocols_for(const ModelOptions& o) {
  Few<Protocol, 3> out;
  if (o.protocol)
    out.push_back(*o.protocol);
  else if (!o.nccl_tuning)
    out.push_back(Protocol::Simple);
  else
    for (Protocol p : {Protocol::Simple, Protocol::LL128, Protocol::LL}) out.push_back(p);
  return out;
}

// What a caller reads of an evaluation: all of it (estimate(), the
// neighbours), or only the times (estimate_times(), the placement
// objective, which scores a few rings a decision): no time alone, no
// bottleneck named in words.
enum class Detail { Full, TimesOnly };

// A routed traffic pattern, its flows and its pace alone and among neighbours.
struct Routed {
  CableLoad load;  // its bytes moved into flows once paced
  std::vector<std::pair<int, double>> flows;
  Share alone, shared;
  Pace alone_pace, shared_pace;
};

struct Patterns {
  std::vector<Routed> routed;
  int ring = -1, tree = -1, plain = -1, pxn = -1;  // positions in routed
  int tree_depth = 0;
};

Patterns route_patterns(const PathIndex& index, const Allocation& al, const Request& r,
                        std::span<const Algorithm> algorithms, const ModelOptions& o) {
  Patterns ps;
  auto in_play = [&](Algorithm a) { return std::find(algorithms.begin(), algorithms.end(), a) != algorithms.end(); };
  auto add = [&](const Traffic& t) {
    ps.routed.push_back({route(index, al, t, o.ecmp_draw, o.ecmp_qps), {}, {}, {}, {}, {}});
    return static_cast<int>(ps.routed.size()) - 1;
  };
  if (al.size() < 2) return ps;
  ps.routed.reserve(3);  // ring, tree, and AllToAll's one or two
  if (in_play(Algorithm::Ring) || in_play(Algorithm::Hierarchical))
    // Broadcast pipelines down a chain: the ring without its closing edge.
    ps.ring = add(ring_traffic(index, al, 1.0, r.collective == Collective::Broadcast));
  if (in_play(Algorithm::Tree)) {
    DoubleBinaryTree t = double_binary_tree(al.size());
    ps.tree = add(tree_traffic(index, al, t, 1.0));
    ps.tree_depth = t.depth();
  }
  if (r.collective == Collective::AllToAll) {
    double per_rank = r.bytes / (al.size() * al.gpus_per_host);
    bool pxn = pxn_applies(al);
    const Routing& routing = index.fabric().routing();
    const bool per_leaf = !routing.is_static() && !routing.is_ecmp();
    if (o.pxn != Pxn::On || !pxn) ps.plain = add(alltoall_traffic(index, al, per_rank, false, per_leaf));
    if (o.pxn != Pxn::Off && pxn) ps.pxn = add(alltoall_traffic(index, al, per_rank, true, per_leaf));
  }
  return ps;
}

// Seconds per unit of a pattern whose flows run at `gbps` each.
double seconds_at(double flow_bytes, double gbps) { return gbps <= 0 ? kInf : flow_bytes * 8 / (gbps * 1e9); }

// Shares the fabric for every pattern: alone, among neighbours, and on the
// ideal fabric (the hosts' own cables at line rate).
void pace_patterns(const PathIndex& index, Patterns& ps, const CableRoom& room, const CableRoom& ideal_room,
                   std::span<const Sharer> neighbours) {
  // The sharers' list is needed only among neighbours; alone, one on the stack does.
  std::vector<Sharer> sharers;
  if (!neighbours.empty()) {
    sharers.resize(1 + neighbours.size());
    std::copy(neighbours.begin(), neighbours.end(), sharers.begin() + 1);
  }
  std::vector<std::pair<int, double>> own;  // one buffer for every pattern
  for (Routed& p : ps.routed) {
    p.flows = flows_of(std::move(p.load.bytes), p.load.flow_bytes);  // the bytes are not read again
    own.clear();
    for (const auto& fl : p.flows)
      if (index.is_port_cable(fl.first)) own.push_back(fl);
    const Sharer ideal{own}, alone{p.flows};
    double ideal_gbps = first_share({&ideal, 1}, ideal_room).flow_gbps;
    p.alone = first_share({&alone, 1}, room);
    if (!neighbours.empty()) sharers[0] = alone;
    p.shared = neighbours.empty() ? p.alone : first_share(sharers, room);
    p.alone_pace = {seconds_at(p.load.flow_bytes, p.alone.flow_gbps), seconds_at(p.load.flow_bytes, ideal_gbps),
                    p.load.max_switches};
    p.shared_pace = p.alone_pace;
    p.shared_pace.seconds = seconds_at(p.load.flow_bytes, p.shared.flow_gbps);
  }
}

struct Choice {
  std::optional<Candidate> best, best_alone;
  double ideal = kInf;
};

// Every algorithm, protocol and PXN variant in play, costed alone, among
// neighbours and on the ideal fabric.
Choice choose(const Request& r, const ModelOptions& o, const Shape& sh, const Patterns& ps, Detail detail) {
  Choice ch;
  for (Algorithm a : algorithms_for(r.collective, o))
    for (Protocol p : protocols_for(o)) {
      if (a == Algorithm::Direct && p == Protocol::LL128) continue;
      Few<std::pair<int, bool>, 2> variants;  // pattern, pxn
      switch (a) {
        case Algorithm::Ring:
        case Algorithm::Hierarchical:
          variants.push_back({ps.ring, false});
          break;
        case Algorithm::Tree:
          variants.push_back({ps.tree, false});
          break;
        case Algorithm::Direct:
          if (ps.plain >= 0 || sh.hosts < 2) variants.push_back({ps.plain, false});
          if (ps.pxn >= 0) variants.push_back({ps.pxn, true});
          break;
      }
      for (auto [pattern, pxn] : variants) {
        const Routed* routed = pattern >= 0 ? &ps.routed[pattern] : nullptr;
        Candidate c{a, p, pxn, pattern};
        Candidate ideal = c, alone = c;
        cost(r, o, sh, routed ? &routed->alone_pace : nullptr, /*ideal=*/true, ideal);
        cost(r, o, sh, routed ? &routed->shared_pace : nullptr, /*ideal=*/false, c);
        ch.ideal = std::min(ch.ideal, ideal.total());
        if (!ch.best || c.total() < ch.best->total()) ch.best = c;
        if (detail == Detail::TimesOnly) continue;
        cost(r, o, sh, routed ? &routed->alone_pace : nullptr, /*ideal=*/false, alone);
        if (!ch.best_alone || alone.total() < ch.best_alone->total()) ch.best_alone = alone;
      }
    }
  return ch;
}

// The cable that set the chosen candidate's pace, or NVLink.
Bottleneck bottleneck_of(const PathIndex& index, const CableRoom& room, const Candidate& c, const Routed* p,
                         std::span<const Sharer> neighbours, const ModelOptions& o) {
  Bottleneck b;
  if (p && c.net_s > 0 && c.net_s >= c.nvl_s && p->shared.limit >= 0) {
    const Fabric& f = index.fabric();
    const int key = p->shared.limit;
    const int d = room.cable_of(key);
    b.where = Bottleneck::Where::Cable;
    b.directed_cable = d;
    b.cable = f.cables()[d / 2];
    b.from = d % 2 == 0 ? f.link(*b.cable).end_a : f.link(*b.cable).end_b;
    b.name = index.describe(*b.cable, b.from);
    for (const auto& [k, flows] : p->flows)
      if (k == key) b.flows = flows;
    for (const Sharer& s : neighbours)
      for (const auto& [k, flows] : s.flows)
        if (k == key) b.neighbour_flows += flows;
    b.share_gbps = p->shared.flow_gbps;
    b.gbps = b.share_gbps * b.flows;
  } else if (c.nvl_s > 0) {
    b.where = Bottleneck::Where::NvLink;
    b.name = "NVLink";
    b.flows = 1;
    b.gbps = b.share_gbps = o.nvlink_gbps;
  }
  return b;
}

// Neighbours with a flow on a cable the pattern loads.
int neighbours_met(const Routed& p, std::span<const Sharer> neighbours) {
  int met = 0;
  for (const Sharer& s : neighbours) {
    auto a = p.flows.begin();
    auto b = s.flows.begin();
    while (a != p.flows.end() && b != s.flows.end() && a->first != b->first) {
      if (a->first < b->first)
        ++a;
      else
        ++b;
    }
    met += a != p.flows.end() && b != s.flows.end();
  }
  return met;
}

// detail::evaluate(), all of it or only the times.
detail::Evaluation evaluate_for(const PathIndex& index, std::span<const NodeId> hosts, const Request& request,
                                const BackgroundLoad& background, std::span<const Sharer> neighbours,
                                const ModelOptions& options, Detail wanted) {
  check_options(request, options);
  const Allocation al = allocate(index, hosts, request.gpus_per_host);
  const Shape shape{al.size(), request.gpus_per_host, 0};
  detail::Evaluation ev;
  Estimate& out = ev.estimate;
  if (wanted == Detail::Full) out.routing = routing_name(index.fabric().routing());
  out.collective = request.collective;
  out.hosts = shape.hosts;
  out.gpus_per_host = shape.gpus_per_host;
  out.ranks = shape.hosts * shape.gpus_per_host;
  out.bytes = request.bytes;
  out.algorithm =
      options.algorithm.value_or(request.collective == Collective::AllToAll ? Algorithm::Direct : Algorithm::Ring);
  out.protocol = options.protocol.value_or(Protocol::Simple);
  if (out.ranks < 2 || request.bytes == 0) return ev;

  auto algorithms = algorithms_for(request.collective, options);
  Patterns ps = route_patterns(index, al, request, algorithms, options);
  const CableRoom room(index, background, options.network_efficiency);
  pace_patterns(index, ps, room, CableRoom(index, BackgroundLoad(), options.network_efficiency), neighbours);
  Choice ch = choose(request, options, Shape{shape.hosts, shape.gpus_per_host, ps.tree_depth}, ps, wanted);

  const Candidate& c = *ch.best;
  const Routed* routed = c.pattern >= 0 ? &ps.routed[c.pattern] : nullptr;
  out.algorithm = c.algorithm;
  out.protocol = c.protocol;
  out.pxn = c.pxn;
  out.time_s = c.total();
  out.latency_s = c.latency_s;
  out.ideal_time_s = std::min(ch.ideal, out.time_s);
  if (wanted == Detail::TimesOnly) return ev;
  out.alone_time_s = ch.best_alone->total();
  if (std::isfinite(out.time_s) && out.time_s > 0) {
    out.algbw_gbps = request.bytes * 8 / out.time_s / 1e9;
    out.busbw_gbps = out.algbw_gbps * bus_factor(request.collective, out.ranks);
  }
  out.bottleneck = bottleneck_of(index, room, c, routed, neighbours, options);
  if (routed) out.neighbours = neighbours_met(*routed, neighbours);

  const Candidate& a = *ch.best_alone;
  if (a.pattern >= 0) {
    ev.flows = ps.routed[a.pattern].flows;
    ev.alone_flow_gbps = ps.routed[a.pattern].alone.flow_gbps;
    ev.alone_net_s = a.net_s;
  }
  return ev;
}

}  // namespace

namespace detail {

Evaluation evaluate(const PathIndex& index, std::span<const NodeId> hosts, const Request& request,
                    const BackgroundLoad& background, std::span<const Sharer> neighbours, const ModelOptions& options) {
  return evaluate_for(index, hosts, request, background, neighbours, options, Detail::Full);
}

}  // namespace detail

EstimateTimes estimate_times(const PathIndex& index, std::span<const NodeId> hosts, const Request& request,
                             const BackgroundLoad& background) {
  const Estimate e = evaluate_for(index, hosts, request, background, {}, ModelOptions{}, Detail::TimesOnly).estimate;
  return {e.time_s, e.ideal_time_s};
}

Estimate estimate(const PathIndex& index, std::span<const NodeId> hosts, const Request& request,
                  const BackgroundLoad& background, const ModelOptions& options) {
  return detail::evaluate(index, hosts, request, background, {}, options).estimate;
}

LinkLoad ring_load(const PathIndex& index, std::span<const NodeId> hosts, const Request& request) {
  check_options(request, ModelOptions{});
  const Allocation al = allocate(index, hosts, request.gpus_per_host);
  const int N = al.size();
  if (N < 2) return LinkLoad(index, al.host);
  const double edge = ring_edge_bytes(request.collective, N * request.gpus_per_host, request.bytes);
  return LinkLoad(index, al, ring_traffic(index, al, edge, request.collective == Collective::Broadcast));
}

}  // namespace topo
