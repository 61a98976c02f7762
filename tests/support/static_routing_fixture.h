// Static routing for tests, without any engine.
// - shortest_path_routing: every switch sends each destination LID towards
//   it on a shortest path over Active cables, picking among the equal ports
//   by the LID modulo their count (destination-mod-k, as a fat-tree's
//   tables are).
// - The comm_model tests' shared pieces: textbook model options, hosts by
//   number, and the two-leaf trunk where static tables make flows collide
//   (a fabric, and a fixture with two jobs on it).
#pragma once

#include <algorithm>
#include <deque>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "comm_model/estimate.h"
#include "fabric/fabric.h"
#include "fabric/routing.h"
#include "fabric/synthetic.h"
#include "tests/support/static_tables.h"

namespace topo::testing {

// The model as the textbook has it: the ring algorithm, the Simple
// protocol, no NCCL tuning and no switch latency, so that times are bytes
// over rates.
inline ModelOptions textbook() {
  ModelOptions o;
  o.nccl_tuning = false;
  o.switch_latency_us = 0;
  o.algorithm = Algorithm::Ring;
  o.protocol = Protocol::Simple;
  return o;
}

// Host gpuNNN of a synthetic fabric.
inline NodeId host(const Fabric& f, int n) { return *f.find_host(fmt::format("gpu{:03d}", n)); }

inline std::vector<NodeId> hosts(const Fabric& f, std::initializer_list<int> numbers) {
  std::vector<NodeId> out;
  for (int n : numbers) out.push_back(host(f, n));
  return out;
}

// Two leaves of 8 hosts, each with 2 uplinks to one spine (4:1). Under
// destination-mod-2 tables (static_tables.h, set when `routed`) flows to
// even positions under a leaf climb its neighbour's first uplink, so the
// ring gpu001, gpu009, gpu002, gpu011 puts two flows on leaf01's first
// uplink where adaptive routing spreads them over both.
inline Fabric two_leaf_trunk(bool routed) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=8,spines=1,oversub=4");
  if (routed) f.set_routing(dmodk_tables(f));
  return f;
}
inline std::vector<NodeId> trunk_ring(const Fabric& f) { return hosts(f, {1, 9, 2, 11}); }

// The trunk under its tables with two jobs: A's ring puts 2 flows on
// leaf01's first uplink, B's ring 1.
struct Trunk : ::testing::Test {
  Fabric f = two_leaf_trunk(/*routed=*/true);
  std::vector<NodeId> a, b;
  double S = 1 << 26;
  double C = 0;  // one cable's room, Gb/s
  void SetUp() override {
    a = trunk_ring(f);
    b = hosts(f, {3, 13});
    C = f.link(f.cables()[0]).gbps() * 0.96;
    for (LinkId e : f.cables()) ASSERT_DOUBLE_EQ(f.link(e).gbps() * 0.96, C);
  }
  Request request() const { return {Collective::AllReduce, S, Dtype::Fp32, 1}; }
  // Seconds for a ring of n hosts whose flows each run at `gbps`.
  double ring_seconds(int n, double gbps) const { return 2.0 * (n - 1) / n * S * 8 / (gbps * 1e9); }
};

inline Routing shortest_path_routing(const Fabric& f, std::string engine = "", std::string source = "hand-made") {
  Routing r;
  r.kind = RoutingKind::Static;
  r.engine = std::move(engine);
  r.source = std::move(source);
  uint32_t top = 0;
  for (NodeId v = 0; v < f.node_count(); ++v) top = std::max(top, f.node(v).lid);
  r.lft.assign(f.switches().size(), std::vector<uint8_t>(top + 1, kNoPort));
  constexpr int kFar = std::numeric_limits<int>::max();
  for (NodeId dest = 0; dest < f.node_count(); ++dest) {
    uint32_t lid = f.node(dest).lid;
    if (lid == 0) continue;
    // Hops from every node to `dest`, through switches only.
    std::vector<int> dist(f.node_count(), kFar);
    std::deque<NodeId> queue{dest};
    dist[dest] = 0;
    while (!queue.empty()) {
      NodeId at = queue.front();
      queue.pop_front();
      if (at != dest && f.node(at).kind != NodeKind::Switch) continue;
      for (auto e : boost::make_iterator_range(boost::out_edges(at, f.graph()))) {
        const Link& l = f.link(e);
        if (l.kind != LinkKind::Cable || l.state != PortState::Active) continue;
        NodeId next = f.peer(e, at);
        if (dist[next] == kFar) {
          dist[next] = dist[at] + 1;
          queue.push_back(next);
        }
      }
    }
    for (size_t s = 0; s < f.switches().size(); ++s) {
      NodeId sw = f.switches()[s];
      if (sw == dest) {
        r.lft[s][lid] = 0;
        continue;
      }
      if (dist[sw] == kFar) continue;
      std::vector<int> ports;
      for (auto e : boost::make_iterator_range(boost::out_edges(sw, f.graph()))) {
        const Link& l = f.link(e);
        if (l.kind == LinkKind::Cable && l.state == PortState::Active && dist[f.peer(e, sw)] == dist[sw] - 1)
          ports.push_back(f.local_port(e, sw));
      }
      std::sort(ports.begin(), ports.end());
      if (!ports.empty()) r.lft[s][lid] = static_cast<uint8_t>(ports[lid % ports.size()]);
    }
  }
  return r;
}

}  // namespace topo::testing
