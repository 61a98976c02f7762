// Where a subcommand takes its fabric from: a stored snapshot (the default,
// the latest one) or a synthetic spec for what-if questions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "fabric/fabric.h"
#include "health/port_health.h"
#include "placement/request.h"
#include "plugin/engine/engine_config.h"

namespace topoctl {

std::string default_db_path();

struct FabricInput {
  std::string db_path = default_db_path();
  std::string snapshot = "latest";
  std::string synthetic;
  std::string conf;  // topo_aware.conf; "" : kDefaultConf when it exists
};

// The Slurm engine's topo_aware.conf, read by the engine's own reader
// (plugin/engine/engine_config.h), so that topoctl judges cables as the scheduler
// does: a cable whose port counters pass HealthErrorsPerHour or
// HealthXmitWaitShare is degraded in lint, place, show and the rest.
inline constexpr const char* kDefaultConf = "/etc/slurm/topo_aware.conf";

// Adds --conf FILE.
void add_conf_option(CLI::App& cmd, std::string& conf);
// The site's topo_aware.conf (`conf`, kDefaultConf when ""), or the
// defaults when that file does not exist. Throws ParseError for a bad line.
topo::EngineConfig site_config(const std::string& conf);

struct LoadedFabric {
  topo::Fabric fabric;
  std::optional<int64_t> snapshot;  // absent for a synthetic fabric
  std::string taken_at;             // UTC time of the snapshot
};

void add_input_options(CLI::App& cmd, FabricInput& input);
LoadedFabric load(const FabricInput& input);

// Adds the --db option alone, for commands that write or list snapshots.
void add_db_option(CLI::App& cmd, std::string& db_path);

// Adds --routing SPEC: how the fabric routes (apply_routing's specs), with
// the one help text every command shows. An empty `routing` stands for the
// fabric's own routing; a command that defaults to another shows it.
CLI::Option* add_routing_option(CLI::App& cmd, std::string& routing);

// Adds --profile NAME: how a job communicates (profile_option's names),
// with the one help text every command shows; a non-empty `profile` is
// shown as the default.
CLI::Option* add_profile_option(CLI::App& cmd, std::string& profile);

// Applies the routing a user asked for (topo::parse_routing_spec) to a
// fabric: "adaptive" drops any tables; "static" keeps the fabric's own
// tables and refuses a fabric that has none; "static:ENGINE" keeps the
// fabric's own tables when they are that engine's, else emulates them.
// Throws std::invalid_argument naming what is wrong.
void apply_routing(topo::Fabric& fabric, const std::string& spec, std::string_view where);

// The profile a --profile option names (placement/request.h); throws
// std::invalid_argument listing the profiles there are.
topo::Profile profile_option(const std::string& text);

}  // namespace topoctl
