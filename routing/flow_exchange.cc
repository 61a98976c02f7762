#include "routing/flow_exchange.h"

#include <algorithm>
#include <set>

namespace topo::planner {
namespace {

constexpr double kEps = 1e-9;

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// A flow's candidates, fewest entries changed from the base first (then in
// port order): of the moves that lower a cable, the ones closest to the
// base tables, so that plans for similar running sets stay alike.
std::vector<int> by_changes(const Planned& p) {
  std::vector<int> order(p.paths.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p.path_changes[a] < p.path_changes[b]; });
  return order;
}

class Exchange {
 public:
  Exchange(std::vector<Planned>& planned, Loads& loads, int max_changes)
      : planned_(planned), loads_(loads), max_changes_(max_changes), on_cable_(loads.weighted.size()) {
    for (size_t i = 0; i < planned_.size(); ++i) {
      used_ += planned_[i].changes();
      for (int c : planned_[i].cables()) on_cable_[c].push_back(static_cast<int>(i));
    }
  }

  void run();

 private:
  double level_above(const std::set<int>& stuck) const;
  bool lower(int cable, double level);
  bool eject(int cable, double level, bool chains);
  bool fits(const Planned& p, int pick) const;
  std::vector<int> filled(const Planned& p, int pick, double level) const;
  void move(int flow, int pick);

  std::vector<Planned>& planned_;
  Loads& loads_;
  int max_changes_;
  int used_ = 0;                            // entries changed from the base tables
  std::vector<std::vector<int>> on_cable_;  // planned flows per directed cable
  std::vector<char> searched_;              // cables a chain already looked at
  std::vector<char> in_chain_;              // flows the chain already moved
};

// The highest load on a cable that carries a planned flow and is not known
// to be stuck; 0 when none is.
double Exchange::level_above(const std::set<int>& stuck) const {
  double level = 0;
  for (size_t c = 0; c < on_cable_.size(); ++c)
    if (!on_cable_[c].empty() && !stuck.contains(static_cast<int>(c))) level = std::max(level, loads_.weighted[c]);
  return level;
}

void Exchange::run() {
  std::set<int> stuck;
  for (double level = level_above(stuck); level > 1.0 + kEps; level = level_above(stuck))
    for (size_t c = 0; c < on_cable_.size(); ++c) {
      if (on_cable_[c].empty() || stuck.contains(static_cast<int>(c)) || loads_.weighted[c] < level - kEps) continue;
      if (!lower(static_cast<int>(c), level)) stuck.insert(static_cast<int>(c));
    }
}

// Moves flows off `cable` until it carries less than `level`; false when
// no chain does it (the moves made stay: each lowered it).
bool Exchange::lower(int cable, double level) {
  while (loads_.weighted[cable] > level - kEps) {
    bool moved = false;
    // A direct move first, then chains: the shortest change that does it.
    for (bool chains : {false, true}) {
      searched_.assign(on_cable_.size(), 0);
      in_chain_.assign(planned_.size(), 0);
      if ((moved = eject(cable, level, chains))) break;
    }
    if (!moved) return false;
  }
  return true;
}

bool Exchange::fits(const Planned& p, int pick) const {
  return max_changes_ <= 0 || used_ - p.changes() + p.path_changes[pick] <= max_changes_;
}

// The cables path `pick` would newly bring to `level` or above.
std::vector<int> Exchange::filled(const Planned& p, int pick, double level) const {
  const std::vector<int> now = p.cables();
  std::vector<int> out;
  for (int c : cables_of(*p.flow, p.paths[pick]))
    if (!contains(now, c) && loads_.weighted[c] + loads_.weight[c] > level - kEps) out.push_back(c);
  return out;
}

// Moves one flow off `cable` so that every cable it newly takes stays
// below `level`, or (with `chains`) so that one such cable, below the
// level now, gets there and is lowered again by another move.
bool Exchange::eject(int cable, double level, bool chains) {
  searched_[cable] = 1;
  const std::vector<int> flows = on_cable_[cable];
  for (int f : flows) {
    if (in_chain_[f]) continue;
    const Planned& p = planned_[f];
    for (int pick : by_changes(p)) {
      if (pick == p.chosen || !fits(p, pick) || contains(cables_of(*p.flow, p.paths[pick]), cable)) continue;
      const std::vector<int> full = filled(p, pick, level);
      if (full.empty()) {
        move(f, pick);
        return true;
      }
      if (!chains || full.size() > 1 || searched_[full[0]] || loads_.weighted[full[0]] > level - kEps) continue;
      const int before = p.chosen;
      move(f, pick);
      in_chain_[f] = 1;
      if (eject(full[0], level, chains)) return true;
      in_chain_[f] = 0;
      move(f, before);
    }
  }
  return false;
}

void Exchange::move(int flow, int pick) {
  Planned& p = planned_[flow];
  for (int c : p.cables()) std::erase(on_cable_[c], flow);
  loads_.add(p.cables(), -1);
  used_ -= p.changes();
  p.chosen = pick;
  used_ += p.changes();
  loads_.add(p.cables(), +1);
  for (int c : p.cables()) on_cable_[c].push_back(flow);
}

}  // namespace

void exchange_flows(std::vector<Planned>& planned, Loads& loads, int max_changes) {
  Exchange(planned, loads, max_changes).run();
}

}  // namespace topo::planner
