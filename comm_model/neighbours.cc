#include "comm_model/neighbours.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "comm_model/evaluate.h"

namespace topo {
namespace {

// What one of a job's flows asks for: the rate its flows run at alone,
// over the share of its time alone that the network takes, times its duty.
double demand_of(const detail::Evaluation& alone, double duty) {
  const Estimate& e = alone.estimate;
  if (!(e.time_s > 0) || !std::isfinite(e.time_s)) return 0;
  return duty * alone.alone_flow_gbps * alone.alone_net_s / e.time_s;
}

void check_duty(double duty) {
  if (!(duty > 0 && duty <= 1)) throw std::invalid_argument(fmt::format("duty {} is not in (0, 1]", duty));
}

std::vector<Sharer> sharers_of(std::span<const Neighbours::Job> jobs, size_t skip) {
  std::vector<Sharer> out;
  for (size_t j = 0; j < jobs.size(); ++j)
    if (j != skip && !jobs[j].flows.empty()) out.push_back({jobs[j].flows, jobs[j].demand_gbps});
  return out;
}

}  // namespace

Neighbours::Neighbours(const PathIndex& index) : index_(&index) {}

void Neighbours::add(const NeighbourJob& job, const ModelOptions& options) {
  check_duty(job.duty);
  detail::Evaluation alone =
      detail::evaluate(*index_, job.ring, job.request, BackgroundLoad(), {}, job.options.value_or(options));
  const double demand = demand_of(alone, job.duty);
  jobs_.push_back({std::move(alone.flows), demand, std::move(alone.estimate)});
}

Estimate estimate(const PathIndex& index, std::span<const NodeId> hosts, const Request& request,
                  const Neighbours& neighbours, const ModelOptions& options) {
  if (&neighbours.index() != &index) throw std::invalid_argument("the neighbours were routed on another path index");
  std::vector<Sharer> others = sharers_of(neighbours.jobs(), neighbours.size());
  return detail::evaluate(index, hosts, request, BackgroundLoad(), others, options).estimate;
}

Estimate estimate_among(const Neighbours& all, size_t j, const NeighbourJob& job, const ModelOptions& options) {
  std::vector<Sharer> others = sharers_of(all.jobs(), j);
  return detail::evaluate(all.index(), job.ring, job.request, BackgroundLoad(), others, job.options.value_or(options))
      .estimate;
}

std::vector<Estimate> estimate_each(const PathIndex& index, std::span<const NeighbourJob> jobs,
                                    const ModelOptions& options) {
  Neighbours all(index);
  for (const NeighbourJob& j : jobs) all.add(j, options);
  std::vector<Estimate> out;
  out.reserve(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) out.push_back(estimate_among(all, j, jobs[j], options));
  return out;
}

}  // namespace topo
