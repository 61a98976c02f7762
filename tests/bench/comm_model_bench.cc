// How long one estimate takes: the scheduler calls it for every candidate
// allocation, so a 1,024-host ring on a 16,384-host fabric should cost well
// under a millisecond. The index is built once per fabric.
#include <algorithm>
#include <random>

#include <benchmark/benchmark.h>

#include "comm_model/estimate.h"
#include "comm_model/sizing.h"
#include "fabric/synthetic.h"
#include "routing/route.h"
#include "routing/routing_engine.h"
#include "tests/bench/counted.h"

namespace {

using namespace topo;

// 16 pods x 32 leaves x 32 hosts = 16,384 hosts, 2 spines per pod, 2 cores.
const char* const kSpec = "clos3:pods=16,leaves_per_pod=32,hosts_per_leaf=32";

const Fabric& fabric() {
  static const Fabric f = make_synthetic(kSpec);
  return f;
}

const PathIndex& index() {
  static const PathIndex i(fabric());
  return i;
}

// 16,384 hosts on switches a subnet manager can route: a spine of the
// fabric above has 512 ports, past the 254 an 8-bit forwarding table entry
// can name. Here 64-port-class switches: 2:1 leaves (32 down, 16 up), 16
// spines per pod of 64 leaves (128 ports) and 64 cores (128 ports), with
// tables emulated from OpenSM's ftree rules.
const char* const kStaticSpec = "clos3:pods=8,leaves_per_pod=64,hosts_per_leaf=32,spines_per_pod=16,cores=64,oversub=2";

const Fabric& pinned_fabric() {
  static const Fabric f = [] {
    Fabric g = make_synthetic(kStaticSpec);
    g.set_routing(emulate_routing(g, "ftree"));
    return g;
  }();
  return f;
}

const PathIndex& pinned_index() {
  static const PathIndex i(pinned_fabric());
  return i;
}

// The first 1,024 hosts: two pods, leaf after leaf.
std::vector<NodeId> packed() { return first_hosts(index(), 1024); }

// 1,024 hosts drawn from the whole fabric, in random order: every ring edge
// crosses pods.
std::vector<NodeId> scattered() {
  std::vector<NodeId> all(fabric().hosts().begin(), fabric().hosts().end());
  std::shuffle(all.begin(), all.end(), std::mt19937(42));
  all.resize(1024);
  return all;
}

Request allreduce(int gpus_per_host) {
  Request r;
  r.collective = Collective::AllReduce;
  r.bytes = double(1 << 30);
  r.gpus_per_host = gpus_per_host;
  return r;
}

// One estimate, the part scripts/speed-gate.sh counts.
Estimate counted_estimate(const PathIndex& index, std::span<const NodeId> hosts, const Request& request,
                          const ModelOptions& options = {}) {
  bench::Counted counted;
  return estimate(index, hosts, request, {}, options);
}

void report(benchmark::State& state, const Estimate& e) {
  state.counters["hosts"] = e.hosts;
  state.counters["model_ms"] = e.time_s * 1e3;
  state.counters["busbw_GBps"] = e.busbw_gbps / 8;
}

void BM_BuildPathIndex(benchmark::State& state) {
  const Fabric& f = fabric();
  for (auto _ : state) {
    PathIndex i(f);
    benchmark::DoNotOptimize(i);
  }
  state.counters["hosts"] = static_cast<double>(f.hosts().size());
  state.counters["trunks"] = static_cast<double>(index().trunks().size());
}
BENCHMARK(BM_BuildPathIndex)->Unit(benchmark::kMillisecond)->Apply(bench::iterations_from_environment);

void BM_RingAllReduce1024Packed(benchmark::State& state) {
  auto hosts = packed();
  ModelOptions o;
  o.algorithm = Algorithm::Ring;
  Estimate e;
  for (auto _ : state) benchmark::DoNotOptimize(e = counted_estimate(index(), hosts, allreduce(8), o));
  report(state, e);
}
BENCHMARK(BM_RingAllReduce1024Packed)->Unit(benchmark::kMicrosecond)->Apply(bench::iterations_from_environment);

void BM_RingAllReduce1024Scattered(benchmark::State& state) {
  auto hosts = scattered();
  ModelOptions o;
  o.algorithm = Algorithm::Ring;
  Estimate e;
  for (auto _ : state) benchmark::DoNotOptimize(e = counted_estimate(index(), hosts, allreduce(8), o));
  report(state, e);
}
BENCHMARK(BM_RingAllReduce1024Scattered)->Unit(benchmark::kMicrosecond)->Apply(bench::iterations_from_environment);

// Every algorithm and protocol NCCL could pick, as the scheduler asks.
void BM_AllReduceAnyAlgorithm1024Packed(benchmark::State& state) {
  auto hosts = packed();
  Estimate e;
  for (auto _ : state) benchmark::DoNotOptimize(e = counted_estimate(index(), hosts, allreduce(8)));
  report(state, e);
}
BENCHMARK(BM_AllReduceAnyAlgorithm1024Packed)->Unit(benchmark::kMicrosecond)->Apply(bench::iterations_from_environment);

void BM_AllReduceAnyAlgorithm1024Scattered(benchmark::State& state) {
  auto hosts = scattered();
  Estimate e;
  for (auto _ : state) benchmark::DoNotOptimize(e = counted_estimate(index(), hosts, allreduce(8)));
  report(state, e);
}
BENCHMARK(BM_AllReduceAnyAlgorithm1024Scattered)
    ->Unit(benchmark::kMicrosecond)
    ->Apply(bench::iterations_from_environment);

// AllToAll sums its flows per leaf pair: the cost grows with the leaves the
// allocation touches (32 packed, about 500 scattered), not with hosts squared.
void BM_AllToAll1024Packed(benchmark::State& state) {
  auto hosts = packed();
  Request r = allreduce(8);
  r.collective = Collective::AllToAll;
  Estimate e;
  for (auto _ : state) benchmark::DoNotOptimize(e = counted_estimate(index(), hosts, r));
  report(state, e);
}
BENCHMARK(BM_AllToAll1024Packed)->Unit(benchmark::kMicrosecond)->Apply(bench::iterations_from_environment);

void BM_AllToAll1024Scattered(benchmark::State& state) {
  auto hosts = scattered();
  Request r = allreduce(8);
  r.collective = Collective::AllToAll;
  Estimate e;
  for (auto _ : state) benchmark::DoNotOptimize(e = counted_estimate(index(), hosts, r));
  report(state, e);
}
BENCHMARK(BM_AllToAll1024Scattered)->Unit(benchmark::kMicrosecond)->Apply(bench::iterations_from_environment);

// Static routing: one flow's path walked through the tables, from an HCA
// to another pod's HCA (5 switches).
void BM_StaticPathLookup(benchmark::State& state) {
  const Fabric& f = pinned_fabric();
  std::vector<NodeId> hosts(f.hosts().begin(), f.hosts().end());
  std::shuffle(hosts.begin(), hosts.end(), std::mt19937(42));
  std::vector<NodeId> hcas;
  for (size_t i = 0; i < 1024; ++i) hcas.push_back(f.hcas_of(hosts[i]).front());
  std::vector<int> path;
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(trace_static_cables(f, hcas[i % 1024], hcas[(i + 1) % 1024], path));
    ++i;
  }
  state.counters["cables"] = static_cast<double>(path.size());
}
BENCHMARK(BM_StaticPathLookup)->Unit(benchmark::kNanosecond)->Apply(bench::iterations_from_environment);

void BM_RingAllReduce1024PackedStatic(benchmark::State& state) {
  std::vector<NodeId> hosts = first_hosts(pinned_index(), 1024);
  ModelOptions o;
  o.algorithm = Algorithm::Ring;
  Estimate e;
  for (auto _ : state) benchmark::DoNotOptimize(e = counted_estimate(pinned_index(), hosts, allreduce(8), o));
  report(state, e);
}
BENCHMARK(BM_RingAllReduce1024PackedStatic)->Unit(benchmark::kMicrosecond)->Apply(bench::iterations_from_environment);

void BM_RingAllReduce1024ScatteredStatic(benchmark::State& state) {
  std::vector<NodeId> all(pinned_fabric().hosts().begin(), pinned_fabric().hosts().end());
  std::shuffle(all.begin(), all.end(), std::mt19937(42));
  all.resize(1024);
  const PathIndex& index = pinned_index();  // built before the timed loop
  ModelOptions o;
  o.algorithm = Algorithm::Ring;
  Estimate e;
  for (auto _ : state) benchmark::DoNotOptimize(e = counted_estimate(index, all, allreduce(8), o));
  report(state, e);
}
BENCHMARK(BM_RingAllReduce1024ScatteredStatic)
    ->Unit(benchmark::kMicrosecond)
    ->Apply(bench::iterations_from_environment);

}  // namespace
