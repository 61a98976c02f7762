#include "fabric/diff.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabric/classify.h"

namespace topo {
namespace {

// A cable end, and a cable as its two ends in a fixed order.
using End = std::pair<std::string, int>;
using CableKey = std::pair<End, End>;

CableKey cable_key(const Fabric& f, const Link& l) {
  End a{f.node(l.end_a).id, l.port_a}, b{f.node(l.end_b).id, l.port_b};
  if (b < a) std::swap(a, b);
  return {std::move(a), std::move(b)};
}

std::map<CableKey, LinkId> cables_of(const Fabric& f) {
  std::map<CableKey, LinkId> out;
  for (auto e : boost::make_iterator_range(boost::edges(f.graph()))) {
    const Link& l = f.link(e);
    if (l.kind == LinkKind::Cable) out.emplace(cable_key(f, l), e);
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
  for (auto e : boost::make_iterator_range(boost::out_edges(v, f.graph()))) n += f.link(e).kind == LinkKind::Cable;
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
    parts.push_back(fmt::format(
        "speed {} from {} to {}",
        LinkRate{LinkWidth::X1, a.speed}.gbps() < LinkRate{LinkWidth::X1, b.speed}.gbps() ? "dropped" : "rose",
        name(b.speed), name(a.speed)));
  std::string out = fmt::format("{}: {:g} -> {:g} Gb/s", fmt::join(parts, " and "), b.gbps(), a.gbps());
  if (before.degraded && !after.degraded)
    out += fmt::format("; restored to {}, the usual rate of {} links", a.str(), name(after.tier));
  else if (after.degraded)
    out += fmt::format("; {} links are {}", name(after.tier), after.expected.str());
  return out;
}

std::string routing_sentence(const Routing& r) {
  if (!r.is_static()) return routing_name(r);
  std::string origin = r.emulated ? "emulated" : r.source.empty() ? "read" : r.source;
  return fmt::format("{} ({})", routing_name(r), origin);
}

std::string port_word(int port) { return port < 0 ? std::string("none") : std::to_string(port); }

// "3 of 32 destinations leave by another port: 9 -> 10 for 2, 10 -> none for 1"
std::string moves_sentence(const std::vector<RouteMove>& moves, int compared) {
  std::map<std::pair<int, int>, int> by_ports;
  for (const RouteMove& m : moves) ++by_ports[{m.before_port, m.after_port}];
  std::vector<std::pair<std::pair<int, int>, int>> ranked(by_ports.begin(), by_ports.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  for (const auto& [ports, count] : ranked)
    parts.push_back(fmt::format("{} -> {} for {}", port_word(ports.first), port_word(ports.second), count));
  return fmt::format("{} of {} destination{} leave{} by another port: {}", moves.size(), compared,
                     compared == 1 ? "" : "s", moves.size() == 1 ? "s" : "", fmt::join(parts, ", "));
}

int port_of(const Routing& r, int switch_index, uint32_t lid) {
  uint8_t p = r.out_port(static_cast<size_t>(switch_index), lid);
  return p == kNoPort ? -1 : p;
}

void routing_changes(const Fabric& before, const Fabric& after, std::vector<FabricChange>& out) {
  const Routing &rb = before.routing(), &ra = after.routing();
  if (routing_name(rb) != routing_name(ra) || rb.emulated != ra.emulated)
    out.push_back({ChangeKind::RoutingChanged, "routing",
                   fmt::format("routing went from {} to {}", routing_sentence(rb), routing_sentence(ra))});
  if (!rb.is_static() || !ra.is_static()) return;
  // The destinations both fabrics know, with each one's LID on either side.
  std::vector<std::tuple<uint32_t, uint32_t, NodeId>> destinations;  // after's LID, before's LID, after's node
  for (NodeId h : after.hcas()) {
    auto old = before.find(after.node(h).id);
    if (!old || before.node(*old).kind != NodeKind::Hca) continue;
    if (after.node(h).lid != 0 && before.node(*old).lid != 0)
      destinations.emplace_back(after.node(h).lid, before.node(*old).lid, h);
  }
  std::sort(destinations.begin(), destinations.end());
  for (NodeId s : after.switches()) {
    auto old = before.find(after.node(s).id);
    if (!old || before.node(*old).kind != NodeKind::Switch) continue;
    int ia = after.switch_index(s), ib = before.switch_index(*old);
    FabricChange change{ChangeKind::RoutesChanged, after.node(s).name, {}};
    for (const auto& [lid_after, lid_before, h] : destinations) {
      int was = port_of(rb, ib, lid_before), is = port_of(ra, ia, lid_after);
      if (was != is) change.routes.push_back({after.node(h).name, was, is});
    }
    if (change.routes.empty()) continue;
    change.detail = moves_sentence(change.routes, static_cast<int>(destinations.size()));
    out.push_back(std::move(change));
  }
}

void host_changes(const Fabric& before, const Fabric& after, std::vector<FabricChange>& out) {
  for (NodeId h : before.hosts())
    if (!after.find_host(before.node(h).name))
      out.push_back({ChangeKind::HostGone, before.node(h).name,
                     fmt::format("host is gone (it had {})", host_sentence(before, h))});
  for (NodeId h : after.hosts())
    if (!before.find_host(after.node(h).name))
      out.push_back(
          {ChangeKind::HostAdded, after.node(h).name, fmt::format("new host with {}", host_sentence(after, h))});
}

void switch_changes(const Fabric& before, const Fabric& after, std::vector<FabricChange>& out) {
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
}

// Cables of `before` gone or changed in `after`, in `before`'s edge order
// (the output follows the graph, not the map's key order). A cable that
// went with its host or switch has no line of its own.
void changed_cables(const Fabric& before, const Fabric& after, std::vector<FabricChange>& out) {
  const auto new_cables = cables_of(after);
  for (auto e : boost::make_iterator_range(boost::edges(before.graph()))) {
    const Link& l = before.link(e);
    if (l.kind != LinkKind::Cable) continue;
    auto it = new_cables.find(cable_key(before, l));
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
}

// Cables of `after` that `before` lacks, in `after`'s edge order.
void added_cables(const Fabric& before, const Fabric& after, std::vector<FabricChange>& out) {
  const auto old_cables = cables_of(before);
  for (auto e : boost::make_iterator_range(boost::edges(after.graph()))) {
    const Link& l = after.link(e);
    if (l.kind != LinkKind::Cable || old_cables.contains(cable_key(after, l))) continue;
    if (owner_missing(after, l.end_a, before) || owner_missing(after, l.end_b, before)) continue;
    out.push_back({ChangeKind::LinkAdded, describe_link(after, e),
                   fmt::format("new cable at {}, {}", l.rate.str(), name(l.state))});
  }
}

}  // namespace

std::string_view name(ChangeKind k) {
  switch (k) {
    case ChangeKind::HostAdded:
      return "host_added";
    case ChangeKind::HostGone:
      return "host_gone";
    case ChangeKind::SwitchAdded:
      return "switch_added";
    case ChangeKind::SwitchGone:
      return "switch_gone";
    case ChangeKind::SwitchLevelChanged:
      return "switch_level_changed";
    case ChangeKind::LinkAdded:
      return "link_added";
    case ChangeKind::LinkGone:
      return "link_gone";
    case ChangeKind::LinkSlower:
      return "link_slower";
    case ChangeKind::LinkFaster:
      return "link_faster";
    case ChangeKind::LinkStateChanged:
      return "link_state_changed";
    case ChangeKind::RoutingChanged:
      return "routing_changed";
    case ChangeKind::RoutesChanged:
      return "routes_changed";
    case ChangeKind::HostLeftDomain:
      return "host_left_domain";
    case ChangeKind::HostJoinedDomain:
      return "host_joined_domain";
  }
  return "?";
}

namespace {

// The key of the domain a host counts in; nullopt when none.
std::optional<DomainKey> counted_domain(const Fabric& f, NodeId host) {
  int d = f.domains().domain_of(f.index().host_id(host));
  return d < 0 ? std::nullopt : std::optional<DomainKey>(f.domains().key(d));
}

std::string domain_word(const std::optional<DomainKey>& k) { return k ? k->str() : "none"; }

void domain_changes(const Fabric& before, const Fabric& after, std::vector<FabricChange>& out) {
  for (NodeId h : before.hosts()) {
    auto now = after.find_host(before.node(h).name);
    if (!now) continue;
    std::optional<DomainKey> was = counted_domain(before, h), is = counted_domain(after, *now);
    if (was == is) continue;
    std::string sentence = fmt::format("NVLink domain {} -> {}", domain_word(was), domain_word(is));
    if (was) out.push_back({ChangeKind::HostLeftDomain, before.node(h).name, sentence});
    if (is) out.push_back({ChangeKind::HostJoinedDomain, before.node(h).name, sentence});
  }
}

}  // namespace

std::vector<FabricChange> diff(const Fabric& before, const Fabric& after) {
  std::vector<FabricChange> out;
  host_changes(before, after, out);
  domain_changes(before, after, out);
  switch_changes(before, after, out);
  changed_cables(before, after, out);
  added_cables(before, after, out);
  routing_changes(before, after, out);
  return out;
}

}  // namespace topo
