#include "fabric/fabric.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "common/quote.h"
#include "fabric/classify.h"

namespace topo {

std::string_view name(NodeKind k) {
  switch (k) {
    case NodeKind::Host:
      return "host";
    case NodeKind::Hca:
      return "hca";
    case NodeKind::Switch:
      return "switch";
  }
  return "?";
}

std::string_view name(Level l) {
  switch (l) {
    case Level::Leaf:
      return "leaf";
    case Level::Spine:
      return "spine";
    case Level::Core:
      return "core";
    case Level::Unknown:
      return "unknown";
  }
  return "?";
}

std::optional<Level> parse_level(std::string_view text) {
  for (Level l : {Level::Leaf, Level::Spine, Level::Core, Level::Unknown})
    if (name(l) == text) return l;
  return std::nullopt;
}

std::string_view name(Tier t) {
  switch (t) {
    case Tier::HostLeaf:
      return "host-leaf";
    case Tier::LeafSpine:
      return "leaf-spine";
    case Tier::SpineCore:
      return "spine-core";
    case Tier::Other:
      return "other";
  }
  return "?";
}

std::string_view name(FaultKind k) {
  switch (k) {
    case FaultKind::DegradedLink:
      return "degraded_link";
    case FaultKind::InactiveLink:
      return "inactive_link";
    case FaultKind::MissingUplinks:
      return "missing_uplinks";
    case FaultKind::UnequalUplinks:
      return "unequal_uplinks";
    case FaultKind::UnreachableHost:
      return "unreachable_host";
    case FaultKind::IsolatedSwitch:
      return "isolated_switch";
    case FaultKind::NvlinkFabricState:
      return "nvlink_fabric_state";
    case FaultKind::NvlinkDisagreement:
      return "nvlink_disagreement";
    case FaultKind::NvlinkDomainTooLarge:
      return "nvlink_domain_too_large";
  }
  return "?";
}

std::optional<NodeId> Fabric::find(std::string_view id) const {
  auto it = by_id_.find(std::string(id));
  if (it == by_id_.end()) return std::nullopt;
  return it->second;
}

std::optional<NodeId> Fabric::find_host(std::string_view host) const {
  auto it = host_by_name_.find(std::string(host));
  if (it == host_by_name_.end()) return std::nullopt;
  return it->second;
}

std::vector<NodeId> find_hosts(const Fabric& fabric, std::span<const std::string> names) {
  constexpr size_t kNamesShown = 8;
  std::vector<NodeId> out;
  std::vector<std::string> unknown;
  size_t unknown_count = 0;
  for (const std::string& n : names) {
    if (auto h = fabric.find_host(n))
      out.push_back(*h);
    else if (++unknown_count <= kNamesShown)
      unknown.push_back(shown(n));
  }
  if (unknown_count == 0) return out;
  std::string more = unknown_count > kNamesShown ? fmt::format(" and {} more", unknown_count - kNamesShown) : "";
  throw FabricError(fmt::format("unknown host{} {}{}: not in the fabric", unknown_count > 1 ? "s" : "",
                                fmt::join(unknown, ", "), more));
}

std::optional<LinkId> Fabric::cable_at(NodeId node, int port) const {
  int cable = index_.cable_at(node, port);
  if (cable < 0) return std::nullopt;
  return cables_[static_cast<size_t>(cable)];
}

std::optional<NodeId> Fabric::node_by_lid(uint32_t lid) const { return index_.node_by_lid(lid); }

void Fabric::set_routing(Routing routing) {
  if (routing.is_static() && routing.lft.size() != switches_.size())
    throw FabricError(fmt::format("routing has {} forwarding tables for a fabric of {} switches", routing.lft.size(),
                                  switches_.size()));
  routing_ = std::move(routing);
}

std::vector<NodeId> Fabric::switches_at(Level level) const {
  std::vector<NodeId> out;
  for (NodeId s : switches_)
    if (node(s).level == level) out.push_back(s);
  return out;
}

NodeId Fabric::peer(LinkId e, NodeId from) const {
  NodeId s = boost::source(e, *graph_);
  return s == from ? boost::target(e, *graph_) : s;
}

int Fabric::local_port(LinkId e, NodeId from) const {
  const Link& l = link(e);
  return l.end_a == from ? l.port_a : l.port_b;
}

std::vector<NodeId> Fabric::hcas_of(NodeId host) const {
  std::vector<NodeId> out;
  for (auto e : boost::make_iterator_range(boost::out_edges(host, *graph_)))
    if (link(e).kind == LinkKind::Attachment) out.push_back(peer(e, host));
  std::sort(out.begin(), out.end(), [&](NodeId a, NodeId b) {
    return std::tie(node(a).rail, node(a).name) < std::tie(node(b).rail, node(b).name);
  });
  return out;
}

std::vector<NodeId> Fabric::leaves_of(NodeId host) const {
  int h = index_.host_id(host);
  return h < 0 ? std::vector<NodeId>{} : index_.switches_of(h);
}

std::vector<NodeId> Fabric::hosts_under(NodeId leaf) const {
  std::vector<NodeId> out;
  for (auto e : boost::make_iterator_range(boost::out_edges(leaf, *graph_))) {
    NodeId hca = peer(e, leaf);
    if (node(hca).kind != NodeKind::Hca) continue;
    if (auto h = find_host(node(hca).host); h && std::find(out.begin(), out.end(), *h) == out.end()) out.push_back(*h);
  }
  std::sort(out.begin(), out.end());
  return out;
}

template <typename Self>
void Fabric::assign_values(Self&& o) {
  by_id_ = std::forward<Self>(o).by_id_;
  host_by_name_ = std::forward<Self>(o).host_by_name_;
  hosts_ = std::forward<Self>(o).hosts_;
  hcas_ = std::forward<Self>(o).hcas_;
  switches_ = std::forward<Self>(o).switches_;
  switch_index_ = std::forward<Self>(o).switch_index_;
  index_ = std::forward<Self>(o).index_;
  routing_ = std::forward<Self>(o).routing_;
  summary_ = std::forward<Self>(o).summary_;
  faults_ = std::forward<Self>(o).faults_;
  naming_ = std::forward<Self>(o).naming_;
  source_ = std::forward<Self>(o).source_;
}

void Fabric::mark_degraded(int cable, std::string why) {
  if (cable < 0 || static_cast<size_t>(cable) >= cables_.size())
    throw FabricError(fmt::format("cable {} is not one of the fabric's {} cables", cable, cables_.size()));
  Link& l = (*graph_)[cables_[static_cast<size_t>(cable)]];
  l.degraded = true;
  l.degraded_why = why;
  faults_.push_back(
      {FaultKind::DegradedLink, describe_link(*this, cables_[static_cast<size_t>(cable)]), std::move(why)});
}

namespace {

bool is_nvlink(FaultKind k) {
  return k == FaultKind::NvlinkFabricState || k == FaultKind::NvlinkDisagreement ||
         k == FaultKind::NvlinkDomainTooLarge;
}

FaultKind fault_kind(DomainFinding::Kind k) {
  switch (k) {
    case DomainFinding::Kind::FabricState:
      return FaultKind::NvlinkFabricState;
    case DomainFinding::Kind::Disagreement:
      return FaultKind::NvlinkDisagreement;
    case DomainFinding::Kind::TooLarge:
      break;
  }
  return FaultKind::NvlinkDomainTooLarge;
}

}  // namespace

void Fabric::set_nvlink(std::vector<HostNvlink> reports, const NvlinkSpec& spec) {
  if (reports.size() != hosts_.size())
    throw FabricError(
        fmt::format("NVLink reports for {} hosts given to a fabric of {} hosts", reports.size(), hosts_.size()));
  std::vector<std::string> names;
  names.reserve(hosts_.size());
  for (NodeId h : hosts_) names.push_back(node(h).name);
  ResolvedDomains resolved = resolve_domains(std::move(reports), names, spec);
  index_.domains_ = std::move(resolved.domains);
  std::erase_if(faults_, [](const Fault& f) { return is_nvlink(f.kind); });
  for (DomainFinding& f : resolved.findings)
    faults_.push_back({fault_kind(f.kind), std::move(f.subject), std::move(f.detail)});
}

Fabric& Fabric::operator=(const Fabric& other) {
  if (this == &other) return *this;
  graph_ = std::make_unique<FabricGraph>(*other.graph_);
  assign_values(other);
  index_cables(other.cables_.size());
  return *this;
}

Fabric& Fabric::operator=(Fabric&& other) noexcept {
  if (this == &other) return *this;
  graph_ = std::exchange(other.graph_, std::make_unique<FabricGraph>());
  cables_ = std::exchange(other.cables_, {});
  assign_values(std::move(other));
  // Empty by the code, not by what a moved-from container happens to hold:
  // a copy of empty members, which allocates nothing.
  static const Fabric kEmpty;
  other.assign_values(kEmpty);
  return *this;
}

void Fabric::index_cables(size_t count) {
  const FabricGraph& g = *graph_;
  cables_.assign(count, LinkId());
  for (auto e : boost::make_iterator_range(boost::edges(g)))
    if (g[e].kind == LinkKind::Cable && g[e].id >= 0) cables_[static_cast<size_t>(g[e].id)] = e;
}

FabricBuilder::FabricBuilder(HostNaming naming) { fabric_.naming_ = std::move(naming); }

NodeId FabricBuilder::add_node(Node node) {
  if (node.id.empty()) throw FabricError("a node has an empty id");
  if (fabric_.by_id_.contains(node.id)) throw FabricError(fmt::format("node '{}' is defined twice", node.id));
  std::string id = node.id;
  NodeKind kind = node.kind;
  NodeId v = boost::add_vertex(std::move(node), *fabric_.graph_);
  fabric_.by_id_.emplace(std::move(id), v);
  switch (kind) {
    case NodeKind::Host:
      fabric_.hosts_.push_back(v);
      break;
    case NodeKind::Hca:
      fabric_.hcas_.push_back(v);
      break;
    case NodeKind::Switch:
      fabric_.switches_.push_back(v);
      break;
  }
  return v;
}

NodeId FabricBuilder::add_switch(std::string id, std::string name, int ports, uint64_t guid) {
  Node n;
  n.kind = NodeKind::Switch;
  n.id = std::move(id);
  n.name = name.empty() ? n.id : std::move(name);
  n.ports = ports;
  n.guid = guid;
  return add_node(std::move(n));
}

NodeId FabricBuilder::add_host(std::string name) {
  if (auto h = fabric_.find_host(name)) return *h;
  Node n;
  n.kind = NodeKind::Host;
  n.id = "host:" + name;  // hosts share the id space with GUID-named HCAs
  n.name = name;
  NodeId v = add_node(std::move(n));
  fabric_.host_by_name_.emplace(std::move(name), v);
  return v;
}

NodeId FabricBuilder::add_hca(std::string id, std::string description, int ports, uint64_t guid) {
  auto parsed = fabric_.naming_.parse(description);
  if (!parsed)
    throw FabricError(fmt::format("HCA '{}' description '{}' does not match the host pattern '{}'", id, description,
                                  fabric_.naming_.pattern()));
  NodeId host = add_host(parsed->host);
  Node n;
  n.kind = NodeKind::Hca;
  n.id = std::move(id);
  n.name = std::move(description);
  n.ports = ports;
  n.guid = guid;
  n.host = parsed->host;
  n.device = parsed->device;
  n.rail = parsed->rail;
  NodeId v = add_node(std::move(n));
  Link attach;
  attach.kind = LinkKind::Attachment;
  attach.end_a = host;
  attach.end_b = v;
  boost::add_edge(host, v, attach, *fabric_.graph_);
  return v;
}

void FabricBuilder::connect(std::string_view a, int port_a, std::string_view b, int port_b, LinkRate rate,
                            PortState state) {
  auto va = fabric_.find(a);
  auto vb = fabric_.find(b);
  if (!va) throw FabricError(fmt::format("link to unknown node '{}'", a));
  if (!vb) throw FabricError(fmt::format("link to unknown node '{}'", b));
  if (*va == *vb) throw FabricError(fmt::format("node '{}' port {} is cabled to itself", a, port_a));
  auto ka = std::make_pair(*va, port_a), kb = std::make_pair(*vb, port_b);
  auto ia = port_links_.find(ka);
  if (ia != port_links_.end()) {
    // Second sighting of a cable: it must name the same far end.
    LinkId e = ia->second;
    if (fabric_.peer(e, *va) != *vb || fabric_.local_port(e, *vb) != port_b)
      throw FabricError(fmt::format("'{}' port {} is cabled to two different peers", a, port_a));
    return;
  }
  if (port_links_.contains(kb))
    throw FabricError(fmt::format("'{}' port {} is cabled to two different peers", b, port_b));
  Link link;
  link.kind = LinkKind::Cable;
  link.end_a = *va;
  link.end_b = *vb;
  link.port_a = port_a;
  link.port_b = port_b;
  link.rate = rate;
  link.state = state;
  LinkId e = boost::add_edge(*va, *vb, link, *fabric_.graph_).first;
  port_links_.emplace(ka, e);
  port_links_.emplace(kb, e);
}

void FabricBuilder::set_lid(std::string_view id, uint32_t lid) {
  auto v = fabric_.find(id);
  if (!v) throw FabricError(fmt::format("LID {} for unknown node '{}'", lid, id));
  (*fabric_.graph_)[*v].lid = lid;
}

namespace {

// Numbers switches, then HCA ports, from 1 when the source gave no LIDs.
void number_lids(Fabric& fabric, FabricGraph& graph) {
  for (NodeId v : boost::make_iterator_range(boost::vertices(graph)))
    if (graph[v].lid != 0) return;
  uint32_t next = 1;
  for (NodeId s : fabric.switches()) graph[s].lid = next++;
  for (NodeId h : fabric.hcas()) graph[h].lid = next++;
}

}  // namespace

void FabricBuilder::index() {
  Fabric& f = fabric_;
  number_lids(f, *f.graph_);
  size_t n = f.node_count();
  f.switch_index_.assign(n, -1);
  for (size_t i = 0; i < f.switches_.size(); ++i) f.switch_index_[f.switches_[i]] = static_cast<int>(i);
  // Dense cable ids in the order the cables were added.
  int cables = 0;
  for (auto e : boost::make_iterator_range(boost::edges(*f.graph_))) {
    Link& link = (*f.graph_)[e];
    if (link.kind == LinkKind::Cable) link.id = cables++;
  }
  f.index_cables(static_cast<size_t>(cables));
  f.index_ = FabricIndex(f);
}

Fabric FabricBuilder::finish() && {
  index();
  classify(fabric_);
  return std::move(fabric_);
}

}  // namespace topo
