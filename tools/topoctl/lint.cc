// topoctl lint: degraded and inactive links, missing or unequal uplinks,
// unreachable hosts, and what is wrong with the routing (holes and loops in
// the tables, uplinks carrying more than their share of destinations,
// routes through degraded cables, destinations behind a single spine);
// with --lldp DIR, what the LLDP tables disagree on (lldp.h).
// Exits 1 when it finds any, so cron and CI can alert.
#include <iostream>

#include <fmt/format.h>

#include "tools/topoctl/command.h"
#include "tools/topoctl/fabric_report.h"
#include "tools/topoctl/lldp_input.h"
#include "topology/routing_check.h"

namespace topoctl {

Run add_lint(CLI::App& app) {
  struct Options {
    FabricInput input;
    std::string routing, lldp;
    std::vector<std::string> link_speeds;
    bool json = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("lint", "list the fabric's faults; exit 1 when there are any");
  add_input_options(*cmd, opts->input);
  cmd->add_option("--routing", opts->routing,
                  "lint this routing instead of the snapshot's: adaptive, static or static:ENGINE (emulated)");
  cmd->add_option("--lldp", opts->lldp,
                  "lint the fabric of a directory of lldpcli JSON and CSV files (as discover --lldp) instead of a "
                  "snapshot, with what the LLDP tables disagree on")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--link-speed", opts->link_speeds, "with --lldp: SYSTEM:PORT=RATE, as discover --link-speed");
  cmd->add_flag("--json", opts->json, "print JSON for scripts");
  return [opts] {
    std::vector<topo::LldpFinding> lldp_findings;
    LoadedFabric loaded = [&] {
      if (opts->lldp.empty()) return load(opts->input);
      topo::LldpOptions o;
      o.port_speeds = parse_link_speeds(opts->link_speeds);
      topo::LldpFabric r = topo::read_lldp_dir(opts->lldp, o);
      lldp_findings = std::move(r.findings);
      return LoadedFabric{std::move(r.fabric), std::nullopt, {}};
    }();
    topo::Fabric& f = loaded.fabric;
    if (!opts->routing.empty())
      apply_routing(f, opts->routing,
                    loaded.snapshot ? fmt::format("snapshot {}", *loaded.snapshot) : f.source());
    std::vector<topo::RoutingFinding> findings = topo::check_routing(f);
    size_t count = f.faults().size() + findings.size() + lldp_findings.size();
    if (opts->json) {
      nlohmann::json routing = nlohmann::json::array();
      for (const topo::RoutingFinding& r : findings)
        routing.push_back({{"kind", topo::name(r.kind)}, {"subject", r.subject}, {"detail", r.detail}});
      nlohmann::json out = {{"faults", faults_json(f)},
                            {"routing", topo::routing_name(f.routing())},
                            {"routing_findings", std::move(routing)},
                            {"lldp_findings", lldp_findings_json(lldp_findings)},
                            {"count", count},
                            {"source", f.source()}};
      if (loaded.snapshot) out["snapshot"] = *loaded.snapshot;
      std::cout << out.dump(2) << "\n";
    } else if (count == 0) {
      fmt::print("no faults (routing {})\n", topo::routing_name(f.routing()));
    } else {
      print_faults(std::cout, f);
      print_lldp_findings(std::cout, lldp_findings);
      for (const topo::RoutingFinding& r : findings)
        fmt::print("{:<17} {:<32} {}\n", topo::name(r.kind), r.subject, r.detail);
      if (!lldp_findings.empty()) fmt::print("{} LLDP finding{}\n", lldp_findings.size(), lldp_findings.size() == 1 ? "" : "s");
      fmt::print("{} fault{}, {} routing finding{} (routing {})\n", f.faults().size(),
                 f.faults().size() == 1 ? "" : "s", findings.size(), findings.size() == 1 ? "" : "s",
                 topo::routing_name(f.routing()));
    }
    return count == 0 ? kOk : kFindings;
  };
}

}  // namespace topoctl
