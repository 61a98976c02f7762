// What the benchmarks count: the instructions scripts/speed-gate.sh counts,
// and the peak memory a benchmark reports beside its time.
//
// What scripts/speed-gate.sh counts. The gate runs a benchmark under
// callgrind with instrumentation and collection off
// (--instr-atstart=no --collect-atstart=no): only code inside a Counted
// scope is instrumented and its instructions counted, so building a
// 16,384-host fabric before the loop costs the gate neither minutes nor
// instructions. Each scope's count is dumped to a file of its own, so the
// gate can leave out the first call (buffers a thread keeps grow there).
// Outside valgrind each request is a handful of no-op instructions.
//
// TOPO_BENCH_ITERATIONS=N runs a benchmark exactly N iterations, the same
// work every time: Google Benchmark 1.7 takes iteration counts only from
// code, its --benchmark_min_time only as seconds.
#pragma once

#include <sys/resource.h>

#include <cstdlib>

#include <benchmark/benchmark.h>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#define CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_DUMP_STATS
#endif

namespace topo::bench {

class Counted {
 public:
  Counted() {
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_TOGGLE_COLLECT;
  }
  ~Counted() {
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS;
    CALLGRIND_STOP_INSTRUMENTATION;
  }
  Counted(const Counted&) = delete;
  Counted& operator=(const Counted&) = delete;
};

// For BENCHMARK(...)->Apply(iterations_from_environment).
inline void iterations_from_environment(benchmark::internal::Benchmark* b) {
  const char* n = std::getenv("TOPO_BENCH_ITERATIONS");
  if (n && std::atoll(n) > 0) b->Iterations(std::atoll(n));
}

// The process's peak resident memory so far, in MiB: a benchmark's
// counters["peak_rss_MB"] (Linux gives ru_maxrss in KiB).
inline double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

}  // namespace topo::bench
