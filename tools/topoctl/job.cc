// topoctl job JOBID: where the Slurm plugin placed a job, in which ring
// order, and why (or why it fell back to cons_tres's choice, and why the
// engine held it back first).
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/hostlist.h"
#include "db/placement_json.h"
#include "db/placement_store.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/input.h"

namespace topoctl {

Run add_job(CLI::App& app) {
  struct Options {
    std::string db_path = default_db_path();
    uint32_t job_id = 0;
    bool history = false;
    bool json = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("job", "where the Slurm plugin placed a job, its ring order and why");
  add_db_option(*cmd, opts->db_path);
  cmd->add_option("JOBID", opts->job_id, "Slurm job id")->required()->check(CLI::PositiveNumber);
  cmd->add_flag("--history", opts->history, "every placement of the job (a requeued job has several)");
  cmd->add_flag("--json", opts->json, "print JSON for scripts");
  return [opts] {
    topo::PlacementStore store(opts->db_path);
    std::vector<topo::PlacementRecord> records;
    if (opts->history) {
      records = store.history(opts->job_id);
    } else if (auto r = store.latest_for_job(opts->job_id)) {
      records.push_back(*r);
    }
    if (records.empty()) {
      fmt::print(stderr, "topoctl job: no placement of job {} in {}\n", opts->job_id, opts->db_path);
      return kFindings;
    }
    if (opts->json) {
      nlohmann::json out = nlohmann::json::array();
      for (const topo::PlacementRecord& r : records) {
        nlohmann::json one = topo::placement_record_fields(r);
        one["snapshot"] = topo::snapshot_id_json(r);
        out.push_back(std::move(one));
      }
      std::cout << (opts->history ? out : out[0]).dump(2) << "\n";
      return kOk;
    }
    for (const topo::PlacementRecord& r : records) {
      fmt::print("job {}   placed {}   snapshot {}   profile {}\n", r.job_id, r.placed_at,
                 r.snapshot_id ? std::to_string(*r.snapshot_id) : "-", r.profile);
      fmt::print("hosts      {} ({})\n", topo::compress_hostlist(r.hosts), r.hosts.size());
      fmt::print("ring order {}\n", fmt::join(r.ring_order, ","));
      if (r.fallback) fmt::print("fallback   cons_tres's choice: {}\n", r.fallback_why);
      if (!r.deferred_why.empty()) fmt::print("held back  {}\n", r.deferred_why);
      if (r.ideal_s > 0)
        fmt::print("estimate   {:.3f} ms   ideal {:.3f} ms   slowdown {:.3f}x\n", r.estimate_s * 1e3, r.ideal_s * 1e3,
                   r.estimate_s / r.ideal_s);
      if (!r.reasons.empty()) {
        fmt::print("reasons:\n");
        for (const std::string& reason : r.reasons) fmt::print("  - {}\n", reason);
      }
      if (records.size() > 1) fmt::print("\n");
    }
    return kOk;
  };
}

}  // namespace topoctl
