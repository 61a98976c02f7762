// nvidia-smi's GPU reports, -q -x and -q: whatever the bytes, either GPUs
// with their four fabric fields (each "N/A" or the text the file held, never
// empty) or a ParseError naming the file and a line of it. The input is read
// in both forms; the first byte after blanks picks the one a file takes.
#include <fmt/format.h>

#include "discovery/nvidia_smi.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

void check(const topo::NvidiaSmiReport& r) {
  if (r.gpus.empty()) topo_fuzz::fail("a report without GPUs was accepted");
  for (const topo::GpuFabric& g : r.gpus)
    for (const std::string* f : {&g.state, &g.status, &g.clique_id, &g.cluster_uuid})
      if (f->empty()) topo_fuzz::fail(fmt::format("GPU {} has an empty fabric field", g.pci_bus));
}

template <typename Read>
void one_form(std::string_view input, const std::string& file, Read read) {
  try {
    check(read(input, file));
  } catch (const topo::ParseError& e) {
    topo_fuzz::check_parse_error(e, file, topo_fuzz::line_count(input),
                                 {"no <gpu> element", "expected a <nvidia_smi_log> element", "the file is empty"});
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input = topo_fuzz::text(data, size);
  one_form(input, "node.xml", topo::read_nvidia_smi_xml);
  one_form(input, "node.txt", topo::read_nvidia_smi_text);
  return 0;
}
