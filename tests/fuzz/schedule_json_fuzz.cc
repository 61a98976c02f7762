// A real cluster's schedule (`topoctl score`), on a 4-leaf fabric of 32
// hosts: what it accepts has jobs on known hosts, times in order and one
// GPU count per host; what it rejects names the key (JSON has no lines
// worth naming: the error gives the path, "jobs[3].ring").
#include <sstream>

#include <fmt/format.h>

#include "fabric/synthetic.h"
#include "tests/fuzz/fuzz_input.h"
#include "tools/topoctl/schedule_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const topo::Fabric fabric = topo::make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2");
  const std::string file = "fuzz.json";
  std::string input(topo_fuzz::text(data, size));
  std::istringstream in(input);
  std::string trace;
  topo::Schedule s;
  try {
    s = topoctl::read_schedule(in, file, fabric, trace);
  } catch (const topo::ParseError& e) {
    topo_fuzz::check_parse_error(e, file, topo_fuzz::line_count(input),
                                 {"not valid JSON", "document", "jobs[", "wrong type"});
    return 0;
  }
  for (const topo::ScheduledJob& j : s.jobs) {
    if (j.host_gpus.size() != j.ring.size()) topo_fuzz::fail("ring and host_gpus differ in length");
    if (!(j.submit_s <= j.start_s && j.start_s <= j.end_s)) topo_fuzz::fail("times out of order accepted");
    for (topo::NodeId h : j.ring)
      if (h >= fabric.node_count()) topo_fuzz::fail("a ring host outside the fabric");
  }
  return 0;
}
