// libibnetdisc cache files (`ibnetdiscover --cache FILE`), read through
// rdma-core's loader: no crash or leak in front of or inside it, a typed
// error for what it refuses, and what it accepts written as ibnetdiscover
// text reads back as the same fabric.
#include <sstream>

#include <fmt/format.h>

#include "discovery/ibnetdisc.h"
#include "discovery/ibnetdiscover.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static topo_fuzz::MemFile file;
  file.write(topo_fuzz::text(data, size));
  topo::Fabric fabric;
  try {
    fabric = topo::load_ibnetdisc_cache(file.path());
  } catch (const topo::ParseError& e) {
    // A binary file has no lines: every error is about the whole file.
    topo_fuzz::check_parse_error(e, file.path(), 0, {""});
    return 0;
  } catch (const topo::FabricError&) {
    return 0;  // an HCA description the host naming does not match (documented)
  }
  for (topo::LinkId e : fabric.cables())
    if (fabric.link(e).state != topo::PortState::Active) return 0;  // the text format has no port state
  std::ostringstream out;
  try {
    topo::write_ibnetdiscover(fabric, out);
  } catch (const topo::FabricError&) {
    return 0;
  }
  std::istringstream written(out.str());
  topo::Fabric again;
  try {
    again = topo::read_ibnetdiscover(written, "written");
  } catch (const std::exception& e) {
    topo_fuzz::fail(fmt::format("the cache's fabric, written, does not read back: {}\n{}", e.what(), out.str()));
  }
  if (std::string d = topo_fuzz::fabric_difference(fabric, again); !d.empty())
    topo_fuzz::fail(fmt::format("cache -> text -> fabric changed the fabric: {}\n{}", d, out.str()));
  return 0;
}
