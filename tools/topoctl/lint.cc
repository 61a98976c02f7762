// topoctl lint: degraded and inactive links, missing or unequal uplinks,
// unreachable hosts. Exits 1 when it finds any, so cron and CI can alert.
#include <iostream>

#include <fmt/format.h>

#include "tools/topoctl/command.h"
#include "tools/topoctl/fabric_report.h"

namespace topoctl {

Run add_lint(CLI::App& app) {
  struct Options {
    FabricInput input;
    bool json = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("lint", "list the fabric's faults; exit 1 when there are any");
  add_input_options(*cmd, opts->input);
  cmd->add_flag("--json", opts->json, "print JSON for scripts");
  return [opts] {
    LoadedFabric loaded = load(opts->input);
    const topo::Fabric& f = loaded.fabric;
    if (opts->json) {
      nlohmann::json out = {{"faults", faults_json(f)}, {"count", f.faults().size()}, {"source", f.source()}};
      if (loaded.snapshot) out["snapshot"] = *loaded.snapshot;
      std::cout << out.dump(2) << "\n";
    } else if (f.faults().empty()) {
      std::cout << "no faults\n";
    } else {
      print_faults(std::cout, f);
      fmt::print("{} fault{}\n", f.faults().size(), f.faults().size() == 1 ? "" : "s");
    }
    return f.faults().empty() ? kOk : kFindings;
  };
}

}  // namespace topoctl
