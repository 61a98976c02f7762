// The C ABI of plugin/engine.h over the placement libraries. Every entry
// point is a `guarded` call: exceptions become a status and one line.
#include "plugin/engine.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <memory>
#include <mutex>
#include <new>
#include <system_error>
#include <utility>

#include <sys/stat.h>

#include <fmt/format.h>

#include "db/error.h"
#include "db/placement_store.h"
#include "db/snapshot_store.h"
#include "placement/ring_order.h"
#include "placement/search.h"
#include "placement/traffic.h"
#include "plugin/engine_config.h"
#include "db/health_store.h"
#include "plugin/placement_writer.h"
#include "topology/error.h"

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

// What a rank call keeps for record(): the placements themselves.
struct RankingDetail {
  std::vector<Placement> placements;
  std::optional<int64_t> snapshot_id;
  std::string profile;
};

Profile profile_of(const EngineConfig& c, const topo_network_request& r) {
  switch (r.profile) {
    case TOPO_PROFILE_ALLREDUCE: return Profile::AllReduce;
    case TOPO_PROFILE_ALLTOALL: return Profile::AllToAll;
    case TOPO_PROFILE_MIXED: return Profile::Mixed;
    default: return c.default_profile;
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
  std::optional<int64_t> snapshot_id;
  std::unique_ptr<Fabric> fabric;
  std::unique_ptr<SwitchTree> tree;
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
  std::map<uint32_t, RunningEntry> running;
  RunningTraffic traffic;

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

  ~topo_engine() { writer.reset(); }  // stores what it can before the rest goes

  void drop_database() {
    snapshots.reset();
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
    if (snapshots && writer) return;
    if (!std::filesystem::exists(config.db_path))
      throw EngineError(TOPO_ENGINE_DATABASE,
                        fmt::format("{}: no such database (DbPath in topo_aware.conf; create it with topoctl "
                                    "discover --db {})",
                                    config.db_path, config.db_path));
    try {
      if (!snapshots) snapshots = std::make_unique<SnapshotStore>(config.db_path);
      if (!writer) {
        PlacementWriter::Replayed replayed;
        writer = std::make_unique<PlacementWriter>(config.db_path, config.db_path + ".journal", &replayed);
        if (replayed.added || replayed.already_there || replayed.unreadable_lines)
          replay_notice = fmt::format("{}.journal: {} placement records replayed into the database, {} were "
                                      "there already, {} unreadable lines skipped",
                                      config.db_path, replayed.added, replayed.already_there,
                                      replayed.unreadable_lines);
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
    if (tree && snapshots && !check_now && now - last_check < kSnapshotCheckEvery) return *tree;
    try {
      open_database();
      std::optional<int64_t> latest = snapshots->latest();
      if (!latest)
        throw EngineError(TOPO_ENGINE_NO_FABRIC, fmt::format("{}: holds no fabric snapshot yet (run topoctl discover "
                                                             "--db {})",
                                                             config.db_path, config.db_path));
      HealthStore health(config.db_path);
      std::optional<int64_t> collection = health.newest();
      if (!tree || latest != snapshot_id || collection != health_collection ||
          health_config_generation != config_generation) {
        auto f = std::make_unique<Fabric>(snapshots->load(*latest));
        // Cables whose port counters pass the thresholds count as degraded.
        apply_health(*f, check_health(latest_cable_health(health, *f, *latest), config.health));
        health_collection = collection;
        health_config_generation = config_generation;
        auto t = std::make_unique<SwitchTree>(*f);
        fabric = std::move(f);
        tree = std::move(t);
        snapshot_id = latest;
      }
      last_check = now;
      return *tree;
    } catch (const DbError&) {
      drop_database();
      throw;
    }
  }

  // The node map for the current snapshot, config and node table.
  const NodeMap& current_node_map(bool check_now = false) {
    (void)current_tree(check_now);
    if (node_map.snapshot_id != *snapshot_id || node_map.config_generation != config_generation ||
        node_map.table_generation != table_generation) {
      node_map = build_node_map(*fabric, config, node_names, named);
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
      FreeMap f;
      traffic.sums->write(*fabric, f);
      traffic.load = std::move(f.load);
      traffic.cable_flows = std::move(f.cable_flows);
      traffic.written = true;
    }
    return traffic;
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

}  // namespace

extern "C" {

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
    const NodeMap& m = engine->current_node_map(true);
    std::string notice = engine->take_notice();
    if (m.unknown)
      notice += fmt::format("{}{} of Slurm's nodes are not in fabric snapshot {} (first: '{}')",
                            notice.empty() ? "" : "; ", m.unknown, *engine->snapshot_id, m.first_unknown);
    write_message(msg, msg_size, notice);
    return TOPO_ENGINE_OK;
  });
}

int topo_engine_set_nodes(topo_engine_t* engine, const char* const* names, size_t count, char* msg,
                          size_t msg_size) {
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

bool topo_engine_strict(const topo_engine_t* engine) { return engine && engine->config.strict; }

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
    const SwitchTree& tree = *engine->tree;
    if (count > map.host.size())
      throw EngineError(TOPO_ENGINE_INVALID,
                        fmt::format("topo_engine_rank: {} nodes offered, the node table has {} (call "
                                    "topo_engine_set_nodes when it changes)",
                                    count, map.host.size()));

    FreeMap free;
    free.free_gpus.assign(engine->fabric->node_count(), 0);
    const RunningTraffic& traffic = engine->current_traffic(map);
    free.load = traffic.load;
    free.cable_flows = traffic.cable_flows;
    const int need_gpus = static_cast<int>(std::max<uint32_t>(job->gpus_per_node, 1));
    size_t offered = 0, known = 0, usable = 0;
    for (size_t i = 0; i < count; ++i) {
      if (free_gpus[i] < 0) continue;
      ++offered;
      if (!map.host[i]) continue;
      ++known;
      // A job without GPUs fits any offered host: cons_tres checks cores.
      int gpus = job->gpus_per_node ? free_gpus[i] : 1;
      free.free_gpus[*map.host[i]] = gpus;
      if (gpus >= need_gpus) ++usable;
    }
    if (known == 0)
      throw EngineError(TOPO_ENGINE_NO_FABRIC,
                        fmt::format("none of the {} offered nodes is in fabric snapshot {}{}", offered,
                                    *engine->snapshot_id,
                                    map.unknown ? fmt::format(" (first unknown: '{}')", map.first_unknown) : ""));
    if (usable < job->nodes)
      throw EngineError(TOPO_ENGINE_NO_PLACEMENT,
                        fmt::format("job {}: {} hosts with {} free GPUs known to the fabric, {} needed", job->job_id,
                                    usable, need_gpus, job->nodes));

    PlacementRequest request;
    request.hosts = static_cast<int>(job->nodes);
    request.gpus_per_host = need_gpus;
    request.profile = profile_of(engine->config, job->request);
    if (job->request.max_leaves) request.max_leaves = static_cast<int>(job->request.max_leaves);
    request.one_pod = job->request.pod;
    SearchOptions options;
    options.weights = engine->config.weights;

    auto detail = std::make_unique<RankingDetail>();
    detail->snapshot_id = engine->snapshot_id;
    detail->profile = std::string(name(request.profile));
    for (Placement& p : rank_placements(tree, free, request, engine->config.candidates, options))
      if (p.feasible) detail->placements.push_back(std::move(p));
    if (detail->placements.empty())
      throw EngineError(TOPO_ENGINE_NO_PLACEMENT,
                        fmt::format("job {}: no placement of {} hosts fits the fabric's limits", job->job_id, job->nodes));

    const size_t n = detail->placements.size();
    auto* candidates = static_cast<topo_engine_candidate*>(std::calloc(n, sizeof(topo_engine_candidate)));
    if (!candidates) throw std::bad_alloc();
    ranking->candidates = candidates;
    ranking->count = n;
    ranking->detail = detail.release();
    for (size_t c = 0; c < n; ++c) {
      const Placement& p = static_cast<RankingDetail*>(ranking->detail)->placements[c];
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
    const RankingDetail* detail = ranking ? static_cast<const RankingDetail*>(ranking->detail) : nullptr;
    if (chosen >= 0 && (!detail || static_cast<size_t>(chosen) >= detail->placements.size()))
      throw EngineError(TOPO_ENGINE_INVALID, fmt::format("topo_engine_record: no candidate {}", chosen));

    PlacementRecord r;
    r.job_id = job->job_id;
    r.hosts = names_of(*engine, allocated, allocated_count);
    r.profile = detail ? detail->profile : std::string(name(profile_of(engine->config, job->request)));
    // The job's fabric hosts, when the map can be had (a fallback for a
    // database error has none).
    // The map as the last rank left it: record() never asks the database.
    const NodeMap* map = nullptr;
    if (engine->tree && engine->node_map.snapshot_id == engine->snapshot_id &&
        engine->node_map.config_generation == engine->config_generation &&
        engine->node_map.table_generation == engine->table_generation)
      map = &engine->node_map;
    else
      try {
        map = &engine->current_node_map();
      } catch (const std::exception&) {
      }
    auto host_of = [&](size_t node) -> std::optional<NodeId> {
      return map && node < map->host.size() ? map->host[node] : std::nullopt;
    };

    std::vector<size_t> ring;  // node indices
    if (chosen >= 0) {
      const Placement& p = detail->placements[static_cast<size_t>(chosen)];
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
      r.reasons = p.reasons;
    } else {
      r.fallback = true;
      r.fallback_why = fallback_why ? fallback_why : "";
      // The best ring over the hosts the fabric knows, the others after.
      std::vector<NodeId> known;
      std::vector<size_t> unknown;
      for (size_t i = 0; i < allocated_count; ++i) {
        if (auto h = host_of(allocated[i])) known.push_back(*h);
        else unknown.push_back(allocated[i]);
      }
      if (map) {
        for (NodeId h : topo::ring_order(*engine->tree, known)) ring.push_back(map->node[h]);
        r.snapshot_id = engine->snapshot_id;
      }
      ring.insert(ring.end(), unknown.begin(), unknown.end());
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

int topo_engine_set_running(topo_engine_t* engine, const struct topo_engine_job* jobs, size_t count, char* msg,
                            size_t msg_size) {
  return guarded(msg, msg_size, [&] {
    if (!engine || (count && !jobs)) throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_set_running: missing argument");
    std::lock_guard guard(engine->lock);
    std::map<uint32_t, RunningEntry> now;
    std::vector<uint32_t> to_read;
    for (size_t i = 0; i < count; ++i) {
      auto known = engine->running.find(jobs[i].job_id);
      if (known != engine->running.end()) now[jobs[i].job_id] = known->second;
      else to_read.push_back(jobs[i].job_id);
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
    engine->traffic = RunningTraffic{};  // built whole on the next rank
    return TOPO_ENGINE_OK;
  });
}

int topo_engine_job_ended(topo_engine_t* engine, uint32_t job_id, char* msg, size_t msg_size) {
  return guarded(msg, msg_size, [&] {
    if (!engine) throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_job_ended: no engine");
    std::lock_guard guard(engine->lock);
    if (engine->running.erase(job_id) && engine->traffic.sums) engine->traffic.remove(job_id);
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
