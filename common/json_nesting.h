// JSON from outside, measured before a parser builds it.
//
// nlohmann's parser builds a node for every level it opens, so a file of
// megabytes of '[' costs gigabytes: 30 MB of them took 2.3 GB and 12 s to
// be refused. Each reader of a JSON format knows how deep its documents
// nest and refuses more, at the line of the first bracket past it, before
// parsing.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace topo {

// The offset one past the end of the JSON value that starts at `pos` of
// `text`: past its closing bracket, or text.size() when it is not closed
// (the parser then names what is missing). Brackets inside strings do not
// count. Throws ParseError(file, line, "JSON nested deeper than N levels;
// <expected>") at the first '[' or '{' past `max_depth`.
size_t end_of_json_value(std::string_view text, size_t pos, int max_depth, const std::string& file,
                         std::string_view expected);

// The line of byte `offset` of `text`, whose first byte is on `first_line`.
int line_at(std::string_view text, size_t offset, int first_line = 1);

}  // namespace topo
