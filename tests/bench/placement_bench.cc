// Placement latency as the scheduler sees it: one decision per job, on a
// fragmented cluster. Prints p50 / p99 over the iterations; asserts nothing.
#include <algorithm>
#include <chrono>
#include <random>

#include <benchmark/benchmark.h>

#include "placement/search.h"
#include "topology/synthetic.h"

namespace topo {
namespace {

void place_on(benchmark::State& state, const char* spec, int job_hosts, double busy_share) {
  static std::map<std::string, std::unique_ptr<Fabric>> fabrics;  // built once per spec
  auto& fabric = fabrics[spec];
  if (!fabric) fabric = std::make_unique<Fabric>(make_synthetic(spec));
  SwitchTree tree(*fabric);
  FreeMap free = FreeMap::all_free(*fabric, 8);
  std::mt19937 rng(7);
  for (NodeId h : fabric->hosts())
    if (std::uniform_real_distribution<>(0, 1)(rng) < busy_share) free.free_gpus[h] = 0;
  PlacementRequest request;
  request.hosts = job_hosts;
  request.gpus_per_host = 8;

  std::vector<double> ms;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    Placement p = place(tree, free, request);
    benchmark::DoNotOptimize(p);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    if (!p.feasible) state.SkipWithError("no placement");
  }
  std::sort(ms.begin(), ms.end());
  state.counters["p50_ms"] = ms[ms.size() / 2];
  state.counters["p99_ms"] = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
  state.counters["hosts"] = static_cast<double>(fabric->hosts().size());
}

void BM_Place128HostsOn4096Busy60(benchmark::State& state) {
  place_on(state, "leafspine:leaves=128,hosts_per_leaf=32,spines=16,oversub=2", 128, 0.6);
}
BENCHMARK(BM_Place128HostsOn4096Busy60)->Unit(benchmark::kMillisecond);

void BM_Place1024HostsOn16384(benchmark::State& state) {
  place_on(state, "clos3:pods=16,leaves_per_pod=32,hosts_per_leaf=32,spines_per_pod=16,cores=16", 1024, 0.0);
}
BENCHMARK(BM_Place1024HostsOn16384)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace topo
