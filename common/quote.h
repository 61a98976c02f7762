// A piece of the input quoted in an error message.
//
// An error names the file and line; the quote only helps the admin find the
// spot. A damaged file can hold a value of megabytes (a bitmap, a pattern, a
// name without its closing quote) that would otherwise land whole in a log
// line, or in slurmctld's log.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace topo {

// A control byte (C0 or DEL): it would end a line or a field early, or
// move a terminal's cursor.
inline bool is_control(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

// At most `max` bytes of `s`, control bytes as '?', and "..." where it was cut.
// With max = std::string::npos, all of it: text safe for one line (a comment)
// of a file we write.
inline std::string shown(std::string_view s, size_t max = 64) {
  std::string out;
  for (char c : s.substr(0, max)) out += is_control(c) ? '?' : c;
  return s.size() > max ? out + "..." : out;
}

}  // namespace topo
