// The admin's link table for switches without lldpd
// (`switch,port,peer,peer_port,speed`). What it rejects names a line; every
// row it accepts names both ends.
#include <sstream>

#include <fmt/format.h>

#include "discovery/lldp.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = "links.csv";
  std::string input(topo_fuzz::text(data, size));
  std::istringstream in(input);
  try {
    for (const topo::LldpSighting& row : topo::parse_lldp_csv(in, file))
      if (row.local.system.empty() || row.local.port.empty() || row.remote.system.empty() || row.remote.port.empty())
        topo_fuzz::fail(fmt::format("an accepted row leaves an end unnamed: '{}:{}' - '{}:{}'", row.local.system,
                                    row.local.port, row.remote.system, row.remote.port));
  } catch (const topo::ParseError& e) {
    topo_fuzz::check_parse_error(e, file, topo_fuzz::line_count(input), {"empty", "header"});
  }
  return 0;
}
