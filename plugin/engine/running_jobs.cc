// The running set as Slurm tells it: the whole set (start-up, reconfigure),
// a job's end, a job suspended or resumed.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "db/placement_store.h"
#include "plugin/engine/engine_calls.h"
#include "plugin/engine/engine_error.h"

namespace topo::engine {

namespace {

// The running entries of `jobs` the engine does not know, from their
// records in the database (none for a job without one).
void read_entries(Engine& e, const topo_engine_job* jobs, size_t count, std::map<uint32_t, RunningEntry>& now) {
  // The journal a crash left was replayed when the database was opened;
  // what record() queued since is flushed first.
  e.open_database();
  if (auto why = e.writer->flush()) throw EngineError(TOPO_ENGINE_DATABASE, *why);
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < e.nodes.names.size(); ++i)
    if (e.nodes.named[i]) index.emplace(e.nodes.names[i], i);
  PlacementStore store(e.config.db_path);
  for (size_t i = 0; i < count; ++i) {
    if (now.count(jobs[i].job_id)) continue;
    std::optional<PlacementRecord> r = store.latest_for_job(jobs[i].job_id);
    if (!r) continue;
    RunningEntry entry;
    for (const std::string& name : r->ring_order)
      if (auto it = index.find(name); it != index.end()) entry.ring.push_back(it->second);
    entry.profile = parse_profile(r->profile).value_or(profile_of(e.config, jobs[i].request));
    entry.gpus_per_host = static_cast<int>(std::max<uint32_t>(jobs[i].gpus_per_node, 1));
    now[jobs[i].job_id] = std::move(entry);
  }
}

}  // namespace

void set_running(Engine& e, const topo_engine_job* jobs, size_t count) {
  std::map<uint32_t, RunningEntry> now;
  bool unknown = false;
  for (size_t i = 0; i < count; ++i) {
    auto known = e.running.find(jobs[i].job_id);
    if (known != e.running.end())
      now[jobs[i].job_id] = known->second;
    else
      unknown = true;
  }
  if (unknown) read_entries(e, jobs, count, now);
  e.running = std::move(now);
  e.suspended.clear();
  e.traffic = RunningTraffic{};  // built whole on the next rank
  if (e.route_writer) e.routes_changed(e.map_if_any());
}

void job_ended(Engine& e, uint32_t job_id) {
  e.suspended.erase(job_id);
  if (!e.running.erase(job_id)) return;
  if (e.traffic.sums) e.traffic.remove(job_id);
  if (e.route_writer) e.routes_changed(e.map_if_any());
}

std::string job_suspended(Engine& e, uint32_t job_id, bool suspended) {
  auto& from = suspended ? e.running : e.suspended;
  auto& to = suspended ? e.suspended : e.running;
  auto it = from.find(job_id);
  if (it == from.end()) return "";  // not placed by the engine, or not running
  RunningEntry& entry = to[job_id] = std::move(it->second);
  from.erase(it);
  if (suspended) {
    if (e.traffic.sums) e.traffic.remove(job_id);
  } else if (const NodeMap* map = e.map_if_any(); map && e.traffic.built_on(*map)) {
    e.traffic.add(job_id, traffic_of(*e.tree, *map, entry));
  }
  if (e.route_writer) e.routes_changed(e.map_if_any());
  return fmt::format("job {} {}: {} running jobs' traffic on the fabric model, {} suspended", job_id,
                     suspended ? "suspended, its traffic taken out" : "resumed, its traffic back", e.running.size(),
                     e.suspended.size());
}

}  // namespace topo::engine
