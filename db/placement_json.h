// One home for a placement record's JSON fields, shared by the journal
// (db/placement_journal.cc) and `topoctl job --json`. Each caller adds its
// own key for the snapshot and its own extras (the journal's seq); the rest
// is the same object, so a field added to PlacementRecord is written once.
#pragma once

#include <nlohmann/json.hpp>

#include "db/placement_store.h"

namespace topo {

// Every field of `record` but id and snapshot_id, by their member names.
nlohmann::json placement_record_fields(const PlacementRecord& record);

// The snapshot id as JSON: null when the placement used none.
nlohmann::json snapshot_id_json(const PlacementRecord& record);

}  // namespace topo
