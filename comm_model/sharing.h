// The third stage of an estimate: how the cables' room is shared among the
// flows that load them (routes.h), this collective's and other jobs'.
//
// A cable carries at most its line rate times the network efficiency (the
// share a NIC delivers), less the background load on it, per direction.
// Flows share it max-min fair per flow, and the flows of one job advance
// together (neighbours.h says why): progressive filling over jobs, where a
// job with w flows on a cable takes w times the common flow rate there.
#pragma once

#include <algorithm>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "comm_model/link_load.h"
#include "comm_model/paths.h"

namespace topo {

// Room per directed cable (routing/route.h directed_cable), in Gb/s; built
// on a PathIndex, also per trunk key (PathIndex::trunk_key): a trunk whose
// cables carry alike fills at its tightest cable.
class CableRoom {
 public:
  // Directed cables only.
  CableRoom(const Fabric& fabric, const BackgroundLoad& background, double efficiency);
  // Cables and trunks, reading the line rates the index keeps (kept alive
  // by the caller).
  CableRoom(const PathIndex& index, const BackgroundLoad& background, double efficiency);
  // Inline: the sharing asks it once or twice for every key a pattern
  // loads, thousands of times an estimate.
  double gbps(int key) const {
    if (key >= trunk_key_base_) return trunk_gbps(key);
    const size_t id = static_cast<size_t>(key / 2);
    double rate = (rates_.empty() ? line_gbps(id) : rates_[id]) * efficiency_;
    if (!background_.empty()) rate -= background_gbps(key);
    return std::max(0.0, rate);
  }
  // The directed cable that sets a key's room: the key itself for a cable;
  // for a trunk, its cable with the least room (the lowest id of those).
  int cable_of(int key) const;

 private:
  double line_gbps(size_t id) const;           // read from fabric_
  double background_gbps(int directed) const;  // 0 where there is none
  double trunk_gbps(int key) const;
  const Fabric* fabric_;
  const PathIndex* index_ = nullptr;
  int trunk_key_base_ = std::numeric_limits<int>::max();
  std::span<const double> rates_;  // by Link::id; empty when read from fabric_
  double efficiency_;
  std::vector<std::pair<int, double>> background_;  // (directed cable, Gb/s), ordered
  std::vector<std::pair<int, double>> trunk_room_;  // (trunk key, Gb/s) of trunks with background, ordered
};

// A job as the sharing sees it: its flows on each load key (routes.h),
// ordered by key (fractional where a flow spreads), and the most one flow
// asks for.
struct Sharer {
  std::span<const std::pair<int, double>> flows;
  double demand_gbps = std::numeric_limits<double>::infinity();
};

struct Share {
  double flow_gbps = 0;  // the rate each of the job's flows gets; 0 when a cable of it has no room
  int limit = -1;        // the load key that stopped it; -1 when its demand did
};

// One share per sharer, in their order. A sharer with no flows gets its
// demand (+inf when unbounded).
std::vector<Share> share_max_min(std::span<const Sharer> sharers, const CableRoom& room);
// share_max_min(...)[0], filling only until the first sharer stops: what an
// estimate needs of its own pattern among its neighbours. With no sharers
// there is no first: a default Share (no rate, no limit).
Share first_share(std::span<const Sharer> sharers, const CableRoom& room);

// Flows per load key: bytes over the bytes of one flow. Takes the bytes by
// value: a caller done with them moves them in and no copy is made.
std::vector<std::pair<int, double>> flows_of(std::vector<std::pair<int, double>> bytes, double flow_bytes);

}  // namespace topo
