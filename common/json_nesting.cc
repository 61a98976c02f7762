#include "common/json_nesting.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"

namespace topo {

size_t end_of_json_value(std::string_view text, size_t pos, int max_depth, const std::string& file,
                         std::string_view expected) {
  int depth = 0;
  bool in_string = false;
  for (size_t at = pos; at < text.size(); ++at) {
    char c = text[at];
    if (in_string) {
      if (c == '\\')
        ++at;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth)
        throw ParseError(file, line_at(text, at),
                         fmt::format("JSON nested deeper than {} levels; {}", max_depth, expected));
    } else if ((c == '}' || c == ']') && --depth <= 0) {
      return at + 1;
    }
  }
  return text.size();
}

int line_at(std::string_view text, size_t offset, int first_line) {
  return first_line + static_cast<int>(std::count(text.begin(), text.begin() + std::min(offset, text.size()), '\n'));
}

}  // namespace topo
