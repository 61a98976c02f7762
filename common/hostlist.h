// Slurm hostlist expressions: "gpu[001-004,007],login1".
//
// Slurm names sets of hosts (and, in topology.conf, of switches) with
// bracketed numeric ranges. The rules followed here are those of Slurm's
// own parser (src/common/hostlist.c):
//   - names are separated by commas (spaces and tabs too); commas inside
//     brackets separate ranges, not names;
//   - a range is "lo" or "lo-hi"; its zero padding is the width of "lo",
//     so "[08-10]" gives 08 09 10 and "[8-10]" gives 8 9 10;
//   - a name may hold several bracket groups, "rack[1-2]-n[01-02]", which
//     expand with the first group varying slowest (rack1-n01, rack1-n02,
//     rack2-n01, rack2-n02); the last group must end the name, as Slurm
//     22.05 rejects anything after it ("n[1-2]-ib" is an error); at most
//     16 groups in one name (our own bound: the expansion recurses per
//     group);
//   - at most 65536 hosts in one range, as in Slurm.
#pragma once

#include <cstdint>

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace topo {

// A hostlist expression that does not parse. `position` is the 0-based
// offset in the expression where the problem was seen.
class HostlistError : public std::invalid_argument {
 public:
  HostlistError(std::string expression, size_t position, const std::string& what, bool past_max_names = false);

  const std::string& expression() const { return expression_; }
  size_t position() const { return position_; }
  // Whether the expression is well formed but names more than the cap it
  // was expanded with (a caller that passed what is left of a budget of its
  // own words the error after that budget).
  bool past_max_names() const { return past_max_names_; }

 private:
  std::string expression_;
  size_t position_;
  bool past_max_names_;
};

// Our own cap on the names of one expression, so that
// "a[1-60000]b[1-60000]" is an error rather than an exhausted machine. A
// million names expand in about 1.6 s (a 100k-host cluster with 8 rails
// lists 800k ports).
inline constexpr uint64_t kMaxHostlistNames = 1 << 20;
// And on their bytes: a few names may be long ("<a line of text>[1-900]"),
// and a million of them would be gigabytes. 2^20 names of 32 bytes.
inline constexpr uint64_t kMaxHostlistBytes = 32 << 20;

// Every name of the expression, in the order written; duplicates are kept.
// An empty or all-separator expression gives an empty list. Throws
// HostlistError saying what was expected where (quoting 64 bytes of the
// expression around that offset), and for an expression of more than
// `max_names` names or kMaxHostlistBytes bytes of them (counted before any
// is written out).
std::vector<std::string> expand_hostlist(std::string_view expression, uint64_t max_names = kMaxHostlistNames);

// The shortest expression Slurm reads back as exactly this set of names:
// names are sorted (numerically within a prefix) and deduplicated, runs of
// numbers become ranges that keep their zero padding, and names that differ
// in one more number before the last range share a bracket group
// ("rack[1-2]-n[01-02]"). Empty names are ignored.
std::string compress_hostlist(std::span<const std::string> names);

// The order compress_hostlist writes names in: digit runs compare as
// numbers, so gpu9 < gpu10, and a padded number before its unpadded twin.
bool natural_less(std::string_view a, std::string_view b);

}  // namespace topo
