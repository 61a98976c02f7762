// topoctl show: counts per level, oversubscription per leaf, rails, pods.
#include <iostream>

#include "tools/topoctl/command.h"
#include "tools/topoctl/fabric_report.h"

namespace topoctl {

Run add_show(CLI::App& app) {
  struct Options {
    FabricInput input;
    bool tree = false;
    bool json = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("show", "show the fabric of a snapshot: levels, leaves, rails, pods");
  add_input_options(*cmd, opts->input);
  cmd->add_flag("--tree", opts->tree, "show the switch tree: core, then each pod's spines and leaves");
  cmd->add_flag("--json", opts->json, "print JSON for scripts");
  return [opts] {
    LoadedFabric loaded = load(opts->input);
    if (opts->json) {
      std::cout << fabric_json(loaded).dump(2) << "\n";
      return kOk;
    }
    print_summary(std::cout, loaded);
    if (opts->tree) {
      std::cout << "\n";
      print_tree(std::cout, loaded.fabric);
    } else {
      print_leaves(std::cout, loaded.fabric);
    }
    print_domains(std::cout, loaded.fabric);
    return kOk;
  };
}

}  // namespace topoctl
