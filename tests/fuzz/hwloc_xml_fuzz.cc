// An `lstopo --of xml` export, through the pre-check and then hwloc 2.9
// itself (which crashes, hangs or leaks on damaged XML the pre-check must
// keep away from it). What it accepts gives GPUs indexed in order; what it
// rejects names a line, or says hwloc refused the whole file.
#include <fmt/format.h>

#include "discovery/hwloc_affinity.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = "fuzz.xml";
  std::string_view xml = topo_fuzz::text(data, size);
  topo::NodeAffinity node;
  try {
    node = topo::read_hwloc_xml_text(xml, file);
  } catch (const topo::ParseError& e) {
    topo_fuzz::check_parse_error(e, file, topo_fuzz::line_count(xml),
                                 {"NUL byte", "hwloc", "expected <topology", "ends before"});
    return 0;
  }
  for (size_t i = 0; i < node.gpus.size(); ++i)
    if (node.gpus[i].index != static_cast<int>(i))
      topo_fuzz::fail(fmt::format("GPU {} has index {}", i, node.gpus[i].index));
  return 0;
}
