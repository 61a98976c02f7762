// DeferAbove= in the engine: whether a rank call holds a job back for a
// better placement later (placement/defer.h), with the engine's own
// bookkeeping around the shared ledger: job ids as keys, forgotten when the
// job starts (topo_engine_record) or, once many are kept, a week after.
#pragma once

#include <string>

#include "plugin/engine/engine_state.h"

namespace topo::engine {

// Why DeferAbove= holds the job back now, or "" when it does not; `best`
// is its best placement for question `q` on `map`.
std::string deferral(Engine& e, const NodeMap& map, const Question& q, const topo_engine_job& job,
                     const Placement& best);

}  // namespace topo::engine
