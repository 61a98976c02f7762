// The placement records of jobs as the fabric picture takes them: each
// job's hosts in ring order on this snapshot's fabric, and the Gb/s their
// collectives put on every cable (placement/traffic.h job_traffic: the
// comm_model's load of each job's profile, routed as the fabric routes).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "db/placement_store.h"
#include "tools/view/fabric_scene.h"

namespace topo::view {

struct JobsOnFabric {
  std::vector<JobOnFabric> jobs;
  std::vector<double> cable_gbps;    // by cable id, the busier direction; empty unless asked
  std::vector<std::string> skipped;  // "job 12: host gpu999 is not in the fabric", ...
};

// Jobs whose hosts the fabric does not have are skipped and said so, not
// thrown: a picture of the fabric still helps when one record is stale.
JobsOnFabric jobs_on_fabric(const Fabric& fabric, std::span<const PlacementRecord> records, bool with_load);

}  // namespace topo::view
