// topoctl route plan | apply: forwarding tables for the running jobs' rings
// (routing/job_routes.h), and handing them to OpenSM's `file` engine.
//
// The base tables are the snapshot's own (read from OpenSM, `discover
// --lfts` or `--lfts-dump`) or an engine's emulated (`--routing
// static:ENGINE`); a plan always starts from them, never from a file an
// earlier apply wrote, so a job that ended has its LIDs' base entries back.
// Each job's slowdown before and after is the judge's (simulation/outcome.h:
// its collectives among the other running jobs' traffic, over the ideal),
// all running jobs judged together, once on the base tables and once on
// the planned ones.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "placement/running_file.h"
#include "placement/switch_tree.h"
#include "routing/job_routes.h"
#include "routing/opensm_handoff.h"
#include "routing/ring_floor.h"
#include "simulation/outcome.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/input.h"

namespace topoctl {
namespace {

using nlohmann::json;
using topo::Fabric;

struct RouteOptions {
  FabricInput input;
  std::string routing;
  std::string running;
  int gpus_per_host = 8;
  int max_changes = 0;
  bool json = false;
  std::string opensm_file;
  std::string sweep_command;
};

void add_plan_options(CLI::App& cmd, RouteOptions& o) {
  add_input_options(cmd, o.input);
  add_routing_option(cmd, o.routing);
  cmd.add_option("--running", o.running,
                 "running jobs, one a line: 'hosts-in-ring-order [profile] [duty=SHARE]' (as place --running)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd.add_option("--gpus-per-host", o.gpus_per_host, "GPUs each running job uses on a host")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd.add_option("--max-changes", o.max_changes, "at most this many table entries changed from the base (0: no cap)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd.add_flag("--json", o.json, "print JSON for scripts");
}

// The running file's jobs, named by their line order (#1, #2, ...).
std::vector<topo::RunningJob> running_jobs(const RouteOptions& o, const Fabric& f) {
  topo::FreeMap free = topo::FreeMap::all_free(f, o.gpus_per_host);
  topo::read_running_file(o.running, f, o.gpus_per_host, free);
  return free.running;
}

std::vector<topo::RingJob> rings_of(const std::vector<topo::RunningJob>& running) {
  std::vector<topo::RingJob> rings;
  for (size_t i = 0; i < running.size(); ++i)
    rings.push_back(topo::RingJob{fmt::format("#{}", i + 1), running[i].ring});
  return rings;
}

// Every running job judged together on `fabric`'s routing: one slowdown per job.
std::vector<double> slowdowns(const Fabric& fabric, const std::vector<topo::RunningJob>& running, int gpus_per_host) {
  topo::Schedule schedule;
  schedule.policy = "running";
  for (size_t i = 0; i < running.size(); ++i) {
    topo::ScheduledJob s;
    s.id = fmt::format("#{}", i + 1);
    s.ring = running[i].ring;
    s.host_gpus.assign(s.ring.size(), gpus_per_host);
    s.gpus = static_cast<int>(s.ring.size()) * gpus_per_host;
    s.profile = running[i].profile;
    s.duty = running[i].duty;
    s.start_s = 0;
    s.end_s = 1;
    schedule.jobs.push_back(std::move(s));
  }
  topo::OutcomeOptions options;
  options.fabric_gpus = static_cast<int>(fabric.hosts().size()) * gpus_per_host;
  topo::SwitchTree tree(fabric);
  std::vector<double> out;
  for (const topo::JobOutcome& j : topo::judge(tree, schedule, options).jobs) out.push_back(j.allreduce_slowdown);
  return out;
}

struct Planned {
  LoadedFabric loaded;
  std::vector<topo::RunningJob> running;
  topo::RoutePlan plan;
  std::vector<double> before, after;  // per job
  std::vector<double> floors;         // per job: its busiest cable's fewest flows under any tables
};

Planned make_plan(const RouteOptions& o) {
  Planned p{load(o.input), {}, {}, {}, {}, {}};
  if (!o.routing.empty()) apply_routing(p.loaded.fabric, o.routing, "the fabric");
  Fabric& f = p.loaded.fabric;
  if (!f.routing().is_static())
    throw std::invalid_argument("the fabric routes " + topo::routing_name(f.routing()) +
                                "; route needs static tables (discover --lfts, or --routing static:ENGINE)");
  p.running = running_jobs(o, f);
  p.plan = topo::plan_job_routes(f, f.routing(), rings_of(p.running), topo::RoutePlanOptions{o.max_changes});
  p.floors = topo::ring_floors(f, rings_of(p.running));
  p.before = slowdowns(f, p.running, o.gpus_per_host);
  Fabric planned = f;
  planned.set_routing(p.plan.routing);
  p.after = slowdowns(planned, p.running, o.gpus_per_host);
  return p;
}

std::string switch_name(const Fabric& f, int s) { return f.node(f.switches()[static_cast<size_t>(s)]).name; }
std::string lid_owner(const Fabric& f, uint32_t lid) {
  auto n = f.node_by_lid(lid);
  return n ? f.node(*n).name : "?";
}
int leaves_of(const Fabric& f, const topo::RunningJob& job) {
  std::set<topo::NodeId> leaves;
  for (topo::NodeId h : job.ring)
    for (topo::NodeId l : f.leaves_of(h)) leaves.insert(l);
  return static_cast<int>(leaves.size());
}

json load_json(const topo::RingLoad& l) {
  return {{"most_flows", l.most}, {"excess", l.excess}, {"shared_cables", l.shared_cables}};
}

json plan_json(const Planned& p) {
  const Fabric& f = p.loaded.fabric;
  json changes = json::array(), jobs = json::array();
  for (const topo::EntryChange& c : p.plan.changes)
    changes.push_back({{"switch", switch_name(f, c.switch_index)},
                       {"lid", c.lid},
                       {"destination", lid_owner(f, c.lid)},
                       {"base_port", c.base_port},
                       {"port", c.port}});
  for (size_t i = 0; i < p.running.size(); ++i) {
    json hosts = json::array();
    for (topo::NodeId h : p.running[i].ring) hosts.push_back(f.node(h).name);
    jobs.push_back({{"job", fmt::format("#{}", i + 1)},
                    {"hosts", hosts},
                    {"leaves", leaves_of(f, p.running[i])},
                    {"slowdown_before", p.before.at(i)},
                    {"slowdown_after", p.after.at(i)},
                    {"floor_most_flows", p.floors.at(i)}});
  }
  return {{"routing", topo::routing_name(f.routing())},
          {"lids", p.plan.lids},
          {"before", load_json(p.plan.before)},
          {"after", load_json(p.plan.after)},
          {"capped_flows", p.plan.capped_flows},
          {"changes", changes},
          {"jobs", jobs}};
}

void print_plan(const Planned& p, int max_changes) {
  const Fabric& f = p.loaded.fabric;
  const auto &b = p.plan.before, &a = p.plan.after;
  fmt::print("base tables {} ({}); {} running jobs; {} LIDs of multi-leaf jobs planned\n",
             topo::routing_name(f.routing()), f.routing().source, p.running.size(), p.plan.lids.size());
  fmt::print("most flows on a cable {:.2f} -> {:.2f}   excess {:.2f} -> {:.2f}   shared inter-switch cables {} -> {}\n",
             b.most, a.most, b.excess, a.excess, b.shared_cables, a.shared_cables);
  fmt::print(
      "entries changed {} (cap {}){}\n", p.plan.changes.size(), max_changes > 0 ? std::to_string(max_changes) : "none",
      p.plan.capped_flows > 0 ? fmt::format(", {} flows kept off a better path by the cap", p.plan.capped_flows) : "");
  fmt::print("{:<6} {:>5} {:>6} {:>16} {:>8} {:>12}\n", "job", "hosts", "leaves", "slowdown before", "after",
             "floor flows");
  for (size_t i = 0; i < p.running.size(); ++i)
    fmt::print("{:<6} {:>5} {:>6} {:>16.3f} {:>8.3f} {:>12.2f}\n", fmt::format("#{}", i + 1), p.running[i].ring.size(),
               leaves_of(f, p.running[i]), p.before.at(i), p.after.at(i), p.floors.at(i));
  fmt::print(
      "floor flows: the fewest flows on the job's busiest cable under any tables (a leaf with more "
      "cross-leaf ring flows than uplinks shares one)\n");
  for (const topo::EntryChange& c : p.plan.changes)
    fmt::print("  {} LID {} ({}): port {} -> {}\n", switch_name(f, c.switch_index), c.lid, lid_owner(f, c.lid),
               c.base_port, c.port);
}

int run_plan(const RouteOptions& o) {
  Planned p = make_plan(o);
  if (o.json)
    std::cout << plan_json(p).dump(2) << "\n";
  else
    print_plan(p, o.max_changes);
  return kOk;
}

int run_apply(const RouteOptions& o) {
  Planned p = make_plan(o);
  // Whole or not at all: a failing sweep command puts the file back as it was.
  topo::hand_to_opensm(p.loaded.fabric, p.plan.routing, topo::OpensmHandoff{o.opensm_file, o.sweep_command});
  if (o.json) {
    json out = plan_json(p);
    out["opensm_file"] = o.opensm_file;
    if (!o.sweep_command.empty()) out["sweep_command"] = o.sweep_command;
    std::cout << out.dump(2) << "\n";
  } else {
    print_plan(p, o.max_changes);
    fmt::print("wrote {}{}\n", o.opensm_file, o.sweep_command.empty() ? "" : "; ran " + o.sweep_command);
  }
  return kOk;
}

}  // namespace

Run add_route(CLI::App& app) {
  auto plan_opts = std::make_shared<RouteOptions>(), apply_opts = std::make_shared<RouteOptions>();
  CLI::App* cmd = app.add_subcommand(
      "route", "forwarding tables for the running jobs' rings: plan them, write them for OpenSM's file engine");
  cmd->require_subcommand(1);
  CLI::App* plan = cmd->add_subcommand(
      "plan",
      "which table entries would change for the running multi-leaf jobs, and each job's slowdown before and after");
  add_plan_options(*plan, *plan_opts);
  CLI::App* apply = cmd->add_subcommand(
      "apply",
      "write the planned tables, complete, in dump_lfts format for 'opensm -R file -U FILE'; optionally run "
      "a command that makes OpenSM sweep again");
  add_plan_options(*apply, *apply_opts);
  apply->add_option("--opensm-file", apply_opts->opensm_file, "the file OpenSM's -U (lfts_file) names")->required();
  apply->add_option("--sweep-command", apply_opts->sweep_command,
                    "run by /bin/sh after writing, e.g. 'kill -HUP $(pidof opensm)' (a heavy sweep that re-reads "
                    "the file); non-zero status: the file is put back as it was, exit 2");
  return [plan, plan_opts, apply_opts] { return plan->parsed() ? run_plan(*plan_opts) : run_apply(*apply_opts); };
}

}  // namespace topoctl
