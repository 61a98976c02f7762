// topoctl estimate: the sizing calculator for data-parallel training. How
// many bytes each GPU moves per step, the bus bandwidth that takes within
// the step's communication window, and, on a real or hypothetical
// allocation, what the gradient AllReduce costs there.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "comm_model/concurrent_file.h"
#include "comm_model/domain_flows.h"
#include "comm_model/domain_tier.h"
#include "comm_model/ecmp.h"
#include "comm_model/estimate.h"
#include "comm_model/neighbours.h"
#include "comm_model/pipeline_stages.h"
#include "comm_model/ring_steps.h"
#include "comm_model/sizing.h"
#include "common/hostlist.h"
#include "db/placement_store.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/estimate_pipeline.h"
#include "tools/topoctl/input.h"

namespace topoctl {
namespace {

// "1e9", "175B", "7b", "1.5T", "350M", "10k": a count of parameters.
double parse_count(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument(fmt::format("--params {}: not a number (e.g. 1e9, 7B, 175B, 1.5T)", text));
  }
  std::string suffix = text.substr(used);
  double scale = 1;
  if (suffix == "k" || suffix == "K")
    scale = 1e3;
  else if (suffix == "m" || suffix == "M")
    scale = 1e6;
  else if (suffix == "b" || suffix == "B" || suffix == "g" || suffix == "G")
    scale = 1e9;
  else if (suffix == "t" || suffix == "T")
    scale = 1e12;
  else if (!suffix.empty())
    throw std::invalid_argument(fmt::format("--params {}: unknown suffix '{}' (use K, M, B or T)", text, suffix));
  v *= scale;
  if (!std::isfinite(v) || v < 1) throw std::invalid_argument(fmt::format("--params {}: must be at least 1", text));
  return std::round(v);
}

// "100ms", "0.25s", "500us", "2": a duration in seconds.
double parse_seconds(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument(fmt::format("--step-time {}: not a duration (e.g. 100ms, 0.5s)", text));
  }
  std::string unit = text.substr(used);
  double scale = 1;
  if (unit == "ms")
    scale = 1e-3;
  else if (unit == "us")
    scale = 1e-6;
  else if (unit != "s" && !unit.empty())
    throw std::invalid_argument(fmt::format("--step-time {}: unknown unit '{}' (use s, ms or us)", text, unit));
  v *= scale;
  if (!std::isfinite(v) || v <= 0) throw std::invalid_argument(fmt::format("--step-time {}: must be positive", text));
  return v;
}

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::string seconds_text(double s) {
  if (!std::isfinite(s)) return "unbounded (a cable on the path has no room left)";
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.1f} us", s * 1e6);
}

std::string bytes_text(double b) {
  if (b >= 1e12) return fmt::format("{:.2f} TB", b / 1e12);
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.2f} MB", b / 1e6);
  return fmt::format("{:.0f} B", b);
}

constexpr double kMiB = 1024.0 * 1024;

struct Options {
  FabricInput input;
  std::string params;
  std::string dtype = "bf16";
  int gpus = 0;
  std::string step_time;
  double overlap = 0.5;
  int gpus_per_host = 8;  // unless given, taken from the fabric where it knows its hosts' GPUs
  bool gpus_per_host_given = false;
  std::string hosts_arg;           // --hosts as typed: a Slurm hostlist
  std::vector<std::string> hosts;  // the same, expanded, in ring order
  int leaves = 0;
  uint32_t job = 0;
  std::string algorithm, protocol;
  std::string concurrent, routing, sharing = "stationary";
  int ecmp_draws = 200;
  std::string collective = "allreduce";
  int stages = 0;
  double activation_mib = topo::kDefaultActivationBytes / kMiB;
  bool json = false;
};

void add_options(CLI::App& cmd, Options& opts) {
  cmd.add_option("--params", opts.params, "parameters of the model: 1e9, 7B, 175B, 1.5T (needed for allreduce)");
  cmd.add_option("--dtype", opts.dtype, "gradient element type: fp32, bf16, fp16, fp8")->capture_default_str();
  cmd.add_option("--gpus", opts.gpus, "data-parallel GPUs (optional with --hosts)")->check(CLI::PositiveNumber);
  cmd.add_option("--step-time", opts.step_time, "target time of one training step: 100ms, 1.5s (needed for allreduce)");
  cmd.add_option("--overlap", opts.overlap,
                 "share of the step time the AllReduce may take while compute runs, in (0, 1]")
      ->capture_default_str();
  cmd.add_option("--gpus-per-host", opts.gpus_per_host,
                 "GPUs the job uses on each host (default: the hosts' own count where the fabric knows their GPUs, "
                 "else 8)")
      ->check(CLI::PositiveNumber);
  auto* hosts = cmd.add_option("--hosts", opts.hosts_arg,
                               "the allocation in ring order, a Slurm hostlist: gpu[001-004,017],gpu020");
  cmd.add_option("--leaves", opts.leaves, "hypothetical allocation spread over this many leaves")
      ->check(CLI::PositiveNumber)
      ->excludes(hosts);
  cmd.add_option("--job", opts.job,
                 "a Slurm job placed by select/topo_cons_tres: its recorded ring order, on "
                 "the snapshot it was placed on")
      ->excludes(hosts)
      ->check(CLI::PositiveNumber);
  cmd.add_option("--algorithm", opts.algorithm, "ring, tree or hierarchical (default: the fastest)");
  cmd.add_option("--protocol", opts.protocol, "ll, ll128 or simple (default: the fastest)");
  cmd.add_option("--concurrent", opts.concurrent,
                 "other jobs running at the same time, one a line: HOSTS (ring order, hostlist or comma-separated) "
                 "[COLLECTIVE] [duty=D] [gpus-per-host=G] [size=BYTES]; their flows share the cables per flow");
  cmd.add_option("--sharing", opts.sharing,
                 "how the jobs of --concurrent share the cables over time: stationary (every flow of a job at the "
                 "job's pace, what the placement uses), steps (the rings simulated step by step: slower to "
                 "compute, matches SimGrid where stationary is up to 28% fast) or flows (every ring edge a flow "
                 "of its own, what the replay's judge uses)")
      ->check(CLI::IsMember({"stationary", "steps", "flows"}))
      ->capture_default_str();
  cmd.add_option("--collective", opts.collective,
                 "allreduce (the data-parallel gradients) or pipeline (the stage boundaries of a pipeline-parallel "
                 "job, point to point)")
      ->check(CLI::IsMember({"allreduce", "pipeline"}))
      ->capture_default_str();
  cmd.add_option("--stages", opts.stages,
                 "pipeline: stages, each a run of consecutive hosts of the ring order; must divide the hosts");
  cmd.add_option("--activation-mib", opts.activation_mib,
                 "pipeline: MiB one GPU sends the next stage per micro-batch, each way (default: GPT-3 175B, "
                 "sequence 2048 x hidden 12288 x 2 bytes, micro-batch 1; Narayanan et al. SC21)")
      ->capture_default_str();
  add_routing_option(cmd, opts.routing);
  cmd.add_option("--ecmp-draws", opts.ecmp_draws,
                 "under ECMP: runs of the hash to estimate, for the expected and p95 time and the collision "
                 "probability")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  add_input_options(cmd, opts.input);
  cmd.add_flag("--json", opts.json, "print JSON for scripts");
}

// The algorithm and protocol asked for; unset ones are the model's choice.
topo::ModelOptions model_options(const Options& opts) {
  topo::ModelOptions model;
  if (!opts.algorithm.empty()) {
    model.algorithm = topo::parse_algorithm(opts.algorithm);
    if (!model.algorithm || *model.algorithm == topo::Algorithm::Direct)
      throw std::invalid_argument(fmt::format("--algorithm {}: use ring, tree or hierarchical", opts.algorithm));
  }
  if (!opts.protocol.empty()) {
    model.protocol = topo::parse_protocol(opts.protocol);
    if (!model.protocol)
      throw std::invalid_argument(fmt::format("--protocol {}: use ll, ll128 or simple", opts.protocol));
  }
  return model;
}

// --job: the hosts in the ring order recorded for the job, on its snapshot
// unless --snapshot names another.
void take_recorded_job(Options& opts, const CLI::App& cmd) {
  std::optional<topo::PlacementRecord> placed = topo::PlacementStore(opts.input.db_path).latest_for_job(opts.job);
  if (!placed)
    throw std::invalid_argument(fmt::format("no placement recorded for job {} in {}", opts.job, opts.input.db_path));
  opts.hosts = placed->ring_order.empty() ? placed->hosts : placed->ring_order;
  if (placed->snapshot_id && cmd.count("--snapshot") == 0) opts.input.snapshot = std::to_string(*placed->snapshot_id);
}

// --gpus against --hosts and --gpus-per-host; with --hosts, the GPUs they hold.
void check_gpus(Options& opts, bool allocation) {
  const int per_host = opts.gpus_per_host;
  if (opts.hosts.empty() && opts.gpus == 0)
    throw std::invalid_argument("--gpus is needed unless --hosts names the allocation");
  if (!opts.hosts.empty()) {
    int from_hosts = static_cast<int>(opts.hosts.size()) * per_host;
    if (opts.gpus != 0 && opts.gpus != from_hosts)
      throw std::invalid_argument(
          fmt::format("--gpus {} does not match {} hosts x {} GPUs per host", opts.gpus, opts.hosts.size(), per_host));
    opts.gpus = from_hosts;
  } else if (allocation && opts.gpus % per_host != 0) {
    throw std::invalid_argument(fmt::format("--gpus {} is not a multiple of --gpus-per-host {}", opts.gpus, per_host));
  }
}

// --gpus-per-host left out: the GPUs the fabric knows on the hosts the job
// may use (the named ones, else every host), when they all hold the same
// count. A fabric without GPU data (no hwloc, no nvidia-smi, a leafspine
// synthetic) keeps the default silently; hosts that differ, or that the
// snapshot knows only in part, keep it with a warning.
void take_fabric_gpus(Options& opts, const topo::Fabric& fabric, std::vector<std::string>& warnings) {
  if (opts.gpus_per_host_given) return;
  std::vector<topo::NodeId> hosts = opts.hosts.empty()
                                        ? std::vector<topo::NodeId>(fabric.hosts().begin(), fabric.hosts().end())
                                        : topo::find_hosts(fabric, opts.hosts);
  std::map<size_t, int> hosts_by_count;
  for (topo::NodeId h : hosts) ++hosts_by_count[fabric.node(h).gpus.size()];
  if (hosts_by_count.empty() || (hosts_by_count.size() == 1 && hosts_by_count.begin()->first == 0)) return;
  if (hosts_by_count.size() == 1) {
    opts.gpus_per_host = static_cast<int>(hosts_by_count.begin()->first);
    return;
  }
  std::vector<std::string> parts;
  for (auto [gpus, n] : hosts_by_count)
    parts.push_back(gpus == 0 ? fmt::format("unknown on {}", n) : fmt::format("{} on {}", gpus, n));
  warnings.push_back(fmt::format(
      "the {} hosts do not all hold the same GPU count ({} hosts): --gpus-per-host {} assumed; give it to choose",
      opts.hosts.empty() ? "fabric's" : "named", fmt::join(parts, ", "), opts.gpus_per_host));
}

// The gradient AllReduce on an allocation, with what the report says of it.
struct AllocationEstimate {
  LoadedFabric loaded;
  topo::Estimate est{};
  std::optional<topo::EcmpSpread> ecmp{};
  std::vector<std::string> names{};  // the hosts, in ring order
  std::string how{};                 // how they were chosen
  double hca_gbps = 0;               // the least HCA line rate of a host
  size_t neighbours = 0;             // jobs in --concurrent
  // On a fabric with NVLink domains: the domain tier's estimate (est is its
  // whole), and the domains the hosts are in.
  std::optional<topo::DomainEstimate> domain{};
  topo::DomainGroups groups{};
};

std::vector<topo::NodeId> choose_hosts(const Options& opts, const topo::PathIndex& index, std::string& how) {
  const int count = opts.gpus / opts.gpus_per_host;
  if (!opts.hosts.empty()) {
    how = "hosts";
    return topo::find_hosts(index.fabric(), opts.hosts);
  }
  if (opts.leaves > 0) {
    how = fmt::format("{} hosts over {} leaves", count, opts.leaves);
    return topo::spread_over_leaves(index, count, opts.leaves);
  }
  how = fmt::format("first {} hosts", count);
  return topo::first_hosts(index, count);
}

// The domain tier prices NVLink per domain, beside a BackgroundLoad: the
// hierarchical AllReduce of comm_model/domain_tier.h. Beside --concurrent
// jobs, the domain tier of the sharing instead (concurrent_on_domains).
bool use_domain_tier(const Options& opts, const topo::Fabric& fabric) {
  return !fabric.domains().empty() && opts.concurrent.empty();
}

// Beside --concurrent jobs on a fabric with NVLink domains, per tier
// (comm_model/domain_flows.h): per flow, every job's ring edges inside a
// domain over NVLink; stationary or step by step, hosts all in one domain
// over NVLink whatever runs beside them, otherwise the network estimate
// beside the jobs that are not inside one domain.
topo::Estimate concurrent_on_domains(const Options& opts, const topo::PathIndex& at,
                                     std::span<const topo::NodeId> chosen, const topo::Request& request,
                                     const std::vector<topo::NeighbourJob>& others, const topo::ModelOptions& m) {
  topo::DomainModelOptions o;
  o.model = m;
  if (opts.sharing == "flows") return topo::estimate_by_flows_with_domains(at, chosen, request, others, o);
  if (topo::in_one_domain(at.fabric(), chosen))
    return topo::estimate_with_domains(at, chosen, request, topo::BackgroundLoad(), o).estimate;
  std::vector<topo::NeighbourJob> network;
  for (const topo::NeighbourJob& job : others)
    if (!topo::in_one_domain(at.fabric(), job.ring)) network.push_back(job);
  if (opts.sharing == "steps") return topo::estimate_by_steps(at, chosen, request, network, m);
  topo::Neighbours running(at);
  for (const topo::NeighbourJob& job : network) running.add(job, m);
  return topo::estimate(at, chosen, request, running, m);
}

AllocationEstimate estimate_allocation(const Options& opts, LoadedFabric loaded, const topo::TrainingStep& step,
                                       const topo::StepRequirement& need, const topo::ModelOptions& model) {
  AllocationEstimate a{.loaded = std::move(loaded)};
  topo::PathIndex index(a.loaded.fabric);
  const std::vector<topo::NodeId> chosen = choose_hosts(opts, index, a.how);
  for (topo::NodeId h : chosen) a.names.push_back(a.loaded.fabric.node(h).name);
  topo::Request request;
  request.collective = topo::Collective::AllReduce;
  request.bytes = need.gradient_bytes;
  request.dtype = step.dtype;
  request.gpus_per_host = opts.gpus_per_host;
  const bool domains = use_domain_tier(opts, a.loaded.fabric);
  // With NVLink domains: inside a domain over NVLink, across over the rails,
  // as the comm_model's domain tier prices it (comm_model/domain_tier.h).
  auto with_domains = [&](const topo::PathIndex& at, const topo::ModelOptions& m) {
    topo::DomainModelOptions o;
    o.model = m;
    return topo::estimate_with_domains(at, chosen, request, topo::BackgroundLoad(), o);
  };
  // The estimate beside the --concurrent jobs, routed on `at`.
  auto with_neighbours = [&](const topo::PathIndex& at, const topo::ModelOptions& m) {
    std::vector<topo::NeighbourJob> others = topo::read_concurrent_file(opts.concurrent, at.fabric(), request);
    a.neighbours = others.size();
    if (!at.fabric().domains().empty()) return concurrent_on_domains(opts, at, chosen, request, others, m);
    if (opts.sharing == "steps") return topo::estimate_by_steps(at, chosen, request, others, m);
    if (opts.sharing == "flows") return topo::estimate_by_flows(at, chosen, request, others, m);
    topo::Neighbours running(at);
    for (const topo::NeighbourJob& job : others) running.add(job, m);
    return topo::estimate(at, chosen, request, running, m);
  };
  auto run = [&](const topo::PathIndex& at, const topo::ModelOptions& m) {
    if (domains) return with_domains(at, m).estimate;
    if (opts.concurrent.empty()) return topo::estimate(at, chosen, request, topo::BackgroundLoad(), m);
    return with_neighbours(at, m);
  };
  if (domains) {
    a.domain = with_domains(index, model);
    a.groups = topo::group_by_domain(a.loaded.fabric, chosen);
    a.est = a.domain->estimate;
  } else {
    a.est = run(index, model);
  }
  if (a.loaded.fabric.routing().is_ecmp()) {
    // One estimate per hash draw, the neighbours hashed in the same draw;
    // the even spread is adaptive routing on the same fabric.
    std::vector<double> times;
    for (int d = 0; d < opts.ecmp_draws; ++d) {
      topo::ModelOptions m = model;
      m.ecmp_draw = static_cast<uint64_t>(d);
      times.push_back(run(index, m).time_s);
    }
    topo::Fabric even = a.loaded.fabric;
    even.set_routing(topo::Routing{});
    topo::PathIndex even_index(even);
    a.ecmp = topo::summarize_draws(std::move(times), run(even_index, model).time_s);
  }
  a.hca_gbps = topo::least_host_hca_gbps(index, chosen);
  return a;
}

nlohmann::json sizing_json(const topo::TrainingStep& step, const topo::StepRequirement& need, int per_host) {
  return {
      {"parameters", step.parameters},
      {"dtype", topo::name(step.dtype)},
      {"gpus", step.gpus},
      {"gpus_per_host", per_host},
      {"step_time_s", step.step_time_s},
      {"overlap", step.overlap},
      {"gradient_bytes", need.gradient_bytes},
      {"bytes_per_gpu_per_step", need.bytes_per_gpu_per_step},
      {"window_s", need.window_s},
      {"required_gbps_per_gpu", need.required_gbps_per_gpu},
  };
}

// How the allocation runs its AllReduce: the model's algorithm and
// protocol; under the domain tier, those of the ring across the domains, or
// "nvlink" inside one.
std::pair<std::string, std::string> algorithm_names(const AllocationEstimate& a) {
  if (a.domain && !a.domain->network) return {"nvlink", "nvlink"};
  const topo::Estimate& e = a.domain ? *a.domain->network : a.est;
  return {std::string(topo::name(e.algorithm)), std::string(topo::name(e.protocol))};
}

// The domains the hosts are in, by name, and the hosts in none.
void add_domain_json(const AllocationEstimate& a, nlohmann::json& out) {
  const topo::Fabric& f = a.loaded.fabric;
  nlohmann::json domains = nlohmann::json::array(), outside = nlohmann::json::array();
  for (size_t i = 0; i < a.groups.count(); ++i) {
    std::vector<std::string> names;
    for (topo::NodeId h : a.groups.hosts[i]) names.push_back(f.node(h).name);
    if (a.groups.domain[i] < 0)
      outside.push_back(names.front());
    else
      domains.push_back({{"domain", f.domains().key(a.groups.domain[i]).str()}, {"hosts", names}});
  }
  const topo::DomainEstimate& d = *a.domain;
  out["domains"] = domains;
  out["hosts_outside_domains"] = outside;
  out["domain_tier"] = {{"groups", d.groups},
                        {"nvlink_gbps_per_gpu", d.nvlink_gbps},
                        {"nvlink_s", d.nvlink_s},
                        {"network_s", number_or_null(d.network_s)}};
  if (d.network)
    out["domain_tier"]["network"] = {{"hosts", d.network->hosts},
                                     {"bus_gbps", d.network->busbw_gbps},
                                     {"allreduce_s", number_or_null(d.network->time_s)}};
}

void add_allocation_json(const AllocationEstimate& a, const Options& opts, const topo::StepRequirement& need,
                         nlohmann::json& out) {
  const topo::Estimate& est = a.est;
  out["allocation"] = {{"hosts", a.names}, {"how", a.how}, {"source", a.loaded.fabric.source()}};
  if (a.loaded.snapshot) out["allocation"]["snapshot"] = *a.loaded.snapshot;
  out["routing"] = est.routing;
  out["allreduce_s"] = number_or_null(est.time_s);
  out["ideal_allreduce_s"] = number_or_null(est.ideal_time_s);
  out["bus_gbps"] = est.busbw_gbps;
  out["alg_gbps"] = est.algbw_gbps;
  out["latency_s"] = est.latency_s;
  auto [algorithm, protocol] = algorithm_names(a);
  out["algorithm"] = algorithm;
  out["protocol"] = protocol;
  out["hca_gbps_per_host"] = a.hca_gbps;
  out["fits_window"] = est.time_s <= need.window_s;
  const topo::Bottleneck& b = est.bottleneck;
  if (b.where != topo::Bottleneck::Where::None)
    out["bottleneck"] = {{"where", b.where == topo::Bottleneck::Where::Cable ? "cable" : "nvlink"},
                         {"link", b.name},
                         {"directed_cable", b.directed_cable},
                         {"flows", b.flows},
                         {"neighbour_flows", b.neighbour_flows},
                         {"gbps", b.gbps},
                         {"share_gbps", b.share_gbps}};
  if (a.ecmp)
    out["ecmp"] = {
        {"qps", a.loaded.fabric.routing().qps},      {"draws", a.ecmp->draws},
        {"expected_allreduce_s", a.ecmp->mean_s},    {"p95_allreduce_s", a.ecmp->p95_s},
        {"best_allreduce_s", a.ecmp->best_s},        {"worst_allreduce_s", a.ecmp->worst_s},
        {"even_spread_allreduce_s", a.ecmp->even_s}, {"collision_probability", a.ecmp->collision_probability}};
  if (!opts.concurrent.empty())
    out["neighbours"] = {{"jobs", a.neighbours},
                         {"sharing", opts.sharing},
                         {"sharing_cables", est.neighbours},
                         {"alone_allreduce_s", number_or_null(est.alone_time_s)}};
  if (a.domain) add_domain_json(a, out);
}

std::vector<std::string> allocation_warnings(const AllocationEstimate& a, const topo::StepRequirement& need) {
  std::vector<std::string> warnings;
  // Inside NVLink domains a ring is not bound by the HCAs: the window
  // warning below speaks for the domain tier.
  if (a.loaded.fabric.domains().empty() && a.est.hosts > 1 && need.required_gbps_per_gpu > a.hca_gbps)
    warnings.push_back(fmt::format(
        "the step needs {:.0f} Gb/s of bus bandwidth per GPU, more than the {:.0f} Gb/s the HCAs of one host "
        "carry; across hosts a ring cannot go faster than its hosts' HCAs",
        need.required_gbps_per_gpu, a.hca_gbps));
  if (!(a.est.time_s <= need.window_s))
    warnings.push_back(fmt::format("the AllReduce takes {}, more than the {} window (step time x overlap)",
                                   seconds_text(a.est.time_s), seconds_text(need.window_s)));
  return warnings;
}

void print_sizing(const topo::TrainingStep& step, const topo::StepRequirement& need) {
  fmt::print("data-parallel gradient AllReduce\n");
  fmt::print("  parameters              {:g} ({}, {} bytes each): {}\n", step.parameters, topo::name(step.dtype),
             topo::dtype_bytes(step.dtype), bytes_text(need.gradient_bytes));
  fmt::print("  gpus                    {}\n", step.gpus);
  fmt::print("  bytes per GPU per step  {} (2(N-1)/N x gradient bytes)\n", bytes_text(need.bytes_per_gpu_per_step));
  fmt::print("  window                  {} ({} step x {:g} overlap)\n", seconds_text(need.window_s),
             seconds_text(step.step_time_s), step.overlap);
  fmt::print("  required per GPU        {:.1f} Gb/s bus bandwidth ({:.1f} GB/s)\n", need.required_gbps_per_gpu,
             need.required_gbps_per_gpu / 8);
}

void print_ecmp(const topo::EcmpSpread& ecmp, int qps) {
  fmt::print("  expected allreduce_s    {} over {} hash draws ({} QP{} per connection)\n", seconds_text(ecmp.mean_s),
             ecmp.draws, qps, qps == 1 ? "" : "s");
  fmt::print("  p95 allreduce_s         {} (best {}, worst {})\n", seconds_text(ecmp.p95_s), seconds_text(ecmp.best_s),
             seconds_text(ecmp.worst_s));
  fmt::print("  even spread             {} (adaptive routing, ECMP's expectation per cable)\n",
             seconds_text(ecmp.even_s));
  fmt::print("  collision probability   {:.2f} (draws slower than the even spread)\n", ecmp.collision_probability);
}

void print_bottleneck(const topo::Bottleneck& b, bool domains) {
  if (b.where == topo::Bottleneck::Where::Cable && b.neighbour_flows > 0)
    fmt::print("  bottleneck              {}: {:.2f} flows ({:.2f} more of other jobs), {:.1f} Gb/s each\n", b.name,
               b.flows, b.neighbour_flows, b.share_gbps);
  else if (b.where == topo::Bottleneck::Where::Cable)
    fmt::print("  bottleneck              {}: {:.2f} flows share {:.0f} Gb/s, {:.1f} Gb/s each\n", b.name, b.flows,
               b.gbps, b.share_gbps);
  else if (b.where == topo::Bottleneck::Where::NvLink)
    fmt::print("  bottleneck              NVLink inside the {} ({:.0f} Gb/s per GPU)\n", domains ? "domain" : "hosts",
               b.gbps);
}

// The domains the hosts are in, and the NVLink and network parts of the time.
void print_domains(const AllocationEstimate& a) {
  const topo::Fabric& f = a.loaded.fabric;
  std::vector<std::string> parts;
  int domains = 0;
  for (size_t i = 0; i < a.groups.count(); ++i) {
    const int d = a.groups.domain[i];
    if (d < 0) continue;
    ++domains;
    parts.push_back(fmt::format("{}: {} hosts", f.domains().key(d).str(), a.groups.hosts[i].size()));
  }
  const size_t outside = a.groups.count() - static_cast<size_t>(domains);
  fmt::print("  domains                 {} ({}){}\n", domains, fmt::join(parts, ", "),
             outside > 0 ? fmt::format(", {} hosts in none", outside) : "");
  const topo::DomainEstimate& t = *a.domain;
  fmt::print("  nvlink part             {} ({:.0f} Gb/s per GPU each way)\n", seconds_text(t.nvlink_s), t.nvlink_gbps);
  if (t.network)
    fmt::print("  network part            {} (across {} groups; bus bandwidth {:.1f} Gb/s over {} hosts)\n",
               seconds_text(t.network_s), t.groups, t.network->busbw_gbps, t.network->hosts);
  else
    fmt::print("  network part            none (one group: every byte over NVLink)\n");
}

void print_allocation(const AllocationEstimate& a, const Options& opts, const topo::StepRequirement& need) {
  const topo::Estimate& est = a.est;
  const std::vector<std::string>& names = a.names;
  std::string list = names.size() <= 8
                         ? fmt::format("{}", fmt::join(names, ","))
                         : fmt::format("{},...,{}", fmt::join(names.begin(), names.begin() + 4, ","), names.back());
  fmt::print("allocation: {} ({}), {}\n", a.how, list, a.loaded.fabric.source());
  fmt::print("  hosts x GPUs            {} x {}\n", est.hosts, est.gpus_per_host);
  if (a.domain) print_domains(a);
  fmt::print("  routing                 {}\n", est.routing);
  auto [algorithm, protocol] = algorithm_names(a);
  if (a.domain)
    fmt::print("  algorithm               NVLink inside the domains{}\n",
               a.domain->network ? fmt::format(", {} / {} across", algorithm, protocol) : "");
  else
    fmt::print("  algorithm               {} / {}\n", algorithm, protocol);
  fmt::print("  allreduce_s             {}{}\n", seconds_text(est.time_s), a.ecmp ? " (hash draw 0)" : "");
  if (a.ecmp) print_ecmp(*a.ecmp, a.loaded.fabric.routing().qps);
  fmt::print("  ideal_allreduce_s       {} (same hosts, non-blocking fabric)\n", seconds_text(est.ideal_time_s));
  fmt::print("  bus bandwidth           {:.1f} Gb/s ({:.1f} GB/s)\n", est.busbw_gbps, est.busbw_gbps / 8);
  fmt::print("  HCA line rate per host  {:.0f} Gb/s\n", a.hca_gbps);
  if (!opts.concurrent.empty())
    fmt::print("  alone                   {} ({} of {} running jobs share a cable with it; sharing {})\n",
               seconds_text(est.alone_time_s), est.neighbours, a.neighbours, opts.sharing);
  print_bottleneck(est.bottleneck, a.domain.has_value());
  fmt::print("  fits the window         {}\n", est.time_s <= need.window_s ? "yes" : "no");
}

// Warnings go to stderr after the report, so a script reading stdout gets
// clean output, and a pipe carrying both reads in order.
void print_warnings(const std::vector<std::string>& warnings) {
  std::fflush(stdout);
  std::cout.flush();
  for (const std::string& w : warnings) std::cerr << "warning: " << w << "\n";
}

// --collective pipeline: the stage boundaries of a pipeline-parallel job on
// the allocation, on the fabric's routes, beside the --concurrent jobs'
// load (comm_model/pipeline_stages.h).
int run_pipeline(Options& opts, const CLI::App& cmd) {
  if (cmd.count("--stages") == 0) throw std::invalid_argument("--collective pipeline needs --stages S");
  if (!(opts.activation_mib > 0 && std::isfinite(opts.activation_mib)))
    throw std::invalid_argument(fmt::format("--activation-mib {}: must be positive", opts.activation_mib));
  const topo::ModelOptions model = model_options(opts);
  if (!opts.hosts_arg.empty()) opts.hosts = topo::expand_hostlist(opts.hosts_arg);
  if (opts.job > 0) take_recorded_job(opts, cmd);
  opts.gpus_per_host_given = cmd.count("--gpus-per-host") > 0;
  LoadedFabric loaded = load(opts.input);
  if (!opts.routing.empty()) apply_routing(loaded.fabric, opts.routing, "the fabric");
  std::vector<std::string> warnings;
  take_fabric_gpus(opts, loaded.fabric, warnings);
  check_gpus(opts, true);
  const topo::PathIndex index(loaded.fabric);
  std::string how;
  const std::vector<topo::NodeId> chosen = choose_hosts(opts, index, how);
  topo::BackgroundLoad running;
  if (!opts.concurrent.empty()) {
    // Lines that name no size run a 1 GiB fp32 AllReduce.
    const topo::Request like{topo::Collective::AllReduce, 1024 * kMiB, topo::Dtype::Fp32, opts.gpus_per_host};
    running = running_load(index, topo::read_concurrent_file(opts.concurrent, loaded.fabric, like), model);
  }
  topo::DomainModelOptions o;
  o.model = model;
  const topo::PipelineEstimate p =
      topo::estimate_pipeline(index, chosen, {opts.stages, opts.activation_mib * kMiB, opts.gpus_per_host}, running, o);
  std::vector<std::string> names;
  for (topo::NodeId h : chosen) names.push_back(loaded.fabric.node(h).name);
  if (opts.json) {
    nlohmann::json out = {{"collective", "pipeline"},
                          {"allocation", {{"hosts", names}, {"how", how}, {"source", loaded.fabric.source()}}},
                          {"routing", topo::routing_name(loaded.fabric.routing())},
                          {"concurrent_jobs", !opts.concurrent.empty()},
                          {"pipeline", pipeline_json(p)},
                          {"warnings", warnings}};
    if (loaded.snapshot) out["allocation"]["snapshot"] = *loaded.snapshot;
    std::cout << out.dump(2) << "\n";
  } else {
    fmt::print("allocation: {} ({} hosts), {}; routing {}\n", how, names.size(), loaded.fabric.source(),
               topo::routing_name(loaded.fabric.routing()));
    print_pipeline(p);
  }
  print_warnings(warnings);
  return kOk;
}

int run_estimate(Options& opts, const CLI::App& cmd) {
  if (opts.collective == "pipeline") return run_pipeline(opts, cmd);
  for (const char* needed : {"--params", "--step-time"})
    if (cmd.count(needed) == 0) throw std::invalid_argument(fmt::format("{} is required (allreduce)", needed));
  auto dtype = topo::parse_dtype(opts.dtype);
  if (!dtype) throw std::invalid_argument(fmt::format("--dtype {}: unknown (fp32, bf16, fp16, fp8, ...)", opts.dtype));
  const topo::ModelOptions model = model_options(opts);
  // A hostlist keeps its order: "gpu[003,001]" is the ring 003 then 001.
  if (!opts.hosts_arg.empty()) opts.hosts = topo::expand_hostlist(opts.hosts_arg);
  if (opts.job > 0) take_recorded_job(opts, cmd);
  bool fabric_given = !opts.input.synthetic.empty() || cmd.count("--db") > 0 || cmd.count("--snapshot") > 0;
  bool allocation = !opts.hosts.empty() || opts.leaves > 0 || fabric_given;
  opts.gpus_per_host_given = cmd.count("--gpus-per-host") > 0;
  // The fabric before the GPU count: its hosts may say how many they hold.
  std::optional<LoadedFabric> loaded;
  std::vector<std::string> warnings;
  if (allocation) {
    loaded = load(opts.input);
    if (!opts.routing.empty()) apply_routing(loaded->fabric, opts.routing, "the fabric");
    take_fabric_gpus(opts, loaded->fabric, warnings);
  }
  check_gpus(opts, allocation);

  topo::TrainingStep step;
  step.parameters = parse_count(opts.params);
  step.dtype = *dtype;
  step.gpus = opts.gpus;
  step.step_time_s = parse_seconds(opts.step_time);
  step.overlap = opts.overlap;
  const topo::StepRequirement need = topo::requirement(step);

  nlohmann::json out = sizing_json(step, need, opts.gpus_per_host);
  std::optional<AllocationEstimate> a;
  if (allocation) {
    a.emplace(estimate_allocation(opts, std::move(*loaded), step, need, model));
    add_allocation_json(*a, opts, need, out);
    for (std::string& w : allocation_warnings(*a, need)) warnings.push_back(std::move(w));
  }
  out["warnings"] = warnings;
  if (opts.json) {
    std::cout << out.dump(2) << "\n";
  } else {
    print_sizing(step, need);
    if (a) print_allocation(*a, opts, need);
  }
  print_warnings(warnings);
  return kOk;
}

}  // namespace

Run add_estimate(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "estimate",
      "size the gradient AllReduce of data-parallel training: bytes per GPU per step, the bus bandwidth a "
      "step time needs, and the AllReduce time on an allocation; or, with --collective pipeline, what a "
      "pipeline-parallel job's stage boundaries cost there");
  cmd->footer(
      "The allocation: --hosts names it; otherwise, with a fabric (--synthetic, --db or --snapshot), it is the\n"
      "fabric's first N hosts, or with --leaves K the N hosts spread evenly over K leaves, one leaf after the\n"
      "other. N = --gpus / --gpus-per-host. Without either, only the sizing is printed.\n"
      "Example, one leaf against four leaves at 2:1 (run with --leaves 1, then --leaves 4):\n"
      "  topoctl estimate --params 175B --dtype bf16 --gpus 512 --step-time 2s \\\n"
      "    --synthetic leafspine:leaves=4,hosts_per_leaf=64,spines=4,oversub=2 --leaves 4\n"
      "Pipeline stages, one a rack, two NVL72 racks:\n"
      "  topoctl estimate --collective pipeline --stages 2 --hosts 'gpu[001-036]' --synthetic nvl72:racks=2");
  add_options(*cmd, *opts);
  return [opts, cmd] { return run_estimate(*opts, *cmd); };
}

}  // namespace topoctl
