#include "routing/job_routes.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/error.h"
#include "routing/flow_exchange.h"
#include "routing/planned_flows.h"
#include "routing/route.h"

namespace topo {

std::optional<planner::Attachment> planner::attachment(const Fabric& f, NodeId hca) {
  for (auto [e, end] = boost::out_edges(hca, f.graph()); e != end; ++e) {
    const Link& l = f.link(*e);
    if (l.kind == LinkKind::Cable && l.gbps() > 0) return Attachment{f.peer(*e, hca), *e};
  }
  return std::nullopt;
}

namespace {

using namespace planner;

constexpr int kUnreached = std::numeric_limits<int>::max();
// Paths enumerated per flow: a two-level fabric has uplinks x parallel
// cables of them, a three-level one a few hundred; past this the first
// ones (in port order) are plenty to spread over.
constexpr size_t kMaxCandidates = 1024;

bool is_switch(const Fabric& f, NodeId n) { return f.node(n).kind == NodeKind::Switch; }

// The Active cable a switch's port leads to and its far end.
struct Step {
  LinkId cable;
  NodeId to;
};
std::optional<Step> step(const Fabric& f, NodeId sw, uint8_t port) {
  if (port == 0 || port == kNoPort) return std::nullopt;
  auto c = f.cable_at(sw, port);
  if (!c || f.link(*c).gbps() <= 0) return std::nullopt;
  return Step{*c, f.peer(*c, sw)};
}

// A switch's cabled ports that a table entry can name, ascending.
std::vector<int> cabled_ports(const Fabric& f, NodeId sw) {
  std::vector<int> ports;
  for (auto [e, end] = boost::out_edges(sw, f.graph()); e != end; ++e)
    if (f.link(*e).kind == LinkKind::Cable && f.local_port(*e, sw) <= 254) ports.push_back(f.local_port(*e, sw));
  std::sort(ports.begin(), ports.end());
  return ports;
}

// Every ring flow of every job: rank i to rank i+1, rail by rail.
std::vector<Flow> ring_flows(const Fabric& f, const std::vector<RingJob>& jobs) {
  std::vector<Flow> flows;
  for (size_t j = 0; j < jobs.size(); ++j) {
    const auto& ring = jobs[j].ring;
    if (ring.size() < 2) continue;
    for (size_t i = 0; i < ring.size(); ++i) {
      if (f.index().host_id(ring[i]) < 0)
        throw FabricError(fmt::format("job {}: rank {} is not a host of the fabric", jobs[j].id, i));
      auto from = f.hcas_of(ring[i]), to = f.hcas_of(ring[(i + 1) % ring.size()]);
      for (size_t r = 0; r < std::min(from.size(), to.size()); ++r) {
        auto a = attachment(f, from[r]), b = attachment(f, to[r]);
        if (!a || !b || f.node(to[r]).lid == 0) continue;
        flows.push_back(
            Flow{j, from[r], to[r], f.node(to[r]).lid, a->sw, b->sw, directed_cable(f.link(a->cable), from[r])});
      }
    }
  }
  return flows;
}

// The directed cables a flow crosses under `routing`, the source's cable
// first; false when the walk fails.
bool walk(const Fabric& f, const Routing& routing, const Flow& flow, std::vector<int>& out) {
  out.assign(1, flow.src_cable);
  NodeId at = flow.src_leaf;
  for (size_t hops = 0; hops <= f.switches().size(); ++hops) {
    auto s = step(f, at, routing.out_port(static_cast<size_t>(f.switch_index(at)), flow.lid));
    if (!s) return false;
    out.push_back(directed_cable(f.link(s->cable), at));
    if (s->to == flow.dst) return true;
    if (!is_switch(f, s->to)) return false;
    at = s->to;
  }
  return false;
}

bool inter_switch(const Fabric& f, int directed) {
  const Link& l = f.link(f.cables()[static_cast<size_t>(directed / 2)]);
  return is_switch(f, l.end_a) && is_switch(f, l.end_b);
}

// The load figures of `loads`.
RingLoad summary(const Fabric& f, const Loads& loads) {
  RingLoad s;
  for (size_t c = 0; c < loads.weighted.size(); ++c) {
    s.most = std::max(s.most, loads.weighted[c]);
    s.excess += std::max(0.0, loads.weighted[c] - 1.0);
    if (loads.flows[c] > 1 && inter_switch(f, static_cast<int>(c))) ++s.shared_cables;
  }
  return s;
}

// Switch hops from each switch down to `leaf` over down cables only
// (each hop to a lower switch); kUnreached where there is no such path.
std::vector<int> hops_down_to(const Fabric& f, NodeId leaf) {
  std::vector<int> dist(f.node_count(), kUnreached);
  std::vector<NodeId> frontier{leaf};
  dist[leaf] = 0;
  while (!frontier.empty()) {
    std::vector<NodeId> next;
    for (NodeId y : frontier)
      for (auto [e, end] = boost::out_edges(y, f.graph()); e != end; ++e) {
        NodeId x = f.peer(*e, y);
        if (f.link(*e).gbps() <= 0 || !is_switch(f, x) || f.node(x).height <= f.node(y).height) continue;
        if (dist[x] == kUnreached) {
          dist[x] = dist[y] + 1;
          next.push_back(x);
        }
      }
    frontier = std::move(next);
  }
  return dist;
}

// Every shortest up*/down* path from the flow's source leaf to its
// destination HCA, each as the entries it needs, in port order.
class PathSearch {
 public:
  PathSearch(const Fabric& f, const Flow& flow) : f_(f), flow_(flow), down_(hops_down_to(f, flow.dst_leaf)) {}

  std::vector<Path> run() {
    for (best_ = 0; best_ <= static_cast<int>(f_.switches().size()) && paths_.empty(); ++best_) {
      Path p;
      extend(flow_.src_leaf, true, p);
    }
    return std::move(paths_);
  }

 private:
  void extend(NodeId at, bool up, Path& p) {
    if (paths_.size() >= kMaxCandidates || static_cast<int>(p.size()) > best_) return;
    if (at == flow_.dst_leaf) {
      if (static_cast<int>(p.size()) == best_) finish(p);
      return;
    }
    for (int port : cabled_ports(f_, at)) {
      auto s = step(f_, at, static_cast<uint8_t>(port));
      if (!s || !is_switch(f_, s->to)) continue;
      const bool going_up = f_.node(s->to).height > f_.node(at).height;
      if (going_up && !up) continue;
      if (!going_up && (f_.node(s->to).height >= f_.node(at).height || down_[s->to] == kUnreached)) continue;
      p.push_back(Hop{f_.switch_index(at), static_cast<uint8_t>(port), directed_cable(f_.link(s->cable), at)});
      extend(s->to, going_up, p);
      p.pop_back();
    }
  }
  // The last hop, the destination leaf's own port to the HCA, is the same on every path.
  void finish(const Path& p) {
    auto c = attachment(f_, flow_.dst);
    Path full = p;
    full.push_back(Hop{f_.switch_index(flow_.dst_leaf), static_cast<uint8_t>(f_.local_port(c->cable, flow_.dst_leaf)),
                       directed_cable(f_.link(c->cable), flow_.dst_leaf)});
    paths_.push_back(std::move(full));
  }

  const Fabric& f_;
  const Flow& flow_;
  std::vector<int> down_;
  int best_ = 0;
  std::vector<Path> paths_;
};

int changes_of(const Routing& base, const Path& p, uint32_t lid) {
  int n = 0;
  for (const Hop& h : p) n += base.out_port(static_cast<size_t>(h.switch_index), lid) != h.port;
  return n;
}

// A candidate's cost if added to `loads`: the most on its cables, then the
// excess it adds, then the entries it changes.
struct Cost {
  double most = 0, excess = 0;
  int changes = 0;
  bool operator<(const Cost& o) const {
    constexpr double eps = 1e-9;
    if (most < o.most - eps || most > o.most + eps) return most < o.most;
    if (excess < o.excess - eps || excess > o.excess + eps) return excess < o.excess;
    return changes < o.changes;
  }
};
Cost cost_of(const Loads& loads, const std::vector<int>& cables, int changes) {
  Cost c;
  c.changes = changes;
  for (int k : cables) {
    const double now = loads.weighted[k], then = now + loads.weight[k];
    c.most = std::max(c.most, then);
    c.excess += std::max(0.0, then - 1.0) - std::max(0.0, now - 1.0);
  }
  return c;
}

// The cheapest candidate whose changes fit `budget` (-1: any), or -1 when
// none fits; a tie goes to the fewest changes, then the first in port order.
int choose(const Planned& p, const Loads& loads, int budget) {
  int best = -1;
  Cost best_cost;
  for (size_t i = 0; i < p.paths.size(); ++i) {
    if (budget >= 0 && p.path_changes[i] > budget) continue;
    Cost c = cost_of(loads, cables_of(*p.flow, p.paths[i]), p.path_changes[i]);
    if (best < 0 || c < best_cost) {
      best = static_cast<int>(i);
      best_cost = c;
    }
  }
  return best;
}

// Places the planned flows greedily in order, then moves each to its
// cheapest candidate until nothing moves (at most a few rounds). A flow
// whose every candidate would pass the churn cap keeps its base path.
void assign(std::vector<Planned>& planned, Loads& loads, int max_changes) {
  int used = 0;
  for (int round = 0; round < 8; ++round) {
    bool moved = false;
    for (Planned& p : planned) {
      if (round > 0) loads.add(p.cables(), -1);
      used -= p.changes();
      const int budget = max_changes <= 0 ? -1 : max_changes - used;
      const int pick = choose(p, loads, budget);
      moved |= pick != p.chosen;
      p.chosen = pick;
      used += p.changes();
      loads.add(p.cables(), +1);
    }
    if (!moved) break;
  }
}

// Flows that a cheaper path passed by for the churn cap.
int capped(const std::vector<Planned>& planned, Loads loads) {
  int n = 0;
  for (const Planned& p : planned) {
    loads.add(p.cables(), -1);
    const int free_pick = choose(p, loads, -1);
    const Cost now = cost_of(loads, p.cables(), p.changes());
    n += free_pick >= 0 && cost_of(loads, cables_of(*p.flow, p.paths[free_pick]), p.path_changes[free_pick]) < now &&
         now.most > 1.0 + 1e-9;
    loads.add(p.cables(), +1);
  }
  return n;
}

std::set<NodeId> leaves_of_job(const Fabric& f, const RingJob& job) {
  std::set<NodeId> leaves;
  for (NodeId h : job.ring)
    for (NodeId hca : f.hcas_of(h))
      if (auto a = attachment(f, hca)) leaves.insert(a->sw);
  return leaves;
}

std::vector<EntryChange> diff_tables(const Routing& base, const Routing& planned, const std::vector<uint32_t>& lids) {
  std::vector<EntryChange> out;
  for (size_t s = 0; s < planned.lft.size(); ++s)
    for (uint32_t lid : lids)
      if (base.out_port(s, lid) != planned.out_port(s, lid))
        out.push_back(EntryChange{static_cast<int>(s), lid, base.out_port(s, lid), planned.out_port(s, lid)});
  return out;
}

void set_entry(Routing& r, size_t s, uint32_t lid, uint8_t port) {
  auto& t = r.lft[s];
  if (t.size() <= lid) t.resize(lid + 1, kNoPort);
  t[lid] = port;
}

}  // namespace

RingLoad ring_load(const Fabric& fabric, const Routing& routing, const std::vector<RingJob>& jobs) {
  Loads loads(fabric);
  std::vector<int> cables;
  for (const Flow& flow : ring_flows(fabric, jobs))
    if (walk(fabric, routing, flow, cables)) loads.add(cables, +1);
  return summary(fabric, loads);
}

RoutePlan plan_job_routes(const Fabric& fabric, const Routing& base, const std::vector<RingJob>& jobs,
                          const RoutePlanOptions& options) {
  if (!base.is_static())
    throw FabricError("routes for running jobs need static tables; the fabric routes " + routing_name(base));
  const std::vector<Flow> flows = ring_flows(fabric, jobs);
  std::vector<bool> multi_leaf(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) multi_leaf[j] = leaves_of_job(fabric, jobs[j]).size() > 1;

  RoutePlan plan;
  plan.routing = base;
  Loads loads(fabric);
  std::vector<Planned> planned;
  std::set<uint32_t> lids;
  std::vector<int> cables;
  for (const Flow& flow : flows) {
    const bool ok = walk(fabric, base, flow, cables);
    if (multi_leaf[flow.job]) lids.insert(flow.lid);
    if (multi_leaf[flow.job] && flow.src_leaf != flow.dst_leaf) {
      Planned p{&flow, PathSearch(fabric, flow).run(), {}, ok ? cables : std::vector<int>{}, -1};
      for (const Path& path : p.paths) p.path_changes.push_back(changes_of(base, path, flow.lid));
      if (!p.paths.empty()) {
        planned.push_back(std::move(p));
        continue;
      }
    }
    if (ok) loads.add(cables, +1);
  }
  assign(planned, loads, options.max_changes);
  exchange_flows(planned, loads, options.max_changes);
  plan.capped_flows = options.max_changes > 0 ? capped(planned, loads) : 0;

  for (const Planned& p : planned)
    if (p.chosen >= 0)
      for (const Hop& h : p.paths[p.chosen])
        set_entry(plan.routing, static_cast<size_t>(h.switch_index), p.flow->lid, h.port);
  plan.lids.assign(lids.begin(), lids.end());
  // A LID whose new entries fail the checks keeps its base entries.
  for (uint32_t lid : plan.lids)
    if (!check_destination(fabric, plan.routing, lid).empty())
      for (size_t s = 0; s < plan.routing.lft.size(); ++s) set_entry(plan.routing, s, lid, base.out_port(s, lid));
  plan.changes = diff_tables(base, plan.routing, plan.lids);
  plan.before = ring_load(fabric, base, jobs);
  plan.after = ring_load(fabric, plan.routing, jobs);
  return plan;
}

std::vector<TurnFault> check_destination(const Fabric& f, const Routing& routing, uint32_t lid) {
  using Kind = TurnFault::Kind;
  std::vector<TurnFault> faults;
  auto target = f.node_by_lid(lid);
  for (NodeId sw : f.switches()) {
    NodeId at = sw;
    std::optional<Kind> bad;
    for (size_t hops = 0;; ++hops) {
      if (target && at == *target) break;
      if (hops > f.switches().size()) {
        bad = Kind::Loop;
        break;
      }
      auto s = step(f, at, routing.out_port(static_cast<size_t>(f.switch_index(at)), lid));
      if (!s || (!is_switch(f, s->to) && s->to != target)) {
        bad = Kind::NoPath;
        break;
      }
      if (s->to == target) break;
      at = s->to;
    }
    if (bad) faults.push_back(TurnFault{*bad, f.switch_index(at), lid});
  }
  // Down-up turns: a switch that receives the LID from above and sends it up.
  std::set<NodeId> turned;
  for (NodeId y : f.switches()) {
    auto down = step(f, y, routing.out_port(static_cast<size_t>(f.switch_index(y)), lid));
    if (!down || !is_switch(f, down->to) || f.node(down->to).height >= f.node(y).height) continue;
    NodeId x = down->to;
    auto next = step(f, x, routing.out_port(static_cast<size_t>(f.switch_index(x)), lid));
    if (next && is_switch(f, next->to) && f.node(next->to).height > f.node(x).height && turned.insert(x).second)
      faults.push_back(TurnFault{Kind::DownUp, f.switch_index(x), lid});
  }
  return faults;
}

std::vector<TurnFault> check_up_down(const Fabric& fabric, const Routing& routing) {
  std::vector<TurnFault> faults;
  for (NodeId hca : fabric.hcas()) {
    if (fabric.node(hca).lid == 0 || !attachment(fabric, hca)) continue;
    auto more = check_destination(fabric, routing, fabric.node(hca).lid);
    faults.insert(faults.end(), more.begin(), more.end());
  }
  return faults;
}

std::string describe(const Fabric& fabric, const TurnFault& fault) {
  const std::string& sw = fabric.node(fabric.switches()[static_cast<size_t>(fault.switch_index)]).name;
  switch (fault.kind) {
    case TurnFault::Kind::NoPath:
      return fmt::format("LID {}: no path from {}", fault.lid, sw);
    case TurnFault::Kind::Loop:
      return fmt::format("LID {}: the walk from {} loops", fault.lid, sw);
    case TurnFault::Kind::DownUp:
      return fmt::format("LID {}: {} receives it from above and sends it up (a down-up turn)", fault.lid, sw);
  }
  return {};
}

}  // namespace topo
