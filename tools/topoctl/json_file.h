// A JSON document that topoctl reads from a file: a schedule, a results file.
//
// Read within a byte bound, its nesting measured before nlohmann builds a
// node per level (common/json_nesting.h), and every way it can fail a
// ParseError naming the file.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace topoctl {

// The document `in` holds, read as `path`. Throws topo::ParseError(path, ...)
// for more than `max_bytes` bytes, nesting deeper than `max_depth` (at the
// line of the first bracket past it, saying `expected_depth`, e.g. "a
// schedule nests 4"), and for text that is not JSON, a number past a double's
// range included ("not valid JSON: ", nlohmann's words with line and column,
// quoted within 160 bytes).
nlohmann::json read_json(std::istream& in, const std::string& path, uint64_t max_bytes, int max_depth,
                         std::string_view expected_depth);

}  // namespace topoctl
