// The engine's side of the database: opening it (and noticing a file
// replaced under it), loading the newest snapshot's tree with its cables'
// health, and the watcher thread that looks for a newer one.
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "db/error.h"
#include "plugin/engine/engine_error.h"
#include "plugin/engine/engine_state.h"

namespace topo::engine {

Engine::~Engine() {
  stop_watching();
  writer.reset();  // stores what it can before the rest goes
}

void Engine::start_watching() {  // under the lock
  if (watcher.joinable()) return;
  watcher_stop = false;
  watcher = std::thread([this] { watch(); });
}

void Engine::watch() {
  std::unique_lock guard(lock);
  while (!watcher_wake.wait_for(guard, kSnapshotCheckEvery, [this] { return watcher_stop; })) {
    try {
      const uint64_t loads = fabric_loads;
      (void)current_tree(true);
      lost_database.clear();
      if (fabric_loads != loads) routes_on_new_fabric();
    } catch (const std::exception& e) {
      // The next rank call looks again and says why (the database
      // was dropped, or there is no tree); the log hears it once.
      say_database_lost(e.what());
    }
  }
}

// Called by the watcher only, after current_tree returned: mapping the
// running set (map_if_any, which may build the node map and so asks
// current_tree again) from inside load_tree would re-enter it, and a rank
// call is the scheduler's path.
void Engine::routes_on_new_fabric() {
  if (route_writer) routes_changed(map_if_any());
}

void Engine::stop_watching() {
  {
    std::lock_guard guard(lock);
    watcher_stop = true;
  }
  watcher_wake.notify_all();
  if (watcher.joinable()) watcher.join();
}

void Engine::drop_database() {
  snapshots.reset();
  health.reset();
  opened_file.reset();
}

std::optional<Engine::FileIdentity> Engine::identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileIdentity{st.st_dev, st.st_ino, st.st_size,
                      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

void Engine::open_database() {
  if (snapshots && identity(config.db_path) != opened_file) drop_database();
  if (snapshots && health && writer) return;
  if (!std::filesystem::exists(config.db_path))
    throw EngineError(TOPO_ENGINE_DATABASE, fmt::format("{}: no such database (DbPath in topo_aware.conf; create it "
                                                        "with topoctl discover --db {})",
                                                        config.db_path, config.db_path));
  try {
    if (!snapshots) snapshots = std::make_unique<SnapshotStore>(config.db_path);
    if (!health) health = std::make_unique<HealthStore>(config.db_path);
    if (!writer) {
      PlacementWriter::Replayed replayed;
      writer = std::make_unique<PlacementWriter>(config.db_path, config.db_path + ".journal", &replayed);
      if (replayed.added || replayed.already_there || replayed.unreadable_lines)
        replay_notice = fmt::format(
            "{}.journal: {} placement records replayed into the database, {} were "
            "there already, {} unreadable lines skipped",
            config.db_path, replayed.added, replayed.already_there, replayed.unreadable_lines);
    }
  } catch (...) {
    drop_database();
    throw;
  }
  opened_file = identity(config.db_path);
}

const SwitchTree& Engine::current_tree(bool check_now) {
  // The watcher looks once a second: then a rank call reads no clock.
  const bool settled = tree && snapshots && !check_now;
  if (settled && watcher.joinable()) return *tree;
  auto now = std::chrono::steady_clock::now();
  if (settled && now - last_check < kSnapshotCheckEvery) return *tree;
  try {
    open_database();
    std::optional<int64_t> latest = snapshots->latest();
    if (!latest)
      throw EngineError(TOPO_ENGINE_NO_FABRIC, fmt::format("{}: holds no fabric snapshot yet (run topoctl discover "
                                                           "--db {})",
                                                           config.db_path, config.db_path));
    std::optional<int64_t> collection = health->newest();
    if (!tree || latest != snapshot_id || collection != health_collection ||
        health_config_generation != config_generation)
      load_tree(*latest, collection);
    last_check = now;
    return *tree;
  } catch (const DbError&) {
    drop_database();
    throw;
  }
}

// Snapshot `latest` with the cable health of port counter collection
// `collection` (the newest), and what was searched on the tree before it
// dropped.
void Engine::load_tree(int64_t latest, std::optional<int64_t> collection) {
  auto f = std::make_unique<Fabric>(snapshots->load(latest));
  // Cables whose port counters pass the thresholds count as degraded.
  apply_health(*f, check_health(latest_cable_health(*health, *f, latest), config.health));
  apply_nic_health(*f, check_nic_health(latest_nic_rates(*health, *f, latest), config.nic));
  health_collection = collection;
  health_config_generation = config_generation;
  auto t = std::make_unique<SwitchTree>(*f);
  auto routes = std::make_unique<SeamRoutes>(t->paths());
  fabric = std::move(f);
  ++fabric_loads;
  tree = std::move(t);
  seam_routes = std::move(routes);
  answers.clear();  // searched on the old tree's cable health
  idle_slowdowns.clear();
  bool new_snapshot = latest != snapshot_id;
  snapshot_id = latest;
  if (new_snapshot) say_snapshot_loaded();
}

void Engine::say_database_lost(const std::string& why) {
  if (!on_snapshot || why == lost_database) return;
  lost_database = why;
  std::string line = fmt::format("fabric snapshot not readable: {}", why);
  on_snapshot(line.c_str());
}

void Engine::say_snapshot_loaded() const {
  if (!on_snapshot) return;
  std::string line =
      fmt::format("fabric snapshot {} of {} loaded: {} hosts", *snapshot_id, config.db_path, fabric->hosts().size());
  on_snapshot(line.c_str());
}

}  // namespace topo::engine
