// topoctl baseline: nccl-tests runs kept per host set (import), compared
// with their first run and with the model (check), and the bisection a slow
// job needs (plan). In code the concept is the nccl baseline, apart from
// placement/baseline.h (Slurm's own placements).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "comm_model/estimate.h"
#include "comm_model/nccl_tests.h"
#include "db/nccl_baseline_store.h"
#include "db/placement_store.h"
#include "db/snapshot_store.h"
#include "placement/switch_tree.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/input.h"
#include "topology/classify.h"
#include "topology/diff.h"
#include "topology/hostlist.h"

namespace topoctl {
namespace {

using json = nlohmann::json;

// The model's bus bandwidth (GB/s) for each row, on the newest snapshot;
// none when the fabric lacks a host or the collective has no model.
std::vector<std::optional<double>> predict(const topo::Fabric& f, const std::vector<std::string>& hosts,
                                           const topo::NcclTestsRun& run, std::string& why_not) {
  std::vector<std::optional<double>> out(run.rows.size());
  auto collective = run.collective();
  if (!collective) {
    why_not = fmt::format("no model for '{}'", run.test.empty() ? "an unnamed test" : run.test);
    return out;
  }
  std::vector<topo::NodeId> nodes;
  try {
    nodes = topo::find_hosts(f, hosts);
  } catch (const std::exception& e) {
    why_not = e.what();
    return out;
  }
  int ranks = run.ranks.empty() ? static_cast<int>(hosts.size()) * run.gpus_per_process
                                : static_cast<int>(run.ranks.size());
  int per_host = std::max(1, ranks / static_cast<int>(hosts.size()));
  topo::PathIndex index(f);
  for (size_t i = 0; i < run.rows.size(); ++i) {
    auto dtype = topo::parse_dtype(run.rows[i].type);
    if (!dtype || run.rows[i].size == 0) continue;
    topo::Request r{*collective, static_cast<double>(run.rows[i].size), *dtype, per_host};
    topo::Estimate e = topo::estimate(index, nodes, r);
    out[i] = e.busbw_gbps / 8;
  }
  return out;
}

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
    throw std::invalid_argument(file + ": the output names no hosts (no 'Rank ... on HOST' lines): give --hosts or --job");
  std::sort(record.hosts.begin(), record.hosts.end());
  record.hosts.erase(std::unique(record.hosts.begin(), record.hosts.end()), record.hosts.end());
  std::error_code ec;
  auto mtime = std::filesystem::last_write_time(file, ec);
  if (!ec) {
    auto sys = std::chrono::file_clock::to_sys(mtime);
    record.ran_at = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::time_point_cast<std::chrono::system_clock::duration>(sys))));
  }
  std::string why_not = "no fabric snapshot";
  topo::SnapshotStore snapshots(db);
  if (auto latest = snapshots.latest()) {
    record.snapshot_id = *latest;
    record.model_busbw = predict(snapshots.load(*latest), record.hosts, run, why_not);
  }
  record.run = run;
  int64_t id = topo::NcclBaselineStore(db).add(record);
  size_t predicted = std::count_if(record.model_busbw.begin(), record.model_busbw.end(), [](auto& x) { return x.has_value(); });
  if (json_out) {
    std::cout << json{{"run", id},          {"test", run.test},     {"nccl_version", run.nccl_version},
                      {"hosts", record.hosts}, {"ranks", run.ranks.size()}, {"rows", run.rows.size()},
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

// Out-of-place bus bandwidth at the largest size both runs measured.
std::optional<std::tuple<int64_t, double, double, std::optional<double>>> compare(const topo::NcclRunRecord& base,
                                                                                  const topo::NcclRunRecord& now) {
  std::optional<std::tuple<int64_t, double, double, std::optional<double>>> best;
  for (size_t i = 0; i < now.run.rows.size(); ++i)
    for (const topo::NcclTestsRow& b : base.run.rows)
      if (b.size == now.run.rows[i].size && b.type == now.run.rows[i].type && (!best || b.size > std::get<0>(*best)))
        best.emplace(b.size, b.oop_busbw, now.run.rows[i].oop_busbw,
                     i < now.model_busbw.size() ? now.model_busbw[i] : std::nullopt);
  return best;
}

int check(const std::string& db, double threshold, bool json_out) {
  std::vector<topo::NcclRunRecord> runs = topo::NcclBaselineStore(db).list();
  std::map<std::pair<std::string, std::vector<std::string>>, std::vector<const topo::NcclRunRecord*>> sets;
  for (const auto& r : runs) sets[{r.run.test, r.hosts}].push_back(&r);
  struct Verdict {
    const topo::NcclRunRecord *base, *now;
    int64_t size;
    double base_busbw, now_busbw;
    std::optional<double> model;
    bool slow;
  };
  std::vector<Verdict> verdicts;
  for (const auto& [key, list] : sets) {
    if (list.size() < 2) continue;
    auto c = compare(*list.front(), *list.back());
    if (!c) continue;
    auto [size, b, n, m] = *c;
    verdicts.push_back({list.front(), list.back(), size, b, n, m, b > 0 && n < b * (1 - threshold)});
  }
  // Likely causes: hosts in slow sets only; cables every slow set shares
  // that no healthy set uses; a fabric that changed under a set.
  std::map<std::string, std::pair<int, int>> host_sets;  // slow, healthy
  for (const Verdict& v : verdicts)
    for (const std::string& h : v.now->hosts) ++(v.slow ? host_sets[h].first : host_sets[h].second);
  // A host in every slow set and no healthy one is the likeliest; without
  // one, every host that joins only slow sets.
  std::vector<std::string> causes;
  const int slow_sets = static_cast<int>(std::count_if(verdicts.begin(), verdicts.end(), [](const Verdict& v) { return v.slow; }));
  for (bool in_all : {true, false}) {
    for (const auto& [h, n] : host_sets)
      if (n.first > 0 && n.second == 0 && (!in_all || n.first == slow_sets))
        causes.push_back(fmt::format("host {}: slow in every set it joins ({} of {})", h, n.first, n.first));
    if (!causes.empty()) break;
  }
  topo::SnapshotStore snapshots(db);
  std::optional<int64_t> latest = snapshots.latest();
  if (latest && std::any_of(verdicts.begin(), verdicts.end(), [](const Verdict& v) { return v.slow; })) {
    topo::Fabric f = snapshots.load(*latest);
    topo::SwitchTree tree(f);
    auto cables_of = [&](const std::vector<std::string>& hosts) {
      std::set<int> out;
      std::set<int> leaves;
      for (const std::string& h : hosts) {
        auto v = f.find_host(h);
        if (!v) continue;
        for (topo::LinkId e : tree.cables(*v)) out.insert(f.link(e).id);
        leaves.insert(tree.home_leaf(*v));
      }
      if (leaves.size() > 1)
        for (int l : leaves)
          if (l >= 0)
            for (topo::LinkId e : tree.leaves()[static_cast<size_t>(l)].uplinks) out.insert(f.link(e).id);
      return out;
    };
    std::optional<std::set<int>> common;
    std::set<int> healthy;
    for (const Verdict& v : verdicts) {
      std::set<int> c = cables_of(v.now->hosts);
      if (!v.slow) {
        healthy.insert(c.begin(), c.end());
      } else if (!common) {
        common = c;
      } else {
        std::set<int> both;
        std::set_intersection(common->begin(), common->end(), c.begin(), c.end(), std::inserter(both, both.end()));
        common = both;
      }
    }
    if (common)
      for (int c : *common)
        if (!healthy.contains(c))
          causes.push_back(fmt::format("cable {}: every slow set crosses it, no healthy one does",
                                       topo::describe_link(f, f.cables()[static_cast<size_t>(c)])));
    for (const Verdict& v : verdicts)
      if (v.slow && v.base->snapshot_id && v.now->snapshot_id && *v.base->snapshot_id != *v.now->snapshot_id) {
        size_t changes = topo::diff(snapshots.load(*v.base->snapshot_id), snapshots.load(*v.now->snapshot_id)).size();
        if (changes)
          causes.push_back(fmt::format("fabric: {} change{} between snapshot {} (baseline) and {} (topoctl diff {} {})",
                                       changes, changes == 1 ? "" : "s", *v.base->snapshot_id, *v.now->snapshot_id,
                                       *v.base->snapshot_id, *v.now->snapshot_id));
      }
  }
  size_t slow = std::count_if(verdicts.begin(), verdicts.end(), [](const Verdict& v) { return v.slow; });
  if (json_out) {
    json sets_json = json::array();
    for (const Verdict& v : verdicts)
      sets_json.push_back({{"test", v.now->run.test},
                           {"hosts", v.now->hosts},
                           {"baseline_run", v.base->id},
                           {"newest_run", v.now->id},
                           {"size", v.size},
                           {"baseline_busbw", v.base_busbw},
                           {"newest_busbw", v.now_busbw},
                           {"model_busbw", v.model ? json(*v.model) : json(nullptr)},
                           {"drop", v.base_busbw > 0 ? 1 - v.now_busbw / v.base_busbw : 0},
                           {"slow", v.slow}});
    std::cout << json{{"threshold", threshold}, {"sets", sets_json}, {"slow", slow}, {"likely_causes", causes}}.dump(2)
              << "\n";
  } else {
    if (verdicts.empty()) fmt::print("no host set has two runs to compare yet\n");
    for (const Verdict& v : verdicts)
      fmt::print("{:<5} {:<18} {:<24} {:>12} B  baseline {:8.2f}  newest {:8.2f} GB/s ({:+.1f}%){}\n",
                 v.slow ? "SLOW" : "ok", v.now->run.test, topo::compress_hostlist(v.now->hosts), v.size, v.base_busbw,
                 v.now_busbw, v.base_busbw > 0 ? 100 * (v.now_busbw / v.base_busbw - 1) : 0.0,
                 v.model ? fmt::format("  model {:.2f}", *v.model) : "");
    for (const std::string& c : causes) fmt::print("likely cause: {}\n", c);
    fmt::print("{} of {} host sets slower than their baseline by more than {:g}%\n", slow, verdicts.size(),
               100 * threshold);
  }
  return slow ? kFindings : kOk;
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
    double threshold = 0.10;
    std::string args = "-b 256M -e 1G -f 2 -g 1";
    int gpus = 8;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("baseline", "nccl-tests runs per host set: import, check against the first run "
                                                 "and the model, plan the bisection of a slow set");
  cmd->require_subcommand(1);
  CLI::App* imp = cmd->add_subcommand("import", "store one nccl-tests output with its host set and the model's figures");
  add_db_option(*imp, o->db);
  imp->add_option("file", o->file, "nccl-tests standard output")->required()->check(CLI::ExistingFile);
  auto* hosts = imp->add_option("--hosts", o->hosts, "the run's hosts (hostlist); default: those the output names");
  imp->add_option("--job", o->job, "the run's hosts are this Slurm job's (its placement record)")->excludes(hosts);
  imp->add_option("--test", o->test, "the test, when the output does not name it (all_reduce_perf, ...)");
  imp->add_flag("--json", o->json, "print JSON for scripts");
  CLI::App* chk = cmd->add_subcommand("check", "compare each host set's newest run with its first; exit 1 on a drop");
  add_db_option(*chk, o->db);
  chk->add_option("--threshold", o->threshold, "a drop of bus bandwidth beyond this share is a finding")
      ->capture_default_str();
  chk->add_flag("--json", o->json, "print JSON for scripts");
  CLI::App* pl = cmd->add_subcommand("plan", "print an sbatch script that bisects HOSTS for the slow one");
  pl->add_option("--hosts", o->hosts, "the slow job's hosts (hostlist)")->required();
  pl->add_option("--test", o->test, "the nccl-tests binary (default all_reduce_perf)");
  pl->add_option("--args", o->args, "its arguments")->capture_default_str();
  pl->add_option("--gpus-per-node", o->gpus, "GPUs (ranks) per host")->capture_default_str();
  return [o, imp, chk] {
    if (imp->parsed()) return import(o->db, o->file, o->hosts, o->job, o->test, o->json);
    if (chk->parsed()) return check(o->db, o->threshold, o->json);
    return plan(o->hosts, o->test.empty() ? "all_reduce_perf" : o->test, o->args, o->gpus);
  };
}

}  // namespace topoctl
