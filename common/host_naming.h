// From an HCA's node description to the Slurm host and the HCA's rail.
//
// Subnet managers see HCAs, not hosts: an HCA's node description is usually
// "<hostname> <device>", e.g. "gpu017 mlx5_3". The default pattern takes the
// first word as the host and the trailing number of the second as the rail
// index. Sites with other conventions configure a regular expression whose
// first group is the host and whose optional second group is the device.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace topo {

// A site's regular expression for host names (HCA descriptions here, Slurm
// NodeNames in topo_aware.conf's HostPattern): POSIX extended syntax, with
// \d and \D taken as [0-9] and [^0-9], and GNU's \s \S \w \W.
//
// Matched by the C library's regexec, not std::regex: libstdc++'s matcher
// recurses once per character and alternative, so a pattern like (.*)*x
// overflows the stack on a short name, and inside slurmctld that is a crash
// of the controller. glibc's matcher keeps its state on the heap.
class HostPattern {
 public:
  // Throws std::invalid_argument naming the pattern when it does not compile
  // or has no group, and, before regcomp sees it, when regcomp could take
  // unbounded time or memory over it: over 10,000 pieces when written out
  // as regcomp does (x+ as x x*), a part that can match nothing copied
  // ((x?)+), or a repeat right after a repeat (x**). Each of the last two
  // has a plain form that says the same.
  explicit HostPattern(std::string pattern);

  // The groups of the first match anywhere in `text` (whole: the whole
  // text must match); group 0 is the match. nullopt when it does not match.
  // Unmatched groups are empty.
  std::optional<std::vector<std::string>> search(std::string_view text) const;
  std::optional<std::vector<std::string>> match_whole(std::string_view text) const;

  const std::string& pattern() const { return pattern_; }
  size_t groups() const;

 private:
  struct Compiled;
  std::string pattern_;
  std::shared_ptr<const Compiled> compiled_;  // shared: copies stay cheap
};

struct HcaName {
  std::string host;
  std::string device;  // "mlx5_3"; empty when the description has none
  int rail = -1;       // trailing number of the device; -1 when none
};

class HostNaming {
 public:
  // The default convention, "<host> <device>".
  HostNaming() = default;
  // Throws std::invalid_argument when `pattern` is not a valid HostPattern
  // with at least one group.
  explicit HostNaming(std::string pattern);

  // nullopt when the description does not match.
  std::optional<HcaName> parse(std::string_view description) const;

  // The pattern as configured; empty for the default.
  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  std::optional<HostPattern> regex_;
};

}  // namespace topo
