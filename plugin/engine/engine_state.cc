// The engine's view of Slurm's jobs on the current snapshot: the node map,
// the running traffic, the search's FreeMap; and reading the config.
#include <exception>
#include <utility>

#include <fmt/format.h>

#include "plugin/engine/engine_error.h"
#include "plugin/engine/engine_state.h"

namespace topo::engine {

const NodeMap& Engine::current_node_map(bool check_now) {
  (void)current_tree(check_now);
  if (node_map.snapshot_id != *snapshot_id || node_map.config_generation != config_generation ||
      node_map.table_generation != nodes.generation) {
    node_map = build_node_map(*fabric, config, nodes);
    idle_slowdowns.clear();
    node_map.snapshot_id = *snapshot_id;
    node_map.config_generation = config_generation;
    node_map.table_generation = nodes.generation;
  }
  return node_map;
}

const RunningTraffic& Engine::current_traffic(const NodeMap& map) {
  if (!traffic.built_on(map)) traffic = RunningTraffic::build(*fabric, *tree, map, running);
  if (!traffic.written) {
    answers.clear();  // they were given on other traffic
    traffic.write(*fabric, ++traffic_writes);
  }
  return traffic;
}

const NodeMap* Engine::map_if_any() {
  // The map as the last rank left it, so that recording and ringing
  // Slurm's own choice never ask the database.
  if (tree && node_map.snapshot_id == snapshot_id && node_map.config_generation == config_generation &&
      node_map.table_generation == nodes.generation)
    return &node_map;
  try {
    return &current_node_map();
  } catch (const std::exception&) {
    return nullptr;
  }
}

const FreeMap& Engine::free_map_for(const RunningTraffic& t, const std::vector<int>& free_gpus) {
  if (search_free_writes != t.writes || estimates_fabric != fabric_loads) {
    // Estimates hold on one tree (its paths, its cables' health) and the
    // load near their rings: a job's start or end keeps those of rings
    // away from its cables.
    if (estimates_fabric != fabric_loads)
      estimates.clear();
    else
      estimates.forget_changed(*tree, search_free.load, t.load);
    search_free.load = t.load;
    search_free.cable_flows = t.cable_flows;
    search_free_writes = t.writes;
    estimates_fabric = fabric_loads;
    search_free.estimates = &estimates;
  }
  search_free.free_gpus.assign(free_gpus.begin(), free_gpus.end());
  return search_free;
}

void Engine::start_running(uint32_t job_id, RunningEntry entry, const NodeMap* map) {
  // The shim handed the job over as it started (topo_engine_job_started)
  // and records it now on the same ring: its traffic is counted already,
  // and the answers given since stay good.
  if (auto it = running.find(job_id); it != running.end() && it->second == entry) return;
  RunningEntry& kept = running[job_id] = std::move(entry);
  if (map && traffic.built_on(*map)) traffic.add(job_id, traffic_of(*tree, *map, kept));
  routes_changed(map);
}

void Engine::routes_changed(const NodeMap* map) {
  if (!route_writer || !map || !fabric) return;
  RouteInputs in;
  in.fabric = fabric;
  in.snapshot_id = map->snapshot_id;
  for (const auto& [id, entry] : running) {
    RingJob job{std::to_string(id), {}};
    for (size_t node : entry.ring)
      if (auto h = map->host_of(node)) job.ring.push_back(*h);
    if (job.ring.size() >= 2) in.jobs.push_back(std::move(job));
  }
  route_writer->update(std::move(in));
}

void Engine::configure_routes(const RouteSettings& before) {
  if (route_writer && config.routes == before) return;
  route_writer.reset();  // RouteJobs=no: the file stays as the last apply left it
  if (!config.routes.enabled) return;
  route_writer = std::make_unique<RouteWriter>(config.routes);
  if (topo_engine_route_fn notice = on_routes)
    route_writer->set_notice([notice](const std::string& line, bool failed) { notice(line.c_str(), failed); });
}

void Engine::configure(const char* path, char* msg, size_t size) {
  std::optional<EngineConfig> read;
  if (path && *path) read = read_engine_config(path);
  std::string old_db = config.db_path;
  const RouteSettings old_routes = config.routes;
  if (read) {
    config = std::move(*read);
  } else {
    config = EngineConfig{};
    write_message(msg, size,
                  fmt::format("{}: no such file; using the defaults (DbPath={}, DefaultProfile=allreduce, Strict=no)",
                              path && *path ? path : "topo_aware.conf", config.db_path));
  }
  ++config_generation;
  configure_routes(old_routes);
  if (config.db_path != old_db) {
    drop_database();
    writer.reset();
    seam_routes.reset();
    tree.reset();
    fabric.reset();
    snapshot_id.reset();
  }
}

Profile profile_of(const EngineConfig& c, const topo_network_request& r) {
  switch (r.profile) {
    case TOPO_PROFILE_ALLREDUCE:
      return Profile::AllReduce;
    case TOPO_PROFILE_ALLTOALL:
      return Profile::AllToAll;
    case TOPO_PROFILE_MIXED:
      return Profile::Mixed;
    default:
      return c.default_profile;
  }
}

}  // namespace topo::engine
