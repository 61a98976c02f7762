#include "tools/view/fabric_scene.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "topology/hostlist.h"

namespace topo::view {
namespace {

constexpr std::string_view kDegraded = "#ff7f0e";
constexpr std::string_view kDown = "#d62728";
constexpr std::string_view kIdle = "#9e9e9e";
constexpr size_t kTooltipCables = 12;  // cables named in a bundle's tooltip
constexpr std::array<std::string_view, 6> kRingColours = {"#1f77b4", "#9467bd", "#e377c2",
                                                          "#17becf", "#8c564b", "#bcbd22"};

int rank_of(Level level) {
  switch (level) {
    case Level::Core: return 0;
    case Level::Spine: return 1;
    case Level::Leaf: return 2;
    case Level::Unknown: return 1;
  }
  return 1;
}

std::string cable_text(const Fabric& f, const Link& l) {
  return fmt::format("{}:{} <-> {}:{} {}{}", f.node(l.end_a).name, l.port_a, f.node(l.end_b).name, l.port_b,
                     l.rate.str(), l.state != PortState::Active ? fmt::format(" {}", name(l.state))
                                    : l.degraded                  ? fmt::format(" degraded (expected {})", l.expected.str())
                                                                  : "");
}

// Cables between one pair of boxes, drawn as one line.
struct Bundle {
  std::string upper, lower;  // box ids
  int cables = 0, degraded = 0, down = 0;
  double capacity_gbps = 0, load_gbps = 0, peak = 0;  // peak: busiest cable's utilisation
  std::vector<std::string> names;
};

// Which switches and hosts the picture shows.
struct Shown {
  std::vector<bool> node;  // by NodeId
  std::vector<NodeId> leaves;
  bool expanded = false;
};

Shown choose(const Fabric& f, const FabricPicture& p) {
  Shown s;
  s.node.assign(f.node_count(), false);
  auto neighbours_above = [&](NodeId sw, Level at) {
    for (auto [e, end] = boost::out_edges(sw, f.graph()); e != end; ++e) {
      NodeId other = f.peer(*e, sw);
      if (f.node(other).kind == NodeKind::Switch && f.node(other).level == at) s.node[other] = true;
    }
  };
  if (p.leaf) {
    if (*p.leaf >= f.node_count() || f.node(*p.leaf).kind != NodeKind::Switch || f.node(*p.leaf).level != Level::Leaf)
      throw std::invalid_argument("the node to zoom into is not a leaf");
    s.node[*p.leaf] = true;
    s.leaves.push_back(*p.leaf);
    neighbours_above(*p.leaf, Level::Spine);
    neighbours_above(*p.leaf, Level::Core);
  } else {
    bool any = false;
    for (NodeId sw : f.switches()) {
      const Node& n = f.node(sw);
      if (n.level != Level::Leaf) continue;
      if (p.pod && n.pod != *p.pod) continue;
      s.node[sw] = true;
      s.leaves.push_back(sw);
      any = true;
    }
    if (p.pod && !any) throw std::invalid_argument(fmt::format("the fabric has no pod {}", *p.pod));
    if (p.pod) {
      for (NodeId leaf : s.leaves) neighbours_above(leaf, Level::Spine);
      for (NodeId sw : f.switches())
        if (s.node[sw] && f.node(sw).level == Level::Spine) neighbours_above(sw, Level::Core);
    } else {
      for (NodeId sw : f.switches()) s.node[sw] = true;
    }
  }
  size_t hosts = 0;
  std::set<NodeId> seen;
  for (NodeId leaf : s.leaves)
    for (NodeId h : f.hosts_under(leaf)) seen.insert(h);
  hosts = seen.size();
  s.expanded = p.leaf.has_value() || hosts <= static_cast<size_t>(std::max(0, p.expand_hosts));
  for (NodeId h : seen) s.node[h] = true;
  return s;
}

std::string switch_box_id(const Fabric& f, NodeId sw) {
  return safe_id(fmt::format("sw{}_", f.switch_index(sw)), f.node(sw).name);
}
std::string host_box_id(const Fabric& f, NodeId host) { return safe_id("host_", f.node(host).name); }
std::string group_box_id(const Fabric& f, NodeId leaf) { return "hosts_" + switch_box_id(f, leaf); }

}  // namespace

std::string load_colour(double u) {
  if (!(u > 0)) return std::string(kIdle);
  if (u >= 1) return "#7f0000";
  // green (0.0) -> yellow (0.5) -> red (1.0)
  double r = u < 0.5 ? 2 * u : 1, g = u < 0.5 ? 1 : 2 * (1 - u);
  return fmt::format("#{:02x}{:02x}{:02x}", static_cast<int>(40 + 200 * r), static_cast<int>(40 + 160 * g), 40);
}

Scene fabric_scene(const Fabric& f, const FabricPicture& p) {
  Scene scene;
  scene.layout = Layout::Tree;
  scene.title = p.title.empty() ? f.source() : p.title;
  Shown shown = choose(f, p);
  bool with_pods = f.summary().pods > 1 && !p.leaf;
  bool with_load = !p.cable_gbps.empty();

  // Busy hosts and the jobs on them.
  std::vector<int> busy(f.node_count(), 0);
  for (const JobOnFabric& job : p.jobs)
    for (NodeId h : job.ring)
      if (h < busy.size()) ++busy[h];

  // Pods as groups.
  std::set<int> pods;
  if (with_pods)
    for (NodeId leaf : shown.leaves) pods.insert(f.node(leaf).pod);
  for (int pod : pods) scene.groups.push_back({fmt::format("pod{}", pod), fmt::format("pod {}", pod), "pod", "#bbbbbb"});
  auto group_of = [&](const Node& n) {
    return with_pods && pods.contains(n.pod) && n.level != Level::Core ? fmt::format("pod{}", n.pod) : std::string();
  };

  // Switches.
  int leaves = 0, spines = 0, cores = 0;
  for (NodeId sw : f.switches()) {
    if (!shown.node[sw]) continue;
    const Node& n = f.node(sw);
    Box b;
    b.id = switch_box_id(f, sw);
    b.lines.push_back(n.name);
    std::string level(name(n.level));
    b.css_class = "switch " + level;
    b.rank = rank_of(n.level);
    b.style = "filled,rounded";
    if (n.level == Level::Leaf) {
      ++leaves;
      b.fill = "#e8f0fb";
      if (n.oversubscription() > 1.001) b.lines.push_back(fmt::format("{:.3g}:1", n.oversubscription()));
    } else if (n.level == Level::Spine) {
      ++spines;
      b.fill = "#fdf2e0";
    } else {
      ++cores;
      b.fill = "#f3e8f8";
    }
    b.tooltip = fmt::format("{} {} ({} ports{})", level, n.name, n.ports, n.pod >= 0 ? fmt::format(", pod {}", n.pod) : "");
    // Pod groups hold the leaves (and the spines of a three-tier pod, whose
    // pod is set); a spine shared by every leaf stays outside.
    if (n.level == Level::Leaf || (n.level == Level::Spine && f.summary().cores > 0)) b.group = group_of(n);
    scene.boxes.push_back(std::move(b));
  }

  // Hosts: one by one, or one box per leaf.
  std::map<NodeId, std::string> host_box;  // host -> the box it is drawn in
  if (shown.expanded) {
    for (NodeId leaf : shown.leaves)
      for (NodeId h : f.hosts_under(leaf)) {
        if (host_box.contains(h)) continue;
        const Node& n = f.node(h);
        Box b;
        b.id = host_box_id(f, h);
        b.lines.push_back(n.name);
        b.css_class = busy[h] ? "host busy" : "host";
        b.fill = busy[h] ? "#c7e9c0" : "white";
        b.rank = 3;
        b.font_size = 10;
        b.tooltip = fmt::format("host {}{}", n.name, busy[h] ? fmt::format(", {} job(s) running", busy[h]) : "");
        b.group = group_of(f.node(leaf));
        host_box[h] = b.id;
        scene.boxes.push_back(std::move(b));
      }
  } else {
    for (NodeId leaf : shown.leaves) {
      std::vector<std::string> names;
      int busy_hosts = 0;
      std::set<int> rails;
      for (NodeId h : f.hosts_under(leaf)) {
        names.push_back(f.node(h).name);
        if (busy[h]) ++busy_hosts;
        if (!host_box.contains(h)) host_box[h] = group_box_id(f, leaf);
      }
      for (auto [e, end] = boost::out_edges(leaf, f.graph()); e != end; ++e) {
        const Node& other = f.node(f.peer(*e, leaf));
        if (other.kind == NodeKind::Hca && other.rail >= 0) rails.insert(other.rail);
      }
      if (names.empty()) continue;
      Box b;
      b.id = group_box_id(f, leaf);
      b.lines.push_back(fmt::format("{} hosts", names.size()));
      if (busy_hosts) b.lines.push_back(fmt::format("{} busy", busy_hosts));
      if (f.summary().rail_optimized && rails.size() == 1) b.lines.push_back(fmt::format("rail {}", *rails.begin()));
      b.tooltip = fmt::format("under {}: {}", f.node(leaf).name, compress_hostlist(names));
      b.css_class = "hosts";
      b.shape = "box";
      b.font_size = 9;
      double share = static_cast<double>(busy_hosts) / static_cast<double>(names.size());
      b.fill = busy_hosts == 0 ? "#f7f7f7" : share < 0.5 ? "#e5f5e0" : share < 1 ? "#c7e9c0" : "#a1d99b";
      b.rank = 3;
      b.group = group_of(f.node(leaf));
      scene.boxes.push_back(std::move(b));
    }
  }

  // Cables, bundled per pair of boxes.
  std::map<std::pair<std::string, std::string>, Bundle> bundles;
  for (LinkId e : f.cables()) {
    const Link& l = f.link(e);
    NodeId a = l.end_a, b = l.end_b;
    const Node &na = f.node(a), &nb = f.node(b);
    std::string upper, lower;
    if (na.kind == NodeKind::Switch && nb.kind == NodeKind::Switch) {
      if (!shown.node[a] || !shown.node[b]) continue;
      bool a_up = rank_of(na.level) < rank_of(nb.level) ||
                  (rank_of(na.level) == rank_of(nb.level) && f.switch_index(a) < f.switch_index(b));
      upper = switch_box_id(f, a_up ? a : b);
      lower = switch_box_id(f, a_up ? b : a);
    } else {
      NodeId sw = na.kind == NodeKind::Switch ? a : b, hca = na.kind == NodeKind::Switch ? b : a;
      if (f.node(hca).kind != NodeKind::Hca || !shown.node[sw]) continue;
      std::optional<NodeId> host = f.find_host(f.node(hca).host);
      if (!host || !shown.node[*host]) continue;
      upper = switch_box_id(f, sw);
      lower = shown.expanded ? host_box_id(f, *host) : group_box_id(f, sw);
    }
    Bundle& bundle = bundles[{upper, lower}];
    bundle.upper = upper;
    bundle.lower = lower;
    ++bundle.cables;
    if (l.state != PortState::Active) ++bundle.down;
    else if (l.degraded) ++bundle.degraded;
    bundle.capacity_gbps += l.gbps();
    if (with_load && l.id >= 0 && static_cast<size_t>(l.id) < p.cable_gbps.size()) {
      double load = p.cable_gbps[l.id];
      bundle.load_gbps += load;
      if (load > 0) bundle.peak = std::max(bundle.peak, l.gbps() > 0 ? load / l.gbps() : 1.0);
    }
    bool faulty = l.state != PortState::Active || l.degraded;
    // Faulty cables are named first: they are what the tooltip is for.
    if (faulty) bundle.names.insert(bundle.names.begin(), cable_text(f, l));
    else if (bundle.names.size() < kTooltipCables) bundle.names.push_back(cable_text(f, l));
  }
  int degraded_lines = 0, down_lines = 0;
  for (auto& [key, b] : bundles) {
    Line line;
    line.from = b.upper;
    line.to = b.lower;
    line.id = "cable_" + b.upper + "_" + b.lower;
    std::string css = "cable";
    std::vector<std::string> label;
    if (b.cables > 1) label.push_back(fmt::format("x{}", b.cables));
    if (b.down) {
      css += " down";
      line.colour = kDown;
      line.style = "dotted";
      line.width = 2;
      ++down_lines;
      if (p.health_labels || b.cables > 1) label.push_back(fmt::format("{} down", b.down));
    } else if (b.degraded) {
      css += " degraded";
      line.colour = kDegraded;
      line.style = "dashed";
      line.width = 2;
      ++degraded_lines;
      if (p.health_labels || b.cables > 1) label.push_back(fmt::format("{} degraded", b.degraded));
    }
    if (with_load && b.load_gbps > 0) {
      css += " loaded";
      line.colour = load_colour(b.peak);
      line.width = 1 + 3 * std::min(b.peak, 1.0);
      label.push_back(fmt::format("{:.0f}%", 100 * b.peak));
    }
    line.css_class = css;
    line.label = fmt::format("{}", fmt::join(label, " "));
    size_t more = b.names.size() > kTooltipCables ? b.names.size() - kTooltipCables : 0;
    if (more) b.names.resize(kTooltipCables);
    line.tooltip = fmt::format("{} cable{}, {:.0f} Gb/s{}: {}{}", b.cables, b.cables == 1 ? "" : "s", b.capacity_gbps,
                               with_load ? fmt::format(", load {:.0f} Gb/s, busiest {:.0f}%", b.load_gbps, 100 * b.peak)
                                         : "",
                               fmt::join(b.names, "; "),
                               b.cables > static_cast<int>(b.names.size()) ? fmt::format("; ... {} more", b.cables - static_cast<int>(b.names.size())) : "");
    scene.lines.push_back(std::move(line));
  }

  // Rings over the tree.
  size_t ring_index = 0;
  for (const std::string& id : p.rings) {
    auto job = std::find_if(p.jobs.begin(), p.jobs.end(), [&](const JobOnFabric& j) { return j.id == id; });
    if (job == p.jobs.end() || job->ring.size() < 2) continue;
    std::string colour(kRingColours[ring_index++ % kRingColours.size()]);
    std::map<std::pair<std::string, std::string>, std::vector<std::string>> hops;
    std::vector<std::pair<std::string, std::string>> order;
    size_t inside = 0;
    size_t n = job->ring.size();
    for (size_t i = 0; i < n; ++i) {
      NodeId a = job->ring[i], b = job->ring[(i + 1) % n];
      auto fa = host_box.find(a), fb = host_box.find(b);
      if (fa == host_box.end() || fb == host_box.end()) continue;
      if (fa->second == fb->second) {
        ++inside;
        continue;
      }
      auto key = std::make_pair(fa->second, fb->second);
      if (!hops.contains(key)) order.push_back(key);
      hops[key].push_back(fmt::format("{}: {} -> {}", i + 1, f.node(a).name, f.node(b).name));
    }
    std::string job_class = safe_id("job_", id);
    for (size_t k = 0; k < order.size(); ++k) {
      const std::vector<std::string>& steps = hops[order[k]];
      Line line;
      line.from = order[k].first;
      line.to = order[k].second;
      line.id = fmt::format("ring_{}_{}", job_class, k + 1);
      line.css_class = "ring " + job_class;
      line.colour = colour;
      line.width = 2.5;
      line.style = "bold";
      line.arrow = true;
      line.shapes_layout = false;
      line.label = steps.size() > 1 ? fmt::format("{} hops", steps.size()) : steps.front().substr(0, steps.front().find(':'));
      line.tooltip = fmt::format("job {} ring: {}", id, fmt::join(steps, "; "));
      scene.lines.push_back(std::move(line));
    }
    scene.legend.push_back(fmt::format("job {}: ring of {} hosts in {} arrows (numbered by ring step){}", id, n,
                                       order.size(), inside ? fmt::format(", {} steps inside a box", inside) : ""));
  }

  std::string zoom = p.leaf ? fmt::format(" (leaf {})", f.node(*p.leaf).name) : p.pod ? fmt::format(" (pod {})", *p.pod) : "";
  scene.legend.insert(scene.legend.begin(),
                      fmt::format("{} cores, {} spines, {} leaves, {} hosts{}{}", cores, spines, leaves, host_box.size(),
                                  shown.expanded ? "" : " (one box per leaf)", zoom));
  scene.legend.insert(scene.legend.begin() + 1,
                      fmt::format("cables: grey ok{}; orange dashed degraded ({}), red dotted down ({})",
                                  with_load ? ", green to red by the running jobs' load" : "", degraded_lines,
                                  down_lines));
  return scene;
}

}  // namespace topo::view
