// Discovery of a GB200-like cluster of 128 NVL72 racks (2,304 compute trays
// of 4 GPUs): its scale-out from an ibnetdiscover file and every tray's
// `nvidia-smi -q -x` file, as `topoctl discover --ibnetdiscover FILE
// --nvidia-smi DIR` reads them. Prints the wall time per discovery, the
// bytes read and the process's peak RSS; asserts nothing about either.
// Aim (issue 43): under 2 s and 300 MB.
//
// The files are written once, before timing, from the synthetic
// `nvl72:racks=128` cluster: the scale-out as its ibnetdiscover text, and
// per tray 4 GPU records naming the rack's domain. Each record carries
// kPaddingLines lines of the fields nvidia-smi prints and the reader skips
// (clocks, ECC counters, power readings), so that the reader walks about
// as many bytes as on a real node.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "discovery/ibnetdiscover.h"
#include "discovery/nvidia_smi.h"
#include "fabric/fabric.h"
#include "fabric/synthetic.h"
#include "tests/bench/counted.h"

namespace topo {
namespace {

constexpr const char* kSpec = "nvl72:racks=128";
constexpr int kGpusPerTray = 4;
// Lines of skipped fields per GPU record: a real GB200 record is several
// hundred lines.
constexpr int kPaddingLines = 300;

std::string gpu_record(int gpu, const DomainKey& domain) {
  std::string out =
      fmt::format("\t<gpu id=\"00000008:{:02}:00.0\">\n\t\t<product_name>NVIDIA GB200</product_name>\n", gpu + 1);
  for (int i = 0; i < kPaddingLines; ++i) out += fmt::format("\t\t<field_{0}>{0} MHz</field_{0}>\n", i);
  out += fmt::format(
      "\t\t<fabric>\n\t\t\t<state>Completed</state>\n\t\t\t<status>Success</status>\n"
      "\t\t\t<cliqueId>{}</cliqueId>\n\t\t\t<clusterUuid>{}</clusterUuid>\n\t\t</fabric>\n\t</gpu>\n",
      domain.clique_id, domain.cluster_uuid);
  return out;
}

void write_tray(const std::string& path, const DomainKey& domain) {
  std::ofstream out(path);
  out << "<?xml version=\"1.0\" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v12.dtd\">\n"
         "<nvidia_smi_log>\n\t<driver_version>570.172.08</driver_version>\n";
  for (int g = 0; g < kGpusPerTray; ++g) out << gpu_record(g, domain);
  out << "</nvidia_smi_log>\n";
  if (!out) throw std::runtime_error("writing " + path + " failed");
}

struct Files {
  std::string dir, ibnetdiscover, nvidia_smi;
  size_t trays = 0, domains = 0;
  uint64_t bytes = 0;
};

const Files& files() {
  static const Files f = [] {
    Files f;
    f.dir = (std::filesystem::temp_directory_path() / fmt::format("nvlink_bench.{}", getpid())).string();
    f.nvidia_smi = f.dir + "/nvidia-smi";
    f.ibnetdiscover = f.dir + "/scale-out.ibnetdiscover";
    std::filesystem::create_directories(f.nvidia_smi);
    Fabric cluster = make_synthetic(kSpec);
    std::ofstream out(f.ibnetdiscover);
    write_ibnetdiscover(cluster, out);
    out.close();
    const FabricIndex& index = cluster.index();
    for (NodeId host : cluster.hosts()) {
      int domain = cluster.domains().domain_of(index.host_id(host));
      if (domain < 0) continue;
      std::string path = f.nvidia_smi + "/" + cluster.node(host).name + ".xml";
      write_tray(path, cluster.domains().key(domain));
      f.bytes += std::filesystem::file_size(path);
      ++f.trays;
    }
    f.domains = cluster.domains().count();
    f.bytes += std::filesystem::file_size(f.ibnetdiscover);
    std::atexit([] { std::filesystem::remove_all(files().dir); });
    return f;
  }();
  return f;
}

// One discovery, the part scripts/speed-gate.sh would count.
Fabric discover(const Files& f) {
  bench::Counted counted;
  Fabric fabric = read_ibnetdiscover_file(f.ibnetdiscover);
  attach_nvidia_smi_dir(fabric, f.nvidia_smi, *nvlink_spec("nvlink5"));
  return fabric;
}

void BM_DiscoverNvl72x128(benchmark::State& state) {
  const Files& f = files();
  size_t domains = 0, hosts = 0;
  for (auto _ : state) {
    Fabric fabric = discover(f);
    domains = fabric.domains().count();
    hosts = fabric.hosts().size();
    benchmark::DoNotOptimize(fabric);
  }
  if (domains != f.domains || hosts != f.trays) state.SkipWithError("the domains read back are not the ones written");
  state.counters["hosts"] = static_cast<double>(hosts);
  state.counters["domains"] = static_cast<double>(domains);
  state.counters["files_MB"] = static_cast<double>(f.bytes) / (1024.0 * 1024.0);
  state.counters["peak_rss_MB"] = bench::peak_rss_mb();
}
BENCHMARK(BM_DiscoverNvl72x128)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Apply(bench::iterations_from_environment);

}  // namespace
}  // namespace topo
