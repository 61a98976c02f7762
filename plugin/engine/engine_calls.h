// The work behind the C entry points of engine.h, called by engine.cc
// with the arguments checked and the engine's lock held. They throw on
// failure (engine_error.h); `msg` is for what they say on success or on
// an answer that is not an error (no placement, deferred).
#pragma once

#include <cstddef>
#include <cstdint>

#include "plugin/engine/engine_state.h"

namespace topo::engine {

// rank.cc
int rank(Engine& e, const topo_engine_job& job, const int* free_gpus, size_t count, topo_engine_ranking& ranking,
         char* msg, size_t msg_size);

// record.cc
void record(Engine& e, const topo_engine_job& job, const topo_engine_ranking* ranking, long chosen,
            const size_t* allocated, size_t allocated_count, const char* fallback_why, char** ring_order,
            char** nccl_ib_hca);
// The job's traffic joins the running set now, as record() would add it.
void job_started(Engine& e, const topo_engine_job& job, const topo_engine_ranking* ranking, long chosen,
                 const size_t* allocated, size_t allocated_count);
char* ring_text(Engine& e, const size_t* nodes, size_t count);
// The job's NCCL hints as "NAME=value" lines, malloc'd, or nullptr.
char* hints_text(Engine& e, const size_t* nodes, size_t count);

// recover.cc
void recover(Engine& e, topo_engine_started* jobs, size_t count);

// running_jobs.cc
void set_running(Engine& e, const topo_engine_job* jobs, size_t count);
void job_ended(Engine& e, uint32_t job_id);
// What became of the job's traffic, in words.
std::string job_suspended(Engine& e, uint32_t job_id, bool suspended);

}  // namespace topo::engine
