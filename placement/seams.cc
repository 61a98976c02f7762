#include "placement/seams.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <set>

#include "placement/ring_order.h"
#include "placement/search.h"
#include "placement/traffic.h"

namespace topo {
namespace {

struct Segment {
  std::vector<NodeId> hosts;  // the job's hosts on this leaf, in port order
  std::vector<NodeId> spare;  // eligible free hosts of the leaf outside the job
  NodeId entry = 0, exit = 0;
};

void append(const Segment& s, std::vector<NodeId>& ring) {
  ring.push_back(s.entry);
  for (NodeId h : s.hosts)
    if (h != s.entry && h != s.exit) ring.push_back(h);
  if (s.exit != s.entry) ring.push_back(s.exit);
}

// The job's cross-leaf flows: edge i runs from segment i's exit to segment
// i+1's entry (a chain has no edge from the last segment back to the first).
// The job's own flows per cable are kept as the edges change, so a choice
// tried costs the routes of the two edges it moves and a pass over the few
// cables the job's seams cross, never a sort.
class Seams {
 public:
  Seams(const SwitchTree& tree, SeamRoutes& routes, const FreeMap& free, std::vector<Segment> segments, bool closed)
      : tree_(tree),
        routes_(routes),
        free_(free),
        segs_(std::move(segments)),
        closed_(closed),
        edges_(segs_.size(), &kNoCables),
        slot_(routes.scratch()) {
    for (size_t i = 0; i < segs_.size(); ++i) route(i);
  }
  // Leaves the routes' scratch clear for the next search.
  ~Seams() {
    for (const Load& l : own_) slot_[static_cast<size_t>(l.cable)] = 0;
  }
  Seams(const Seams&) = delete;
  Seams& operator=(const Seams&) = delete;

  SeamCost cost() const {
    SeamCost c;
    for (const Load& l : own_) {
      c.worst = std::max(c.worst, l.flows);
      c.sum += l.flows * l.own;
    }
    return c;
  }

  // One pass of coordinate descent over every segment's entry and exit.
  void improve() {
    const size_t k = segs_.size();
    for (size_t j = 0; j < k; ++j) {
      Segment& s = segs_[j];
      const size_t in = (j + k - 1) % k;  // the edge into segment j
      SeamCost best = cost();
      if (closed_ || j > 0) {
        std::vector<NodeId> options = s.hosts;
        options.insert(options.end(), s.spare.begin(), s.spare.end());
        for (NodeId h : options) {
          Undo undo{s.entry, s.exit, 0};
          if (!enter_at(s, h, undo)) continue;
          bool exit_moved = s.exit != undo.exit;
          keep(in, 0);
          if (exit_moved) keep(j, 1);
          moved_ = false;
          route(in);
          if (exit_moved) route(j);
          if (SeamCost c = moved_ ? cost() : best; c < best) {
            best = c;
            continue;
          }
          restore(in, 0);
          if (exit_moved) restore(j, 1);
          s.entry = undo.entry;
          s.exit = undo.exit;
          if (undo.replaced) {
            std::replace(s.hosts.begin(), s.hosts.end(), h, undo.replaced);
            std::replace(s.spare.begin(), s.spare.end(), undo.replaced, h);
          }
        }
      }
      if (s.hosts.size() > 1 && (closed_ || j + 1 < k)) {
        // Routes leave by the sender's leaves: an exit that shares them
        // with the current one takes the same cables.
        uint64_t exit_sender = routes_.sender_key(s.exit);
        for (NodeId h : s.hosts) {
          if (h == s.entry || h == s.exit || routes_.sender_key(h) == exit_sender) continue;
          NodeId saved = s.exit;
          keep(j, 0);
          s.exit = h;
          moved_ = false;
          route(j);
          if (SeamCost c = moved_ ? cost() : best; c < best) {
            best = c;
            exit_sender = routes_.sender_key(h);
          } else {
            s.exit = saved;
            restore(j, 0);
          }
        }
      }
    }
  }

  // One pass over pairs of segments of one pod (`pod` by position): a
  // swap changes which leaf each of the two sends to, and so, under
  // destination-routed tables, which uplink of its leaf carries the flow
  // (the receiving host's LID picks it). Segments of different pods are
  // never swapped: that would add pod crossings the structure tiers count.
  // Rings of more than kMaxReordered segments keep their order: the pass
  // is quadratic in segments.
  static constexpr size_t kMaxReordered = 32;
  void reorder(std::vector<int>& pod) {
    const size_t k = segs_.size();
    if (k < 3 || k > kMaxReordered) return;
    std::vector<const std::vector<int>*> saved(k);
    for (size_t a = 0; a < k; ++a)
      for (size_t b = a + 1; b < k; ++b) {
        if (pod[a] != pod[b]) continue;
        const SeamCost before = cost();
        const size_t touched[] = {(a + k - 1) % k, a, (b + k - 1) % k, b};
        for (size_t e : touched) saved[e] = edges_[e];
        std::swap(segs_[a], segs_[b]);
        moved_ = false;
        for (size_t e : touched) route(e);
        if (moved_ && cost() < before) {
          std::swap(pod[a], pod[b]);
          continue;
        }
        std::swap(segs_[a], segs_[b]);
        for (size_t e : touched) take(e, saved[e]);
      }
  }

  std::vector<NodeId> ring() const {
    std::vector<NodeId> out;
    for (const Segment& s : segs_) append(s, out);
    return out;
  }

 private:
  // What enter_at() changed: the old entry and exit, and the host a spare
  // replaced (0 when none).
  struct Undo {
    NodeId entry, exit, replaced;
  };
  // Makes `h` the segment's entry; a spare replaces the old entry or another
  // host alike (never the exit of a segment of several).
  bool enter_at(Segment& s, NodeId h, Undo& undo) {
    if (h == s.entry) return false;
    auto at = std::find(s.hosts.begin(), s.hosts.end(), h);
    if (at != s.hosts.end()) {
      if (h == s.exit) {
        if (s.hosts.size() < 2) return false;
        s.exit = s.entry;
      }
      s.entry = h;
      return true;
    }
    NodeId out = 0;
    bool found = false;
    if (s.hosts.size() == 1 || (s.entry != s.exit && alike(s.entry, h))) {
      out = s.entry;
      found = alike(out, h);
    }
    for (auto it = s.hosts.rbegin(); !found && it != s.hosts.rend(); ++it)
      if (*it != s.exit && *it != s.entry && alike(*it, h)) out = *it, found = true;
    if (!found) return false;
    std::replace(s.hosts.begin(), s.hosts.end(), out, h);
    std::replace(s.spare.begin(), s.spare.end(), h, out);
    undo.replaced = out;
    if (s.exit == out) s.exit = h;
    s.entry = h;
    return true;
  }
  // Whether a spare may stand in for a host of the job: as many free GPUs
  // and as many degraded cables, so that every structure tier, the fit and
  // the fragmentation stay as they were (the search relies on it).
  bool alike(NodeId a, NodeId b) const {
    return free_.free(a) == free_.free(b) && tree_.degraded_cables(a).size() == tree_.degraded_cables(b).size();
  }
  // Edge i's route, and the job's flows on the cables it leaves and takes.
  void route(size_t i) {
    if (!closed_ && i + 1 == segs_.size()) return take(i, &kNoCables);
    take(i, &routes_.cables(segs_[i].exit, segs_[(i + 1) % segs_.size()].entry));
  }
  // A choice tried and dropped puts edge i back as kept, without a route.
  void keep(size_t i, int slot) { kept_[slot] = edges_[i]; }
  void restore(size_t i, int slot) { take(i, kept_[slot]); }
  // Edge i now crosses `cables`. Under destination-routed tables many
  // choices give an edge the very cables it had (another exit of the same
  // leaf, an entry under the same uplink index): the counts stay as they
  // are, and moved_ stays false so the caller need not cost the choice.
  void take(size_t i, const std::vector<int>* cables) {
    if (cables != edges_[i] && *cables != *edges_[i]) {
      count(*edges_[i], -1);
      count(*cables, +1);
      moved_ = true;
    }
    edges_[i] = cables;
  }
  // own_ keeps its order of first counting (cost() sums in it); slot_
  // finds a cable's entry in it without a search.
  void count(const std::vector<int>& cables, int sign) {
    for (int c : cables) {
      int& at = slot_[static_cast<size_t>(c)];
      if (at == 0) {
        const double running = free_.flows_on(c);
        own_.push_back({c, static_cast<double>(sign), running, running + sign});
        at = static_cast<int>(own_.size());
      } else if (Load& l = own_[at - 1]; (l.own += sign) == 0) {
        l = own_.back();
        slot_[static_cast<size_t>(l.cable)] = at;
        own_.pop_back();
        at = 0;
      } else {
        l.flows = l.running + l.own;
      }
    }
  }

  static inline const std::vector<int> kNoCables;
  const SwitchTree& tree_;
  SeamRoutes& routes_;
  const FreeMap& free_;
  std::vector<Segment> segs_;
  bool closed_;
  // A directed cable the job's cross-leaf flows take.
  // Counts as doubles: cost() reads them for every choice tried.
  struct Load {
    int cable;
    double own;      // the job's flows on it, a whole number, never zero
    double running;  // the running jobs' (FreeMap::flows_on)
    double flows;    // both
  };
  std::vector<const std::vector<int>*> edges_;  // each edge's cables, held by routes_
  std::vector<Load> own_;
  int* slot_;  // by directed cable: 1 + its place in own_, 0 when absent
  const std::vector<int>* kept_[2] = {&kNoCables, &kNoCables};
  bool moved_ = false;  // whether take() changed a count since it was last cleared
};

std::vector<Segment> segments(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                              std::span<const NodeId> ring) {
  std::vector<Segment> out;
  int leaf = -2;
  for (NodeId h : ring) {
    if (tree.home_leaf(h) != leaf) {
      leaf = tree.home_leaf(h);
      out.emplace_back();
    }
    out.back().hosts.push_back(h);
  }
  std::set<NodeId> job(ring.begin(), ring.end());
  for (Segment& s : out) {
    s.entry = s.hosts.front();
    s.exit = s.hosts.back();
    int l = tree.home_leaf(s.entry);
    if (request.hosts <= 0 || l < 0) continue;
    for (NodeId h : tree.leaves()[l].hosts)
      if (!job.contains(h) && eligible(tree, free, request, h)) s.spare.push_back(h);
  }
  return out;
}

bool applies(const SwitchTree& tree, const PlacementRequest& request, std::span<const NodeId> ring) {
  return tree.fabric().routing().is_static() && follows_ring(request.profile) && ring.size() > 1 &&
         tree.home_leaf(ring.front()) != tree.home_leaf(ring.back());
}

// The second largest of `v` (of two or more): a chain may leave one segment
// without a flow in and one without a flow out.
double second_largest(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + 1, v.end(), std::greater<>());
  return v[1];
}

// The fewest flows the busiest cable of a flow from segment a to segment b
// can carry, over a's exits and b's entries (spares included, alike or not:
// a floor may look at more choices than the search has).
double cheapest_seam(const FreeMap& free, SeamRoutes& routes, const Segment& a, const Segment& b) {
  double best = std::numeric_limits<double>::infinity();
  std::set<uint64_t> senders;  // exits with one sender key take the same cables
  for (const std::vector<NodeId>* exits : {&a.hosts, &a.spare})
    for (NodeId x : *exits) {
      if (!senders.insert(routes.sender_key(x)).second) continue;
      for (const std::vector<NodeId>* entries : {&b.hosts, &b.spare})
        for (NodeId e : *entries) {
          double worst = 0;
          for (int c : routes.cables(x, e)) worst = std::max(worst, free.flows_on(c) + 1);
          best = std::min(best, worst);
        }
    }
  return best;
}

}  // namespace

uint64_t SeamRoutes::sender_key(NodeId from) const {
  constexpr uint64_t kLeafSet = uint64_t{1} << 31;  // above every NodeId of a fabric
  const int set = paths_.leaf_set(paths_.host_index(from));
  return set < 0 ? from : kLeafSet | static_cast<uint64_t>(set);
}

const std::vector<int>& SeamRoutes::cables(NodeId from, NodeId to) {
  const int set = paths_.leaf_set(paths_.host_index(from));
  const int dest = paths_.host_index(to);
  const std::vector<int>** at = nullptr;
  if (set >= 0 && dest >= 0) {
    std::vector<const std::vector<int>*>& row = by_leaf_set_[static_cast<size_t>(set)];
    if (row.empty()) {
      row.assign(paths_.fabric().hosts().size(), nullptr);
      bytes_ += row.size() * sizeof(row[0]);
    }
    at = &row[static_cast<size_t>(dest)];
  } else {
    at = &lone_[sender_key(from) << 32 | to];
  }
  if (!*at) {
    std::vector<int>& route = routes_.emplace_back();
    switch_cables(paths_, from, to, route);
    *at = &route;
    bytes_ += sizeof(route) + route.capacity() * sizeof(int);
  }
  return **at;
}

void SeamRoutes::clear() {
  by_leaf_set_.assign(by_leaf_set_.size(), {});  // frees the rows: clear() is how the bound on bytes is kept
  lone_.clear();
  routes_.clear();
  bytes_ = 0;
}

double seam_floor(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                  std::span<const NodeId> hosts) {
  std::vector<NodeId> natural = ring_order(tree, hosts);
  if (!applies(tree, request, natural)) return 0;
  SeamRoutes routes(tree.paths());
  const std::vector<Segment> segs = segments(tree, free, request, natural);
  const size_t k = segs.size();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> in(k, inf), out(k, inf);  // the least any flow into (out of) each segment meets
  for (size_t a = 0; a < k; ++a)
    for (size_t b = 0; b < k; ++b) {
      if (a == b) continue;
      const double c = cheapest_seam(free, routes, segs[a], segs[b]);
      out[a] = std::min(out[a], c);
      in[b] = std::min(in[b], c);
    }
  if (request.profile == Profile::Pipeline)
    return std::max(second_largest(std::move(in)), second_largest(std::move(out)));
  return std::max(*std::max_element(in.begin(), in.end()), *std::max_element(out.begin(), out.end()));
}

SeamCost seam_cost(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                   std::span<const NodeId> ring) {
  SeamRoutes routes(tree.paths());
  return seam_cost(tree, free, request, ring, routes);
}

SeamCost seam_cost(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                   std::span<const NodeId> ring, SeamRoutes& routes) {
  if (!tree.fabric().routing().is_static() || ring.size() < 2) return {};
  std::vector<Segment> segs;
  int leaf = -2;
  for (NodeId h : ring) {
    if (tree.home_leaf(h) != leaf) {
      leaf = tree.home_leaf(h);
      segs.emplace_back();
      segs.back().entry = h;
    }
    segs.back().hosts.push_back(h);
    segs.back().exit = h;
  }
  bool closed = request.profile != Profile::Pipeline;
  if (closed && segs.size() > 1 && tree.home_leaf(ring.front()) == tree.home_leaf(ring.back())) {
    // The ring starts mid-segment: the wrap joins its last and first runs.
    segs.front().entry = segs.back().entry;
    segs.pop_back();
  }
  return Seams(tree, routes, free, std::move(segs), closed).cost();
}

std::vector<NodeId> seam_ring(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                              std::span<const NodeId> hosts) {
  SeamRoutes routes(tree.paths());
  return seam_ring(tree, free, request, hosts, routes);
}

std::vector<NodeId> seam_ring(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                              std::span<const NodeId> hosts, SeamRoutes& routes) {
  std::vector<NodeId> natural = ring_order(tree, hosts);
  if (!applies(tree, request, natural)) return natural;
  const bool closed = request.profile != Profile::Pipeline;
  std::vector<Segment> forward = segments(tree, free, request, natural);
  std::vector<Segment> backward(forward.rbegin(), forward.rend());
  std::vector<NodeId> best;
  SeamCost best_cost;
  for (std::vector<Segment>* order : {&forward, &backward}) {
    if (order == &backward && best_cost.worst <= 1 + 1e-9) break;  // see the header: no lower worst to find
    std::vector<int> pod;
    for (const Segment& s : *order) {
      int leaf = tree.home_leaf(s.entry);
      // An unplaced segment gets a pod of its own: never swapped.
      pod.push_back(leaf >= 0 ? tree.leaves()[leaf].pod : -1 - static_cast<int>(pod.size()));
    }
    Seams seams(tree, routes, free, *order, closed);
    for (int pass = 0; pass < 3; ++pass) {
      SeamCost before = seams.cost();
      seams.improve();
      seams.reorder(pod);
      if (!(seams.cost() < before)) break;
    }
    SeamCost c = seams.cost();
    if (best.empty() || c < best_cost) {
      best = seams.ring();
      best_cost = c;
    }
  }
  return best;
}

}  // namespace topo
