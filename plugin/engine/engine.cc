// The C ABI of plugin/engine/engine.h: each entry point checks its
// arguments, takes the engine's lock and calls the work behind it
// (engine_calls.h) inside `guarded`, so that exceptions become a status
// and one line. The engine itself: engine_state.h.
#include "plugin/engine/engine.h"

#include <cstdlib>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "plugin/engine/engine_calls.h"
#include "plugin/engine/engine_error.h"

using topo::engine::EngineError;
using topo::engine::guarded;
using topo::engine::write_message;

struct topo_engine : topo::engine::Engine {};

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
    if (conf_path && *conf_path) (void)topo::read_engine_config(conf_path);
    engine->configure(conf_path, msg, msg_size);
    return TOPO_ENGINE_OK;
  });
}

int topo_engine_prepare(topo_engine_t* engine, char* msg, size_t msg_size) {
  return guarded(msg, msg_size, [&] {
    if (!engine) throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_prepare: no engine");
    std::lock_guard guard(engine->lock);
    engine->start_watching();
    const topo::engine::NodeMap& m = engine->current_node_map(true);
    // RouteJobs= turned on while jobs run: their tables now. (At start-up
    // the running set is given later, and planned from then.)
    if (!engine->running.empty()) engine->routes_changed(&m);
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
    topo::engine::NodeTable& table = engine->nodes;
    table.names.assign(count, std::string());
    table.named.assign(count, false);
    for (size_t i = 0; i < count; ++i)
      if (names[i]) {
        table.names[i] = names[i];
        table.named[i] = true;
      }
    ++table.generation;
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

void topo_engine_on_routes(topo_engine_t* engine, topo_engine_route_fn notice) {
  if (!engine) return;
  std::lock_guard guard(engine->lock);
  engine->on_routes = notice;
  if (engine->route_writer) {
    topo::engine::RouteWriter::Notice n;
    if (notice) n = [notice](const std::string& line, bool failed) { notice(line.c_str(), failed); };
    engine->route_writer->set_notice(std::move(n));
  }
}

bool topo_engine_strict(const topo_engine_t* engine) { return engine && engine->config.strict; }

const char* topo_engine_holds(const topo_engine_t* engine, const struct topo_engine_job* job) {
  if (job && job->request.segment) return "segments";
  return topo_engine_strict(engine) ? "Strict=yes" : nullptr;
}

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
  topo::Profile p = topo::engine::profile_of(engine ? engine->config : topo::EngineConfig{}, request ? *request : none);
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
    return topo::engine::rank(*engine, *job, free_gpus, count, *ranking, msg, msg_size);
  });
}

void topo_engine_ranking_free(struct topo_engine_ranking* ranking) {
  if (!ranking) return;
  for (size_t c = 0; c < ranking->count; ++c) std::free(ranking->candidates[c].nodes);
  std::free(ranking->candidates);
  delete static_cast<topo::engine::RankingDetail*>(ranking->detail);
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
    topo::engine::record(*engine, *job, ranking, chosen, allocated, allocated_count, fallback_why, ring_order,
                         nccl_ib_hca);
    return TOPO_ENGINE_OK;
  });
}

int topo_engine_job_started(topo_engine_t* engine, const struct topo_engine_job* job,
                            const struct topo_engine_ranking* ranking, long chosen, const size_t* allocated,
                            size_t allocated_count, char* msg, size_t msg_size) {
  return guarded(msg, msg_size, [&] {
    if (!engine || !job || (allocated_count && !allocated))
      throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_job_started: missing argument");
    std::lock_guard guard(engine->lock);
    topo::engine::job_started(*engine, *job, ranking, chosen, allocated, allocated_count);
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
    *ring_order = topo::engine::ring_text(*engine, nodes, count);
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
    *hints = topo::engine::hints_text(*engine, nodes, count);
    return TOPO_ENGINE_OK;
  });
}

int topo_engine_set_running(topo_engine_t* engine, const struct topo_engine_job* jobs, size_t count, char* msg,
                            size_t msg_size) {
  return guarded(msg, msg_size, [&] {
    if (!engine || (count && !jobs))
      throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_set_running: missing argument");
    std::lock_guard guard(engine->lock);
    topo::engine::set_running(*engine, jobs, count);
    return TOPO_ENGINE_OK;
  });
}

int topo_engine_job_ended(topo_engine_t* engine, uint32_t job_id, char* msg, size_t msg_size) {
  return guarded(msg, msg_size, [&] {
    if (!engine) throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_job_ended: no engine");
    std::lock_guard guard(engine->lock);
    topo::engine::job_ended(*engine, job_id);
    return TOPO_ENGINE_OK;
  });
}

int topo_engine_job_suspended(topo_engine_t* engine, uint32_t job_id, bool suspended, char* msg, size_t msg_size) {
  return guarded(msg, msg_size, [&] {
    if (!engine) throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_job_suspended: no engine");
    std::lock_guard guard(engine->lock);
    write_message(msg, msg_size, topo::engine::job_suspended(*engine, job_id, suspended));
    return TOPO_ENGINE_OK;
  });
}

int topo_engine_recover(topo_engine_t* engine, struct topo_engine_started* jobs, size_t count, char* msg,
                        size_t msg_size) {
  return guarded(msg, msg_size, [&] {
    if (!engine || (count && !jobs)) throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_recover: missing argument");
    for (size_t i = 0; i < count; ++i) jobs[i].recorded = false;
    if (!count) return TOPO_ENGINE_OK;
    std::lock_guard guard(engine->lock);
    topo::engine::recover(*engine, jobs, count);
    return TOPO_ENGINE_OK;
  });
}

int topo_engine_flush(topo_engine_t* engine, char* msg, size_t msg_size) {
  return guarded(msg, msg_size, [&] {
    if (!engine) throw EngineError(TOPO_ENGINE_INVALID, "topo_engine_flush: no engine");
    topo::PlacementWriter* writer;
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
