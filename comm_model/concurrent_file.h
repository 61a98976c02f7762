// The concurrent-jobs file of `topoctl estimate --concurrent FILE`: jobs
// running beside the one estimated, whose flows share its cables per flow.
//
//   # hosts in ring order [collective] [key=value ...]
//   gpu[002-003] allreduce duty=1
//   gpu004,gpu001 duty=0.5 size=1e9 gpus-per-host=4   # half its time in collectives
//
// Hosts are a hostlist expression (of no more names than the fabric has
// hosts) in the job's ring order, each host once. The collective
// (allreduce, allgather, reducescatter, broadcast, alltoall; also written
// collective=NAME), size= (bytes) and gpus-per-host= default to the
// estimated job's; duty= (the share of its time in collectives, in (0, 1])
// to 1. Each field at most once; '#' starts a comment.
//
// Unlike the running-jobs file of `topoctl place --running`, whose jobs
// are whole training jobs with a profile, these are single collectives:
// the hosts of one may run another (GPUs shared), so hosts may repeat
// across lines.
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "comm_model/neighbours.h"

namespace topo {

// A host's GPUs as a line may give them: far above any machine's.
inline constexpr int kMaxConcurrentGpusPerHost = 1024;

// The jobs, in the file's order, each with `like`'s request but for the
// fields its line gives. Throws ParseError naming the file, line and field
// for an unknown host or a host twice in a ring, an unknown collective, a
// size, duty or GPU count out of range, an unknown or repeated field, or
// input past its bounds (lines of kMaxLineBytes, 64 MiB in all).
std::vector<NeighbourJob> read_concurrent(std::istream& in, const std::string& filename, const Fabric& fabric,
                                          const Request& like);
std::vector<NeighbourJob> read_concurrent_file(const std::string& path, const Fabric& fabric, const Request& like);

}  // namespace topo
