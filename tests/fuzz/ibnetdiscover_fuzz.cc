// ibnetdiscover text (and ibsim net files): what it accepts writes back and
// reads back as the same fabric; what it rejects names a line.
#include <sstream>

#include <fmt/format.h>

#include "discovery/ibnetdiscover.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = "fuzz.ibnetdiscover";
  std::string input(topo_fuzz::text(data, size));
  std::istringstream in(input);
  topo::Fabric fabric;
  try {
    fabric = topo::read_ibnetdiscover(in, file);
  } catch (const topo::ParseError& e) {
    topo_fuzz::check_parse_error(e, file, topo_fuzz::line_count(input), {"no node", "no Switch"});
    return 0;
  }
  std::ostringstream out;
  try {
    topo::write_ibnetdiscover(fabric, out);
  } catch (const topo::FabricError&) {
    return 0;  // an id or description the format cannot carry (documented)
  }
  std::istringstream written(out.str());
  topo::Fabric again;
  try {
    again = topo::read_ibnetdiscover(written, file);
  } catch (const std::exception& e) {
    topo_fuzz::fail(fmt::format("the written fabric does not read back: {}\n{}", e.what(), out.str()));
  }
  if (std::string d = topo_fuzz::fabric_difference(fabric, again); !d.empty())
    topo_fuzz::fail(fmt::format("read, write, read changed the fabric: {}\n{}", d, out.str()));
  return 0;
}
