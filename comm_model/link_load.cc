#include "comm_model/link_load.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "routing/route.h"

namespace topo {
namespace {

void check_rate(double gbps) {
  if (!std::isfinite(gbps) || gbps < 0)
    throw std::invalid_argument(fmt::format("background load {} Gb/s is not a rate", gbps));
}

}  // namespace

BackgroundLoad::Entry& BackgroundLoad::at(int cable) {
  if (entries_.empty() || entries_.back().first < cable) return entries_.emplace_back(cable, Entry{}).second;
  // Writers add a cable's two directions one after the other.
  if (entries_.back().first == cable) return entries_.back().second;
  auto it = std::lower_bound(entries_.begin(), entries_.end(), cable,
                             [](const std::pair<int, Entry>& e, int c) { return e.first < c; });
  if (it == entries_.end() || it->first != cable) it = entries_.insert(it, {cable, Entry{}});
  return it->second;
}

const BackgroundLoad::Entry* BackgroundLoad::find(int cable) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), cable,
                             [](const std::pair<int, Entry>& e, int c) { return e.first < c; });
  return it != entries_.end() && it->first == cable ? &it->second : nullptr;
}

void BackgroundLoad::add(int cable, double gbps) {
  check_rate(gbps);
  Entry& e = at(cable);
  e.from_a_gbps += gbps;
  e.from_b_gbps += gbps;
}

void BackgroundLoad::add(const Fabric& fabric, LinkId cable, NodeId from, double gbps) {
  check_rate(gbps);
  const Link& l = fabric.link(cable);
  if (from != l.end_a && from != l.end_b)
    throw std::invalid_argument(fmt::format("{} is not an end of the cable {}:{} <-> {}:{}", fabric.node(from).name,
                                            fabric.node(l.end_a).name, l.port_a, fabric.node(l.end_b).name, l.port_b));
  Entry& e = at(l.id);
  (from == l.end_a ? e.from_a_gbps : e.from_b_gbps) += gbps;
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
    throw FabricError(fmt::format("no path from {} (leaf {}) to {} (leaf {}): {}",
                                  f.node(f.hosts()[al_.host[from]]).name, f.node(index_->leaves()[src.leaf]).name,
                                  f.node(f.hosts()[al_.host[to]]).name, f.node(index_->leaves()[dst.leaf]).name, why));
  traffic_.up[traffic_.offset[from] + from_port] += bytes;
  traffic_.down[traffic_.offset[to] + to_port] += bytes;
  traffic_.crossings.push_back({src.leaf, to, to_port, bytes, from, from_port});
  load_.reset();
}

const CableLoad& LinkLoad::routed() const {
  if (!load_) load_ = per_cable(*index_, route(*index_, al_, traffic_));
  return *load_;
}

double LinkLoad::bytes_on(LinkId cable, NodeId from) const {
  const Link& l = index_->fabric().link(cable);
  if (l.id < 0 || (from != l.end_a && from != l.end_b)) return 0;
  return routed().on(directed_cable(l, from));
}

}  // namespace topo
