// topoctl path --from HOST --to HOST: the cables one flow takes.
//
// A flow leaves the source host on the HCA of one rail (the first, or
// --rail N) and ends at the destination host's HCA of the same rail (its
// first HCA when it has none on that rail), as NCCL pairs rails. Every hop
// is one cable in the direction of travel, named by the node it leaves and
// that node's port, as ibtracert lists them: the first hop leaves the
// source HCA ({"hca": ..., "out_port": ...}), the others leave switches
// ({"switch": ..., "out_port": ...}); the last reaches the destination HCA.
//
// Static routing: the one path the switches' tables give
// (routing/route.h). Adaptive routing: every shortest up/down path, each
// with the share of the flow it carries when every switch spreads the flow
// evenly over the cables that lie on one (as comm_model's PathIndex does).
#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fabric/switch_ranks.h"
#include "routing/route.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/input.h"

namespace topoctl {
namespace {

using nlohmann::json;
using topo::Fabric;
using topo::LinkId;
using topo::NodeId;

struct Hop {
  NodeId from = 0;
  int out_port = 0;
  LinkId cable;
};

struct Path {
  double share = 1;
  std::vector<Hop> hops;
};

struct Endpoints {
  NodeId from_host = 0, to_host = 0;
  NodeId source = 0, destination = 0;  // HCA ports
};

NodeId host_named(const Fabric& f, const std::string& host, std::string_view where) {
  auto h = f.find_host(host);
  if (!h) throw std::invalid_argument(fmt::format("no host '{}' in {}", host, where));
  return *h;
}

// The source HCA of `rail` (the first when rail < 0) and the destination's HCA of the same rail.
Endpoints endpoints(const Fabric& f, const std::string& from, const std::string& to, int rail, std::string_view where) {
  Endpoints e{host_named(f, from, where), host_named(f, to, where)};
  if (e.from_host == e.to_host) throw std::invalid_argument(fmt::format("--from and --to are both {}", from));
  std::vector<NodeId> src = f.hcas_of(e.from_host), dst = f.hcas_of(e.to_host);
  if (src.empty()) throw std::invalid_argument(fmt::format("host {} has no HCA", from));
  if (dst.empty()) throw std::invalid_argument(fmt::format("host {} has no HCA", to));
  auto on_rail = [&](const std::vector<NodeId>& hcas, int r) -> std::optional<NodeId> {
    for (NodeId h : hcas)
      if (f.node(h).rail == r) return h;
    return std::nullopt;
  };
  if (rail >= 0) {
    auto s = on_rail(src, rail);
    if (!s) throw std::invalid_argument(fmt::format("host {} has no HCA on rail {}", from, rail));
    e.source = *s;
  } else {
    e.source = src.front();
  }
  e.destination = on_rail(dst, f.node(e.source).rail).value_or(dst.front());
  return e;
}

// The Active cable of an HCA port and the switch at its far end.
std::pair<LinkId, NodeId> hca_cable(const Fabric& f, NodeId hca) {
  for (auto e : boost::make_iterator_range(boost::out_edges(hca, f.graph()))) {
    const topo::Link& l = f.link(e);
    if (l.kind == topo::LinkKind::Cable && l.state == topo::PortState::Active) return {e, f.peer(e, hca)};
  }
  throw std::invalid_argument(fmt::format("{} has no Active cable", f.node(hca).name));
}

Path static_path(const Fabric& f, const Endpoints& ends) {
  topo::StaticRoute route = topo::trace_static_route(f, ends.source, ends.destination);
  const topo::Node &s = f.node(ends.source), &d = f.node(ends.destination);
  if (route.status != topo::RouteStatus::Ok) {
    std::string at = route.stuck_at == ends.source ? s.name : f.node(route.stuck_at).name;
    throw std::invalid_argument(fmt::format("no route from {} (LID {}) to {} (LID {}) under {}: {} at {}", s.name,
                                            s.lid, d.name, d.lid, topo::routing_name(f.routing()),
                                            topo::name(route.status), at));
  }
  Path p;
  for (const topo::RouteHop& h : route.hops) p.hops.push_back({h.from, h.out_port, h.cable});
  return p;
}

// Shortest up/down paths between two leaves over Active cables
// (fabric/switch_ranks.h), each cable of a switch in port order.
class UpDown {
 public:
  UpDown(const Fabric& f, NodeId to_leaf) : ranks_(f, topo::RankCables::Active), hops_(ranks_.hops_to(to_leaf)) {}

  // Every path from `leaf` to the destination leaf, at most `limit` of them;
  // `total` counts them all.
  std::vector<Path> paths(NodeId leaf, size_t limit, double& total) const {
    std::vector<Path> out;
    if (hops_.updown[leaf] == topo::SwitchRanks::kNoPath) return out;
    std::map<std::pair<NodeId, bool>, double> memo;
    total = count(leaf, true, memo);
    Path path;
    walk(leaf, true, path, limit, out);
    return out;
  }

 private:
  int left(NodeId s, bool climbing) const { return climbing ? hops_.updown[s] : hops_.down[s]; }

  // The cables that continue a shortest path from `s`, climbing or not yet.
  std::vector<std::tuple<int, LinkId, NodeId, bool>> next(NodeId s, bool climbing) const {
    const int hops = left(s, climbing);
    std::vector<std::tuple<int, LinkId, NodeId, bool>> out;
    for (const auto& [port, e, n] : ranks_.switch_cables(s)) {
      if (climbing && ranks_.one_above(n, s) && hops_.updown[n] == hops - 1) out.emplace_back(port, e, n, true);
      if (ranks_.one_above(s, n) && hops_.down[n] == hops - 1) out.emplace_back(port, e, n, false);
    }
    return out;
  }

  double count(NodeId s, bool climbing, std::map<std::pair<NodeId, bool>, double>& memo) const {
    if (left(s, climbing) == 0) return 1;
    auto [it, fresh] = memo.emplace(std::pair{s, climbing}, 0.0);
    if (!fresh) return it->second;
    double n = 0;
    for (const auto& [port, e, to, up] : next(s, climbing)) n += count(to, up, memo);
    memo[{s, climbing}] = n;
    return n;
  }

  void walk(NodeId s, bool climbing, Path& path, size_t limit, std::vector<Path>& out) const {
    if (out.size() >= limit) return;
    if (left(s, climbing) == 0) {
      out.push_back(path);
      return;
    }
    auto options = next(s, climbing);
    for (const auto& [port, e, to, up] : options) {
      Path deeper = path;
      deeper.share /= static_cast<double>(options.size());
      deeper.hops.push_back({s, port, e});
      walk(to, up, deeper, limit, out);
    }
  }

  topo::SwitchRanks ranks_;
  topo::SwitchRanks::Hops hops_;
};

std::vector<Path> adaptive_paths(const Fabric& f, const Endpoints& ends, size_t limit, double& total) {
  auto [first, from_leaf] = hca_cable(f, ends.source);
  auto [last, to_leaf] = hca_cable(f, ends.destination);
  UpDown updown(f, to_leaf);
  std::vector<Path> paths = updown.paths(from_leaf, limit, total);
  if (paths.empty())
    throw std::invalid_argument(fmt::format("no up/down path from {} to {}: {} cannot reach {}",
                                            f.node(ends.source).name, f.node(ends.destination).name,
                                            f.node(from_leaf).name, f.node(to_leaf).name));
  for (Path& p : paths) {
    p.hops.insert(p.hops.begin(), Hop{ends.source, f.local_port(first, ends.source), first});
    p.hops.push_back({to_leaf, f.local_port(last, to_leaf), last});
  }
  return paths;
}

json hops_json(const Fabric& f, const Path& path) {
  json out = json::array();
  for (const Hop& h : path.hops) {
    const topo::Node& n = f.node(h.from);
    NodeId to = f.peer(h.cable, h.from);
    const topo::Link& l = f.link(h.cable);
    json hop = {{n.kind == topo::NodeKind::Switch ? "switch" : "hca", n.name},
                {"out_port", h.out_port},
                {"to", f.node(to).name},
                {"in_port", f.local_port(h.cable, to)},
                {"gbps", l.gbps()}};
    if (l.degraded) hop["degraded"] = true;
    out.push_back(std::move(hop));
  }
  return out;
}

void print_hops(const Fabric& f, const Path& path) {
  for (const Hop& h : path.hops) {
    NodeId to = f.peer(h.cable, h.from);
    const topo::Link& l = f.link(h.cable);
    fmt::print("  {:<20} port {:>3}  -> {}:{}  {}{}\n", f.node(h.from).name, h.out_port, f.node(to).name,
               f.local_port(h.cable, to), l.rate.str(), l.degraded ? " (degraded)" : "");
  }
}

struct PathOptions {
  FabricInput input;
  std::string from, to, routing;
  int rail = -1;
  size_t max_paths = 64;
  bool json = false;
};

void add_path_options(CLI::App& cmd, PathOptions& o) {
  add_input_options(cmd, o.input);
  cmd.add_option("--from", o.from, "the sending host")->required();
  cmd.add_option("--to", o.to, "the receiving host")->required();
  add_routing_option(cmd, o.routing);
  cmd.add_option("--rail", o.rail, "leave on the HCA of this rail (default: the host's first)");
  cmd.add_option("--max-paths", o.max_paths, "adaptive, ecmp: list at most this many equal paths")
      ->capture_default_str();
  cmd.add_flag("--json", o.json, "print JSON for scripts");
}

// Under static routing: the one path, as `out` plus its hops or in words.
void print_static_path(const PathOptions& o, const Fabric& f, const Endpoints& ends, json& out) {
  Path path = static_path(f, ends);
  if (o.json) {
    out["hops"] = hops_json(f, path);
    std::cout << out.dump(2) << "\n";
    return;
  }
  fmt::print("{} -> {}  routing {}  ({} cables)\n", o.from, o.to, topo::routing_name(f.routing()), path.hops.size());
  print_hops(f, path);
}

// Under adaptive routing or ECMP: the equal paths with their shares. ECMP
// hashes each QP onto one of the paths adaptive routing spreads over: the
// same paths, each QP's share of a run is one of them.
void print_equal_paths(const PathOptions& o, const Fabric& f, const Endpoints& ends, json& out) {
  double total = 0;
  std::vector<Path> paths = adaptive_paths(f, ends, o.max_paths, total);
  const bool ecmp = f.routing().is_ecmp();
  if (o.json) {
    if (ecmp) out["qps"] = f.routing().qps;
    out["path_count"] = static_cast<uint64_t>(total);
    out["paths"] = json::array();
    for (const Path& p : paths) out["paths"].push_back({{"share", p.share}, {"hops", hops_json(f, p)}});
    std::cout << out.dump(2) << "\n";
    return;
  }
  const std::string listed = paths.size() < total ? fmt::format(", the first {} listed", paths.size()) : "";
  if (ecmp)
    fmt::print(
        "{} -> {}  routing {}  ({:g} equal-cost path{}{}; {} hashed onto one of them per run, "
        "a share is its expectation)\n",
        o.from, o.to, topo::routing_name(f.routing()), total, total == 1 ? "" : "s", listed,
        f.routing().qps == 1 ? std::string("its one QP") : fmt::format("each of its {} QPs", f.routing().qps));
  else
    fmt::print("{} -> {}  routing adaptive  ({:g} equal path{}{})\n", o.from, o.to, total, total == 1 ? "" : "s",
               listed);
  for (size_t i = 0; i < paths.size(); ++i) {
    fmt::print("path {}  share {:.4g}\n", i + 1, paths[i].share);
    print_hops(f, paths[i]);
  }
}

}  // namespace

Run add_path(CLI::App& app) {
  auto opts = std::make_shared<PathOptions>();
  CLI::App* cmd = app.add_subcommand("path", "the cables a flow from one host to another takes, as the fabric routes");
  add_path_options(*cmd, *opts);
  return [opts] {
    const PathOptions& o = *opts;
    LoadedFabric loaded = load(o.input);
    Fabric& f = loaded.fabric;
    std::string where = loaded.snapshot ? fmt::format("snapshot {}", *loaded.snapshot) : f.source();
    if (!o.routing.empty()) apply_routing(f, o.routing, where);
    Endpoints ends = endpoints(f, o.from, o.to, o.rail, where);
    json out = {{"routing", topo::routing_name(f.routing())},
                {"from", o.from},
                {"to", o.to},
                {"source_hca", f.node(ends.source).name},
                {"destination_hca", f.node(ends.destination).name}};
    if (f.node(ends.source).rail >= 0) out["rail"] = f.node(ends.source).rail;
    if (loaded.snapshot) out["snapshot"] = *loaded.snapshot;
    if (f.routing().is_static())
      print_static_path(o, f, ends, out);
    else
      print_equal_paths(o, f, ends, out);
    return kOk;
  };
}

}  // namespace topoctl
