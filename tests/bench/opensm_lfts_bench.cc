// Import of OpenSM's forwarding-table dump (opensm-lfts.dump) of a
// 16,384-host three-tier fabric: read_opensm_lfts_file parses every entry,
// matches every switch and checks every LID's owner. Prints wall time per
// import, the dump's size and the process's peak RSS; asserts nothing about
// either. Aim (reading 16k-host tables live cannot be measured here): under
// 2 s and 300 MB.
//
// The fabric is make_synthetic's clos3 with 8 pods of 64 leaves of 32
// hosts, 2:1 leaves, 16 spines per pod and 64 cores, every switch within
// the 254 ports a table entry can name (704 switches, 17,088 LIDs); its
// tables are emulated ftree (timed too, below), written by write_opensm_lfts in a child
// process, so that the peak RSS reported is the importer's and the fabric's
// (built here once, as `topoctl discover --lfts-dump` holds it too).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "fabric/fabric.h"
#include "fabric/synthetic.h"
#include "routing/opensm_lfts.h"
#include "routing/routing_engine.h"
#include "tests/bench/counted.h"

namespace topo {
namespace {

constexpr const char* kSpec = "clos3:pods=8,leaves_per_pod=64,hosts_per_leaf=32,spines_per_pod=16,cores=64,oversub=2";

const std::string& dump_file() {
  static const std::string path = [] {
    std::string dir = (std::filesystem::temp_directory_path() / fmt::format("lfts_bench.{}", getpid())).string();
    std::filesystem::create_directories(dir);
    std::string file = dir + "/clos3-16384.lfts";
    pid_t child = fork();
    if (child < 0) throw std::runtime_error("fork failed");
    if (child == 0) {
      Fabric f = make_synthetic(kSpec);
      f.set_routing(emulate_routing(f, "ftree"));
      std::ofstream out(file);
      write_opensm_lfts(f, out);
      out.close();
      _exit(out ? 0 : 1);
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("writing " + file + " failed");
    std::atexit([] { std::filesystem::remove_all(std::filesystem::path(dump_file()).parent_path()); });
    return file;
  }();
  return path;
}

void BM_ReadOpenSmLfts16k(benchmark::State& state) {
  const std::string& file = dump_file();
  static const Fabric fabric = make_synthetic(kSpec);
  size_t tables = 0;
  for (auto _ : state) {
    Routing r = read_opensm_lfts_file(file, fabric);
    tables = r.lft.size();
    benchmark::DoNotOptimize(r);
  }
  if (tables != fabric.switches().size()) state.SkipWithError("not every switch's table was read");
  state.counters["hosts"] = fabric.summary().hosts;
  state.counters["switches"] = static_cast<double>(fabric.switches().size());
  state.counters["file_MB"] = static_cast<double>(std::filesystem::file_size(file)) / (1024.0 * 1024.0);
  state.counters["peak_rss_MB"] = bench::peak_rss_mb();
}
BENCHMARK(BM_ReadOpenSmLfts16k)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

// Emulating OpenSM's engines on the same fabric, as `topoctl discover
// --routing static:ENGINE` does for a snapshot without tables.
void BM_EmulateRouting16k(benchmark::State& state, const char* engine) {
  static const Fabric fabric = make_synthetic(kSpec);
  for (auto _ : state) benchmark::DoNotOptimize(emulate_routing(fabric, engine));
  state.counters["hosts"] = fabric.summary().hosts;
}
BENCHMARK_CAPTURE(BM_EmulateRouting16k, ftree, "ftree")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_EmulateRouting16k, minhop, "minhop")->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace topo
