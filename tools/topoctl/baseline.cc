// topoctl baseline: nccl-tests runs kept per host set (import), compared
// with their first run and with the model (check), and the bisection a slow
// job needs (plan). In code the concept is the nccl baseline, apart from
// placement/slurm_policy.h (Slurm's own placements).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/hostlist.h"
#include "db/nccl_baseline_store.h"
#include "db/placement_store.h"
#include "db/snapshot_store.h"
#include "health/nccl_baseline.h"
#include "health/nccl_tests.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/input.h"

namespace topoctl {
namespace {

using json = nlohmann::json;

int import(const std::string& db, const std::string& file, const std::string& hosts_arg, int64_t job,
           const std::string& test, bool json_out) {
  topo::NcclTestsRun run = topo::read_nccl_tests_file(file);
  if (!test.empty()) run.test = test;
  topo::NcclRunRecord record;
  record.file = std::filesystem::absolute(file).string();
  if (job > 0) {
    record.job_id = job;
    auto placed = topo::PlacementStore(db).latest_for_job(static_cast<uint32_t>(job));
    if (!placed) throw std::invalid_argument(fmt::format("--job {}: no placement record for that job in {}", job, db));
    record.hosts = placed->hosts;
  } else if (!hosts_arg.empty()) {
    record.hosts = topo::expand_hostlist(hosts_arg);
  } else {
    record.hosts = run.hosts();
  }
  if (record.hosts.empty())
    throw std::invalid_argument(file +
                                ": the output names no hosts (no 'Rank ... on HOST' lines): give --hosts or --job");
  std::sort(record.hosts.begin(), record.hosts.end());
  record.hosts.erase(std::unique(record.hosts.begin(), record.hosts.end()), record.hosts.end());
  std::error_code ec;
  auto mtime = std::filesystem::last_write_time(file, ec);
  if (!ec) {
    auto sys = std::chrono::file_clock::to_sys(mtime);
    record.ran_at = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                                fmt::gmtime(std::chrono::system_clock::to_time_t(
                                    std::chrono::time_point_cast<std::chrono::system_clock::duration>(sys))));
  }
  std::string why_not = "no fabric snapshot";
  topo::SnapshotStore snapshots(db);
  if (auto latest = snapshots.latest()) {
    record.snapshot_id = *latest;
    record.model_busbw = topo::predict_busbw(snapshots.load(*latest), record.hosts, run, why_not);
  }
  record.run = run;
  int64_t id = topo::NcclBaselineStore(db).add(record);
  size_t predicted =
      std::count_if(record.model_busbw.begin(), record.model_busbw.end(), [](auto& x) { return x.has_value(); });
  if (json_out) {
    std::cout << json{{"run", id},
                      {"test", run.test},
                      {"nccl_version", run.nccl_version},
                      {"hosts", record.hosts},
                      {"ranks", run.ranks.size()},
                      {"rows", run.rows.size()},
                      {"predicted_rows", predicted}}
                     .dump(2)
              << "\n";
  } else {
    fmt::print("stored run {}: {} on {} ({} ranks, NCCL {}), {} sizes; model: {}\n", id,
               run.test.empty() ? "unnamed test" : run.test, topo::compress_hostlist(record.hosts), run.ranks.size(),
               run.nccl_version.empty() ? "?" : run.nccl_version, run.rows.size(),
               predicted ? fmt::format("{} sizes predicted", predicted) : why_not);
  }
  return kOk;
}

// The fabrics the runs were imported on, for the check's cables and diffs.
std::map<int64_t, topo::Fabric> run_snapshots(topo::SnapshotStore& store,
                                              const std::vector<topo::NcclRunRecord>& runs) {
  std::map<int64_t, topo::Fabric> out;
  for (const topo::NcclRunRecord& r : runs)
    if (r.snapshot_id && !out.contains(*r.snapshot_id)) out.emplace(*r.snapshot_id, store.load(*r.snapshot_id));
  return out;
}

json set_json(const topo::SetVerdict& v) {
  auto maybe = [](const auto& x) { return x ? json(*x) : json(nullptr); };
  return {{"test", v.test},
          {"hosts", v.hosts},
          {"newest_run", v.newest_run},
          {"baseline_run", maybe(v.baseline_run)},
          {"size", v.size},
          {"baseline_busbw", v.baseline_run ? json(v.baseline_busbw) : json(nullptr)},
          {"newest_busbw", v.newest_busbw},
          {"drop", v.baseline_busbw > 0 ? 1 - v.newest_busbw / v.baseline_busbw : 0},
          {"slower_than_baseline", v.slower_than_baseline},
          {"model_size", v.model_busbw ? json(v.model_size) : json(nullptr)},
          {"model_busbw", maybe(v.model_busbw)},
          {"measured_at_model_size", v.model_busbw ? json(v.measured_at_model_size) : json(nullptr)},
          {"model_drop",
           v.model_busbw && *v.model_busbw > 0 ? json(1 - v.measured_at_model_size / *v.model_busbw) : json(nullptr)},
          {"slower_than_model", v.slower_than_model},
          {"slow", v.slow()}};
}

void print_set(const topo::SetVerdict& v) {
  std::string base =
      v.baseline_run
          ? fmt::format("{:>12} B  baseline {:8.2f}  newest {:8.2f} GB/s ({:+.1f}%)", v.size, v.baseline_busbw,
                        v.newest_busbw, v.baseline_busbw > 0 ? 100 * (v.newest_busbw / v.baseline_busbw - 1) : 0.0)
          : std::string("one run, no baseline yet");
  std::string model =
      v.model_busbw ? fmt::format("  model {:.2f} at {} B: measured {:.2f} ({:+.1f}%){}", *v.model_busbw, v.model_size,
                                  v.measured_at_model_size,
                                  *v.model_busbw > 0 ? 100 * (v.measured_at_model_size / *v.model_busbw - 1) : 0.0,
                                  v.slower_than_model ? " below the model" : "")
                    : "";
  fmt::print("{:<5} {:<18} {:<24} {}{}\n", v.slow() ? "SLOW" : "ok", v.test, topo::compress_hostlist(v.hosts), base,
             model);
}

int check(const std::string& db, const topo::BaselineOptions& options, bool json_out) {
  std::vector<topo::NcclRunRecord> runs = topo::NcclBaselineStore(db).list();
  topo::SnapshotStore snapshots(db);
  topo::BaselineCheck c = topo::check_baselines(runs, run_snapshots(snapshots, runs), options);
  if (json_out) {
    json sets = json::array(), causes = json::array(), found = json::array();
    for (const topo::SetVerdict& v : c.sets) sets.push_back(set_json(v));
    for (const topo::LikelyCause& x : c.causes) {
      causes.push_back(x.why);
      found.push_back({{"kind", topo::name(x.kind)}, {"subject", x.subject}, {"detail", x.why}});
    }
    std::cout << json{{"threshold", options.drop},
                      {"model_threshold", options.model_drop},
                      {"model_min_bytes", options.model_min_bytes},
                      {"sets", sets},
                      {"slow", c.slow()},
                      {"likely_causes", causes},
                      {"causes", found}}
                     .dump(2)
              << "\n";
  } else {
    if (c.sets.empty())
      fmt::print("no host set has two runs, or a run the model predicted at {} B or more, to compare yet\n",
                 options.model_min_bytes);
    for (const topo::SetVerdict& v : c.sets) print_set(v);
    for (const topo::LikelyCause& x : c.causes) fmt::print("likely cause: {}\n", x.why);
    fmt::print("{} of {} host sets slow: more than {:g}% below their baseline, or {:g}% below the model\n", c.slow(),
               c.sets.size(), 100 * options.drop, 100 * options.model_drop);
  }
  return c.slow() ? kFindings : kOk;
}

// A bash script for sbatch: each round runs the test on both halves of the
// suspect hosts and keeps the slower half, so a bad host among N is found
// in ceil(log2 N) rounds.
int plan(const std::string& hosts_arg, const std::string& test, const std::string& args, int gpus) {
  std::vector<std::string> hosts = topo::expand_hostlist(hosts_arg);
  if (hosts.size() < 2) throw std::invalid_argument("--hosts: bisection needs at least 2 hosts");
  int rounds = 0;
  for (size_t n = hosts.size(); n > 1; n = (n + 1) / 2) ++rounds;
  fmt::print(R"(#!/bin/bash
# Bisection of {n} hosts for the slow one: {rounds} rounds of {test}, each on
# the two halves of the suspects; the half with the lower bus bandwidth stays
# suspect. Written by topoctl baseline plan; submit with sbatch or run inside
# an allocation of these hosts. Import each output with topoctl baseline import.
#SBATCH --nodes={n}
#SBATCH --gpus-per-node={gpus}
set -euo pipefail
suspects=({hosts})
busbw() {{  # runs the test on the given hosts, prints its average bus bandwidth
  local list; list=$(IFS=,; echo "$*")
  local out="{test}.$(echo "$list" | tr ',' '_').out"
  srun --nodes=$# --nodelist="$list" --ntasks-per-node={gpus} --gpus-per-node={gpus} {test} {args} > "$out"
  awk -F: '/Avg bus bandwidth/ {{ gsub(/ /, "", $2); print $2 }}' "$out"
}}
round=1
while [ ${{#suspects[@]}} -gt 1 ]; do
  half=$(( (${{#suspects[@]}} + 1) / 2 ))
  a=("${{suspects[@]:0:$half}}"); b=("${{suspects[@]:$half}}")
  [ ${{#b[@]}} -eq 0 ] && break
  # A single host runs no network test: pair it with a host of the other half.
  left=("${{a[@]}}"); right=("${{b[@]}}")
  [ ${{#left[@]}} -eq 1 ] && left+=("${{b[0]}}")
  [ ${{#right[@]}} -eq 1 ] && right+=("${{a[0]}}")
  bw_a=$(busbw "${{left[@]}}"); bw_b=$(busbw "${{right[@]}}")
  echo "round $round: ${{left[*]}} -> $bw_a GB/s, ${{right[*]}} -> $bw_b GB/s"
  if awk -v x="$bw_a" -v y="$bw_b" 'BEGIN {{ exit !(x <= y) }}'; then suspects=("${{a[@]}}"); else suspects=("${{b[@]}}"); fi
  round=$((round + 1))
done
echo "slow host: ${{suspects[0]}}"
)",
             fmt::arg("n", hosts.size()), fmt::arg("rounds", rounds), fmt::arg("test", test), fmt::arg("gpus", gpus),
             fmt::arg("hosts", fmt::join(hosts, " ")), fmt::arg("args", args));
  return kOk;
}

}  // namespace

Run add_baseline(CLI::App& app) {
  struct Options {
    std::string db = default_db_path();
    std::string file, hosts, test;
    int64_t job = 0;
    topo::BaselineOptions check;
    std::string args = "-b 256M -e 1G -f 2 -g 1";
    int gpus = 8;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("baseline",
                                     "nccl-tests runs per host set: import, check against the first run "
                                     "and the model, plan the bisection of a slow set");
  cmd->require_subcommand(1);
  CLI::App* imp =
      cmd->add_subcommand("import", "store one nccl-tests output with its host set and the model's figures");
  add_db_option(*imp, o->db);
  imp->add_option("file", o->file, "nccl-tests standard output")->required()->check(CLI::ExistingFile);
  auto* hosts = imp->add_option("--hosts", o->hosts, "the run's hosts (hostlist); default: those the output names");
  imp->add_option("--job", o->job, "the run's hosts are this Slurm job's (its placement record)")->excludes(hosts);
  imp->add_option("--test", o->test, "the test, when the output does not name it (all_reduce_perf, ...)");
  imp->add_flag("--json", o->json, "print JSON for scripts");
  CLI::App* chk = cmd->add_subcommand(
      "check", "compare each host set's newest run with its first and with the model; exit 1 on a drop");
  add_db_option(*chk, o->db);
  chk->add_option("--threshold", o->check.drop,
                  "a drop of bus bandwidth below the set's first run beyond this share "
                  "is a finding")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  chk->add_option("--model-threshold", o->check.model_drop,
                  "a measurement this share below the model's figure is a finding (the model is calibrated to about "
                  "5% where bandwidth decides)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  chk->add_option("--model-min-bytes", o->check.model_min_bytes,
                  "only sizes of at least this many bytes are held against the model (below, latency and protocol "
                  "choice decide)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  chk->add_flag("--json", o->json, "print JSON for scripts");
  CLI::App* pl = cmd->add_subcommand("plan", "print an sbatch script that bisects HOSTS for the slow one");
  pl->add_option("--hosts", o->hosts, "the slow job's hosts (hostlist)")->required();
  pl->add_option("--test", o->test, "the nccl-tests binary (default all_reduce_perf)");
  pl->add_option("--args", o->args, "its arguments")->capture_default_str();
  pl->add_option("--gpus-per-node", o->gpus, "GPUs (ranks) per host")->capture_default_str();
  return [o, imp, chk] {
    if (imp->parsed()) return import(o->db, o->file, o->hosts, o->job, o->test, o->json);
    if (chk->parsed()) return check(o->db, o->check, o->json);
    return plan(o->hosts, o->test.empty() ? "all_reduce_perf" : o->test, o->args, o->gpus);
  };
}

}  // namespace topoctl
