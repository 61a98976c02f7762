// Trace replay at scale: 10,000 generated jobs on a 4,096-host 2:1 leaf/spine
// whose host names interleave across leaves, one policy per benchmark. The
// replay (scheduler + policy) and the judging (every job's AllReduce with
// its neighbours' traffic) are timed apart. Prints figures; asserts nothing.
#include <chrono>
#include <memory>

#include <benchmark/benchmark.h>

#include "fabric/synthetic.h"
#include "simulation/outcome.h"
#include "simulation/replay.h"

namespace topo {
namespace {

constexpr const char* kFabric = "leafspine:leaves=128,hosts_per_leaf=32,spines=16,oversub=2,naming=interleaved";

struct Setup {
  Fabric fabric = make_synthetic(kFabric);
  SwitchTree tree{fabric};
  Trace trace = generate_trace(static_cast<int>(fabric.hosts().size()) * 8, {10000, 0.9, 1, 1800});
};

const Setup& setup() {
  static const Setup s;  // built once for every benchmark
  return s;
}

void replay_and_judge(benchmark::State& state, const char* policy_name) {
  const Setup& s = setup();
  PlacementPolicy policy = policy_named(policy_name, s.fabric);
  OutcomeOptions judging;
  judging.fabric_gpus = static_cast<int>(s.fabric.hosts().size()) * 8;
  double replay_s = 0, judge_s = 0;
  PolicyOutcome outcome;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    Schedule schedule = replay(s.tree, s.trace, policy, {});
    auto t1 = std::chrono::steady_clock::now();
    outcome = judge(s.tree, schedule, judging);
    auto t2 = std::chrono::steady_clock::now();
    replay_s = std::chrono::duration<double>(t1 - t0).count();
    judge_s = std::chrono::duration<double>(t2 - t1).count();
    outcome.scheduler = schedule.scheduler;
  }
  state.counters["jobs"] = static_cast<double>(s.trace.jobs.size());
  state.counters["replay_s"] = replay_s;
  state.counters["judge_s"] = judge_s;
  state.counters["place_mean_us"] = outcome.scheduler["placement_mean_us"];
  state.counters["place_p99_us"] = outcome.scheduler["placement_p99_us"];
  state.counters["AR_mean"] = outcome.mean_allreduce_slowdown;
  state.counters["spine_edges"] = static_cast<double>(outcome.spine_ring_edges);
}

void BM_Replay10kJobsOn4096Hosts_Linear(benchmark::State& state) { replay_and_judge(state, "linear"); }
void BM_Replay10kJobsOn4096Hosts_Tree(benchmark::State& state) { replay_and_judge(state, "tree"); }
void BM_Replay10kJobsOn4096Hosts_TopoAware(benchmark::State& state) { replay_and_judge(state, "topo-aware"); }
BENCHMARK(BM_Replay10kJobsOn4096Hosts_Linear)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_Replay10kJobsOn4096Hosts_Tree)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_Replay10kJobsOn4096Hosts_TopoAware)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
}  // namespace topo
