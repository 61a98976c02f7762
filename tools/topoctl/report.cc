// topoctl report: the benchmark's markdown report, its slowdown CDF picture
// and a picture of each run's fabric with its largest jobs' rings, from the
// results files `topoctl simulate --json` (or the real cluster's replay)
// wrote. Pictures are drawn by tools/view, like `topoctl draw`.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "db/snapshot_store.h"
#include "fabric/synthetic.h"
#include "simulation/report.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/outcome_json.h"
#include "tools/view/cdf_scene.h"
#include "tools/view/fabric_scene.h"
#include "tools/view/render.h"

namespace topoctl {
namespace {

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(fmt::format("{}: cannot write: {}", path.string(), std::strerror(errno)));
  out << text;
  out.close();
  if (!out) throw std::runtime_error(fmt::format("{}: writing failed", path.string()));
}

// Rings drawn on a run's fabric picture: its largest multi-host jobs.
constexpr size_t kRingsDrawn = 3;

// The fabric a run names: a synthetic spec, or "DB snapshot REF" as
// simulate writes it for a stored one. Throws naming what is missing.
topo::Fabric run_fabric(const std::string& fabric) {
  size_t at = fabric.rfind(" snapshot ");
  if (at != std::string::npos) {
    std::string db = fabric.substr(0, at), ref = fabric.substr(at + 10);
    if (!std::filesystem::is_regular_file(db)) throw std::runtime_error(fmt::format("database {} is not here", db));
    topo::SnapshotStore store(db);
    return store.load(store.resolve(ref));
  }
  return topo::make_synthetic(fabric);
}

// The run's fabric with the hosts of one policy's jobs (topo-aware's when
// it ran) and the rings of its largest jobs.
std::string fabric_picture(const topo::Comparison& run) {
  topo::Fabric fabric = run_fabric(run.fabric);
  const topo::PolicyOutcome* policy = run.policies.empty() ? nullptr : &run.policies.front();
  for (const topo::PolicyOutcome& p : run.policies)
    if (p.policy == "topo-aware") policy = &p;
  topo::view::FabricPicture picture;
  picture.title = fmt::format("{}: {}", run.title.empty() ? "replay" : run.title, run.fabric);
  std::vector<const topo::JobOutcome*> largest;
  if (policy) {
    for (const topo::JobOutcome& job : policy->jobs) {
      topo::view::JobOnFabric on{job.id, {}};
      for (const std::string& host : job.ring)
        if (std::optional<topo::NodeId> h = fabric.find_host(host)) on.ring.push_back(*h);
      if (on.ring.size() > 1) largest.push_back(&job);
      picture.jobs.push_back(std::move(on));
    }
    std::stable_sort(largest.begin(), largest.end(),
                     [](const topo::JobOutcome* a, const topo::JobOutcome* b) { return a->hosts > b->hosts; });
    if (largest.size() > kRingsDrawn) largest.resize(kRingsDrawn);
    for (const topo::JobOutcome* job : largest) picture.rings.push_back(job->id);
  }
  topo::view::Scene scene = topo::view::fabric_scene(fabric, picture);
  scene.legend.push_back(policy ? fmt::format("hosts shaded: every job {} ran over the whole replay; rings: its {} "
                                              "largest",
                                              policy->policy, largest.size())
                                : "no policy in this run");
  return topo::view::render(scene, topo::view::Format::Svg);
}

struct ReportOptions {
  std::vector<std::string> results;
  std::string out_dir;
  std::string picture = "slowdown-cdf.svg";
  bool json = false;
  bool no_fabric = false;
};

void add_report_options(CLI::App& cmd, ReportOptions& o) {
  cmd.add_option("--results", o.results,
                 "a results JSON file (a comparison of policies on one trace and fabric); repeat for several runs")
      ->required();
  cmd.add_option("--out", o.out_dir, "directory to write report.md and the picture into (created if missing)")
      ->required();
  cmd.add_option("--picture", o.picture, "file name of the SVG picture inside --out")->capture_default_str();
  cmd.add_flag("--no-fabric", o.no_fabric,
               "leave out the pictures of each run's fabric (fabric-N.svg) with its largest jobs' rings");
  cmd.add_flag("--json", o.json, "print the written paths as JSON");
  cmd.footer(
      "Each results file is {\"title\", \"fabric\", \"trace\", \"policies\": {name: outcome}}, as "
      "`topoctl simulate --json` writes it.");
}

std::filesystem::path picture_name(const std::string& picture) {
  std::filesystem::path name(picture);
  if (picture.empty() || name.has_parent_path() || name.extension() != ".svg")
    throw std::invalid_argument(
        fmt::format("--picture '{}': expected a file name ending in .svg, without a directory", picture));
  return name;
}

std::filesystem::path created_directory(const std::string& path) {
  std::filesystem::path dir(path);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot create the directory: {}", dir.string(), ec.message()));
  return dir;
}

// Each run's fabric-N.svg in `dir`, linked from `markdown` (or why not);
// returns the pictures written.
std::vector<std::string> write_fabric_pictures(const std::vector<topo::Comparison>& runs,
                                               const std::filesystem::path& dir, std::string& markdown) {
  std::vector<std::string> fabrics;
  markdown += "## The fabrics and their jobs\n\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    std::string name = fmt::format("fabric-{}.svg", i + 1);
    try {
      write_file(dir / name, fabric_picture(runs[i]));
      markdown += fmt::format("![{}]({})\n\n", runs[i].title.empty() ? "replay" : runs[i].title, name);
      fabrics.push_back((dir / name).string());
    } catch (const std::exception& e) {
      markdown += fmt::format("No fabric picture for run {} ({}): {}\n\n", i + 1, runs[i].fabric, e.what());
    }
  }
  return fabrics;
}

}  // namespace

Run add_report(CLI::App& app) {
  auto opts = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "write a markdown report (tables, ratios against topology/tree, goals) and a slowdown CDF picture");
  add_report_options(*cmd, *opts);
  return [opts] {
    const ReportOptions& o = *opts;
    const std::filesystem::path name = picture_name(o.picture);
    std::vector<topo::Comparison> runs;
    for (const std::string& file : o.results) runs.push_back(read_comparison_file(file));

    const std::filesystem::path dir = created_directory(o.out_dir);
    const std::filesystem::path report = dir / "report.md", picture = dir / name;
    std::string markdown = topo::report_markdown(runs, o.picture);
    write_file(picture,
               topo::view::render(topo::view::slowdown_cdf_scene(topo::slowdown_cdfs(runs)), topo::view::Format::Svg));
    std::vector<std::string> fabrics;
    if (!o.no_fabric) fabrics = write_fabric_pictures(runs, dir, markdown);
    write_file(report, markdown);
    if (o.json) {
      std::cout
          << nlohmann::json{{"report", report.string()}, {"picture", picture.string()}, {"fabrics", fabrics}}.dump(2)
          << "\n";
    } else {
      fmt::print("{}\n{}\n", report.string(), picture.string());
      for (const std::string& f : fabrics) fmt::print("{}\n", f);
    }
    return kOk;
  };
}

}  // namespace topoctl
