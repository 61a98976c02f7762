#include "topology/ibnetdisc_cache.h"

#include <algorithm>
#include <bitset>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "topology/error.h"

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
      throw ParseError(path_, 0, fmt::format("libibnetdisc cache ends inside {} (byte {} of {})", what, at_,
                                             bytes_.size()));
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

}  // namespace

std::string checked_ibnetdisc_cache(std::string bytes, const std::string& path) {
  auto fail = [&](const std::string& what) -> void { throw ParseError(path, 0, what); };
  Cursor c(bytes, path);
  c.need(kHeader, "its header");
  if (c.number(4) != kMagic || c.number(4) != 1)
    fail("not a libibnetdisc cache file (version 1): expected one written by 'ibnetdiscover --cache FILE'");
  uint64_t nodes = c.number(4), ports = c.number(4), from = c.number(8);
  c.skip(4);
  if (nodes > c.left() / kNode || ports > c.left() / kPort)
    fail(fmt::format("libibnetdisc cache claims {} nodes and {} ports, more than its {} bytes hold", nodes, ports,
                     bytes.size()));

  std::map<uint64_t, uint8_t> port_count;  // node GUID -> its port count
  std::set<uint64_t> switches;               // their GUIDs
  std::map<PortKey, uint64_t> listed;       // the ports nodes list -> the node listing each
  for (uint64_t n = 0; n < nodes; ++n) {
    c.need(kNode, fmt::format("node {}", n));
    const uint64_t sm_lid = c.number(2);  // a switch's LID when its port 0 is not stored
    c.skip(2 + kSmpData);
    uint64_t guid = c.number(8), type = c.number(1), count = c.number(1);
    c.skip(2 * kSmpData);
    uint64_t keys = c.number(1);
    if (type < 1 || type > 3) fail(fmt::format("libibnetdisc cache node {} (GUID {:#x}): type {} is no CA, switch or router", n, guid, type));
    if (!port_count.emplace(guid, static_cast<uint8_t>(count)).second)
      fail(fmt::format("libibnetdisc cache node {}: GUID {:#x} given twice", n, guid));
    if (type == 2) switches.insert(guid);
    if (type == 2 && sm_lid > kMaxUnicastLid)
      fail(fmt::format("libibnetdisc cache node {} (switch {:#x}): LID {} is not a unicast LID (0-{})", n, guid, sm_lid,
                       kMaxUnicastLid));
    c.need(keys * kKey, fmt::format("the ports of node {}", n));
    std::bitset<256> numbers;  // one slot a port number: rdma-core would keep the last and lose the others
    for (uint64_t k = 0; k < keys; ++k) {
      PortKey key{c.number(8), static_cast<uint8_t>(c.number(1))};
      if (key.second > count)
        fail(fmt::format("libibnetdisc cache node {} (GUID {:#x}): port {} past its {} ports", n, guid, key.second, count));
      if (!listed.emplace(key, guid).second)
        fail(fmt::format("libibnetdisc cache node {}: port {:#x}/{} listed twice", n, key.first, key.second));
      if (numbers.test(key.second))
        fail(fmt::format("libibnetdisc cache node {} (GUID {:#x}): two ports numbered {}", n, guid, key.second));
      numbers.set(key.second);
    }
  }
  if (!port_count.count(from)) fail(fmt::format("libibnetdisc cache: the start node {:#x} is not among its nodes", from));

  std::set<PortKey> seen;
  std::vector<PortKey> peers;
  std::vector<LidRange> lids;
  std::vector<size_t> switch_port_lids;  // byte offsets
  for (uint64_t p = 0; p < ports; ++p) {
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
      fail(fmt::format("libibnetdisc cache port {} ({:#x}/{}): LMC {} is past {} (PortInfo:LMC has 3 bits)", p,
                       key.first, key.second, lmc, kMaxLmc));
    PortKey peer{c.number(8), static_cast<uint8_t>(c.number(1))};
    auto owner = port_count.find(node);
    if (owner == port_count.end())
      fail(fmt::format("libibnetdisc cache port {} ({:#x}/{}): its node {:#x} is not among the nodes", p, key.first,
                       key.second, node));
    if (key.second > owner->second)
      fail(fmt::format("libibnetdisc cache port {} ({:#x}/{}): past its node's {} ports", p, key.first, key.second,
                       owner->second));
    if (!seen.insert(key).second) fail(fmt::format("libibnetdisc cache port {}: {:#x}/{} given twice", p, key.first, key.second));
    // rdma-core frees a port no node lists once loading ends, while the
    // peer that names it keeps pointing at it; a port listed by another
    // node than its own would sit in one node's port array and name the
    // other as its node.
    auto lister = listed.find(key);
    if (lister == listed.end())
      fail(fmt::format("libibnetdisc cache port {} ({:#x}/{}): no node lists it, not even its node {:#x}", p,
                       key.first, key.second, node));
    if (lister->second != node)
      fail(fmt::format("libibnetdisc cache port {} ({:#x}/{}): listed by node {:#x}, but its node is {:#x}", p,
                       key.first, key.second, lister->second, node));
    if (cabled > 1) fail(fmt::format("libibnetdisc cache port {}: peer flag {} is neither 0 nor 1", p, cabled));
    if (cabled) peers.push_back(peer);
    if (key.second > 0 && switches.count(node)) {
      switch_port_lids.push_back(lid_at);
      continue;
    }
    // A subnet manager gives a port a unicast LID or none (0); the
    // ibnetdiscover text this fabric may be written as refuses any other.
    if (lid > kMaxUnicastLid)
      fail(fmt::format("libibnetdisc cache port {} ({:#x}/{}): LID {} is not a unicast LID (0-{})", p, key.first,
                       key.second, lid, kMaxUnicastLid));
    if (lid > 0) lids.push_back({lid, lid + (uint64_t{1} << lmc) - 1, key});
  }
  if (c.left() != 0)
    fail(fmt::format("libibnetdisc cache has {} bytes after its last port (byte {})", c.left(), c.at()));
  for (const auto& [key, lister] : listed)
    if (!seen.count(key))
      fail(fmt::format("libibnetdisc cache: node {:#x} lists port {:#x}/{}, which is not stored", lister, key.first,
                       key.second));
  for (const PortKey& key : peers)
    if (!seen.count(key)) fail(fmt::format("libibnetdisc cache: a port's peer {:#x}/{} is not stored", key.first, key.second));
  std::sort(lids.begin(), lids.end(), [](const LidRange& a, const LidRange& b) { return a.first < b.first; });
  for (size_t i = 1; i < lids.size(); ++i)
    if (lids[i].first <= lids[i - 1].last)
      fail(fmt::format("libibnetdisc cache: LID {} is both port {:#x}/{}'s and port {:#x}/{}'s", lids[i].first,
                       lids[i - 1].port.first, lids[i - 1].port.second, lids[i].port.first, lids[i].port.second));
  for (size_t at : switch_port_lids) bytes[at] = bytes[at + 1] = 0;
  return bytes;
}

}  // namespace topo
