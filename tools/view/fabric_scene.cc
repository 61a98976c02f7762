#include "tools/view/fabric_scene.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "common/hostlist.h"
#include "tools/view/html.h"

namespace topo::view {
namespace {

constexpr std::string_view kDegraded = "#ff7f0e";
constexpr std::string_view kDown = "#d62728";
constexpr std::string_view kIdle = "#9e9e9e";
constexpr size_t kTooltipCables = 12;  // cables named in a bundle's tooltip
constexpr std::array<std::string_view, 6> kRingColours = {"#1f77b4", "#9467bd", "#e377c2",
                                                          "#17becf", "#8c564b", "#bcbd22"};
// Past this many leaves side by side a row is wider than a screen at a
// readable font: leaves are wrapped into rows, or whole pods collapsed.
constexpr size_t kLeavesPerRow = 16;
constexpr size_t kPodsPerRow = 4;
// Past this many spines (or cores) in a row, a tier is one box.
constexpr size_t kSwitchesInOneRow = 24;

// Rows of the tree, top to bottom.
enum Rank : int { kCoreRank = 0, kSpineRank = 1, kLeafRank = 2, kHostRank = 3 };

int rank_of(Level level) {
  switch (level) {
    case Level::Core:
      return kCoreRank;
    case Level::Spine:
      return kSpineRank;
    case Level::Leaf:
      return kLeafRank;
    case Level::Unknown:
      return kSpineRank;
  }
  return kSpineRank;
}

// How the hosts are drawn, from the most detail to the least.
enum class HostsAs {
  OneByOne,  // a box per host
  PerLeaf,   // a box per leaf under it, with counts
  InLeaf,    // counted inside the leaf's own box (leaves wrapped into rows)
  InPod,     // counted inside one box per pod (a three-tier overview)
};

std::string cable_text(const Fabric& f, const Link& l) {
  return fmt::format("{}:{} <-> {}:{} {}{}", f.node(l.end_a).name, l.port_a, f.node(l.end_b).name, l.port_b,
                     l.rate.str(),
                     l.state != PortState::Active ? fmt::format(" {}", name(l.state))
                     : l.degraded                 ? fmt::format(" degraded (expected {})", l.expected.str())
                                                  : "");
}

bool faulty(const Link& l) { return l.state != PortState::Active || l.degraded; }

// Cables between one pair of boxes, drawn as one line.
struct Bundle {
  std::string upper, lower;  // box ids
  int cables = 0, degraded = 0, down = 0;
  double capacity_gbps = 0, load_gbps = 0, peak = 0;  // peak: busiest cable's utilisation
  std::vector<std::string> names;
  bool quiet() const { return degraded == 0 && down == 0 && load_gbps <= 0; }
};

// Which switches and hosts the picture shows, and how.
struct Shown {
  std::vector<bool> node;  // by NodeId
  std::vector<NodeId> leaves;
  HostsAs hosts = HostsAs::PerLeaf;
};

// The picture being built: what it shows and which box each node is in.
struct Drawing {
  Drawing(const Fabric& fabric, const FabricPicture& picture, Shown what)
      : f(fabric), p(picture), shown(std::move(what)) {}
  const Fabric& f;
  const FabricPicture& p;
  Shown shown;
  bool with_pods = false, with_load = false;
  std::vector<int> busy;             // by NodeId: running jobs on the host
  std::vector<bool> sick;            // by NodeId: a host with a degraded or down cable
  std::vector<std::string> box;      // by NodeId: the box it is drawn in; empty: not drawn
  std::map<std::string, int> ranks;  // box id -> its row, to orient lines downwards
  Scene scene;
  int degraded_lines = 0, down_lines = 0, quiet_lines = 0;
  std::vector<int> domain;  // by NodeId: the NVLink domain it is drawn in, -1: none or not drawn so
};

void mark_above(const Fabric& f, NodeId sw, Level at, std::vector<bool>& shown) {
  for (auto [e, end] = boost::out_edges(sw, f.graph()); e != end; ++e) {
    NodeId other = f.peer(*e, sw);
    if (f.node(other).kind == NodeKind::Switch && f.node(other).level == at) shown[other] = true;
  }
}

void choose_leaf(const Fabric& f, NodeId leaf, Shown& s) {
  if (leaf >= f.node_count() || f.node(leaf).kind != NodeKind::Switch || f.node(leaf).level != Level::Leaf)
    throw std::invalid_argument("the node to zoom into is not a leaf");
  s.node[leaf] = true;
  s.leaves.push_back(leaf);
  mark_above(f, leaf, Level::Spine, s.node);
  mark_above(f, leaf, Level::Core, s.node);
}

void choose_leaves(const Fabric& f, std::optional<int> pod, Shown& s) {
  for (NodeId sw : f.switches()) {
    const Node& n = f.node(sw);
    if (n.level != Level::Leaf || (pod && n.pod != *pod)) continue;
    s.node[sw] = true;
    s.leaves.push_back(sw);
  }
  if (!pod) {
    for (NodeId sw : f.switches()) s.node[sw] = true;
    return;
  }
  if (s.leaves.empty()) throw std::invalid_argument(fmt::format("the fabric has no pod {}", *pod));
  for (NodeId leaf : s.leaves) mark_above(f, leaf, Level::Spine, s.node);
  for (NodeId sw : f.switches())
    if (s.node[sw] && f.node(sw).level == Level::Spine) mark_above(f, sw, Level::Core, s.node);
}

Shown choose(const Fabric& f, const FabricPicture& p) {
  Shown s;
  s.node.assign(f.node_count(), false);
  if (p.leaf)
    choose_leaf(f, *p.leaf, s);
  else
    choose_leaves(f, p.pod, s);
  std::set<NodeId> hosts;
  for (NodeId leaf : s.leaves)
    for (NodeId h : f.hosts_under(leaf)) hosts.insert(h);
  for (NodeId h : hosts) s.node[h] = true;
  bool overview = !p.leaf && !p.pod;
  if (p.leaf || hosts.size() <= static_cast<size_t>(std::max(0, p.expand_hosts)))
    s.hosts = HostsAs::OneByOne;
  else if (s.leaves.size() <= p.leaves_in_one_row)
    s.hosts = HostsAs::PerLeaf;
  else if (overview && f.summary().pods > 1)
    s.hosts = HostsAs::InPod;
  else
    s.hosts = HostsAs::InLeaf;
  return s;
}

void hold_under(Drawing& d, const std::string& upper, const std::string& lower);

std::string switch_box_id(const Fabric& f, NodeId sw) {
  return safe_id(fmt::format("sw{}_", f.switch_index(sw)), f.node(sw).name);
}
std::string host_box_id(const Fabric& f, NodeId host) { return safe_id("host_", f.node(host).name); }
std::string hosts_box_id(const Fabric& f, NodeId leaf) { return "hosts_" + switch_box_id(f, leaf); }
std::string domain_box_id(int domain) { return fmt::format("domain_{}", domain); }
std::string pod_box_id(int pod) { return fmt::format("pod_{}", pod); }
std::string pod_group_id(int pod) { return fmt::format("pod{}", pod); }
std::string tier_box_id(Level level) { return fmt::format("tier_{}", name(level)); }

std::string zoom_link(const FabricPicture& p, std::string_view key, std::string_view value) {
  return p.zoom_link.empty() ? std::string() : fmt::format("{}{}={}", p.zoom_link, key, url_encode(value));
}

Box& add_box(Drawing& d, Box b) {
  d.ranks[b.id] = b.rank;
  d.scene.boxes.push_back(std::move(b));
  return d.scene.boxes.back();
}

// Hosts under some leaves, counted as a collapsed box shows them.
struct HostCount {
  std::vector<std::string> names;
  int busy = 0, sick = 0;
  std::set<int> rails;
  std::vector<std::string> lines() const {
    std::vector<std::string> out = {fmt::format("{} hosts", names.size()),
                                    fmt::format("{} busy, {} free", busy, static_cast<int>(names.size()) - busy)};
    if (sick) out.push_back(fmt::format("{} sick", sick));
    return out;
  }
  std::string fill() const {
    double share = names.empty() ? 0 : static_cast<double>(busy) / static_cast<double>(names.size());
    return busy == 0 ? "#f7f7f7" : share < 0.5 ? "#e5f5e0" : share < 1 ? "#c7e9c0" : "#a1d99b";
  }
};

// `outside_domains`: only the hosts not drawn in a domain's box.
HostCount count_hosts(const Drawing& d, std::span<const NodeId> leaves, bool outside_domains = false) {
  HostCount c;
  std::set<NodeId> seen;
  for (NodeId leaf : leaves) {
    for (NodeId h : d.f.hosts_under(leaf)) {
      if (outside_domains && d.domain[h] >= 0) continue;
      if (!seen.insert(h).second) continue;
      c.names.push_back(d.f.node(h).name);
      if (d.busy[h]) ++c.busy;
      if (d.sick[h]) ++c.sick;
    }
    for (auto [e, end] = boost::out_edges(leaf, d.f.graph()); e != end; ++e) {
      const Node& other = d.f.node(d.f.peer(*e, leaf));
      if (other.kind == NodeKind::Hca && other.rail >= 0) c.rails.insert(other.rail);
    }
  }
  return c;
}

void add_pod_groups(Drawing& d) {
  if (!d.with_pods) return;
  std::set<int> pods;
  for (NodeId leaf : d.shown.leaves) pods.insert(d.f.node(leaf).pod);
  for (int pod : pods) d.scene.groups.push_back({pod_group_id(pod), fmt::format("pod {}", pod), "pod", "#bbbbbb"});
}

std::string group_of(const Drawing& d, const Node& n) {
  return d.with_pods && n.level != Level::Core ? pod_group_id(n.pod) : std::string();
}

Box switch_box(const Drawing& d, NodeId sw) {
  const Node& n = d.f.node(sw);
  Box b;
  b.id = switch_box_id(d.f, sw);
  b.lines.push_back(n.name);
  std::string level(name(n.level));
  b.css_class = "switch " + level;
  b.rank = rank_of(n.level);
  b.style = "filled,rounded";
  b.fill = n.level == Level::Leaf ? "#e8f0fb" : n.level == Level::Spine ? "#fdf2e0" : "#f3e8f8";
  if (n.level == Level::Leaf && n.oversubscription() > 1.001)
    b.lines.push_back(fmt::format("{:.3g}:1", n.oversubscription()));
  b.tooltip =
      fmt::format("{} {} ({} ports{})", level, n.name, n.ports, n.pod >= 0 ? fmt::format(", pod {}", n.pod) : "");
  // Pod groups hold the leaves (and the spines of a three-tier pod, whose
  // pod is set); a spine shared by every leaf stays outside.
  if (n.level == Level::Leaf || (n.level == Level::Spine && d.f.summary().cores > 0)) b.group = group_of(d, n);
  if (n.level == Level::Leaf) b.link = zoom_link(d.p, "leaf", n.name);
  return b;
}

// A leaf drawn with its hosts counted inside it (leaves wrapped into rows).
void count_into_leaf(const Drawing& d, NodeId leaf, Box& b) {
  HostCount c = count_hosts(d, std::span<const NodeId>(&leaf, 1));
  for (std::string& line : c.lines()) b.lines.push_back(std::move(line));
  b.css_class += " with_hosts";
  b.fill = c.fill();
  if (c.sick) {
    b.css_class += " sick";
    b.colour = std::string(kDegraded);
  }
  b.tooltip += fmt::format("; hosts {}", compress_hostlist(c.names));
}

// One box for a whole tier of switches too many for a row.
void add_tier_box(Drawing& d, Level level, const std::vector<NodeId>& switches) {
  std::vector<std::string> names;
  for (NodeId sw : switches) names.push_back(d.f.node(sw).name);
  Box b;
  b.id = tier_box_id(level);
  b.lines = {fmt::format("{} {}s", switches.size(), name(level))};
  b.css_class = fmt::format("switch {} tier", name(level));
  b.rank = rank_of(level);
  b.style = "filled,rounded";
  b.fill = level == Level::Spine ? "#fdf2e0" : "#f3e8f8";
  b.width_in = 6;
  b.height_in = 0.4;
  b.tooltip = compress_hostlist(names);
  add_box(d, std::move(b));
  for (NodeId sw : switches) d.box[sw] = tier_box_id(level);
}

// A three-tier overview's box for a whole pod: its spines, leaves and hosts.
void add_pod_box(Drawing& d, int pod, const std::vector<NodeId>& members) {
  std::vector<NodeId> leaves;
  int spines = 0;
  for (NodeId sw : members) {
    if (d.f.node(sw).level == Level::Leaf)
      leaves.push_back(sw);
    else
      ++spines;
  }
  HostCount c = count_hosts(d, leaves);
  Box b;
  b.id = pod_box_id(pod);
  b.lines = {fmt::format("pod {}", pod), fmt::format("{} leaves, {} spines", leaves.size(), spines)};
  for (std::string& line : c.lines()) b.lines.push_back(std::move(line));
  b.css_class = c.sick ? "pod_box sick" : "pod_box";
  b.colour = c.sick ? std::string(kDegraded) : "#333333";
  b.fill = c.fill();
  b.rank = kLeafRank;
  b.style = "filled,rounded";
  b.tooltip = fmt::format("pod {}: hosts {}", pod, compress_hostlist(c.names));
  b.link = zoom_link(d.p, "pod", std::to_string(pod));
  add_box(d, std::move(b));
  for (NodeId sw : members) d.box[sw] = pod_box_id(pod);
  for (NodeId leaf : leaves)
    for (NodeId h : d.f.hosts_under(leaf)) d.box[h] = pod_box_id(pod);
}

void add_switches(Drawing& d) {
  std::map<Level, std::vector<NodeId>> by_level;
  std::map<int, std::vector<NodeId>> by_pod;  // pods collapsed: their spines and leaves
  for (NodeId sw : d.f.switches()) {
    if (!d.shown.node[sw]) continue;
    const Node& n = d.f.node(sw);
    if (d.shown.hosts == HostsAs::InPod && n.level != Level::Core && n.pod >= 0)
      by_pod[n.pod].push_back(sw);
    else
      by_level[n.level].push_back(sw);
  }
  for (auto& [pod, members] : by_pod) add_pod_box(d, pod, members);
  for (auto& [level, switches] : by_level) {
    // Above collapsed pods every core reaches every pod: one core box
    // keeps those lines to one per pod.
    bool one_box = switches.size() > kSwitchesInOneRow || (d.shown.hosts == HostsAs::InPod && level == Level::Core);
    if (level != Level::Leaf && one_box) {
      add_tier_box(d, level, switches);
      continue;
    }
    for (NodeId sw : switches) {
      Box b = switch_box(d, sw);
      if (level == Level::Leaf && d.shown.hosts == HostsAs::InLeaf) count_into_leaf(d, sw, b);
      d.box[sw] = b.id;
      add_box(d, std::move(b));
    }
  }
}

void add_host_boxes(Drawing& d) {
  for (NodeId leaf : d.shown.leaves)
    for (NodeId h : d.f.hosts_under(leaf)) {
      if (!d.box[h].empty()) continue;
      const Node& n = d.f.node(h);
      Box b;
      b.id = host_box_id(d.f, h);
      b.lines.push_back(n.name);
      b.css_class = std::string(d.busy[h] ? "host busy" : "host") + (d.sick[h] ? " sick" : "");
      b.fill = d.busy[h] ? "#c7e9c0" : "white";
      b.rank = kHostRank;
      b.font_size = 10;
      b.tooltip = fmt::format("host {}{}", n.name, d.busy[h] ? fmt::format(", {} job(s) running", d.busy[h]) : "");
      int domain = d.f.domains().domain_of(d.f.index().host_id(h));
      if (domain >= 0) b.tooltip += ", NVLink domain " + d.f.domains().key(domain).str();
      b.group = group_of(d, d.f.node(leaf));
      d.box[h] = b.id;
      add_box(d, std::move(b));
    }
}

void add_hosts_per_leaf(Drawing& d) {
  for (NodeId leaf : d.shown.leaves) {
    HostCount c = count_hosts(d, std::span<const NodeId>(&leaf, 1), true);
    if (c.names.empty()) continue;
    for (NodeId h : d.f.hosts_under(leaf))
      if (d.box[h].empty()) d.box[h] = hosts_box_id(d.f, leaf);
    Box b;
    b.id = hosts_box_id(d.f, leaf);
    b.lines = c.lines();
    if (d.f.summary().rail_optimized && c.rails.size() == 1)
      b.lines.push_back(fmt::format("rail {}", *c.rails.begin()));
    b.tooltip = fmt::format("under {}: {}", d.f.node(leaf).name, compress_hostlist(c.names));
    b.css_class = c.sick ? "hosts sick" : "hosts";
    if (c.sick) b.colour = std::string(kDegraded);
    b.font_size = 9;
    b.fill = c.fill();
    b.rank = kHostRank;
    b.group = group_of(d, d.f.node(leaf));
    add_box(d, std::move(b));
  }
}

// The short name of a domain for its box: a block's name, or the end of
// its ClusterUUID and its CliqueId.
std::string domain_label(const DomainKey& key) {
  if (key.cluster_uuid.empty()) return key.clique_id;
  std::string_view uuid = key.cluster_uuid;
  return fmt::format("..{}.{}", uuid.substr(uuid.size() > 6 ? uuid.size() - 6 : 0), key.clique_id);
}

// The pod group a domain's box sits in: its leaves' pod when they share one.
std::string domain_group(const Drawing& d, const std::vector<NodeId>& hosts) {
  std::set<int> pods;
  for (NodeId h : hosts)
    for (NodeId leaf : d.f.leaves_of(h)) pods.insert(d.f.node(leaf).pod);
  return pods.size() == 1 ? group_of(d, d.f.node(d.f.leaves_of(hosts.front()).front())) : std::string();
}

void add_domain_box(Drawing& d, int domain, const std::vector<NodeId>& hosts) {
  HostCount c;
  for (NodeId h : hosts) {
    c.names.push_back(d.f.node(h).name);
    c.busy += d.busy[h] ? 1 : 0;
    c.sick += d.sick[h] ? 1 : 0;
  }
  const DomainKey& key = d.f.domains().key(domain);
  Box b;
  b.id = domain_box_id(domain);
  b.lines = {"NVLink " + domain_label(key)};
  for (std::string& line : c.lines()) b.lines.push_back(std::move(line));
  b.css_class = c.sick ? "domain sick" : "domain";
  b.colour = c.sick ? std::string(kDegraded) : "#6a3d9a";
  b.fill = c.fill();
  b.style = "filled,rounded";
  b.font_size = 9;
  b.rank = kHostRank;
  b.group = domain_group(d, hosts);
  b.tooltip = fmt::format("NVLink domain {}: {}", key.str(), compress_hostlist(c.names));
  add_box(d, std::move(b));
  for (NodeId h : hosts) {
    d.box[h] = domain_box_id(domain);
    d.domain[h] = domain;
  }
}

// Racks of an NVLink domain as boxes under their leaves; past a row's worth
// they wrap into rows as leaves do.
void add_domains(Drawing& d) {
  const NvlinkDomains& domains = d.f.domains();
  if (domains.empty() || d.p.leaf || d.shown.hosts == HostsAs::InPod) return;
  std::map<int, std::vector<NodeId>> members;
  for (NodeId h : d.f.hosts()) {
    if (!d.shown.node[h]) continue;
    int domain = domains.domain_of(d.f.index().host_id(h));
    if (domain >= 0) members[domain].push_back(h);
  }
  std::vector<std::string> row;
  for (auto& [domain, hosts] : members) {
    add_domain_box(d, domain, hosts);
    row.push_back(domain_box_id(domain));
  }
  for (size_t i = kLeavesPerRow; i < row.size(); ++i) hold_under(d, row[i - kLeavesPerRow], row[i]);
  if (row.size() > kLeavesPerRow)
    for (Box& b : d.scene.boxes)
      if (std::find(row.begin() + kLeavesPerRow, row.end(), b.id) != row.end()) b.rank = -1;
}

void add_hosts(Drawing& d) {
  add_domains(d);
  if (d.shown.hosts == HostsAs::OneByOne) return add_host_boxes(d);
  if (d.shown.hosts == HostsAs::PerLeaf) return add_hosts_per_leaf(d);
  // InLeaf and InPod: the hosts are counted in their leaf's or pod's box.
  for (NodeId leaf : d.shown.leaves)
    for (NodeId h : d.f.hosts_under(leaf))
      if (d.box[h].empty()) d.box[h] = d.box[leaf];
}

// The boxes a cable joins, upper first; nullopt when it is not drawn or
// runs inside one box.
std::optional<std::pair<std::string, std::string>> cable_ends(const Drawing& d, const Link& l) {
  NodeId a = l.end_a, b = l.end_b;
  const Node &na = d.f.node(a), &nb = d.f.node(b);
  if (na.kind == NodeKind::Switch && nb.kind == NodeKind::Switch) {
    if (d.box[a].empty() || d.box[b].empty() || d.box[a] == d.box[b]) return std::nullopt;
    bool a_up = d.ranks.at(d.box[a]) < d.ranks.at(d.box[b]) ||
                (d.ranks.at(d.box[a]) == d.ranks.at(d.box[b]) && d.box[a] < d.box[b]);
    return a_up ? std::pair{d.box[a], d.box[b]} : std::pair{d.box[b], d.box[a]};
  }
  NodeId sw = na.kind == NodeKind::Switch ? a : b, hca = na.kind == NodeKind::Switch ? b : a;
  if (d.f.node(hca).kind != NodeKind::Hca || d.box[sw].empty()) return std::nullopt;
  std::optional<NodeId> host = d.f.find_host(d.f.node(hca).host);
  if (!host || d.box[*host].empty()) return std::nullopt;
  // A host on several leaves (rails) is drawn under each: its cable goes to
  // the box of the hosts under this switch.
  std::string lower = d.domain[*host] >= 0                 ? d.box[*host]
                      : d.shown.hosts == HostsAs::OneByOne ? d.box[*host]
                      : d.shown.hosts == HostsAs::PerLeaf  ? hosts_box_id(d.f, sw)
                                                           : d.box[sw];
  if (lower == d.box[sw]) return std::nullopt;
  return std::pair{d.box[sw], lower};
}

void add_to_bundle(const Drawing& d, const Link& l, Bundle& bundle) {
  ++bundle.cables;
  if (l.state != PortState::Active)
    ++bundle.down;
  else if (l.degraded)
    ++bundle.degraded;
  bundle.capacity_gbps += l.gbps();
  if (d.with_load && l.id >= 0 && static_cast<size_t>(l.id) < d.p.cable_gbps.size()) {
    double load = d.p.cable_gbps[l.id];
    bundle.load_gbps += load;
    if (load > 0) bundle.peak = std::max(bundle.peak, l.gbps() > 0 ? load / l.gbps() : 1.0);
  }
  // Faulty cables are named first: they are what the tooltip is for.
  if (faulty(l))
    bundle.names.insert(bundle.names.begin(), cable_text(d.f, l));
  else if (bundle.names.size() < kTooltipCables)
    bundle.names.push_back(cable_text(d.f, l));
}

// Past this many lines, a healthy idle bundle's cable count is left to its
// tooltip: a label per line spreads the layout more than it tells.
constexpr size_t kLabelledLines = 40;

Line cable_line(Drawing& d, Bundle& b, bool count_label) {
  Line line;
  line.from = b.upper;
  line.to = b.lower;
  line.id = "cable_" + b.upper + "_" + b.lower;
  std::string css = "cable";
  std::vector<std::string> label;
  if (b.cables > 1 && (count_label || b.down || b.degraded)) label.push_back(fmt::format("x{}", b.cables));
  if (b.down || b.degraded) {
    css += b.down ? " down" : " degraded";
    line.colour = b.down ? kDown : kDegraded;
    line.style = b.down ? "dotted" : "dashed";
    line.width = 2;
    ++(b.down ? d.down_lines : d.degraded_lines);
    if (d.p.health_labels || b.cables > 1)
      label.push_back(b.down ? fmt::format("{} down", b.down) : fmt::format("{} degraded", b.degraded));
  }
  if (d.with_load && b.load_gbps > 0) {
    css += " loaded";
    // A fault keeps its colour under load, so it is seen at a glance; the
    // width still says how loaded.
    if (!b.down && !b.degraded) line.colour = load_colour(b.peak);
    line.width = std::max(line.width, 1 + 3 * std::min(b.peak, 1.0));
    // Past kLabelledLines the colour says the load and the tooltip the
    // figure: a label on every loaded line spreads the rows apart.
    if (count_label) label.push_back(fmt::format("{:.0f}%", 100 * b.peak));
  }
  line.css_class = css;
  line.label = fmt::format("{}", fmt::join(label, " "));
  int named = static_cast<int>(std::min(b.names.size(), kTooltipCables));
  b.names.resize(static_cast<size_t>(named));
  line.tooltip =
      fmt::format("{} cable{}, {:.0f} Gb/s{}: {}{}", b.cables, b.cables == 1 ? "" : "s", b.capacity_gbps,
                  d.with_load ? fmt::format(", load {:.0f} Gb/s, busiest {:.0f}%", b.load_gbps, 100 * b.peak) : "",
                  fmt::join(b.names, "; "), b.cables > named ? fmt::format("; ... {} more", b.cables - named) : "");
  return line;
}

// Cables, bundled per pair of boxes. With leaves wrapped into rows, a
// healthy idle uplink is not drawn: thousands of lines would hide the
// few that matter, and the legend counts what was left out.
void add_cables(Drawing& d) {
  std::map<std::pair<std::string, std::string>, Bundle> bundles;
  for (LinkId e : d.f.cables()) {
    const Link& l = d.f.link(e);
    auto ends = cable_ends(d, l);
    if (!ends) continue;
    Bundle& bundle = bundles[*ends];
    bundle.upper = ends->first;
    bundle.lower = ends->second;
    add_to_bundle(d, l, bundle);
  }
  bool leave_out_quiet = d.shown.hosts == HostsAs::InLeaf;
  std::vector<Bundle*> drawn;
  for (auto& [key, b] : bundles) {
    if (leave_out_quiet && b.quiet() && d.ranks.at(b.lower) == kLeafRank)
      ++d.quiet_lines;
    else
      drawn.push_back(&b);
  }
  for (Bundle* b : drawn) d.scene.lines.push_back(cable_line(d, *b, drawn.size() <= kLabelledLines));
}

// An invisible line that holds `lower` a row under `upper`.
void hold_under(Drawing& d, const std::string& upper, const std::string& lower) {
  Line l;
  l.from = upper;
  l.to = lower;
  l.id = "row_" + upper + "_" + lower;
  l.css_class = "layout";
  l.style = "invis";
  d.scene.lines.push_back(std::move(l));
}

// Boxes of the leaf row wrapped into rows of `per_row`: each box is held
// under the one a row before it, the first row under the switches above.
// Their boxes carry no rank (a rank is one row).
void wrap(Drawing& d, const std::vector<std::string>& row, size_t per_row) {
  std::string above, core;  // the first spine, else the first core
  for (const Box& b : d.scene.boxes) {
    if (above.empty() && b.rank == kSpineRank) above = b.id;
    if (core.empty() && b.rank == kCoreRank) core = b.id;
  }
  if (above.empty()) above = core;
  for (Box& b : d.scene.boxes)
    if (std::find(row.begin(), row.end(), b.id) != row.end()) b.rank = -1;
  for (size_t i = 0; i < row.size(); ++i) {
    if (i >= per_row)
      hold_under(d, row[i - per_row], row[i]);
    else if (!above.empty())
      hold_under(d, above, row[i]);
  }
}

void wrap_rows(Drawing& d) {
  if (d.shown.hosts == HostsAs::InPod) {
    std::vector<std::string> pods;
    for (const Box& b : d.scene.boxes)
      if (b.id.starts_with("pod_")) pods.push_back(b.id);
    if (pods.size() > kPodsPerRow) wrap(d, pods, kPodsPerRow);
  }
  if (d.shown.hosts != HostsAs::InLeaf) return;
  std::map<std::string, std::vector<std::string>> by_group;  // a pod's leaves wrap inside its group
  for (NodeId leaf : d.shown.leaves) by_group[group_of(d, d.f.node(leaf))].push_back(d.box[leaf]);
  for (auto& [group, leaves] : by_group) wrap(d, leaves, kLeavesPerRow);
}

// The box a ring step from `host` to `next` is drawn from. With hosts drawn
// one by one, a step to another leaf runs between the two leaves' boxes:
// it climbs through them, and the steps between the same two leaves then
// share one line.
std::string step_end(const Drawing& d, NodeId host, NodeId next) {
  if (d.shown.hosts != HostsAs::OneByOne) return d.box[host];
  std::vector<NodeId> mine = d.f.leaves_of(host), theirs = d.f.leaves_of(next);
  if (mine.empty() || theirs.empty() || mine.front() == theirs.front() || d.box[mine.front()].empty())
    return d.box[host];
  return d.box[mine.front()];
}

// A job's ring over the tree: one line per pair of boxes its steps cross,
// both directions bundled on one line with their counts, so that lines do
// not overlap; each step is named in the tooltip.
std::string add_ring(Drawing& d, const JobOnFabric& job, std::string_view colour) {
  struct Pair {
    std::string first, second;  // as first met in ring order
    std::vector<std::string> forth, back;
  };
  std::map<std::pair<std::string, std::string>, size_t> index;
  std::vector<Pair> pairs;
  size_t inside = 0, n = job.ring.size();
  for (size_t i = 0; i < n; ++i) {
    NodeId a = job.ring[i], b = job.ring[(i + 1) % n];
    if (a >= d.box.size() || b >= d.box.size() || d.box[a].empty() || d.box[b].empty()) continue;
    std::string from = step_end(d, a, b), to = step_end(d, b, a);
    if (from == to) {
      ++inside;
      continue;
    }
    auto key = std::minmax(from, to);
    auto [it, added] = index.try_emplace({key.first, key.second}, pairs.size());
    if (added) pairs.push_back({from, to, {}, {}});
    Pair& pair = pairs[it->second];
    (pair.first == from ? pair.forth : pair.back)
        .push_back(fmt::format("{}: {} -> {}", i + 1, d.f.node(a).name, d.f.node(b).name));
  }
  std::string job_class = safe_id("job_", job.id);
  for (size_t k = 0; k < pairs.size(); ++k) {
    const Pair& pair = pairs[k];
    Line line;
    line.from = pair.first;
    line.to = pair.second;
    line.id = fmt::format("ring_{}_{}", job_class, k + 1);
    line.css_class = "ring " + job_class;
    line.colour = colour;
    line.width = 2.5;
    line.style = "bold";
    line.arrow = true;
    line.arrow_back = !pair.back.empty();
    line.shapes_layout = false;
    auto steps = [](const std::vector<std::string>& s) {
      return s.size() == 1 ? "step " + s.front().substr(0, s.front().find(':')) : fmt::format("{} steps", s.size());
    };
    line.label =
        pair.back.empty() ? steps(pair.forth) : fmt::format("{} > / {} <", steps(pair.forth), steps(pair.back));
    std::vector<std::string> all = pair.forth;
    all.insert(all.end(), pair.back.begin(), pair.back.end());
    line.tooltip = fmt::format("job {} ring: {}", job.id, fmt::join(all, "; "));
    d.scene.lines.push_back(std::move(line));
  }
  return fmt::format(
      "job {}: ring of {} hosts in {} lines (steps in ring order; both ways on one line when it "
      "goes back){}",
      job.id, n, pairs.size(), inside ? fmt::format(", {} steps inside a box", inside) : "");
}

void add_rings(Drawing& d) {
  size_t ring_index = 0;
  for (const std::string& id : d.p.rings) {
    auto job = std::find_if(d.p.jobs.begin(), d.p.jobs.end(), [&](const JobOnFabric& j) { return j.id == id; });
    if (job == d.p.jobs.end() || job->ring.size() < 2) continue;
    d.scene.legend.push_back(add_ring(d, *job, kRingColours[ring_index++ % kRingColours.size()]));
  }
}

std::string shown_as(HostsAs hosts) {
  switch (hosts) {
    case HostsAs::OneByOne:
      return "";
    case HostsAs::PerLeaf:
      return " (one box per leaf)";
    case HostsAs::InLeaf:
      return fmt::format(" (counted in their leaf; leaves {} a row)", kLeavesPerRow);
    case HostsAs::InPod:
      return " (one box per pod: open a pod to see its leaves)";
  }
  return "";
}

void add_legend(Drawing& d) {
  std::map<Level, int> switches;
  for (NodeId sw : d.f.switches())
    if (d.shown.node[sw]) ++switches[d.f.node(sw).level];
  size_t hosts = 0;
  for (NodeId h : d.f.hosts()) hosts += d.shown.node[h] ? 1 : 0;
  std::string zoom = d.p.leaf  ? fmt::format(" (leaf {})", d.f.node(*d.p.leaf).name)
                     : d.p.pod ? fmt::format(" (pod {})", *d.p.pod)
                               : "";
  std::vector<std::string> head = {
      fmt::format("{} cores, {} spines, {} leaves, {} hosts{}{}", switches[Level::Core], switches[Level::Spine],
                  switches[Level::Leaf], hosts, shown_as(d.shown.hosts), zoom),
      fmt::format("cables: grey ok{}; orange dashed degraded ({}), red dotted down ({}){}",
                  d.with_load ? ", green to red by the running jobs' load" : "", d.degraded_lines, d.down_lines,
                  d.quiet_lines ? fmt::format("; {} healthy idle leaf uplink bundles not drawn", d.quiet_lines) : "")};
  size_t domains = std::count_if(d.scene.boxes.begin(), d.scene.boxes.end(),
                                 [](const Box& b) { return b.id.starts_with("domain_"); });
  if (domains)
    head.push_back(fmt::format("{} NVLink domain{} (racks): each one box under the leaves its hosts are on", domains,
                               domains == 1 ? "" : "s"));
  d.scene.legend.insert(d.scene.legend.begin(), head.begin(), head.end());
}

}  // namespace

std::vector<bool> sick_hosts(const Fabric& f) {
  std::vector<bool> sick(f.node_count(), false);
  for (LinkId e : f.cables()) {
    const Link& l = f.link(e);
    if (!faulty(l)) continue;
    for (NodeId end : {l.end_a, l.end_b})
      if (f.node(end).kind == NodeKind::Hca)
        if (std::optional<NodeId> h = f.find_host(f.node(end).host)) sick[*h] = true;
  }
  return sick;
}

std::string load_colour(double u) {
  if (!(u > 0)) return std::string(kIdle);
  if (u >= 1) return "#7f0000";
  // green (0.0) -> yellow (0.5) -> red (1.0)
  double r = u < 0.5 ? 2 * u : 1, g = u < 0.5 ? 1 : 2 * (1 - u);
  return fmt::format("#{:02x}{:02x}{:02x}", static_cast<int>(40 + 200 * r), static_cast<int>(40 + 160 * g), 40);
}

Scene fabric_scene(const Fabric& f, const FabricPicture& p) {
  Drawing d(f, p, choose(f, p));
  d.scene.layout = Layout::Tree;
  d.scene.title = p.title.empty() ? f.source() : p.title;
  d.with_pods = f.summary().pods > 1 && !p.leaf && d.shown.hosts != HostsAs::InPod;
  d.with_load = !p.cable_gbps.empty();
  d.busy.assign(f.node_count(), 0);
  for (const JobOnFabric& job : p.jobs)
    for (NodeId h : job.ring)
      if (h < d.busy.size()) ++d.busy[h];
  d.sick = sick_hosts(f);
  d.box.assign(f.node_count(), std::string());
  d.domain.assign(f.node_count(), -1);

  add_pod_groups(d);
  add_switches(d);
  add_hosts(d);
  add_cables(d);
  wrap_rows(d);
  add_rings(d);
  add_legend(d);
  return std::move(d.scene);
}

}  // namespace topo::view
