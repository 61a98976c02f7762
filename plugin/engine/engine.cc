// The C ABI of plugin/engine/engine.h over the placement libraries. Every entry
// point is a `guarded` call: exceptions become a status and one line.
#include "plugin/engine/engine.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <system_error>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <sys/stat.h>

#include <fmt/format.h>

#include "common/error.h"
#include "db/error.h"
#include "db/health_store.h"
#include "db/placement_store.h"
#include "db/snapshot_store.h"
#include "placement/defer.h"
#include "placement/ring_order.h"
#include "placement/search.h"
#include "placement/traffic.h"
#include "plugin/engine/engine_config.h"
#include "plugin/engine/nccl_hints.h"
#include "plugin/engine/placement_writer.h"

namespace {

using namespace topo;

// An error with the status the caller gets.
struct EngineError : std::runtime_error {
  EngineError(topo_engine_status s, const std::string& what) : std::runtime_error(what), status(s) {}
  topo_engine_status status;
};

void write_message(char* msg, size_t size, std::string_view text) {
  if (!msg || size == 0) return;
  size_t n = std::min(size - 1, text.size());
  std::memcpy(msg, text.data(), n);
  msg[n] = '\0';
}

template <class F>
int guarded(char* msg, size_t size, F&& f) {
  write_message(msg, size, "");
  try {
    return f();
  } catch (const EngineError& e) {
    write_message(msg, size, e.what());
    return e.status;
  } catch (const ParseError& e) {
    write_message(msg, size, e.what());
    return TOPO_ENGINE_CONFIG;
  } catch (const DbError& e) {
    write_message(msg, size, e.what());
    return TOPO_ENGINE_DATABASE;
  } catch (const std::system_error& e) {
    write_message(msg, size, e.what());
    return TOPO_ENGINE_CONFIG;
  } catch (const std::bad_alloc&) {
    write_message(msg, size, "out of memory");
    return TOPO_ENGINE_INTERNAL;
  } catch (const std::exception& e) {
    write_message(msg, size, fmt::format("internal error: {}", e.what()));
    return TOPO_ENGINE_INTERNAL;
  } catch (...) {
    write_message(msg, size, "internal error: an unknown exception");
    return TOPO_ENGINE_INTERNAL;
  }
}

// The answers to the last few distinct rank questions. Slurm asks the same
// question many times: every scheduling pass evaluates each pending job
// again, backfill plans it again, and jobs of one shape queue together, so
// while neither the offered nodes nor the running jobs' traffic change the
// search would give the same candidates again. A question is the job's
// shape and request and the free GPUs per fabric host; the answers are
// dropped whenever the map, the config or the running traffic changes.
struct Question {
  uint32_t hosts = 0, gpus_per_host = 0, max_leaves = 0;
  int candidates = 1;  // how many the search keeps
  bool one_pod = false;
  Profile profile = Profile::AllReduce;
  std::vector<int> free_gpus;  // by fabric NodeId
  bool operator==(const Question&) const = default;
};

// The search runs without its reasons in words (most answers are never
// recorded); a recorded placement's are worded then, from the question and
// the tree the search ran on, which the answer keeps alive.
struct Answer {
  Question question;
  std::vector<Placement> placements;     // feasible ones, best first, without reasons
  std::string no_placement;              // why, when there are none
  bool only_choice = false;              // the offered hosts were exactly the job's: no other candidate exists
  std::shared_ptr<const Fabric> fabric;  // what `tree` reads
  std::shared_ptr<const SwitchTree> tree;
};

class Answers {
 public:
  static constexpr size_t kKept = 16;
  std::shared_ptr<const Answer> find(const Question& q) const {
    for (const auto& a : kept_)
      if (a->question == q) return a;
    return nullptr;
  }
  void add(std::shared_ptr<const Answer> a) {
    if (kept_.size() == kKept) kept_.erase(kept_.begin());
    kept_.push_back(std::move(a));
  }
  void clear() { kept_.clear(); }

 private:
  std::vector<std::shared_ptr<const Answer>> kept_;  // oldest first
};

// What a rank call keeps for record(): the answer it gave (shared with the
// engine's answers to recent questions).
struct RankingDetail {
  std::shared_ptr<const Answer> answer;
  std::optional<int64_t> snapshot_id;
  std::string profile;
};

PlacementRequest request_of(const Question& q) {
  PlacementRequest request;
  request.hosts = static_cast<int>(q.hosts);
  request.gpus_per_host = static_cast<int>(q.gpus_per_host);
  request.profile = q.profile;
  if (q.max_leaves) request.max_leaves = static_cast<int>(q.max_leaves);
  request.one_pod = q.one_pod;
  return request;
}

// The reasons in words of one of a searched answer's placements (none for
// an only choice: nothing was searched).
std::vector<std::string> reasons_of(const Answer& a, const Placement& p) {
  if (a.only_choice) return {};
  FreeMap free;  // the search read no more of it than the free GPUs
  free.free_gpus = a.question.free_gpus;
  return placement_reasons(*a.tree, free, request_of(a.question), p);
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

char* copy_out(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (!out) throw std::bad_alloc();
  std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

// NCCL_IB_HCA for the job: the HCAs hwloc found closest to each host's
// GPUs, by rail; "" unless every host has them and they agree (one
// environment value serves every node).
std::string job_hcas(const Fabric& fabric, const std::vector<std::optional<NodeId>>& hosts) {
  std::optional<std::vector<std::pair<int, std::string>>> common;
  for (const std::optional<NodeId>& host : hosts) {
    if (!host) return "";
    std::set<std::pair<int, std::string>> hcas;
    for (const Gpu& g : fabric.node(*host).gpus)
      if (!g.closest_hca.empty()) hcas.insert({g.rail, g.closest_hca});
    if (hcas.empty()) return "";
    std::vector<std::pair<int, std::string>> sorted(hcas.begin(), hcas.end());
    if (common && *common != sorted) return "";
    common = std::move(sorted);
  }
  if (!common) return "";
  std::vector<std::string> names;
  for (const auto& [rail, name] : *common) names.push_back(name);
  return fmt::format("{}", fmt::join(names, ","));
}

constexpr size_t kNoNode = static_cast<size_t>(-1);

// Slurm's node table mapped onto one snapshot under one config: built once
// per change of any of the three, then read by index only.
struct NodeMap {
  std::vector<std::optional<NodeId>> host;  // per Slurm node index
  std::vector<size_t> node;                 // per fabric NodeId: Slurm node index, or kNoNode
  size_t unknown = 0;                       // named nodes with no fabric host
  std::string first_unknown;
  // What it was built from.
  int64_t snapshot_id = -1;
  uint64_t config_generation = 0, table_generation = 0;
};

NodeMap build_node_map(const Fabric& fabric, const EngineConfig& config, const std::vector<std::string>& names,
                       const std::vector<bool>& named) {
  NodeMap m;
  m.host.assign(names.size(), std::nullopt);
  m.node.assign(fabric.node_count(), kNoNode);
  for (size_t i = 0; i < names.size(); ++i) {
    if (!named[i]) continue;
    std::string host = config.fabric_host(names[i]);
    std::optional<NodeId> id = fabric.find_host(host);
    // Two NodeNames on one fabric host (a HostPattern that folds them):
    // the first keeps it, the second is not on the fabric.
    if (!id || m.node[*id] != kNoNode) {
      if (m.unknown++ == 0) m.first_unknown = host;
      continue;
    }
    m.host[i] = *id;
    m.node[*id] = i;
  }
  return m;
}

// A running job as the engine keeps it: what its traffic needs, in Slurm
// node indices (they outlive a new snapshot; fabric hosts do not).
struct RunningEntry {
  std::vector<size_t> ring;
  Profile profile = Profile::AllReduce;
  int gpus_per_host = 1;
};

// A running job's traffic on the fabric of `map`; nullopt for a job on one
// host (nothing on the fabric) or a ring the fabric cannot carry.
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

// The running jobs' traffic: each job's share, their sums (kept as jobs
// come and go), and the sums as FreeMap carries them (written when they
// changed), for the map they were built on.
struct RunningTraffic {
  std::unique_ptr<TrafficMap> sums;
  std::map<uint32_t, JobTraffic> of_job;
  BackgroundLoad load;
  std::vector<double> cable_flows;
  bool written = false;
  uint64_t writes = 0;  // which write of the engine's load and cable_flows are (0: none)
  int64_t snapshot_id = -1;
  uint64_t config_generation = 0, table_generation = 0;

  bool built_on(const NodeMap& map) const {
    return sums && snapshot_id == map.snapshot_id && config_generation == map.config_generation &&
           table_generation == map.table_generation;
  }
  void add(uint32_t job_id, std::optional<JobTraffic> t) {
    remove(job_id);
    if (!t) return;
    sums->add(*t);
    of_job.emplace(job_id, std::move(*t));
    written = false;
  }
  void remove(uint32_t job_id) {
    auto it = of_job.find(job_id);
    if (it == of_job.end()) return;
    sums->remove(it->second);
    of_job.erase(it);
    written = false;
  }
};

}  // namespace

struct topo_engine {
  std::mutex lock;
  EngineConfig config;
  uint64_t config_generation = 1;
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

  // Slurm's node table (set_nodes) and its map onto the current snapshot.
  std::vector<std::string> node_names;
  std::vector<bool> named;
  uint64_t table_generation = 0;
  NodeMap node_map;

  // Running jobs, by job id, and their traffic (built once per change).
  // A suspended job's entry waits aside, without traffic, for its resume.
  std::map<uint32_t, RunningEntry> running, suspended;
  RunningTraffic traffic;
  Answers answers;
  // Each job shape's best estimated slowdown on the idle fabric, for
  // DeferAbove= (idle_slowdown below); dropped with the tree or the map.
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, bool, Profile>, double> idle_slowdowns;
  // When each job held back by DeferAbove= was first held back, by job id:
  // its share of its time limit counts from then, since the time it queued
  // for lack of hosts is not what deferring costs it (on a saturated
  // cluster every job has queued longer than its share before it fits).
  // Dropped when the job starts; lost with slurmctld, so a job deferred
  // across a restart waits its share again.
  std::unordered_map<uint32_t, double> deferred_since;
  Question question;  // the rank call's, kept for its room
  // The search's view of the fabric: the running traffic copied in once
  // per change of it (a map of cables), the free GPUs per call.
  FreeMap search_free;
  uint64_t search_free_writes = 0, traffic_writes = 0;
  const FreeMap& free_map_for(const RunningTraffic& t, const std::vector<int>& free_gpus) {
    if (search_free_writes != t.writes) {
      search_free.load = t.load;
      search_free.cable_flows = t.cable_flows;
      search_free_writes = t.writes;
    }
    search_free.free_gpus.assign(free_gpus.begin(), free_gpus.end());
    return search_free;
  }

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
  std::optional<FileIdentity> opened_file;

  ~topo_engine() {
    stop_watching();
    writer.reset();  // stores what it can before the rest goes
  }

  // The snapshot watcher: once prepare has run (slurmctld start-up), a
  // thread of the engine's looks for a newer snapshot once a second, so
  // that rank calls never ask the database while a snapshot is loaded and
  // the database answers. Without it (a caller that never prepares) a rank
  // call looks itself, at most once a second.
  std::thread watcher;
  std::condition_variable watcher_wake;
  bool watcher_stop = false;

  void start_watching() {  // under the lock
    if (watcher.joinable()) return;
    watcher_stop = false;
    watcher = std::thread([this] {
      std::unique_lock guard(lock);
      while (!watcher_wake.wait_for(guard, kSnapshotCheckEvery, [this] { return watcher_stop; })) {
        try {
          (void)current_tree(true);
          lost_database.clear();
        } catch (const std::exception& e) {
          // The next rank call looks again and says why (the database
          // was dropped, or there is no tree); the log hears it once.
          say_database_lost(e.what());
        }
      }
    });
  }
  void stop_watching() {
    {
      std::lock_guard guard(lock);
      watcher_stop = true;
    }
    watcher_wake.notify_all();
    if (watcher.joinable()) watcher.join();
  }

  void drop_database() {
    snapshots.reset();
    health.reset();
    opened_file.reset();
  }

  static std::optional<FileIdentity> identity(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    return FileIdentity{st.st_dev, st.st_ino, st.st_size,
                        static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
  }

  // Opening would create an empty database: say what is missing instead.
  void open_database() {
    if (snapshots && identity(config.db_path) != opened_file) drop_database();
    if (snapshots && health && writer) return;
    if (!std::filesystem::exists(config.db_path))
      throw EngineError(TOPO_ENGINE_DATABASE,
                        fmt::format("{}: no such database (DbPath in topo_aware.conf; create it with topoctl "
                                    "discover --db {})",
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

  // Asking the database for its newest snapshot costs more than a small
  // placement: a rank call asks at most once a second (prepare always).
  static constexpr std::chrono::milliseconds kSnapshotCheckEvery{1000};
  std::chrono::steady_clock::time_point last_check;

  // The newest snapshot's tree, rebuilt only when the newest id changed.
  const SwitchTree& current_tree(bool check_now = false) {
    auto now = std::chrono::steady_clock::now();
    if (tree && snapshots && !check_now && (watcher.joinable() || now - last_check < kSnapshotCheckEvery)) return *tree;
    try {
      open_database();
      std::optional<int64_t> latest = snapshots->latest();
      if (!latest)
        throw EngineError(TOPO_ENGINE_NO_FABRIC, fmt::format("{}: holds no fabric snapshot yet (run topoctl discover "
                                                             "--db {})",
                                                             config.db_path, config.db_path));
      std::optional<int64_t> collection = health->newest();
      if (!tree || latest != snapshot_id || collection != health_collection ||
          health_config_generation != config_generation) {
        auto f = std::make_unique<Fabric>(snapshots->load(*latest));
        // Cables whose port counters pass the thresholds count as degraded.
        apply_health(*f, check_health(latest_cable_health(*health, *f, *latest), config.health));
        apply_nic_health(*f, check_nic_health(latest_nic_rates(*health, *f, *latest), config.nic));
        health_collection = collection;
        health_config_generation = config_generation;
        auto t = std::make_unique<SwitchTree>(*f);
        auto routes = std::make_unique<SeamRoutes>(t->paths());
        fabric = std::move(f);
        tree = std::move(t);
        seam_routes = std::move(routes);
        answers.clear();  // searched on the old tree's cable health
        idle_slowdowns.clear();
        bool new_snapshot = latest != snapshot_id;
        snapshot_id = latest;
        if (new_snapshot) say_snapshot_loaded();
      }
      last_check = now;
      return *tree;
    } catch (const DbError&) {
      drop_database();
      throw;
    }
  }

  // Who hears that a snapshot was loaded (the shims log it), or nobody.
  topo_engine_notice_fn on_snapshot = nullptr;
  // The watcher's last reason for not reading the database ("": it reads).
  std::string lost_database;
  void say_database_lost(const std::string& why) {
    if (!on_snapshot || why == lost_database) return;
    lost_database = why;
    std::string line = fmt::format("fabric snapshot not readable: {}", why);
    on_snapshot(line.c_str());
  }
  void say_snapshot_loaded() const {
    if (!on_snapshot) return;
    std::string line =
        fmt::format("fabric snapshot {} of {} loaded: {} hosts", *snapshot_id, config.db_path, fabric->hosts().size());
    on_snapshot(line.c_str());
  }

  // The node map for the current snapshot, config and node table.
  const NodeMap& current_node_map(bool check_now = false) {
    (void)current_tree(check_now);
    if (node_map.snapshot_id != *snapshot_id || node_map.config_generation != config_generation ||
        node_map.table_generation != table_generation) {
      node_map = build_node_map(*fabric, config, node_names, named);
      idle_slowdowns.clear();
      node_map.snapshot_id = *snapshot_id;
      node_map.config_generation = config_generation;
      node_map.table_generation = table_generation;
    }
    return node_map;
  }

  // The running jobs' traffic on the current map: built whole when the map
  // changed or the running set was given, else kept up to date job by job.
  const RunningTraffic& current_traffic(const NodeMap& map) {
    if (!traffic.built_on(map)) {
      traffic = RunningTraffic{};
      traffic.sums = std::make_unique<TrafficMap>(*fabric);
      traffic.snapshot_id = map.snapshot_id;
      traffic.config_generation = map.config_generation;
      traffic.table_generation = map.table_generation;
      for (const auto& [id, entry] : running) traffic.add(id, traffic_of(*tree, map, entry));
    }
    if (!traffic.written) {
      answers.clear();  // they were given on other traffic
      FreeMap f;
      traffic.sums->write(*fabric, f);
      traffic.load = std::move(f.load);
      traffic.cable_flows = std::move(f.cable_flows);
      traffic.written = true;
      traffic.writes = ++traffic_writes;
    }
    return traffic;
  }

  // The job's fabric hosts, when the map can be had (a fallback for a
  // database error has none): the map as the last rank left it, so that
  // recording and ringing Slurm's own choice never ask the database.
  const NodeMap* map_if_any() {
    if (tree && node_map.snapshot_id == snapshot_id && node_map.config_generation == config_generation &&
        node_map.table_generation == table_generation)
      return &node_map;
    try {
      return &current_node_map();
    } catch (const std::exception&) {
      return nullptr;
    }
  }

  void configure(const char* path, char* msg, size_t size) {
    std::optional<EngineConfig> read;
    if (path && *path) read = read_engine_config(path);
    std::string old_db = config.db_path;
    if (read) {
      config = std::move(*read);
    } else {
      config = EngineConfig{};
      write_message(msg, size,
                    fmt::format("{}: no such file; using the defaults (DbPath={}, DefaultProfile=allreduce, Strict=no)",
                                path && *path ? path : "topo_aware.conf", config.db_path));
    }
    ++config_generation;
    if (config.db_path != old_db) {
      drop_database();
      writer.reset();
      seam_routes.reset();
      tree.reset();
      fabric.reset();
      snapshot_id.reset();
    }
  }

  // A notice from opening the journal, once, or "".
  std::string take_notice() { return std::exchange(replay_notice, std::string()); }
};

namespace {

// The NodeNames of node indices, for records and ring strings.
std::vector<std::string> names_of(const topo_engine& e, const size_t* nodes, size_t count) {
  std::vector<std::string> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i)
    if (nodes[i] < e.node_names.size() && e.named[nodes[i]]) out.push_back(e.node_names[nodes[i]]);
  return out;
}

// The job's NCCL hints as "NAME=value" lines, malloc'd, or nullptr.
char* copy_out_hints(topo_engine& e, const size_t* nodes, size_t count) {
  // The leaves of the hosts the fabric knows: two or more, and the ring
  // crosses leaves whatever the others are.
  std::set<int> leaves;
  Routing adaptive;
  const NodeMap* map = e.map_if_any();
  for (size_t i = 0; map && i < count; ++i)
    if (nodes[i] < map->host.size() && map->host[nodes[i]])
      if (int leaf = e.tree->home_leaf(*map->host[nodes[i]]); leaf >= 0) leaves.insert(leaf);
  NcclHints h = nccl_hints(e.config.nccl, map ? e.fabric->routing() : adaptive, static_cast<int>(leaves.size()));
  if (h.empty()) return nullptr;
  std::string text;
  for (const auto& [name, value] : h) text += (text.empty() ? "" : "\n") + name + "=" + value;
  return copy_out(text);
}

// Nodes Slurm chose, in ring order: the best ring over the hosts the
// fabric knows, the others after them in node order (all of them in node
// order without a map).
std::vector<size_t> ring_of_nodes(const topo_engine& e, const NodeMap* map, const size_t* nodes, size_t count) {
  std::vector<NodeId> known;
  std::vector<size_t> ring;
  for (size_t i = 0; i < count; ++i) {
    if (map && nodes[i] < map->host.size() && map->host[nodes[i]])
      known.push_back(*map->host[nodes[i]]);
    else
      ring.push_back(nodes[i]);
  }
  if (known.empty()) return ring;
  std::vector<size_t> ordered;
  ordered.reserve(count);
  for (NodeId h : topo::ring_order(*e.tree, known)) ordered.push_back(map->node[h]);
  ordered.insert(ordered.end(), ring.begin(), ring.end());
  return ordered;
}

// The candidates for a question not asked since the traffic last changed.
// When the offered hosts that can take the job are exactly as many as it
// needs there is one choice: it is scored and ringed, not searched for.
std::shared_ptr<const Answer> answer_question(topo_engine& e, const RunningTraffic& traffic, const Question& q,
                                              size_t usable) {
  const SwitchTree& tree = *e.tree;
  const FreeMap& free = e.free_map_for(traffic, q.free_gpus);
  const PlacementRequest request = request_of(q);

  auto answer = std::make_shared<Answer>();
  answer->question = q;
  answer->fabric = e.fabric;
  answer->tree = e.tree;
  std::vector<NodeId> only;
  if (usable == q.hosts)
    for (NodeId h = 0; h < free.free_gpus.size(); ++h)
      if (free.free_gpus[h] >= request.gpus_per_host && eligible(tree, free, request, h)) only.push_back(h);
  if (!only.empty() && only.size() == q.hosts) {
    answer->only_choice = true;
    Placement p = make_placement(tree, free, request, std::move(only), e.config.weights);
    if (within_limits(p, request))
      answer->placements.push_back(std::move(p));
    else
      answer->no_placement = fmt::format("the only {} hosts that fit break the request's limits", q.hosts);
  } else {
    SearchOptions options;
    options.weights = e.config.weights;
    options.with_reasons = false;  // worded for the one recorded (reasons_of); an infeasible one still says why
    std::string why;
    for (Placement& p : rank_placements(tree, free, request, q.candidates, options, e.seam_routes.get())) {
      if (p.feasible)
        answer->placements.push_back(std::move(p));
      else if (why.empty() && !p.reasons.empty())
        why = p.reasons.front();
    }
    if (answer->placements.empty())
      answer->no_placement =
          fmt::format("no placement of {} hosts fits the fabric's limits{}{}", q.hosts, why.empty() ? "" : ": ", why);
  }
  return answer;
}

// The job's best estimated slowdown with every host Slurm knows free and
// nothing running: what no wait can beat (placement/defer.h). 1 when that
// search finds nothing or has no estimate.
double idle_slowdown(topo_engine& e, const NodeMap& map, const Question& q) {
  auto [it, added] = e.idle_slowdowns.try_emplace({q.hosts, q.gpus_per_host, q.max_leaves, q.one_pod, q.profile}, 1.0);
  if (!added) return it->second;
  FreeMap idle;
  idle.free_gpus.assign(e.fabric->node_count(), 0);
  for (const std::optional<NodeId>& h : map.host)
    if (h) idle.free_gpus[*h] = static_cast<int>(q.gpus_per_host);
  SearchOptions options;
  options.weights = e.config.weights;
  options.with_reasons = false;
  Placement best = place(*e.tree, idle, request_of(q), options);
  if (best.feasible && best.score.ideal_s > 0) it->second = best.score.slowdown;
  return it->second;
}

// A job cancelled while deferred never starts, so its entry in
// deferred_since would stay: past kKeptDeferrals entries, those of jobs
// first deferred over a week ago go (a week past any share a job waiting
// for a placement is likely to have).
void forget_stale_deferrals(topo_engine& e, double now_s) {
  constexpr size_t kKeptDeferrals = 10000;
  constexpr double kWeek_s = 7 * 24 * 3600.0;
  if (e.deferred_since.size() < kKeptDeferrals) return;
  std::erase_if(e.deferred_since, [&](const auto& entry) { return now_s - entry.second > kWeek_s; });
}

// Why DeferAbove= holds the job back now, or "" when it does not.
std::string deferral(topo_engine& e, const NodeMap& map, const Question& q, const topo_engine_job& job,
                     const Placement& best) {
  const DeferRule& rule = e.config.defer;
  if (job.time_limit_s <= 0) return "";
  auto since = e.deferred_since.find(job.job_id);
  const double deferred_s = since == e.deferred_since.end() ? 0 : std::max(0.0, job.now_s - since->second);
  double idle = 1;
  if (!defer(
          rule, best, [&] { return idle = idle_slowdown(e, map, q); }, deferred_s, job.time_limit_s))
    return "";
  if (since == e.deferred_since.end()) {
    forget_stale_deferrals(e, job.now_s);
    e.deferred_since.emplace(job.job_id, job.now_s);
  }
  return fmt::format(
      "deferred: its best placement now is estimated at {:.2f}x its ideal, more than "
      "DeferAbove={} times its best on the idle fabric ({:.2f}x); deferred for {:.0f} s of {:.0f} "
      "(DeferShare={} of a time limit of {:.0f} s)",
      best.score.slowdown, rule.above_slowdown, idle, deferred_s, rule.max_wait_share * job.time_limit_s,
      rule.max_wait_share, job.time_limit_s);
}

// placed_at ("2026-12-03T08:00:00Z") as seconds since the epoch; 0 when unreadable.
int64_t placed_at_seconds(const std::string& placed_at) {
  std::tm tm{};
  if (!strptime(placed_at.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) return 0;
  return static_cast<int64_t>(timegm(&tm));
}

// The record a started job would have had, rebuilt after a restart from
// what Slurm saved with the job: its ring and nodes. The search's reasons
// are gone; a placed job's estimate is computed again, on today's traffic.
PlacementRecord recovered_record(topo_engine& e, const NodeMap* map, const topo_engine_started& s) {
  PlacementRecord r;
  r.job_id = s.job.job_id;
  r.hosts = names_of(e, s.allocated, s.allocated_count);
  r.ring_order = names_of(e, s.ring, s.ring_count);
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
  const RunningTraffic& traffic = e.current_traffic(*map);
  FreeMap free;
  free.free_gpus.assign(e.fabric->node_count(), 0);
  free.load = traffic.load;
  free.cable_flows = traffic.cable_flows;
  PlacementRequest request;
  request.hosts = static_cast<int>(hosts.size());
  request.gpus_per_host = static_cast<int>(std::max<uint32_t>(s.job.gpus_per_node, 1));
  request.profile = profile;
  Score sc = score(*e.tree, free, request, hosts, e.config.weights);
  r.estimate_s = sc.estimate_s;
  r.ideal_s = sc.ideal_s;
  return r;
}
}  // namespace

extern "C" {

int topo_engine_recover(topo_engine_t* engine, struct topo_engine_started* jobs, size_t count, char* msg,
                        size_t msg_size) {
  return guarded(msg, msg_size, [&] {
    if (!engine || (count && !jobs)) throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_recover: missing argument");
    for (size_t i = 0; i < count; ++i) jobs[i].recorded = false;
    if (!count) return TOPO_ENGINE_OK;
    std::lock_guard guard(engine->lock);
    engine->open_database();
    // What record() queued is in the database first, or it would be missed.
    if (auto why = engine->writer->flush()) throw EngineError(TOPO_ENGINE_DATABASE, *why);
    PlacementStore store(engine->config.db_path);
    const NodeMap* map = engine->map_if_any();
    for (size_t i = 0; i < count; ++i) {
      topo_engine_started& s = jobs[i];
      if ((s.ring_count && !s.ring) || (s.allocated_count && !s.allocated))
        throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_recover: missing nodes");
      // This run's record was written when it started or later; an older
      // one is a previous run's (the job was requeued since).
      std::optional<PlacementRecord> latest = store.latest_for_job(s.job.job_id);
      if (latest && placed_at_seconds(latest->placed_at) >= s.started_at) continue;
      engine->writer->submit(recovered_record(*engine, map, s));
      s.recorded = true;
      RunningEntry& entry = engine->running[s.job.job_id];
      entry.ring.assign(s.ring, s.ring + s.ring_count);
      entry.profile = profile_of(engine->config, s.job.request);
      entry.gpus_per_host = static_cast<int>(std::max<uint32_t>(s.job.gpus_per_node, 1));
      if (map && engine->traffic.built_on(*map))
        engine->traffic.add(s.job.job_id, traffic_of(*engine->tree, *map, entry));
    }
    return TOPO_ENGINE_OK;
  });
}

int topo_engine_open(const char* conf_path, topo_engine_t** engine, char* msg, size_t msg_size) {
  return guarded(msg, msg_size, [&] {
    if (!engine) throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_open: no place for the engine");
    *engine = nullptr;
    auto e = std::make_unique<topo_engine>();
    e->configure(conf_path, msg, msg_size);
    *engine = e.release();
    return TOPO_ENGINE_OK;
  });
}

int topo_engine_reconfigure(topo_engine_t* engine, const char* conf_path, char* msg, size_t msg_size) {
  return guarded(msg, msg_size, [&] {
    if (!engine) throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_reconfigure: no engine");
    std::lock_guard guard(engine->lock);
    // Read first: a bad file leaves the running config alone.
    if (conf_path && *conf_path) (void)read_engine_config(conf_path);
    engine->configure(conf_path, msg, msg_size);
    return TOPO_ENGINE_OK;
  });
}

int topo_engine_prepare(topo_engine_t* engine, char* msg, size_t msg_size) {
  return guarded(msg, msg_size, [&] {
    if (!engine) throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_prepare: no engine");
    std::lock_guard guard(engine->lock);
    engine->start_watching();
    const NodeMap& m = engine->current_node_map(true);
    std::string notice = engine->take_notice();
    if (m.unknown)
      notice += fmt::format("{}{} of Slurm's nodes are not in fabric snapshot {} (first: '{}')",
                            notice.empty() ? "" : "; ", m.unknown, *engine->snapshot_id, m.first_unknown);
    write_message(msg, msg_size, notice);
    return TOPO_ENGINE_OK;
  });
}

int topo_engine_set_nodes(topo_engine_t* engine, const char* const* names, size_t count, char* msg, size_t msg_size) {
  return guarded(msg, msg_size, [&] {
    if (!engine || (count && !names)) throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_set_nodes: missing argument");
    std::lock_guard guard(engine->lock);
    engine->node_names.assign(count, std::string());
    engine->named.assign(count, false);
    for (size_t i = 0; i < count; ++i)
      if (names[i]) {
        engine->node_names[i] = names[i];
        engine->named[i] = true;
      }
    ++engine->table_generation;
    return TOPO_ENGINE_OK;
  });
}

void topo_engine_close(topo_engine_t* engine) {
  try {
    delete engine;
  } catch (...) {
  }
}

void topo_engine_on_snapshot(topo_engine_t* engine, topo_engine_notice_fn notice) {
  if (!engine) return;
  std::lock_guard guard(engine->lock);
  engine->on_snapshot = notice;
}

bool topo_engine_strict(const topo_engine_t* engine) { return engine && engine->config.strict; }

bool topo_engine_defers(const topo_engine_t* engine) { return engine && engine->config.defer.enabled(); }

bool topo_engine_partition_selected(const topo_engine_t* engine, const char* partition) {
  try {
    return engine && partition && engine->config.partitions.count(partition) > 0;
  } catch (...) {
    return false;
  }
}

const char* topo_engine_profile(const topo_engine_t* engine, const struct topo_network_request* request) {
  static const topo_network_request none{};
  Profile p = profile_of(engine ? engine->config : EngineConfig{}, request ? *request : none);
  return name(p).data();  // names are string literals
}

int topo_engine_rank(topo_engine_t* engine, const struct topo_engine_job* job, const int* free_gpus, size_t count,
                     struct topo_engine_ranking* ranking, char* msg, size_t msg_size) {
  if (ranking) *ranking = topo_engine_ranking{};
  return guarded(msg, msg_size, [&] {
    if (!engine || !job || !ranking || (count && !free_gpus))
      throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_rank: missing argument");
    if (job->nodes == 0) throw EngineError(TOPO_ENGINE_INVALID, fmt::format("job {} asks for no nodes", job->job_id));
    std::lock_guard guard(engine->lock);
    const NodeMap& map = engine->current_node_map();
    if (count > map.host.size())
      throw EngineError(TOPO_ENGINE_INVALID,
                        fmt::format("topo_engine_rank: {} nodes offered, the node table has {} (call "
                                    "topo_engine_set_nodes when it changes)",
                                    count, map.host.size()));

    const RunningTraffic& traffic = engine->current_traffic(map);
    const int need_gpus = static_cast<int>(std::max<uint32_t>(job->gpus_per_node, 1));
    Question& question = engine->question;  // its vector's room is kept from call to call
    question.hosts = job->nodes;
    question.gpus_per_host = static_cast<uint32_t>(need_gpus);
    question.max_leaves = job->request.max_leaves;
    question.one_pod = job->request.pod;
    question.profile = profile_of(engine->config, job->request);
    question.candidates = job->all_candidates ? std::max(1, engine->config.candidates) : 1;
    question.free_gpus.assign(engine->fabric->node_count(), 0);
    size_t offered = 0, known = 0, usable = 0;
    for (size_t i = 0; i < count; ++i) {
      if (free_gpus[i] < 0) continue;
      ++offered;
      if (!map.host[i]) continue;
      ++known;
      // A job without GPUs fits any offered host: cons_tres checks cores.
      int gpus = job->gpus_per_node ? free_gpus[i] : 1;
      question.free_gpus[*map.host[i]] = gpus;
      if (gpus >= need_gpus) ++usable;
    }
    if (known == 0)
      throw EngineError(
          TOPO_ENGINE_NO_FABRIC,
          fmt::format("none of the {} offered nodes is in fabric snapshot {}{}", offered, *engine->snapshot_id,
                      map.unknown ? fmt::format(" (first unknown: '{}')", map.first_unknown) : ""));
    if (usable < job->nodes) {
      write_message(msg, msg_size,
                    fmt::format("job {}: {} hosts with {} free GPUs known to the fabric, {} needed", job->job_id,
                                usable, need_gpus, job->nodes));
      return TOPO_ENGINE_NO_PLACEMENT;
    }

    std::shared_ptr<const Answer> answer = engine->answers.find(question);
    ranking->answered_before = answer != nullptr;
    if (!answer) {
      answer = answer_question(*engine, traffic, question, usable);
      engine->answers.add(answer);
    }
    ranking->more = question.candidates < engine->config.candidates && !answer->only_choice;
    if (answer->placements.empty()) {
      write_message(msg, msg_size, fmt::format("job {}: {}", job->job_id, answer->no_placement));
      return TOPO_ENGINE_NO_PLACEMENT;
    }
    if (std::string why = deferral(*engine, map, question, *job, answer->placements.front()); !why.empty()) {
      ranking->more = false;
      write_message(msg, msg_size, fmt::format("job {}: {}", job->job_id, why));
      return TOPO_ENGINE_DEFERRED;
    }
    auto detail = std::make_unique<RankingDetail>();
    detail->snapshot_id = engine->snapshot_id;
    detail->profile = std::string(name(question.profile));
    detail->answer = std::move(answer);

    const size_t n = detail->answer->placements.size();
    auto* candidates = static_cast<topo_engine_candidate*>(std::calloc(n, sizeof(topo_engine_candidate)));
    if (!candidates) throw std::bad_alloc();
    ranking->candidates = candidates;
    ranking->count = n;
    ranking->detail = detail.release();
    for (size_t c = 0; c < n; ++c) {
      const Placement& p = static_cast<RankingDetail*>(ranking->detail)->answer->placements[c];
      candidates[c].nodes = static_cast<size_t*>(std::calloc(std::max<size_t>(p.hosts.size(), 1), sizeof(size_t)));
      if (!candidates[c].nodes) {
        topo_engine_ranking_free(ranking);
        throw std::bad_alloc();
      }
      candidates[c].count = p.hosts.size();
      for (size_t h = 0; h < p.hosts.size(); ++h) candidates[c].nodes[h] = map.node[p.hosts[h]];
      candidates[c].score = p.score.total;
      candidates[c].estimate_s = p.score.estimate_s;
      candidates[c].ideal_s = p.score.ideal_s;
    }
    return TOPO_ENGINE_OK;
  });
}

void topo_engine_ranking_free(struct topo_engine_ranking* ranking) {
  if (!ranking) return;
  for (size_t c = 0; c < ranking->count; ++c) std::free(ranking->candidates[c].nodes);
  std::free(ranking->candidates);
  delete static_cast<RankingDetail*>(ranking->detail);
  *ranking = topo_engine_ranking{};
}

int topo_engine_record(topo_engine_t* engine, const struct topo_engine_job* job,
                       const struct topo_engine_ranking* ranking, long chosen, const size_t* allocated,
                       size_t allocated_count, const char* fallback_why, char** ring_order, char** nccl_ib_hca,
                       char* msg, size_t msg_size) {
  if (ring_order) *ring_order = nullptr;
  if (nccl_ib_hca) *nccl_ib_hca = nullptr;
  return guarded(msg, msg_size, [&] {
    if (!engine || !job || !ring_order || (allocated_count && !allocated))
      throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_record: missing argument");
    std::lock_guard guard(engine->lock);
    engine->deferred_since.erase(job->job_id);  // it starts
    const RankingDetail* detail = ranking ? static_cast<const RankingDetail*>(ranking->detail) : nullptr;
    if (chosen >= 0 && (!detail || static_cast<size_t>(chosen) >= detail->answer->placements.size()))
      throw EngineError(TOPO_ENGINE_INVALID, fmt::format("topo_engine_record: no candidate {}", chosen));

    PlacementRecord r;
    r.job_id = job->job_id;
    r.hosts = names_of(*engine, allocated, allocated_count);
    r.profile = detail ? detail->profile : std::string(name(profile_of(engine->config, job->request)));
    const NodeMap* map = engine->map_if_any();
    auto host_of = [&](size_t node) -> std::optional<NodeId> {
      return map && node < map->host.size() ? map->host[node] : std::nullopt;
    };

    std::vector<size_t> ring;  // node indices
    if (chosen >= 0) {
      const Placement& p = detail->answer->placements[static_cast<size_t>(chosen)];
      const topo_engine_candidate& c = ranking->candidates[chosen];
      // The candidate's ring (node indices fixed at rank time, whatever
      // snapshot is current now), then any node Slurm added outside it.
      std::set<size_t> in_job(allocated, allocated + allocated_count);
      for (size_t i = 0; i < c.count; ++i)
        if (in_job.erase(c.nodes[i])) ring.push_back(c.nodes[i]);
      for (size_t i = 0; i < allocated_count; ++i)
        if (in_job.erase(allocated[i])) ring.push_back(allocated[i]);
      r.snapshot_id = detail->snapshot_id;
      r.estimate_s = p.score.estimate_s;
      r.ideal_s = p.score.ideal_s;
      r.reasons = reasons_of(*detail->answer, p);
    } else {
      r.fallback = true;
      r.fallback_why = fallback_why ? fallback_why : "";
      ring = ring_of_nodes(*engine, map, allocated, allocated_count);
      if (map) r.snapshot_id = engine->snapshot_id;
    }
    r.ring_order = names_of(*engine, ring.data(), ring.size());
    // Running from now on, as far as the traffic model goes.
    RunningEntry& entry = engine->running[job->job_id];
    entry.ring = ring;
    entry.profile = detail ? *parse_profile(detail->profile) : profile_of(engine->config, job->request);
    entry.gpus_per_host = static_cast<int>(std::max<uint32_t>(job->gpus_per_node, 1));
    if (map && engine->traffic.built_on(*map)) engine->traffic.add(job->job_id, traffic_of(*engine->tree, *map, entry));

    *ring_order = copy_out(fmt::format("{}", fmt::join(r.ring_order, ",")));
    if (nccl_ib_hca && map) {
      std::vector<std::optional<NodeId>> hosts;
      for (size_t i = 0; i < allocated_count; ++i) hosts.push_back(host_of(allocated[i]));
      std::string hcas = job_hcas(*engine->fabric, hosts);
      if (!hcas.empty()) *nccl_ib_hca = copy_out(hcas);
    }

    for (std::string& reason : r.reasons)
      for (char& c : reason)
        if (c == '\n') c = ' ';
    if (!engine->writer) engine->open_database();
    engine->writer->submit(std::move(r));
    // Stored later. A database that refuses them is said once per new
    // reason, not for every record while it lasts.
    std::optional<std::string> why = engine->writer->last_error();
    if (why != engine->reported_writer_error) {
      engine->reported_writer_error = why;
      if (why)
        throw EngineError(TOPO_ENGINE_DATABASE,
                          fmt::format("placement journaled; storing it in the database waits: {}", *why));
    }
    return TOPO_ENGINE_OK;
  });
}

int topo_engine_ring(topo_engine_t* engine, const size_t* nodes, size_t count, char** ring_order, char* msg,
                     size_t msg_size) {
  if (ring_order) *ring_order = nullptr;
  return guarded(msg, msg_size, [&] {
    if (!engine || !ring_order || (count && !nodes))
      throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_ring: missing argument");
    std::lock_guard guard(engine->lock);
    std::vector<size_t> ring = ring_of_nodes(*engine, engine->map_if_any(), nodes, count);
    *ring_order = copy_out(fmt::format("{}", fmt::join(names_of(*engine, ring.data(), ring.size()), ",")));
    return TOPO_ENGINE_OK;
  });
}

int topo_engine_nccl_hints(topo_engine_t* engine, const size_t* nodes, size_t count, char** hints, char* msg,
                           size_t msg_size) {
  if (hints) *hints = nullptr;
  return guarded(msg, msg_size, [&] {
    if (!engine || !hints || (count && !nodes))
      throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_nccl_hints: missing argument");
    std::lock_guard guard(engine->lock);
    *hints = copy_out_hints(*engine, nodes, count);
    return TOPO_ENGINE_OK;
  });
}

int topo_engine_set_running(topo_engine_t* engine, const struct topo_engine_job* jobs, size_t count, char* msg,
                            size_t msg_size) {
  return guarded(msg, msg_size, [&] {
    if (!engine || (count && !jobs))
      throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_set_running: missing argument");
    std::lock_guard guard(engine->lock);
    std::map<uint32_t, RunningEntry> now;
    std::vector<uint32_t> to_read;
    for (size_t i = 0; i < count; ++i) {
      auto known = engine->running.find(jobs[i].job_id);
      if (known != engine->running.end())
        now[jobs[i].job_id] = known->second;
      else
        to_read.push_back(jobs[i].job_id);
    }
    if (!to_read.empty()) {
      // Their records: the journal a crash left was replayed when the
      // database was opened; what record() queued since is flushed first.
      engine->open_database();
      if (auto why = engine->writer->flush()) throw EngineError(TOPO_ENGINE_DATABASE, *why);
      std::map<std::string, size_t> index;
      for (size_t i = 0; i < engine->node_names.size(); ++i)
        if (engine->named[i]) index.emplace(engine->node_names[i], i);
      PlacementStore store(engine->config.db_path);
      for (size_t i = 0; i < count; ++i) {
        if (now.count(jobs[i].job_id)) continue;
        std::optional<PlacementRecord> r = store.latest_for_job(jobs[i].job_id);
        if (!r) continue;
        RunningEntry entry;
        for (const std::string& name : r->ring_order)
          if (auto it = index.find(name); it != index.end()) entry.ring.push_back(it->second);
        entry.profile = parse_profile(r->profile).value_or(profile_of(engine->config, jobs[i].request));
        entry.gpus_per_host = static_cast<int>(std::max<uint32_t>(jobs[i].gpus_per_node, 1));
        now[jobs[i].job_id] = std::move(entry);
      }
    }
    engine->running = std::move(now);
    engine->suspended.clear();
    engine->traffic = RunningTraffic{};  // built whole on the next rank
    return TOPO_ENGINE_OK;
  });
}

int topo_engine_job_ended(topo_engine_t* engine, uint32_t job_id, char* msg, size_t msg_size) {
  return guarded(msg, msg_size, [&] {
    if (!engine) throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_job_ended: no engine");
    std::lock_guard guard(engine->lock);
    engine->suspended.erase(job_id);
    if (engine->running.erase(job_id) && engine->traffic.sums) engine->traffic.remove(job_id);
    return TOPO_ENGINE_OK;
  });
}

int topo_engine_job_suspended(topo_engine_t* engine, uint32_t job_id, bool suspended, char* msg, size_t msg_size) {
  return guarded(msg, msg_size, [&] {
    if (!engine) throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_job_suspended: no engine");
    std::lock_guard guard(engine->lock);
    auto& from = suspended ? engine->running : engine->suspended;
    auto& to = suspended ? engine->suspended : engine->running;
    auto it = from.find(job_id);
    if (it == from.end()) return TOPO_ENGINE_OK;  // not placed by the engine, or not running
    RunningEntry& entry = to[job_id] = std::move(it->second);
    from.erase(it);
    if (suspended) {
      if (engine->traffic.sums) engine->traffic.remove(job_id);
    } else if (const NodeMap* map = engine->map_if_any(); map && engine->traffic.built_on(*map)) {
      engine->traffic.add(job_id, traffic_of(*engine->tree, *map, entry));
    }
    write_message(msg, msg_size,
                  fmt::format("job {} {}: {} running jobs' traffic on the fabric model, {} suspended", job_id,
                              suspended ? "suspended, its traffic taken out" : "resumed, its traffic back",
                              engine->running.size(), engine->suspended.size()));
    return TOPO_ENGINE_OK;
  });
}

int topo_engine_flush(topo_engine_t* engine, char* msg, size_t msg_size) {
  return guarded(msg, msg_size, [&] {
    if (!engine) throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_flush: no engine");
    PlacementWriter* writer;
    {
      std::lock_guard guard(engine->lock);
      writer = engine->writer.get();
    }
    if (!writer) return TOPO_ENGINE_OK;
    // Not under the engine's lock: ranking goes on meanwhile. The writer
    // lives until close or a DbPath change, which the caller does not race.
    if (auto why = writer->flush()) throw EngineError(TOPO_ENGINE_DATABASE, *why);
    return TOPO_ENGINE_OK;
  });
}

}  // extern "C"
