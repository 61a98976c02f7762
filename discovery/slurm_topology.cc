#include "discovery/slurm_topology.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <span>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "common/hostlist.h"
#include "common/line_source.h"
#include "common/quote.h"
#include "discovery/slurm_conf.h"

namespace topo {
namespace {

// Slurm refuses longer switch names (HOST_NAME_MAX in _parse_switches).
constexpr size_t kMaxSwitchName = 64;
// Include depth past which a file is taken to include itself.
constexpr int kMaxIncludeDepth = 16;

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// One logical line: physical lines joined by continuations, comments and
// escapes handled as Slurm's _get_next_line does.
struct LogicalLine {
  std::string file;
  int line = 0;  // first physical line
  std::string text;
};

// Cuts the comment: everything from a '#' preceded by an even number of
// backslashes.
void strip_comment(std::string& s) {
  int backslashes = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '#' && backslashes % 2 == 0) {
      s.resize(i);
      return;
    }
    backslashes = s[i] == '\\' ? backslashes + 1 : 0;
  }
}

// True (and the backslash and what follows it removed) when the line ends
// in an odd number of backslashes, trailing blanks allowed after them.
bool strip_continuation(std::string& s) {
  size_t end = s.size();
  while (end > 0 && is_space(s[end - 1])) --end;
  size_t run = 0;
  while (run < end && s[end - 1 - run] == '\\') ++run;
  if (run % 2 == 0) return false;
  s.resize(end - 1);
  return true;
}

// A backslash makes the next character literal ("\#" is a '#', "\\" a
// backslash); a lone one at the very end is dropped, as Slurm drops it.
std::string strip_escapes(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\')
      out += s[i];
    else if (i + 1 < s.size())
      out += s[++i];
  }
  return out;
}

struct KeyValue {
  std::string key;  // as written
  std::string value;
};

// Splits a logical line into Key=Value pairs: Slurm's regex allows blanks
// around '=', and a value is either a run of non-blanks or "quoted".
std::vector<KeyValue> split_pairs(const LogicalLine& line) {
  std::vector<KeyValue> out;
  const std::string& s = line.text;
  size_t pos = 0;
  auto skip_blanks = [&] {
    while (pos < s.size() && is_space(s[pos])) ++pos;
  };
  while (true) {
    skip_blanks();
    if (pos >= s.size()) break;
    size_t key_start = pos;
    while (pos < s.size() && (std::isalnum(static_cast<unsigned char>(s[pos])) || s[pos] == '_' || s[pos] == '.'))
      ++pos;
    std::string key = s.substr(key_start, pos - key_start);
    skip_blanks();
    bool op = pos + 1 < s.size() && std::strchr("+-*/", s[pos]) && s[pos + 1] == '=';
    if (key.empty() || pos >= s.size() || (s[pos] != '=' && !op)) {
      size_t word_end = key_start;
      while (word_end < s.size() && !is_space(s[word_end])) ++word_end;
      throw ParseError(line.file, line.line,
                       fmt::format("expected Key=Value, found '{}'", shown(s.substr(key_start, word_end - key_start))));
    }
    if (s[pos] != '=')
      throw ParseError(
          line.file, line.line,
          fmt::format("operator '{}=' after {} is not meaningful in topology.conf; expected '='", s[pos], key));
    ++pos;
    skip_blanks();
    std::string value;
    if (pos < s.size() && s[pos] == '"') {
      size_t close = s.find('"', pos + 1);
      if (close == std::string::npos)
        throw ParseError(line.file, line.line, fmt::format("expected a closing '\"' for the value of {}", key));
      value = s.substr(pos + 1, close - pos - 1);
      pos = close + 1;
      if (pos < s.size() && !is_space(s[pos]))
        throw ParseError(line.file, line.line, fmt::format("expected a blank after the quoted value of {}", key));
    } else {
      size_t start = pos;
      while (pos < s.size() && !is_space(s[pos])) ++pos;
      value = s.substr(start, pos - start);
      if (value.empty()) throw ParseError(line.file, line.line, fmt::format("expected a value after {}=", key));
    }
    out.push_back({std::move(key), std::move(value)});
  }
  return out;
}

// Files read so far through Include, and the bytes they held: a file that
// includes itself (directly or around a loop) is an error, and so is more
// text than any cluster's topology.conf holds (a few includes of a large
// file, many times over, could otherwise take any time and memory).
struct Includes {
  std::vector<std::filesystem::path> chain;  // the including files, outermost first
  uint64_t bytes = 0;
};
constexpr uint64_t kMaxTotalBytes = 64 << 20;

std::filesystem::path canonical_or_same(const std::filesystem::path& p) {
  std::error_code ec;
  std::filesystem::path c = std::filesystem::weakly_canonical(p, ec);
  return ec ? p : c;
}

void read_lines(std::istream& in, const std::string& file, Includes& includes, std::vector<LogicalLine>& out);

void read_include(const std::string& file, int line, std::string_view name, Includes& includes,
                  std::vector<LogicalLine>& out) {
  std::filesystem::path path(name);
  if (path.is_relative()) path = std::filesystem::path(file).parent_path() / path;
  std::filesystem::path canonical = canonical_or_same(path);
  if (std::find(includes.chain.begin(), includes.chain.end(), canonical) != includes.chain.end()) {
    std::vector<std::string> loop;
    for (const auto& p : includes.chain) loop.push_back(p.string());
    throw ParseError(file, line,
                     fmt::format("Include of '{}' includes a file that includes it: {} -> {}", name,
                                 fmt::join(loop, " -> "), canonical.string()));
  }
  if (includes.chain.size() >= static_cast<size_t>(kMaxIncludeDepth))
    throw ParseError(file, line, fmt::format("Include of '{}' nests deeper than {} files", name, kMaxIncludeDepth));
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw ParseError(file, line, fmt::format("Include: '{}' is not a regular file", path.string()));
  std::ifstream included(path);
  if (!included)
    throw ParseError(file, line, fmt::format("Include: cannot read '{}': {}", path.string(), std::strerror(errno)));
  read_lines(included, path.string(), includes, out);
}

// Reads logical lines, following Include directives.
void read_lines(std::istream& in, const std::string& file, Includes& includes, std::vector<LogicalLine>& out) {
  includes.chain.push_back(canonical_or_same(file));
  LineSource lines(in, file, kMaxLineBytes, kMaxTotalBytes);
  std::string_view view;
  std::string physical;
  auto next = [&] {
    if (!lines.next(view)) return false;
    includes.bytes += view.size() + 1;
    if (includes.bytes > kMaxTotalBytes)
      throw ParseError(
          file, lines.number(),
          fmt::format("more than {} bytes with the files it includes; expected a topology.conf", kMaxTotalBytes));
    physical.assign(view);
    return true;
  };
  while (next()) {
    LogicalLine line{file, lines.number(), ""};
    while (true) {
      if (!physical.empty() && physical.back() == '\r') physical.pop_back();
      strip_comment(physical);
      bool more = strip_continuation(physical);
      line.text += physical;
      if (line.text.size() > kMaxLineBytes)
        throw ParseError(file, line.line,
                         fmt::format("line continues past {} bytes; expected lines of a topology.conf", kMaxLineBytes));
      if (!more || !next()) break;
    }
    line.text = strip_escapes(line.text);
    std::string_view t = line.text;
    while (!t.empty() && is_space(t.front())) t.remove_prefix(1);
    if (t.empty()) continue;
    if (t.size() > 7 && lower(t.substr(0, 7)) == "include" && is_space(t[7])) {
      std::string_view rest = t.substr(8);
      while (!rest.empty() && is_space(rest.front())) rest.remove_prefix(1);
      std::string name(rest.substr(0, std::min(rest.size(), rest.find_first_of(" \t"))));
      std::string_view after = rest.substr(name.size());
      if (name.empty() || after.find_first_not_of(" \t") != std::string_view::npos)
        throw ParseError(file, line.line, "expected 'Include <file>' with a single file name");
      read_include(file, line.line, name, includes, out);
      continue;
    }
    out.push_back(std::move(line));
  }
  if (lines.bad()) throw ParseError(file, 0, "read error");
  includes.chain.pop_back();
}

struct SwitchLine {
  LogicalLine where;
  std::string name;
  bool has_nodes = false, has_switches = false;
  std::vector<std::string> nodes;     // hosts, deduplicated, in order written
  std::vector<std::string> children;  // child switches, likewise
};

// What the file's Nodes= and Switches= may still expand to, of `max_names`.
struct NameBudget {
  uint64_t max_names = 0;
  uint64_t left = 0;
};

std::vector<std::string> expand_list(const LogicalLine& where, const std::string& key, const std::string& value,
                                     NameBudget& budget) {
  std::vector<std::string> names;
  try {
    names = expand_hostlist(value, std::min(budget.left, kMaxHostlistNames));
  } catch (const HostlistError& e) {
    if (e.past_max_names() && budget.left < kMaxHostlistNames)
      throw ParseError(where.file, where.line,
                       fmt::format("{}= takes the file past {} names in Nodes= and Switches= (with its includes); "
                                   "expected a topology.conf of a cluster",
                                   key, budget.max_names));
    throw ParseError(where.file, where.line, fmt::format("{}=: {}", key, e.what()));
  }
  if (names.empty()) throw ParseError(where.file, where.line, fmt::format("expected at least one name in {}=", key));
  budget.left -= names.size();
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (auto& n : names)
    if (seen.insert(n).second) out.push_back(std::move(n));
  return out;
}

SwitchLine parse_switch_line(const LogicalLine& line, NameBudget& names) {
  std::vector<KeyValue> pairs = split_pairs(line);
  if (lower(pairs.front().key) != "switchname")
    throw ParseError(line.file, line.line,
                     fmt::format("expected the line to start with SwitchName=, found {}=", pairs.front().key));
  SwitchLine sw;
  sw.where = line;
  sw.name = pairs.front().value;
  if (sw.name.size() > kMaxSwitchName)
    throw ParseError(
        line.file, line.line,
        fmt::format("SwitchName '{}' is longer than Slurm's {} characters", shown(sw.name), kMaxSwitchName));
  std::set<std::string> given;
  for (size_t i = 1; i < pairs.size(); ++i) {
    const auto& [key, value] = pairs[i];
    std::string k = lower(key);
    if (!given.insert(k).second)
      throw ParseError(line.file, line.line, fmt::format("{}= is given twice for switch '{}'", shown(key), sw.name));
    if (k == "nodes") {
      sw.has_nodes = true;
      sw.nodes = expand_list(line, key, value, names);
    } else if (k == "switches") {
      sw.has_switches = true;
      sw.children = expand_list(line, key, value, names);
    } else if (k == "linkspeed") {
      // A whole number in units Slurm does not use; checked, not kept.
      if (value.empty() || value.size() > 10 ||
          !std::all_of(value.begin(), value.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) ||
          std::stoull(value) > 0xffffffffULL)
        throw ParseError(
            line.file, line.line,
            fmt::format("LinkSpeed must be a whole number (Slurm's arbitrary units), found '{}'", shown(value)));
    } else if (k == "switchname") {
      throw ParseError(
          line.file, line.line,
          fmt::format("a second SwitchName= on one line; expected one switch per line (after '{}')", sw.name));
    } else {
      throw ParseError(line.file, line.line,
                       fmt::format("unknown key '{}'; expected Nodes, Switches or LinkSpeed", shown(key)));
    }
  }
  if (sw.has_nodes && sw.has_switches)
    throw ParseError(line.file, line.line,
                     fmt::format("switch '{}' has both Nodes= and Switches=; expected one of them", sw.name));
  if (!sw.has_nodes && !sw.has_switches)
    throw ParseError(line.file, line.line,
                     fmt::format("switch '{}' has neither Nodes= nor Switches=; expected one of them", sw.name));
  return sw;
}

// Height above the hosts, as Slurm counts levels: 0 for a leaf, else one
// more than the highest child. Throws ParseError on a cycle.
std::vector<int> heights(const std::vector<SwitchLine>& switches,
                         const std::unordered_map<std::string, size_t>& index) {
  enum class Mark { New, Open, Done };
  std::vector<Mark> mark(switches.size(), Mark::New);
  std::vector<int> height(switches.size(), 0);
  std::vector<size_t> path;
  // Depth-first, iteratively: a deep file must not exhaust the stack.
  for (size_t root = 0; root < switches.size(); ++root) {
    if (mark[root] != Mark::New) continue;
    std::vector<std::pair<size_t, size_t>> stack{{root, 0}};
    mark[root] = Mark::Open;
    path.assign(1, root);
    while (!stack.empty()) {
      auto& [s, next] = stack.back();
      if (next < switches[s].children.size()) {
        size_t c = index.at(switches[s].children[next++]);
        if (mark[c] == Mark::Open) {
          std::string cycle;
          auto from = std::find(path.begin(), path.end(), c);
          for (auto it = from; it != path.end(); ++it) cycle += switches[*it].name + " -> ";
          cycle += switches[c].name;
          throw ParseError(switches[c].where.file, switches[c].where.line,
                           fmt::format("switches form a cycle ({}); expected a tree", cycle));
        }
        if (mark[c] == Mark::New) {
          mark[c] = Mark::Open;
          path.push_back(c);
          stack.push_back({c, 0});
        }
        continue;
      }
      for (const auto& child : switches[s].children) height[s] = std::max(height[s], height[index.at(child)] + 1);
      mark[s] = Mark::Done;
      path.pop_back();
      stack.pop_back();
    }
  }
  return height;
}

// Inside the model a host is the node "host:<name>" and its HCAs
// "<name> mlx5_<n>", in one id space with the switches, so a switch named
// so would take the host's place: refused at the line that lists the host.
void refuse_switch_named_as(const std::string& host, const std::string& hca, const std::vector<SwitchLine>& switches,
                            const std::unordered_map<std::string, size_t>& index, const LogicalLine& where) {
  for (const std::string& id : {"host:" + host, hca}) {
    auto it = index.find(id);
    if (it == index.end()) continue;
    const LogicalLine& sw = switches[it->second].where;
    throw ParseError(where.file, where.line,
                     fmt::format("host '{}' clashes with switch '{}' ({}:{}): topo-aware names a host 'host:<name>' "
                                 "and its HCAs '<name> mlx5_<n>'; expected a switch named otherwise",
                                 shown(host), shown(id), sw.file, sw.line));
  }
}

// The fabric the switch lines describe: one single-port HCA per host and
// switch listing it, children's cables on their parents. Each step's
// FabricError is refused at the line that asked for it.
Fabric build_fabric(const std::vector<SwitchLine>& switches, const std::unordered_map<std::string, size_t>& index,
                    LinkRate rate) {
  const std::vector<int> height = heights(switches, index);
  // Ports: count each switch's cables first so that its port count is known
  // when it is added; children take the low ports, parents the ones after.
  std::vector<int> parents(switches.size(), 0);
  for (const SwitchLine& sw : switches)
    for (const std::string& child : sw.children) ++parents[index.at(child)];
  std::vector<int> next_port(switches.size(), 1);

  const LogicalLine* at = &switches.front().where;
  try {
    FabricBuilder builder;
    for (size_t i = 0; i < switches.size(); ++i) {
      at = &switches[i].where;
      int ports = static_cast<int>(switches[i].nodes.size() + switches[i].children.size()) + parents[i];
      builder.add_switch(switches[i].name, switches[i].name, ports);
    }
    std::unordered_map<std::string, int> hcas_of_host;
    for (size_t i = 0; i < switches.size(); ++i) {
      at = &switches[i].where;
      for (const std::string& host : switches[i].nodes) {
        int hca = hcas_of_host[host]++;
        std::string description = fmt::format("{} mlx5_{}", host, hca);
        refuse_switch_named_as(host, description, switches, index, *at);
        builder.add_hca(description, description, 1);
        builder.connect(description, 1, switches[i].name, next_port[i]++, rate);
      }
    }
    std::vector<size_t> by_height(switches.size());
    for (size_t i = 0; i < by_height.size(); ++i) by_height[i] = i;
    std::stable_sort(by_height.begin(), by_height.end(), [&](size_t a, size_t b) { return height[a] < height[b]; });
    for (size_t p : by_height) {
      at = &switches[p].where;
      for (const std::string& child : switches[p].children) {
        size_t c = index.at(child);
        builder.connect(switches[p].name, next_port[p]++, child, next_port[c]++, rate);
      }
    }
    return std::move(builder).finish();
  } catch (const FabricError& e) {
    throw ParseError(at->file, at->line, e.what());
  }
}

// --- writing -----------------------------------------------------------------

bool slurm_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'; }

// A name Slurm reads back unchanged from a hostlist in topology.conf.
bool valid_node_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), slurm_name_char);
}

bool valid_switch_name(std::string_view name) { return valid_node_name(name) && name.size() <= kMaxSwitchName; }

// The hosts the file lists under each leaf: the switch of a host's first
// port (its lowest-rail cabled HCA), whatever the cable's state: the file
// describes the cabling, not what routes today.
struct LeafHosts {
  std::map<NodeId, std::vector<std::string>> of_leaf;
  std::vector<std::string> uncabled;     // cabled to no switch: not listed
  std::vector<std::string> multi_homed;  // cabled to several leaves: listed under one
};

LeafHosts leaf_hosts(const Fabric& fabric) {
  const FabricIndex& index = fabric.index();
  LeafHosts out;
  for (NodeId host : fabric.hosts()) {
    const std::string& name = fabric.node(host).name;
    if (!valid_node_name(name))
      throw FabricError(
          fmt::format("host '{}' cannot be written to topology.conf: a Slurm node name holds only letters, digits, "
                      "'.', '_' and '-'",
                      name));
    const int h = index.host_id(host);
    std::span<const FabricIndex::HostPort> ports = index.host_ports(h);
    if (ports.empty()) {
      out.uncabled.push_back(name);
      continue;
    }
    out.of_leaf[ports.front().leaf_switch].push_back(name);
    if (index.switches_of(h).size() > 1) out.multi_homed.push_back(name);
  }
  if (out.of_leaf.empty()) throw FabricError("nothing to write to topology.conf: no host is cabled to a switch");
  return out;
}

// Names Slurm can take: a switch keeps its name when it is valid and not yet
// used; otherwise it is named after its GUID, or numbered.
struct SwitchNames {
  std::map<NodeId, std::string> of;
  std::vector<std::pair<std::string, std::string>> renamed;  // new, original
};

SwitchNames slurm_switch_names(const Fabric& fabric) {
  SwitchNames out;
  std::set<std::string> taken;
  for (NodeId s : fabric.switches())
    if (valid_switch_name(fabric.node(s).name)) taken.insert(fabric.node(s).name);
  std::set<std::string> used;
  size_t counter = 0;
  for (NodeId s : fabric.switches()) {
    const Node& n = fabric.node(s);
    std::string name = n.name;
    if (!valid_switch_name(name) || used.contains(name)) {
      name = n.guid ? fmt::format("switch-{:016x}", n.guid) : "";
      while (name.empty() || taken.contains(name)) name = fmt::format("switch-{}", ++counter);
      taken.insert(name);
      out.renamed.emplace_back(name, n.name);
    }
    used.insert(name);
    out.of[s] = name;
  }
  return out;
}

// The switches written, level by level from the leaves up: a switch above
// the leaves is written when a switch one level down below it is.
struct SwitchLevels {
  std::map<int, std::vector<NodeId>> at;
  std::map<NodeId, std::vector<std::string>> children_of;  // Slurm names
  std::vector<std::string> left_out;                       // nothing written sits below them
};

SwitchLevels switch_levels(const Fabric& fabric, const LeafHosts& hosts, const SwitchNames& names) {
  const FabricGraph& g = fabric.graph();
  auto height = [&](NodeId s) { return fabric.node(s).height; };
  SwitchLevels out;
  std::set<NodeId> written;
  for (const auto& [leaf, listed] : hosts.of_leaf) {
    out.at[0].push_back(leaf);
    written.insert(leaf);
  }
  int top = 0;
  for (NodeId s : fabric.switches()) top = std::max(top, height(s));
  for (int level = 1; level <= top; ++level)
    for (NodeId s : fabric.switches()) {
      if (height(s) != level) continue;
      std::set<std::string> kids;
      for (auto e : boost::make_iterator_range(boost::out_edges(s, g))) {
        NodeId t = fabric.peer(e, s);
        if (g[e].kind == LinkKind::Cable && g[t].kind == NodeKind::Switch && height(t) == level - 1 &&
            written.contains(t))
          kids.insert(names.of.at(t));
      }
      if (kids.empty()) continue;
      out.children_of[s].assign(kids.begin(), kids.end());
      out.at[level].push_back(s);
      written.insert(s);
    }
  for (NodeId s : fabric.switches())
    if (!written.contains(s)) out.left_out.push_back(names.of.at(s));
  return out;
}

void write_header(const Fabric& fabric, const LeafHosts& hosts, const SwitchNames& names, const SwitchLevels& levels,
                  std::ostream& out) {
  const FabricSummary& sum = fabric.summary();
  out << "# topology.conf for Slurm's topology/tree plugin, generated by topo-aware\n"
      << "# from " << (fabric.source().empty() ? "an unnamed fabric" : shown(fabric.source(), std::string::npos))
      << ": " << sum.hosts << " hosts; leaves " << sum.leaves << ", spines " << sum.spines << ", cores " << sum.cores
      << ".\n"
      << "# Leaves list their hosts (Nodes=), the switches above list the switches\n"
      << "# below them (Switches=), from the leaves up.\n";
  if (!hosts.multi_homed.empty())
    out << "# " << hosts.multi_homed.size() << " hosts are cabled to several leaves (one per rail); topology/tree\n"
        << "# wants each host under one leaf, so each is listed under the leaf of its\n"
        << "# lowest-rail HCA. In a rail-optimized fabric, hosts that share that\n"
        << "# leaf share a leaf on every rail.\n";
  if (!levels.left_out.empty())
    out << "# Left out, as nothing listed here sits below them: " << compress_hostlist(levels.left_out) << "\n";
  if (!hosts.uncabled.empty())
    out << "# Hosts cabled to no switch, not listed: " << compress_hostlist(hosts.uncabled) << "\n";
  for (const auto& [name, original] : names.renamed)
    out << "# " << name << " is \"" << shown(original, std::string::npos) << "\"\n";
}

}  // namespace

Fabric read_slurm_topology(std::istream& in, const std::string& filename, LinkRate rate, uint64_t max_names) {
  std::vector<LogicalLine> lines;
  Includes includes;
  read_lines(in, filename, includes, lines);

  std::vector<SwitchLine> switches;
  std::unordered_map<std::string, size_t> index;
  NameBudget names{max_names, max_names};
  for (const LogicalLine& line : lines) {
    SwitchLine sw = parse_switch_line(line, names);
    if (auto it = index.find(sw.name); it != index.end()) {
      const LogicalLine& first = switches[it->second].where;
      throw ParseError(line.file, line.line,
                       fmt::format("switch '{}' is already defined at {}:{}; expected each switch once", sw.name,
                                   first.file, first.line));
    }
    index.emplace(sw.name, switches.size());
    switches.push_back(std::move(sw));
  }
  if (switches.empty()) throw ParseError(filename, 0, "no switch defined; expected at least one SwitchName= line");
  for (const SwitchLine& sw : switches)
    for (const std::string& child : sw.children) {
      if (!index.contains(child))
        throw ParseError(sw.where.file, sw.where.line,
                         fmt::format("switch '{}' lists child switch '{}', which no SwitchName= line defines", sw.name,
                                     shown(child)));
      if (child == sw.name)
        throw ParseError(sw.where.file, sw.where.line,
                         fmt::format("switch '{}' lists itself as a child; expected a tree", sw.name));
    }
  Fabric fabric = build_fabric(switches, index, rate);
  fabric.set_source("slurm-topology:" + filename);
  return fabric;
}

Fabric read_slurm_topology_file(const std::string& path, LinkRate rate) {
  std::ifstream in(path);
  if (!in) throw ParseError(path, 0, fmt::format("cannot read: {}", std::strerror(errno)));
  return read_slurm_topology(in, path, rate);
}

void write_slurm_topology(const Fabric& fabric, std::ostream& out) {
  const LeafHosts hosts = leaf_hosts(fabric);
  const SwitchNames names = slurm_switch_names(fabric);
  const SwitchLevels levels = switch_levels(fabric, hosts, names);
  write_header(fabric, hosts, names, levels, out);
  for (const auto& [level, nodes] : levels.at) {
    std::vector<std::pair<std::string, std::string>> rows;
    for (NodeId s : nodes) {
      std::string list = level == 0 ? "Nodes=" + compress_hostlist(hosts.of_leaf.at(s))
                                    : "Switches=" + compress_hostlist(levels.children_of.at(s));
      rows.emplace_back(names.of.at(s), std::move(list));
    }
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return natural_less(a.first, b.first); });
    for (const auto& [name, list] : rows) out << "SwitchName=" << name << " " << list << "\n";
  }
}

}  // namespace topo

namespace topo {

std::vector<SlurmConfLine> read_slurm_conf(std::istream& in, const std::string& filename) {
  std::vector<LogicalLine> lines;
  Includes includes;
  read_lines(in, filename, includes, lines);
  std::vector<SlurmConfLine> out;
  for (const LogicalLine& line : lines) {
    SlurmConfLine l{line.file, line.line, {}};
    for (KeyValue& kv : split_pairs(line)) l.pairs.emplace_back(std::move(kv.key), std::move(kv.value));
    out.push_back(std::move(l));
  }
  return out;
}

std::vector<std::string> expand_slurm_names(const SlurmConfLine& where, const std::string& key,
                                            const std::string& value, uint64_t& budget, uint64_t max_names) {
  NameBudget names{max_names, budget};
  std::vector<std::string> out = expand_list(LogicalLine{where.file, where.line, {}}, key, value, names);
  budget = names.left;
  return out;
}

bool is_slurm_name(std::string_view name) { return valid_node_name(name); }

}  // namespace topo
