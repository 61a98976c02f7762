#include "comm_model/nccl_tuning.h"

namespace topo::nccl {
namespace {

// NCCL's tables are indexed by its own algorithms; ours that NCCL lacks use
// the Ring row (see the header).
bool tree_row(Algorithm a) { return a == Algorithm::Tree; }

int protocol_column(Protocol p) {
  switch (p) {
    case Protocol::LL:
      return 0;
    case Protocol::LL128:
      return 1;
    case Protocol::Simple:
      return 2;
  }
  return 2;
}

// NCCL 2.20.3 src/graph/tuning.cc, baseLat (us), rows Tree, Ring.
constexpr double kBaseLatency[2][3] = {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}};

// NCCL 2.20.3 src/graph/tuning.cc, hwLat (us), [NVLink, PCI, NET][Tree, Ring][LL, LL128, Simple].
constexpr double kHwLatency[3][2][3] = {
    {{.6, 1.25, 28}, {.6, 1.9, 3.4}},
    {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}},
    {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}},
};

// NCCL 2.20.3 src/graph/tuning.cc, getNetOverhead(): 1 us for Intel CPUs.
constexpr double kNetOverheadUs = 1.0;
// NCCL 2.20.3 src/graph/tuning.cc: "if (p == NCCL_PROTO_SIMPLE) netOverhead *= 3".
constexpr double kNetOverheadSimpleFactor = 3.0;

// NCCL 2.20.3 src/graph/tuning.cc, ring refinements.
constexpr double kRingLlFactor = 1.0 / 4.0;  // across hosts, or AllReduce
constexpr double kRingLlSingleHostFactor = 1.0 / 3.0;
constexpr double kRingLl128Factor = 0.92;           // "120.0/128.0", ppn >= 2
constexpr double kRingLl128OnePerHostFactor = 0.7;  // ppn < 2
// NCCL 2.20.3 src/graph/tuning.cc, tree refinements.
constexpr double kTreeFactor = 0.92;
constexpr double kTreeLlFactor = 1.0 / 3.8;
constexpr double kTreeLl128Factor = 120.0 / 128.0;  // across hosts
constexpr double kTreeLl128SingleHostFactor = 7.0 / 9.0;

// NCCL 2.20.3 src/graph/tuning.cc, llMaxBws (GB/s): Hopper row for one
// host {87.7}, Intel row for several {39.0 (2 hosts), 20.4 (4+)}.
constexpr double kLlMaxSingleHost = 87.7;
constexpr double kLlMaxTwoHosts = 39.0;
constexpr double kLlMaxManyHosts = 20.4;

}  // namespace

double base_latency_us(Algorithm a, Protocol p) { return kBaseLatency[tree_row(a) ? 0 : 1][protocol_column(p)]; }

double hw_latency_us(Hw hw, Algorithm a, Protocol p) {
  return kHwLatency[static_cast<int>(hw)][tree_row(a) ? 0 : 1][protocol_column(p)];
}

double net_overhead_us(Protocol p) {
  return p == Protocol::Simple ? kNetOverheadUs * kNetOverheadSimpleFactor : kNetOverheadUs;
}

double bandwidth_factor(Collective c, Algorithm a, Protocol p, int hosts, int gpus_per_host) {
  if (a == Algorithm::Tree) {
    double f = kTreeFactor;
    if (p == Protocol::LL) f *= kTreeLlFactor;
    if (p == Protocol::LL128) f *= hosts == 1 ? kTreeLl128SingleHostFactor : kTreeLl128Factor;
    return f;
  }
  switch (p) {
    case Protocol::LL:
      return hosts > 1 || c == Collective::AllReduce ? kRingLlFactor : kRingLlSingleHostFactor;
    case Protocol::LL128:
      return gpus_per_host < 2 ? kRingLl128OnePerHostFactor : kRingLl128Factor;
    case Protocol::Simple:
      return 1.0;
  }
  return 1.0;
}

double ll_max_busbw_gbytes(int hosts) {
  if (hosts <= 1) return kLlMaxSingleHost;
  return hosts == 2 ? kLlMaxTwoHosts : kLlMaxManyHosts;
}

}  // namespace topo::nccl
