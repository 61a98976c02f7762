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

// Room per directed cable (topology/route.h directed_cable), in Gb/s.
class CableRoom {
 public:
  CableRoom(const Fabric& fabric, const BackgroundLoad& background, double efficiency);
  // The same, reading the line rates the index keeps by cable (kept alive
  // by the caller).
  CableRoom(const PathIndex& index, const BackgroundLoad& background, double efficiency);
  // Inline: the sharing asks it once or twice for every cable a pattern
  // loads, thousands of times an estimate.
  double gbps(int directed) const {
    const size_t id = static_cast<size_t>(directed / 2);
    double rate = (rates_.empty() ? line_gbps(id) : rates_[id]) * efficiency_;
    if (!background_.empty()) rate -= background_gbps(directed);
    return std::max(0.0, rate);
  }

 private:
  double line_gbps(size_t id) const;          // read from fabric_
  double background_gbps(int directed) const;  // 0 where there is none
  const Fabric* fabric_;
  std::span<const double> rates_;  // by Link::id; empty when read from fabric_
  double efficiency_;
  std::vector<std::pair<int, double>> background_;  // (directed cable, Gb/s), ordered
};

// A job as the sharing sees it: its flows on each directed cable, ordered by
// cable (fractional where a flow spreads), and the most one flow asks for.
struct Sharer {
  std::span<const std::pair<int, double>> flows;
  double demand_gbps = std::numeric_limits<double>::infinity();
};

struct Share {
  double flow_gbps = 0;  // the rate each of the job's flows gets; 0 when a cable of it has no room
  int limit = -1;        // the directed cable that stopped it; -1 when its demand did
};

// One share per sharer, in their order. A sharer with no flows gets its
// demand (+inf when unbounded).
std::vector<Share> share_max_min(std::span<const Sharer> sharers, const CableRoom& room);

// Flows per directed cable: bytes over the bytes of one flow.
std::vector<std::pair<int, double>> flows_of(std::span<const std::pair<int, double>> bytes, double flow_bytes);

}  // namespace topo
