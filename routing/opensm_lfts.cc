#include "routing/opensm_lfts.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <istream>
#include <iterator>
#include <ostream>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "common/line_source.h"
#include "common/quote.h"

namespace topo {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

template <typename T>
bool number(std::string_view& s, T& v, int base = 10) {
  if (base == 16 && s.starts_with("0x")) s.remove_prefix(2);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || end == s.data()) return false;
  s.remove_prefix(static_cast<size_t>(end - s.data()));
  return true;
}

// The description in "...: 'desc'" or "('desc'):", between the first and last quote.
std::string_view quoted(std::string_view s) {
  size_t a = s.find('\'');
  size_t b = s.rfind('\'');
  if (a == std::string_view::npos || b <= a) return {};
  return s.substr(a + 1, b - a - 1);
}

// What does not match between the dump and the fabric: up to ten of each
// kind, and no more once the listed ones pass kListedBytes (each names up to
// two values of 64 bytes), so that the message of a damaged or foreign dump
// stays a few lines whatever it holds.
struct Mismatches {
  static constexpr size_t kListedBytes = 1000;
  std::vector<std::string> foreign_switches, missing_switches, switch_lids, ports, lids;
  int first_line = 0;
  size_t count = 0;
  size_t listed_bytes = 0;

  void add(std::vector<std::string>& list, int line, std::string what) {
    if (count++ == 0) first_line = line;
    if (list.size() >= 10 || listed_bytes >= kListedBytes) return;
    listed_bytes += what.size();
    list.push_back(std::move(what));
  }
  std::string describe() const {
    std::string out = "the dump is of another fabric:";
    auto part = [&](const std::vector<std::string>& list, std::string_view title) {
      if (!list.empty()) out += fmt::format(" {}: {};", title, fmt::join(list, ", "));
    };
    part(foreign_switches, "switches the fabric does not have");
    part(missing_switches, "switches of the fabric the dump leaves out");
    part(switch_lids, "switches with another LID");
    part(ports, "ports the switch does not have");
    part(lids, "LIDs of other nodes");
    out.back() = '.';
    size_t listed = foreign_switches.size() + missing_switches.size() + switch_lids.size() + ports.size() + lids.size();
    if (count > listed) out += fmt::format(" ({} mismatches in all)", count);
    return out;
  }
};

class DumpReader {
 public:
  DumpReader(const std::string& file, const Fabric& fabric) : file_(file), fabric_(fabric) {
    for (size_t i = 0; i < fabric.switches().size(); ++i) {
      const Node& n = fabric.node(fabric.switches()[i]);
      if (n.guid) by_guid_.emplace(n.guid, i);
      auto [it, fresh] = by_name_.emplace(n.name, i);
      if (!fresh) it->second = kAmbiguous;
    }
    for (NodeId v = 0; v < fabric.node_count(); ++v) {
      uint32_t lid = fabric.node(v).lid;
      if (lid == 0) continue;
      if (lid >= name_by_lid_.size()) name_by_lid_.resize(lid + 1);
      name_by_lid_[lid] = fabric.node(v).name;
      has_lid_.resize(name_by_lid_.size());
      has_lid_[lid] = true;
    }
    seen_.assign(fabric.switches().size(), 0);
  }

  Routing read(std::istream& in) {
    routing_.kind = RoutingKind::Static;
    routing_.source = "opensm-dump:" + file_;
    routing_.lft.assign(fabric_.switches().size(), {});
    LineSource lines(in, file_);
    std::string_view raw;
    while (lines.next(raw)) {
      ++line_;
      std::string_view line = trim(raw);
      if (line.empty() || line.front() == '#') continue;
      if (line.starts_with("0x"))
        entry(line);
      else if (line.starts_with("Unicast lids"))
        header(line);
      else if (line.ends_with("lids dumped"))
        footer(line);
      else
        fail(
            fmt::format("expected a block header 'Unicast lids [0-N] of switch Lid L guid 0x... ('name'):', an "
                        "entry '0xLID PORT # ...' or 'N lids dumped'; got '{}'",
                        line.substr(0, 60)));
    }
    if (lines.bad()) throw ParseError(file_, line_, "read error");
    if (line_ == 0 || blocks_ == 0)
      throw ParseError(file_, 0, "no switch table in the file: expected OpenSM's opensm-lfts.dump");
    for (size_t i = 0; i < seen_.size(); ++i)
      if (!seen_[i]) mismatch_.add(mismatch_.missing_switches, 0, fabric_.node(fabric_.switches()[i]).name);
    if (mismatch_.count) throw ParseError(file_, mismatch_.first_line, mismatch_.describe());
    return std::move(routing_);
  }

 private:
  static constexpr size_t kAmbiguous = static_cast<size_t>(-1);
  static constexpr size_t kForeign = static_cast<size_t>(-2);

  [[noreturn]] void fail(std::string what) const { throw ParseError(file_, line_, std::move(what)); }

  // Unicast lids [0-N] of switch Lid L guid 0xG ('name'):
  void header(std::string_view line) {
    std::string_view s = line.substr(line.find('[') == std::string_view::npos ? line.size() : line.find('['));
    uint32_t top = 0, lid = 0;
    uint64_t guid = 0;
    if (!s.starts_with("[0-") || (s.remove_prefix(3), !number(s, top, s.starts_with("0x") ? 16 : 10)) ||
        !s.starts_with("]"))
      fail("expected '[0-<highest LID>]' after 'Unicast lids'");
    size_t at = s.find(" Lid ");
    if (at == std::string_view::npos) fail("expected 'of switch Lid <LID>' in the block header");
    s.remove_prefix(at + 5);
    if (!number(s, lid)) fail("expected the switch's LID after 'Lid'");
    at = s.find(" guid ");
    if (at == std::string_view::npos) fail("expected 'guid 0x<GUID>' in the block header");
    s.remove_prefix(at + 6);
    if (!number(s, guid, 16)) fail("expected the switch's GUID (hexadecimal) after 'guid'");
    std::string_view name = quoted(s);
    if (top > 0xbfff) fail(fmt::format("highest LID {} is not a unicast LID (at most 49151)", top));

    current_ = kForeign;
    if (auto it = by_guid_.find(guid); it != by_guid_.end())
      current_ = it->second;
    else if (auto n = by_name_.find(name); n != by_name_.end() && n->second != kAmbiguous)
      current_ = n->second;
    ++blocks_;
    if (current_ == kForeign) {
      mismatch_.add(mismatch_.foreign_switches, line_,
                    fmt::format("'{}' (GUID 0x{:016x}, line {})", shown(name), guid, line_));
      return;
    }
    if (seen_[current_])
      fail(fmt::format("switch '{}' (GUID 0x{:016x}) has a second table here (the first is on line {})", shown(name),
                       guid, seen_[current_]));
    seen_[current_] = line_;
    const Node& sw = fabric_.node(fabric_.switches()[current_]);
    if (sw.lid != lid)
      mismatch_.add(
          mismatch_.switch_lids, line_,
          fmt::format("'{}' has LID {} in the dump, {} in the fabric (line {})", sw.name, lid, sw.lid, line_));
    routing_.lft[current_].assign(top + 1, kNoPort);
    ports_ = sw.ports;
  }

  // 0xLLLL PPP # <type> portguid 0x...: 'name'
  void entry(std::string_view line) {
    if (current_ == kNone) fail("entry outside a switch's table: expected a 'Unicast lids ...' header before it");
    std::string_view s = line;
    uint32_t lid = 0, port = 0;
    if (!number(s, lid, 16)) fail("expected the destination LID in hexadecimal ('0x0001')");
    s = trim(s);
    if (!number(s, port)) fail(fmt::format("expected the out port (a number) after LID 0x{:04x}", lid));
    if (current_ == kForeign) return;
    auto& table = routing_.lft[current_];
    if (lid >= table.size())
      fail(fmt::format("LID {} is past the highest LID {} of this switch's header", lid, table.size() - 1));
    if (port >= kNoPort) fail(fmt::format("port {} for LID {} is not a port number (0-254)", port, lid));
    if (ports_ > 0 && static_cast<int>(port) > ports_) {
      mismatch_.add(mismatch_.ports, line_,
                    fmt::format("port {} of '{}', which has ports 0-{} (line {})", port,
                                fabric_.node(fabric_.switches()[current_]).name, ports_, line_));
      return;
    }
    table[lid] = static_cast<uint8_t>(port);
    check_owner(lid, s);
  }

  // The node the dump names for a LID must be the fabric's node of that LID.
  void check_owner(uint32_t lid, std::string_view rest) {
    if (lid < checked_.size() && checked_[lid]) return;
    if (lid >= checked_.size()) checked_.resize(lid + 1);
    checked_[lid] = true;
    if (rest.find("unknown node") != std::string_view::npos) return;
    std::string_view name = quoted(rest);
    bool known = lid < has_lid_.size() && has_lid_[lid];
    if (!known)
      mismatch_.add(mismatch_.lids, line_,
                    fmt::format("LID {} ('{}', line {}) belongs to no node of the fabric", lid, shown(name), line_));
    else if (!name.empty() && name != name_by_lid_[lid])
      mismatch_.add(mismatch_.lids, line_,
                    fmt::format("LID {} is '{}' in the dump but '{}' in the fabric (line {})", lid, shown(name),
                                name_by_lid_[lid], line_));
  }

  void footer(std::string_view line) {
    if (current_ == kNone) fail("'lids dumped' outside a switch's table");
    std::string_view s = line;
    uint32_t n = 0;
    if (!number(s, n)) fail("expected '<N> lids dumped'");
    current_ = kNone;
  }

  static constexpr size_t kNone = static_cast<size_t>(-3);

  const std::string& file_;
  const Fabric& fabric_;
  std::unordered_map<uint64_t, size_t> by_guid_;
  std::unordered_map<std::string_view, size_t> by_name_;
  std::vector<std::string_view> name_by_lid_;
  std::vector<bool> has_lid_, checked_;
  std::vector<int> seen_;  // per switch, the line of its block
  Routing routing_;
  Mismatches mismatch_;
  size_t current_ = kNone;
  int ports_ = 0;
  int line_ = 0;
  int blocks_ = 0;
};

}  // namespace

Routing read_opensm_lfts(std::istream& in, const std::string& filename, const Fabric& fabric) {
  return DumpReader(filename, fabric).read(in);
}

Routing read_opensm_lfts_file(const std::string& path, const Fabric& fabric) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(path, 0, fmt::format("cannot open: {}", std::strerror(errno)));
  return read_opensm_lfts(in, path, fabric);
}

void write_opensm_lfts(const Fabric& fabric, std::ostream& out) {
  const Routing& routing = fabric.routing();
  if (!routing.is_static()) throw FabricError("the fabric routes adaptively: it has no forwarding tables to write");
  uint32_t top = 0;
  for (NodeId v = 0; v < fabric.node_count(); ++v) top = std::max(top, fabric.node(v).lid);
  // Per LID, the rest of its entry line.
  std::vector<std::string> owner(top + 1, "unknown node and type");
  for (NodeId v = 0; v < fabric.node_count(); ++v) {
    const Node& n = fabric.node(v);
    if (n.lid == 0 || n.kind == NodeKind::Host) continue;
    uint64_t port_guid = n.guid;
    if (n.kind == NodeKind::Hca && n.guid)
      for (auto e : boost::make_iterator_range(boost::out_edges(v, fabric.graph())))
        if (fabric.link(e).kind == LinkKind::Cable) port_guid = n.guid + static_cast<uint64_t>(fabric.local_port(e, v));
    owner[n.lid] = fmt::format("{} portguid 0x{:016x}: '{}'", n.kind == NodeKind::Switch ? "Switch" : "Channel Adapter",
                               port_guid, n.name);
  }
  // Switches in OpenSM's order: its switch table is keyed by the GUID in
  // network byte order.
  std::vector<size_t> order(fabric.switches().size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return __builtin_bswap64(fabric.node(fabric.switches()[a]).guid) <
           __builtin_bswap64(fabric.node(fabric.switches()[b]).guid);
  });
  std::string buf;
  buf.reserve(1 << 20);
  for (size_t s : order) {
    const Node& sw = fabric.node(fabric.switches()[s]);
    const auto& table = routing.lft[s];
    uint32_t last = table.empty() ? 0 : static_cast<uint32_t>(table.size() - 1);
    fmt::format_to(std::back_inserter(buf), "Unicast lids [0-{}] of switch Lid {} guid 0x{:016x} ('{}'):\n", last,
                   sw.lid, sw.guid, sw.name);
    for (uint32_t lid = 0; lid < table.size(); ++lid) {
      if (table[lid] == kNoPort) continue;
      fmt::format_to(std::back_inserter(buf), "0x{:04x} {:03} # {}\n", lid, table[lid],
                     lid <= top ? owner[lid] : std::string("unknown node and type"));
      if (buf.size() > (1 << 20) - 256) {
        out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
        buf.clear();
      }
    }
    fmt::format_to(std::back_inserter(buf), "{} lids dumped\n", last);
  }
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

}  // namespace topo
