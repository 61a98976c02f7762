#include "comm_model/link_load.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "topology/error.h"
#include "topology/route.h"

namespace topo {
namespace {

void check_rate(double gbps) {
  if (!std::isfinite(gbps) || gbps < 0)
    throw std::invalid_argument(fmt::format("background load {} Gb/s is not a rate", gbps));
}

std::vector<int> port_offsets(const PathIndex& index, std::span<const int> hosts) {
  std::vector<int> offset(hosts.size() + 1, 0);
  for (size_t i = 0; i < hosts.size(); ++i)
    offset[i + 1] = offset[i] + static_cast<int>(index.ports(hosts[i]).size());
  return offset;
}

}  // namespace

void BackgroundLoad::add(int cable, double gbps) {
  check_rate(gbps);
  Entry& e = entries_[cable];
  e.from_a_gbps += gbps;
  e.from_b_gbps += gbps;
}

void BackgroundLoad::add(const Fabric& fabric, LinkId cable, NodeId from, double gbps) {
  check_rate(gbps);
  const Link& l = fabric.link(cable);
  if (from != l.end_a && from != l.end_b)
    throw std::invalid_argument(fmt::format("{} is not an end of the cable {}:{} <-> {}:{}", fabric.node(from).name,
                                            fabric.node(l.end_a).name, l.port_a, fabric.node(l.end_b).name, l.port_b));
  Entry& e = entries_[l.id];
  (from == l.end_a ? e.from_a_gbps : e.from_b_gbps) += gbps;
}

LinkCapacity::LinkCapacity(const PathIndex& index, std::span<const int> hosts, const BackgroundLoad& background,
                           double efficiency)
    : offset_(port_offsets(index, hosts)) {
  std::span<const PathIndex::Trunk> trunks = index.trunks();
  trunk_gbps_.resize(trunks.size());
  tightest_.resize(trunks.size());
  for (size_t t = 0; t < trunks.size(); ++t) {
    tightest_[t] = trunks[t].slowest_cable;
    trunk_gbps_[t] = static_cast<double>(trunks[t].cables.size()) * trunks[t].slowest_gbps * efficiency;
  }
  port_up_.resize(offset_.back());
  port_down_.resize(offset_.back());
  for (size_t i = 0; i < hosts.size(); ++i) {
    auto ports = index.ports(hosts[i]);
    for (size_t p = 0; p < ports.size(); ++p)
      port_up_[offset_[i] + p] = port_down_[offset_[i] + p] = ports[p].gbps * efficiency;
  }
  if (background.empty()) return;
  std::vector<int> position(index.fabric().hosts().size(), -1);
  for (size_t i = 0; i < hosts.size(); ++i) position[hosts[i]] = static_cast<int>(i);

  // Room per member cable of the trunks that background touches.
  std::map<int, std::vector<double>> touched;
  auto room = [&](int t) -> std::vector<double>& {
    auto [it, fresh] = touched.try_emplace(t);
    if (fresh)
      for (double g : trunks[t].cable_gbps) it->second.push_back(g * efficiency);
    return it->second;
  };
  const Fabric& fabric = index.fabric();
  for (const auto& [id, entry] : background.entries()) {
    if (id < 0 || static_cast<size_t>(id) >= fabric.cables().size()) continue;
    LinkId cable = fabric.cables()[static_cast<size_t>(id)];
    auto ref = index.locate(cable);
    if (!ref) continue;
    const Link& l = fabric.link(cable);
    if (ref->host >= 0) {
      int i = position[ref->host];
      if (i < 0) continue;
      // The HCA end of the cable sends up; the leaf end sends down.
      bool hca_is_a = fabric.node(l.end_a).kind == NodeKind::Hca;
      double up = hca_is_a ? entry.from_a_gbps : entry.from_b_gbps;
      double down = hca_is_a ? entry.from_b_gbps : entry.from_a_gbps;
      double& u = port_up_[offset_[i] + ref->port];
      double& d = port_down_[offset_[i] + ref->port];
      u = std::max(0.0, u - up);
      d = std::max(0.0, d - down);
      continue;
    }
    if (ref->trunk_ab >= 0) {
      double& r = room(ref->trunk_ab)[ref->member_ab];
      r = std::max(0.0, r - entry.from_a_gbps);
    }
    if (ref->trunk_ba >= 0) {
      double& r = room(ref->trunk_ba)[ref->member_ba];
      r = std::max(0.0, r - entry.from_b_gbps);
    }
  }
  for (const auto& [t, rooms] : touched) {
    auto tight = std::min_element(rooms.begin(), rooms.end());
    tightest_[t] = static_cast<int>(tight - rooms.begin());
    trunk_gbps_[t] = static_cast<double>(rooms.size()) * *tight;
  }
}

namespace {

// An allocation for routing only: its hosts, no lanes.
Allocation allocation_of(std::span<const int> hosts) {
  Allocation al;
  al.host.assign(hosts.begin(), hosts.end());
  al.lane_begin.assign(hosts.size() + 1, 0);
  return al;
}

}  // namespace

LinkLoad::LinkLoad(const PathIndex& index, std::span<const int> hosts)
    : index_(&index), al_(allocation_of(hosts)), traffic_(empty_traffic(index, al_)) {}

LinkLoad::LinkLoad(const PathIndex& index, const Allocation& al, Traffic traffic)
    : index_(&index), al_(al), traffic_(std::move(traffic)) {}

void LinkLoad::add(int from, int from_port, int to, int to_port, double bytes) {
  if (bytes <= 0) return;
  const Fabric& f = index_->fabric();
  const PathIndex::Port& src = index_->ports(al_.host[from])[from_port];
  const PathIndex::Port& dst = index_->ports(al_.host[to])[to_port];
  // Checked now, so that the error names the sender as well.
  std::string why;
  if (f.routing().is_static()) {
    std::vector<int> path;
    if (RouteStatus s = trace_static_cables(f, index_->leaves()[src.leaf], dst.hca, path); s != RouteStatus::Ok)
      why = std::string(name(s));
  } else if (!index_->switches_between(src.leaf, dst.leaf)) {
    why = "no up/down path";
  }
  if (!why.empty())
    throw FabricError(fmt::format("no path from {} (leaf {}) to {} (leaf {}): {}", f.node(f.hosts()[al_.host[from]]).name,
                                  f.node(index_->leaves()[src.leaf]).name, f.node(f.hosts()[al_.host[to]]).name,
                                  f.node(index_->leaves()[dst.leaf]).name, why));
  traffic_.up[traffic_.offset[from] + from_port] += bytes;
  traffic_.down[traffic_.offset[to] + to_port] += bytes;
  traffic_.crossings.push_back({src.leaf, to, to_port, bytes, from, from_port});
  load_.reset();
}

const CableLoad& LinkLoad::routed() const {
  if (!load_) load_ = route(*index_, al_, traffic_);
  return *load_;
}

double LinkLoad::bytes_on(LinkId cable, NodeId from) const {
  const Link& l = index_->fabric().link(cable);
  if (l.id < 0 || (from != l.end_a && from != l.end_b)) return 0;
  return routed().on(directed_cable(l, from));
}

}  // namespace topo
