#include "tools/view/jobs.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "placement/traffic.h"

namespace topo::view {

JobsOnFabric jobs_on_fabric(const Fabric& fabric, std::span<const PlacementRecord> records, bool with_load) {
  JobsOnFabric out;
  std::vector<double> directed;
  std::optional<SwitchTree> tree;
  if (with_load) {
    directed.assign(2 * fabric.cables().size(), 0);
    tree.emplace(fabric);
  }
  for (const PlacementRecord& r : records) {
    JobOnFabric job{std::to_string(r.job_id), {}};
    const std::vector<std::string>& order = r.ring_order.empty() ? r.hosts : r.ring_order;
    std::string missing;
    for (const std::string& host : order) {
      std::optional<NodeId> h = fabric.find_host(host);
      if (!h) {
        missing = host;
        break;
      }
      job.ring.push_back(*h);
    }
    if (!missing.empty()) {
      out.skipped.push_back(fmt::format("job {}: host {} is not in the fabric", r.job_id, missing));
      continue;
    }
    if (with_load && job.ring.size() > 1) {
      RunningJob running;
      running.ring = job.ring;
      running.profile = parse_profile(r.profile).value_or(Profile::AllReduce);
      running.gpus_per_host = std::max<int>(1, static_cast<int>(fabric.node(job.ring.front()).gpus.size()));
      try {
        JobTraffic traffic = job_traffic(*tree, running);
        for (auto [cable, gbps] : traffic.gbps)
          if (cable >= 0 && static_cast<size_t>(cable) < directed.size()) directed[cable] += gbps;
      } catch (const std::exception& e) {
        out.skipped.push_back(fmt::format("job {}: no load drawn: {}", r.job_id, e.what()));
      }
    }
    out.jobs.push_back(std::move(job));
  }
  if (with_load) {
    out.cable_gbps.assign(fabric.cables().size(), 0);
    for (size_t c = 0; c < out.cable_gbps.size(); ++c)
      out.cable_gbps[c] = std::max(directed[2 * c], directed[2 * c + 1]);
  }
  return out;
}

}  // namespace topo::view
