// Text input a line at a time, within bounds.
//
// Every reader of a file an admin or another tool wrote takes its lines
// from here: the stream is read in large blocks (a dump of a 16k-host fabric
// is hundreds of megabytes, never held whole), and a line longer than any
// the format needs, or more input than it could hold, is a ParseError
// naming the file and line, not an allocation as large as the input. A
// file with no line break at all (/dev/zero, a binary dropped in by
// mistake) stops at the first bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace topo {

// Far above any line a format of ours needs (a topology.conf line listing
// every host of a 100k-host cluster is under 1 MiB written as a hostlist).
inline constexpr size_t kMaxLineBytes = 1 << 20;

class LineSource {
 public:
  // `file` names the input in errors; `max_bytes` bounds the whole input.
  LineSource(std::istream& in, std::string file, size_t max_line = kMaxLineBytes, uint64_t max_bytes = UINT64_MAX);

  // The next line, without its '\n' (a '\r' before it stays); false at the
  // end. The view lives until the next call. Throws ParseError for a line
  // longer than max_line or input past max_bytes.
  bool next(std::string_view& line);
  // The 1-based number of the line next() gave last.
  int number() const { return number_; }
  bool bad() const { return in_.bad(); }

 private:
  void refill();

  std::istream& in_;
  std::string file_;
  size_t max_line_;
  uint64_t max_bytes_;
  uint64_t read_ = 0;
  std::vector<char> buf_;
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  int number_ = 0;
};

// The whole input, for formats parsed as one text (ibnetdiscover, hwloc
// XML). Throws ParseError(file, 0, ...) past max_bytes, having held no more
// than that, and for a read error.
std::string read_all(std::istream& in, const std::string& file, uint64_t max_bytes);

}  // namespace topo
