#include "plugin/engine/running_traffic.h"

#include <algorithm>
#include <exception>
#include <utility>

namespace topo::engine {

std::optional<JobTraffic> traffic_of(const SwitchTree& tree, const NodeMap& map, const RunningEntry& entry) {
  RunningJob job;
  job.profile = entry.profile;
  job.gpus_per_host = std::max(1, entry.gpus_per_host);
  for (size_t node : entry.ring)
    if (node < map.host.size() && map.host[node]) job.ring.push_back(*map.host[node]);
  if (job.ring.size() < 2) return std::nullopt;
  try {
    return job_traffic(tree, job);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

RunningTraffic RunningTraffic::build(const Fabric& fabric, const SwitchTree& tree, const NodeMap& map,
                                     const std::map<uint32_t, RunningEntry>& running) {
  RunningTraffic t;
  t.sums = std::make_unique<TrafficMap>(fabric);
  t.snapshot_id = map.snapshot_id;
  t.config_generation = map.config_generation;
  t.table_generation = map.table_generation;
  for (const auto& [id, entry] : running) t.add(id, traffic_of(tree, map, entry));
  return t;
}

void RunningTraffic::add(uint32_t job_id, std::optional<JobTraffic> t) {
  remove(job_id);
  if (!t) return;
  sums->add(*t);
  of_job.emplace(job_id, std::move(*t));
  written = false;
}

void RunningTraffic::remove(uint32_t job_id) {
  auto it = of_job.find(job_id);
  if (it == of_job.end()) return;
  sums->remove(it->second);
  of_job.erase(it);
  written = false;
}

void RunningTraffic::write(const Fabric& fabric, uint64_t write_number) {
  FreeMap f;
  sums->write(fabric, f);
  load = std::move(f.load);
  cable_flows = std::move(f.cable_flows);
  written = true;
  writes = write_number;
}

}  // namespace topo::engine
