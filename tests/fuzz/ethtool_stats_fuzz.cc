// A host's file of `ethtool -S` output, NIC by NIC (topoctl health
// --ethtool). What the reader rejects names a line; what it accepts names
// every NIC, keeps only the counters it knows, and reads back the same
// when written out again in the driver's layout.
#include <sstream>

#include <fmt/format.h>

#include "health/ethtool_counters.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

std::string write_back(const std::vector<topo::NicSample>& nics) {
  std::string out;
  if (!nics.empty()) out += fmt::format("# host {}\n", nics.front().host);
  if (!nics.empty() && nics.front().taken_ms)
    out += fmt::format("# time {}.{:03}\n", nics.front().taken_ms / 1000, nics.front().taken_ms % 1000);
  for (const topo::NicSample& n : nics) {
    out += fmt::format("# iface {}\nNIC statistics:\n", n.iface);
    for (const auto& [name, value] : n.counters) out += fmt::format("     {}: {}\n", name, value);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = "gpu01.txt";
  std::string input(topo_fuzz::text(data, size));
  std::istringstream in(input);
  std::vector<topo::NicSample> nics;
  try {
    nics = topo::parse_ethtool_stats(in, file, "gpu01");
  } catch (const topo::ParseError& e) {
    topo_fuzz::check_parse_error(e, file, topo_fuzz::line_count(input), {"read error", "field host"});
    return 0;
  }
  for (const topo::NicSample& n : nics) {
    if (n.host.empty() || n.iface.empty() || n.host.find_first_of(" \t\n") != std::string::npos ||
        n.iface.find_first_of(" \t\n") != std::string::npos)
      topo_fuzz::fail(fmt::format("an accepted NIC is badly named: '{}' '{}'", n.host, n.iface));
    for (const auto& [name, value] : n.counters)
      if (!topo::is_kept_nic_counter(name)) topo_fuzz::fail(fmt::format("counter '{}' kept", name));
  }
  std::istringstream again(write_back(nics));
  std::vector<topo::NicSample> back;
  try {
    back = topo::parse_ethtool_stats(again, file, "gpu01");
  } catch (const topo::ParseError& e) {
    topo_fuzz::fail(fmt::format("what was accepted does not read back: {}", e.what()));
  }
  if (back != nics) topo_fuzz::fail("what was accepted reads back different");
  return 0;
}
