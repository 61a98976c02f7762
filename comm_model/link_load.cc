#include "comm_model/link_load.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "topology/error.h"

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

// Bytes in Gb/s-seconds: how long `bytes` take at `gbps`.
double drain_seconds(double bytes, double gbps) {
  if (bytes <= 0) return 0;
  if (gbps <= 0) return std::numeric_limits<double>::infinity();
  return bytes * 8 / (gbps * 1e9);
}

}  // namespace

void BackgroundLoad::add(LinkId cable, double gbps) {
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
  Entry& e = entries_[cable];
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
  for (const auto& [cable, entry] : background.entries()) {
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

LinkLoad::LinkLoad(const PathIndex& index, std::span<const int> hosts)
    : index_(&index), hosts_(hosts.begin(), hosts.end()), offset_(port_offsets(index, hosts)) {
  port_up_.assign(offset_.back(), 0.0);
  port_down_.assign(offset_.back(), 0.0);
  trunk_bytes_.assign(index.trunks().size(), 0.0);
}

void LinkLoad::add(int from, int from_port, int to, int to_port, double bytes) {
  if (bytes <= 0) return;
  int a = index_->ports(hosts_[from])[from_port].leaf;
  int b = index_->ports(hosts_[to])[to_port].leaf;
  if (!index_->switches_between(a, b)) {
    const Fabric& f = index_->fabric();
    throw FabricError(fmt::format("no up/down path from {} (leaf {}) to {} (leaf {})",
                                  f.node(f.hosts()[hosts_[from]]).name, f.node(index_->leaves()[a]).name,
                                  f.node(f.hosts()[hosts_[to]]).name, f.node(index_->leaves()[b]).name));
  }
  port_up_[offset_[from] + from_port] += bytes;
  port_down_[offset_[to] + to_port] += bytes;
  add_between_leaves(a, b, bytes);
}

void LinkLoad::add_port(int host, int port, double up_bytes, double down_bytes) {
  port_up_[offset_[host] + port] += up_bytes;
  port_down_[offset_[host] + port] += down_bytes;
}

void LinkLoad::add_between_leaves(int leaf_a, int leaf_b, double bytes) {
  if (bytes <= 0) return;
  auto switches = index_->switches_between(leaf_a, leaf_b);
  if (!switches)
    throw FabricError(fmt::format("no up/down path from leaf {} to leaf {}",
                                  index_->fabric().node(index_->leaves()[leaf_a]).name,
                                  index_->fabric().node(index_->leaves()[leaf_b]).name));
  max_switches_ = std::max(max_switches_, *switches);
  if (leaf_a != leaf_b) pending_.push_back({leaf_a, leaf_b, bytes});
}

void LinkLoad::settle() const {
  if (pending_.empty()) return;
  // Group by leaf pair: bucket by source leaf, then order each (small) bucket.
  const size_t L = index_->leaves().size();
  std::vector<int> start(L + 1, 0);
  for (const Pending& p : pending_) ++start[p.leaf_a + 1];
  for (size_t l = 0; l < L; ++l) start[l + 1] += start[l];
  std::vector<Pending> grouped(pending_.size());
  std::vector<int> fill(start.begin(), start.end() - 1);
  for (const Pending& p : pending_) grouped[fill[p.leaf_a]++] = p;
  PathIndex::Scratch scratch;
  std::vector<std::pair<int, double>> flows;
  for (size_t l = 0; l < L; ++l) {
    auto first = grouped.begin() + start[l], last = grouped.begin() + start[l + 1];
    if (first == last) continue;
    std::sort(first, last, [](const Pending& x, const Pending& y) { return x.leaf_b < y.leaf_b; });
    flows.clear();
    for (auto i = first; i != last;) {
      auto j = i;
      double bytes = 0;
      while (j != last && j->leaf_b == i->leaf_b) bytes += (j++)->bytes;
      flows.emplace_back(i->leaf_b, bytes);
      i = j;
    }
    index_->spread_from(static_cast<int>(l), flows, trunk_bytes_, scratch);
  }
  pending_.clear();
}

double LinkLoad::bytes_on(LinkId cable, NodeId from) const {
  settle();
  auto ref = index_->locate(cable);
  if (!ref) return 0;
  const Link& l = index_->fabric().link(cable);
  if (ref->host >= 0) {
    auto it = std::find(hosts_.begin(), hosts_.end(), ref->host);
    if (it == hosts_.end()) return 0;
    size_t i = static_cast<size_t>(it - hosts_.begin());
    bool up = index_->fabric().node(from).kind == NodeKind::Hca;
    return (up ? port_up_ : port_down_)[offset_[i] + ref->port];
  }
  int t = from == l.end_a ? ref->trunk_ab : ref->trunk_ba;
  if (t < 0) return 0;
  return trunk_bytes_[t] / static_cast<double>(index_->trunks()[t].cables.size());
}

LinkLoad::Peak LinkLoad::peak(const LinkCapacity& capacity, bool ports_only) const {
  settle();
  Peak best;
  auto consider = [&](double seconds, auto describe) {
    if (!best.found || seconds > best.seconds) {
      best.found = true;
      best.seconds = seconds;
      describe();
    }
  };
  for (size_t i = 0; i < hosts_.size(); ++i) {
    auto ports = index_->ports(hosts_[i]);
    for (size_t p = 0; p < ports.size(); ++p) {
      const PathIndex::Port& port = ports[p];
      double up = port_up_[offset_[i] + p], down = port_down_[offset_[i] + p];
      if (up > 0)
        consider(drain_seconds(up, capacity.port_up_gbps(static_cast<int>(i), static_cast<int>(p))), [&] {
          best.cable = port.cable;
          best.from = port.hca;
          best.bytes = up;
          best.gbps = capacity.port_up_gbps(static_cast<int>(i), static_cast<int>(p));
        });
      if (down > 0)
        consider(drain_seconds(down, capacity.port_down_gbps(static_cast<int>(i), static_cast<int>(p))), [&] {
          best.cable = port.cable;
          best.from = index_->fabric().peer(port.cable, port.hca);
          best.bytes = down;
          best.gbps = capacity.port_down_gbps(static_cast<int>(i), static_cast<int>(p));
        });
    }
  }
  if (ports_only) return best;
  std::span<const PathIndex::Trunk> trunks = index_->trunks();
  for (size_t t = 0; t < trunks.size(); ++t) {
    double bytes = trunk_bytes_[t];
    if (bytes <= 0) continue;
    consider(drain_seconds(bytes, capacity.trunk_gbps(static_cast<int>(t))), [&] {
      double members = static_cast<double>(trunks[t].cables.size());
      best.cable = trunks[t].cables[capacity.tightest_cable(static_cast<int>(t))];
      best.from = trunks[t].from;
      best.bytes = bytes / members;
      best.gbps = capacity.trunk_gbps(static_cast<int>(t)) / members;
    });
  }
  return best;
}

}  // namespace topo
