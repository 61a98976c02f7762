// One host's or switch's `lldpcli -f json` output among the real set of a
// two-tier fabric collected from lldpd in namespaces
// (tests/fixtures/lldp/twotier-json): the input stands in for leaf01.json.
// What the reader rejects names the file and a line; what it accepts either
// joins the others into a fabric (placed from the others' tables when it is
// neighbours alone, else an unplaced_file finding naming it) or is refused
// as a whole with a typed error naming the ports (FabricError), never
// anything else.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "discovery/lldp.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

std::vector<topo::LldpSystemView> fixture_views() {
  std::vector<topo::LldpSystemView> views;
  const std::filesystem::path dir = TOPO_FIXTURES "/lldp/twotier-json";
  for (const char* name :
       {"gpu01", "gpu02", "gpu03", "gpu04", "gpu05", "gpu06", "leaf02", "leaf03", "spine01", "spine02"}) {
    std::ifstream in(dir / fmt::format("{}.json", name));
    std::stringstream text;
    text << in.rdbuf();
    views.push_back(topo::parse_lldpcli_json(text.str(), name));
  }
  return views;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<topo::LldpSystemView> others = fixture_views();
  const std::string file = "leaf01.json";
  std::string_view input = topo_fuzz::text(data, size);
  topo::LldpSystemView view;
  try {
    view = topo::parse_lldpcli_json(input, file);
  } catch (const topo::ParseError& e) {
    topo_fuzz::check_parse_error(e, file, topo_fuzz::line_count(input), {"empty"});
    return 0;
  }
  std::vector<topo::LldpSystemView> views = others;
  views.push_back(std::move(view));
  try {
    topo::LldpFabric built = topo::build_lldp_fabric(std::move(views), {});
    if (built.fabric.hosts().empty()) topo_fuzz::fail("an accepted set of views gave a fabric without hosts");
    // Only the input may be left unplaced (the fixture's files name themselves).
    for (const topo::LldpFinding& f : built.findings)
      if (f.kind == topo::LldpFindingKind::UnplacedFile && f.subject != file)
        topo_fuzz::fail("a fixture file was left unplaced: " + f.subject);
  } catch (const topo::FabricError&) {
    // A set of views that cannot form a fabric, refused as a whole.
  }
  return 0;
}
