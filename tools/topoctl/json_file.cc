#include "tools/topoctl/json_file.h"

#include <fmt/format.h>

#include "common/error.h"
#include "common/json_nesting.h"
#include "common/line_source.h"
#include "common/quote.h"

namespace topoctl {

nlohmann::json read_json(std::istream& in, const std::string& path, uint64_t max_bytes, int max_depth,
                         std::string_view expected_depth) {
  std::string text = topo::read_all(in, path, max_bytes);
  topo::end_of_json_value(text, 0, max_depth, path, expected_depth);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for a number past a double
    throw topo::ParseError(path, 0, fmt::format("not valid JSON: {}", topo::shown(e.what(), 160)));
  }
}

}  // namespace topoctl
