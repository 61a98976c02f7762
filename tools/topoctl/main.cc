// topoctl: the admin and user command line of topo-aware.
#include <iostream>
#include <map>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "tools/topoctl/command.h"

int main(int argc, char** argv) {
  CLI::App app{"topoctl: discover, inspect and lint the fabric of a GPU cluster; see where jobs land"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "topoctl 0.1.0");
  app.footer(
      "Exit codes: 0 success, 1 findings (lint faults, diff changes), 2 error.\n"
      "The database defaults to $TOPO_DB, else /var/lib/topo-aware/topo.db.");

  std::map<CLI::App*, topoctl::Run> runs;
  auto add = [&](topoctl::Run (*adder)(CLI::App&)) {
    size_t before = app.get_subcommands({}).size();
    topoctl::Run run = adder(app);
    runs[app.get_subcommands({}).at(before)] = std::move(run);
  };
  add(topoctl::add_discover);
  add(topoctl::add_show);
  add(topoctl::add_lint);
  add(topoctl::add_export);
  add(topoctl::add_diff);
  add(topoctl::add_path);
  add(topoctl::add_snapshots);
  add(topoctl::add_estimate);
  add(topoctl::add_place);
  add(topoctl::add_ring);
  add(topoctl::add_job);
  add(topoctl::add_simulate);
  add(topoctl::add_score);
  add(topoctl::add_report);
  add(topoctl::add_health);
  add(topoctl::add_baseline);
  add(topoctl::add_draw);
  add(topoctl::add_serve);
  add(topoctl::add_metrics);

  // CLI11 takes a misspelt command for a stray argument, and with --help
  // beside it prints the main help and exits 0: a script could not tell a
  // typo from success. The first word that is not an option names the
  // command (the main level takes no option with a value).
  for (int i = 1; i < argc; ++i) {
    std::string_view word = argv[i];
    if (!word.empty() && word.front() == '-') continue;
    std::vector<std::string> names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      names.push_back(sub->get_name());
      known = known || sub->check_name(std::string(word));
    }
    if (!known) {
      std::cerr << fmt::format("topoctl: unknown command '{}'; the commands are {} (topoctl --help)\n", word,
                               fmt::join(names, ", "));
      return topoctl::kError;
    }
    break;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? topoctl::kOk : topoctl::kError;
  }
  for (auto& [sub, run] : runs) {
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
