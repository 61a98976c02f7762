// topoctl: the admin and user command line of topo-aware.
#include <iostream>
#include <map>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "tools/topoctl/command.h"

namespace {

using Runs = std::map<CLI::App*, topoctl::Run>;

// Every subcommand, each with what it runs.
Runs add_commands(CLI::App& app) {
  Runs runs;
  for (topoctl::Run (*adder)(CLI::App&) :
       {topoctl::add_discover, topoctl::add_show, topoctl::add_lint, topoctl::add_export, topoctl::add_diff,
        topoctl::add_path, topoctl::add_snapshots, topoctl::add_estimate, topoctl::add_place, topoctl::add_ring,
        topoctl::add_job, topoctl::add_simulate, topoctl::add_score, topoctl::add_report, topoctl::add_health,
        topoctl::add_baseline, topoctl::add_draw, topoctl::add_serve, topoctl::add_metrics, topoctl::add_route}) {
    size_t before = app.get_subcommands({}).size();
    topoctl::Run run = adder(app);
    runs[app.get_subcommands({}).at(before)] = std::move(run);
  }
  return runs;
}

// CLI11 takes a misspelt command for a stray argument, and with --help
// beside it prints the main help and exits 0: a script could not tell a
// typo from success. The first word that is not an option names the
// command (the main level takes no option with a value). False, with the
// error printed, when it names none.
bool names_a_command(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view word = argv[i];
    if (!word.empty() && word.front() == '-') continue;
    std::vector<std::string> names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      names.push_back(sub->get_name());
      known = known || sub->check_name(std::string(word));
    }
    if (!known)
      std::cerr << fmt::format("topoctl: unknown command '{}'; the commands are {} (topoctl --help)\n", word,
                               fmt::join(names, ", "));
    return known;
  }
  return true;
}

// Runs the parsed subcommand; an exception is its error, named.
int run_parsed(const Runs& runs) {
  for (const auto& [sub, run] : runs) {
    if (!sub->parsed()) continue;
    try {
      return run();
    } catch (const std::exception& e) {
      std::cerr << "topoctl " << sub->get_name() << ": " << e.what() << "\n";
      return topoctl::kError;
    }
  }
  return topoctl::kError;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"topoctl: discover, inspect and lint the fabric of a GPU cluster; see where jobs land"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "topoctl 0.1.0");
  app.footer(
      "Exit codes: 0 success, 1 findings (lint faults, diff changes), 2 error.\n"
      "The database defaults to $TOPO_DB, else /var/lib/topo-aware/topo.db.");
  const Runs runs = add_commands(app);
  if (!names_a_command(app, argc, argv)) return topoctl::kError;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? topoctl::kOk : topoctl::kError;
  }
  return run_parsed(runs);
}
