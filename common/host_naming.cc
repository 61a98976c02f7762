#include "common/host_naming.h"

#include <regex.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include "common/quote.h"

namespace topo {
namespace {

int trailing_number(std::string_view device) {
  size_t end = device.size(), start = end;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(device[start - 1]))) --start;
  if (start == end || end - start > 6) return -1;
  return std::stoi(std::string(device.substr(start)));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The end of the bracket expression opening at pattern[i] ('['): the index
// of its closing ']', or the end of the pattern when it has none (regcomp
// then refuses it). A ']' first in the list is a member, as are classes
// like [:digit:].
size_t bracket_end(std::string_view pattern, size_t i) {
  size_t j = i + 1;
  if (j < pattern.size() && pattern[j] == '^') ++j;
  if (j < pattern.size() && pattern[j] == ']') ++j;
  while (j < pattern.size() && pattern[j] != ']') {
    const bool class_opens =
        j + 1 < pattern.size() && std::string_view(":.=").find(pattern[j + 1]) != std::string_view::npos;
    if (pattern[j] == '[' && class_opens) {
      size_t close = pattern.find(std::string{pattern[j + 1], ']'}, j + 2);
      if (close == std::string_view::npos) return pattern.size();
      j = close + 2;
    } else {
      ++j;
    }
  }
  return j;
}

// \d and \D, which POSIX lacks, as bracket expressions; everything else as
// written (inside a bracket expression a backslash is a member in POSIX).
std::string posix_syntax(std::string_view pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '[') {
      size_t end = std::min(bracket_end(pattern, i), pattern.size() - 1);
      out += pattern.substr(i, end - i + 1);
      i = end;
    } else if (c == '\\' && i + 1 < pattern.size()) {
      char next = pattern[++i];
      if (next == 'd')
        out += "[0-9]";
      else if (next == 'D')
        out += "[^0-9]";
      else
        out += {c, next};
    } else {
      out += c;
    }
  }
  return out;
}

// regcomp writes every repeat out: x+ as x x*, x{n,m} as m copies of x,
// each stacked or nested repeat multiplying the copies of what it repeats.
// "(a+)+" costs little, but a few dozen stacked '+' or three nested {1000}
// ask glibc for more nodes than memory holds (inside slurmctld too).
inline constexpr uint64_t kMaxPatternNodes = 10000;

// A repeat operator: how many copies of x it asks for (0 when there is
// none), where it ends, and whether it lets x occur zero times.
struct Repeat {
  uint64_t copies = 0;
  size_t end = 0;
  bool optional = false;
};

Repeat repeat_at(std::string_view pattern, size_t i) {
  char c = pattern[i];
  if (c == '*' || c == '?') return {1, i + 1, true};
  if (c == '+') return {2, i + 1, false};
  if (c != '{') return {0, i, false};
  auto number = [&](size_t& j) {
    uint64_t n = 0;
    size_t start = j;
    while (j < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[j])) && j - start < 9)
      n = n * 10 + static_cast<uint64_t>(pattern[j++] - '0');
    return j > start ? std::optional<uint64_t>(n) : std::nullopt;
  };
  size_t j = i + 1;
  std::optional<uint64_t> low = number(j), high = low;
  if (j < pattern.size() && pattern[j] == ',') {
    ++j;
    high = number(j);
    if (!high) high = low ? std::optional<uint64_t>(*low + 1) : std::nullopt;
  }
  if (!low || !high || j >= pattern.size() || pattern[j] != '}') return {0, i, false};  // regcomp judges it
  return {std::max<uint64_t>({*low, *high, 1}), j + 1, *low == 0};
}

// What compiling a pattern (POSIX syntax) would cost regcomp.
struct CompileCost {
  uint64_t nodes = 0;  // the nodes regcomp would build, counted up to just past the cap
  // Where a repeat copies (x+, x{n} with n >= 2) an x that can match the
  // empty string: glibc's closures over such copies grow with the square of
  // their count and faster with their nesting (a 53-byte pattern found by
  // fuzzing took regcomp 100 s and 800 MB; "(x)a????++++++++" takes 14 s).
  // Nothing is lost by refusing it: (x?)+ matches what x* does, (x?){n}
  // what x{0,n} does.
  std::optional<size_t> copied_empty;
  // Where a repeat follows a repeat (x**, x*?, x+*): POSIX leaves adjacent
  // repeats undefined, and glibc's closures over them grow fast after an
  // anchor (a$-**************2********************3****************** takes
  // regcomp 0.7 s; fuzzing found one of 186 bytes that took 17 s under
  // ASan). One repeat always says the same: x** is x*, x++ is x+.
  std::optional<size_t> stacked_repeat;
};

CompileCost compile_cost(std::string_view pattern, uint64_t cap) {
  struct Group {
    uint64_t done = 0;          // the group's pieces before the last
    uint64_t last = 0;          // the last piece, which a repeat multiplies
    bool done_empty = true;     // the pieces before the last can all match the empty string
    bool last_empty = true;     // and so can the last
    bool branch_empty = false;  // an earlier branch (before a '|') can
  };
  std::vector<Group> open{Group{}};
  auto piece = [&](uint64_t size, bool empty) {
    Group& g = open.back();
    g.done = std::min(cap + 1, g.done + g.last);
    g.done_empty = g.done_empty && g.last_empty;
    g.last = std::min(cap + 1, size);
    g.last_empty = empty;
  };
  CompileCost out;
  size_t repeat_end = std::string_view::npos;  // where the last repeat ended
  for (size_t i = 0; i < pattern.size();) {
    char c = pattern[i];
    Group& g = open.back();
    if (Repeat r = repeat_at(pattern, i); r.copies > 0) {
      if (r.copies >= 2 && g.last > 0 && g.last_empty && !out.copied_empty) out.copied_empty = i;
      if (repeat_end == i && !out.stacked_repeat) out.stacked_repeat = i;
      repeat_end = r.end;
      g.last = std::min(cap + 1, g.last * r.copies);
      g.last_empty = g.last_empty || r.optional;
      i = r.end;
    } else if (c == '(') {
      open.push_back({});
      ++i;
    } else if (c == ')' && open.size() > 1) {
      const bool empty = g.branch_empty || (g.done_empty && g.last_empty);
      uint64_t size = g.done + g.last + 1;
      open.pop_back();
      piece(size, empty);
      ++i;
    } else if (c == '|') {
      g.branch_empty = g.branch_empty || (g.done_empty && g.last_empty);
      g.done = std::min(cap + 1, g.done + g.last + 1);
      g.last = 0;
      g.done_empty = g.last_empty = true;
      ++i;
    } else if (c == '[') {
      piece(1, false);
      i = bracket_end(pattern, i) + 1;
    } else if (c == '\\') {
      // GNU's \b \B \< \> \` \' match between characters, as ^ and $ do.
      const bool between =
          i + 1 < pattern.size() && std::string_view("bB<>`'").find(pattern[i + 1]) != std::string_view::npos;
      piece(1, between);
      i += 2;
    } else {
      piece(1, c == '^' || c == '$');
      ++i;
    }
    if (open.size() > cap) {
      out.nodes = cap + 1;
      return out;
    }
  }
  for (const Group& g : open) out.nodes = std::min(cap + 1, out.nodes + g.done + g.last);
  return out;
}

}  // namespace

struct HostPattern::Compiled {
  explicit Compiled(const regex_t& compiled) : re(compiled) {}
  Compiled(const Compiled&) = delete;
  Compiled& operator=(const Compiled&) = delete;
  ~Compiled() { regfree(&re); }
  regex_t re;
};

HostPattern::HostPattern(std::string pattern) : pattern_(std::move(pattern)) {
  regex_t re;
  std::string posix = posix_syntax(pattern_);
  const CompileCost cost = compile_cost(posix, kMaxPatternNodes);
  if (cost.nodes > kMaxPatternNodes)
    throw std::invalid_argument("'" + shown(pattern_) +
                                "' repeats too much: written out as regcomp does (x+ as x x*, x{n,m} as m copies) "
                                "it is over " +
                                std::to_string(kMaxPatternNodes) +
                                " pieces; expected a host name pattern like (gpu[0-9]+)");
  if (cost.copied_empty)
    throw std::invalid_argument("'" + shown(pattern_) + "' repeats a part that can match nothing with '" +
                                shown(posix.substr(*cost.copied_empty, 1)) +
                                "' (as in (x?)+ or (x*){2}), which regcomp takes unbounded "
                                "time over; write (x?)+ as x* and (x?){n} as x{0,n}");
  if (cost.stacked_repeat)
    throw std::invalid_argument("'" + shown(pattern_) + "' puts a repeat right after a repeat ('" +
                                shown(posix.substr(*cost.stacked_repeat - 1, 2)) +
                                "'), which POSIX leaves undefined and regcomp can take "
                                "unbounded time over; write one (x* for x**, x+ for x++)");
  if (int rc = regcomp(&re, posix.c_str(), REG_EXTENDED); rc != 0) {
    char why[256];
    regerror(rc, &re, why, sizeof why);
    throw std::invalid_argument("'" + shown(pattern_) + "' is not a valid regular expression: " + why);
  }
  compiled_ = std::make_shared<const Compiled>(re);  // owns it from here: regfree once, on the last copy
  if (groups() < 1) throw std::invalid_argument("'" + shown(pattern_) + "' needs a group (...) around the host name");
}

size_t HostPattern::groups() const { return compiled_->re.re_nsub; }

std::optional<std::vector<std::string>> HostPattern::search(std::string_view text) const {
  std::string subject(text);  // regexec reads up to a NUL
  std::vector<regmatch_t> m(groups() + 1);
  if (regexec(&compiled_->re, subject.c_str(), m.size(), m.data(), 0) != 0) return std::nullopt;
  std::vector<std::string> out;
  for (const regmatch_t& g : m)
    out.push_back(g.rm_so < 0 ? std::string()
                              : subject.substr(static_cast<size_t>(g.rm_so), static_cast<size_t>(g.rm_eo - g.rm_so)));
  return out;
}

std::optional<std::vector<std::string>> HostPattern::match_whole(std::string_view text) const {
  // POSIX takes the leftmost longest match: if a whole-text match exists, a
  // match starting at 0 reaches the end.
  auto m = search(text);
  if (!m || (*m)[0].size() != text.size()) return std::nullopt;
  return m;
}

HostNaming::HostNaming(std::string pattern) : pattern_(std::move(pattern)) {
  if (pattern_.empty()) return;
  try {
    regex_.emplace(pattern_);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("host pattern ") + e.what());
  }
}

std::optional<HcaName> HostNaming::parse(std::string_view description) const {
  description = trim(description);
  if (description.empty()) return std::nullopt;
  HcaName out;
  if (!regex_) {
    // The common case, kept off the regex: it is called once per HCA.
    size_t space = description.find_first_of(" \t");
    out.host = std::string(description.substr(0, space));
    if (space != std::string_view::npos) {
      std::string_view rest = trim(description.substr(space));
      out.device = std::string(rest.substr(0, rest.find_first_of(" \t")));
    }
  } else {
    auto m = regex_->search(description);
    if (!m || (*m)[1].empty()) return std::nullopt;
    out.host = (*m)[1];
    if (m->size() > 2) out.device = (*m)[2];
  }
  out.rail = trailing_number(out.device);
  return out;
}

}  // namespace topo
