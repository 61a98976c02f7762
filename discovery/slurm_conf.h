// Slurm's configuration line syntax (src/common/parse_config.c), as the
// topology.conf readers share it: logical lines with comments, escapes,
// continuations and Include followed, split into Key=Value pairs; hostlists
// expanded within a budget of names; which names Slurm reads back unchanged.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace topo {

struct SlurmConfLine {
  std::string file;
  int line = 0;                                            // its first physical line
  std::vector<std::pair<std::string, std::string>> pairs;  // keys as written, in order
};

// Every non-blank logical line of the file and its includes. Throws
// ParseError as read_slurm_topology does for the syntax and Include.
std::vector<SlurmConfLine> read_slurm_conf(std::istream& in, const std::string& filename);

// The names of a hostlist value, each once, in order; `budget` is what the
// file may still expand to (of `max_names`) and shrinks. Throws ParseError
// naming `where` and `key` for a malformed or empty list, or one past the
// budget.
std::vector<std::string> expand_slurm_names(const SlurmConfLine& where, const std::string& key,
                                            const std::string& value, uint64_t& budget, uint64_t max_names);

// A name Slurm reads back unchanged from a hostlist ([A-Za-z0-9._-]).
bool is_slurm_name(std::string_view name);

}  // namespace topo
