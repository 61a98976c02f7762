#include "comm_model/sharing.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "routing/route.h"

namespace topo {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Every (cable, sharer, flows) triple, grouped by cable.
struct Entry {
  int cable;
  int sharer;
  double flows;
};

std::vector<Entry> entries_by_cable(std::span<const Sharer> sharers) {
  std::vector<Entry> all;
  for (size_t s = 0; s < sharers.size(); ++s)
    for (const auto& [cable, flows] : sharers[s].flows)
      if (flows > 0) all.push_back({cable, static_cast<int>(s), flows});
  // A sharer loads each key once: (cable, sharer) orders every entry, and
  // keeps the sharers' order within a cable without a stable sort's buffer.
  std::sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) {
    return a.cable != b.cable ? a.cable < b.cable : a.sharer < b.sharer;
  });
  return all;
}

struct Cable {
  size_t begin, end;  // its entries
  double room;        // left for the jobs still rising
  double rising = 0;  // their flows on it
};

// The sharers' cables, each with its entries, and each sharer's flows as
// (index into the cables, flows): what progressive filling updates when a
// sharer stops, without a search per flow.
struct Cables {
  std::vector<Cable> list;
  std::vector<std::vector<std::pair<size_t, double>>> of_sharer;
};

Cables cables_of(const std::vector<Entry>& all, size_t sharers, const CableRoom& room) {
  Cables out;
  out.of_sharer.resize(sharers);
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    Cable c{i, 0, room.gbps(all[i].cable)};
    for (; j < all.size() && all[j].cable == all[i].cable; ++j) {
      c.rising += all[j].flows;
      out.of_sharer[static_cast<size_t>(all[j].sharer)].emplace_back(out.list.size(), all[j].flows);
    }
    c.end = j;
    out.list.push_back(c);
    i = j;
  }
  return out;
}

}  // namespace

CableRoom::CableRoom(const Fabric& fabric, const BackgroundLoad& background, double efficiency)
    : fabric_(&fabric), efficiency_(efficiency) {
  background_.reserve(2 * background.entries().size());  // both directions of each
  for (const auto& [id, entry] : background.entries()) {
    if (id < 0 || static_cast<size_t>(id) >= fabric.cables().size()) continue;
    const Link& l = fabric.link(fabric.cables()[static_cast<size_t>(id)]);
    background_.emplace_back(directed_cable(l, l.end_a), entry.from_a_gbps);
    background_.emplace_back(directed_cable(l, l.end_b), entry.from_b_gbps);
  }
  std::sort(background_.begin(), background_.end());
}

CableRoom::CableRoom(const PathIndex& index, const BackgroundLoad& background, double efficiency)
    : CableRoom(index.fabric(), background, efficiency) {
  rates_ = index.cable_gbps();
  index_ = &index;
  trunk_key_base_ = index.trunk_key(0);
  // Trunks with background on a cable: their tightest cable, found once.
  std::vector<int> keys;
  keys.reserve(background_.size());
  for (const auto& [directed, gbps] : background_) {
    std::optional<PathIndex::CableRef> ref = index.locate(fabric_->cables()[static_cast<size_t>(directed / 2)]);
    if (!ref) continue;
    const int trunk = directed % 2 == 0 ? ref->trunk_ab : ref->trunk_ba;
    if (trunk >= 0) keys.push_back(index.trunk_key(trunk));
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (int key : keys) {
    double room = std::numeric_limits<double>::infinity();
    index.for_each_cable(key, [&](int directed) { room = std::min(room, gbps(directed)); });
    trunk_room_.emplace_back(key, room);
  }
}

double CableRoom::trunk_gbps(int key) const {
  auto it = std::lower_bound(trunk_room_.begin(), trunk_room_.end(), std::make_pair(key, -kInf));
  if (it != trunk_room_.end() && it->first == key) return it->second;
  return index_->trunks()[static_cast<size_t>(index_->trunk_of_key(key))].slowest_gbps * efficiency_;
}

int CableRoom::cable_of(int key) const {
  if (key < trunk_key_base_) return key;
  int tightest = -1;
  double least = kInf;
  index_->for_each_cable(key, [&](int directed) {
    const double room = gbps(directed);
    if (room < least || (room == least && directed < tightest)) {
      least = room;
      tightest = directed;
    }
  });
  return tightest;
}

double CableRoom::line_gbps(size_t id) const { return fabric_->link(fabric_->cables()[id]).gbps(); }

double CableRoom::background_gbps(int directed) const {
  auto it = std::lower_bound(background_.begin(), background_.end(), std::make_pair(directed, -kInf));
  return it != background_.end() && it->first == directed ? it->second : 0.0;
}

std::vector<std::pair<int, double>> flows_of(std::vector<std::pair<int, double>> bytes, double flow_bytes) {
  for (auto& [key, b] : bytes) b /= flow_bytes;
  return bytes;
}

namespace {

// One job alone: its flows stop at the cable with the least room per flow
// (ties to the one it has most flows on, then the lowest id).
Share alone(const Sharer& s, const CableRoom& room) {
  Share out{s.demand_gbps, -1};
  double most = 0;
  for (const auto& [cable, flows] : s.flows) {
    if (flows <= 0) continue;
    double level = room.gbps(cable) / flows;
    double tol = std::isfinite(out.flow_gbps) ? out.flow_gbps * 1e-12 : 0.0;
    if (level < out.flow_gbps - tol || (level <= out.flow_gbps + tol && out.limit >= 0 && flows > most + 1e-12)) {
      out = {std::min(level, out.flow_gbps), cable};
      most = flows;
    }
  }
  return out;
}

// Progressive filling, to the end or until the first sharer stops (the
// levels before it are the same either way).
std::vector<Share> fill(std::span<const Sharer> sharers, const CableRoom& room, bool until_first) {
  const std::vector<Entry> all = entries_by_cable(sharers);
  Cables by = cables_of(all, sharers.size(), room);
  std::vector<Cable>& cables = by.list;
  std::vector<Share> out(sharers.size());
  std::vector<bool> rising(sharers.size(), true);
  size_t left = sharers.size();
  auto stop = [&](int s, double rate, int limit) {
    rising[s] = false;
    --left;
    out[s] = {rate, limit};
    for (auto [c, flows] : by.of_sharer[static_cast<size_t>(s)]) {
      cables[c].room -= rate * flows;
      cables[c].rising -= flows;
    }
  };
  std::vector<std::pair<double, int>> why(sharers.size());
  while (left > 0) {
    // The next rate where a cable fills or a demand is met.
    double level = kInf;
    for (size_t s = 0; s < sharers.size(); ++s)
      if (rising[s]) level = std::min(level, sharers[s].demand_gbps);
    for (const Cable& c : cables)
      if (c.rising > 1e-12) level = std::min(level, std::max(0.0, c.room) / c.rising);
    const double tol = std::isfinite(level) ? level * 1e-12 : 0.0;
    // Each job stopped at this level by a full cable names the one it has most flows on.
    std::fill(why.begin(), why.end(), std::make_pair(-1.0, -1));
    for (const Cable& c : cables) {
      if (c.rising <= 1e-12 || std::max(0.0, c.room) / c.rising > level + tol) continue;
      for (size_t k = c.begin; k < c.end; ++k)
        if (rising[all[k].sharer] && all[k].flows > why[all[k].sharer].first + 1e-12)
          why[all[k].sharer] = {all[k].flows, all[k].cable};
    }
    size_t before = left;
    for (size_t s = 0; s < sharers.size(); ++s) {
      if (!rising[s]) continue;
      if (why[s].second >= 0)
        stop(static_cast<int>(s), level, why[s].second);
      else if (sharers[s].demand_gbps <= level + tol)
        stop(static_cast<int>(s), sharers[s].demand_gbps, -1);
    }
    if (left == before) break;  // nothing bounds the rest: no flows, no demand
    if (until_first && !rising[0]) break;
  }
  for (size_t s = 0; s < sharers.size(); ++s)
    if (rising[s]) out[s] = {kInf, -1};
  return out;
}

}  // namespace

std::vector<Share> share_max_min(std::span<const Sharer> sharers, const CableRoom& room) {
  if (sharers.size() == 1) return {alone(sharers[0], room)};
  return fill(sharers, room, false);
}

Share first_share(std::span<const Sharer> sharers, const CableRoom& room) {
  if (sharers.empty()) return {};
  if (sharers.size() == 1) return alone(sharers[0], room);
  return fill(sharers, room, true)[0];
}

}  // namespace topo
