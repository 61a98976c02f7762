#include "comm_model/sizing.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"

namespace topo {

StepRequirement requirement(const TrainingStep& step) {
  if (!std::isfinite(step.parameters) || step.parameters <= 0)
    throw std::invalid_argument(fmt::format("parameters {} must be a positive number", step.parameters));
  if (step.gpus < 1) throw std::invalid_argument(fmt::format("gpus {} must be at least 1", step.gpus));
  if (!std::isfinite(step.step_time_s) || step.step_time_s <= 0)
    throw std::invalid_argument(fmt::format("step time {} s must be positive", step.step_time_s));
  if (!(step.overlap > 0 && step.overlap <= 1))
    throw std::invalid_argument(fmt::format("overlap {} must be in (0, 1]", step.overlap));
  StepRequirement r;
  r.gradient_bytes = step.parameters * dtype_bytes(step.dtype);
  r.bytes_per_gpu_per_step = bus_factor(Collective::AllReduce, step.gpus) * r.gradient_bytes;
  r.window_s = step.step_time_s * step.overlap;
  r.required_gbps_per_gpu = r.bytes_per_gpu_per_step * 8 / r.window_s / 1e9;
  return r;
}

std::vector<NodeId> first_hosts(const PathIndex& index, int count) {
  if (count < 1) throw std::invalid_argument(fmt::format("{} hosts: need at least one", count));
  std::vector<NodeId> out;
  const Fabric& f = index.fabric();
  for (size_t h = 0; h < f.hosts().size() && static_cast<int>(out.size()) < count; ++h)
    if (!index.ports(static_cast<int>(h)).empty()) out.push_back(f.hosts()[h]);
  if (static_cast<int>(out.size()) < count)
    throw FabricError(fmt::format("the fabric has {} hosts with an Active HCA cable, not {}", out.size(), count));
  return out;
}

std::vector<NodeId> spread_over_leaves(const PathIndex& index, int count, int leaves) {
  if (count < 1) throw std::invalid_argument(fmt::format("{} hosts: need at least one", count));
  if (leaves < 1 || leaves > count)
    throw std::invalid_argument(fmt::format("cannot spread {} hosts over {} leaves", count, leaves));
  const Fabric& f = index.fabric();
  std::vector<std::vector<NodeId>> under(index.leaves().size());
  for (size_t h = 0; h < f.hosts().size(); ++h) {
    auto ports = index.ports(static_cast<int>(h));
    if (!ports.empty()) under[ports.front().leaf].push_back(f.hosts()[h]);
  }
  std::vector<NodeId> out;
  int used = 0;
  for (size_t l = 0; l < under.size() && used < leaves; ++l) {
    int want = count / leaves + (used < count % leaves ? 1 : 0);
    if (static_cast<int>(under[l].size()) < want) continue;
    out.insert(out.end(), under[l].begin(), under[l].begin() + want);
    ++used;
  }
  if (used < leaves)
    throw FabricError(fmt::format("cannot spread {} hosts over {} leaves: only {} leaves have {} hosts or more", count,
                                  leaves, used, count / leaves + (count % leaves ? 1 : 0)));
  return out;
}

double least_host_hca_gbps(const PathIndex& index, std::span<const NodeId> hosts) {
  double least = std::numeric_limits<double>::infinity();
  for (NodeId h : hosts) {
    int i = index.host_index(h);
    if (i < 0) continue;
    double sum = 0;
    for (const PathIndex::Port& p : index.ports(i)) sum += p.gbps;
    least = std::min(least, sum);
  }
  return std::isfinite(least) ? least : 0;
}

}  // namespace topo
