#include "discovery/ibnetdisc_cache.h"

#include <algorithm>
#include <bitset>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"

namespace topo {
namespace {

constexpr uint32_t kMagic = 0x8FE7832B;
constexpr size_t kSmpData = 64;
constexpr size_t kHeader = 28;
constexpr size_t kNode = 15 + 3 * kSmpData;
constexpr size_t kKey = 9;
constexpr size_t kPort = 31 + kSmpData;
constexpr uint64_t kMaxLmc = 7;

// Little-endian fields at a cursor that never reads past the end.
class Cursor {
 public:
  Cursor(std::string_view bytes, const std::string& path) : bytes_(bytes), path_(path) {}

  void need(size_t n, std::string_view what) const {
    if (bytes_.size() - at_ < n)
      throw ParseError(path_, 0,
                       fmt::format("libibnetdisc cache ends inside {} (byte {} of {})", what, at_, bytes_.size()));
  }
  uint64_t number(size_t width) {
    uint64_t v = 0;
    for (size_t i = 0; i < width; ++i) v |= uint64_t{static_cast<uint8_t>(bytes_[at_ + i])} << (8 * i);
    at_ += width;
    return v;
  }
  void skip(size_t n) { at_ += n; }
  size_t at() const { return at_; }
  size_t left() const { return bytes_.size() - at_; }

 private:
  std::string_view bytes_;
  const std::string& path_;
  size_t at_ = 0;
};

constexpr uint64_t kMaxUnicastLid = 0xbfff;

using PortKey = std::pair<uint64_t, uint8_t>;  // (port GUID, port number)

// The LIDs a port answers to: its base LID and the 2^LMC - 1 after it.
struct LidRange {
  uint64_t first, last;
  PortKey port;
};

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw ParseError(path, 0, what); }

// The header: magic, version, the node and port counts (held to the bytes
// that follow) and the GUID of the node discovery started from.
struct Header {
  uint64_t nodes = 0, ports = 0, from = 0;
};

Header read_header(Cursor& c, size_t size, const std::string& path) {
  c.need(kHeader, "its header");
  if (c.number(4) != kMagic || c.number(4) != 1)
    fail(path, "not a libibnetdisc cache file (version 1): expected one written by 'ibnetdiscover --cache FILE'");
  Header h;
  h.nodes = c.number(4);
  h.ports = c.number(4);
  h.from = c.number(8);
  c.skip(4);
  if (h.nodes > c.left() / kNode || h.ports > c.left() / kPort)
    fail(path, fmt::format("libibnetdisc cache claims {} nodes and {} ports, more than its {} bytes hold", h.nodes,
                           h.ports, size));
  return h;
}

// What the nodes say: each one's port count, which are switches, and the
// ports each lists.
struct Nodes {
  std::map<uint64_t, uint8_t> port_count;  // node GUID -> its port count
  std::set<uint64_t> switches;             // their GUIDs
  std::map<PortKey, uint64_t> listed;      // the ports nodes list -> the node listing each
};

// Node n's list of its ports: each within its port count, listed by no
// other node, one port a number.
void read_listed_ports(Cursor& c, uint64_t n, uint64_t guid, uint64_t count, Nodes& nodes, const std::string& path) {
  const uint64_t keys = c.number(1);
  c.need(keys * kKey, fmt::format("the ports of node {}", n));
  std::bitset<256> numbers;  // one slot a port number: rdma-core would keep the last and lose the others
  for (uint64_t k = 0; k < keys; ++k) {
    PortKey key{c.number(8), static_cast<uint8_t>(c.number(1))};
    if (key.second > count)
      fail(path, fmt::format("libibnetdisc cache node {} (GUID {:#x}): port {} past its {} ports", n, guid, key.second,
                             count));
    if (!nodes.listed.emplace(key, guid).second)
      fail(path, fmt::format("libibnetdisc cache node {}: port {:#x}/{} listed twice", n, key.first, key.second));
    if (numbers.test(key.second))
      fail(path, fmt::format("libibnetdisc cache node {} (GUID {:#x}): two ports numbered {}", n, guid, key.second));
    numbers.set(key.second);
  }
}

Nodes read_nodes(Cursor& c, const Header& h, const std::string& path) {
  Nodes nodes;
  for (uint64_t n = 0; n < h.nodes; ++n) {
    c.need(kNode, fmt::format("node {}", n));
    const uint64_t sm_lid = c.number(2);  // a switch's LID when its port 0 is not stored
    c.skip(2 + kSmpData);
    uint64_t guid = c.number(8), type = c.number(1), count = c.number(1);
    c.skip(2 * kSmpData);
    if (type < 1 || type > 3)
      fail(path,
           fmt::format("libibnetdisc cache node {} (GUID {:#x}): type {} is no CA, switch or router", n, guid, type));
    if (!nodes.port_count.emplace(guid, static_cast<uint8_t>(count)).second)
      fail(path, fmt::format("libibnetdisc cache node {}: GUID {:#x} given twice", n, guid));
    if (type == 2) nodes.switches.insert(guid);
    if (type == 2 && sm_lid > kMaxUnicastLid)
      fail(path, fmt::format("libibnetdisc cache node {} (switch {:#x}): LID {} is not a unicast LID (0-{})", n, guid,
                             sm_lid, kMaxUnicastLid));
    read_listed_ports(c, n, guid, count, nodes, path);
  }
  if (!nodes.port_count.count(h.from))
    fail(path, fmt::format("libibnetdisc cache: the start node {:#x} is not among its nodes", h.from));
  return nodes;
}

// What the ports say: which are stored, the peers they name, the LIDs they
// answer to, and where the LID of each switch port but port 0 sits.
struct Ports {
  std::set<PortKey> seen;
  std::vector<PortKey> peers;
  std::vector<LidRange> lids;
  std::vector<size_t> switch_port_lids;  // byte offsets
};

// Port p, stored as (key, node): its node known, its number within the
// node's, stored once, and listed by that node.
void check_port_owner(uint64_t p, PortKey key, uint64_t node, const Nodes& nodes, Ports& ports,
                      const std::string& path) {
  auto owner = nodes.port_count.find(node);
  if (owner == nodes.port_count.end())
    fail(path, fmt::format("libibnetdisc cache port {} ({:#x}/{}): its node {:#x} is not among the nodes", p, key.first,
                           key.second, node));
  if (key.second > owner->second)
    fail(path, fmt::format("libibnetdisc cache port {} ({:#x}/{}): past its node's {} ports", p, key.first, key.second,
                           owner->second));
  if (!ports.seen.insert(key).second)
    fail(path, fmt::format("libibnetdisc cache port {}: {:#x}/{} given twice", p, key.first, key.second));
  // rdma-core frees a port no node lists once loading ends, while the
  // peer that names it keeps pointing at it; a port listed by another
  // node than its own would sit in one node's port array and name the
  // other as its node.
  auto lister = nodes.listed.find(key);
  if (lister == nodes.listed.end())
    fail(path, fmt::format("libibnetdisc cache port {} ({:#x}/{}): no node lists it, not even its node {:#x}", p,
                           key.first, key.second, node));
  if (lister->second != node)
    fail(path, fmt::format("libibnetdisc cache port {} ({:#x}/{}): listed by node {:#x}, but its node is {:#x}", p,
                           key.first, key.second, lister->second, node));
}

Ports read_ports(Cursor& c, const Header& h, const Nodes& nodes, const std::string& path) {
  Ports ports;
  for (uint64_t p = 0; p < h.ports; ++p) {
    c.need(kPort, fmt::format("port {}", p));
    PortKey key{c.number(8), static_cast<uint8_t>(c.number(1))};
    c.skip(1);
    const size_t lid_at = c.at();
    uint64_t lid = c.number(2);
    uint64_t lmc = c.number(1);
    c.skip(kSmpData);
    uint64_t node = c.number(8), cabled = c.number(1);
    // rdma-core files a port under every LID of its range in a 16-bit loop
    // that never ends once the range passes LID 0xffff.
    if (lmc > kMaxLmc)
      fail(path, fmt::format("libibnetdisc cache port {} ({:#x}/{}): LMC {} is past {} (PortInfo:LMC has 3 bits)", p,
                             key.first, key.second, lmc, kMaxLmc));
    PortKey peer{c.number(8), static_cast<uint8_t>(c.number(1))};
    check_port_owner(p, key, node, nodes, ports, path);
    if (cabled > 1) fail(path, fmt::format("libibnetdisc cache port {}: peer flag {} is neither 0 nor 1", p, cabled));
    if (cabled) ports.peers.push_back(peer);
    if (key.second > 0 && nodes.switches.count(node)) {
      ports.switch_port_lids.push_back(lid_at);
      continue;
    }
    // A subnet manager gives a port a unicast LID or none (0); the
    // ibnetdiscover text this fabric may be written as refuses any other.
    if (lid > kMaxUnicastLid)
      fail(path, fmt::format("libibnetdisc cache port {} ({:#x}/{}): LID {} is not a unicast LID (0-{})", p, key.first,
                             key.second, lid, kMaxUnicastLid));
    if (lid > 0) ports.lids.push_back({lid, lid + (uint64_t{1} << lmc) - 1, key});
  }
  return ports;
}

// Every port a node lists and every peer stored; no LID answered by two
// ports (a switch's ports other than port 0 are not in `lids`).
void check_references(const Nodes& nodes, Ports& ports, const std::string& path) {
  for (const auto& [key, lister] : nodes.listed)
    if (!ports.seen.count(key))
      fail(path, fmt::format("libibnetdisc cache: node {:#x} lists port {:#x}/{}, which is not stored", lister,
                             key.first, key.second));
  for (const PortKey& key : ports.peers)
    if (!ports.seen.count(key))
      fail(path, fmt::format("libibnetdisc cache: a port's peer {:#x}/{} is not stored", key.first, key.second));
  std::vector<LidRange>& lids = ports.lids;
  std::sort(lids.begin(), lids.end(), [](const LidRange& a, const LidRange& b) { return a.first < b.first; });
  for (size_t i = 1; i < lids.size(); ++i)
    if (lids[i].first <= lids[i - 1].last)
      fail(path, fmt::format("libibnetdisc cache: LID {} is both port {:#x}/{}'s and port {:#x}/{}'s", lids[i].first,
                             lids[i - 1].port.first, lids[i - 1].port.second, lids[i].port.first, lids[i].port.second));
}

}  // namespace

std::string checked_ibnetdisc_cache(std::string bytes, const std::string& path) {
  Cursor c(bytes, path);
  const Header h = read_header(c, bytes.size(), path);
  const Nodes nodes = read_nodes(c, h, path);
  Ports ports = read_ports(c, h, nodes, path);
  if (c.left() != 0)
    fail(path, fmt::format("libibnetdisc cache has {} bytes after its last port (byte {})", c.left(), c.at()));
  check_references(nodes, ports, path);
  for (size_t at : ports.switch_port_lids) bytes[at] = bytes[at + 1] = 0;
  return bytes;
}

}  // namespace topo
