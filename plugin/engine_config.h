// topo_aware.conf: what the Slurm plugin's engine is told by the admin.
// The format is described in plugin/engine.h.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "placement/objective.h"
#include "placement/request.h"
#include "topology/host_naming.h"
#include "topology/nic_health.h"
#include "topology/port_health.h"

namespace topo {

struct EngineConfig {
  std::string source;  // the file read, or "" for the defaults
  std::string db_path = "/var/lib/topo-aware/topo.db";
  std::string host_pattern;           // "" : Slurm NodeNames are the fabric's host names
  std::optional<HostPattern> host_regex;  // the whole NodeName must match
  Weights weights;
  Profile default_profile = Profile::AllReduce;
  bool strict = false;
  std::set<std::string> partitions;
  int candidates = 8;
  HealthThresholds health;  // HealthErrorsPerHour, HealthXmitWaitShare
  NicThresholds nic;        // HealthPausesPerSecond, HealthEcnOverMedian, HealthEcnMarksPerSecond

  // The fabric's name for a Slurm NodeName.
  std::string fabric_host(const std::string& node_name) const;
};

// Reads `path`. Throws ParseError(file, line, what) for a bad line and
// std::system_error when the file exists but cannot be read. A file that
// does not exist gives nullopt (the caller uses the defaults).
std::optional<EngineConfig> read_engine_config(const std::string& path);

}  // namespace topo
