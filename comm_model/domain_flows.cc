#include "comm_model/domain_flows.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "comm_model/collective.h"

namespace topo {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

int domain_of(const Fabric& f, NodeId host) { return f.domains().domain_of(f.index().host_id(host)); }

// Seconds per byte of edge traffic of a job's slowest part alone.
double alone_pace(std::span<const FlowJob::Part> parts) {
  double pace = 0;
  for (const FlowJob::Part& p : parts)
    pace = std::max(pace, p.alone_gbps > 0 ? p.flow_bytes * 8 / (p.alone_gbps * 1e9) : kInf);
  return pace;
}

// A collective inside one domain: no flow on the network, its time over
// NVLink alone and ideally alike.
FlowJob nvlink_only(const PathIndex& index, const NeighbourJob& job, DomainModelOptions options) {
  FlowJob f;
  f.job = job;
  options.model = job.options.value_or(options.model);
  f.job.options = options.model;
  f.alone = estimate_with_domains(index, job.ring, job.request, BackgroundLoad(), options).estimate;
  return f;
}

// Takes a ring's edges inside a domain off the network. Each GPU's NVLink
// carries its rank's whole edge traffic, as in the ring inside one domain
// (domain_tier.h): the NVLink pace per byte of edge traffic. The alone and
// ideal times change only when the pace does.
void take_nvlink_edges(const Fabric& fabric, FlowJob& f, const DomainModelOptions& options) {
  const std::vector<NodeId>& ring = f.job.ring;
  const size_t n = ring.size();
  std::vector<FlowJob::Part> kept;
  for (size_t i = 0; i < n && i < f.parts.size(); ++i) {
    const int from = domain_of(fabric, ring[i]), to = domain_of(fabric, ring[(i + 1) % n]);
    if (from < 0 || from != to) kept.push_back(f.parts[i]);
  }
  if (kept.size() == f.parts.size()) return;
  const double before = alone_pace(f.parts);
  const double nvlink = 8 / (nvlink_gbps(fabric, options) * 1e9);
  const double pace = std::max(alone_pace(kept), nvlink);
  f.parts = std::move(kept);
  if (pace == before) return;
  const ModelOptions& m = *f.job.options;
  Estimate alone = ring_estimate(pace, f.switches, f.job.request, f.alone, f.alone, m);
  const double floor = ring_estimate(nvlink, 0, f.job.request, f.alone, f.alone, m).time_s;
  alone.ideal_time_s = std::min(alone.time_s, std::max(f.alone.ideal_time_s, floor));
  alone.alone_time_s = alone.time_s;
  f.alone = alone;
}

}  // namespace

bool in_one_domain(const Fabric& fabric, std::span<const NodeId> hosts) {
  if (hosts.empty()) return false;
  const int d = domain_of(fabric, hosts.front());
  return d >= 0 && std::all_of(hosts.begin(), hosts.end(), [&](NodeId h) { return domain_of(fabric, h) == d; });
}

FlowJob domain_flow_job(const PathIndex& index, const NeighbourJob& job, const DomainModelOptions& options) {
  const Fabric& fabric = index.fabric();
  if (fabric.domains().empty() || job.ring.size() < 2) return flow_job(index, job, options.model);
  if (in_one_domain(fabric, job.ring)) return nvlink_only(index, job, options);
  FlowJob f = flow_job(index, job, options.model);
  if (f.ring) take_nvlink_edges(fabric, f, options);
  return f;
}

std::vector<Estimate> share_by_flows_with_domains(const PathIndex& index, std::span<const FlowJob* const> jobs,
                                                  double efficiency, bool steps) {
  if (index.fabric().domains().empty()) return share_by_flows(index, jobs, efficiency, steps);
  std::vector<const FlowJob*> networked;
  for (const FlowJob* j : jobs)
    if (!j->parts.empty()) networked.push_back(j);
  const std::vector<Estimate> shared = share_by_flows(index, networked, efficiency, steps);
  std::vector<Estimate> out;
  out.reserve(jobs.size());
  size_t at = 0;
  for (const FlowJob* j : jobs) {
    if (j->parts.empty()) {
      out.push_back(j->alone);
      continue;
    }
    Estimate e = shared[at++];
    if (e.time_s < j->alone.time_s) {
      e.time_s = j->alone.time_s;
      e.latency_s = j->alone.latency_s;
    }
    out.push_back(e);
  }
  return out;
}

void flow_job_cables(const PathIndex& index, const FlowJob& job, std::vector<int>& out) {
  for (const FlowJob::Part& p : job.parts)
    for (auto [key, flows] : p.flows) index.for_each_cable(key, [&out](int c) { out.push_back(c); });
}

namespace {

// How many of `others` have a network flow on a cable `job`'s cross.
int sharing_neighbours(const PathIndex& index, const FlowJob& job, std::span<const FlowJob> others) {
  std::vector<int> mine;
  flow_job_cables(index, job, mine);
  const std::set<int> own(mine.begin(), mine.end());
  int count = 0;
  for (const FlowJob& other : others) {
    std::vector<int> theirs;
    flow_job_cables(index, other, theirs);
    count += std::any_of(theirs.begin(), theirs.end(), [&own](int c) { return own.count(c) > 0; });
  }
  return count;
}

}  // namespace

Estimate estimate_by_flows_with_domains(const PathIndex& index, std::span<const NodeId> hosts, const Request& request,
                                        std::span<const NeighbourJob> neighbours, const DomainModelOptions& options) {
  std::vector<FlowJob> jobs;
  jobs.reserve(1 + neighbours.size());
  jobs.push_back(domain_flow_job(index, {std::vector<NodeId>(hosts.begin(), hosts.end()), request}, options));
  for (const NeighbourJob& n : neighbours) jobs.push_back(domain_flow_job(index, n, options));
  std::vector<const FlowJob*> all;
  for (const FlowJob& j : jobs) all.push_back(&j);
  Estimate out = share_by_flows_with_domains(index, all, options.model.network_efficiency)[0];
  out.ideal_time_s = std::min(out.time_s, jobs[0].alone.ideal_time_s);
  out.alone_time_s = jobs[0].alone.time_s;
  out.neighbours = sharing_neighbours(index, jobs[0], std::span<const FlowJob>(jobs).subspan(1));
  out.algbw_gbps = out.busbw_gbps = 0;
  if (std::isfinite(out.time_s) && out.time_s > 0) {
    out.algbw_gbps = request.bytes * 8 / out.time_s / 1e9;
    out.busbw_gbps = out.algbw_gbps * bus_factor(request.collective, out.ranks);
  }
  return out;
}

}  // namespace topo
