// The fabric picture at 4,096 hosts: building the scene (which boxes and
// lines) and laying it out and writing it through Graphviz, on a flat
// leaf/spine (leaves wrapped into rows), a three-tier fabric's overview
// (one box per pod) and one of its pods, with a 64-host ring. Prints the
// time, the SVG's size and the process's peak resident memory; asserts
// nothing.

#include <string>

#include <benchmark/benchmark.h>

#include "fabric/synthetic.h"
#include "tests/bench/counted.h"
#include "tools/view/fabric_scene.h"
#include "tools/view/render.h"

namespace topo::view {
namespace {

constexpr const char* kFlat = "leafspine:leaves=256,hosts_per_leaf=16,spines=16,degrade=leaf007:17";
constexpr const char* kPods = "clos3:pods=8,leaves_per_pod=16,hosts_per_leaf=32,spines_per_pod=8,cores=8";

// A 64-host job whose ring visits every 61st host: it crosses many leaves.
FabricPicture with_ring(const Fabric& f) {
  FabricPicture p;
  JobOnFabric job{"1", {}};
  for (size_t i = 0; i < 64; ++i) job.ring.push_back(f.hosts()[(i * 61) % f.hosts().size()]);
  p.jobs.push_back(job);
  p.rings = {"1"};
  return p;
}

void draw(benchmark::State& state, const char* spec, std::optional<int> pod) {
  Fabric f = make_synthetic(spec);
  FabricPicture p = with_ring(f);
  p.pod = pod;
  size_t bytes = 0, boxes = 0;
  for (auto _ : state) {
    Scene scene = fabric_scene(f, p);
    std::string svg = render(scene, Format::Svg);
    bytes = svg.size();
    boxes = scene.boxes.size();
    benchmark::DoNotOptimize(svg);
  }
  state.counters["svg_kb"] = static_cast<double>(bytes) / 1024;
  state.counters["boxes"] = static_cast<double>(boxes);
  state.counters["peak_rss_mb"] = bench::peak_rss_mb();
}

void scene_only(benchmark::State& state) {
  Fabric f = make_synthetic(kFlat);
  FabricPicture p = with_ring(f);
  for (auto _ : state) benchmark::DoNotOptimize(fabric_scene(f, p));
}

BENCHMARK_CAPTURE(draw, flat_4096_hosts, kFlat, std::nullopt)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
BENCHMARK_CAPTURE(draw, pods_4096_hosts_overview, kPods, std::nullopt)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime();
BENCHMARK_CAPTURE(draw, pods_4096_hosts_one_pod, kPods, 3)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
BENCHMARK(scene_only)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace topo::view
