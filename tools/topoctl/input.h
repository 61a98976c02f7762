// Where a subcommand takes its fabric from: a stored snapshot (the default,
// the latest one) or a synthetic spec for what-if questions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "topology/fabric.h"

namespace topoctl {

std::string default_db_path();

struct FabricInput {
  std::string db_path = default_db_path();
  std::string snapshot = "latest";
  std::string synthetic;
};

struct LoadedFabric {
  topo::Fabric fabric;
  std::optional<int64_t> snapshot;  // absent for a synthetic fabric
  std::string taken_at;             // UTC time of the snapshot
};

void add_input_options(CLI::App& cmd, FabricInput& input);
LoadedFabric load(const FabricInput& input);

// Adds the --db option alone, for commands that write or list snapshots.
void add_db_option(CLI::App& cmd, std::string& db_path);

// Applies the routing a user asked for (topo::parse_routing_spec) to a
// fabric: "adaptive" drops any tables; "static" keeps the fabric's own
// tables and refuses a fabric that has none; "static:ENGINE" keeps the
// fabric's own tables when they are that engine's, else emulates them.
// Throws std::invalid_argument naming what is wrong.
void apply_routing(topo::Fabric& fabric, const std::string& spec, std::string_view where);

}  // namespace topoctl
