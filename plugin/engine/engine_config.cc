#include "plugin/engine/engine_config.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "common/error.h"
#include "common/line_source.h"
#include "common/quote.h"
#include "fabric/routing.h"

namespace topo {
namespace {

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> split_commas(const std::string& value) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t end = value.find(',', start);
    std::string item = trim(std::string_view(value).substr(start, end - start));
    if (!item.empty()) out.push_back(item);
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

// A finite number, or nullopt. from_chars reads "nan" and "inf" too, which
// no setting means: NaN passes every range check (and turned into an int is
// undefined), and an infinite weight makes NaN of the tiers it multiplies.
std::optional<double> parse_number(const std::string& text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

void set_weights(EngineConfig& c, const std::string& value, const std::string& file, int line) {
  const std::pair<const char*, double Weights::*> names[] = {{"degraded", &Weights::degraded},
                                                             {"pod_edge", &Weights::pod_edge},
                                                             {"spine_edge", &Weights::spine_edge},
                                                             {"overloaded_leaf", &Weights::overloaded_leaf},
                                                             {"leaf", &Weights::leaf},
                                                             {"pressure", &Weights::pressure},
                                                             {"slowdown", &Weights::slowdown},
                                                             {"fragment", &Weights::fragment}};
  const char* allowed = "degraded, pod_edge, spine_edge, overloaded_leaf, leaf, pressure, slowdown, fragment";
  for (const std::string& item : split_commas(value)) {
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw ParseError(file, line, fmt::format("Weights: '{}' is not name=number (names: {})", shown(item), allowed));
    std::string name = lower(trim(item.substr(0, eq)));
    auto number = parse_number(trim(item.substr(eq + 1)));
    if (!number || *number < 0)
      throw ParseError(file, line, fmt::format("Weights: '{}' needs a number of at least 0", shown(item)));
    bool found = false;
    for (const auto& [n, member] : names)
      if (name == n) {
        c.weights.*member = *number;
        found = true;
      }
    if (!found)
      throw ParseError(file, line, fmt::format("Weights: unknown weight '{}' (names: {})", shown(name), allowed));
  }
}

// A whole number in [low, high], or nullopt.
std::optional<int> parse_whole(const std::string& text, int low, int high) {
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < low || v > high) return std::nullopt;
  return v;
}

// A value NCCL reads as a list of names (NCCL_IB_HCA, NCCL_SOCKET_IFNAME:
// prefixes, `^` to exclude, `=` for exact names, `:port`): printable,
// without spaces, so that it passes through a job's environment as it is.
// "" unsets.
std::string name_list(const std::string& value, const char* field, const std::string& file, int line) {
  for (char ch : value)
    if (ch <= ' ' || ch == 0x7f)
      throw ParseError(file, line,
                       fmt::format("{} '{}': expected NCCL's name list (e.g. mlx5_0,mlx5_1 or "
                                   "^docker,lo), printable ASCII without spaces",
                                   field, shown(value)));
  return value;
}

// The NCCL hint keys; false for any other key.
bool read_nccl_hint(NcclSiteHints& h, const std::string& key, const std::string& value, const std::string& file,
                    int line) {
  auto byte = [&](const char* field) {
    if (value.empty()) return -1;
    auto n = parse_whole(value, 0, 255);
    if (!n)
      throw ParseError(file, line, fmt::format("{} '{}': expected a whole number from 0 to 255", field, shown(value)));
    return *n;
  };
  if (key == "rocehca")
    h.ib_hca = name_list(value, "RoceHca", file, line);
  else if (key == "rocegidindex")
    h.gid_index = byte("RoceGidIndex");
  else if (key == "rocetrafficclass")
    h.traffic_class = byte("RoceTrafficClass");
  else if (key == "socketifname")
    h.socket_ifname = name_list(value, "SocketIfname", file, line);
  else if (key == "ecmpqpsperconnection") {
    auto n = parse_whole(value, 0, kMaxQps);
    if (!n)
      throw ParseError(file, line,
                       fmt::format("EcmpQpsPerConnection '{}': expected a whole number from 0 (never set) to {}",
                                   shown(value), kMaxQps));
    h.ecmp_qps = *n;
  } else
    return false;
  return true;
}

// The placement keys; false for any other key.
bool read_placement_key(EngineConfig& c, const std::string& key, const std::string& value, const std::string& file,
                        int line) {
  if (key == "dbpath") {
    if (value.empty()) throw ParseError(file, line, "DbPath needs a file name");
    c.db_path = value;
  } else if (key == "hostpattern") {
    c.host_pattern = value;
    if (value.empty()) {
      c.host_regex.reset();
      return true;
    }
    try {
      c.host_regex.emplace(value);
    } catch (const std::invalid_argument& e) {
      throw ParseError(file, line, fmt::format("HostPattern {}", e.what()));
    }
  } else if (key == "weights") {
    set_weights(c, value, file, line);
  } else if (key == "defaultprofile") {
    auto p = parse_profile(lower(value));
    if (!p)
      throw ParseError(file, line,
                       fmt::format("DefaultProfile '{}': expected allreduce, alltoall, mixed or none", shown(value)));
    c.default_profile = *p;
  } else if (key == "strict") {
    std::string v = lower(value);
    if (v == "yes" || v == "true" || v == "1")
      c.strict = true;
    else if (v == "no" || v == "false" || v == "0")
      c.strict = false;
    else
      throw ParseError(file, line, fmt::format("Strict '{}': expected yes or no", shown(value)));
  } else if (key == "partitions") {
    c.partitions.clear();
    for (const std::string& p : split_commas(value)) c.partitions.insert(p);
  } else if (key == "candidates") {
    auto n = parse_number(value);
    if (!n || *n < 1 || *n > 64 || *n != static_cast<int>(*n))
      throw ParseError(file, line, fmt::format("Candidates '{}': expected a whole number from 1 to 64", shown(value)));
    c.candidates = static_cast<int>(*n);
  } else if (key == "deferabove" || key == "defershare") {
    auto n = parse_number(value);
    DeferRule rule = c.defer;
    (key == "deferabove" ? rule.above_slowdown : rule.max_wait_share) = n ? *n : -1;
    if (std::string problem = defer_rule_problem(rule); !n || !problem.empty())
      throw ParseError(
          file, line,
          fmt::format("{} '{}': expected {}", key == "deferabove" ? "DeferAbove" : "DeferShare", shown(value),
                      key == "deferabove" ? "0 (never) or a slowdown above 1, e.g. 1.10"
                                          : "a share of the job's time limit above 0, e.g. 1"));
    c.defer = rule;
  } else {
    return false;
  }
  return true;
}

// The health thresholds of cables and NICs; false for any other key.
// `spelled`: the key as the file spells it, for the message.
bool read_health_key(EngineConfig& c, const std::string& key, const std::string& spelled, const std::string& value,
                     const std::string& file, int line) {
  if (key == "healtherrorsperhour") {
    auto n = parse_number(value);
    if (!n || *n <= 0)
      throw ParseError(file, line, fmt::format("HealthErrorsPerHour '{}': expected a number above 0", shown(value)));
    c.health.errors_per_hour = *n;
  } else if (key == "healthxmitwaitshare") {
    auto n = parse_number(value);
    if (!n || *n <= 0 || *n > 1)
      throw ParseError(file, line,
                       fmt::format("HealthXmitWaitShare '{}': expected a share above 0, at most 1", shown(value)));
    c.health.xmit_wait_share = *n;
  } else if (key == "healthpausespersecond" || key == "healthecnovermedian" || key == "healthecnmarkspersecond") {
    auto n = parse_number(value);
    if (!n || *n <= 0)
      throw ParseError(file, line, fmt::format("{} '{}': expected a number above 0", shown(spelled), shown(value)));
    (key == "healthpausespersecond" ? c.nic.pauses_per_second
     : key == "healthecnovermedian" ? c.nic.ecn_over_median
                                    : c.nic.ecn_marks_per_second) = *n;
  } else {
    return false;
  }
  return true;
}

// The route keys; false for any other key. `routes_line` is where
// RouteJobs was set, for the check that needs the whole file.
bool read_route_key(RouteSettings& r, const std::string& key, const std::string& value, const std::string& file,
                    int line, int& routes_line) {
  if (key == "routejobs") {
    std::string v = lower(value);
    if (v == "yes" || v == "true" || v == "1")
      r.enabled = true;
    else if (v == "no" || v == "false" || v == "0")
      r.enabled = false;
    else
      throw ParseError(file, line, fmt::format("RouteJobs '{}': expected yes or no", shown(value)));
    routes_line = line;
  } else if (key == "routefile") {
    // slurmctld's working directory is no place to guess at.
    if (value.empty() || value.front() != '/')
      throw ParseError(
          file, line,
          fmt::format("RouteFile '{}': expected an absolute path (the file OpenSM's -U names)", shown(value)));
    r.file = value;
  } else if (key == "routeinterval") {
    auto n = parse_whole(value, 0, 86400);
    if (!n)
      throw ParseError(file, line,
                       fmt::format("RouteInterval '{}': expected whole seconds from 0 to 86400", shown(value)));
    r.interval_s = *n;
  } else if (key == "routecommand") {
    r.command = value;
  } else if (key == "routecommandtimeout") {
    auto n = parse_whole(value, 1, 3600);
    if (!n)
      throw ParseError(file, line,
                       fmt::format("RouteCommandTimeout '{}': expected whole seconds from 1 to 3600", shown(value)));
    r.command_timeout_s = *n;
  } else if (key == "routemaxchanges") {
    auto n = parse_whole(value, 0, 100000000);
    if (!n)
      throw ParseError(
          file, line,
          fmt::format("RouteMaxChanges '{}': expected a whole number of table entries, 0 for no cap", shown(value)));
    r.max_changes = *n;
  } else {
    return false;
  }
  return true;
}

}  // namespace

std::string EngineConfig::fabric_host(const std::string& node_name) const {
  if (!host_regex) return node_name;
  auto m = host_regex->match_whole(node_name);
  return m ? (*m)[1] : node_name;
}

std::optional<EngineConfig> read_engine_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT) return std::nullopt;
    throw std::system_error(errno, std::generic_category(), "cannot read " + path);
  }
  EngineConfig c;
  c.source = path;
  // A few lines by hand: a megabyte is no topo_aware.conf.
  LineSource lines(in, path, 64 << 10, 1 << 20);
  std::string_view view;
  int line = 0, routes_line = 0;
  while (lines.next(view)) {
    line = lines.number();
    std::string raw(view);
    std::string text = trim(raw.substr(0, raw.find('#')));
    if (text.empty()) continue;
    size_t eq = text.find('=');
    if (eq == std::string::npos) throw ParseError(path, line, fmt::format("expected Key=Value, got '{}'", shown(text)));
    const std::string spelled = trim(text.substr(0, eq));
    const std::string key = lower(spelled), value = trim(text.substr(eq + 1));
    if (!read_placement_key(c, key, value, path, line) && !read_health_key(c, key, spelled, value, path, line) &&
        !read_nccl_hint(c.nccl, key, value, path, line) &&
        !read_route_key(c.routes, key, value, path, line, routes_line))
      throw ParseError(path, line,
                       fmt::format("unknown key '{}' (known: DbPath, HostPattern, Weights, DefaultProfile, Strict, "
                                   "Partitions, Candidates, DeferAbove, DeferShare, HealthErrorsPerHour, "
                                   "HealthXmitWaitShare, RoceHca, RoceGidIndex, RoceTrafficClass, SocketIfname, "
                                   "EcmpQpsPerConnection, HealthPausesPerSecond, HealthEcnOverMedian, "
                                   "HealthEcnMarksPerSecond, RouteJobs, RouteFile, RouteInterval, RouteCommand, "
                                   "RouteCommandTimeout, RouteMaxChanges)",
                                   shown(spelled)));
  }
  if (lines.bad()) throw std::system_error(errno, std::generic_category(), "cannot read " + path);
  if (c.routes.enabled && c.routes.file.empty())
    throw ParseError(path, routes_line,
                     "RouteJobs=yes needs RouteFile=PATH (the file OpenSM's -U names, for its file routing engine)");
  return c;
}

}  // namespace topo
