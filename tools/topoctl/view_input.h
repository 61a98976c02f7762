// What draw, serve and metrics share on top of input.h: a database that must
// already exist (they read, never create), the placement records of the jobs
// running on a snapshot, a leaf by name, and files replaced atomically.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "db/placement_store.h"
#include "tools/topoctl/input.h"

namespace topoctl {

// Throws std::invalid_argument when the input is a snapshot and its
// database file does not exist (opening it would create an empty one).
void require_database(const FabricInput& input);
void require_database(const std::string& db_path);

// How many recent placements are read as the candidates for "running".
inline constexpr size_t kRecentPlacements = 1000;

// The placement records taken as running on snapshot `snapshot`: the newest
// record of each job in `running` when given (any snapshot; a job with no
// record is an error), else the newest record of each recent job placed on
// this snapshot and not fallen back; plus the record of every job in
// `wanted` (an error when it has none). `access`: how the database is opened.
std::vector<topo::PlacementRecord> running_records(const std::string& db_path, int64_t snapshot,
                                                   const std::vector<uint32_t>& running,
                                                   const std::vector<uint32_t>& wanted,
                                                   topo::Access access = topo::Access::ReadWrite);

// The leaf switch named `name`; throws std::invalid_argument naming the
// leaves when there is none.
topo::NodeId find_leaf(const topo::Fabric& fabric, std::string_view name);

// Writes `data` to a temporary file beside `path`, then renames it over
// `path`: readers see the old file or the new one, never a half.
void write_atomically(const std::string& path, std::string_view data);

}  // namespace topoctl
