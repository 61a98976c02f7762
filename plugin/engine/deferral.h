// DeferAbove= in the engine: whether a rank call holds a job back for a
// better placement later (placement/defer.h), with the engine's own
// bookkeeping around the shared ledger: job ids as keys, forgotten when the
// job starts (topo_engine_record) or, once many are kept, a week after; and
// the last reason each job was held back, which its placement record keeps.
#pragma once

#include <string>

#include "plugin/engine/engine_state.h"

namespace topo::engine {

// Why DeferAbove= holds the job back now, or "" when it does not; `best`
// is its best placement for question `q` on `map`.
std::string deferral(Engine& e, const NodeMap& map, const Question& q, const topo_engine_job& job,
                     const Placement& best);

// The engine holds `job` back for `why` (what it tells Slurm, without the
// "job N: " in front): kept for the job's placement record.
void note_held_back(Engine& e, const topo_engine_job& job, std::string why);

// `job_id` starts: forgets its deferral, and returns why it was last held
// back, or "" when it never was.
std::string starts(Engine& e, uint32_t job_id);

}  // namespace topo::engine
