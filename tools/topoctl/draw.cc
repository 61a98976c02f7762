// topoctl draw: the fabric as a picture (SVG or PNG, laid out by Graphviz):
// pods, spines, leaves and the hosts under them, cables coloured by health
// or by the running jobs' load, and a job's ring drawn over it.
#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "db/placement_store.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/input.h"
#include "tools/topoctl/view_input.h"
#include "tools/view/fabric_scene.h"
#include "tools/view/jobs.h"
#include "tools/view/render.h"

namespace topoctl {
namespace {

// The process's peak resident memory so far: loading the fabric and
// Graphviz's layout are most of it.
double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024;  // KiB on Linux
}

struct DrawOptions {
  FabricInput input;
  std::vector<uint32_t> jobs;
  std::vector<uint32_t> running;
  bool load = false, health = false, json = false;
  int pod = -1;
  std::string leaf;
  int expand_hosts = 48;
  std::string output;
};

void add_draw_options(CLI::App& cmd, DrawOptions& o) {
  add_input_options(cmd, o.input);
  cmd.add_option("--job", o.jobs, "draw this job's ring over the fabric (its placement record); repeatable");
  cmd.add_option("--running", o.running,
                 "the jobs running now (e.g. from `squeue -h -o %A`); default: every job whose newest placement "
                 "is on the drawn snapshot (the database keeps no job ends)")
      ->delimiter(',');
  cmd.add_flag("--load", o.load, "colour cables by the running jobs' traffic (comm_model load of their profiles)");
  cmd.add_flag("--health", o.health, "label each degraded or down cable bundle with its count");
  cmd.add_option("--pod", o.pod, "zoom into one pod");
  cmd.add_option("--leaf", o.leaf, "zoom into one leaf (by switch name): its hosts one by one and its uplinks");
  cmd.add_option("--expand-hosts", o.expand_hosts,
                 "draw hosts one by one when at most this many are shown, else one box per leaf")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("-o,--output", o.output, "the picture to write: FILE.svg or FILE.png")->required();
  cmd.add_flag("--json", o.json, "print what was drawn as JSON");
}

// The running jobs to draw: their placement records on the snapshot, none on a synthetic fabric.
topo::view::JobsOnFabric jobs_to_draw(const DrawOptions& o, const LoadedFabric& loaded) {
  std::vector<topo::PlacementRecord> records =
      loaded.snapshot ? running_records(o.input.db_path, *loaded.snapshot, o.running, o.jobs)
                      : std::vector<topo::PlacementRecord>{};
  if (!loaded.snapshot && !o.jobs.empty())
    throw std::invalid_argument("--job reads placement records: draw a stored snapshot, not --synthetic");
  return topo::view::jobs_on_fabric(loaded.fabric, records, o.load);
}

// What to draw; takes the jobs' cable loads.
topo::view::FabricPicture picture_of(const DrawOptions& o, const LoadedFabric& loaded, topo::view::JobsOnFabric& jobs) {
  const topo::Fabric& fabric = loaded.fabric;
  topo::view::FabricPicture picture;
  picture.title = loaded.snapshot
                      ? fmt::format("snapshot {} ({}), {}", *loaded.snapshot, loaded.taken_at, fabric.source())
                      : fabric.source();
  picture.expand_hosts = o.expand_hosts;
  picture.health_labels = o.health;
  picture.cable_gbps = std::move(jobs.cable_gbps);
  picture.jobs = jobs.jobs;
  for (uint32_t id : o.jobs) picture.rings.push_back(std::to_string(id));
  if (o.pod >= 0) picture.pod = o.pod;
  if (!o.leaf.empty()) picture.leaf = find_leaf(fabric, o.leaf);
  return picture;
}

struct Drawn {
  topo::view::Format format = topo::view::Format::Svg;
  size_t bytes = 0;
  size_t boxes = 0, lines = 0, jobs = 0;
  std::vector<std::string> rings, skipped;
  double seconds = 0;
};

void print_drawn(const DrawOptions& o, const LoadedFabric& loaded, const Drawn& d) {
  if (o.json) {
    nlohmann::json out = {{"output", o.output},   {"format", d.format == topo::view::Format::Svg ? "svg" : "png"},
                          {"bytes", d.bytes},     {"boxes", d.boxes},
                          {"lines", d.lines},     {"jobs", d.jobs},
                          {"rings", d.rings},     {"skipped", d.skipped},
                          {"seconds", d.seconds}, {"peak_rss_mb", peak_rss_mb()}};
    if (loaded.snapshot) out["snapshot"] = *loaded.snapshot;
    std::cout << out.dump(2) << "\n";
    return;
  }
  fmt::print("{} ({} boxes, {} lines, {} running jobs, {:.2f} s, peak {:.0f} MB resident)\n", o.output, d.boxes,
             d.lines, d.jobs, d.seconds, peak_rss_mb());
  for (const std::string& s : d.skipped) fmt::print(stderr, "topoctl draw: {}\n", s);
}

}  // namespace

Run add_draw(CLI::App& app) {
  auto opts = std::make_shared<DrawOptions>();
  CLI::App* cmd = app.add_subcommand("draw", "draw the fabric, its load, faults and a job's ring as SVG or PNG");
  add_draw_options(*cmd, *opts);
  return [opts] {
    const DrawOptions& o = *opts;
    Drawn drawn;
    drawn.format = topo::view::format_of_path(o.output);
    auto start = std::chrono::steady_clock::now();
    require_database(o.input);
    LoadedFabric loaded = load(o.input);
    topo::view::JobsOnFabric jobs = jobs_to_draw(o, loaded);
    topo::view::FabricPicture picture = picture_of(o, loaded, jobs);
    topo::view::Scene scene = topo::view::fabric_scene(loaded.fabric, picture);
    for (const std::string& s : jobs.skipped) scene.legend.push_back(s);
    std::string data = topo::view::render(scene, drawn.format);
    write_atomically(o.output, data);
    drawn.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    drawn.bytes = data.size();
    drawn.boxes = scene.boxes.size();
    drawn.lines = scene.lines.size();
    drawn.jobs = picture.jobs.size();
    drawn.rings = std::move(picture.rings);
    drawn.skipped = std::move(jobs.skipped);
    print_drawn(o, loaded, drawn);
    return kOk;
  };
}

}  // namespace topoctl
