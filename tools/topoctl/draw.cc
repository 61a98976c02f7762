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

}  // namespace

Run add_draw(CLI::App& app) {
  struct Options {
    FabricInput input;
    std::vector<uint32_t> jobs;
    std::vector<uint32_t> running;
    bool load = false, health = false, json = false;
    int pod = -1;
    std::string leaf;
    int expand_hosts = 48;
    std::string output;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("draw", "draw the fabric, its load, faults and a job's ring as SVG or PNG");
  add_input_options(*cmd, opts->input);
  cmd->add_option("--job", opts->jobs, "draw this job's ring over the fabric (its placement record); repeatable");
  cmd->add_option("--running", opts->running,
                  "the jobs running now (e.g. from `squeue -h -o %A`); default: every job whose newest placement "
                  "is on the drawn snapshot (the database keeps no job ends)")
      ->delimiter(',');
  cmd->add_flag("--load", opts->load, "colour cables by the running jobs' traffic (comm_model load of their profiles)");
  cmd->add_flag("--health", opts->health, "label each degraded or down cable bundle with its count");
  cmd->add_option("--pod", opts->pod, "zoom into one pod");
  cmd->add_option("--leaf", opts->leaf, "zoom into one leaf (by switch name): its hosts one by one and its uplinks");
  cmd->add_option("--expand-hosts", opts->expand_hosts,
                  "draw hosts one by one when at most this many are shown, else one box per leaf")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-o,--output", opts->output, "the picture to write: FILE.svg or FILE.png")->required();
  cmd->add_flag("--json", opts->json, "print what was drawn as JSON");
  return [opts] {
    topo::view::Format format = topo::view::format_of_path(opts->output);
    auto start = std::chrono::steady_clock::now();
    require_database(opts->input);
    LoadedFabric loaded = load(opts->input);
    const topo::Fabric& fabric = loaded.fabric;

    std::vector<topo::PlacementRecord> records =
        loaded.snapshot ? running_records(opts->input.db_path, *loaded.snapshot, opts->running, opts->jobs)
                        : std::vector<topo::PlacementRecord>{};
    if (!loaded.snapshot && !opts->jobs.empty())
      throw std::invalid_argument("--job reads placement records: draw a stored snapshot, not --synthetic");
    topo::view::JobsOnFabric jobs = topo::view::jobs_on_fabric(fabric, records, opts->load);

    topo::view::FabricPicture picture;
    picture.title = loaded.snapshot ? fmt::format("snapshot {} ({}), {}", *loaded.snapshot, loaded.taken_at, fabric.source())
                                    : fabric.source();
    picture.expand_hosts = opts->expand_hosts;
    picture.health_labels = opts->health;
    picture.cable_gbps = std::move(jobs.cable_gbps);
    picture.jobs = jobs.jobs;
    for (uint32_t id : opts->jobs) picture.rings.push_back(std::to_string(id));
    if (opts->pod >= 0) picture.pod = opts->pod;
    if (!opts->leaf.empty()) picture.leaf = find_leaf(fabric, opts->leaf);

    topo::view::Scene scene = topo::view::fabric_scene(fabric, picture);
    for (const std::string& s : jobs.skipped) scene.legend.push_back(s);
    std::string data = topo::view::render(scene, format);
    write_atomically(opts->output, data);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (opts->json) {
      nlohmann::json out = {{"output", opts->output},
                            {"format", format == topo::view::Format::Svg ? "svg" : "png"},
                            {"bytes", data.size()},
                            {"boxes", scene.boxes.size()},
                            {"lines", scene.lines.size()},
                            {"jobs", picture.jobs.size()},
                            {"rings", picture.rings},
                            {"skipped", jobs.skipped},
                            {"seconds", seconds},
                            {"peak_rss_mb", peak_rss_mb()}};
      if (loaded.snapshot) out["snapshot"] = *loaded.snapshot;
      std::cout << out.dump(2) << "\n";
    } else {
      fmt::print("{} ({} boxes, {} lines, {} running jobs, {:.2f} s, peak {:.0f} MB resident)\n", opts->output,
                 scene.boxes.size(), scene.lines.size(), picture.jobs.size(), seconds, peak_rss_mb());
      for (const std::string& s : jobs.skipped) fmt::print(stderr, "topoctl draw: {}\n", s);
    }
    return kOk;
  };
}

}  // namespace topoctl
