// The running-jobs file of `topoctl place --running`, on a 4-leaf fabric of
// 32 hosts: what it accepts gives jobs whose hosts are busy, each host in
// one job, duties in (0, 1]; what it rejects names a line.
#include <set>

#include <fmt/format.h>

#include "fabric/synthetic.h"
#include "placement/running_file.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const topo::Fabric fabric = topo::make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2");
  const std::string file = "fuzz.running";
  std::string input(topo_fuzz::text(data, size));
  std::istringstream in(input);
  topo::FreeMap free = topo::FreeMap::all_free(fabric, 8);
  try {
    topo::read_running(in, file, fabric, 8, free);
  } catch (const topo::ParseError& e) {
    topo_fuzz::check_parse_error(e, file, topo_fuzz::line_count(input), {});
    return 0;
  }
  std::set<topo::NodeId> seen;
  for (const topo::RunningJob& job : free.running) {
    if (!(job.duty > 0 && job.duty <= 1)) topo_fuzz::fail(fmt::format("duty {} accepted", job.duty));
    for (topo::NodeId h : job.ring) {
      if (!seen.insert(h).second) topo_fuzz::fail(fmt::format("{} in two jobs", fabric.node(h).name));
      if (free.free(h) != 0) topo_fuzz::fail(fmt::format("{} runs a job but is free", fabric.node(h).name));
    }
  }
  return 0;
}
