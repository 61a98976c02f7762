// How a fabric forwards traffic: a property of each snapshot.
//
// - Adaptive: every flow spreads evenly over all shortest up/down paths, as
//   a fluid. Right for switches that route adaptively (NVIDIA's SM with
//   adaptive routing) and for Ethernet that sprays packets.
// - Static: each switch holds a linear forwarding table (LFT): for every
//   destination LID, the one port a packet leaves by. OpenSM's ftree,
//   minhop, updn and dfsssp engines all produce such tables, and an
//   InfiniBand flow (NCCL uses the destination's base LID for every QP)
//   follows exactly one path. The tables are either read (live over SMPs,
//   or from OpenSM's `opensm-lfts.dump`) or emulated from an engine's rules
//   (routing_engine.h).
// - ECMP (`ecmp:QPS`): RoCE. Each switch hashes a packet's headers onto one
//   of its equal-cost next hops, so a queue pair (QP) keeps one path, chosen
//   by the hash. NCCL opens QPS queue pairs per connection
//   (NCCL_IB_QPS_PER_CONNECTION, default 1) and splits a flow's bytes evenly
//   over them (NCCL_IB_SPLIT_DATA_ON_QPS). The model (comm_model/routes.h)
//   splits each flow into QPS equal QPs and draws each QP's next hop at every
//   switch uniformly at random among the cables on a shortest up/down path,
//   from a generator seeded by the flow's two ends, the QP's number and a
//   draw number. One draw is one run of the job (the hash inputs NCCL varies,
//   such as the UDP source port, change between runs); many draws give the
//   expected time, its spread and how often QPs collide. A uniform hash is
//   the textbook assumption; real hash functions can polarize (the same
//   choice at every tier), which this does not model. In expectation every
//   cable carries what adaptive routing's even spread puts on it.
//
// A Routing is a plain value: it names the switches' tables by the switch's
// position in Fabric::switches(), and LIDs are the fabric's own
// (Node::lid). route.h walks it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace topo {

enum class RoutingKind : uint8_t { Adaptive, Static, Ecmp };

// The most QPs per connection `ecmp:QPS` accepts (NCCL allows up to 128).
inline constexpr int kMaxQps = 128;

// An LFT entry that forwards nowhere (OpenSM prints "no path" for it).
inline constexpr uint8_t kNoPort = 255;

struct Routing {
  RoutingKind kind = RoutingKind::Adaptive;
  // Static: the OpenSM engine whose rules made the tables ("ftree",
  // "minhop", "updn", "dfsssp"), when they were emulated or the source said
  // so; empty for tables read from a switch without that knowledge.
  std::string engine;
  // Static: whether the tables were emulated here rather than read.
  bool emulated = false;
  // Where the tables came from: "emulated", "opensm-dump:<path>",
  // "libibnetdisc:live"; empty for adaptive.
  std::string source;
  // Static: lft[s][lid] is the out port of switch s (position in
  // Fabric::switches()) for destination `lid`; port 0 is the switch itself,
  // kNoPort no path. A table may be shorter than the highest LID: a LID past
  // its end has no path there.
  std::vector<std::vector<uint8_t>> lft;
  // ECMP: queue pairs per connection, each hashed on its own (1..kMaxQps).
  int qps = 0;

  bool is_static() const { return kind == RoutingKind::Static; }
  bool is_ecmp() const { return kind == RoutingKind::Ecmp; }
  uint8_t out_port(size_t switch_index, uint32_t lid) const {
    const auto& t = lft[switch_index];
    return lid < t.size() ? t[lid] : kNoPort;
  }
};

// "adaptive", "static" (tables read), "static:ftree" (engine known), "ecmp:4".
std::string routing_name(const Routing& routing);

// What a user may ask for on a command line: "adaptive", "static" (the
// snapshot's own tables), "static:ftree", "static:minhop", "static:updn",
// "static:dfsssp", "ecmp:QPS" (QPS in 1..kMaxQps). nullopt for anything else.
struct RoutingSpec {
  RoutingKind kind = RoutingKind::Adaptive;
  std::string engine;  // empty: the tables the snapshot carries
  int qps = 0;         // ECMP
};
std::optional<RoutingSpec> parse_routing_spec(std::string_view text);

// The ECMP routing of `qps` queue pairs per connection; throws
// std::invalid_argument outside 1..kMaxQps.
Routing ecmp_routing(int qps);

}  // namespace topo
