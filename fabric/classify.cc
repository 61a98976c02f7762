#include "fabric/classify.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <span>

#include <fmt/format.h>

#include "fabric/switch_ranks.h"

namespace topo {
namespace {

constexpr int kUnreached = std::numeric_limits<int>::max();

struct DisjointSets {
  std::vector<size_t> parent;
  explicit DisjointSets(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  size_t root(size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(size_t a, size_t b) { parent[root(a)] = root(b); }
};

// Each switch's height (Node::height): its rank over cables of any state,
// so that a cable going down moves no switch to another level.
void measure_heights(const Fabric& fabric, FabricGraph& g) {
  const SwitchRanks ranks(fabric, RankCables::Any);
  for (NodeId s : fabric.switches()) g[s].height = ranks.rank(s);
}

// A node's height for comparing ends: kUnreached where no leaf reaches it
// and for hosts and HCAs, above every switch.
int reach(const FabricGraph& g, NodeId v) { return g[v].height < 0 ? kUnreached : g[v].height; }

Level level_at(int distance) {
  if (distance == kUnreached) return Level::Unknown;
  return distance == 0 ? Level::Leaf : distance == 1 ? Level::Spine : Level::Core;
}

Tier tier_of(const Node& a, const Node& b) {
  if (a.kind == NodeKind::Hca || b.kind == NodeKind::Hca) return Tier::HostLeaf;
  auto lo = std::min(a.level, b.level), hi = std::max(a.level, b.level);
  if (lo == Level::Leaf && hi == Level::Spine) return Tier::LeafSpine;
  if (lo == Level::Spine && hi == Level::Core) return Tier::SpineCore;
  return Tier::Other;
}

// The most common rate of a tier; on a tie the faster one, since a fabric is
// built for its best links and the slower ones are the exceptions.
LinkRate usual_rate(const std::map<std::pair<int, int>, int>& counts) {
  LinkRate best;
  int best_count = -1;
  for (const auto& [key, count] : counts) {
    LinkRate r{static_cast<LinkWidth>(key.first), static_cast<LinkSpeed>(key.second)};
    if (count > best_count || (count == best_count && r.gbps() > best.gbps())) {
      best = r;
      best_count = count;
    }
  }
  return best;
}

bool slower_than(const LinkRate& r, const LinkRate& expected) {
  if (is_ethernet(r.speed) || is_ethernet(expected.speed)) return r.gbps() < expected.gbps();
  return lanes(r.width) < lanes(expected.width) || lane_gbps(r.speed) < lane_gbps(expected.speed);
}

int mode(const std::vector<int>& values) {
  std::map<int, int> counts;
  for (int v : values) ++counts[v];
  int best = 0, best_count = 0;
  for (auto [v, c] : counts)
    if (c > best_count || (c == best_count && v > best)) best = v, best_count = c;
  return best;
}

}  // namespace

LinkEnds ordered_ends(const Fabric& fabric, LinkId e) {
  const Link& l = fabric.link(e);
  auto rank = [&](NodeId v) {
    const Node& n = fabric.node(v);
    return std::make_pair(n.kind == NodeKind::Switch ? 1 + static_cast<int>(n.level) : 0, n.name);
  };
  if (rank(l.end_a) <= rank(l.end_b)) return {l.end_a, l.end_b, l.port_a, l.port_b};
  return {l.end_b, l.end_a, l.port_b, l.port_a};
}

std::string describe_link(const Fabric& fabric, LinkId e) {
  LinkEnds ends = ordered_ends(fabric, e);
  return fmt::format("{}:{} <-> {}:{}", fabric.node(ends.lower).name, ends.lower_port, fabric.node(ends.upper).name,
                     ends.upper_port);
}

namespace {

// Each switch's level from its distance to the nearest leaf; no bandwidth yet.
void level_switches(FabricGraph& g, std::span<const NodeId> switches, std::vector<Fault>& faults) {
  for (NodeId s : switches) {
    g[s].level = level_at(reach(g, s));
    g[s].down_gbps = g[s].up_gbps = 0;
    if (g[s].level == Level::Unknown)
      faults.push_back({FaultKind::IsolatedSwitch, g[s].name, "no host can reach this switch"});
  }
}

// Each cable's tier, the usual rate of its tier and whether it falls short of
// it, inactive cables; and every switch's bandwidth down and up.
void judge_cables(const Fabric& fabric, FabricGraph& g, std::vector<Fault>& faults) {
  std::map<Tier, std::map<std::pair<int, int>, int>> rate_counts;
  for (auto e : boost::make_iterator_range(boost::edges(g))) {
    Link& l = g[e];
    if (l.kind != LinkKind::Cable) continue;
    l.tier = tier_of(g[l.end_a], g[l.end_b]);
    if (l.state == PortState::Active)
      ++rate_counts[l.tier][{static_cast<int>(l.rate.width), static_cast<int>(l.rate.speed)}];
  }
  std::map<Tier, LinkRate> expected;
  for (const auto& [tier, counts] : rate_counts) expected[tier] = usual_rate(counts);

  for (auto e : boost::make_iterator_range(boost::edges(g))) {
    Link& l = g[e];
    if (l.kind != LinkKind::Cable) continue;
    l.expected = expected.contains(l.tier) ? expected[l.tier] : l.rate;
    l.degraded = l.state == PortState::Active && slower_than(l.rate, l.expected);
    if (l.state != PortState::Active)
      faults.push_back(
          {FaultKind::InactiveLink, describe_link(fabric, e), fmt::format("port state is {}", name(l.state))});
    else if (l.degraded)
      faults.push_back({FaultKind::DegradedLink, describe_link(fabric, e),
                        fmt::format("runs at {} ({:g} Gb/s); {} links are {} ({:g} Gb/s)", l.rate.str(), l.rate.gbps(),
                                    name(l.tier), l.expected.str(), l.expected.gbps())});
    for (auto [self, other] : {std::pair{l.end_a, l.end_b}, std::pair{l.end_b, l.end_a}}) {
      if (g[self].kind != NodeKind::Switch) continue;
      if (g[other].kind == NodeKind::Hca || reach(g, other) < reach(g, self))
        g[self].down_gbps += l.gbps();
      else if (reach(g, other) > reach(g, self) && reach(g, other) != kUnreached)
        g[self].up_gbps += l.gbps();
    }
  }
}

// Pods: leaves and spines that stay connected without the core. Returns how
// many there are.
int assign_pods(FabricGraph& g, std::span<const NodeId> switches) {
  DisjointSets sets(boost::num_vertices(g));
  for (auto e : boost::make_iterator_range(boost::edges(g))) {
    const Link& l = g[e];
    if (l.kind == LinkKind::Cable && g[l.end_a].kind == NodeKind::Switch && g[l.end_b].kind == NodeKind::Switch &&
        reach(g, l.end_a) <= 1 && reach(g, l.end_b) <= 1)
      sets.join(l.end_a, l.end_b);
  }
  std::map<size_t, int> pod_of_root;
  for (NodeId s : switches) {
    if (reach(g, s) > 1) continue;  // core switches and isolated ones belong to no pod
    auto [it, fresh] = pod_of_root.try_emplace(sets.root(s), static_cast<int>(pod_of_root.size()));
    g[s].pod = it->second;
  }
  return static_cast<int>(pod_of_root.size());
}

// Rails: an HCA's rail comes from its device name, else from its order in
// the host. Returns how many rails there are.
int assign_rails(const Fabric& fabric, FabricGraph& g) {
  for (NodeId h : fabric.hosts()) {
    std::vector<NodeId> hcas = fabric.hcas_of(h);
    for (size_t i = 0; i < hcas.size(); ++i)
      if (g[hcas[i]].rail < 0) g[hcas[i]].rail = static_cast<int>(i);
  }
  std::set<int> rails;
  for (NodeId hca : fabric.hcas()) rails.insert(g[hca].rail);
  return static_cast<int>(rails.size());
}

// Uplinks of each leaf and spine against the usual count of their level, and
// spread evenly over their parents.
void check_uplinks(const Fabric& fabric, std::vector<Fault>& faults) {
  const FabricGraph& g = fabric.graph();
  for (Level level : {Level::Leaf, Level::Spine}) {
    std::vector<NodeId> members;
    std::vector<int> counts;
    std::vector<std::map<NodeId, int>> per_parent;
    for (NodeId s : fabric.switches()) {
      if (g[s].level != level) continue;
      std::map<NodeId, int> parents;
      for (auto e : boost::make_iterator_range(boost::out_edges(s, g))) {
        NodeId p = boost::target(e, g);
        if (g[e].kind == LinkKind::Cable && g[p].kind == NodeKind::Switch && reach(g, p) > reach(g, s) &&
            reach(g, p) != kUnreached)
          ++parents[p];
      }
      int n = 0;
      for (auto [p, c] : parents) n += c;
      members.push_back(s);
      counts.push_back(n);
      per_parent.push_back(std::move(parents));
    }
    int usual = mode(counts);
    if (usual == 0) continue;  // the top level has no uplinks
    for (size_t i = 0; i < members.size(); ++i) {
      const Node& s = g[members[i]];
      if (counts[i] < usual)
        faults.push_back({FaultKind::MissingUplinks, s.name,
                          fmt::format("{} uplinks where other {} switches have {}", counts[i], name(level), usual)});
      auto [lo, hi] = std::minmax_element(per_parent[i].begin(), per_parent[i].end(),
                                          [](auto& a, auto& b) { return a.second < b.second; });
      if (!per_parent[i].empty() && lo->second != hi->second)
        faults.push_back({FaultKind::UnequalUplinks, s.name,
                          fmt::format("{} uplinks to {} but {} to {}", hi->second, g[hi->first].name, lo->second,
                                      g[lo->first].name)});
    }
  }
}

// Hosts outside the component that holds most hosts have no path to them.
void check_reach(const Fabric& fabric, std::vector<Fault>& faults) {
  const FabricGraph& g = fabric.graph();
  DisjointSets reach(boost::num_vertices(g));
  for (auto e : boost::make_iterator_range(boost::edges(g)))
    if (g[e].kind == LinkKind::Attachment || g[e].state == PortState::Active)
      reach.join(boost::source(e, g), boost::target(e, g));
  std::map<size_t, int> hosts_per_component;
  for (NodeId h : fabric.hosts()) ++hosts_per_component[reach.root(h)];
  size_t main_component = 0;
  int most = -1;
  for (auto [root, n] : hosts_per_component)
    if (n > most) main_component = root, most = n;
  for (NodeId h : fabric.hosts()) {
    if (fabric.leaves_of(h).empty())
      faults.push_back({FaultKind::UnreachableHost, g[h].name, "no HCA of this host is cabled"});
    else if (reach.root(h) != main_component)
      faults.push_back({FaultKind::UnreachableHost, g[h].name, "no path to the rest of the fabric's hosts"});
  }
}

FabricSummary summarize(const Fabric& fabric, int pods, int rails) {
  const FabricGraph& g = fabric.graph();
  FabricSummary sum;
  sum.hosts = static_cast<int>(fabric.hosts().size());
  sum.hcas = static_cast<int>(fabric.hcas().size());
  for (NodeId s : fabric.switches()) {
    sum.leaves += g[s].level == Level::Leaf;
    sum.spines += g[s].level == Level::Spine;
    sum.cores += g[s].level == Level::Core;
  }
  for (auto e : boost::make_iterator_range(boost::edges(g))) sum.links += g[e].kind == LinkKind::Cable;
  sum.pods = pods;
  sum.rails = rails;
  if (sum.rails > 1) {
    sum.rail_optimized = true;
    for (NodeId s : fabric.switches()) {
      if (g[s].level != Level::Leaf) continue;
      std::set<int> seen;
      for (auto e : boost::make_iterator_range(boost::out_edges(s, g)))
        if (g[boost::target(e, g)].kind == NodeKind::Hca) seen.insert(g[boost::target(e, g)].rail);
      if (seen.size() > 1) sum.rail_optimized = false;
    }
  }
  return sum;
}

}  // namespace

void classify(Fabric& fabric) {
  FabricGraph& g = *fabric.graph_;
  std::vector<Fault>& faults = fabric.faults_;
  faults.clear();
  measure_heights(fabric, g);
  level_switches(g, fabric.switches_, faults);
  judge_cables(fabric, g, faults);
  const int pods = assign_pods(g, fabric.switches_);
  const int rails = assign_rails(fabric, g);
  check_uplinks(fabric, faults);
  check_reach(fabric, faults);
  fabric.summary_ = summarize(fabric, pods, rails);
}

}  // namespace topo
