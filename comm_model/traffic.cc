#include "comm_model/traffic.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"

namespace topo {
namespace {

// Appends the lanes of host index `h` running `gpus` GPUs.
void add_lanes(const PathIndex& index, int h, int gpus, Allocation& al) {
  auto ports = index.ports(h);
  const int H = static_cast<int>(ports.size());
  std::span<const int> known = index.gpu_rails(h);
  size_t first = al.lane.size();
  for (int p = 0; p < H; ++p) al.lane.push_back({p, 0, ports[p].rail});
  if (known.empty()) {
    // GPU g's port is g*H/gpus rounded down, so port p takes the GPUs from
    // ceil(p*gpus/H) to ceil((p+1)*gpus/H): no loop over every GPU of every host.
    auto first_gpu = [&](long p) { return (p * gpus + H - 1) / H; };
    for (int p = 0; p < H; ++p) al.lane[first + p].gpus = static_cast<int>(first_gpu(p + 1) - first_gpu(p));
  } else {
    // GPU g's default port, g*H/gpus rounded down, counted up as g rises
    // rather than divided for every GPU; hwloc's closest HCA wins when the
    // fabric carries it.
    int port_by_count = 0;
    long next_port_at = gpus;  // (port_by_count + 1) * gpus
    for (int g = 0; g < gpus && H > 0; ++g) {
      for (long reach = static_cast<long>(g) * H; reach >= next_port_at; next_port_at += gpus) ++port_by_count;
      int port = port_by_count;
      if (static_cast<size_t>(g) < known.size() && known[g] >= 0)
        for (int p = 0; p < H; ++p)
          if (ports[p].rail == known[g]) {
            port = p;
            break;
          }
      ++al.lane[first + port].gpus;
    }
  }
  // Ports no GPU uses carry nothing.
  al.lane.erase(std::remove_if(al.lane.begin() + static_cast<long>(first), al.lane.end(),
                               [](const Lane& l) { return l.gpus == 0; }),
                al.lane.end());
  al.host.push_back(h);
  al.lane_begin.push_back(static_cast<int>(al.lane.size()));
}

int leaf_of(const PathIndex& index, const Allocation& al, int i, int port) {
  return index.ports(al.host[i])[port].leaf;
}

// Bytes from position `from` to position `to`, lane by lane.
void add_host_flow(const PathIndex& index, const Allocation& al, int from, int to, double bytes, Traffic& t) {
  std::span<const Lane> src = al.lanes(from), dst = al.lanes(to);
  for (size_t k = 0; k < src.size(); ++k) {
    const Lane* match = nullptr;
    if (src[k].rail >= 0)
      for (const Lane& d : dst)
        if (d.rail == src[k].rail) match = &d;
    if (!match) match = &dst[k % dst.size()];
    double b = bytes * src[k].gpus / al.gpus_per_host;
    if (b <= 0) continue;
    t.up[t.offset[from] + src[k].port] += b;
    t.down[t.offset[to] + match->port] += b;
    t.crossings.push_back({leaf_of(index, al, from, src[k].port), to, match->port, b, from, src[k].port});
  }
}

}  // namespace

Traffic empty_traffic(const PathIndex& index, const Allocation& al) {
  Traffic t;
  t.offset.assign(al.host.size() + 1, 0);
  for (size_t i = 0; i < al.host.size(); ++i)
    t.offset[i + 1] = t.offset[i] + static_cast<int>(index.ports(al.host[i]).size());
  t.up.assign(t.offset.back(), 0.0);
  t.down.assign(t.offset.back(), 0.0);
  return t;
}

Allocation allocate(const PathIndex& index, std::span<const NodeId> hosts, int gpus) {
  const Fabric& fabric = index.fabric();
  Allocation al;
  al.gpus_per_host = gpus;
  al.host.reserve(hosts.size());
  al.lane.reserve(hosts.size());  // a lane a host when each has one port
  al.lane_begin.reserve(hosts.size() + 1);
  // A host listed twice: for a small job a scan of the hosts added so far
  // (a placement search estimates a few rings of a few hosts each), for a
  // large one a mark per fabric host.
  const bool scan = hosts.size() <= 32;
  std::vector<bool> seen(scan ? 0 : fabric.hosts().size(), false);
  for (NodeId h : hosts) {
    int i = index.host_index(h);
    if (i < 0)
      throw std::invalid_argument(
          fmt::format("node {} is not a host", h < fabric.node_count() ? fabric.node(h).name : "?"));
    if (scan ? std::find(al.host.begin(), al.host.end(), i) != al.host.end() : static_cast<bool>(seen[i]))
      throw std::invalid_argument(fmt::format("host {} is listed twice", fabric.node(h).name));
    if (!scan) seen[i] = true;
    add_lanes(index, i, gpus, al);
    if (hosts.size() > 1 && al.lanes(al.size() - 1).empty())
      throw FabricError(
          fmt::format("host {} has no Active HCA cable: it cannot reach the other hosts", fabric.node(h).name));
  }
  return al;
}

double ring_edge_bytes(Collective c, int ranks, double bytes) {
  switch (c) {
    case Collective::AllReduce:
      return 2.0 * (ranks - 1) / ranks * bytes;
    case Collective::Broadcast:
      return bytes;
    default:
      return 1.0 * (ranks - 1) / ranks * bytes;
  }
}

Traffic ring_traffic(const PathIndex& index, const Allocation& al, double bytes, bool chain) {
  Traffic t = empty_traffic(index, al);
  const int N = al.size();
  if (N < 2) return t;
  t.crossings.reserve(static_cast<size_t>(al.lane_begin.back()));  // a crossing per sending lane
  for (int i = 0; i < (chain ? N - 1 : N); ++i) add_host_flow(index, al, i, (i + 1) % N, bytes, t);
  return t;
}

Traffic pair_traffic(const PathIndex& index, const Allocation& al, std::span<const std::pair<int, int>> pairs,
                     double bytes) {
  Traffic t = empty_traffic(index, al);
  for (auto [from, to] : pairs) add_host_flow(index, al, from, to, bytes, t);
  return t;
}

Traffic tree_traffic(const PathIndex& index, const Allocation& al, const DoubleBinaryTree& tree, double bytes) {
  Traffic t = empty_traffic(index, al);
  // Each of the two trees has N - 1 edges, each crossed both ways by a
  // host's lanes: on hosts alike, fewer than four crossings per lane.
  t.crossings.reserve(4 * static_cast<size_t>(al.lane_begin.back()));
  for (const BinaryTree* half : {&tree.first, &tree.second})
    for (int r = 0; r < al.size(); ++r)
      if (int p = half->parent[r]; p >= 0) {
        add_host_flow(index, al, r, p, bytes, t);  // reduce, up the tree
        add_host_flow(index, al, p, r, bytes, t);  // broadcast, down it
      }
  return t;
}

bool pxn_applies(const Allocation& al) {
  if (al.gpus_per_host < 2 || al.host.size() < 2) return false;
  auto rails = [](std::span<const Lane> lanes) {
    std::vector<int> r;
    for (const Lane& l : lanes) r.push_back(l.rail);
    std::sort(r.begin(), r.end());
    return r;
  };
  std::vector<int> first = rails(al.lanes(0));
  if (first.size() < 2 || first.front() < 0 || std::adjacent_find(first.begin(), first.end()) != first.end())
    return false;
  for (int i = 1; i < al.size(); ++i)
    if (rails(al.lanes(i)) != first) return false;
  return true;
}

}  // namespace topo
