// What every fuzz target shares: the input as text or as a file, and the
// checks every reader's typed errors must pass.
//
// A target calls fail() for anything beyond a crash that is still a bug
// (an untyped exception, an error naming no line, a round trip that
// changes the fabric): fail() prints what was wrong and aborts, which
// libFuzzer reports as a crash with the input that caused it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "common/error.h"

namespace topo_fuzz {

// The bytes as text (no copy; may hold NULs).
inline std::string_view text(const uint8_t* data, size_t size) { return {reinterpret_cast<const char*>(data), size}; }

// Physical lines in the text: the highest line an error may name.
size_t line_count(std::string_view text);

// Prints "fuzz: <what>" and the first bytes of the input, then aborts.
[[noreturn]] void fail(std::string_view what);

// An in-memory file (memfd) for readers that take only a path. write()
// replaces its contents; path() is "/proc/self/fd/<n>".
class MemFile {
 public:
  MemFile();
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  ~MemFile();
  void write(std::string_view bytes);
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

// A rejected input: the error names `file`, a line between 1 and
// `max_line` (or 0 when its message holds one of `file_level`, the errors
// about the whole file), and says something short enough for one log line.
void check_parse_error(const topo::ParseError& e, std::string_view file, size_t max_line,
                       std::initializer_list<std::string_view> file_level);

// Longest message an error may carry: a megabyte line quoted back whole
// would flood slurmctld's log.
inline constexpr size_t kMaxMessage = 2048;

}  // namespace topo_fuzz

namespace topo {
class Fabric;
}

namespace topo_fuzz {

// Empty when the two fabrics are the same (fabric/diff.h finds no change,
// and every node keeps its id, name, GUID and LID); else the first
// difference, for fail().
std::string fabric_difference(const topo::Fabric& a, const topo::Fabric& b);

}  // namespace topo_fuzz
