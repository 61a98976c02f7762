#include "routing/routing_check.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "routing/route.h"

namespace topo {

std::string_view name(RoutingFindingKind k) {
  switch (k) {
    case RoutingFindingKind::Unrouted:
      return "unrouted";
    case RoutingFindingKind::Loop:
      return "routing_loop";
    case RoutingFindingKind::OverShare:
      return "over_share";
    case RoutingFindingKind::DegradedRoute:
      return "degraded_route";
    case RoutingFindingKind::SingleSpine:
      return "single_spine";
  }
  return "?";
}

namespace {

// Findings of one kind are listed up to this many, then summed up in one.
constexpr size_t kListed = 20;

class Findings {
 public:
  void add(RoutingFindingKind kind, std::string subject, std::string detail) {
    size_t& n = count_[kind];
    if (n++ < kListed) out_.push_back({kind, std::move(subject), std::move(detail)});
  }
  std::vector<RoutingFinding> finish() {
    for (const auto& [kind, n] : count_)
      if (n > kListed)
        out_.push_back({kind, fmt::format("{} more", n - kListed),
                        fmt::format("{} findings of this kind in all; the first {} are listed", n, kListed)});
    return std::move(out_);
  }

 private:
  std::vector<RoutingFinding> out_;
  std::map<RoutingFindingKind, size_t> count_;
};

std::string cable_name(const Fabric& f, LinkId e, NodeId from) {
  NodeId to = f.peer(e, from);
  return fmt::format("{}:{} -> {}:{}", f.node(from).name, f.local_port(e, from), f.node(to).name, f.local_port(e, to));
}

int level_rank(Level l) {
  switch (l) {
    case Level::Leaf:
      return 0;
    case Level::Spine:
      return 1;
    case Level::Core:
      return 2;
    case Level::Unknown:
      return -1;
  }
  return -1;
}

// A switch's up cables and how many destinations it sends out of each.
void check_shares(const Fabric& f, NodeId sw, Findings& out) {
  const Routing& r = f.routing();
  size_t s = static_cast<size_t>(f.switch_index(sw));
  std::map<int, LinkId> up;  // by port
  for (auto e : boost::make_iterator_range(boost::out_edges(sw, f.graph()))) {
    const Link& l = f.link(e);
    NodeId p = f.peer(e, sw);
    if (l.kind != LinkKind::Cable || l.state != PortState::Active || f.node(p).kind != NodeKind::Switch) continue;
    if (level_rank(f.node(p).level) > level_rank(f.node(sw).level)) up.emplace(f.local_port(e, sw), e);
  }
  if (up.size() < 2) return;
  std::map<int, size_t> carried;
  size_t total = 0;
  for (NodeId hca : f.hcas()) {
    uint32_t lid = f.node(hca).lid;
    if (lid == 0) continue;
    uint8_t p = r.out_port(s, lid);
    if (up.contains(p)) {
      ++carried[p];
      ++total;
    }
  }
  double gbps = 0;
  for (const auto& [port, e] : up) gbps += f.link(e).gbps();
  if (total == 0 || gbps <= 0) return;
  for (const auto& [port, e] : up) {
    const Link& l = f.link(e);
    double share = static_cast<double>(total) * l.gbps() / gbps;
    size_t n = carried[port];
    if (static_cast<double>(n) <= std::ceil(share - 1e-9)) continue;
    if (l.degraded)
      out.add(RoutingFindingKind::DegradedRoute, cable_name(f, e, sw),
              fmt::format("degraded cable ({}, expected {}) carries {} of {} destinations sent up from {}; its "
                          "speed would give it {:.1f}",
                          l.rate.str(), l.expected.str(), n, total, f.node(sw).name, share));
    else
      out.add(RoutingFindingKind::OverShare, cable_name(f, e, sw),
              fmt::format("carries {} of {} destinations sent up from {}; its share is {:.1f}", n, total,
                          f.node(sw).name, share));
  }
}

}  // namespace

std::vector<RoutingFinding> check_routing(const Fabric& fabric) {
  if (!fabric.routing().is_static()) return {};
  Findings out;
  const auto leaves = fabric.switches_at(Level::Leaf);
  const size_t spines = fabric.switches_at(Level::Spine).size();
  // Per destination leaf: the spines its destinations are entered through.
  // One spine per destination is how destination-mod-k tables route (ftree,
  // dfsssp) and no fault; one spine for all of a leaf's destinations puts
  // everything sent to that leaf on one spine's cable.
  std::map<NodeId, std::set<NodeId>> entered_via;
  std::map<NodeId, size_t> crossing_routes;
  for (NodeId hca : fabric.hcas()) {
    const Node& dst = fabric.node(hca);
    if (dst.lid == 0) {
      out.add(RoutingFindingKind::Unrouted, dst.name, "has no LID: no table can route to it");
      continue;
    }
    for (NodeId leaf : leaves) {
      StaticRoute route = trace_static_route(fabric, leaf, hca);
      std::string subject = fmt::format("{} -> {}", fabric.node(leaf).name, dst.name);
      if (route.status == RouteStatus::Loop) {
        out.add(RoutingFindingKind::Loop, subject, fmt::format("the route to LID {} loops", dst.lid));
        continue;
      }
      if (route.status != RouteStatus::Ok) {
        out.add(RoutingFindingKind::Unrouted, subject,
                fmt::format("{} at {} (LID {})", name(route.status), fabric.node(route.stuck_at).name, dst.lid));
        continue;
      }
      std::optional<NodeId> entering;  // the last spine on the way: the one above the destination's leaf
      for (const RouteHop& hop : route.hops)
        if (fabric.node(hop.from).level == Level::Spine) entering = hop.from;
      if (!entering) continue;
      NodeId dst_leaf = route.hops.back().from;
      entered_via[dst_leaf].insert(*entering);
      ++crossing_routes[dst_leaf];
    }
  }
  for (const auto& [leaf, via] : entered_via)
    if (spines > 1 && via.size() == 1 && crossing_routes[leaf] > 1)
      out.add(RoutingFindingKind::SingleSpine, fabric.node(leaf).name,
              fmt::format("every route from another leaf enters it through {} only, one of {} spines",
                          fabric.node(*via.begin()).name, spines));
  for (NodeId sw : fabric.switches()) check_shares(fabric, sw, out);
  return out.finish();
}

}  // namespace topo
