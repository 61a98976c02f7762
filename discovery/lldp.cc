#include "discovery/lldp.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/hostlist.h"
#include "common/json_nesting.h"
#include "common/line_source.h"
#include "common/quote.h"
#include "discovery/lldp_placement.h"

namespace topo {
namespace {

using json = nlohmann::json;

// ---------------------------------------------------------------------------
// lldpcli's two JSON shapes, made one. `-f json` writes a one-element list as
// the element itself and keys named things by their name; `-f json0` always
// writes lists and carries names as fields. These helpers read either.

// The elements of what may be a list or a collapsed single element.
std::vector<const json*> elements(const json& j) {
  std::vector<const json*> out;
  if (j.is_array())
    for (const json& e : j) out.push_back(&e);
  else if (!j.is_null())
    out.push_back(&j);
  return out;
}

// A scalar field: "x", {"value": "x"} or [{"value": "x"}].
std::string text_of(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_array() && !j.empty()) return text_of(j.front());
  if (j.is_object() && j.contains("value")) return text_of(j["value"]);
  return {};
}

std::string field(const json& j, const char* key) { return j.is_object() && j.contains(key) ? text_of(j[key]) : ""; }

// A named object, as the (name, body) pairs it holds: json0's
// [{"name": "eth0", ...}], or json's {"eth0": {...}} and [{"eth0": {...}}, ...].
// An object with an "id" field is an unnamed chassis; its name is "".
std::vector<std::pair<std::string, const json*>> named(const json& j) {
  std::vector<std::pair<std::string, const json*>> out;
  for (const json* e : elements(j)) {
    if (!e->is_object()) continue;
    if (e->contains("name") || e->contains("id")) {
      out.emplace_back(field(*e, "name"), e);
    } else {
      for (auto it = e->begin(); it != e->end(); ++it)
        if (it->is_object()) out.emplace_back(it.key(), &*it);
    }
  }
  return out;
}

// The capabilities a chassis advertises as enabled; nullopt when it lists none.
std::optional<LldpCapabilities> capabilities(const json& chassis) {
  if (!chassis.contains("capability")) return std::nullopt;
  bool any = false;
  LldpCapabilities out;
  for (const json* c : elements(chassis["capability"])) {
    if (!c->is_object()) continue;
    any = true;
    std::string type = field(*c, "type");
    bool enabled = c->contains("enabled") && (*c)["enabled"].is_boolean() && (*c)["enabled"].get<bool>();
    if (type == "Bridge") out.bridge = out.bridge || enabled;
    if (type == "Router") out.router = out.router || enabled;
  }
  return any ? std::optional(out) : std::nullopt;
}

// Whether a neighbour's port id is its MAC, as lldpd on Linux sends for an
// interface without an alias.
bool port_id_is_mac(const json& port) {
  if (!port.contains("id")) return false;
  const json& id = elements(port["id"]).empty() ? port["id"] : *elements(port["id"]).front();
  return field(id, "type") == "mac";
}

// The port a neighbour names: its port id when that is an interface name
// (switch OSes send "ifname" or "local"), else its description, which lldpd
// on Linux fills with the interface name; the MAC as a last resort.
std::string remote_port_name(const json& port) {
  std::string descr = field(port, "descr");
  if (port.contains("id")) {
    const json& id = elements(port["id"]).empty() ? port["id"] : *elements(port["id"]).front();
    std::string type = field(id, "type");
    std::string value = field(id, "value");
    if (type == "ifname" || type == "local" || descr.empty()) return value;
  }
  return descr;
}

// "100G" (also "100GbE", "100GE") inside a port description.
std::optional<LinkRate> rate_in_description(std::string_view descr) {
  for (size_t i = 0; i < descr.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(descr[i])) ||
        (i > 0 && std::isalnum(static_cast<unsigned char>(descr[i - 1]))))
      continue;
    size_t j = i;
    while (j < descr.size() && std::isdigit(static_cast<unsigned char>(descr[j]))) ++j;
    if (j >= descr.size() || (descr[j] != 'G' && descr[j] != 'g')) continue;
    size_t end = j + 1;
    while (end < descr.size() && std::isalpha(static_cast<unsigned char>(descr[end]))) ++end;
    std::string suffix(descr.substr(j, end - j));
    for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (suffix != "G" && suffix != "GE" && suffix != "GBE") continue;
    if (auto rate = parse_rate(std::string(descr.substr(i, j - i)) + "G")) return rate;
  }
  return std::nullopt;
}

struct Document {
  json value;
  int line = 1;  // where it starts in the file
};

// The line of the token a parser's message quotes between its first and last
// ' (nlohmann quotes one), or `first_line` when it is not found in `text`.
int line_of_quoted(std::string_view text, std::string_view message, int first_line) {
  size_t open = message.find('\''), close = message.rfind('\'');
  if (open == std::string_view::npos || close <= open + 1) return first_line;
  size_t at = text.find(message.substr(open + 1, close - open - 1));
  return at == std::string_view::npos ? first_line : line_at(text, at, first_line);
}

// Deeper nesting is no lldpcli output; refused before the parser builds a
// node per level.
constexpr int kMaxJsonDepth = 64;
// Far above the output of a 512-port switch with every neighbour's details.
constexpr uint64_t kMaxLldpFileBytes = 64 << 20;

// Splits concatenated JSON documents at the end of each top-level value and
// parses each, so that a syntax error names its line in the file.
std::vector<Document> split_documents(std::string_view text, const std::string& file) {
  std::vector<Document> out;
  size_t pos = 0;
  while (true) {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    if (pos >= text.size()) break;
    size_t end = end_of_json_value(text, pos, kMaxJsonDepth, file, "lldpcli's nests about 11");
    std::string_view piece = text.substr(pos, end - pos);
    int first_line = line_at(text, pos, 1);
    try {
      out.push_back({json::parse(piece), first_line});
    } catch (const json::parse_error& e) {
      throw ParseError(file, line_at(piece, e.byte > 0 ? e.byte - 1 : 0, first_line),
                       fmt::format("not lldpcli JSON: {}", shown(e.what(), 300)));
    } catch (const json::exception& e) {
      // A number past a double's range ("1E888") is out_of_range, and comes
      // without a position: find the token it quotes.
      throw ParseError(file, line_of_quoted(piece, e.what(), first_line),
                       fmt::format("not lldpcli JSON: {}", shown(e.what(), 300)));
    }
    pos += piece.size();
  }
  return out;
}

void read_chassis(const json& chassis, LldpSystemView& view, const std::string& file, int line) {
  for (const auto& [name, body] : named(chassis)) {
    if (name.empty())
      throw ParseError(file, line, "field chassis: the local chassis has no name (configure system hostname)");
    if (!view.name.empty() && view.name != name)
      throw ParseError(
          file, line,
          fmt::format("field chassis: names '{}', but the file already named '{}'", shown(name), shown(view.name)));
    view.name = name;
    if (auto caps = capabilities(*body)) view.caps = caps;
  }
}

// One interface of `show neighbors` (with via/rid/age) or `show interfaces` (with status).
void read_interface(const std::string& ifname, const json& body, LldpSystemView& view, const std::string& file,
                    int line) {
  std::string where = fmt::format("{}:{}", file, line);
  if (!body.contains("via") && body.contains("status")) {
    view.ports.push_back(ifname);
    if (body.contains("chassis")) read_chassis(body["chassis"], view, file, line);
    return;
  }
  if (!body.contains("chassis") || !body.contains("port"))
    throw ParseError(file, line, fmt::format("field interface {}: expected a chassis and a port", ifname));
  auto chassis = named(body["chassis"]);
  if (chassis.size() != 1)
    throw ParseError(file, line,
                     fmt::format("field interface {}/chassis: expected one chassis, found {}", ifname, chassis.size()));
  auto [peer, peer_body] = chassis.front();
  if (peer.empty() && peer_body->contains("id")) {
    // No system name advertised: the chassis id is all there is.
    const json& id = (*peer_body)["id"];
    peer = field(elements(id).empty() ? id : *elements(id).front(), "value");
  }
  if (peer.empty())
    throw ParseError(file, line, fmt::format("field interface {}/chassis: neither a name nor an id", ifname));
  const json* port = elements(body["port"]).empty() ? nullptr : elements(body["port"]).front();
  std::string peer_port = port ? remote_port_name(*port) : "";
  if (peer_port.empty())
    throw ParseError(file, line, fmt::format("field interface {}/port: neither an id nor a description", ifname));
  std::optional<LinkRate> rate;
  if (port->contains("auto-negotiation"))
    for (const json* an : elements((*port)["auto-negotiation"]))
      if (!rate) rate = parse_mau_rate(field(*an, "current"));
  if (!rate) rate = rate_in_description(field(*port, "descr"));
  if (auto caps = capabilities(*peer_body)) view.peer_caps[peer] = *caps;
  view.neighbours.push_back({{view.name, ifname}, {peer, peer_port}, rate, where, port_id_is_mac(*port)});
}

void read_document(const Document& doc, LldpSystemView& view, const std::string& file) {
  const json& j = doc.value;
  if (!j.is_object() || (!j.contains("lldp") && !j.contains("local-chassis")))
    throw ParseError(file, doc.line, "expected lldpcli output: an object with \"lldp\" or \"local-chassis\"");
  if (j.contains("local-chassis"))
    for (const json* lc : elements(j["local-chassis"]))
      if (lc->is_object() && lc->contains("chassis")) read_chassis((*lc)["chassis"], view, file, doc.line);
  if (!j.contains("lldp")) return;
  for (const json* lldp : elements(j["lldp"])) {
    if (!lldp->is_object() || !lldp->contains("interface")) continue;  // {"lldp":{}}: no neighbour
    for (const auto& [ifname, body] : named((*lldp)["interface"])) {
      if (ifname.empty()) throw ParseError(file, doc.line, "field interface: an interface without a name");
      read_interface(ifname, *body, view, file, doc.line);
    }
  }
}

std::vector<std::string> split_csv(std::string_view line) {
  std::vector<std::string> out(1);
  for (char c : line) {
    if (c == ',')
      out.emplace_back();
    else
      out.back() += c;
  }
  for (std::string& s : out) {
    size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
    s = b == std::string::npos ? "" : s.substr(b, e - b + 1);
  }
  return out;
}

// "100G", "100GbE", "100Gb/s", or ethtool's Mb/s ("100000", "100000Mb/s").
std::optional<LinkRate> parse_speed_text(std::string text) {
  for (const char* unit : {"Mb/s", "Gb/s"})
    if (text.ends_with(unit)) {
      bool giga = unit[0] == 'G';
      text.resize(text.size() - 4);
      if (giga) text += "G";
    }
  if (!text.empty() &&
      std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    // A number past a long is no rate (found by fuzzing: std::stol threw).
    long mbps = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), mbps);
    if (ec != std::errc() || end != text.data() + text.size() || mbps % 1000 != 0) return std::nullopt;
    text = std::to_string(mbps / 1000) + "G";
  }
  auto rate = parse_rate(text);
  if (rate && !is_ethernet(rate->speed)) return std::nullopt;
  return rate;
}

// ---------------------------------------------------------------------------
// Building: names, kinds, cables, port numbers.

int trailing_number(const std::string& s) {
  size_t k = s.size();
  while (k > 0 && std::isdigit(static_cast<unsigned char>(s[k - 1]))) --k;
  if (k == s.size() || s.size() - k > 6) return -1;
  return std::stoi(s.substr(k));
}

// Port numbers of one switch: the trailing numbers when distinct and
// non-zero, else positions in natural order.
std::map<std::string, int> number_ports(const std::set<std::string>& names) {
  std::map<std::string, int> out;
  std::set<int> seen;
  bool by_suffix = true;
  for (const std::string& n : names) {
    int k = trailing_number(n);
    if (k <= 0 || !seen.insert(k).second) by_suffix = false;
    out[n] = k;
  }
  if (by_suffix) return out;
  std::vector<std::string> sorted(names.begin(), names.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const std::string& a, const std::string& b) { return natural_less(a, b); });
  for (size_t i = 0; i < sorted.size(); ++i) out[sorted[i]] = static_cast<int>(i) + 1;
  return out;
}

std::string str(const LldpPort& p) { return p.system + ":" + p.port; }

// A cable as both ends saw it.
struct Cable {
  LldpPort a, b;  // a < b
  bool seen_from_a = false, seen_from_b = false;
  std::optional<LinkRate> rate;  // from the sightings, first found
  std::string where;
};

using CableKey = std::pair<LldpPort, LldpPort>;

struct Assembly {
  std::map<CableKey, Cable> cables;
  std::vector<CableKey> order;       // first-seen order
  std::set<CableKey> dropped;        // claims refused: a port claimed twice
  std::set<std::string> with_table;  // systems whose own table was read

  template <typename F>
  void for_each_live(F&& f) const {
    for (const CableKey& k : order)
      if (!dropped.count(k)) f(cables.at(k));
  }
};

void add_sighting(Assembly& as, const LldpSighting& s) {
  auto key = std::minmax(s.local, s.remote);
  CableKey k{key.first, key.second};
  auto [it, fresh] = as.cables.try_emplace(k);
  Cable& c = it->second;
  if (fresh) {
    c.a = k.first;
    c.b = k.second;
    c.where = s.where;
    as.order.push_back(k);
  }
  (s.local == c.a ? c.seen_from_a : c.seen_from_b) = true;
  if (!c.rate) c.rate = s.rate;
}

// Every row of the views and the CSV, as cables.
Assembly assemble(const std::vector<LldpSystemView>& views, const std::vector<LldpSighting>& csv) {
  Assembly as;
  for (const LldpSystemView& v : views) {
    as.with_table.insert(v.name);
    for (const LldpSighting& s : v.neighbours) add_sighting(as, s);
  }
  for (const LldpSighting& s : csv) {
    as.with_table.insert(s.local.system);
    // The CSV's speed is the admin's word: it goes first.
    auto key = std::minmax(s.local, s.remote);
    auto it = as.cables.find({key.first, key.second});
    if (it != as.cables.end() && s.rate) it->second.rate = s.rate;
    add_sighting(as, s);
  }
  return as;
}

// Ports claimed by more than one cable: keep the one both ends confirm
// (else the first seen), report and drop the others.
void refuse_double_claims(Assembly& as, std::vector<LldpFinding>& findings) {
  std::map<LldpPort, std::vector<CableKey>> claims;
  for (const CableKey& k : as.order) {
    claims[k.first].push_back(k);
    claims[k.second].push_back(k);
  }
  for (const auto& [port, keys] : claims) {
    std::vector<CableKey> live;
    for (const CableKey& k : keys)
      if (!as.dropped.count(k)) live.push_back(k);
    if (live.size() < 2) continue;
    auto keep = std::find_if(live.begin(), live.end(), [&](const CableKey& k) {
      const Cable& c = as.cables.at(k);
      return c.seen_from_a && c.seen_from_b;
    });
    if (keep == live.end()) keep = live.begin();
    std::vector<std::string> claimants;
    for (const CableKey& k : live) {
      const Cable& c = as.cables.at(k);
      claimants.push_back(str(c.a == port ? c.b : c.a));
      if (k != *keep) as.dropped.insert(k);
    }
    const Cable& kept = as.cables.at(*keep);
    findings.push_back(
        {LldpFindingKind::PortClaimedTwice, str(port),
         fmt::format("claimed by {}; kept {}", fmt::join(claimants, ", "), str(kept.a == port ? kept.b : kept.a))});
  }
}

// Cables seen from one end only, where the other end's table was read.
void report_one_sided(const Assembly& as, std::vector<LldpFinding>& findings) {
  as.for_each_live([&](const Cable& c) {
    if (c.seen_from_a && c.seen_from_b) return;
    const LldpPort& seer = c.seen_from_a ? c.a : c.b;
    const LldpPort& other = c.seen_from_a ? c.b : c.a;
    if (!as.with_table.count(other.system)) return;
    findings.push_back({LldpFindingKind::OneSidedCable, str(other),
                        fmt::format("{} sees {} on this port ({}), but {}'s own table does not list it", str(seer),
                                    other.system, c.where, other.system)});
  });
}

// Switch or host, by system name.
using Kinds = std::map<std::string, bool>;

bool is_switch(const Kinds& kinds, const std::string& system) {
  auto it = kinds.find(system);
  return it != kinds.end() && it->second;
}

// Host ports lldpd runs on that nobody sees and that see nobody (a port
// whose claim was refused is reported there, not here).
void report_silent_nics(const Assembly& as, const std::vector<LldpSystemView>& views, const Kinds& kinds,
                        std::vector<LldpFinding>& findings) {
  std::set<LldpPort> sighted;
  for (const CableKey& k : as.order) {
    sighted.insert(k.first);
    sighted.insert(k.second);
  }
  for (const LldpSystemView& v : views) {
    if (is_switch(kinds, v.name)) continue;
    for (const std::string& p : v.ports)
      if (!sighted.count({v.name, p}))
        findings.push_back({LldpFindingKind::NicWithoutNeighbour, v.name + ":" + p,
                            fmt::format("lldpd runs on this port of {} but sees no neighbour ({})", v.name, v.file)});
  }
}

// What the files say of one system: its capabilities (its own chassis
// first, else a neighbour's view of it) and how its ports are advertised.
struct Traits {
  std::optional<LldpCapabilities> caps;
  int ports_by_mac = 0, ports_by_name = 0;
};

std::map<std::string, Traits> system_traits(const std::vector<LldpSystemView>& views) {
  std::map<std::string, Traits> out;
  for (const LldpSystemView& v : views) {
    for (const auto& [peer, caps] : v.peer_caps)
      if (!out[peer].caps) out[peer].caps = caps;
    for (const LldpSighting& s : v.neighbours)
      ++(s.remote_port_by_mac ? out[s.remote.system].ports_by_mac : out[s.remote.system].ports_by_name);
  }
  for (const LldpSystemView& v : views)
    if (v.caps) out[v.name].caps = v.caps;
  return out;
}

// Switch or host for every system on a cable (see lldp.h, "What becomes
// what"): stations are hosts and what they are cabled to is a switch; the
// CSV's switch column is a switch; else Bridge or Router, unless Router on
// ports advertised by MAC (a Linux host forwarding IP).
Kinds system_kinds(const Assembly& as, const std::vector<LldpSystemView>& views, const std::vector<LldpSighting>& csv) {
  std::map<std::string, Traits> traits = system_traits(views);
  std::set<std::string> systems;
  for (const CableKey& k : as.order) systems.insert({k.first.system, k.second.system});
  for (const LldpSystemView& v : views) systems.insert(v.name);
  Kinds kinds;
  std::set<std::string> stations;
  for (const std::string& system : systems) {
    const Traits& t = traits[system];
    bool by_mac = t.ports_by_mac > 0 && t.ports_by_name == 0;
    kinds[system] = t.caps && (t.caps->bridge || t.caps->router) && !(t.caps->router && by_mac);
    if (t.caps && !t.caps->bridge && !t.caps->router) stations.insert(system);
  }
  for (const LldpSighting& s : csv) kinds[s.local.system] = true;
  as.for_each_live([&](const Cable& c) {
    if (stations.count(c.a.system) && !stations.count(c.b.system)) kinds[c.b.system] = true;
    if (stations.count(c.b.system) && !stations.count(c.a.system)) kinds[c.a.system] = true;
  });
  return kinds;
}

LinkRate cable_rate(const Cable& c, const LldpOptions& options) {
  for (const LldpPort& end : {c.a, c.b})
    if (auto it = options.port_speeds.find(str(end)); it != options.port_speeds.end()) return it->second;
  return c.rate.value_or(options.default_rate);
}

// Groups of switches cabled to each other: switch -> group number.
std::map<std::string, int> switch_groups(const Assembly& as, const Kinds& kinds) {
  std::map<std::string, std::vector<std::string>> adjacent;
  as.for_each_live([&](const Cable& c) {
    bool a = is_switch(kinds, c.a.system), b = is_switch(kinds, c.b.system);
    if (a) adjacent[c.a.system];
    if (b) adjacent[c.b.system];
    if (a && b) {
      adjacent[c.a.system].push_back(c.b.system);
      adjacent[c.b.system].push_back(c.a.system);
    }
  });
  std::map<std::string, int> group;
  int groups = 0;
  for (const auto& [start, _] : adjacent) {
    if (group.count(start)) continue;
    std::vector<std::string> stack{start};
    group[start] = groups;
    while (!stack.empty()) {
      std::string s = stack.back();
      stack.pop_back();
      for (const std::string& n : adjacent[s])
        if (group.emplace(n, groups).second) stack.push_back(n);
    }
    ++groups;
  }
  return group;
}

// The switches of management networks: groups of switches not cabled to the
// others where every host they reach has more bandwidth into another group.
std::set<std::string> out_of_band_switches(const Assembly& as, const Kinds& kinds, const LldpOptions& options) {
  std::map<std::string, int> group = switch_groups(as, kinds);
  std::map<std::string, std::map<int, double>> bandwidth;  // host -> group -> Gb/s
  as.for_each_live([&](const Cable& c) {
    bool a = is_switch(kinds, c.a.system), b = is_switch(kinds, c.b.system);
    if (a != b)
      bandwidth[a ? c.b.system : c.a.system][group[a ? c.a.system : c.b.system]] += cable_rate(c, options).gbps();
  });
  std::map<int, bool> out_of_band;
  for (const auto& [host, per_group] : bandwidth)
    for (const auto& [g, gbps] : per_group) {
      bool more_elsewhere = std::any_of(per_group.begin(), per_group.end(), [&, g = g, gbps = gbps](const auto& other) {
        return other.first != g && other.second > gbps;
      });
      auto [it, fresh] = out_of_band.try_emplace(g, more_elsewhere);
      if (!fresh) it->second = it->second && more_elsewhere;
    }
  std::set<std::string> out;
  for (const auto& [sw, g] : group)
    if (out_of_band[g]) out.insert(sw);
  return out;
}

// The fabric of the live cables that touch no out-of-band switch: switches
// with their ports numbered, one HCA per cabled host port.
Fabric build_fabric(const Assembly& as, const Kinds& kinds, const std::set<std::string>& out_of_band,
                    const LldpOptions& options) {
  std::vector<const Cable*> kept;
  as.for_each_live([&](const Cable& c) {
    if (!out_of_band.count(c.a.system) && !out_of_band.count(c.b.system)) kept.push_back(&c);
  });
  std::map<std::string, std::set<std::string>> switch_ports;
  std::set<LldpPort> host_ports;
  for (const Cable* c : kept)
    for (const LldpPort& p : {c->a, c->b}) {
      if (is_switch(kinds, p.system))
        switch_ports[p.system].insert(p.port);
      else
        host_ports.insert(p);
    }
  FabricBuilder builder(options.naming);
  std::map<std::string, std::map<std::string, int>> numbers;
  for (const auto& [sw, ports] : switch_ports) {
    numbers[sw] = number_ports(ports);
    int max_port = 0;
    for (const auto& [_, n] : numbers[sw]) max_port = std::max(max_port, n);
    builder.add_switch(sw, sw, max_port);
  }
  auto node_id = [&](const LldpPort& p) { return is_switch(kinds, p.system) ? p.system : p.system + "/" + p.port; };
  auto port_number = [&](const LldpPort& p) { return is_switch(kinds, p.system) ? numbers[p.system][p.port] : 1; };
  for (const LldpPort& p : host_ports) builder.add_hca(node_id(p), p.system + " " + p.port, 1);
  for (const Cable* c : kept) {
    if (!is_switch(kinds, c->a.system) && !is_switch(kinds, c->b.system))
      throw FabricError(fmt::format("{} <-> {}: two hosts cabled to each other; LLDP names no switch between them",
                                    str(c->a), str(c->b)));
    builder.connect(node_id(c->a), port_number(c->a), node_id(c->b), port_number(c->b), cable_rate(*c, options));
  }
  return std::move(builder).finish();
}

}  // namespace

std::string_view name(LldpFindingKind kind) {
  switch (kind) {
    case LldpFindingKind::NicWithoutNeighbour:
      return "nic_without_neighbour";
    case LldpFindingKind::OneSidedCable:
      return "one_sided_cable";
    case LldpFindingKind::PortClaimedTwice:
      return "port_claimed_twice";
    case LldpFindingKind::UnplacedFile:
      return "unplaced_file";
  }
  return "unknown";
}

std::optional<LinkRate> parse_mau_rate(std::string_view mau) {
  // MAU names start with the rate: "10GbaseT", "100GbaseCR4", "1000BaseTFD", "10GigBaseLR".
  size_t i = 0;
  while (i < mau.size() && std::isdigit(static_cast<unsigned char>(mau[i]))) ++i;
  if (i == 0 || i > 6) return std::nullopt;
  long number = std::stol(std::string(mau.substr(0, i)));
  std::string rest(mau.substr(i, 7));
  for (char& c : rest) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (rest.starts_with("gbase") || rest.starts_with("gigbase")) return parse_rate(std::to_string(number) + "G");
  if (rest.starts_with("base") && number % 1000 == 0) return parse_rate(std::to_string(number / 1000) + "G");
  return std::nullopt;
}

LldpSystemView parse_lldpcli_json(std::string_view text, const std::string& file) {
  LldpSystemView view;
  view.file = file;
  std::vector<Document> docs = split_documents(text, file);
  if (docs.empty()) throw ParseError(file, 0, "empty: expected lldpcli JSON");
  // The chassis first, so that neighbour rows carry the system's name.
  for (const Document& d : docs)
    if (d.value.is_object() && d.value.contains("local-chassis")) read_document(d, view, file);
  for (const Document& d : docs)
    if (!(d.value.is_object() && d.value.contains("local-chassis"))) read_document(d, view, file);
  for (LldpSighting& s : view.neighbours) s.local.system = view.name;
  return view;
}

std::vector<LldpSighting> parse_lldp_csv(std::istream& in, const std::string& file) {
  std::vector<LldpSighting> out;
  LineSource lines(in, file, kMaxLineBytes, kMaxLldpFileBytes);
  std::string_view line;
  static const char* kFields[] = {"switch", "port", "peer", "peer_port", "speed"};
  while (lines.next(line)) {
    const int number = lines.number();
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    std::vector<std::string> f = split_csv(line);
    if (f.size() != 5)
      throw ParseError(file, number,
                       fmt::format("expected 5 fields switch,port,peer,peer_port,speed; found {}", f.size()));
    if (out.empty() && f[0] == "switch" && f[2] == "peer") continue;  // the header
    for (int i = 0; i < 4; ++i)
      if (f[i].empty()) throw ParseError(file, number, fmt::format("field {}: empty", kFields[i]));
    std::optional<LinkRate> rate;
    if (!f[4].empty()) {
      rate = parse_speed_text(f[4]);
      if (!rate)
        throw ParseError(
            file, number,
            fmt::format("field speed: '{}' is not an Ethernet rate like 100G, 100GbE or 100000 (Mb/s)", shown(f[4])));
    }
    out.push_back({{f[0], f[1]}, {f[2], f[3]}, rate, fmt::format("{}:{}", file, number)});
  }
  return out;
}

LldpFabric build_lldp_fabric(std::vector<LldpSystemView> views, const std::vector<LldpSighting>& csv,
                             const LldpOptions& options) {
  LldpFabric out;
  out.findings = place_views(views);
  Assembly as = assemble(views, csv);
  refuse_double_claims(as, out.findings);
  report_one_sided(as, out.findings);
  Kinds kinds = system_kinds(as, views, csv);
  report_silent_nics(as, views, kinds, out.findings);
  std::set<std::string> out_of_band = out_of_band_switches(as, kinds, options);
  out.out_of_band.assign(out_of_band.begin(), out_of_band.end());
  out.fabric = build_fabric(as, kinds, out_of_band, options);
  return out;
}

LldpFabric read_lldp_dir(const std::filesystem::path& dir, const LldpOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot read the directory: {}", dir.string(), ec.message()));
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : it)
    if (e.is_regular_file() && (e.path().extension() == ".json" || e.path().extension() == ".csv"))
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty())
    throw std::runtime_error(
        fmt::format("{}: no *.json (lldpcli) or *.csv (switch,port,peer,peer_port,speed) file", dir.string()));
  std::vector<LldpSystemView> views;
  std::vector<LldpSighting> csv;
  for (const fs::path& f : files) {
    std::ifstream in(f);
    if (!in) throw std::runtime_error(fmt::format("{}: cannot open", f.string()));
    if (f.extension() == ".csv") {
      auto rows = parse_lldp_csv(in, f.string());
      csv.insert(csv.end(), rows.begin(), rows.end());
      continue;
    }
    LldpSystemView view = parse_lldpcli_json(read_all(in, f.string(), kMaxLldpFileBytes), f.string());
    // Several files may describe one system (chassis and neighbours apart).
    auto same = std::find_if(views.begin(), views.end(),
                             [&](const LldpSystemView& v) { return !view.name.empty() && v.name == view.name; });
    if (same == views.end()) {
      views.push_back(std::move(view));
    } else {
      same->ports.insert(same->ports.end(), view.ports.begin(), view.ports.end());
      same->neighbours.insert(same->neighbours.end(), view.neighbours.begin(), view.neighbours.end());
      same->peer_caps.insert(view.peer_caps.begin(), view.peer_caps.end());
      if (view.caps) same->caps = view.caps;
    }
  }
  LldpFabric out = build_lldp_fabric(std::move(views), csv, options);
  out.fabric.set_source("lldp:" + dir.string());
  return out;
}

}  // namespace topo
