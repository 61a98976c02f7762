#include "health/ethtool_counters.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "common/line_source.h"
#include "common/quote.h"

namespace topo {
namespace {

// A host's file of every NIC's counters is a few hundred kilobytes; far
// above that is not one.
constexpr uint64_t kMaxFileBytes = 64ull << 20;
constexpr size_t kMaxLine = 4096;

constexpr std::string_view kKept[] = {
    "rx_pause_ctrl_phy",
    "tx_pause_ctrl_phy",
    "rx_global_pause_duration",
    "tx_global_pause_duration",
    "tx_pause_storm_warning_events",
    "tx_pause_storm_error_events",
    "np_ecn_marked_roce_packets",
    "np_cnp_sent",
    "rp_cnp_handled",
    "rp_cnp_ignored",
    "rx_discards_phy",
    "tx_discards_phy",
    "rx_out_of_buffer",
    "rx_bytes_phy",
    "tx_bytes_phy",
    "rx_bytes",
    "tx_bytes",
    "rx_dropped",
    "tx_dropped",
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// A host or NIC name: printable, no blanks, as a netdev or host name is.
bool valid_name(std::string_view s) {
  if (s.empty() || s.size() > 255) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u > 0x20 && u != 0x7f;
  });
}

struct Reader {
  const std::string& file;
  std::string host;
  bool host_given = false;
  bool time_given = false;
  int64_t taken_ms = 0;
  std::vector<NicSample> nics;
  std::set<std::string, std::less<>> seen;

  [[noreturn]] void fail(int line, std::string_view field, const std::string& what) const {
    throw ParseError(file, line, fmt::format("field {}: {}", field, what));
  }

  void header(std::string_view body, int line) {
    // "# host NAME" / "# iface NAME"; any other comment is skipped.
    body = trim(body);
    size_t space = body.find_first_of(" \t");
    std::string_view key = body.substr(0, space);
    if (key != "host" && key != "iface" && key != "time") return;
    std::string_view value = space == std::string_view::npos ? std::string_view{} : trim(body.substr(space));
    if (key == "time") return time(value, line);
    if (!valid_name(value))
      fail(line, key, fmt::format("'# {} NAME' needs one name without blanks, not '{}'", key, shown(value)));
    if (key == "host") {
      if (host_given || !nics.empty()) fail(line, "host", "'# host' must come once, before the first '# iface'");
      host = std::string(value);
      host_given = true;
      return;
    }
    if (!seen.insert(std::string(value)).second)
      fail(line, "iface", fmt::format("NIC {} is listed twice in this file", shown(value)));
    nics.push_back({host, std::string(value), {}, taken_ms});
  }

  void time(std::string_view value, int line) {
    if (time_given || !nics.empty()) fail(line, "time", "'# time' must come once, before the first '# iface'");
    // Seconds since 1970, as `date +%s.%N` prints them; up to the year 5000.
    std::string_view whole = value.substr(0, value.find('.'));
    std::string_view frac = whole.size() < value.size() ? value.substr(whole.size() + 1) : std::string_view{};
    int64_t s = 0;
    auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), s);
    bool digits = std::all_of(frac.begin(), frac.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (whole.empty() || ec != std::errc{} || end != whole.data() + whole.size() || s < 0 || s > 95'000'000'000 ||
        !digits || frac.size() > 9)
      fail(line, "time", fmt::format("'{}' is not Unix seconds (date +%s.%N)", shown(value)));
    int64_t ms = 0;
    for (size_t i = 0; i < 3; ++i) ms = ms * 10 + (i < frac.size() ? frac[i] - '0' : 0);
    taken_ms = s * 1000 + ms;
    time_given = true;
  }

  void counter(std::string_view text, int line) {
    size_t colon = text.find(':');
    if (colon == std::string_view::npos)
      fail(line, "counter", fmt::format("expected 'name: value', not '{}'", shown(trim(text))));
    std::string_view name = trim(text.substr(0, colon)), value = trim(text.substr(colon + 1));
    if (name.empty()) fail(line, "counter", "a value without a counter name");
    if (name == "NIC statistics" && value.empty()) return;
    if (nics.empty()) fail(line, "iface", fmt::format("counter {} comes before any '# iface NAME' line", shown(name)));
    if (!is_kept_nic_counter(name)) return;
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || ec != std::errc{} || end != value.data() + value.size())
      fail(line, name, fmt::format("'{}' is not a count (an unsigned 64-bit number)", shown(value)));
    if (!nics.back().counters.emplace(std::string(name), v).second)
      fail(line, name, fmt::format("counted twice for NIC {}", nics.back().iface));
  }
};

}  // namespace

bool is_kept_nic_counter(std::string_view name) {
  if (std::find(std::begin(kKept), std::end(kKept), name) != std::end(kKept)) return true;
  // rx_prioN_pause, tx_prioN_pause and their _duration, N in 0..7.
  if (name.size() < 14 || (name.substr(0, 7) != "rx_prio" && name.substr(0, 7) != "tx_prio")) return false;
  if (name[7] < '0' || name[7] > '7') return false;
  std::string_view rest = name.substr(8);
  return rest == "_pause" || rest == "_pause_duration";
}

std::vector<NicSample> parse_ethtool_stats(std::istream& in, const std::string& file, const std::string& default_host) {
  Reader r{file, default_host, false, false, 0, {}, {}};
  LineSource lines(in, file, kMaxLine, kMaxFileBytes);
  std::string_view line;
  while (lines.next(line)) {
    std::string_view t = trim(line);
    if (t.empty()) continue;
    if (t.front() == '#') {
      r.header(t.substr(1), lines.number());
      continue;
    }
    r.counter(line, lines.number());
  }
  if (lines.bad()) throw ParseError(file, 0, "read error");
  if (!valid_name(r.host))
    throw ParseError(
        file, 0, fmt::format("field host: no host name ('# host NAME' line or file name), not '{}'", shown(r.host)));
  return std::move(r.nics);
}

NicSample parse_ethtool_output(std::string_view text, const std::string& host, const std::string& iface) {
  std::string file = fmt::format("ethtool -S {}", iface);
  std::istringstream in(fmt::format("# host {}\n# iface {}\n{}", host, iface, text));
  std::vector<NicSample> nics = parse_ethtool_stats(in, file, host);
  if (nics.size() != 1) throw ParseError(file, 0, "field iface: output of more than one NIC");
  return std::move(nics.front());
}

std::vector<NicSample> read_ethtool_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".txt" && it->is_regular_file()) files.push_back(it->path());
  if (ec) throw std::runtime_error(fmt::format("{}: cannot read the directory: {}", dir.string(), ec.message()));
  if (files.empty())
    throw std::runtime_error(fmt::format("{}: no *.txt file of ethtool -S output (one per host)", dir.string()));
  std::sort(files.begin(), files.end());
  std::vector<NicSample> out;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& path : files) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(fmt::format("{}: cannot open", path.string()));
    for (NicSample& nic : parse_ethtool_stats(in, path.string(), path.stem().string())) {
      if (!seen.emplace(nic.host, nic.iface).second)
        throw ParseError(path.string(), 0,
                         fmt::format("field iface: {} {} is also in an earlier file", nic.host, nic.iface));
      out.push_back(std::move(nic));
    }
  }
  return out;
}

}  // namespace topo
