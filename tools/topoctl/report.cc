// topoctl report: the benchmark's markdown report and slowdown CDF picture
// from the results files `topoctl simulate --json` (or the real cluster's
// replay) wrote.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "simulation/report.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/outcome_json.h"

namespace topoctl {
namespace {

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(fmt::format("{}: cannot write: {}", path.string(), std::strerror(errno)));
  out << text;
  out.close();
  if (!out) throw std::runtime_error(fmt::format("{}: writing failed", path.string()));
}

}  // namespace

Run add_report(CLI::App& app) {
  struct Options {
    std::vector<std::string> results;
    std::string out_dir;
    std::string picture = "slowdown-cdf.svg";
    bool json = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "report", "write a markdown report (tables, ratios against topology/tree, goals) and a slowdown CDF picture");
  cmd->add_option("--results", opts->results,
                  "a results JSON file (a comparison of policies on one trace and fabric); repeat for several runs")
      ->required();
  cmd->add_option("--out", opts->out_dir, "directory to write report.md and the picture into (created if missing)")
      ->required();
  cmd->add_option("--picture", opts->picture, "file name of the SVG picture inside --out")->capture_default_str();
  cmd->add_flag("--json", opts->json, "print the written paths as JSON");
  cmd->footer("Each results file is {\"title\", \"fabric\", \"trace\", \"policies\": {name: outcome}}, as "
              "`topoctl simulate --json` writes it.");
  return [opts] {
    std::filesystem::path picture_name(opts->picture);
    if (opts->picture.empty() || picture_name.has_parent_path() || picture_name.extension() != ".svg")
      throw std::invalid_argument(fmt::format("--picture '{}': expected a file name ending in .svg, without a directory",
                                              opts->picture));
    std::vector<topo::Comparison> runs;
    for (const std::string& file : opts->results) runs.push_back(read_comparison_file(file));

    std::filesystem::path dir(opts->out_dir);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw std::runtime_error(fmt::format("{}: cannot create the directory: {}", dir.string(), ec.message()));
    std::filesystem::path report = dir / "report.md", picture = dir / picture_name;
    write_file(report, topo::report_markdown(runs, opts->picture));
    write_file(picture, topo::slowdown_cdf_svg(runs));
    if (opts->json) {
      std::cout << nlohmann::json{{"report", report.string()}, {"picture", picture.string()}}.dump(2) << "\n";
    } else {
      fmt::print("{}\n{}\n", report.string(), picture.string());
    }
    return kOk;
  };
}

}  // namespace topoctl
