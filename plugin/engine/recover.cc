// topo_engine_recover: after a slurmctld restart, the running jobs whose
// start the database missed get a record rebuilt from what Slurm saved
// with them, and their traffic back on the model.
#include <algorithm>
#include <ctime>

#include <fmt/format.h>

#include "db/placement_store.h"
#include "plugin/engine/engine_calls.h"
#include "plugin/engine/engine_error.h"

namespace topo::engine {

namespace {

// placed_at ("2026-12-03T08:00:00Z") as seconds since the epoch; 0 when unreadable.
int64_t placed_at_seconds(const std::string& placed_at) {
  std::tm tm{};
  if (!strptime(placed_at.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) return 0;
  return static_cast<int64_t>(timegm(&tm));
}

// The estimate of a job on `hosts` beside the running traffic of now.
Score estimate_now(Engine& e, const NodeMap& map, const std::vector<NodeId>& hosts, const topo_engine_job& job,
                   Profile profile) {
  const RunningTraffic& traffic = e.current_traffic(map);
  FreeMap free;
  free.free_gpus.assign(e.fabric->node_count(), 0);
  free.load = traffic.load;
  free.cable_flows = traffic.cable_flows;
  PlacementRequest request;
  request.hosts = static_cast<int>(hosts.size());
  request.gpus_per_host = static_cast<int>(std::max<uint32_t>(job.gpus_per_node, 1));
  request.profile = profile;
  return score(*e.tree, free, request, hosts, e.config.weights);
}

// The record a started job would have had, rebuilt after a restart from
// what Slurm saved with the job: its ring and nodes. The search's reasons
// are gone; a placed job's estimate is computed again, on today's traffic.
PlacementRecord recovered_record(Engine& e, const NodeMap* map, const topo_engine_started& s) {
  PlacementRecord r;
  r.job_id = s.job.job_id;
  r.hosts = e.nodes.names_of(s.allocated, s.allocated_count);
  r.ring_order = e.nodes.names_of(s.ring, s.ring_count);
  Profile profile = profile_of(e.config, s.job.request);
  r.profile = std::string(name(profile));
  if (map) r.snapshot_id = e.snapshot_id;
  r.fallback = s.fallback;
  if (s.fallback) {
    r.fallback_why = "Slurm's own choice (recorded after a slurmctld restart, which lost the reason)";
    return r;
  }
  r.reasons.push_back(
      "recorded after a slurmctld restart, from the ring order the job was given; "
      "the estimate is computed again on the traffic of that moment");
  std::vector<NodeId> hosts;
  for (size_t i = 0; map && i < s.ring_count; ++i)
    if (s.ring[i] < map->host.size() && map->host[s.ring[i]]) hosts.push_back(*map->host[s.ring[i]]);
  if (!map || hosts.empty() || hosts.size() != s.ring_count) return r;
  Score sc = estimate_now(e, *map, hosts, s.job, profile);
  r.estimate_s = sc.estimate_s;
  r.ideal_s = sc.ideal_s;
  return r;
}

}  // namespace

void recover(Engine& e, topo_engine_started* jobs, size_t count) {
  e.open_database();
  // What record() queued is in the database first, or it would be missed.
  if (auto why = e.writer->flush()) throw EngineError(TOPO_ENGINE_DATABASE, *why);
  PlacementStore store(e.config.db_path);
  const NodeMap* map = e.map_if_any();
  for (size_t i = 0; i < count; ++i) {
    topo_engine_started& s = jobs[i];
    if ((s.ring_count && !s.ring) || (s.allocated_count && !s.allocated))
      throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_recover: missing nodes");
    // This run's record was written when it started or later; an older
    // one is a previous run's (the job was requeued since).
    std::optional<PlacementRecord> latest = store.latest_for_job(s.job.job_id);
    if (latest && placed_at_seconds(latest->placed_at) >= s.started_at) continue;
    e.writer->submit(recovered_record(e, map, s));
    s.recorded = true;
    RunningEntry entry;
    entry.ring.assign(s.ring, s.ring + s.ring_count);
    entry.profile = profile_of(e.config, s.job.request);
    entry.gpus_per_host = static_cast<int>(std::max<uint32_t>(s.job.gpus_per_node, 1));
    e.start_running(s.job.job_id, std::move(entry), map);
  }
}

}  // namespace topo::engine
