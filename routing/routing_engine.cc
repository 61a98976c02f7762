#include "routing/routing_engine.h"

#include <algorithm>
#include <array>
#include <bit>
#include <deque>
#include <limits>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"

namespace topo {
namespace {

constexpr uint8_t kFar = 0xff;  // no path, as OpenSM's hop tables say

// One switch's cabled ports, in port order.
struct SwitchPort {
  int port;
  NodeId peer;
  int peer_switch;  // index of the peer in Fabric::switches(), -1 for an HCA
  int peer_port;
};

struct Switches {
  std::vector<std::vector<SwitchPort>> ports;  // by switch index
  std::vector<uint32_t> lid;
  std::vector<uint64_t> guid;
  uint32_t top_lid = 0;
  // CA ports: the HCA vertex, its leaf (switch index) and the leaf's port.
  struct Ca {
    NodeId hca;
    int leaf;
    int leaf_port;
  };
  std::vector<Ca> cas;  // in OpenSM's routing order (see order_cas)
};

Switches index_switches(const Fabric& f) {
  Switches s;
  size_t n = f.switches().size();
  s.ports.resize(n);
  s.lid.resize(n);
  s.guid.resize(n);
  for (size_t i = 0; i < n; ++i) {
    NodeId v = f.switches()[i];
    s.lid[i] = f.node(v).lid;
    s.guid[i] = f.node(v).guid;
    for (auto e : boost::make_iterator_range(boost::out_edges(v, f.graph()))) {
      const Link& l = f.link(e);
      if (l.kind != LinkKind::Cable || l.state != PortState::Active) continue;
      NodeId p = f.peer(e, v);
      s.ports[i].push_back({f.local_port(e, v), p, f.switch_index(p), f.local_port(e, p)});
    }
    std::sort(s.ports[i].begin(), s.ports[i].end(),
              [](const SwitchPort& a, const SwitchPort& b) { return a.port < b.port; });
  }
  for (NodeId v = 0; v < f.node_count(); ++v) s.top_lid = std::max(s.top_lid, f.node(v).lid);
  return s;
}

// OpenSM's order of CA ports (ucast_mgr_build_lfts): switches by the number
// of CA ports on them, most first, ties in the order of its switch table, a
// map keyed by the GUID in network byte order; each switch's ports in order.
void order_cas(Switches& s) {
  std::vector<int> order(s.ports.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  auto key = [&](int i) { return __builtin_bswap64(s.guid[static_cast<size_t>(i)]); };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
  auto endports = [&](int i) {
    return std::count_if(s.ports[static_cast<size_t>(i)].begin(), s.ports[static_cast<size_t>(i)].end(),
                         [](const SwitchPort& p) { return p.peer_switch < 0; });
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return endports(a) > endports(b); });
  for (int i : order)
    for (const SwitchPort& p : s.ports[static_cast<size_t>(i)])
      if (p.peer_switch < 0) s.cas.push_back({p.peer, i, p.port});
}

// Hop counts towards one target switch: the least per switch, and per port
// (the hops a packet takes leaving by that port).
struct Hops {
  std::vector<uint8_t> least;
  std::vector<std::vector<uint8_t>> via;  // [switch][position in Switches::ports]
};

// Plain min hop (osm_ucast_mgr_build_lid_matrices): a port's hops are its
// neighbour's least plus one.
Hops min_hops(const Switches& s, int target) {
  size_t n = s.ports.size();
  Hops h;
  h.least.assign(n, kFar);
  h.least[static_cast<size_t>(target)] = 0;
  std::deque<int> queue{target};
  while (!queue.empty()) {
    int u = queue.front();
    queue.pop_front();
    for (const SwitchPort& p : s.ports[static_cast<size_t>(u)])
      if (p.peer_switch >= 0 && h.least[static_cast<size_t>(p.peer_switch)] == kFar) {
        h.least[static_cast<size_t>(p.peer_switch)] = static_cast<uint8_t>(h.least[static_cast<size_t>(u)] + 1);
        queue.push_back(p.peer_switch);
      }
  }
  h.via.resize(n);
  for (size_t i = 0; i < n; ++i) {
    h.via[i].assign(s.ports[i].size(), kFar);
    for (size_t k = 0; k < s.ports[i].size(); ++k) {
      int q = s.ports[i][k].peer_switch;
      if (q >= 0 && h.least[static_cast<size_t>(q)] != kFar)
        h.via[i][k] = static_cast<uint8_t>(h.least[static_cast<size_t>(q)] + 1);
    }
  }
  return h;
}

// up*/down* hops as updn_bfs_by_node computes them: a BFS from the target
// that never turns from down to up, each switch keeping the direction it
// was first reached in.
struct UpDown {
  std::vector<unsigned> rank;
  std::vector<uint64_t> id;
};

bool goes_up(const UpDown& ud, int cur, int rem) {
  unsigned a = ud.rank[static_cast<size_t>(cur)], b = ud.rank[static_cast<size_t>(rem)];
  if (a == 0 && b == 0) return true;
  if (a != b) return a > b;
  return ud.id[static_cast<size_t>(cur)] > ud.id[static_cast<size_t>(rem)];
}

Hops updn_hops(const Switches& s, const UpDown& ud, int target) {
  size_t n = s.ports.size();
  Hops h;
  h.least.assign(n, kFar);
  h.via.resize(n);
  for (size_t i = 0; i < n; ++i) h.via[i].assign(s.ports[i].size(), kFar);
  h.least[static_cast<size_t>(target)] = 0;
  std::vector<char> up(n, 1), queued(n, 0);
  std::deque<int> queue{target};
  queued[static_cast<size_t>(target)] = 1;
  while (!queue.empty()) {
    int u = queue.front();
    queue.pop_front();
    queued[static_cast<size_t>(u)] = 0;
    for (const SwitchPort& p : s.ports[static_cast<size_t>(u)]) {
      int r = p.peer_switch;
      if (r < 0) continue;
      bool next_up = goes_up(ud, u, r);
      if (!up[static_cast<size_t>(u)] && next_up) continue;
      auto& rp = s.ports[static_cast<size_t>(r)];
      size_t k = static_cast<size_t>(
          std::find_if(rp.begin(), rp.end(), [&](const SwitchPort& x) { return x.port == p.peer_port; }) - rp.begin());
      uint8_t hops = static_cast<uint8_t>(h.least[static_cast<size_t>(u)] + 1);
      if (k < rp.size() && hops < h.via[static_cast<size_t>(r)][k]) {
        h.via[static_cast<size_t>(r)][k] = hops;
        h.least[static_cast<size_t>(r)] = std::min(h.least[static_cast<size_t>(r)], hops);
        if (!queued[static_cast<size_t>(r)]) {
          up[static_cast<size_t>(r)] = next_up;
          queued[static_cast<size_t>(r)] = 1;
          queue.push_back(r);
        }
      }
    }
  }
  return h;
}

// updn_find_root_nodes_by_min_hop: a root sees over 90% of the CAs at one
// distance and no other distance over 5%.
std::vector<int> updn_roots(const Switches& s, const std::vector<Hops>& plain) {
  std::vector<unsigned> cas_on(s.ports.size(), 0);
  for (const auto& ca : s.cas) ++cas_on[static_cast<size_t>(ca.leaf)];
  double total = static_cast<double>(s.cas.size());
  std::vector<int> roots;
  for (size_t i = 0; i < s.ports.size(); ++i) {
    std::vector<unsigned> hist(64, 0);
    for (size_t leaf = 0; leaf < s.ports.size(); ++leaf)
      if (cas_on[leaf] && plain[leaf].least[i] < hist.size()) hist[plain[leaf].least[i]] += cas_on[leaf];
    int over90 = 0, over5 = 0;
    for (unsigned c : hist) {
      over90 += c > total * 0.9;
      over5 += c > total * 0.05;
    }
    if (over90 == 1 && over5 == 1) roots.push_back(static_cast<int>(i));
  }
  return roots;
}

UpDown rank_from(const Switches& s, const std::vector<int>& roots) {
  UpDown ud;
  ud.rank.assign(s.ports.size(), std::numeric_limits<unsigned>::max());
  ud.id = s.guid;
  std::deque<int> queue;
  for (int r : roots) {
    ud.rank[static_cast<size_t>(r)] = 0;
    queue.push_back(r);
  }
  while (!queue.empty()) {
    int u = queue.front();
    queue.pop_front();
    for (const SwitchPort& p : s.ports[static_cast<size_t>(u)])
      if (p.peer_switch >= 0 && ud.rank[static_cast<size_t>(p.peer_switch)] > ud.rank[static_cast<size_t>(u)] + 1) {
        ud.rank[static_cast<size_t>(p.peer_switch)] = ud.rank[static_cast<size_t>(u)] + 1;
        queue.push_back(p.peer_switch);
      }
  }
  return ud;
}

// osm_switch_recommend_path without LMC, scatter or port shifting: the
// min-hop port with the fewest routes so far, ties to the lowest port.
uint8_t recommend(const Switches& s, size_t sw, const Hops& h, const std::vector<uint32_t>& load) {
  uint8_t least = h.least[sw];
  if (least == kFar) return kNoPort;
  int best = -1;
  for (size_t k = 0; k < s.ports[sw].size(); ++k)
    if (h.via[sw][k] == least && (best < 0 || load[k] < load[static_cast<size_t>(best)])) best = static_cast<int>(k);
  return best < 0 ? kNoPort : static_cast<uint8_t>(s.ports[sw][static_cast<size_t>(best)].port);
}

Routing min_hop_tables(const Fabric& f, Switches& s, bool updn) {
  order_cas(s);
  size_t n = s.ports.size();
  std::vector<Hops> hops(n);
  for (size_t t = 0; t < n; ++t) hops[t] = min_hops(s, static_cast<int>(t));
  if (updn) {
    std::vector<int> roots = updn_roots(s, hops);
    if (!roots.empty()) {
      UpDown ud = rank_from(s, roots);
      for (size_t t = 0; t < n; ++t) hops[t] = updn_hops(s, ud, static_cast<int>(t));
    }
  }
  Routing r;
  r.lft.assign(n, std::vector<uint8_t>(s.top_lid + 1, kNoPort));
  for (size_t sw = 0; sw < n; ++sw) {
    std::vector<uint32_t> load(s.ports[sw].size(), 0);
    auto& table = r.lft[sw];
    for (const auto& ca : s.cas) {
      uint32_t lid = f.node(ca.hca).lid;
      if (lid == 0) continue;
      if (static_cast<size_t>(ca.leaf) == sw) {
        table[lid] = static_cast<uint8_t>(ca.leaf_port);
        continue;
      }
      uint8_t port = recommend(s, sw, hops[static_cast<size_t>(ca.leaf)], load);
      table[lid] = port;
      for (size_t k = 0; k < s.ports[sw].size(); ++k)
        if (port != kNoPort && s.ports[sw][k].port == port) ++load[k];
    }
    for (size_t t = 0; t < n; ++t)
      if (s.lid[t]) table[s.lid[t]] = t == sw ? 0 : recommend(s, sw, hops[t], load);
  }
  return r;
}

// ---------------------------------------------------------------------------
// ftree

struct Group {
  int remote;                 // switch index, or -1 for an HCA
  std::vector<size_t> ports;  // positions in Switches::ports of the owner
  NodeId peer;
  uint32_t counter_down = 0, counter_up = 0;
};

// OpenSM's switch index: [rank, then one byte per level], 0xff unset.
using Tuple = std::array<uint8_t, 8>;

struct FtSwitch {
  int rank = -1;
  bool leaf = false;
  Tuple tuple;
  std::vector<Group> up, down;  // sorted by remote switch index at start
};

class Ftree {
 public:
  Ftree(const Fabric& f, const Switches& s) : f_(f), s_(s), sw_(s.ports.size()) {
    rank();
    build_groups();
    index();
    rank_tuples();
    port_down_.resize(s.ports.size());
    port_up_.resize(s.ports.size());
    for (size_t i = 0; i < s.ports.size(); ++i) {
      port_down_[i].assign(s.ports[i].size(), 0);
      port_up_[i].assign(s.ports[i].size(), 0);
    }
  }

  Routing route() {
    Routing r;
    size_t n = s_.ports.size();
    r.lft.assign(n, std::vector<uint8_t>(s_.top_lid + 1, kNoPort));
    lft_ = &r.lft;
    hops_.assign(n, kFar);
    std::vector<int> leaves;
    size_t most = 0;
    for (size_t i = 0; i < n; ++i)
      if (sw_[i].leaf) {
        leaves.push_back(static_cast<int>(i));
        most = std::max(most, cas_on(i));
      }
    std::sort(leaves.begin(), leaves.end(), [&](int a, int b) { return before(a, b); });
    for (int leaf : leaves) {
      size_t routed = 0;
      for (const Group& g : sw_[static_cast<size_t>(leaf)].down) {
        if (g.remote >= 0) continue;
        const SwitchPort& p = s_.ports[static_cast<size_t>(leaf)][g.ports.front()];
        uint32_t lid = f_.node(p.peer).lid;
        if (lid == 0) continue;
        reset_hops();
        (*lft_)[static_cast<size_t>(leaf)][lid] = static_cast<uint8_t>(p.port);
        hops_[static_cast<size_t>(leaf)] = 1;
        down_by_going_up(leaf, -1, lid, true, 1);
        ++routed;
      }
      // A leaf with fewer CAs than the fullest routes dummies, so that every
      // leaf loads the uplinks alike (LID 0, cleared afterwards).
      for (; routed < most; ++routed) {
        reset_hops();
        hops_[static_cast<size_t>(leaf)] = 1;
        down_by_going_up(leaf, -1, 0, true, 1);
        for (auto& t : r.lft) t[0] = kNoPort;
      }
    }
    // Switch LIDs, switch by switch in OpenSM's switch-table order, off the
    // main paths (no downward counters).
    std::vector<int> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return __builtin_bswap64(s_.guid[static_cast<size_t>(a)]) < __builtin_bswap64(s_.guid[static_cast<size_t>(b)]);
    });
    for (int t : order) {
      uint32_t lid = s_.lid[static_cast<size_t>(t)];
      if (!lid) continue;
      reset_hops();
      r.lft[static_cast<size_t>(t)][lid] = 0;
      hops_[static_cast<size_t>(t)] = 0;
      down_by_going_up(t, -1, lid, false, 0);
    }
    return r;
  }

 private:
  // Ranks from the roots: a switch's height is its distance to the nearest
  // leaf; roots are the highest, rank 0.
  void rank() {
    size_t n = s_.ports.size();
    std::vector<int> height(n, -1);
    std::deque<int> queue;
    for (size_t i = 0; i < n; ++i)
      for (const SwitchPort& p : s_.ports[i])
        if (p.peer_switch < 0 && height[i] < 0) {
          height[i] = 0;
          sw_[i].leaf = true;
          queue.push_back(static_cast<int>(i));
        }
    while (!queue.empty()) {
      int u = queue.front();
      queue.pop_front();
      for (const SwitchPort& p : s_.ports[static_cast<size_t>(u)])
        if (p.peer_switch >= 0 && height[static_cast<size_t>(p.peer_switch)] < 0) {
          height[static_cast<size_t>(p.peer_switch)] = height[static_cast<size_t>(u)] + 1;
          queue.push_back(p.peer_switch);
        }
    }
    int top = *std::max_element(height.begin(), height.end());
    for (size_t i = 0; i < n; ++i) {
      if (height[i] < 0)
        throw FabricError(fmt::format("ftree: switch '{}' reaches no leaf", f_.node(f_.switches()[i]).name));
      sw_[i].rank = top - height[i];
    }
    for (size_t i = 0; i < n; ++i) {
      bool has_up = false;
      for (const SwitchPort& p : s_.ports[i])
        has_up |= p.peer_switch >= 0 && sw_[static_cast<size_t>(p.peer_switch)].rank < sw_[i].rank;
      if (sw_[i].rank > 0 && !has_up)
        throw FabricError(fmt::format("ftree: switch '{}' (rank {}) has no link up to a root: not a fat tree",
                                      f_.node(f_.switches()[i]).name, sw_[i].rank));
    }
  }

  size_t cas_on(size_t sw) const {
    size_t n = 0;
    for (const Group& g : sw_[sw].down) n += g.remote < 0;
    return n;
  }

  void reset_hops() { std::fill(hops_.begin(), hops_.end(), kFar); }

  // Tuple order; once every switch has its (unique) tuple, a switch's
  // position in that order stands for it, since the group sorts compare
  // tuples on every step of every destination's route.
  bool before(int a, int b) const {
    if (a < 0 || b < 0) return a < b;
    if (!tuple_order_.empty()) return tuple_order_[static_cast<size_t>(a)] < tuple_order_[static_cast<size_t>(b)];
    return sw_[static_cast<size_t>(a)].tuple < sw_[static_cast<size_t>(b)].tuple;
  }

  void rank_tuples() {
    std::vector<int> order(sw_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return before(a, b); });
    std::vector<int> position(sw_.size());
    for (size_t i = 0; i < order.size(); ++i) position[static_cast<size_t>(order[i])] = static_cast<int>(i);
    tuple_order_ = std::move(position);
  }

  // fabric_make_indexing: the first leaf in switch-table order (GUIDs in
  // network byte order) gets [rank, 0, ...]; a BFS from it gives every
  // switch found through a down group [rank+1, ..., i at rank+1] and
  // through an up group [rank-1, ..., i at rank], i the first free value;
  // each switch's groups are then sorted by the remote's tuple.
  void index() {
    size_t n = sw_.size();
    int first = -1;
    for (size_t i = 0; i < n; ++i)
      if (sw_[i].leaf &&
          (first < 0 || __builtin_bswap64(s_.guid[i]) < __builtin_bswap64(s_.guid[static_cast<size_t>(first)])))
        first = static_cast<int>(i);
    for (auto& w : sw_) w.tuple.fill(0xff);
    std::set<Tuple> taken;
    FtSwitch& f0 = sw_[static_cast<size_t>(first)];
    int leaf_rank = f0.rank;
    if (leaf_rank + 1 >= static_cast<int>(Tuple().size())) throw FabricError("ftree: the tree is too deep to index");
    f0.tuple[0] = static_cast<uint8_t>(leaf_rank);
    for (int i = 1; i <= leaf_rank; ++i) f0.tuple[static_cast<size_t>(i)] = 0;
    taken.insert(f0.tuple);
    auto fresh = [&](const Tuple& from, bool down) {
      Tuple t = from;
      size_t var = down ? from[0] + 1u : from[0];
      t[0] = static_cast<uint8_t>(down ? from[0] + 1 : from[0] - 1);
      for (int i = 0; i < 0xff; ++i) {
        t[var] = static_cast<uint8_t>(i);
        if (!taken.contains(t)) break;
      }
      taken.insert(t);
      return t;
    };
    auto by_tuple = [&](const Group& a, const Group& b) { return before(a.remote, b.remote); };
    std::deque<int> queue{first};
    while (!queue.empty()) {
      FtSwitch& w = sw_[static_cast<size_t>(queue.front())];
      queue.pop_front();
      if (w.rank < leaf_rank) {
        for (Group& g : w.down)
          if (g.remote >= 0 && sw_[static_cast<size_t>(g.remote)].tuple[0] == 0xff) {
            sw_[static_cast<size_t>(g.remote)].tuple = fresh(w.tuple, true);
            queue.push_back(g.remote);
          }
        std::stable_sort(w.down.begin(), w.down.end(), by_tuple);
      }
      if (w.rank != 0) {
        for (Group& g : w.up)
          if (sw_[static_cast<size_t>(g.remote)].tuple[0] == 0xff) {
            sw_[static_cast<size_t>(g.remote)].tuple = fresh(w.tuple, false);
            queue.push_back(g.remote);
          }
        std::stable_sort(w.up.begin(), w.up.end(), by_tuple);
      }
    }
    for (size_t i = 0; i < n; ++i)
      if (sw_[i].tuple[0] == 0xff)
        throw FabricError(fmt::format("ftree: switch '{}' is not reached from the leaves through up and down links",
                                      f_.node(f_.switches()[i]).name));
  }

  // Port groups in the order of their first port: one per remote switch
  // above or below, one per CA below (siblings carry nothing here).
  void build_groups() {
    for (size_t i = 0; i < s_.ports.size(); ++i) {
      for (size_t k = 0; k < s_.ports[i].size(); ++k) {
        const SwitchPort& p = s_.ports[i][k];
        if (p.peer_switch < 0) {
          sw_[i].down.push_back({-1, {k}, p.peer});
          continue;
        }
        int rr = sw_[static_cast<size_t>(p.peer_switch)].rank;
        if (rr == sw_[i].rank) continue;
        auto& groups = rr < sw_[i].rank ? sw_[i].up : sw_[i].down;
        auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) { return x.remote == p.peer_switch; });
        if (g == groups.end())
          groups.push_back({p.peer_switch, {k}, p.peer});
        else
          g->ports.push_back(k);
      }
    }
  }

  // The group a packet climbs through: fewest downward routes, then the
  // lowest index, bubble-sorted in place as OpenSM does. (OpenSM also
  // compares the remote switches' least-loaded down groups, but only the
  // lower side's counters ever grow, so that comparison never decides.)
  // A stable bubble sort, as OpenSM orders its port groups: ties keep
  // their order, which decides the routes.
  template <typename Less>
  static void bubble_sort(std::vector<Group>& g, Less less) {
    for (bool swapped = true; swapped;) {
      swapped = false;
      for (size_t j = 1; j < g.size(); ++j)
        if (less(g[j], g[j - 1])) {
          std::swap(g[j], g[j - 1]);
          swapped = true;
        }
    }
  }

  void sort_up(std::vector<Group>& g) {
    auto less = [&](const Group& a, const Group& b) {
      if (a.counter_down != b.counter_down) return a.counter_down < b.counter_down;
      return before(a.remote, b.remote);
    };
    bubble_sort(g, less);
  }

  void sort_down(std::vector<Group>& g) {
    auto less = [&](const Group& a, const Group& b) {
      if (a.counter_up != b.counter_up) return a.counter_up < b.counter_up;
      return before(a.remote, b.remote);
    };
    bubble_sort(g, less);
  }

  size_t least_loaded(int owner, const Group& g, bool down) const {
    size_t best = g.ports.front();
    const auto& counters = down ? port_down_[static_cast<size_t>(owner)] : port_up_[static_cast<size_t>(owner)];
    for (size_t k : g.ports)
      if (counters[k] < counters[best]) best = k;
    return best;
  }

  // Every switch below `sw` (but the one we came up from) routes `lid` up to it.
  bool up_by_going_down(int sw, int prev, uint32_t lid, bool main, uint8_t hops) {
    FtSwitch& me = sw_[static_cast<size_t>(sw)];
    if (me.down.empty()) return false;
    sort_down(me.down);
    bool created = false;
    for (Group& g : me.down) {
      if (g.remote < 0) {
        created = true;
        continue;
      }
      if (g.remote == prev) continue;
      size_t k = least_loaded(sw, g, false);
      int remote = g.remote;
      if (hops_[static_cast<size_t>(remote)] != kFar && hops + 1 >= hops_[static_cast<size_t>(remote)]) continue;
      (*lft_)[static_cast<size_t>(remote)][lid] = static_cast<uint8_t>(s_.ports[static_cast<size_t>(sw)][k].peer_port);
      hops_[static_cast<size_t>(remote)] = static_cast<uint8_t>(hops + 1);
      bool routed = up_by_going_down(remote, -1, lid, main, static_cast<uint8_t>(hops + 1));
      created |= routed;
      if (routed) {
        ++port_up_[static_cast<size_t>(sw)][k];
        ++g.counter_up;
      }
    }
    return created;
  }

  // `sw` sends `lid` down; it climbs to the least-loaded switch above.
  bool down_by_going_up(int sw, int prev, uint32_t lid, bool main, uint8_t hops) {
    bool created = up_by_going_down(sw, prev, lid, main, hops);
    FtSwitch& me = sw_[static_cast<size_t>(sw)];
    if (me.rank == 0 || me.up.empty()) return created;
    sort_up(me.up);
    auto climb = [&](Group& g, size_t k, bool on_main) {
      int remote = g.remote;
      if ((*lft_)[static_cast<size_t>(remote)][lid] == kNoPort || hops + 1 < hops_[static_cast<size_t>(remote)]) {
        (*lft_)[static_cast<size_t>(remote)][lid] =
            static_cast<uint8_t>(s_.ports[static_cast<size_t>(sw)][k].peer_port);
        hops_[static_cast<size_t>(remote)] = static_cast<uint8_t>(hops + 1);
      }
      return down_by_going_up(remote, sw, lid, on_main, static_cast<uint8_t>(hops + 1));
    };
    size_t first = 0;
    if (main) {
      Group& g = me.up.front();
      size_t k = least_loaded(sw, g, true);
      ++g.counter_down;
      ++port_down_[static_cast<size_t>(sw)][k];
      created |= climb(g, k, true);
      first = 1;
    }
    for (size_t i = first; i < me.up.size(); ++i) {
      Group& g = me.up[i];
      int remote = g.remote;
      if ((*lft_)[static_cast<size_t>(remote)][lid] != kNoPort && hops + 1 >= hops_[static_cast<size_t>(remote)])
        continue;
      created |= climb(g, least_loaded(sw, g, true), false);
    }
    return created;
  }

  const Fabric& f_;
  const Switches& s_;
  std::vector<FtSwitch> sw_;
  std::vector<std::vector<uint32_t>> port_down_, port_up_;  // per switch, per port position
  std::vector<std::vector<uint8_t>>* lft_ = nullptr;
  std::vector<uint8_t> hops_;     // per switch, for the LID being routed
  std::vector<int> tuple_order_;  // per switch: its tuple's position in tuple order
};

// An LFT entry is one byte: ports 1..254 (0 is the switch itself, 255 no
// path), so a switch with a higher cabled port cannot be given a table.
void require_ports_fit_lft(const Fabric& fabric, const Switches& s) {
  for (size_t i = 0; i < s.ports.size(); ++i) {
    if (s.ports[i].empty() || s.ports[i].back().port < kNoPort) continue;
    throw FabricError(fmt::format(
        "switch {} has a cable on port {}: a forwarding table entry names ports 1-254 only, so no subnet manager "
        "can route this fabric statically",
        fabric.node(fabric.switches()[i]).name, s.ports[i].back().port));
  }
}

}  // namespace

Routing emulate_routing(const Fabric& fabric, std::string_view engine) {
  Switches s = index_switches(fabric);
  require_ports_fit_lft(fabric, s);
  Routing r;
  if (engine == "minhop" || engine == "updn") {
    r = min_hop_tables(fabric, s, engine == "updn");
  } else if (engine == "ftree") {
    if (s.ports.empty()) throw FabricError("ftree: the fabric has no switch");
    r = Ftree(fabric, s).route();
  } else if (engine == "dfsssp") {
    throw FabricError(
        "dfsssp is not emulated: its tables come from Dijkstra over weights updated after every destination "
        "and from deadlock removal over virtual lanes; read OpenSM's own tables (opensm-lfts.dump or live)");
  } else {
    throw FabricError(fmt::format("unknown routing engine '{}': expected ftree, minhop, updn or dfsssp", engine));
  }
  r.kind = RoutingKind::Static;
  r.engine = std::string(engine);
  r.emulated = true;
  r.source = "emulated";
  return r;
}

}  // namespace topo
