// The C ABI of plugin/engine.h over the placement libraries. Every entry
// point is a `guarded` call: exceptions become a status and one line.
#include "plugin/engine.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <memory>
#include <mutex>
#include <new>
#include <system_error>

#include <sys/stat.h>

#include <fmt/format.h>

#include "db/error.h"
#include "db/placement_store.h"
#include "db/snapshot_store.h"
#include "placement/ring_order.h"
#include "placement/search.h"
#include "plugin/engine_config.h"
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
std::string job_hcas(const Fabric& fabric, const EngineConfig& config, const std::vector<std::string>& nodes) {
  std::optional<std::vector<std::pair<int, std::string>>> common;
  for (const std::string& node : nodes) {
    std::optional<NodeId> host = fabric.find_host(config.fabric_host(node));
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

}  // namespace

struct topo_engine {
  std::mutex lock;
  EngineConfig config;
  // Opened on first use, dropped after a database error so the next call
  // tries again (the admin may have fixed the file).
  std::unique_ptr<SnapshotStore> snapshots;
  std::unique_ptr<PlacementStore> placements;
  std::optional<int64_t> snapshot_id;
  std::unique_ptr<Fabric> fabric;
  std::unique_ptr<SwitchTree> tree;

  // The file the stores have open, and when it last changed: a database
  // replaced under the same name (restored from a backup, moved into place)
  // or rewritten by another process is reopened, so that a damaged file is
  // noticed rather than served from SQLite's cache. The tree is rebuilt
  // only when the newest snapshot id changes.
  struct FileIdentity {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const FileIdentity&) const = default;
  };
  std::optional<FileIdentity> opened_file;

  void drop_database() {
    snapshots.reset();
    placements.reset();
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
    if ((snapshots || placements) && identity(config.db_path) != opened_file) drop_database();
    if (snapshots && placements) return;
    if (!std::filesystem::exists(config.db_path))
      throw EngineError(TOPO_ENGINE_DATABASE,
                        fmt::format("{}: no such database (DbPath in topo_aware.conf; create it with topoctl "
                                    "discover --db {})",
                                    config.db_path, config.db_path));
    try {
      if (!snapshots) snapshots = std::make_unique<SnapshotStore>(config.db_path);
      // Placements are logged from inside job_test: no fsync per record.
      if (!placements) placements = std::make_unique<PlacementStore>(config.db_path, PlacementStore::Options{.sync_each_record = false});
    } catch (...) {
      drop_database();
      throw;
    }
    opened_file = identity(config.db_path);
  }

  // The newest snapshot's tree, rebuilt only when the newest id changed.
  const SwitchTree& current_tree() {
    try {
      open_database();
      std::optional<int64_t> latest = snapshots->latest();
      if (!latest)
        throw EngineError(TOPO_ENGINE_NO_FABRIC, fmt::format("{}: holds no fabric snapshot yet (run topoctl discover "
                                                             "--db {})",
                                                             config.db_path, config.db_path));
      if (!tree || latest != snapshot_id) {
        auto f = std::make_unique<Fabric>(snapshots->load(*latest));
        auto t = std::make_unique<SwitchTree>(*f);
        fabric = std::move(f);
        tree = std::move(t);
        snapshot_id = latest;
      }
      return *tree;
    } catch (const DbError&) {
      drop_database();
      throw;
    }
  }

  PlacementStore& placement_store() {
    open_database();
    return *placements;
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
    if (config.db_path != old_db) {
      drop_database();
      tree.reset();
      fabric.reset();
      snapshot_id.reset();
    }
  }
};

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
    (void)engine->current_tree();
    (void)engine->placement_store();
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

int topo_engine_rank(topo_engine_t* engine, const struct topo_engine_job* job, const char* const* names,
                     const int* free_gpus, size_t host_count, struct topo_engine_ranking* ranking, char* msg,
                     size_t msg_size) {
  if (ranking) *ranking = topo_engine_ranking{};
  return guarded(msg, msg_size, [&] {
    if (!engine || !job || !ranking || (host_count && (!names || !free_gpus)))
      throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_rank: missing argument");
    if (job->nodes == 0) throw EngineError(TOPO_ENGINE_INVALID, fmt::format("job {} asks for no nodes", job->job_id));
    std::lock_guard guard(engine->lock);
    const SwitchTree& tree = engine->current_tree();
    const Fabric& fabric = *engine->fabric;

    FreeMap free;
    free.free_gpus.assign(fabric.node_count(), 0);
    std::map<NodeId, size_t> offered;  // fabric host -> index in the caller's arrays
    size_t unknown = 0, usable = 0;
    std::string first_unknown;
    for (size_t i = 0; i < host_count; ++i) {
      if (!names[i]) continue;
      std::string host = engine->config.fabric_host(names[i]);
      std::optional<NodeId> id = fabric.find_host(host);
      if (!id) {
        if (unknown++ == 0) first_unknown = host;
        continue;
      }
      offered[*id] = i;
      // A job without GPUs fits any offered host: cons_tres checks cores.
      int gpus = job->gpus_per_node ? std::max(free_gpus[i], 0) : 1;
      free.free_gpus[*id] = gpus;
      if (gpus >= static_cast<int>(std::max<uint32_t>(job->gpus_per_node, 1))) ++usable;
    }
    if (offered.empty())
      throw EngineError(TOPO_ENGINE_NO_FABRIC,
                        fmt::format("none of the {} offered hosts is in fabric snapshot {} (first: '{}')",
                                    host_count, *engine->snapshot_id, first_unknown));
    if (usable < job->nodes)
      throw EngineError(TOPO_ENGINE_NO_PLACEMENT,
                        fmt::format("job {}: {} hosts with {} free GPUs known to the fabric, {} needed", job->job_id,
                                    usable, std::max<uint32_t>(job->gpus_per_node, 1), job->nodes));

    PlacementRequest request;
    request.hosts = static_cast<int>(job->nodes);
    request.gpus_per_host = static_cast<int>(std::max<uint32_t>(job->gpus_per_node, 1));
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
    ranking->detail = detail.get();
    for (size_t c = 0; c < n; ++c) {
      const Placement& p = detail->placements[c];
      candidates[c].hosts = static_cast<size_t*>(std::calloc(std::max<size_t>(p.hosts.size(), 1), sizeof(size_t)));
      if (!candidates[c].hosts) {
        detail.release();
        topo_engine_ranking_free(ranking);
        throw std::bad_alloc();
      }
      candidates[c].count = p.hosts.size();
      for (size_t h = 0; h < p.hosts.size(); ++h) candidates[c].hosts[h] = offered.at(p.hosts[h]);
      candidates[c].score = p.score.total;
      candidates[c].estimate_s = p.score.estimate_s;
      candidates[c].ideal_s = p.score.ideal_s;
    }
    detail.release();
    return TOPO_ENGINE_OK;
  });
}

void topo_engine_ranking_free(struct topo_engine_ranking* ranking) {
  if (!ranking) return;
  for (size_t c = 0; c < ranking->count; ++c) std::free(ranking->candidates[c].hosts);
  std::free(ranking->candidates);
  delete static_cast<RankingDetail*>(ranking->detail);
  *ranking = topo_engine_ranking{};
}

int topo_engine_record(topo_engine_t* engine, const struct topo_engine_job* job,
                       const struct topo_engine_ranking* ranking, long chosen, const char* const* allocated,
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
    for (size_t i = 0; i < allocated_count; ++i)
      if (allocated[i]) r.hosts.push_back(allocated[i]);
    r.profile = detail ? detail->profile : std::string(name(profile_of(engine->config, job->request)));
    std::set<std::string> in_job(r.hosts.begin(), r.hosts.end());

    if (chosen >= 0) {
      const Placement& p = detail->placements[static_cast<size_t>(chosen)];
      const Fabric& f = engine->fabric ? *engine->fabric : throw EngineError(TOPO_ENGINE_INTERNAL, "no fabric");
      // Slurm NodeNames of the candidate, by fabric host name.
      std::map<std::string, std::string> node_of;
      for (const std::string& h : r.hosts) node_of[engine->config.fabric_host(h)] = h;
      std::set<std::string> placed;
      for (NodeId h : p.hosts) {
        auto it = node_of.find(f.node(h).name);
        if (it != node_of.end() && placed.insert(it->second).second) r.ring_order.push_back(it->second);
      }
      for (const std::string& h : r.hosts)
        if (!placed.count(h)) r.ring_order.push_back(h);
      r.snapshot_id = detail->snapshot_id;
      r.estimate_s = p.score.estimate_s;
      r.ideal_s = p.score.ideal_s;
      r.reasons = p.reasons;
    } else {
      r.fallback = true;
      r.fallback_why = fallback_why ? fallback_why : "";
      // The best ring over the hosts the fabric knows, the others after.
      std::vector<std::string> unknown;
      try {
        const SwitchTree& tree = engine->current_tree();
        std::vector<NodeId> known;
        std::map<NodeId, std::string> node_of;
        for (const std::string& h : r.hosts) {
          if (auto id = engine->fabric->find_host(engine->config.fabric_host(h))) {
            known.push_back(*id);
            node_of[*id] = h;
          } else {
            unknown.push_back(h);
          }
        }
        for (NodeId h : topo::ring_order(tree, known)) r.ring_order.push_back(node_of[h]);
        r.snapshot_id = engine->snapshot_id;
      } catch (const std::exception&) {
        r.ring_order.clear();
        unknown = r.hosts;  // no fabric: node order
      }
      r.ring_order.insert(r.ring_order.end(), unknown.begin(), unknown.end());
    }

    *ring_order = copy_out(fmt::format("{}", fmt::join(r.ring_order, ",")));
    if (nccl_ib_hca && engine->fabric) {
      std::string hcas = job_hcas(*engine->fabric, engine->config, r.hosts);
      if (!hcas.empty()) *nccl_ib_hca = copy_out(hcas);
    }

    for (std::string& reason : r.reasons)
      for (char& c : reason)
        if (c == '\n') c = ' ';
    try {
      engine->placement_store().record(r);
    } catch (const DbError&) {
      engine->drop_database();
      throw;
    }
    return TOPO_ENGINE_OK;
  });
}

}  // extern "C"
