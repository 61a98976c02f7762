// topoctl diff A B: what changed between two snapshots, routes included
// (per switch, the destinations that leave by another port). Exits 1 when
// something did, like diff(1).
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "db/snapshot_store.h"
#include "fabric/diff.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/input.h"

namespace topoctl {
namespace {

nlohmann::json port_json(int port) { return port < 0 ? nlohmann::json(nullptr) : nlohmann::json(port); }

nlohmann::json change_json(const topo::FabricChange& c) {
  nlohmann::json j = {{"kind", topo::name(c.kind)}, {"subject", c.subject}, {"detail", c.detail}};
  if (c.kind == topo::ChangeKind::RoutesChanged) {
    nlohmann::json routes = nlohmann::json::array();
    for (const topo::RouteMove& m : c.routes)
      routes.push_back({{"destination", m.destination},
                        {"before_port", port_json(m.before_port)},
                        {"after_port", port_json(m.after_port)}});
    j["routes"] = std::move(routes);
  }
  return j;
}

}  // namespace

Run add_diff(CLI::App& app) {
  struct Options {
    std::string db_path = default_db_path();
    std::string before, after;
    bool json = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "diff", "what changed between two snapshots (link down, speed dropped, hosts, routing and routes)");
  add_db_option(*cmd, opts->db_path);
  cmd->add_option("before", opts->before, "earlier snapshot id (or 'latest'; -2 is the one before the latest)")
      ->required();
  cmd->add_option("after", opts->after, "later snapshot id")->required();
  cmd->add_flag("--json", opts->json, "print JSON for scripts");
  return [opts] {
    topo::SnapshotStore store(opts->db_path);
    int64_t a = store.resolve(opts->before), b = store.resolve(opts->after);
    std::vector<topo::FabricChange> changes = topo::diff(store.load(a), store.load(b));
    if (opts->json) {
      nlohmann::json list = nlohmann::json::array();
      for (const topo::FabricChange& c : changes) list.push_back(change_json(c));
      std::cout << nlohmann::json{{"before", a}, {"after", b}, {"changes", list}}.dump(2) << "\n";
    } else if (changes.empty()) {
      fmt::print("snapshots {} and {} describe the same fabric\n", a, b);
    } else {
      for (const topo::FabricChange& c : changes)
        fmt::print("{:<18} {:<32} {}\n", topo::name(c.kind), c.subject, c.detail);
    }
    return changes.empty() ? kOk : kFindings;
  };
}

}  // namespace topoctl
