// Ingest of a 16,384-host three-tier fabric from ibnetdiscover text:
// parse, build the graph and classify it (read_ibnetdiscover_file does all
// three). Prints wall time per read and the process's peak RSS; asserts
// nothing about either. Aim: under 1 s and 200 MB.
//
// The fabric is built as it would be cabled from 64-port switches: 16 pods
// of 32 leaves (32 hosts down, 32 uplinks, one to each spine of its pod),
// 32 spines per pod (32 down, 32 up) and 256 cores in 32 planes of 8, every
// spine giving 4 cables to each core of its plane. 1,280 switches, 16,384
// HCAs, 49,152 cables, all 4xNDR. It is written by a child process so that
// the peak RSS reported is the reader's alone.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "discovery/ibnetdiscover.h"
#include "fabric/fabric.h"
#include "tests/bench/counted.h"

namespace topo {
namespace {

constexpr int kPods = 16, kLeavesPerPod = 32, kHostsPerLeaf = 32, kSpinesPerPod = 32;
constexpr int kPlanes = kSpinesPerPod, kCoresPerPlane = 8, kCablesPerCore = 4;

Fabric three_tier() {
  FabricBuilder b;
  uint64_t guid = 0x7cfe900300000000ULL;
  auto sw = [&](const std::string& name) {
    b.add_switch(name, name, 64, ++guid);
    return name;
  };
  for (int plane = 0; plane < kPlanes; ++plane)
    for (int c = 0; c < kCoresPerPlane; ++c) sw(fmt::format("core{:03}", plane * kCoresPerPlane + c + 1));
  int host = 0;
  for (int p = 0; p < kPods; ++p) {
    for (int s = 0; s < kSpinesPerPod; ++s) {
      std::string spine = sw(fmt::format("spine{:03}", p * kSpinesPerPod + s + 1));
      // Spine s of every pod feeds plane s; core port = pod * 4 + cable.
      for (int c = 0; c < kCoresPerPlane; ++c)
        for (int k = 0; k < kCablesPerCore; ++k)
          b.connect(spine, 33 + c * kCablesPerCore + k, fmt::format("core{:03}", s * kCoresPerPlane + c + 1),
                    1 + p * kCablesPerCore + k, {});
    }
    for (int l = 0; l < kLeavesPerPod; ++l) {
      std::string leaf = sw(fmt::format("leaf{:03}", p * kLeavesPerPod + l + 1));
      for (int s = 0; s < kSpinesPerPod; ++s)
        b.connect(leaf, 33 + s, fmt::format("spine{:03}", p * kSpinesPerPod + s + 1), 1 + l, {});
      for (int h = 0; h < kHostsPerLeaf; ++h) {
        std::string name = fmt::format("gpu{:05}", ++host);
        std::string hca = fmt::format("H-{:016x}", 0x0002c90300000000ULL + static_cast<uint64_t>(host) * 2);
        b.add_hca(hca, name + " mlx5_0", 1, 0x0002c90300000000ULL + static_cast<uint64_t>(host) * 2);
        b.connect(leaf, 1 + h, hca, 1, {});
      }
    }
  }
  return std::move(b).finish();
}

const std::string& fabric_file() {
  static const std::string path = [] {
    std::string dir = (std::filesystem::temp_directory_path() / fmt::format("ingest_bench.{}", getpid())).string();
    std::filesystem::create_directories(dir);
    std::string file = dir + "/clos3-16384.ibnetdiscover";
    pid_t child = fork();
    if (child < 0) throw std::runtime_error("fork failed");
    if (child == 0) {
      std::ofstream out(file);
      write_ibnetdiscover(three_tier(), out);
      out.close();
      _exit(out ? 0 : 1);
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("writing " + file + " failed");
    std::atexit([] { std::filesystem::remove_all(std::filesystem::path(fabric_file()).parent_path()); });
    return file;
  }();
  return path;
}

// One read, the part scripts/speed-gate.sh counts.
Fabric counted_read(const std::string& file) {
  bench::Counted counted;
  return read_ibnetdiscover_file(file);
}

void BM_ReadIbnetdiscover16k(benchmark::State& state) {
  const std::string& file = fabric_file();
  FabricSummary summary;
  for (auto _ : state) {
    Fabric f = counted_read(file);
    summary = f.summary();
    benchmark::DoNotOptimize(f);
  }
  if (summary.hosts != kPods * kLeavesPerPod * kHostsPerLeaf || summary.cores != kPlanes * kCoresPerPlane)
    state.SkipWithError("the fabric read back is not the one written");
  state.counters["hosts"] = summary.hosts;
  state.counters["cables"] = summary.links;
  state.counters["file_MB"] = static_cast<double>(std::filesystem::file_size(file)) / (1024.0 * 1024.0);
  state.counters["peak_rss_MB"] = bench::peak_rss_mb();
}
BENCHMARK(BM_ReadIbnetdiscover16k)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Apply(bench::iterations_from_environment);

}  // namespace
}  // namespace topo
