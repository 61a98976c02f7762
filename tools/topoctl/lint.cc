// topoctl lint: degraded and inactive links, missing or unequal uplinks,
// unreachable hosts, and what is wrong with the routing (holes and loops in
// the tables, uplinks carrying more than their share of destinations,
// routes through degraded cables, destinations behind a single spine);
// with --lldp DIR, what the LLDP tables disagree on (lldp.h).
// Exits 1 when it finds any, so cron and CI can alert.
#include <iostream>

#include <fmt/format.h>

#include "routing/routing_check.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/fabric_report.h"
#include "tools/topoctl/lldp_input.h"

namespace topoctl {

namespace {

struct LintOptions {
  FabricInput input;
  std::string routing, lldp;
  std::vector<std::string> link_speeds;
  bool json = false;
};

void add_lint_options(CLI::App& cmd, LintOptions& o) {
  add_input_options(cmd, o.input);
  add_routing_option(cmd, o.routing);
  cmd.add_option("--lldp", o.lldp,
                 "lint the fabric of a directory of lldpcli JSON and CSV files (as discover --lldp) instead of a "
                 "snapshot, with what the LLDP tables disagree on")
      ->check(CLI::ExistingDirectory);
  cmd.add_option("--link-speed", o.link_speeds, "with --lldp: SYSTEM:PORT=RATE, as discover --link-speed");
  cmd.add_flag("--json", o.json, "print JSON for scripts");
}

// The snapshot, or with --lldp the fabric LLDP describes and its findings.
LoadedFabric linted_fabric(const LintOptions& o, std::vector<topo::LldpFinding>& lldp_findings) {
  if (o.lldp.empty()) return load(o.input);
  topo::LldpOptions lldp;
  lldp.port_speeds = parse_link_speeds(o.link_speeds);
  topo::LldpFabric r = topo::read_lldp_dir(o.lldp, lldp);
  if (!r.out_of_band.empty() && !o.json) fmt::print("note: {}\n", out_of_band_note(r.out_of_band));
  lldp_findings = std::move(r.findings);
  return LoadedFabric{std::move(r.fabric), std::nullopt, {}};
}

struct Findings {
  std::vector<topo::RoutingFinding> routing;
  std::vector<topo::LldpFinding> lldp;
  size_t count(const topo::Fabric& f) const { return f.faults().size() + routing.size() + lldp.size(); }
};

nlohmann::json lint_json(const LoadedFabric& loaded, const Findings& found) {
  const topo::Fabric& f = loaded.fabric;
  nlohmann::json routing = nlohmann::json::array();
  for (const topo::RoutingFinding& r : found.routing)
    routing.push_back({{"kind", topo::name(r.kind)}, {"subject", r.subject}, {"detail", r.detail}});
  nlohmann::json out = {{"faults", faults_json(f)},
                        {"routing", topo::routing_name(f.routing())},
                        {"routing_findings", std::move(routing)},
                        {"lldp_findings", lldp_findings_json(found.lldp)},
                        {"count", found.count(f)},
                        {"source", f.source()}};
  if (loaded.snapshot) out["snapshot"] = *loaded.snapshot;
  return out;
}

void print_lint(const topo::Fabric& f, const Findings& found) {
  if (found.count(f) == 0) {
    fmt::print("no faults (routing {})\n", topo::routing_name(f.routing()));
    return;
  }
  print_faults(std::cout, f);
  print_lldp_findings(std::cout, found.lldp);
  for (const topo::RoutingFinding& r : found.routing)
    fmt::print("{:<17} {:<32} {}\n", topo::name(r.kind), r.subject, r.detail);
  if (!found.lldp.empty()) fmt::print("{} LLDP finding{}\n", found.lldp.size(), found.lldp.size() == 1 ? "" : "s");
  fmt::print("{} fault{}, {} routing finding{} (routing {})\n", f.faults().size(), f.faults().size() == 1 ? "" : "s",
             found.routing.size(), found.routing.size() == 1 ? "" : "s", topo::routing_name(f.routing()));
}

}  // namespace

Run add_lint(CLI::App& app) {
  auto opts = std::make_shared<LintOptions>();
  CLI::App* cmd = app.add_subcommand("lint", "list the fabric's faults; exit 1 when there are any");
  add_lint_options(*cmd, *opts);
  return [opts] {
    const LintOptions& o = *opts;
    Findings found;
    LoadedFabric loaded = linted_fabric(o, found.lldp);
    topo::Fabric& f = loaded.fabric;
    if (!o.routing.empty())
      apply_routing(f, o.routing, loaded.snapshot ? fmt::format("snapshot {}", *loaded.snapshot) : f.source());
    found.routing = topo::check_routing(f);
    if (o.json)
      std::cout << lint_json(loaded, found).dump(2) << "\n";
    else
      print_lint(f, found);
    return found.count(f) == 0 ? kOk : kFindings;
  };
}

}  // namespace topoctl
