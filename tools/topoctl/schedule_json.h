// A schedule file from a real cluster's replay (tests/slurm/replay.sh
// writes it; `topoctl score` judges it):
//   {"policy": "topo-aware", "trace": "...", "scheduler": {name: number},
//    "rejected": [ids], "jobs": [{"id", "gpus", "submit_s", "start_s",
//    "end_s", "ring": [hosts in ring order], "host_gpus": [GPUs per host]}]}
#pragma once

#include <istream>
#include <string>

#include "fabric/fabric.h"
#include "simulation/schedule.h"

namespace topoctl {

// Throws topo::ParseError naming `path` and the key (e.g. "jobs[3].ring")
// that is missing, of the wrong type or out of range, an unknown host,
// times out of order; the trace's name, when given, goes to `trace`.
topo::Schedule read_schedule(std::istream& in, const std::string& path, const topo::Fabric& fabric, std::string& trace);
topo::Schedule read_schedule_file(const std::string& path, const topo::Fabric& fabric, std::string& trace);

}  // namespace topoctl
