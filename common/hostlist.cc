#include "common/hostlist.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "common/quote.h"

namespace topo {
namespace {

// Slurm's limit on one range (MAX_RANGE in hostlist.c).
constexpr uint64_t kMaxRange = 64 * 1024;
// Longer digit runs do not fit in 64 bits; such names are kept verbatim.
constexpr size_t kMaxDigits = 18;
// Our own bound on the bracket groups of one name: the expansion recurses
// once per group, so the bound is the stack depth a name can ask for. Real
// names hold one to three ("rack[1-2]-n[01-16]").
constexpr size_t kMaxGroups = 16;

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool is_separator(char c) { return c == ',' || c == ' ' || c == '\t'; }

struct Range {
  uint64_t lo = 0, hi = 0;
  int width = 0;  // zero padding, the number of digits written for `lo`
};

std::string pad(uint64_t value, int width) { return fmt::format("{:0{}}", value, width); }

// One name of the expression: literal text alternating with range lists,
// text[0] ranges[0] text[1] ... ranges[k-1] text[k].
struct Pattern {
  std::vector<std::string> text;
  std::vector<std::vector<Range>> ranges;
};

std::vector<Range> parse_ranges(std::string_view expr, size_t begin, size_t end) {
  std::vector<Range> out;
  size_t pos = begin;
  while (true) {
    size_t stop = pos;
    while (stop < end && expr[stop] != ',') ++stop;
    std::string_view piece = expr.substr(pos, stop - pos);
    size_t dash = piece.find('-');
    std::string_view lo = piece.substr(0, dash);
    std::string_view hi = dash == std::string_view::npos ? lo : piece.substr(dash + 1);
    auto all_digits = [](std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_digit); };
    if (!all_digits(lo) || !all_digits(hi))
      throw HostlistError(std::string(expr), pos,
                          fmt::format("expected a number or a range like 1-4 inside [], found '{}'", shown(piece)));
    if (lo.size() > kMaxDigits || hi.size() > kMaxDigits)
      throw HostlistError(std::string(expr), pos, fmt::format("number '{}' is too long", shown(piece)));
    Range r;
    r.lo = std::stoull(std::string(lo));
    r.hi = std::stoull(std::string(hi));
    r.width = static_cast<int>(lo.size());
    if (r.lo > r.hi)
      throw HostlistError(std::string(expr), pos,
                          fmt::format("range '{}' runs backwards; expected lo-hi with lo <= hi", shown(piece)));
    if (r.hi - r.lo + 1 > kMaxRange)
      throw HostlistError(std::string(expr), pos,
                          fmt::format("range '{}' holds more than {} hosts, Slurm's limit", shown(piece), kMaxRange));
    out.push_back(r);
    if (stop == end) break;
    pos = stop + 1;
  }
  return out;
}

// Splits one name (expr[begin, end)) into its text and range lists.
Pattern parse_name(std::string_view expr, size_t begin, size_t end) {
  Pattern p;
  std::string text;
  size_t pos = begin;
  while (pos < end) {
    char c = expr[pos];
    if (c == ']') throw HostlistError(std::string(expr), pos, "found ']' without a '[' before it");
    if (c != '[') {
      text += c;
      ++pos;
      continue;
    }
    if (p.ranges.size() == kMaxGroups)
      throw HostlistError(std::string(expr), pos, fmt::format("more than {} bracket groups in one name", kMaxGroups));
    size_t close = expr.find(']', pos);  // the caller has checked it exists and nothing nests
    p.text.push_back(std::move(text));
    text.clear();
    p.ranges.push_back(parse_ranges(expr, pos + 1, close));
    pos = close + 1;
    if (pos < end && expr.find('[', pos) >= end)
      throw HostlistError(std::string(expr), pos,
                          "expected ',' or the end of the name after the last ']'; Slurm allows no suffix after it");
  }
  p.text.push_back(std::move(text));
  return p;
}

// Appends every name of `p` from `group` on, each `name` so far followed
// by the rest; `name` is the one buffer all of them are written in, left as
// it was given.
void expand_into(const Pattern& p, size_t group, std::string& name, std::vector<std::string>& out) {
  const size_t given = name.size();
  name += p.text[group];
  if (group == p.ranges.size()) {
    out.push_back(name);
  } else {
    const size_t before_number = name.size();
    for (const Range& r : p.ranges[group])
      for (uint64_t v = r.lo; v <= r.hi; ++v) {
        name += pad(v, r.width);
        expand_into(p, group + 1, name, out);
        name.resize(before_number);
      }
  }
  name.resize(given);
}

// --- compression -----------------------------------------------------------

// A name split at its trailing number: "gpu007" -> {"gpu", "007"}.
struct Split {
  std::string prefix;
  std::string digits;  // empty when the name has no trailing number
};

Split split_trailing_number(const std::string& name) {
  size_t start = name.size();
  while (start > 0 && is_digit(name[start - 1])) --start;
  if (name.size() - start > kMaxDigits) return {name, ""};
  return {name.substr(0, start), name.substr(start)};
}

bool padded(const std::string& digits) { return digits.size() > 1 && digits[0] == '0'; }

// Numbers that can share one bracket group: same zero padding.
struct NumberClass {
  int width = 0;  // 0: written without padding
  std::set<uint64_t> values;
};

// The zero padding a digit string is written with in a bracket group. A
// padded number ("007") needs exactly its width; an unpadded one ("100")
// prints the same at any width up to its length, so it joins the widest
// padded group it fits, which lets "098,099,100" become one range.
int width_class(const std::string& digits, const std::set<int>& padded_widths) {
  int len = static_cast<int>(digits.size());
  if (padded(digits)) return len;
  int width = 0;
  for (int w : padded_widths)
    if (w <= len) width = w;
  return width;
}

std::set<int> padded_widths(const std::vector<std::string>& digit_strings) {
  std::set<int> out;
  for (const auto& d : digit_strings)
    if (padded(d)) out.insert(static_cast<int>(d.size()));
  return out;
}

// Groups digit strings into classes that can share one bracket group.
std::vector<NumberClass> classify_numbers(const std::vector<std::string>& digit_strings) {
  std::set<int> widths = padded_widths(digit_strings);
  std::map<int, NumberClass> classes;
  for (const auto& d : digit_strings) {
    int width = width_class(d, widths);
    classes[width].width = width;
    classes[width].values.insert(std::stoull(d));
  }
  std::vector<NumberClass> out;
  for (auto& [w, c] : classes) out.push_back(std::move(c));
  return out;
}

// "1-4,7" for the values of one class.
std::string ranges_text(const NumberClass& c) {
  std::string out;
  auto it = c.values.begin();
  while (it != c.values.end()) {
    uint64_t lo = *it, hi = lo;
    for (++it; it != c.values.end() && *it == hi + 1; ++it) hi = *it;
    if (!out.empty()) out += ',';
    out += pad(lo, c.width);
    if (hi != lo) out += "-" + pad(hi, c.width);
  }
  return out;
}

}  // namespace

bool natural_less(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && is_digit(a[ie])) ++ie;
      while (je < b.size() && is_digit(b[je])) ++je;
      std::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      while (na.size() > 1 && na[0] == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb[0] == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      if (ie - i != je - j) return ie - i > je - j;  // more padding first: 007 before 7
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

namespace {

// One token of the compressed form, e.g. prefix "gpu", numbers "[001-004,007]".
struct Token {
  std::string prefix;
  std::string numbers;  // "[...]", a single padded number, or empty for a plain name
  std::string first;    // first name it stands for, to order the output
};

std::string bracketed(const NumberClass& c) {
  std::string r = ranges_text(c);
  return c.values.size() == 1 ? r : "[" + r + "]";
}

// Second dimension: tokens "rack1-n[01-02]" and "rack2-n[01-02]" differ only
// in the number before the last range and merge into "rack[1-2]-n[01-02]".
// The last group of a Slurm name must end it, so merged tokens always keep
// their trailing bracket ("rack[1-2]-n[01]").
std::vector<Token> merge_second_dimension(std::vector<Token> tokens) {
  struct Key {
    std::string head, mid, numbers;
    auto operator<=>(const Key&) const = default;
  };
  std::map<Key, std::vector<size_t>> groups;
  std::vector<Token> out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    const std::string& p = t.prefix;
    // prefix = head + digits + mid, mid non-empty and free of digits.
    size_t mid_start = p.size();
    while (mid_start > 0 && !is_digit(p[mid_start - 1])) --mid_start;
    size_t head_end = mid_start;
    while (head_end > 0 && is_digit(p[head_end - 1])) --head_end;
    if (t.numbers.empty() || mid_start == p.size() || head_end == mid_start || mid_start - head_end > kMaxDigits) {
      out.push_back(t);
      continue;
    }
    groups[{p.substr(0, head_end), p.substr(mid_start), t.numbers}].push_back(i);
  }
  for (auto& [key, members] : groups) {
    std::vector<std::string> digits;
    for (size_t i : members) {
      const std::string& p = tokens[i].prefix;
      digits.push_back(p.substr(key.head.size(), p.size() - key.head.size() - key.mid.size()));
    }
    std::set<int> widths = padded_widths(digits);
    for (const NumberClass& c : classify_numbers(digits)) {
      std::vector<size_t> in_class;
      for (size_t k = 0; k < members.size(); ++k)
        if (width_class(digits[k], widths) == c.width) in_class.push_back(members[k]);
      std::string separate;
      for (size_t i : in_class) separate += (separate.empty() ? "" : ",") + tokens[i].prefix + tokens[i].numbers;
      std::string tail = key.numbers.front() == '[' ? key.numbers : "[" + key.numbers + "]";
      std::string merged = key.head + "[" + ranges_text(c) + "]" + key.mid + tail;
      if (in_class.size() < 2 || merged.size() >= separate.size()) {
        for (size_t i : in_class) out.push_back(tokens[i]);
        continue;
      }
      Token m;
      m.prefix = merged;
      m.first = tokens[in_class.front()].first;
      for (size_t i : in_class)
        if (natural_less(tokens[i].first, m.first)) m.first = tokens[i].first;
      out.push_back(std::move(m));
    }
  }
  return out;
}

// The expression as an error quotes it: 64 bytes around the offset at most.
std::string excerpt(std::string_view expression, size_t position) {
  constexpr size_t kBefore = 32;
  if (expression.size() <= 64 || position <= kBefore) return shown(expression);
  return "..." + shown(expression.substr(position - kBefore));
}

}  // namespace

HostlistError::HostlistError(std::string expression, size_t position, const std::string& what, bool past_max_names)
    : std::invalid_argument(
          fmt::format("hostlist '{}' at offset {}: {}", excerpt(expression, position), position, what)),
      expression_(std::move(expression)),
      position_(position),
      past_max_names_(past_max_names) {}

std::vector<std::string> expand_hostlist(std::string_view expr, uint64_t max_names) {
  max_names = std::min<uint64_t>(max_names, uint64_t{1} << 62);
  std::vector<std::string> out;
  uint64_t total = 0, bytes = 0;
  size_t pos = 0;
  while (pos < expr.size()) {
    if (is_separator(expr[pos])) {
      ++pos;
      continue;
    }
    // A name runs to the next separator outside brackets.
    size_t begin = pos, open = std::string_view::npos;
    for (; pos < expr.size(); ++pos) {
      char c = expr[pos];
      if (c == '[') {
        if (open != std::string_view::npos)
          throw HostlistError(std::string(expr), pos,
                              fmt::format("expected ']' to close the '[' at offset {} before another '['", open));
        open = pos;
      } else if (c == ']') {
        if (open == std::string_view::npos)
          throw HostlistError(std::string(expr), pos, "found ']' without a '[' before it");
        open = std::string_view::npos;
      } else if (open == std::string_view::npos && is_separator(c)) {
        break;
      }
    }
    if (open != std::string_view::npos) throw HostlistError(std::string(expr), open, "expected ']' to close this '['");
    Pattern p = parse_name(expr, begin, pos);
    uint64_t names = 1;
    uint64_t longest = 0;  // bytes of its longest name
    for (const std::string& t : p.text) longest += t.size();
    for (const auto& group : p.ranges) {
      uint64_t n = 0;
      int digits = 0;
      for (const Range& r : group) {
        n += r.hi - r.lo + 1;
        digits = std::max({digits, r.width, static_cast<int>(pad(r.hi, 0).size())});
      }
      longest += static_cast<uint64_t>(digits);
      // Past the cap the count stops at cap + 1: no product overflows.
      names = (n != 0 && names > max_names / n) ? max_names + 1 : names * n;
      if (names > max_names) break;
    }
    total += names;
    if (total > max_names)
      throw HostlistError(std::string(expr), begin, fmt::format("expands to more than {} names", max_names), true);
    if (longest > 0 && names > (kMaxHostlistBytes - bytes) / longest)  // bytes never passes the cap: no overflow
      throw HostlistError(std::string(expr), begin,
                          fmt::format("expands to more than {} bytes of names", kMaxHostlistBytes));
    bytes += names * longest;
    std::string name;
    expand_into(p, 0, name, out);
  }
  return out;
}

std::string compress_hostlist(std::span<const std::string> names) {
  std::map<std::string, std::vector<std::string>> by_prefix;  // prefix -> digit strings
  std::set<std::string> seen;
  std::vector<Token> tokens;
  for (const std::string& name : names) {
    if (name.empty() || !seen.insert(name).second) continue;
    Split s = split_trailing_number(name);
    if (s.digits.empty())
      tokens.push_back({name, "", name});
    else
      by_prefix[s.prefix].push_back(s.digits);
  }
  for (const auto& [prefix, digits] : by_prefix)
    for (const NumberClass& c : classify_numbers(digits))
      tokens.push_back({prefix, bracketed(c), prefix + pad(*c.values.begin(), c.width)});

  tokens = merge_second_dimension(std::move(tokens));
  std::sort(tokens.begin(), tokens.end(),
            [](const Token& a, const Token& b) { return natural_less(a.first, b.first); });
  std::string out;
  for (const Token& t : tokens) {
    if (!out.empty()) out += ',';
    out += t.prefix + t.numbers;
  }
  return out;
}

}  // namespace topo
