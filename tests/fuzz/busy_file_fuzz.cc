// The busy-hosts file of `topoctl place --busy`, on a 4-leaf fabric of 32
// hosts with 8 GPUs each: what it accepts leaves every host between 0 and 8
// free GPUs; what it rejects names a line.
#include <fmt/format.h>

#include "fabric/synthetic.h"
#include "placement/busy_file.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const topo::Fabric fabric = topo::make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2");
  const std::string file = "fuzz.busy";
  std::string input(topo_fuzz::text(data, size));
  std::istringstream in(input);
  topo::FreeMap free = topo::FreeMap::all_free(fabric, 8);
  try {
    topo::read_busy(in, file, fabric, free);
  } catch (const topo::ParseError& e) {
    topo_fuzz::check_parse_error(e, file, topo_fuzz::line_count(input), {});
    return 0;
  }
  for (topo::NodeId h : fabric.hosts())
    if (free.free(h) < 0 || free.free(h) > 8)
      topo_fuzz::fail(fmt::format("{} left with {} free GPUs", fabric.node(h).name, free.free(h)));
  return 0;
}
