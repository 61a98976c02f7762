// What the engine keeps between Slurm's calls: the config, the database
// and the newest snapshot's tree (engine_database.cc), Slurm's node table
// and its map onto that snapshot, the running jobs and their traffic, the
// recent answers and the deferrals (engine_state.cc). One lock guards it
// all; the C entry points (engine.cc) take it.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "db/health_store.h"
#include "db/snapshot_store.h"
#include "placement/deferral_ledger.h"
#include "placement/search.h"
#include "plugin/engine/answer_cache.h"
#include "plugin/engine/engine.h"
#include "plugin/engine/engine_config.h"
#include "plugin/engine/node_map.h"
#include "plugin/engine/placement_writer.h"
#include "plugin/engine/route_writer.h"
#include "plugin/engine/running_traffic.h"

namespace topo::engine {

// Why a job was last held back, and when (for forgetting jobs that never start).
struct HeldBack {
  std::string why;
  double at_s = 0;
};

class Engine {
 public:
  ~Engine();

  std::mutex lock;
  EngineConfig config;
  uint64_t config_generation = 1;

  // --- The database and the newest snapshot (engine_database.cc) ---
  // Opened on first use, dropped after a database error so the next call
  // tries again (the admin may have fixed the file).
  std::unique_ptr<SnapshotStore> snapshots;
  // The port counter collections, on a connection of their own opened with
  // the snapshot store: every snapshot check asks it for its newest
  // collection, and opening one (schema check included) costs far more
  // than that question.
  std::unique_ptr<HealthStore> health;
  std::optional<int64_t> snapshot_id;
  // Shared with the answers given on them (Answer).
  std::shared_ptr<const Fabric> fabric;
  std::shared_ptr<const SwitchTree> tree;
  // The seam search's routes on `tree`, kept from decision to decision
  // (placement/seams.h); made anew with it.
  std::unique_ptr<SeamRoutes> seam_routes;
  // What the tree's cable health was read from: the newest port counter
  // collection and the config (its thresholds) at the time.
  std::optional<int64_t> health_collection;
  uint64_t health_config_generation = 0;
  // Lives while DbPath stays the same: it owns the journal, and reopens its
  // own connection after a failure.
  std::unique_ptr<PlacementWriter> writer;
  std::string replay_notice;  // what opening the journal found, said once
  std::optional<std::string> reported_writer_error;
  // Who hears that a snapshot was loaded (the shims log it), or nobody.
  topo_engine_notice_fn on_snapshot = nullptr;

  // Opening would create an empty database: says what is missing instead.
  void open_database();
  // The newest snapshot's tree, rebuilt only when the newest id changed.
  const SwitchTree& current_tree(bool check_now = false);
  // The snapshot watcher (engine_database.cc), started by prepare.
  void start_watching();
  void stop_watching();

  // --- Slurm's jobs on the fabric (engine_state.cc) ---
  NodeTable nodes;  // set_nodes
  NodeMap node_map;
  // Running jobs, by job id, and their traffic (built once per change).
  // A suspended job's entry waits aside, without traffic, for its resume.
  std::map<uint32_t, RunningEntry> running, suspended;
  RunningTraffic traffic;
  Answers answers;
  // Each request's best estimated slowdown on the idle fabric, for
  // DeferAbove= (deferral.cc); dropped with the tree or the map.
  IdleSlowdowns idle_slowdowns;
  // When each job held back by DeferAbove= was first held back, by job id:
  // its share of its time limit counts from then, since the time it queued
  // for lack of hosts is not what deferring costs it (on a saturated
  // cluster every job has queued longer than its share before it fits).
  // Forgotten when the job starts; lost with slurmctld, so a job deferred
  // across a restart waits its share again.
  DeferralLedger<uint32_t> deferred;
  // What the engine last told Slurm (the job's AdminComment) when it held a
  // job back, by job id: DeferAbove= or an NVLink domain to wait for. The
  // job's placement record takes it when the job starts (deferral.h).
  std::unordered_map<uint32_t, HeldBack> held_back;
  Question question;  // the rank call's, kept for its room

  // The node map for the current snapshot, config and node table.
  const NodeMap& current_node_map(bool check_now = false);
  // The running jobs' traffic on the current map: built whole when the map
  // changed or the running set was given, else kept up to date job by job.
  const RunningTraffic& current_traffic(const NodeMap& map);
  // The map as the last rank left it, else the current one, else nullptr
  // (a fallback for a database error has none).
  const NodeMap* map_if_any();
  // The search's view of the fabric: the running traffic, the free GPUs.
  const FreeMap& free_map_for(const RunningTraffic& t, const std::vector<int>& free_gpus);
  // `entry` runs from now on, as far as the traffic model goes; its
  // traffic joins that built on `map`, if any.
  void start_running(uint32_t job_id, RunningEntry entry, const NodeMap* map);

  // --- RouteJobs= (route_writer.h) ---
  // Its thread, while RouteJobs=yes; made anew when a Route key changes.
  std::unique_ptr<RouteWriter> route_writer;
  topo_engine_route_fn on_routes = nullptr;
  // The running set changed: hands the route thread the fabric and the
  // running rings on `map` (nothing without RouteJobs=yes or a map).
  void routes_changed(const NodeMap* map);
  // Starts, restarts or stops the route thread after the config changed.
  void configure_routes(const RouteSettings& before);

  // Reads topo_aware.conf at `path` (the defaults, said in `msg`, when
  // there is none); a new DbPath drops the database and the snapshot.
  void configure(const char* path, char* msg, size_t size);
  // A notice from opening the journal, once, or "".
  std::string take_notice() { return std::exchange(replay_notice, std::string()); }

 private:
  // The file the snapshot store has open, and when it last changed: a
  // database replaced under the same name (restored from a backup, moved
  // into place) or rewritten by another process is reopened, so that a
  // damaged file is noticed rather than served from SQLite's cache. The
  // tree is rebuilt only when the newest snapshot id changes.
  struct FileIdentity {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const FileIdentity&) const = default;
  };
  static std::optional<FileIdentity> identity(const std::string& path);
  std::optional<FileIdentity> opened_file;
  void drop_database();
  void load_tree(int64_t latest, std::optional<int64_t> collection);

  // Asking the database for its newest snapshot costs more than a small
  // placement: a rank call asks at most once a second (prepare always).
  static constexpr std::chrono::milliseconds kSnapshotCheckEvery{1000};
  std::chrono::steady_clock::time_point last_check;

  // The snapshot watcher: once prepare has run (slurmctld start-up), a
  // thread of the engine's looks for a newer snapshot once a second, so
  // that rank calls never ask the database while a snapshot is loaded and
  // the database answers. Without it (a caller that never prepares) a rank
  // call looks itself, at most once a second.
  std::thread watcher;
  std::condition_variable watcher_wake;
  bool watcher_stop = false;
  void watch();
  // Fabrics loaded so far (a newer snapshot, new cable health, a new
  // config), so that the watcher sees that it loaded one.
  uint64_t fabric_loads = 0;
  // The watcher loaded a fabric: with RouteJobs=yes the route thread plans
  // the running rings again from its tables, without waiting for a job to
  // start or end (a cable down, new base tables).
  void routes_on_new_fabric();
  // The watcher's last reason for not reading the database ("": it reads).
  std::string lost_database;
  void say_database_lost(const std::string& why);
  void say_snapshot_loaded() const;

  // The running traffic copied into the search's FreeMap once per change
  // of it (a map of cables); the free GPUs per call.
  FreeMap search_free;
  uint64_t search_free_writes = 0, traffic_writes = 0;
  // The rings estimated on that load and tree so far (objective.h): a
  // search after a job started or ended elsewhere scores many of the same
  // rings again.
  EstimateMemo estimates;
  uint64_t estimates_fabric = 0;  // the fabric_loads they were made on
};

// The job's profile: its request's, else the config's DefaultProfile.
Profile profile_of(const EngineConfig& c, const topo_network_request& r);

}  // namespace topo::engine
