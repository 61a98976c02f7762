// The running-jobs file of `topoctl place --running FILE`: jobs already on
// the fabric, whose traffic the placement keeps clear of.
//
//   # hosts in ring order [profile] [duty=SHARE]
//   gpu[001-004],gpu009 allreduce
//   gpu017,gpu018,gpu025 fsdp duty=0.3
//
// Hosts are a hostlist expression (of no more names than the fabric has
// hosts), in the job's ring order (NODE_RANK order). The profile
// (allreduce, fsdp, alltoall, pipeline, mixed) defaults to allreduce, the
// duty (share of its run spent in collectives) to 0.5. Its hosts are busy
// (whole), as in the busy-hosts file.
#pragma once

#include <istream>
#include <string>

#include "placement/request.h"

namespace topo {

// Appends the jobs to free.running and marks their hosts busy; the caller
// then fills the traffic (placement/traffic.h fill_traffic). Throws
// ParseError naming the file, line and field for an unknown or repeated
// host, a bad profile or duty, or an extra field.
void read_running(std::istream& in, const std::string& filename, const Fabric& fabric, int gpus_per_host,
                  FreeMap& free);
void read_running_file(const std::string& path, const Fabric& fabric, int gpus_per_host, FreeMap& free);

}  // namespace topo
