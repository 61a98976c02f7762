#include "topology/diff.h"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "topology/classify.h"

namespace topo {
namespace {

// A cable end, and a cable as its two ends in a fixed order.
using End = std::pair<std::string, int>;
using CableKey = std::pair<End, End>;

std::map<CableKey, LinkId> cables_of(const Fabric& f) {
  std::map<CableKey, LinkId> out;
  for (auto e : boost::make_iterator_range(boost::edges(f.graph()))) {
    const Link& l = f.link(e);
    if (l.kind != LinkKind::Cable) continue;
    End a{f.node(l.end_a).id, l.port_a}, b{f.node(l.end_b).id, l.port_b};
    if (b < a) std::swap(a, b);
    out.emplace(CableKey{std::move(a), std::move(b)}, e);
  }
  return out;
}

// True when node `v` of `f` went with a host or switch that `other` lacks,
// so that its cables need no line of their own.
bool owner_missing(const Fabric& f, NodeId v, const Fabric& other) {
  const Node& n = f.node(v);
  if (n.kind == NodeKind::Switch) return !other.find(n.id);
  if (n.kind == NodeKind::Hca) return !other.find_host(n.host);
  return false;
}

int cable_count(const Fabric& f, NodeId v) {
  int n = 0;
  for (auto e : boost::make_iterator_range(boost::out_edges(v, f.graph())))
    n += f.link(e).kind == LinkKind::Cable;
  return n;
}

std::string host_sentence(const Fabric& f, NodeId h) {
  std::vector<NodeId> hcas = f.hcas_of(h);
  std::vector<std::string> leaves;
  for (NodeId leaf : f.leaves_of(h)) leaves.push_back(f.node(leaf).name);
  std::string where = leaves.empty() ? "cabled to no switch" : fmt::format("on {}", fmt::join(leaves, ", "));
  return fmt::format("{} HCA{}, {}", hcas.size(), hcas.size() == 1 ? "" : "s", where);
}

std::string rate_sentence(const Link& before, const Link& after) {
  const LinkRate &b = before.rate, &a = after.rate;
  std::vector<std::string> parts;
  if (lanes(a.width) != lanes(b.width))
    parts.push_back(fmt::format("width {} from {} to {}", lanes(a.width) < lanes(b.width) ? "narrowed" : "widened",
                                name(b.width), name(a.width)));
  if (a.speed != b.speed)
    parts.push_back(fmt::format("speed {} from {} to {}",
                                LinkRate{LinkWidth::X1, a.speed}.gbps() < LinkRate{LinkWidth::X1, b.speed}.gbps()
                                    ? "dropped"
                                    : "rose",
                                name(b.speed), name(a.speed)));
  std::string out = fmt::format("{}: {:g} -> {:g} Gb/s", fmt::join(parts, " and "), b.gbps(), a.gbps());
  if (before.degraded && !after.degraded)
    out += fmt::format("; restored to {}, the usual rate of {} links", a.str(), name(after.tier));
  else if (after.degraded)
    out += fmt::format("; {} links are {}", name(after.tier), after.expected.str());
  return out;
}

}  // namespace

std::string_view name(ChangeKind k) {
  switch (k) {
    case ChangeKind::HostAdded: return "host_added";
    case ChangeKind::HostGone: return "host_gone";
    case ChangeKind::SwitchAdded: return "switch_added";
    case ChangeKind::SwitchGone: return "switch_gone";
    case ChangeKind::SwitchLevelChanged: return "switch_level_changed";
    case ChangeKind::LinkAdded: return "link_added";
    case ChangeKind::LinkGone: return "link_gone";
    case ChangeKind::LinkSlower: return "link_slower";
    case ChangeKind::LinkFaster: return "link_faster";
    case ChangeKind::LinkStateChanged: return "link_state_changed";
  }
  return "?";
}

std::vector<FabricChange> diff(const Fabric& before, const Fabric& after) {
  std::vector<FabricChange> out;

  for (NodeId h : before.hosts())
    if (!after.find_host(before.node(h).name))
      out.push_back({ChangeKind::HostGone, before.node(h).name,
                     fmt::format("host is gone (it had {})", host_sentence(before, h))});
  for (NodeId h : after.hosts())
    if (!before.find_host(after.node(h).name))
      out.push_back(
          {ChangeKind::HostAdded, after.node(h).name, fmt::format("new host with {}", host_sentence(after, h))});

  for (NodeId s : before.switches())
    if (!after.find(before.node(s).id)) {
      const Node& n = before.node(s);
      int cables = cable_count(before, s);
      out.push_back({ChangeKind::SwitchGone, n.name,
                     fmt::format("{} switch is gone, and its {} cable{} with it", name(n.level), cables,
                                 cables == 1 ? "" : "s")});
    }
  for (NodeId s : after.switches()) {
    const Node& n = after.node(s);
    auto old = before.find(n.id);
    if (!old) {
      int cables = cable_count(after, s);
      out.push_back({ChangeKind::SwitchAdded, n.name,
                     fmt::format("new {} switch with {} cable{}", name(n.level), cables, cables == 1 ? "" : "s")});
    } else if (before.node(*old).kind == NodeKind::Switch && before.node(*old).level != n.level) {
      out.push_back({ChangeKind::SwitchLevelChanged, n.name,
                     fmt::format("level changed from {} to {}", name(before.node(*old).level), name(n.level))});
    }
  }

  const auto old_cables = cables_of(before), new_cables = cables_of(after);
  // Walk the fabrics' own edge order so the output follows the graph, not the map's key order.
  for (auto e : boost::make_iterator_range(boost::edges(before.graph()))) {
    const Link& l = before.link(e);
    if (l.kind != LinkKind::Cable) continue;
    End a{before.node(l.end_a).id, l.port_a}, b{before.node(l.end_b).id, l.port_b};
    if (b < a) std::swap(a, b);
    auto it = new_cables.find({a, b});
    if (it == new_cables.end()) {
      if (owner_missing(before, l.end_a, after) || owner_missing(before, l.end_b, after)) continue;
      out.push_back({ChangeKind::LinkGone, describe_link(before, e),
                     fmt::format("cable is gone (it ran at {}, {}): unplugged, or neither end sees the other",
                                 l.rate.str(), name(l.state))});
      continue;
    }
    const Link& n = after.link(it->second);
    std::string subject = describe_link(after, it->second);
    if (n.rate != l.rate) {
      bool slower = n.rate.gbps() < l.rate.gbps() || (n.rate.gbps() == l.rate.gbps() && n.degraded);
      out.push_back({slower ? ChangeKind::LinkSlower : ChangeKind::LinkFaster, subject, rate_sentence(l, n)});
    }
    if (n.state != l.state)
      out.push_back({ChangeKind::LinkStateChanged, subject,
                     fmt::format("port state went from {} to {}", name(l.state), name(n.state))});
  }
  for (auto e : boost::make_iterator_range(boost::edges(after.graph()))) {
    const Link& l = after.link(e);
    if (l.kind != LinkKind::Cable) continue;
    End a{after.node(l.end_a).id, l.port_a}, b{after.node(l.end_b).id, l.port_b};
    if (b < a) std::swap(a, b);
    if (old_cables.contains({a, b})) continue;
    if (owner_missing(after, l.end_a, before) || owner_missing(after, l.end_b, before)) continue;
    out.push_back({ChangeKind::LinkAdded, describe_link(after, e),
                   fmt::format("new cable at {}, {}", l.rate.str(), name(l.state))});
  }
  return out;
}

}  // namespace topo
