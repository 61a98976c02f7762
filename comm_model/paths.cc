#include "comm_model/paths.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "common/error.h"
#include "fabric/switch_ranks.h"

namespace topo {
namespace {

void add_bytes(std::span<double> trunk_bytes, int t, double bytes, std::vector<int>& touched) {
  double& at = trunk_bytes[static_cast<size_t>(t)];
  if (at == 0 && bytes != 0) touched.push_back(t);
  at += bytes;
}

}  // namespace

PathIndex::PathIndex(const Fabric& fabric) : fabric_(&fabric) {
  const std::vector<int> rank = index_switches();
  index_hosts();
  index_trunks(rank);
  // Switches that reach a leaf, by rank, so that each sees its children (or
  // parents) finished.
  std::vector<int> order;
  for (size_t a = 0; a < slot_node_.size(); ++a)
    if (rank[a] >= 0) order.push_back(static_cast<int>(a));
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return rank[x] < rank[y]; });
  index_hops(order);
  index_descent(rank, order);
}

// Switch slots, in Fabric::switches() order, and each switch's rank by slot
// over the routed cables (fabric/switch_ranks.h): 0 for every leaf (a switch
// with a routed HCA cable, as FabricIndex::leaves() has them), then hops
// from the nearest leaf; -1 where none is reached.
std::vector<int> PathIndex::index_switches() {
  const Fabric& fabric = *fabric_;
  const FabricIndex& fi = fabric.index();
  const SwitchRanks ranks(fabric, RankCables::Routed);
  slot_.assign(fabric.node_count(), -1);
  std::vector<int> rank;
  for (NodeId s : fabric.switches()) {
    slot_[s] = static_cast<int>(slot_node_.size());
    slot_node_.push_back(s);
    rank.push_back(ranks.rank(s));
  }
  leaves_.assign(fi.leaves().begin(), fi.leaves().end());
  for (NodeId leaf : leaves_) leaf_slot_.push_back(slot_[leaf]);
  return rank;
}

// Hosts and their routed ports, as the fabric's index lists them; each
// host's set of leaves; GPU rails and cable speeds.
void PathIndex::index_hosts() {
  const Fabric& fabric = *fabric_;
  const FabricGraph& g = fabric.graph();
  const FabricIndex& fi = fabric.index();
  cables_.assign(fabric.cables().size(), CableRef{});
  trunk_key_base_ = 2 * static_cast<int>(fabric.cables().size());
  ports_.resize(fi.host_count());
  for (size_t h = 0; h < fi.host_count(); ++h)
    for (const FabricIndex::HostPort& hp : fi.host_ports(static_cast<int>(h))) {
      if (!hp.routed) continue;
      Port p;
      p.hca = hp.hca;
      p.cable = fabric.cables()[hp.cable];
      p.rail = hp.rail;
      p.leaf = hp.leaf;
      p.gbps = hp.gbps;
      const Link& l = g[p.cable];
      p.up = directed_cable(l, hp.hca);
      p.down = directed_cable(l, hp.leaf_switch);
      p.leaf_port = hp.leaf_port;
      p.lid = fabric.node(hp.hca).lid;
      CableRef ref;
      ref.host = static_cast<int>(h);
      ref.port = static_cast<int>(ports_[h].size());
      cables_[hp.cable] = ref;
      ports_[h].push_back(p);
    }
  leaf_set_.reserve(ports_.size());
  std::map<std::vector<int>, int> sets;  // lists of several leaves -> id
  for (const std::vector<Port>& ports : ports_) {
    std::vector<int> leaves;
    for (const Port& p : ports) leaves.push_back(p.leaf);
    if (std::find(leaves.begin(), leaves.end(), -1) != leaves.end())
      leaf_set_.push_back(-1);
    else if (leaves.size() == 1)
      leaf_set_.push_back(leaves[0]);
    else
      leaf_set_.push_back(sets.try_emplace(leaves, static_cast<int>(leaves_.size() + sets.size())).first->second);
  }
  leaf_set_count_ = static_cast<int>(leaves_.size() + sets.size());

  gpu_rails_begin_.assign(1, 0);
  for (NodeId host : fabric.hosts()) {
    for (const Gpu& gpu : fabric.node(host).gpus) gpu_rails_.push_back(gpu.rail);
    gpu_rails_begin_.push_back(static_cast<int>(gpu_rails_.size()));
  }
  cable_gbps_.reserve(fabric.cables().size());
  for (LinkId e : fabric.cables()) cable_gbps_.push_back(g[e].gbps());
}

// Trunks: parallel Active cables between switches one rank apart, per
// direction; each cable's trunk and place in it.
void PathIndex::index_trunks(const std::vector<int>& rank) {
  const Fabric& fabric = *fabric_;
  const FabricGraph& g = fabric.graph();
  const size_t slots = slot_node_.size();
  up_trunks_.assign(slots, {});
  down_trunks_.assign(slots, {});
  for (size_t a = 0; a < slots; ++a) {
    if (rank[a] < 0) continue;
    NodeId s = slot_node_[a];
    std::map<int, int> by_peer;  // peer slot -> trunk, ordered so trunk ids do not depend on hashing
    std::vector<std::pair<int, LinkId>> cables;
    for (auto e : boost::make_iterator_range(boost::out_edges(s, g))) {
      int b = slot_[fabric.peer(e, s)];
      if (b < 0 || !admits(RankCables::Routed, g[e]) || rank[b] < 0 || rank[b] == rank[a]) continue;
      cables.emplace_back(b, e);
    }
    std::stable_sort(cables.begin(), cables.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& [b, e] : cables) {
      auto [it, fresh] = by_peer.emplace(b, static_cast<int>(trunks_.size()));
      if (fresh) {
        Trunk t;
        t.from = s;
        t.to = slot_node_[b];
        t.up = rank[b] > rank[a];
        trunks_.push_back(std::move(t));
        (rank[b] > rank[a] ? up_trunks_ : down_trunks_)[a].push_back(it->second);
      }
      Trunk& t = trunks_[it->second];
      t.cables.push_back(e);
      t.cable_gbps.push_back(g[e].gbps());
    }
  }
  for (Trunk& t : trunks_) {
    auto slowest = std::min_element(t.cable_gbps.begin(), t.cable_gbps.end());
    t.slowest_gbps = *slowest;
    t.slowest_cable = static_cast<int>(slowest - t.cable_gbps.begin());
  }
  for (size_t t = 0; t < trunks_.size(); ++t)
    for (size_t m = 0; m < trunks_[t].cables.size(); ++m) {
      LinkId e = trunks_[t].cables[m];
      CableRef& ref = cables_[g[e].id];
      bool from_a = g[e].end_a == trunks_[t].from;
      (from_a ? ref.trunk_ab : ref.trunk_ba) = static_cast<int>(t);
      (from_a ? ref.member_ab : ref.member_ba) = static_cast<int>(m);
    }
}

// Hops from every switch to every leaf: straight down, then up*down*.
void PathIndex::index_hops(const std::vector<int>& order) {
  const size_t slots = slot_node_.size(), L = leaves_.size();
  std::vector<int> leaf_of_slot(slots, -1);
  for (size_t l = 0; l < L; ++l) leaf_of_slot[leaf_slot_[l]] = static_cast<int>(l);
  down_.assign(slots * L, kUnreachable);
  updown_.assign(slots * L, kUnreachable);
  auto relax = [](uint8_t& into, uint8_t from) {
    if (from != kUnreachable && from + 1 < into) into = static_cast<uint8_t>(std::min(from + 1, 254));
  };
  for (int a : order) {
    uint8_t* row = &down_[a * L];
    if (leaf_of_slot[a] >= 0) row[leaf_of_slot[a]] = 0;
    for (int t : down_trunks_[a]) {
      const uint8_t* child = &down_[slot_[trunks_[t].to] * L];
      for (size_t l = 0; l < L; ++l) relax(row[l], child[l]);
    }
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    int a = *it;
    uint8_t* row = &updown_[a * L];
    std::copy_n(&down_[a * L], L, row);
    for (int t : up_trunks_[a]) {
      const uint8_t* parent = &updown_[slot_[trunks_[t].to] * L];
      for (size_t l = 0; l < L; ++l) relax(row[l], parent[l]);
    }
  }
}

// What a descent reads: each trunk's reverse, the switches above each leaf
// by height, and dense copies of trunk facts for the hot loop.
void PathIndex::index_descent(const std::vector<int>& rank, const std::vector<int>& order) {
  const size_t slots = slot_node_.size(), L = leaves_.size();
  // Descending towards a leaf only ever enters that leaf's ancestors, so list
  // them by height; with each trunk's reverse, a step down needs no scan of
  // a core's hundreds of children.
  reverse_.assign(trunks_.size(), -1);
  for (size_t t = 0; t < trunks_.size(); ++t) {
    int to = slot_[trunks_[t].to];
    const std::vector<int>& back = trunks_[t].up ? down_trunks_[to] : up_trunks_[to];
    for (int r : back)
      if (trunks_[r].to == trunks_[t].from) reverse_[t] = r;
  }
  for (int a : order) ranks_ = std::max(ranks_, rank[a] + 1);
  ancestors_.assign(L * ranks_, {});
  for (int a : order)
    for (size_t l = 0; l < L; ++l)
      if (uint8_t k = down_[a * L + l]; k != kUnreachable && k < ranks_) ancestors_[l * ranks_ + k].push_back(a);
  to_slot_.resize(trunks_.size());
  width_.resize(trunks_.size());
  for (size_t t = 0; t < trunks_.size(); ++t) {
    to_slot_[t] = slot_[trunks_[t].to];
    width_[t] = static_cast<double>(trunks_[t].cables.size());
  }
  up_begin_.assign(1, 0);
  for (size_t a = 0; a < slots; ++a) {
    up_list_.insert(up_list_.end(), up_trunks_[a].begin(), up_trunks_[a].end());
    up_begin_.push_back(static_cast<int>(up_list_.size()));
  }
  uniform_climb_.assign(slots, true);
  for (int a : order) {
    const std::vector<int>& up = up_trunks_[a];
    for (size_t i = 1; i < up.size() && uniform_climb_[a]; ++i)
      uniform_climb_[a] = std::equal(&updown_[slot_[trunks_[up[0]].to] * L], &updown_[slot_[trunks_[up[0]].to] * L] + L,
                                     &updown_[slot_[trunks_[up[i]].to] * L]);
  }
}

std::optional<PathIndex::CableRef> PathIndex::locate(LinkId cable) const {
  int id = fabric_->link(cable).id;
  if (id < 0 || static_cast<size_t>(id) >= cables_.size()) return std::nullopt;
  const CableRef& ref = cables_[id];
  if (ref.host < 0 && ref.trunk_ab < 0 && ref.trunk_ba < 0) return std::nullopt;
  return ref;
}

void PathIndex::spread(int leaf_a, int leaf_b, double bytes, std::span<double> trunk_bytes) const {
  Scratch scratch;
  spread(leaf_a, leaf_b, bytes, trunk_bytes, scratch);
}

void PathIndex::spread(int leaf_a, int leaf_b, double bytes, std::span<double> trunk_bytes, Scratch& scratch) const {
  int start = leaf_slot_.at(leaf_a);
  uint8_t hops = updown_hops(start, leaf_b);
  if (hops == kUnreachable)
    throw FabricError(fmt::format("no up/down path from leaf {} to leaf {}", fabric_->node(leaves_[leaf_a]).name,
                                  fabric_->node(leaves_[leaf_b]).name));
  scratch.frontier.assign(1, {start, false, 1.0});
  walk(leaf_b, hops, bytes, trunk_bytes, scratch);
}

void PathIndex::walk(int leaf_b, int left, double bytes, std::span<double> trunk_bytes, Scratch& scratch) const {
  auto& frontier = scratch.frontier;
  auto& next = scratch.next;
  auto& options = scratch.options;
  for (; left > 0; --left) {
    next.clear();
    for (const Scratch::Step& at : frontier) {
      // Every cable of every trunk that keeps the path shortest takes an equal share.
      options.clear();
      bool descend = at.down || down_hops(at.slot, leaf_b) == left;
      if (descend) {
        for (int child : ancestors_[static_cast<size_t>(leaf_b) * ranks_ + (left - 1)])
          for (int i = up_begin_[child]; i < up_begin_[child + 1]; ++i)
            if (to_slot_[up_list_[i]] == at.slot) options.emplace_back(reverse_[up_list_[i]], child);
      } else {
        for (int i = up_begin_[at.slot]; i < up_begin_[at.slot + 1]; ++i) {
          int t = up_list_[i];
          if (updown_hops(to_slot_[t], leaf_b) == left - 1) options.emplace_back(t, to_slot_[t]);
        }
      }
      double cables = 0;
      for (auto [t, to] : options) cables += width_[t];
      for (auto [t, to] : options) {
        double share = at.share * width_[t] / cables;
        add_bytes(trunk_bytes, t, bytes * share, scratch.touched);
        auto same = std::find_if(next.begin(), next.end(),
                                 [&, to = to](const Scratch::Step& s) { return s.slot == to && s.down == descend; });
        if (same != next.end())
          same->share += share;
        else
          next.push_back({to, descend, share});
      }
    }
    frontier.swap(next);
  }
}

void PathIndex::spread_from(int leaf_a, std::span<const std::pair<int, double>> flows, std::span<double> trunk_bytes,
                            Scratch& scratch) const {
  const int start = leaf_slot_.at(leaf_a);
  auto& climb = scratch.climb;
  auto& climb_trunks = scratch.climb_trunks;
  auto& climbing = scratch.climbing;
  // The heights climbed so far are climb[0, climbing.size()); the vectors
  // past them keep their buffers for the next source leaf, since a
  // thousand-host job spreads from hundreds of leaves.
  if (climb.empty()) climb.emplace_back();
  climb[0].assign(1, {start, false, 1.0});
  climbing.assign(1, 0.0);
  // Height k of the climb, walked on first need; nullptr once a switch on
  // the way has parents that differ in reach.
  auto height = [&](size_t k) -> const std::vector<Scratch::Step>* {
    for (size_t h = climbing.size(); h <= k; h = climbing.size()) {
      if (climb.size() <= h) climb.emplace_back();
      if (climb_trunks.size() < h) climb_trunks.emplace_back();
      const std::vector<Scratch::Step>& below = climb[h - 1];
      std::vector<Scratch::Step>& above = climb[h];
      std::vector<std::pair<int, double>>& trunks = climb_trunks[h - 1];
      above.clear();
      trunks.clear();
      for (const Scratch::Step& at : below) {
        if (!uniform_climb_[at.slot] || up_begin_[at.slot] == up_begin_[at.slot + 1]) return nullptr;
        double cables = 0;
        for (int i = up_begin_[at.slot]; i < up_begin_[at.slot + 1]; ++i) cables += width_[up_list_[i]];
        for (int i = up_begin_[at.slot]; i < up_begin_[at.slot + 1]; ++i) {
          int t = up_list_[i];
          double share = at.share * width_[t] / cables;
          trunks.emplace_back(t, share);
          int to = to_slot_[t];
          auto same = std::find_if(above.begin(), above.end(), [&](const Scratch::Step& s) { return s.slot == to; });
          if (same != above.end())
            same->share += share;
          else
            above.push_back({to, false, share});
        }
      }
      climbing.push_back(0.0);
    }
    return &climb[k];
  };
  for (auto [leaf_b, bytes] : flows) {
    const int hops = updown_hops(start, leaf_b);
    if (hops == kUnreachable || leaf_b == leaf_a || bytes == 0) {
      if (leaf_b != leaf_a && bytes != 0) spread(leaf_a, leaf_b, bytes, trunk_bytes, scratch);  // throws
      continue;
    }
    // Climb until the switches reached start down towards leaf_b. If all of
    // them do, every uplink taken lay on a shortest path (a detour could not
    // turn down that early), so the shared climb is this flow's climb; if
    // only some do, walk this flow alone.
    bool shared = false;
    int k = 1;
    for (; k <= hops; ++k) {
      const std::vector<Scratch::Step>* reached = height(static_cast<size_t>(k));
      if (!reached) break;
      size_t down = 0;
      for (const Scratch::Step& s : *reached) down += down_hops(s.slot, leaf_b) == hops - k;
      if (down == 0) continue;
      shared = down == reached->size();
      break;
    }
    if (!shared) {
      spread(leaf_a, leaf_b, bytes, trunk_bytes, scratch);
      continue;
    }
    climbing[k] += bytes;
    scratch.frontier.assign(climb[k].begin(), climb[k].end());
    for (auto& s : scratch.frontier) s.down = true;
    walk(leaf_b, hops - k, bytes, trunk_bytes, scratch);
  }
  // Every flow that climbed k steps loaded the first k steps of the climb.
  double above = 0;
  for (size_t k = climbing.size(); k-- > 1;) {
    above += climbing[k];
    if (above == 0) continue;
    for (auto [t, share] : climb_trunks[k - 1]) add_bytes(trunk_bytes, t, above * share, scratch.touched);
  }
}

std::string PathIndex::describe(LinkId cable, NodeId from) const {
  const Link& l = fabric_->link(cable);
  bool forward = l.end_a == from;
  NodeId a = forward ? l.end_a : l.end_b, b = forward ? l.end_b : l.end_a;
  int pa = forward ? l.port_a : l.port_b, pb = forward ? l.port_b : l.port_a;
  return fmt::format("{}:{} -> {}:{}", fabric_->node(a).name, pa, fabric_->node(b).name, pb);
}

}  // namespace topo
