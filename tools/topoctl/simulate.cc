// topoctl simulate: replay a job trace on a fabric under several placement
// policies and judge each schedule the same way (simulation/outcome.h).
// topoctl score: judge a schedule a real Slurm cluster made (tests/slurm/
// replay.sh writes it) the same way, so both sit in one report.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/quote.h"
#include "simulation/job_aware.h"
#include "simulation/job_kinds.h"
#include "simulation/outcome.h"
#include "simulation/replay.h"
#include "simulation/trace.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/input.h"
#include "tools/topoctl/outcome_json.h"
#include "tools/topoctl/schedule_json.h"

namespace topoctl {

namespace {

using nlohmann::json;

struct JudgeOptions {
  int gpus_per_host = 8;
  double message_mib = topo::kMessageBytes / (1024 * 1024);
  double comm_duty = 0.5;
  std::string routing = "adaptive";
  std::string mix{topo::kDefaultMix};
  uint64_t mix_seed = 1;
  int qps_hint = 4;
  std::string sharing = "flows";
  std::string comm_share;  // empty: each profile's default (simulation/stretch.cc)
  bool no_stretch = false;
  double reroute_delay_s = 0;
  int max_changes = 0;  // with job-aware routing: the planner's churn cap (0: none)
  double segment_traffic = topo::kSegmentTraffic;
};

void add_judge_options(CLI::App& cmd, JudgeOptions& o) {
  cmd.add_option("--gpus-per-host", o.gpus_per_host, "GPUs on every host")->check(CLI::Range(1, 64));
  cmd.add_option("--message-mib", o.message_mib,
                 "size of every collective a job is placed and judged at, in MiB (one size for both)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd.add_option("--comm-duty", o.comm_duty,
                 "share of its run time a job spends in collectives: its load on shared cables")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1.0));
  add_routing_option(cmd, o.routing);
  cmd.add_option("--mix", o.mix,
                 "how multi-host jobs communicate, drawn per job unless --profile gives every one the same: "
                 "PROFILE=WEIGHT,... over allreduce (data parallel), fsdp, alltoall (MoE), pipeline, mixed; see "
                 "simulation/mix.h for the default's sources")
      ->capture_default_str();
  cmd.add_option("--mix-seed", o.mix_seed,
                 "seed of the per-job draws (profile; in simulate also --cpu-only and --segments)")
      ->capture_default_str();
  cmd.add_option("--qps-hint", o.qps_hint,
                 "under ecmp:QPS: the NCCL_IB_QPS_PER_CONNECTION topo-aware's jobs whose ring crosses leaves "
                 "run with, as the Slurm plugin's EcmpQpsPerConnection sets it (never below QPS); 0: judge "
                 "the placement alone, every job with QPS")
      ->capture_default_str()
      ->check(CLI::Range(0, topo::kMaxQps));
  cmd.add_option("--sharing", o.sharing,
                 "how a judged job shares its cables with the jobs beside it: flows (every ring edge a flow of "
                 "its own, max-min fair with every job joined to it through shared cables; within 5% of SimGrid "
                 "at p95), stationary (every flow at its job's pace, direct neighbours only) or steps (its rings "
                 "simulated step by step beside its direct neighbours'; slower)")
      ->check(CLI::IsMember({"flows", "stationary", "steps"}))
      ->capture_default_str();
  auto* share = cmd.add_option(
      "--comm-share", o.comm_share,
      "share of a job's step spent waiting on the network, which its slowdown stretches: run = trace run x ((1 - "
      "share) + share x slowdown); one share for every profile (0.3) or PROFILE=SHARE,... over the defaults "
      "(allreduce=0.30,alltoall=0.50,mixed=0.40,fsdp=0.40,pipeline=0.10; sources in simulation/stretch.cc); 0: "
      "runs as the trace says");
  cmd.add_flag("--no-stretch", o.no_stretch, "every job runs as long as the trace says, wherever it lands")
      ->excludes(share);
  cmd.add_option("--segment-traffic", o.segment_traffic,
                 "on NVLink domains: the tensor-parallel AllReduce a segmented job runs inside each segment, in "
                 "bytes per byte of its own collectives (default: Megatron-LM's GPT-3 175B, source in "
                 "simulation/domain_judge.h); over NVLink when the segment is whole, over the scale-out when "
                 "split; 0: none")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--reroute-delay", o.reroute_delay_s,
                 "with --routing job-aware:ENGINE: seconds from a job's start or end until its re-planned tables "
                 "hold")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--max-changes", o.max_changes,
                 "with --routing job-aware:ENGINE: forwarding-table entries one plan may change, as "
                 "RouteMaxChanges= caps them in Slurm (0: no cap)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 30));
}

// --routing job-aware:ENGINE: ENGINE's static tables, re-planned for the
// running rings at every start and end (simulation/job_aware.h).
constexpr std::string_view kJobAware = "job-aware:";
bool job_aware(const JudgeOptions& o) { return o.routing.starts_with(kJobAware); }

// The routing the replay places on: a job-aware run places on its base
// tables (the replay and the judge re-plan them as jobs start and end).
void apply_judged_routing(topo::Fabric& fabric, const JudgeOptions& o) {
  apply_routing(fabric, job_aware(o) ? "static:" + o.routing.substr(kJobAware.size()) : o.routing, "the fabric");
}

// The stretch the options ask for: --no-stretch, --comm-share, or the defaults.
topo::Stretch stretch_of(const JudgeOptions& o) {
  if (o.no_stretch) return {};
  return o.comm_share.empty() ? topo::default_stretch() : topo::parse_comm_shares(o.comm_share);
}

// Which judge printed a run's figures, and whether runs were stretched, for
// its description.
std::string judged_by(const JudgeOptions& o) {
  topo::Stretch stretch = stretch_of(o);
  return fmt::format(", judged with --sharing {}, {}", o.sharing,
                     stretch.on ? "runs stretched by comm share " + topo::stretch_text(stretch)
                                : "runs as the trace says (no stretch)") +
         (job_aware(o)
              ? fmt::format(", tables re-planned at every start and end, holding after {} s", o.reroute_delay_s)
              : "");
}

// `policy`'s jobs are judged with the NCCL hints it gives them.
topo::OutcomeOptions outcome_options(const JudgeOptions& o, const topo::Fabric& fabric, std::string_view policy) {
  topo::OutcomeOptions out;
  if (topo::policy_sets_nccl_hints(policy)) out.ecmp_qps_hint = o.qps_hint;
  out.message_bytes = o.message_mib * 1024 * 1024;
  out.fabric_gpus = static_cast<int>(fabric.hosts().size()) * o.gpus_per_host;
  out.sharing = o.sharing == "steps"        ? topo::Sharing::Steps
                : o.sharing == "stationary" ? topo::Sharing::Stationary
                                            : topo::Sharing::Flows;
  out.stretch = stretch_of(o);
  out.segment_traffic = o.segment_traffic;
  return out;
}

// A schedule judged on the tree's tables, or job-aware: re-planned at every
// start and end, with how often and how much the tables changed.
// `memo` holds the plans the replay made, if any.
topo::PolicyOutcome judged(const topo::SwitchTree& tree, const topo::Schedule& schedule, const JudgeOptions& o,
                           std::string_view policy, std::shared_ptr<topo::PlanMemo> memo = nullptr) {
  const topo::OutcomeOptions options = outcome_options(o, tree.fabric(), policy);
  if (!job_aware(o)) return topo::judge(tree, schedule, options);
  topo::RerouteFigures fig;
  topo::PolicyOutcome out =
      topo::judge_job_aware(tree.fabric(), schedule, options, {o.reroute_delay_s, o.max_changes, memo}, &fig);
  out.scheduler["reroutes"] = fig.reroutes;
  out.scheduler["reroutes_per_hour"] = fig.per_hour();
  out.scheduler["entries_per_reroute"] = fig.entries_per_reroute();
  out.scheduler["slow_jobs"] = fig.slow_jobs;
  out.scheduler["slow_jobs_at_floor"] = fig.slow_jobs_floored;
  out.scheduler["p95_at_floor"] = fig.p95_at_floor;
  std::fprintf(stderr, "simulate: %s under %s: %d reroutes, %.2f per hour, %.1f entries changed per reroute\n",
               std::string(policy).c_str(), o.routing.c_str(), fig.reroutes, fig.per_hour(), fig.entries_per_reroute());
  std::fprintf(stderr,
               "simulate: %s under %s: %d AllReduce jobs above %.2f, %d of them with a leaf short of uplinks for "
               "their ring (no tables help); p95 %.3f were every other job unslowed\n",
               std::string(policy).c_str(), o.routing.c_str(), fig.slow_jobs, fig.slow_above, fig.slow_jobs_floored,
               fig.p95_at_floor);
  if (memo)
    std::fprintf(stderr, "simulate: %s: %d plans made, %d taken again by the judge\n", std::string(policy).c_str(),
                 memo->plans_made(), memo->plans_reused());
  return out;
}

// "jobs=10000,load=0.9,seed=7,median=1800": the generator's shape. Each
// value whole: "jobs=1e9" is not read as 1, nor "jobs=-1" as 2^64 - 1.
topo::TraceShape parse_shape(const std::string& spec) {
  topo::TraceShape shape;
  std::stringstream in(spec);
  std::string item;
  auto read = [&](const std::string& value, auto& into) {
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), into);
    return ec == std::errc() && end == value.data() + value.size() && !value.empty();
  };
  while (std::getline(in, item, ',')) {
    auto eq = item.find('=');
    std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    bool ok = key == "jobs"     ? read(value, shape.jobs) && shape.jobs <= topo::kMaxGeneratedJobs
              : key == "load"   ? read(value, shape.load) && std::isfinite(shape.load)
              : key == "seed"   ? read(value, shape.seed)
              : key == "median" ? read(value, shape.median_duration_s) && std::isfinite(shape.median_duration_s)
                                : false;
    if (!ok)
      throw std::invalid_argument(
          fmt::format("--generate: bad '{}'; expected jobs=N (at most {}), load=X, seed=N, "
                      "median=SECONDS",
                      topo::shown(item), topo::kMaxGeneratedJobs));
  }
  if (shape.jobs == 0 || !(shape.load > 0) || !(shape.median_duration_s > 0))
    throw std::invalid_argument("--generate: jobs, load and median must be positive");
  return shape;
}

// On a fabric with NVLink domains: what each policy left of them.
void print_domains(const topo::Comparison& c) {
  if (std::none_of(c.policies.begin(), c.policies.end(),
                   [](const topo::PolicyOutcome& p) { return p.nvlink.domains > 0; }))
    return;
  fmt::print("\nNVLink domains, after each job's start (a decision): free whole domains, largest free block:\n");
  fmt::print("{:<11} {:>8} {:>9} {:>10} {:>9} {:>13} {:>15} {:>14} {:>10}\n", "policy", "domains", "decisions",
             "free mean", "free min", "largest mean", "segments split", "segmented jobs", "CPU-only");
  for (const topo::PolicyOutcome& p : c.policies) {
    const topo::DomainFigures& d = p.nvlink;
    fmt::print("{:<11} {:>8} {:>9} {:>10.2f} {:>9} {:>13.2f} {:>15} {:>14} {:>10}\n", p.policy, d.domains, d.decisions,
               d.mean_free_whole_domains, d.min_free_whole_domains, d.mean_largest_free_block,
               fmt::format("{} of {}", d.segments_split, d.segments), d.segmented_jobs,
               fmt::format("{} ({} in)", d.cpu_only_jobs, d.cpu_only_jobs_in_domains));
  }
  fmt::print(
      "segments split: segments (every segment-size consecutive hosts of a ring) not all in one domain; CPU-only: "
      "jobs (of them holding hosts of a domain)\n");
}

void print_summary(const topo::Comparison& c) {
  fmt::print("{}\nfabric {}   trace {}   routing {}\n\n", c.title, c.fabric, c.trace,
             c.policies.empty() ? "-" : c.policies.front().routing);
  fmt::print("{:<11} {:>7} {:>9} {:>9} {:>9} {:>10} {:>8} {:>12} {:>7} {:>10} {:>10} {:>10} {:>10}\n", "policy", "jobs",
             "multi", "AR mean", "AR p95", "A2A mean", "leaves", "spine edges", "util", "makespan", "mean wait",
             "JCT mean", "JCT p95");
  for (const topo::PolicyOutcome& p : c.policies)
    fmt::print(
        "{:<11} {:>7} {:>9} {:>9.3f} {:>9.3f} {:>10.3f} {:>8.2f} {:>12} {:>6.1f}% {:>9.0f}s {:>9.0f}s {:>9.0f}s "
        "{:>9.0f}s\n",
        p.policy, p.jobs.size(), p.multi_host_jobs, p.mean_allreduce_slowdown, p.p95_allreduce_slowdown,
        p.mean_alltoall_slowdown, p.mean_leaves, p.spine_ring_edges, p.gpu_utilization * 100, p.makespan_s,
        p.mean_wait_s, p.mean_jct_s, p.p95_jct_s);
  fmt::print("\nper profile (each job judged by its own collectives, with its neighbours' traffic):\n");
  fmt::print("{:<11} {:<10} {:>7} {:>9} {:>9}\n", "policy", "profile", "jobs", "mean", "p95");
  for (const topo::PolicyOutcome& p : c.policies) {
    fmt::print("{:<11} {:<10} {:>7} {:>9.3f} {:>9}\n", p.policy, "all", p.multi_host_jobs, p.mean_slowdown, "");
    for (const auto& [name, s] : p.profiles)
      fmt::print("{:<11} {:<10} {:>7} {:>9.3f} {:>9.3f}\n", p.policy, name, s.jobs, s.mean_slowdown, s.p95_slowdown);
  }
  print_domains(c);
  fmt::print(
      "\nAR: allreduce jobs' AllReduce time over the ideal; A2A: every multi-host job's AllToAll alone "
      "over the ideal; spine edges: ring edges between leaves, summed; JCT: job completion time, wait + run (runs "
      "stretched by their slowdowns unless --no-stretch)\n");
}

// --json prints summaries; --output keeps every job for `topoctl report`.
int emit(const topo::Comparison& c, bool as_json, const std::string& output) {
  if (!output.empty()) {
    std::ofstream out(output);
    out << to_json(c).dump(1) << '\n';
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", output));
    std::fprintf(stderr, "wrote %s\n", output.c_str());
  }
  if (as_json) {
    json doc = to_json(c);
    for (auto& [name, outcome] : doc["policies"].items()) outcome.erase("jobs");
    std::cout << doc.dump(2) << '\n';
  } else {
    print_summary(c);
  }
  return kOk;
}

std::vector<std::string> split_policies(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  if (out.empty()) throw std::invalid_argument("--policies: no policy named");
  return out;
}

// Each policy's replay of the trace, judged; `threads` policies at a time.
// The first error of any policy is thrown once all have ended.
std::vector<topo::PolicyOutcome> replay_and_judge(const topo::SwitchTree& tree, const topo::Trace& trace,
                                                  const std::vector<topo::PlacementPolicy>& policies,
                                                  const topo::ReplayOptions& replay_options, const JudgeOptions& judge,
                                                  unsigned threads) {
  std::vector<topo::PolicyOutcome> outcomes(policies.size());
  std::vector<std::exception_ptr> errors(policies.size());
  std::mutex say;
  auto run = [&](size_t i) {
    try {
      auto t0 = std::chrono::steady_clock::now();
      topo::ReplayOptions o = replay_options;
      o.judging = outcome_options(judge, tree.fabric(), policies[i].name);
      o.progress = [&, i, last = -1](double share) mutable {
        int tenth = static_cast<int>(share * 10);
        if (tenth == last) return;
        last = tenth;
        std::lock_guard lock(say);
        std::fprintf(stderr, "simulate: %-10s %3d%% of jobs submitted\n", policies[i].name.c_str(), tenth * 10);
      };
      // The judge takes the plans the replay made for the same running rings.
      if (o.job_aware) o.job_aware->memo = std::make_shared<topo::PlanMemo>();
      topo::Schedule schedule = topo::replay(tree, trace, policies[i], o);
      auto t1 = std::chrono::steady_clock::now();
      outcomes[i] = judged(tree, schedule, judge, policies[i].name, o.job_aware ? o.job_aware->memo : nullptr);
      auto t2 = std::chrono::steady_clock::now();
      outcomes[i].scheduler["replay_s"] = std::chrono::duration<double>(t1 - t0).count();
      outcomes[i].scheduler["judge_s"] = std::chrono::duration<double>(t2 - t1).count();
      std::lock_guard lock(say);
      std::fprintf(stderr, "simulate: %-10s done: replay %.1f s, judging %.1f s\n", policies[i].name.c_str(),
                   std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count());
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  for (size_t first = 0; first < policies.size(); first += threads) {
    std::vector<std::thread> pool;
    for (size_t i = first; i < std::min(policies.size(), first + threads); ++i) pool.emplace_back(run, i);
    for (std::thread& t : pool) t.join();
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return outcomes;
}

struct SimulateOptions {
  FabricInput input;
  JudgeOptions judge;
  std::string trace, generate;
  std::string policies = "linear,tree,topo-aware";
  double gpu_factor = 1, load = 0;
  size_t max_jobs = 0, backfill_depth = 100;
  topo::DeferRule defer_rule;
  std::string profile;
  topo::JobKinds kinds;
  std::string segment_sizes = "2-18";
  std::string title, output;
  unsigned threads = 0;
  bool json = false;
};

// A number for which `holds` is true, else "must be WHAT, not TEXT".
CLI::Validator number_where(bool (*holds)(double), const std::string& what) {
  return CLI::Validator(
      [holds, what](std::string& text) {
        double v = 0;
        bool ok = CLI::detail::lexical_cast(text, v) && holds(v);
        return ok ? std::string() : fmt::format("must be {}, not {}", what, text);
      },
      what);
}

// Which jobs run on CPUs only and which ask for NVLink segments
// (simulation/job_kinds.h), for traces read and generated alike.
void add_job_kind_options(CLI::App& cmd, SimulateOptions& o) {
  cmd.add_option("--cpu-only", o.kinds.cpu_only_share,
                 "share of jobs drawn to run on CPUs only: as many hosts as their GPUs would take, held whole, no "
                 "collectives, no NVLink")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd.add_option("--segments", o.kinds.segment_share,
                 "share of multi-host GPU jobs drawn to ask for NVLink segments (every SIZE consecutive hosts in "
                 "one domain, as Slurm's --segment), SIZE drawn from --segment-sizes among the divisors of the "
                 "job's hosts")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd.add_option("--segment-sizes", o.segment_sizes, "segment sizes in hosts: MIN-MAX or N")->capture_default_str();
}

void add_simulate_options(CLI::App& cmd, SimulateOptions& o) {
  add_input_options(cmd, o.input);
  auto* source = cmd.add_option_group("trace");
  source->add_option("--trace", o.trace, "a trace CSV: job_id,submission_time,duration,num_gpu")
      ->check(CLI::ExistingFile);
  source->add_option("--generate", o.generate,
                     "a synthetic trace: jobs=N,load=X,seed=N,median=SECONDS (production-like size mix)");
  source->require_option(1);
  cmd.add_option("--policies", o.policies,
                 "comma-separated: linear, tree, block (a fabric with NVLink domains), topo-aware")
      ->capture_default_str();
  add_judge_options(cmd, o.judge);
  cmd.add_option("--scale-gpus", o.gpu_factor, "multiply every job's GPU count (trace scaling, step 2)")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--load", o.load,
                 "compress or stretch arrivals so the trace offers this share of the fabric's GPUs (step 3)")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--jobs", o.max_jobs, "replay only the first N jobs (step 1)");
  cmd.add_option("--backfill-depth", o.backfill_depth, "queued jobs looked at per scheduling pass")
      ->check(CLI::PositiveNumber);
  add_profile_option(cmd, o.profile);
  add_job_kind_options(cmd, o);
  cmd.add_option("--defer-above", o.defer_rule.above_slowdown,
                 "leave a job queued while the model estimates its best placement more than this many times "
                 "slower than its best on the idle fabric (e.g. 1.10), for at most --defer-share of its run; "
                 "topo-aware only (Slurm's policies have no estimate); 0: never")
      ->capture_default_str()
      ->check(number_where([](double v) { return topo::defer_rule_problem({.above_slowdown = v}).empty(); },
                           "0 (never) or a slowdown above 1"));
  cmd.add_option("--defer-share", o.defer_rule.max_wait_share,
                 "the longest a job is deferred, from its first deferral, as a share of its run time (the "
                 "trace's stand-in for its time limit)")
      ->capture_default_str()
      ->check(number_where([](double v) { return topo::defer_rule_problem({.max_wait_share = v}).empty(); },
                           "a share above 0"));
  cmd.add_option("--threads", o.threads, "policies replayed at once (default: one per core)");
  cmd.add_option("--title", o.title, "the run's title in the results and the report");
  cmd.add_option("--output", o.output, "write the results with every job (for topoctl report) to FILE");
  cmd.add_flag("--json", o.json, "print the summary per policy as JSON");
}

// --profile's profile for every multi-host job; AllReduce when the mix draws them.
topo::Profile given_profile(const std::string& text) {
  return text.empty() ? topo::Profile::AllReduce : profile_option(text);
}

// The trace read or generated, then scaled; `scaling` says how, for the results.
topo::Trace simulated_trace(const SimulateOptions& o, int fabric_gpus, std::string& scaling) {
  topo::Trace trace =
      o.trace.empty() ? topo::generate_trace(fabric_gpus, parse_shape(o.generate)) : topo::read_trace_csv(o.trace);
  if (o.gpu_factor != 1 || o.load > 0 || o.max_jobs > 0) {
    trace = topo::scale_trace(std::move(trace), fabric_gpus, {o.gpu_factor, o.load, o.max_jobs});
    scaling = fmt::format(" (GPUs x{}, {}{} jobs)", o.gpu_factor, o.load > 0 ? fmt::format("load {}, ", o.load) : "",
                          trace.jobs.size());
  }
  return trace;
}

topo::ReplayOptions replay_options(const SimulateOptions& o, topo::Profile profile, const topo::Mix& mix) {
  topo::ReplayOptions r;
  r.gpus_per_host = o.judge.gpus_per_host;
  r.profile = profile;
  if (o.profile.empty()) r.mix = mix;
  r.comm_duty = o.judge.comm_duty;
  r.message_bytes = o.judge.message_mib * 1024 * 1024;
  r.backfill_depth = o.backfill_depth;
  r.defer_rule = o.defer_rule;
  r.stretch = stretch_of(o.judge);
  if (job_aware(o.judge)) r.job_aware = topo::JobAwareOptions{o.judge.reroute_delay_s, o.judge.max_changes, nullptr};
  r.kinds = o.kinds;
  r.kinds.seed = o.judge.mix_seed;
  topo::parse_segment_sizes(o.segment_sizes, r.kinds);
  return r;
}

}  // namespace

Run add_simulate(CLI::App& app) {
  auto opts = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "Replay a job trace on a fabric under several placement policies (linear: cons_tres alone; tree: Slurm's "
      "topology/tree; block: its topology/block, on NVLink domains; topo-aware) and compare what their placements cost "
      "the jobs' collectives");
  add_simulate_options(*cmd, *opts);
  return [opts]() {
    const SimulateOptions& o = *opts;
    LoadedFabric loaded = load(o.input);
    apply_judged_routing(loaded.fabric, o.judge);
    const topo::Fabric& fabric = loaded.fabric;
    const topo::Mix mix = topo::parse_mix(o.judge.mix, o.judge.mix_seed);
    const int G = o.judge.gpus_per_host;
    const topo::Profile profile = given_profile(o.profile);
    std::vector<topo::PlacementPolicy> policies;
    for (const std::string& name : split_policies(o.policies)) policies.push_back(topo::policy_named(name, fabric));

    std::string scaling;
    const topo::Trace trace = simulated_trace(o, static_cast<int>(fabric.hosts().size()) * G, scaling);
    std::fprintf(stderr, "simulate: %zu jobs on %zu hosts x %d GPUs, policies %s\n", trace.jobs.size(),
                 fabric.hosts().size(), G, o.policies.c_str());

    unsigned threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
    topo::Comparison c;
    const topo::ReplayOptions replaying = replay_options(o, profile, mix);
    c.policies = replay_and_judge(topo::SwitchTree(fabric), trace, policies, replaying, o.judge, threads);
    c.fabric = o.input.synthetic.empty() ? fmt::format("{} snapshot {}", o.input.db_path, o.input.snapshot)
                                         : o.input.synthetic;
    c.trace = trace.source + scaling;
    c.trace += o.profile.empty() ? ", mix " + topo::mix_text(mix) : fmt::format(", every job {}", topo::name(profile));
    if (std::string kinds = topo::job_kinds_text(replaying.kinds); !kinds.empty()) c.trace += ", " + kinds;
    c.trace += judged_by(o.judge);
    if (o.defer_rule.enabled())
      c.trace += fmt::format(
          ", jobs deferred while estimated above {} times their best on the idle fabric "
          "(at most {} of their run from their first deferral)",
          o.defer_rule.above_slowdown, o.defer_rule.max_wait_share);
    c.title = o.title.empty() ? fmt::format("simulation, {} hosts x {} GPUs", fabric.hosts().size(), G) : o.title;
    return emit(c, o.json, o.output);
  };
}

Run add_score(CLI::App& app) {
  struct Options {
    FabricInput input;
    JudgeOptions judge;
    std::vector<std::string> schedules;
    std::string title, output;
    bool json = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "score", "Judge schedules a real Slurm cluster made (tests/slurm/replay.sh) as topoctl simulate judges its own");
  add_input_options(*cmd, opts->input);
  cmd->add_option("--schedule", opts->schedules, "a schedule JSON file, one per policy (repeat the option)")
      ->required()
      ->check(CLI::ExistingFile);
  add_judge_options(*cmd, opts->judge);
  cmd->add_option("--title", opts->title, "the run's title in the results and the report");
  cmd->add_option("--output", opts->output, "write the results with every job (for topoctl report) to FILE");
  cmd->add_flag("--json", opts->json, "print the summary per policy as JSON");
  return [opts]() {
    LoadedFabric loaded = load(opts->input);
    apply_judged_routing(loaded.fabric, opts->judge);
    const topo::Mix mix = topo::parse_mix(opts->judge.mix, opts->judge.mix_seed);
    topo::SwitchTree tree(loaded.fabric);
    topo::Comparison c;
    c.fabric = opts->input.synthetic.empty() ? opts->input.db_path : opts->input.synthetic;
    c.title = opts->title.empty() ? "Slurm cluster replay" : opts->title;
    for (const std::string& path : opts->schedules) {
      std::string trace;
      topo::Schedule s = read_schedule_file(path, loaded.fabric, trace);
      // A real cluster's schedule says where jobs ran, not how they
      // communicate: they get the profile the simulator would draw.
      for (topo::ScheduledJob& job : s.jobs) {
        job.profile = topo::draw_profile(mix, job.id);
        job.duty = opts->judge.comm_duty;
      }
      if (c.trace.empty())
        c.trace = trace + judged_by(opts->judge) +
                  (stretch_of(opts->judge).on ? " after the fact (Slurm's schedule is not moved)" : "");
      c.policies.push_back(judged(tree, s, opts->judge, s.policy));
    }
    return emit(c, opts->json, opts->output);
  };
}

}  // namespace topoctl
