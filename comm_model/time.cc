#include "comm_model/time.h"

#include <algorithm>

#include "comm_model/nccl_tuning.h"
#include "comm_model/traffic.h"

namespace topo {
namespace {

struct Steps {
  const ModelOptions& o;
  // One step between hosts whose longest path passes `switches` switches.
  double net(Algorithm a, Protocol p, int switches) const {
    return (o.nccl_tuning ? nccl::hw_latency_us(nccl::Hw::Net, a, p) : o.alpha_us) + o.switch_latency_us * switches;
  }
  double nvl(Algorithm a, Protocol p) const {
    return o.nccl_tuning ? nccl::hw_latency_us(nccl::Hw::NvLink, a, p) : o.nvlink_alpha_us;
  }
  double base(Algorithm a, Protocol p) const { return o.nccl_tuning ? nccl::base_latency_us(a, p) : 0.0; }
};

// Network bytes per unit of pace, NVLink bytes per GPU and latency, per algorithm.
struct Work {
  double net_units = 0, nvl_bytes = 0, lat_us = 0;
  bool sequential = false;  // NVLink before and after the network, not beside it
};

Work ring_work(const Request& r, const Steps& st, const Shape& sh, Protocol p, int switches) {
  const int N = sh.hosts, G = sh.gpus_per_host, n = N * G;
  const bool AR = r.collective == Collective::AllReduce;
  Work w;
  double edge = ring_edge_bytes(r.collective, n, r.bytes);
  w.net_units = edge;
  if (G > 1) w.nvl_bytes = edge * (N > 1 ? (G - 1.0) / G : 1.0);
  int total = AR ? 2 * (n - 1) : n - 1;
  int inter = N > 1 ? (AR ? 2 * (N - 1) : N - 1) : 0;
  double intra_step = st.nvl(Algorithm::Ring, p);
  if (N > 1 && st.o.nccl_tuning) intra_step = std::max(intra_step, nccl::net_overhead_us(p));
  w.lat_us = inter * st.net(Algorithm::Ring, p, switches) + (total - inter) * intra_step;
  return w;
}

Work hierarchical_work(const Request& r, const Steps& st, const Shape& sh, Protocol p, int switches) {
  const int N = sh.hosts, G = sh.gpus_per_host;
  const bool AR = r.collective == Collective::AllReduce;
  const double S = r.bytes;
  Work w;
  double share = (G - 1.0) / G * S;  // what one GPU moves over NVLink per phase
  w.net_units = AR ? 2.0 * (N - 1) / N * S : r.collective == Collective::Broadcast ? S : (N - 1.0) / N * S;
  w.nvl_bytes = AR ? 2 * share : share;
  w.sequential = true;
  int inter = N > 1 ? (AR ? 2 * (N - 1) : N - 1) : 0;
  int intra = AR ? 2 * (G - 1) : G - 1;
  w.lat_us = inter * st.net(Algorithm::Hierarchical, p, switches) + intra * st.nvl(Algorithm::Hierarchical, p);
  return w;
}

Work tree_work(const Request& r, const Steps& st, const Shape& sh, Protocol p, int switches) {
  const int G = sh.gpus_per_host;
  Work w;
  w.net_units = r.bytes / 2;
  if (G > 1) w.nvl_bytes = 2 * r.bytes * (G - 1.0) / G;
  w.lat_us = 2 * ((G - 1) * st.nvl(Algorithm::Tree, p) + sh.tree_depth * st.net(Algorithm::Tree, p, switches));
  return w;
}

Work direct_work(const Request& r, const Steps& st, const Shape& sh, Protocol p, int switches, bool pxn) {
  const int N = sh.hosts, G = sh.gpus_per_host, n = N * G;
  Work w;
  w.net_units = 1.0;
  double per_rank = r.bytes / n;
  if (G > 1) w.nvl_bytes = per_rank * (G - 1) + (pxn ? per_rank * (n - G) * (G - 1.0) / G : 0.0);
  w.lat_us = (N - 1) * st.net(Algorithm::Direct, p, switches) + (G - 1) * st.nvl(Algorithm::Direct, p);
  return w;
}

}  // namespace

void cost(const Request& r, const ModelOptions& o, const Shape& sh, const Pace* pace, bool ideal, Candidate& c) {
  const bool networked = pace && sh.hosts > 1;
  const int switches = !networked ? 0 : ideal ? 1 : pace->switches;
  const Steps st{o};
  Work w;
  switch (c.algorithm) {
    case Algorithm::Ring:
      w = ring_work(r, st, sh, c.protocol, switches);
      break;
    case Algorithm::Hierarchical:
      w = hierarchical_work(r, st, sh, c.protocol, switches);
      break;
    case Algorithm::Tree:
      w = tree_work(r, st, sh, c.protocol, switches);
      break;
    case Algorithm::Direct:
      w = direct_work(r, st, sh, c.protocol, switches, c.pxn);
      break;
  }
  double net = networked ? w.net_units * (ideal ? pace->ideal_seconds : pace->seconds) : 0.0;
  double nvl = w.nvl_bytes / (o.nvlink_gbps * 1e9 / 8);
  const int n = sh.hosts * sh.gpus_per_host;
  double factor =
      o.nccl_tuning ? nccl::bandwidth_factor(r.collective, c.algorithm, c.protocol, sh.hosts, sh.gpus_per_host) : 1.0;
  double bw = (w.sequential ? net + nvl : std::max(net, nvl)) / factor;
  if (o.nccl_tuning && c.protocol == Protocol::LL)
    bw = std::max(bw, bus_factor(r.collective, n) * r.bytes / (nccl::ll_max_busbw_gbytes(sh.hosts) * 1e9));
  c.net_s = net;
  c.nvl_s = nvl;
  c.bw_s = bw;
  c.latency_s = (st.base(c.algorithm, c.protocol) + w.lat_us) * 1e-6;
}

}  // namespace topo
