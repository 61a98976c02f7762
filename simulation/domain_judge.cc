#include "simulation/domain_judge.h"

#include <algorithm>
#include <optional>

#include "comm_model/domain_flows.h"

namespace topo {
namespace {

DomainModelOptions tier(const ModelOptions& model) {
  DomainModelOptions o;
  o.model = model;
  return o;
}

// The cables of the job's network flows, sorted, each once.
void collect_cables(const PathIndex& paths, JudgedJob& r) {
  r.cables.clear();
  for (const FlowJob& f : r.flow_jobs) flow_job_cables(paths, f, r.cables);
  std::sort(r.cables.begin(), r.cables.end());
  r.cables.erase(std::unique(r.cables.begin(), r.cables.end()), r.cables.end());
}

// The segments' tensor-parallel AllReduce, all at once: the slowest
// segment's time alone and its ideal (a segment whole in one domain), and,
// when some segment is split, one flow job with the network edges of every
// split segment (their parts share as the parts of one ring).
struct SegmentTraffic {
  double ideal_s = 0;
  double alone_s = 0;
  std::optional<FlowJob> network;
};

void add_segment(FlowJob f, SegmentTraffic& out) {
  if (!out.network) {
    out.network = std::move(f);
    return;
  }
  out.network->switches = std::max(out.network->switches, f.switches);
  out.network->parts.insert(out.network->parts.end(), f.parts.begin(), f.parts.end());
}

SegmentTraffic segment_traffic(const PathIndex& paths, const JudgedJob& r, const OutcomeOptions& options) {
  SegmentTraffic out;
  const ScheduledJob& job = *r.job;
  if (job.segment <= 0 || job.cpu_only || options.segment_traffic <= 0 || r.requests.empty()) return out;
  const int per_host = r.requests.front().gpus_per_host;
  const Request tp{Collective::AllReduce, options.message_bytes * options.segment_traffic, Dtype::Bf16, per_host};
  const DomainModelOptions o = tier(judged_options(tp, r.qps));
  const double gbps = nvlink_gbps(paths.fabric(), o);
  const double duty = r.as_neighbour.front().duty;
  for (size_t first = 0; first < job.ring.size(); first += job.segment) {
    const size_t last = std::min(job.ring.size(), first + job.segment);
    std::vector<NodeId> hosts(job.ring.begin() + first, job.ring.begin() + last);
    const double ideal = nvlink_time_s(tp, static_cast<int>(hosts.size()) * per_host, gbps, o);
    out.ideal_s = std::max(out.ideal_s, ideal);
    if (hosts.size() < 2) {
      out.alone_s = std::max(out.alone_s, ideal);
      continue;
    }
    FlowJob f = domain_flow_job(paths, NeighbourJob{std::move(hosts), tp, duty, o.model}, o);
    out.alone_s = std::max(out.alone_s, f.alone.time_s);
    if (!f.parts.empty()) add_segment(std::move(f), out);
  }
  if (out.network) out.network->alone.time_s = out.alone_s;
  return out;
}

// The segments' traffic into the job: into its ideal and alone times, and
// as a flow job of its own (one without parts when no segment is split, so
// the per-flow judge adds its time as it is); outside the per-flow sharing,
// `segments_s` is added to the job's time as it is.
void add_segments(const PathIndex& paths, JudgedJob& r, const OutcomeOptions& options, double& alone_s) {
  SegmentTraffic s = segment_traffic(paths, r, options);
  r.segments_s = s.alone_s;
  if (s.ideal_s <= 0) return;
  r.ideal_s += s.ideal_s;
  alone_s += s.alone_s;
  if (options.sharing != Sharing::Flows) {
    if (s.network) flow_job_cables(paths, *s.network, r.cables);
    return;
  }
  if (!s.network) {
    FlowJob whole;
    whole.alone.time_s = s.alone_s;
    s.network = std::move(whole);
  }
  r.flow_jobs.push_back(std::move(*s.network));
}

}  // namespace

void route_on_domains(const PathIndex& paths, JudgedJob& r, const OutcomeOptions& options) {
  r.ideal_s = 0;
  r.flow_jobs.clear();
  double alone_s = 0;
  for (size_t k = 0; k < r.requests.size(); ++k) {
    const ModelOptions m = judged_options(r.requests[k], r.qps);
    FlowJob f = domain_flow_job(paths, r.as_neighbour[k], tier(m));
    r.ideal_s += f.alone.ideal_time_s;
    alone_s += f.alone.time_s;
    r.flow_jobs.push_back(std::move(f));
  }
  collect_cables(paths, r);
  if (options.sharing != Sharing::Flows) r.flow_jobs.clear();
  add_segments(paths, r, options, alone_s);
  if (options.sharing == Sharing::Flows) collect_cables(paths, r);
  std::sort(r.cables.begin(), r.cables.end());
  r.cables.erase(std::unique(r.cables.begin(), r.cables.end()), r.cables.end());
  r.alone_slowdown = r.ideal_s > 0 ? alone_s / r.ideal_s : 1;
}

double alltoall_slowdown_on_domains(const PathIndex& paths, const ScheduledJob& job, const Request& a2a,
                                    const ModelOptions& options) {
  const Estimate e = estimate_with_domains(paths, job.ring, a2a, BackgroundLoad(), tier(options)).estimate;
  return e.ideal_time_s > 0 ? e.time_s / e.ideal_time_s : 1;
}

}  // namespace topo
