// OpenSM's opensm-lfts.dump, matched against the fabric it was dumped from
// (tests/fixtures/routing/multiport: two leaves, two spines, a CA on both).
// What it accepts is set on the fabric, written as a dump and read back to
// the same tables; what it rejects names a line or what does not match.
#include <sstream>

#include <fmt/format.h>

#include "discovery/ibnetdiscover.h"
#include "routing/opensm_lfts.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const topo::Fabric fabric = topo::read_ibnetdiscover_file(TOPO_FIXTURES "/routing/multiport.ibnetdiscover");
  const std::string file = "fuzz.lfts";
  std::string input(topo_fuzz::text(data, size));
  std::istringstream in(input);
  topo::Routing routing;
  try {
    routing = topo::read_opensm_lfts(in, file, fabric);
  } catch (const topo::ParseError& e) {
    // A dump of another fabric is refused as a whole, naming what differs.
    topo_fuzz::check_parse_error(e, file, topo_fuzz::line_count(input),
                                 {"no switch table", "not in the fabric", "leaves out", "another", "differ", "belong"});
    return 0;
  }
  topo::Fabric routed = fabric;
  try {
    routed.set_routing(routing);
  } catch (const topo::FabricError& e) {
    topo_fuzz::fail(fmt::format("accepted tables do not fit the fabric: {}", e.what()));
  }
  std::ostringstream out;
  topo::write_opensm_lfts(routed, out);
  std::istringstream written(out.str());
  topo::Routing again;
  try {
    again = topo::read_opensm_lfts(written, file, fabric);
  } catch (const std::exception& e) {
    topo_fuzz::fail(fmt::format("the written dump does not read back: {}\n{}", e.what(), out.str()));
  }
  // A LID past a table's end and one marked without a path are the same thing.
  for (size_t s = 0; s < fabric.switches().size(); ++s) {
    size_t n = std::max(routing.lft[s].size(), again.lft[s].size());
    for (uint32_t lid = 0; lid < n; ++lid)
      if (routing.out_port(s, lid) != again.out_port(s, lid))
        topo_fuzz::fail(fmt::format("switch {} LID {}: port {} read, {} after writing\n{}", s, lid,
                                    routing.out_port(s, lid), again.out_port(s, lid), out.str()));
  }
  return 0;
}
