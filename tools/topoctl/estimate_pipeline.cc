#include "tools/topoctl/estimate_pipeline.h"

#include <cmath>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "comm_model/domain_flows.h"
#include "comm_model/ring_demand.h"

namespace topoctl {
namespace {

nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::string ms(double s) { return std::isfinite(s) ? fmt::format("{:.3f} ms", s * 1e3) : "unbounded"; }

std::string shares_text(const topo::StageBoundary& b) {
  std::string out;
  if (!b.shares_with.empty()) out = fmt::format("shares cables with boundary {}", fmt::join(b.shares_with, ", "));
  if (b.shares_with_running) out += out.empty() ? "shares cables with running jobs" : "; with running jobs";
  return out.empty() ? "no shared cable" : out;
}

}  // namespace

topo::BackgroundLoad running_load(const topo::PathIndex& index, std::span<const topo::NeighbourJob> jobs,
                                  const topo::ModelOptions& options) {
  const topo::Fabric& f = index.fabric();
  topo::BackgroundLoad load;
  for (const topo::NeighbourJob& job : jobs) {
    if (job.ring.size() < 2 || (!f.domains().empty() && topo::in_one_domain(f, job.ring))) continue;
    const topo::RingDemand demand =
        topo::ring_demand(index, job.ring, job.request, job.duty, job.options.value_or(options));
    for (auto [directed, gbps] : demand.gbps) topo::add_directed(f, directed, gbps, load);
  }
  return load;
}

nlohmann::json pipeline_json(const topo::PipelineEstimate& p) {
  nlohmann::json boundaries = nlohmann::json::array();
  for (const topo::StageBoundary& b : p.boundaries)
    boundaries.push_back({{"from_stage", b.from_stage},
                          {"to_stage", b.from_stage + 1},
                          {"tier", topo::name(b.tier)},
                          {"pairs", b.pairs},
                          {"network_pairs", b.network_pairs},
                          {"bytes", b.bytes},
                          {"nvlink_s", b.nvlink_s},
                          {"forward_s", finite_or_null(b.forward_s)},
                          {"backward_s", finite_or_null(b.backward_s)},
                          {"seconds", finite_or_null(b.seconds)},
                          {"network_gbps_per_gpu", b.network_gbps_per_gpu},
                          {"bottleneck", b.bottleneck},
                          {"shares_with", b.shares_with},
                          {"shares_with_running", b.shares_with_running}});
  return {{"stages", p.stages},
          {"hosts_per_stage", p.hosts_per_stage},
          {"gpus_per_host", p.gpus_per_host},
          {"activation_bytes", p.activation_bytes},
          {"nvlink_gbps_per_gpu", p.nvlink_gbps},
          {"boundaries", boundaries},
          {"bytes", p.bytes},
          {"seconds", finite_or_null(p.seconds)}};
}

void print_pipeline(const topo::PipelineEstimate& p) {
  fmt::print("pipeline: {} stages of {} hosts x {} GPUs, {:.1f} MiB a GPU a micro-batch each way\n", p.stages,
             p.hosts_per_stage, p.gpus_per_host, p.activation_bytes / (1024.0 * 1024));
  for (const topo::StageBoundary& b : p.boundaries) {
    std::string rate = b.network_pairs > 0 ? fmt::format(", {:.1f} Gb/s a GPU over the network", b.network_gbps_per_gpu)
                                           : std::string();
    fmt::print("  stage {} -> {}  {:<7}  {:.2f} MB  {} (forward {}, backward {}){}; {}{}\n", b.from_stage,
               b.from_stage + 1, topo::name(b.tier), b.bytes / 1e6, ms(b.seconds), ms(b.forward_s), ms(b.backward_s),
               rate, shares_text(b), b.bottleneck.empty() ? "" : fmt::format("; bottleneck {}", b.bottleneck));
  }
  fmt::print("  total            {:.2f} MB  {} a micro-batch, forward and back (no bubble, no overlap)\n",
             p.bytes / 1e6, ms(p.seconds));
}

}  // namespace topoctl
