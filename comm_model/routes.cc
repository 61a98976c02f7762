#include "comm_model/routes.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "routing/route.h"

namespace topo {
namespace {

// Bytes per load key (PathIndex::key_count), summed in a dense array that
// stays with the thread. A bit per key marks the ones touched, so they are
// read back in key order by a scan of the marked words rather than a sort:
// a thousand-host ring touches thousands of cables, and sorting them cost
// more than routing them.
class Accumulator {
 public:
  explicit Accumulator(size_t keys) : acc_(arena()) {
    if (acc_.bytes.size() < keys) {
      acc_.bytes.resize(keys, 0.0);
      acc_.marked.resize((keys + 63) / 64, 0);
    }
  }
  // A route that threw leaves the arena as it found it.
  ~Accumulator() {
    drain([](int, double) {});
  }
  Accumulator(const Accumulator&) = delete;
  Accumulator& operator=(const Accumulator&) = delete;
  void add(int directed, double bytes) {
    acc_.bytes[directed] += bytes;
    const size_t word = static_cast<size_t>(directed) / 64;
    const uint64_t bit = uint64_t{1} << (directed % 64);
    acc_.count += (acc_.marked[word] & bit) == 0;
    acc_.marked[word] |= bit;
    acc_.low = std::min(acc_.low, word);
    acc_.high = std::max(acc_.high, word + 1);
  }
  std::vector<std::pair<int, double>> take() {
    std::vector<std::pair<int, double>> out;
    out.reserve(acc_.count);
    drain([&](int d, double b) {
      if (b > 0) out.emplace_back(d, b);
    });
    return out;
  }

 private:
  // Hands every marked cable to `visit` in cable order, clearing it.
  template <typename Visit>
  void drain(Visit&& visit) {
    for (size_t w = acc_.low; w < acc_.high; ++w)
      for (uint64_t bits = acc_.marked[w]; bits != 0; bits &= bits - 1) {
        const int d = static_cast<int>(w * 64 + static_cast<size_t>(std::countr_zero(bits)));
        visit(d, acc_.bytes[d]);
        acc_.bytes[d] = 0;
      }
    std::fill(acc_.marked.begin() + static_cast<long>(std::min(acc_.low, acc_.high)),
              acc_.marked.begin() + static_cast<long>(acc_.high), 0);
    acc_.low = SIZE_MAX;
    acc_.high = 0;
    acc_.count = 0;
  }
  struct Arena {
    std::vector<double> bytes;
    std::vector<uint64_t> marked;     // a bit per key with bytes added
    size_t low = SIZE_MAX, high = 0;  // the marked words lie in [low, high)
    size_t count = 0;                 // marked keys (a count kept, not popcounts: without -mpopcnt each is a call)
  };
  static Arena& arena() {
    thread_local Arena a;
    return a;
  }
  Arena& acc_;
};

void add_ports(const PathIndex& index, const Allocation& al, const Traffic& t, Accumulator& acc) {
  for (int i = 0; i < al.size(); ++i) {
    auto ports = index.ports(al.host[i]);
    for (size_t p = 0; p < ports.size(); ++p) {
      if (double up = t.up[t.offset[i] + p]; up > 0) acc.add(ports[p].up, up);
      if (double down = t.down[t.offset[i] + p]; down > 0) acc.add(ports[p].down, down);
    }
  }
}

[[noreturn]] void unreachable(const PathIndex& index, const Allocation& al, const Traffic::Crossing& c,
                              std::string_view why) {
  const Fabric& f = index.fabric();
  const std::string& from = f.node(index.leaves()[c.leaf]).name;
  if (c.host < 0) {
    const std::string& to_leaf = f.node(index.leaves()[c.to_leaf]).name;
    throw FabricError(fmt::format("no path from leaf {} to leaf {}: {}", from, to_leaf, why));
  }
  const std::string& to = f.node(f.hosts()[al.host[c.host]]).name;
  const std::string& to_leaf = f.node(index.leaves()[index.ports(al.host[c.host])[c.port].leaf]).name;
  throw FabricError(fmt::format("no path from leaf {} to {} (leaf {}): {}", from, to, to_leaf, why));
}

// Calls `cross(crossing, receiving leaf)` for every crossing that leaves its
// leaf; returns the most switches any crossing passes on a shortest up/down
// path. Throws FabricError for a crossing with none.
template <typename Cross>
int cross_leaves(const PathIndex& index, const Allocation& al, const Traffic& t, Cross&& cross) {
  int switches = 0;
  for (const Traffic::Crossing& c : t.crossings) {
    int to = c.host >= 0 ? index.ports(al.host[c.host])[c.port].leaf : c.to_leaf;
    auto s = index.switches_between(c.leaf, to);
    if (!s) unreachable(index, al, c, "no up/down path");
    switches = std::max(switches, *s);
    if (c.leaf != to) cross(c, to);
  }
  return switches;
}

// What the adaptive spread keeps per thread between estimates. Indexed by
// the fabric's leaves and trunks, it would cost a small job more to make
// and clear than to spread; between calls every entry is zero or empty.
struct SpreadArena {
  std::vector<int> head, tail;                  // by source leaf: its first and last crossing, -1 when none
  std::vector<std::pair<int, double>> crossed;  // by crossing that leaves its leaf: (receiving leaf, bytes)
  std::vector<int> next;                        // by crossing: the next one from the same leaf
  std::vector<int> from_leaves;                 // source leaves with a crossing
  std::vector<double> to_bytes;                 // by receiving leaf: one source leaf's bytes to it
  std::vector<int> to_leaves;                   // receiving leaves with bytes in to_bytes
  std::vector<double> trunk_bytes;              // by trunk
  PathIndex::Scratch scratch;                   // its touched: trunks with bytes in trunk_bytes

  static SpreadArena& of(const PathIndex& index) {
    thread_local SpreadArena a;
    const size_t leaves = index.leaves().size(), trunks = index.trunks().size();
    if (a.head.size() < leaves) {
      a.head.resize(leaves, -1);
      a.tail.resize(leaves, -1);
      a.to_bytes.resize(leaves, 0.0);
    }
    if (a.trunk_bytes.size() < trunks) a.trunk_bytes.resize(trunks, 0.0);
    return a;
  }
  // Back to all zero, also when a spread threw half way.
  void clear() {
    for (int l : from_leaves) head[l] = tail[l] = -1;
    for (int l : to_leaves) to_bytes[l] = 0;
    for (int t : scratch.touched) trunk_bytes[t] = 0;
    from_leaves.clear();
    to_leaves.clear();
    crossed.clear();
    next.clear();
    scratch.touched.clear();
  }
};

// Adaptive: crossings summed per leaf pair (in crossing order), spread over
// the trunks once per source leaf (in leaf order), each trunk's bytes shared
// evenly by its cables and loaded under the trunk's key. Grouping by linked
// lists and dense sums, not a sort: AllToAll crosses once per receiving port
// and used leaf, hundreds of thousands of crossings on a scattered
// thousand-host job.
int spread(const PathIndex& index, const Allocation& al, const Traffic& t, Accumulator& acc) {
  SpreadArena& a = SpreadArena::of(index);
  struct Clear {
    SpreadArena& a;
    ~Clear() { a.clear(); }
  } clear_after{a};
  a.crossed.reserve(t.crossings.size());
  a.next.reserve(t.crossings.size());
  int switches = cross_leaves(index, al, t, [&](const Traffic::Crossing& c, int to) {
    if (c.bytes == 0) return;
    const int at = static_cast<int>(a.crossed.size());
    a.crossed.emplace_back(to, c.bytes);
    a.next.push_back(-1);
    if (a.head[c.leaf] < 0) {
      a.head[c.leaf] = at;
      a.from_leaves.push_back(c.leaf);
    } else {
      a.next[a.tail[c.leaf]] = at;
    }
    a.tail[c.leaf] = at;
  });
  std::sort(a.from_leaves.begin(), a.from_leaves.end());
  std::vector<std::pair<int, double>> flows;
  for (int from : a.from_leaves) {
    for (int i = a.head[from]; i >= 0; i = a.next[i]) {
      auto [to, bytes] = a.crossed[i];
      if (a.to_bytes[to] == 0) a.to_leaves.push_back(to);
      a.to_bytes[to] += bytes;
    }
    std::sort(a.to_leaves.begin(), a.to_leaves.end());
    flows.clear();
    for (int to : a.to_leaves) {
      flows.emplace_back(to, a.to_bytes[to]);
      a.to_bytes[to] = 0;
    }
    a.to_leaves.clear();
    index.spread_from(from, flows, a.trunk_bytes, a.scratch);
  }
  for (int k : a.scratch.touched) {
    double each = a.trunk_bytes[k] / static_cast<double>(index.trunks()[k].cables.size());
    if (each > 0) acc.add(index.trunk_key(k), each);
  }
  return switches;
}

// Whether the leaf's table sends a crossing straight down to the receiving
// port's cable: then the walk would find that one cable and nothing else.
// Tables route by destination alone, so any other entry for a port of the
// leaf itself cannot deliver (it comes back and leaves again): the walk
// names that error. Without a LID at either end the walk reports the flow
// unrouted (routing/route.h), so those are left to it too.
bool delivered_by_its_leaf(const Fabric& f, NodeId leaf, const PathIndex::Port& to) {
  if (to.lid == 0 || f.node(leaf).lid == 0) return false;
  const int s = f.switch_index(leaf);
  return f.routing().out_port(static_cast<size_t>(s), to.lid) == to.leaf_port;
}

// Static: every crossing walks the tables from its leaf to the receiving
// HCA; the last cable, into the HCA, is the receiver's own and counted
// with the ports. Most of a ring's crossings stay on their leaf: those
// whose table entry checks out are not walked.
int walk_tables(const PathIndex& index, const Allocation& al, const Traffic& t, Accumulator& acc) {
  const Fabric& f = index.fabric();
  std::vector<int> path;
  int switches = 0;
  for (const Traffic::Crossing& c : t.crossings) {
    const PathIndex::Port& port = index.ports(al.host[c.host])[c.port];
    const NodeId leaf = index.leaves()[c.leaf];
    if (port.leaf == c.leaf && delivered_by_its_leaf(f, leaf, port)) {
      switches = std::max(switches, 1);
      continue;
    }
    RouteStatus s = trace_static_cables(f, leaf, port.hca, path);
    if (s != RouteStatus::Ok) unreachable(index, al, c, name(s));
    if (path.empty()) unreachable(index, al, c, "the leaf's table sends it nowhere");
    switches = std::max(switches, static_cast<int>(path.size()));
    for (size_t k = 0; k + 1 < path.size(); ++k) acc.add(path[k], c.bytes);
  }
  return switches;
}

// ECMP's hash, modelled as a uniform draw: splitmix64 (Steele, Lea and
// Flood 2014), a small generator whose every output bit depends on every
// input bit, so nearby seeds give unrelated paths.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
double uniform(uint64_t& state) {
  state = mix(state);
  return static_cast<double>(state >> 11) * 0x1.0p-53;
}

// The next hops of every switch on the way from one leaf to another: the
// trunks adaptive routing's even spread loads, with their share of it.
// Under a uniform hash, a QP at a switch takes a trunk with probability
// proportional to that share (the share is proportional to the trunk's
// cables), then one of its cables with equal probability.
struct Hop {
  NodeId from;
  int trunk;
  double share;
};
class NextHops {
 public:
  explicit NextHops(const PathIndex& index) : index_(index), trunk_bytes_(index.trunks().size(), 0.0) {}
  const std::vector<Hop>& between(int leaf_a, int leaf_b) {
    auto [it, fresh] = cache_.try_emplace({leaf_a, leaf_b});
    if (!fresh) return it->second;
    index_.spread(leaf_a, leaf_b, 1.0, trunk_bytes_, scratch_);
    for (size_t k = 0; k < trunk_bytes_.size(); ++k)
      if (trunk_bytes_[k] > 0) {
        it->second.push_back({index_.trunks()[k].from, static_cast<int>(k), trunk_bytes_[k]});
        trunk_bytes_[k] = 0;
      }
    std::sort(it->second.begin(), it->second.end(), [](const Hop& a, const Hop& b) { return a.from < b.from; });
    return it->second;
  }

 private:
  const PathIndex& index_;
  std::vector<double> trunk_bytes_;
  PathIndex::Scratch scratch_;
  std::map<std::pair<int, int>, std::vector<Hop>> cache_;
};

// One QP from leaf a to leaf b, its path drawn switch by switch.
void hash_qp(const PathIndex& index, const std::vector<Hop>& hops, int leaf_a, int leaf_b, uint64_t seed, double bytes,
             Accumulator& acc) {
  const Fabric& f = index.fabric();
  NodeId at = index.leaves()[leaf_a];
  const NodeId to = index.leaves()[leaf_b];
  for (int step = 0; at != to; ++step) {
    auto [lo, hi] = std::equal_range(hops.begin(), hops.end(), Hop{at, 0, 0},
                                     [](const Hop& a, const Hop& b) { return a.from < b.from; });
    double total = 0;
    for (auto h = lo; h != hi; ++h) total += h->share;
    if (total <= 0 || step > 64)
      throw FabricError(fmt::format("no ECMP next hop at {} towards leaf {}", f.node(at).name, f.node(to).name));
    double x = uniform(seed) * total;
    auto pick = lo;
    for (; pick + 1 != hi && x >= pick->share; ++pick) x -= pick->share;
    const PathIndex::Trunk& trunk = index.trunks()[pick->trunk];
    size_t cable = std::min(trunk.cables.size() - 1, static_cast<size_t>(uniform(seed) * trunk.cables.size()));
    acc.add(directed_cable(f.link(trunk.cables[cable]), trunk.from), bytes);
    at = trunk.to;
  }
}

// ECMP: every crossing as flows, every flow as QPs, every QP hashed.
int hash_qps(const PathIndex& index, const Allocation& al, const Traffic& t, int qps, uint64_t draw, Accumulator& acc) {
  NextHops next(index);
  return cross_leaves(index, al, t, [&](const Traffic::Crossing& c, int to) {
    const std::vector<Hop>& hops = next.between(c.leaf, to);
    // One sending port: one connection. A sum of flows: one per flow_bytes.
    long flows = c.from >= 0 ? 1 : std::max(1L, std::lround(c.bytes / t.flow_bytes));
    uint64_t receiver = mix(static_cast<uint64_t>(al.host[c.host]) << 8 ^ static_cast<uint64_t>(c.port));
    uint64_t sender = c.from >= 0
                          ? mix(static_cast<uint64_t>(al.host[c.from]) << 8 ^ static_cast<uint64_t>(c.from_port))
                          : mix(0x1eafULL << 32 ^ static_cast<uint64_t>(c.leaf));
    double bytes = c.bytes / static_cast<double>(flows * qps);
    for (long k = 0; k < flows; ++k)
      for (int q = 0; q < qps; ++q) {
        uint64_t seed =
            mix(mix(mix(draw) ^ sender) ^ receiver) ^ mix(static_cast<uint64_t>(k) << 16 ^ static_cast<uint64_t>(q));
        hash_qp(index, hops, c.leaf, to, seed, bytes, acc);
      }
  });
}

}  // namespace

double CableLoad::on(int key) const {
  auto it = std::lower_bound(bytes.begin(), bytes.end(), std::make_pair(key, 0.0),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
  return it != bytes.end() && it->first == key ? it->second : 0.0;
}

CableLoad per_cable(const PathIndex& index, const CableLoad& load) {
  CableLoad out;
  out.max_switches = load.max_switches;
  out.flow_bytes = load.flow_bytes;
  out.bytes.reserve(load.bytes.size());
  for (const auto& [key, bytes] : load.bytes)
    index.for_each_cable(key, [&out, b = bytes](int directed) { out.bytes.emplace_back(directed, b); });
  // A trunk's cables come after every cable key, and in trunk order.
  std::sort(out.bytes.begin(), out.bytes.end());
  return out;
}

CableLoad route(const PathIndex& index, const Allocation& al, const Traffic& traffic, uint64_t draw, int qps) {
  Accumulator acc(static_cast<size_t>(index.key_count()));
  CableLoad load;
  load.flow_bytes = traffic.flow_bytes;
  add_ports(index, al, traffic, acc);
  const Routing& routing = index.fabric().routing();
  // Tables and hashes read the receiving port.
  if ((routing.is_static() || routing.is_ecmp()) && !traffic.crossings.empty() && traffic.crossings.front().host < 0)
    throw std::invalid_argument("crossings summed per leaf are routed adaptively only");
  if (routing.is_static())
    load.max_switches = walk_tables(index, al, traffic, acc);
  else if (routing.is_ecmp())
    load.max_switches = hash_qps(index, al, traffic, qps > 0 ? qps : routing.qps, draw, acc);
  else
    load.max_switches = spread(index, al, traffic, acc);
  load.bytes = acc.take();
  return load;
}

}  // namespace topo
