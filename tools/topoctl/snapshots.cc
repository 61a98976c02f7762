// topoctl snapshots: the stored snapshots, newest last.
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "db/snapshot_store.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/input.h"

namespace topoctl {

Run add_snapshots(CLI::App& app) {
  struct Options {
    std::string db_path = default_db_path();
    bool json = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("snapshots", "list the stored fabric snapshots");
  add_db_option(*cmd, opts->db_path);
  cmd->add_flag("--json", opts->json, "print JSON for scripts");
  return [opts] {
    topo::SnapshotStore store(opts->db_path);
    std::vector<topo::SnapshotInfo> all = store.list();
    if (opts->json) {
      nlohmann::json list = nlohmann::json::array();
      for (const topo::SnapshotInfo& s : all)
        list.push_back({{"id", s.id},
                        {"taken_at", s.taken_at},
                        {"source", s.source},
                        {"hosts", s.summary.hosts},
                        {"faults", s.faults},
                        {"switches", s.switches},
                        {"links", s.summary.links}});
      std::cout << list.dump(2) << "\n";
      return kOk;
    }
    fmt::print("{:>4}  {:<20}  {:>6} {:>8} {:>6}  {}\n", "id", "taken", "hosts", "switches", "links", "source");
    for (const topo::SnapshotInfo& s : all)
      fmt::print("{:>4}  {:<20}  {:>6} {:>8} {:>6}  {}\n", s.id, s.taken_at, s.summary.hosts, s.switches,
                 s.summary.links, s.source);
    return kOk;
  };
}

}  // namespace topoctl
