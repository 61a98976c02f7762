// A results document (`topoctl simulate --output`, read by `topoctl
// report`): what it accepts writes back and reads back to the same JSON;
// what it rejects names the key.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/fuzz/fuzz_input.h"
#include "tools/topoctl/outcome_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = "fuzz.json";
  nlohmann::json doc = nlohmann::json::parse(topo_fuzz::text(data, size), nullptr, false);
  if (doc.is_discarded()) return 0;  // read_comparison_file names nlohmann's line for these
  topo::Comparison c;
  try {
    c = topoctl::comparison_from_json(doc, file);
  } catch (const topo::ParseError& e) {
    topo_fuzz::check_parse_error(e, file, 0, {""});
    return 0;
  }
  nlohmann::json written = topoctl::to_json(c);
  topo::Comparison again;
  try {
    again = topoctl::comparison_from_json(written, file);
  } catch (const std::exception& e) {
    topo_fuzz::fail(fmt::format("the written results do not read back: {}\n{}", e.what(), written.dump()));
  }
  if (topoctl::to_json(again) != written)
    topo_fuzz::fail(
        fmt::format("written twice, the results differ:\n{}\n{}", written.dump(), topoctl::to_json(again).dump()));
  return 0;
}
