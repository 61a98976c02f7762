// The running jobs as the engine keeps them, and their traffic on the
// fabric, which every rank call's estimates share cables with.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "placement/traffic.h"
#include "plugin/engine/node_map.h"

namespace topo::engine {

// A running job as the engine keeps it: what its traffic needs, in Slurm
// node indices (they outlive a new snapshot; fabric hosts do not).
struct RunningEntry {
  std::vector<size_t> ring;
  Profile profile = Profile::AllReduce;
  int gpus_per_host = 1;
  bool operator==(const RunningEntry&) const = default;
};

// A running job's traffic on the fabric of `map`; nullopt for a job on one
// host (nothing on the fabric) or a ring the fabric cannot carry.
std::optional<JobTraffic> traffic_of(const SwitchTree& tree, const NodeMap& map, const RunningEntry& entry);

// The running jobs' traffic: each job's share, their sums (kept as jobs
// come and go), and the sums as FreeMap carries them (written when they
// changed), for the map they were built on.
struct RunningTraffic {
  std::unique_ptr<TrafficMap> sums;
  std::map<uint32_t, JobTraffic> of_job;
  BackgroundLoad load;
  std::vector<double> cable_flows;
  bool written = false;
  uint64_t writes = 0;  // which write of the engine's load and cable_flows are (0: none)
  int64_t snapshot_id = -1;
  uint64_t config_generation = 0, table_generation = 0;

  // Every running job's traffic on `map`, summed anew.
  static RunningTraffic build(const Fabric& fabric, const SwitchTree& tree, const NodeMap& map,
                              const std::map<uint32_t, RunningEntry>& running);
  bool built_on(const NodeMap& map) const {
    return sums && snapshot_id == map.snapshot_id && config_generation == map.config_generation &&
           table_generation == map.table_generation;
  }
  void add(uint32_t job_id, std::optional<JobTraffic> t);
  void remove(uint32_t job_id);
  // The sums into `load` and `cable_flows`, as the engine's write `write_number`.
  void write(const Fabric& fabric, uint64_t write_number);
};

}  // namespace topo::engine
