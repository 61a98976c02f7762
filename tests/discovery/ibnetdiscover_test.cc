// ibnetdiscover text (both dialects), its writer, and libibnetdisc cache files.
#include "discovery/ibnetdiscover.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "discovery/ibnetdisc.h"
#include "fabric/classify.h"
#include "fabric/synthetic.h"

namespace topo {
namespace {

const std::string kDir = std::string(TOPO_FIXTURES) + "/ibnetdiscover/";

const Node& named(const Fabric& f, std::string_view name) {
  for (size_t v = 0; v < f.node_count(); ++v)
    if (f.node(v).name == name) return f.node(v);
  throw std::runtime_error("no node named " + std::string(name));
}

// Reads `text` as the file "inline.txt", which must be refused: returns
// the error, or nothing (and a test failure) when the text was read.
std::optional<ParseError> refusal(const std::string& text, const HostNaming& naming = {}) {
  std::istringstream in(text);
  try {
    read_ibnetdiscover(in, "inline.txt", naming);
  } catch (const ParseError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted:\n" << text.substr(0, 200);
  return std::nullopt;
}

// The cable on `name`'s port `port`.
const Link& cable_at(const Fabric& f, std::string_view name, int port) {
  for (auto e : boost::make_iterator_range(boost::edges(f.graph()))) {
    const Link& l = f.link(e);
    if (l.kind != LinkKind::Cable) continue;
    if ((f.node(l.end_a).name == name && l.port_a == port) || (f.node(l.end_b).name == name && l.port_b == port))
      return l;
  }
  throw std::runtime_error(fmt::format("no cable on {}:{}", name, port));
}

// Every cable as "a:pa <-> b:pb rate", ends ordered, keyed by `key` of each node.
template <typename Key>
std::multiset<std::string> cables(const Fabric& f, Key key, bool with_state = true) {
  std::multiset<std::string> out;
  for (auto e : boost::make_iterator_range(boost::edges(f.graph()))) {
    const Link& l = f.link(e);
    if (l.kind != LinkKind::Cable) continue;
    std::string a = fmt::format("{}:{}", key(f.node(l.end_a)), l.port_a);
    std::string b = fmt::format("{}:{}", key(f.node(l.end_b)), l.port_b);
    if (b < a) std::swap(a, b);
    out.insert(fmt::format("{} <-> {} {} {}", a, b, l.rate.str(), with_state ? name(l.state) : ""));
  }
  return out;
}

std::multiset<std::string> nodes(const Fabric& f) {
  std::multiset<std::string> out;
  for (size_t v = 0; v < f.node_count(); ++v) {
    const Node& n = f.node(v);
    out.insert(fmt::format("{} {} '{}' guid={:x} host={} rail={} level={}", name(n.kind), n.id, n.name, n.guid, n.host,
                           n.rail, name(n.level)));
  }
  return out;
}

// A link's fault names its ends in the order the reader met them; compare them unordered.
std::multiset<std::string> faults(const Fabric& f) {
  std::multiset<std::string> out;
  for (const Fault& x : f.faults()) {
    std::string subject = x.subject;
    if (size_t arrow = subject.find(" <-> "); arrow != std::string::npos) {
      std::string a = subject.substr(0, arrow), b = subject.substr(arrow + 5);
      subject = std::min(a, b) + " <-> " + std::max(a, b);
    }
    out.insert(fmt::format("{} {}", name(x.kind), subject));
  }
  return out;
}

Fabric round_trip(const Fabric& f) {
  std::stringstream text;
  write_ibnetdiscover(f, text);
  return read_ibnetdiscover(text, "round-trip");
}

void expect_same_fabric(const Fabric& a, const Fabric& b) {
  auto id = [](const Node& n) { return n.id; };
  EXPECT_EQ(nodes(a), nodes(b));
  EXPECT_EQ(cables(a, id), cables(b, id));
  EXPECT_EQ(faults(a), faults(b));
  EXPECT_EQ(a.summary().hosts, b.summary().hosts);
  EXPECT_EQ(a.summary().leaves, b.summary().leaves);
  EXPECT_EQ(a.summary().spines, b.summary().spines);
  EXPECT_EQ(a.summary().cores, b.summary().cores);
  EXPECT_EQ(a.summary().pods, b.summary().pods);
  EXPECT_EQ(a.summary().rails, b.summary().rails);
  EXPECT_EQ(a.summary().rail_optimized, b.summary().rail_optimized);
  for (NodeId s : a.switches()) {
    auto other = b.find(a.node(s).id);
    ASSERT_TRUE(other);
    EXPECT_DOUBLE_EQ(a.node(s).down_gbps, b.node(*other).down_gbps) << a.node(s).name;
    EXPECT_DOUBLE_EQ(a.node(s).up_gbps, b.node(*other).up_gbps) << a.node(s).name;
  }
}

TEST(Ibnetdiscover, ReadsTheRealFormat) {
  const std::string path = kDir + "two_leaves.ibnetdiscover";
  Fabric f = read_ibnetdiscover_file(path);
  EXPECT_EQ(f.source(), "ibnetdiscover:" + path);
  EXPECT_EQ(f.summary().hosts, 4);
  EXPECT_EQ(f.summary().hcas, 4);
  EXPECT_EQ(f.summary().leaves, 2);
  EXPECT_EQ(f.summary().spines, 1);
  EXPECT_EQ(f.summary().links, 8);

  const Node& leaf01 = named(f, "leaf01");
  EXPECT_EQ(leaf01.id, "S-7cfe900300a00001");
  EXPECT_EQ(leaf01.guid, 0x7cfe900300a00001u);
  EXPECT_EQ(leaf01.ports, 64);
  EXPECT_EQ(leaf01.level, Level::Leaf);
  EXPECT_EQ(named(f, "spine01").level, Level::Spine);

  const Node& hca = named(f, "gpu003 mlx5_0");
  EXPECT_EQ(hca.id, "H-0002c90300001021");
  EXPECT_EQ(hca.guid, 0x2c90300001021u);
  EXPECT_EQ(hca.host, "gpu003");
  EXPECT_EQ(hca.rail, 0);
  ASSERT_TRUE(f.find_host("gpu003"));
  EXPECT_EQ(f.node(f.leaves_of(*f.find_host("gpu003")).at(0)).name, "leaf02");

  // The 1x uplink is degraded against the 4xNDR of its tier.
  const Link& slow = cable_at(f, "leaf01", 33);
  EXPECT_EQ(slow.rate, (LinkRate{LinkWidth::X1, LinkSpeed::NDR}));
  EXPECT_TRUE(slow.degraded);
  EXPECT_EQ(slow.expected, (LinkRate{LinkWidth::X4, LinkSpeed::NDR}));
  EXPECT_EQ(cable_at(f, "leaf01", 34).rate, (LinkRate{LinkWidth::X4, LinkSpeed::NDR}));
  EXPECT_DOUBLE_EQ(leaf01.down_gbps, 800);
  EXPECT_DOUBLE_EQ(leaf01.up_gbps, 500);
  EXPECT_DOUBLE_EQ(leaf01.oversubscription(), 1.6);
  EXPECT_DOUBLE_EQ(named(f, "leaf02").oversubscription(), 1.0);
  ASSERT_EQ(f.faults().size(), 1u);
  EXPECT_EQ(f.faults()[0].kind, FaultKind::DegradedLink);
  EXPECT_NE(f.faults()[0].subject.find("leaf01:33"), std::string::npos) << f.faults()[0].subject;
}

TEST(Ibnetdiscover, ReadsTheIbsimDialectAsIbsimNegotiatesIt) {
  Fabric f = read_ibnetdiscover_file(kDir + "ibsim.net");
  EXPECT_EQ(f.summary().hosts, 4);
  EXPECT_EQ(f.summary().leaves, 2);
  EXPECT_EQ(f.summary().spines, 1);
  EXPECT_EQ(f.summary().links, 8);
  EXPECT_EQ(named(f, "leaf two").id, "Leaf2");  // description from the comment
  EXPECT_EQ(named(f, "Leaf1").id, "Leaf1");     // else the id
  EXPECT_EQ(named(f, "node03 mlx5_0").host, "node03");
  // GUIDs as ibsim hands them out: switches from 0x200000, CAs from
  // 0x100000 with their port GUIDs reserved.
  EXPECT_EQ(named(f, "Leaf1").guid, 0x200000u);
  EXPECT_EQ(named(f, "Spine").guid, 0x200002u);
  EXPECT_EQ(named(f, "node01 mlx5_0").guid, 0x100000u);
  EXPECT_EQ(named(f, "node04 mlx5_0").guid, 0x100009u);

  // w=/s=/e= are masks; a link takes the best bit both ends enable.
  EXPECT_EQ(cable_at(f, "Leaf1", 5).rate.str(), "1xSDR");      // w=1 against w=3
  EXPECT_EQ(cable_at(f, "Leaf1", 6).rate.str(), "4xHDR");      // e=4 against e=7
  EXPECT_EQ(cable_at(f, "leaf two", 1).rate.str(), "4xQDR");   // s=7 against s=4
  EXPECT_EQ(cable_at(f, "leaf two", 5).rate.str(), "12xSDR");  // w=12 against w=8
  EXPECT_EQ(cable_at(f, "leaf two", 6).rate.str(), "4xDDR");   // s=3 against s=2
  EXPECT_EQ(cable_at(f, "Leaf1", 1).rate.str(), "4xSDR");      // ibsim's default
}

// The cache fixture is what `ibnetdiscover --cache` wrote while ibsim 0.10
// ran ibsim.net with no subnet manager: reading the net file must give the
// fabric the simulator built, GUIDs and negotiated rates included.
TEST(IbnetdiscCache, MatchesWhatIbsimBuiltFromTheNetFile) {
  const std::string path = kDir + "ibsim.cache";
  Fabric cached = load_ibnetdisc_cache(path);
  Fabric net = read_ibnetdiscover_file(kDir + "ibsim.net");
  EXPECT_EQ(cached.source(), "ibnetdisc-cache:" + path);
  auto guid_and_name = [](const Node& n) { return fmt::format("{:x}/{}", n.guid, n.name); };
  EXPECT_EQ(cables(cached, guid_and_name, false), cables(net, guid_and_name, false));
  EXPECT_EQ(cached.summary().hosts, 4);
  EXPECT_EQ(cached.summary().leaves, 2);
  EXPECT_EQ(cached.summary().spines, 1);
  EXPECT_EQ(named(cached, "Leaf1").id, "S-0000000000200000");
  EXPECT_EQ(named(cached, "node02 mlx5_0").id, "H-0000000000100003");
  EXPECT_EQ(named(cached, "node02 mlx5_0").host, "node02");
  EXPECT_EQ(named(cached, "Spine").ports, 8);

  // No subnet manager ran: every port is in Init, so no link carries data.
  for (auto e : boost::make_iterator_range(boost::edges(cached.graph())))
    if (cached.link(e).kind == LinkKind::Cable) {
      EXPECT_EQ(cached.link(e).state, PortState::Init);
    }
  EXPECT_EQ(std::count_if(cached.faults().begin(), cached.faults().end(),
                          [](const Fault& x) { return x.kind == FaultKind::InactiveLink; }),
            8);
}

TEST(IbnetdiscCache, RefusesWhatIsNotACache) {
  EXPECT_THROW(load_ibnetdisc_cache(kDir + "no-such.cache"), ParseError);
  try {
    load_ibnetdisc_cache(kDir + "two_leaves.ibnetdiscover");
    FAIL() << "a text file loaded as a cache";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), kDir + "two_leaves.ibnetdiscover");
    EXPECT_NE(std::string(e.what()).find("not a libibnetdisc cache"), std::string::npos) << e.what();
  }
}

// rdma-core's loader trusts the file: a damaged cache must be refused
// before it (discovery/ibnetdisc_cache.h), saying what does not hold.
TEST(IbnetdiscCache, RefusesADamagedCacheBeforeRdmaCore) {
  std::ifstream in(kDir + "ibsim.cache", std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(good.size(), 200u);
  struct Case {
    std::string bytes;
    const char* message;
  };
  std::string no_ports = good;
  no_ports[28 + 4 + 64 + 8 + 1] = 0;  // the first node's port count
  std::string bad_type = good;
  bad_type[28 + 4 + 64 + 8] = 9;
  // rdma-core's loader never returned on this one: the LID range of an LMC
  // past 7 wraps its 16-bit loop.
  std::string wide_lmc = good;
  const size_t last_port = good.size() - 95;
  wide_lmc[last_port + 12] = 48;
  // The first node (H-...100009) lists its one port, 0x10000a/1, at bytes
  // 235-243, after its key count at 234; the second (H-...100006) lists
  // 0x100007/1 at 451-459. rdma-core frees a port no node lists while its
  // peer still points at it.
  const size_t first_keys = 28 + 206, second_key = 28 + 206 + 1 + 9 + 206 + 1;
  ASSERT_EQ(good[first_keys], 1);
  std::string unlisted = good.substr(0, first_keys) + '\0' + good.substr(first_keys + 1 + 9);
  std::string swapped = good;
  std::swap_ranges(swapped.begin() + first_keys + 1, swapped.begin() + first_keys + 1 + 9,
                   swapped.begin() + second_key);
  // The third node, switch 0x200001, lists its ports 0-8 from byte 667 on;
  // its port 2's key renamed 0x200003/1 gives it two ports numbered 1.
  std::string same_number = good;
  const size_t third_port2 = 28 + 2 * (207 + 9) + 207 + 2 * 9;
  ASSERT_EQ(good[third_port2 + 8], 2);
  same_number[third_port2] = 0x03;
  same_number[third_port2 + 8] = 1;
  const Case cases[] = {
      {unlisted, "(0x10000a/1): no node lists it"},
      {same_number, "two ports numbered 1"},
      {swapped, "listed by node 0x100006, but its node is 0x100009"},
      {good.substr(0, good.size() - 1), "ends inside port"},
      {good + "x", "1 bytes after its last port"},
      {good.substr(0, 20), "ends inside its header"},
      {no_ports, "past its 0 ports"},
      {bad_type, "type 9 is no CA, switch or router"},
      {wide_lmc, "LMC 48 is past 7"},
  };
  std::string path = ::testing::TempDir() + "damaged." + std::to_string(getpid()) + ".cache";
  for (const Case& c : cases) {
    std::ofstream(path, std::ios::binary) << c.bytes;
    try {
      load_ibnetdisc_cache(path);
      ADD_FAILURE() << "accepted a cache damaged so: " << c.message;
    } catch (const ParseError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
  }
  std::remove(path.c_str());
}

// The fixture with LIDs as a subnet manager gives them: one for each HCA
// port, and a switch's for all its ports (rdma-core writes port 0's LID on
// every port of a switch). rdma-core 44 leaks the repeats unless they are
// cleared first: the ASan run of this test is the check.
std::string with_lids(const std::string& cache, uint16_t first_hca_lid) {
  std::string out = cache;
  auto number = [&](size_t at, size_t width) {
    uint64_t v = 0;
    for (size_t i = 0; i < width; ++i) v |= uint64_t{static_cast<uint8_t>(out[at + i])} << (8 * i);
    return v;
  };
  const size_t ports = number(12, 4), port_bytes = 95;
  uint16_t next = first_hca_lid;
  for (size_t at = out.size() - ports * port_bytes; at < out.size(); at += port_bytes) {
    const uint64_t node = number(at + 13 + 64, 8);
    const bool on_switch = (node >> 20) == 2;  // the fixture's switches are 0x2000xx
    const uint16_t lid = on_switch ? static_cast<uint16_t>(0x100 + (node & 0xff)) : next++;
    out[at + 10] = static_cast<char>(lid & 0xff);
    out[at + 11] = static_cast<char>(lid >> 8);
  }
  return out;
}

TEST(IbnetdiscCache, LoadsTheLidsASubnetManagerGives) {
  std::ifstream in(kDir + "ibsim.cache", std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string path = ::testing::TempDir() + "lids." + std::to_string(getpid()) + ".cache";
  std::ofstream(path, std::ios::binary) << with_lids(good, 0x10);
  Fabric f = load_ibnetdisc_cache(path);
  EXPECT_EQ(named(f, "Leaf1").lid, 0x100u);
  EXPECT_EQ(named(f, "Spine").lid, 0x102u);
  std::set<uint32_t> hca_lids;
  for (NodeId n = 0; n < f.node_count(); ++n)
    if (f.node(n).kind == NodeKind::Hca) hca_lids.insert(f.node(n).lid);
  EXPECT_EQ(hca_lids.size(), 4u);
  EXPECT_GE(*hca_lids.begin(), 0x10u);
  EXPECT_LT(*hca_lids.rbegin(), 0x100u);
  // A cache of these bytes is refused with an error saying `message`.
  auto refused = [&](const std::string& bytes, const std::string& message) {
    std::ofstream(path, std::ios::binary) << bytes;
    try {
      load_ibnetdisc_cache(path);
      ADD_FAILURE() << "loaded a cache that should fail with: " << message;
    } catch (const ParseError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };

  // Two HCA ports given one LID: a subnet manager never does; refused,
  // naming both.
  std::string twice = with_lids(good, 0x10);
  const size_t ports = 31, first_port = twice.size() - ports * 95;
  size_t hca_ports[2], found = 0;
  for (size_t at = first_port; at < twice.size() && found < 2; at += 95)
    if ((static_cast<uint8_t>(twice[at + 13 + 64 + 2])) == 0x10) hca_ports[found++] = at;  // node 0x10xxxx
  ASSERT_EQ(found, 2u);
  twice[hca_ports[1] + 10] = twice[hca_ports[0] + 10];
  twice[hca_ports[1] + 11] = twice[hca_ports[0] + 11];
  refused(twice, "is both port 0x");
  // An HCA port, or a switch's port 0, at the permissive LID 0xffff: no
  // subnet manager gives it, and the ibnetdiscover text refuses it; so does
  // the cache (found by fuzzing: it loaded, and its text did not read back).
  for (bool on_switch : {false, true}) {
    std::string permissive = with_lids(good, 0x10);
    size_t at = first_port;
    while (at < permissive.size() && (static_cast<uint8_t>(permissive[at + 13 + 64 + 2]) != (on_switch ? 0x20 : 0x10) ||
                                      (on_switch && permissive[at + 8] != 0)))
      at += 95;
    ASSERT_LT(at, permissive.size());
    permissive[at + 10] = permissive[at + 11] = '\xff';
    refused(permissive, "LID 65535 is not a unicast LID (0-49151)");
  }
  // The same in a switch's own record (its SM LID, what rdma-core gives as
  // the switch's LID when its port 0 is not stored).
  std::string permissive = with_lids(good, 0x10);
  const size_t leaf_two = 28 + 2 * (207 + 9);  // the third node, switch 0x200001
  ASSERT_EQ(permissive.substr(leaf_two + 142, 8), "leaf two");
  permissive[leaf_two] = permissive[leaf_two + 1] = '\xff';
  refused(permissive, "(switch 0x200001): LID 65535 is not a unicast LID");
  std::remove(path.c_str());
}

// A NodeDescription read live or from a cache may hold a control
// character that the ibnetdiscover reader refuses: the writer refuses it
// too, naming the node, rather than write text that cannot be read back
// (found by fuzzing).
TEST(IbnetdiscCache, ADescriptionTheTextCannotCarryIsRefusedByTheWriter) {
  std::ifstream in(kDir + "ibsim.cache", std::ios::binary);
  std::string cache((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t leaf_two = 602;  // the third node's NodeDescription, "leaf two"
  ASSERT_EQ(cache.substr(leaf_two, 8), "leaf two");
  cache[leaf_two + 4] = '\x02';
  std::string path = ::testing::TempDir() + "control." + std::to_string(getpid()) + ".cache";
  std::ofstream(path, std::ios::binary) << cache;
  Fabric f = load_ibnetdisc_cache(path);
  std::remove(path.c_str());
  std::ostringstream out;
  try {
    write_ibnetdiscover(f, out);
    ADD_FAILURE() << "wrote a description with a control character";
  } catch (const FabricError& e) {
    EXPECT_NE(std::string(e.what()).find("S-0000000000200001' holds '\"' or a control character"), std::string::npos)
        << e.what();
  }
}

TEST(IbnetdiscLive, NoHcaIsATypedError) {
  if (std::filesystem::exists("/sys/class/infiniband_mad") || std::getenv("LD_PRELOAD"))
    GTEST_SKIP() << "this host has an HCA (or a simulated one): the no-HCA path cannot be seen here";
  try {
    discover_ibnetdisc({});
    FAIL() << "discovery without an HCA returned a fabric";
  } catch (const DiscoveryError& e) {
    EXPECT_NE(std::string(e.what()).find("no InfiniBand HCA"), std::string::npos) << e.what();
  }
  EXPECT_THROW(discover_ibnetdisc({.ca = "", .ca_port = -1}), DiscoveryError);
}

struct Malformed {
  std::string file;
  int line;
  std::string message;
};

class IbnetdiscoverMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(IbnetdiscoverMalformed, NamesFileLineAndWhatWasExpected) {
  const Malformed& m = GetParam();
  const std::string path = kDir + "malformed/" + m.file;
  try {
    read_ibnetdiscover_file(path);
    FAIL() << path << " was accepted";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), m.line) << e.what();
    EXPECT_NE(std::string(e.what()).find(m.message), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(fmt::format("{}:{}: ", path, m.line), 0), 0u) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, IbnetdiscoverMalformed,
    ::testing::Values(Malformed{"bad_header.ibnetdiscover", 3, "expected the port count (1-65535) after 'Switch'"},
                      Malformed{"port_outside_node.ibnetdiscover", 4, "port line outside a node"},
                      Malformed{"unknown_width.ibnetdiscover", 2, "unknown link width '3x'"},
                      Malformed{"unterminated_quote.ibnetdiscover", 3, "unterminated quote"},
                      Malformed{"undefined_node.ibnetdiscover", 3,
                                "links to \"S-7cfe9003000000ff\", which no 'Switch' or 'Ca' header"}),
    [](const auto& info) {
      std::string n = info.param.file.substr(0, info.param.file.find('.'));
      return n;
    });

// Smaller cases, inline: (text, line, message).
TEST(Ibnetdiscover, RefusesInconsistentFabrics) {
  struct Case {
    const char* text;
    int line;
    const char* message;
  };
  const Case cases[] = {
      {"Switch 8 \"A\"\n[1] \"B\"[1]\n[2] \"B\"[1]\n\nSwitch 8 \"B\"\n", 3, "which line 2 already cables to \"A\"[1]"},
      {"Switch 8 \"A\"\n[1] \"B\"[2]\n\nSwitch 8 \"B\"\n[2] \"A\"[3]\n", 5,
       "port 2 is cabled to \"A\"[3] here, but line 2 cables \"A\"[1] to it"},
      {"Switch 8 \"A\"\n[9] \"B\"[1]\n\nSwitch 8 \"B\"\n", 2, "port 9 is outside 1-8"},
      {"Switch 8 \"A\"\n[1] \"B\"[9]\n\nSwitch 8 \"B\"\n", 2, "which has only 8 ports"},
      {"Switch 8 \"A\"\n\nSwitch 4 \"A\"\n", 3, "node \"A\" is defined twice (first on line 1)"},
      {"Switch 8 \"A\"\n[1] \"A\"[1]\n", 2, "cabled to itself"},
      {"Switch 8 \"A\"\n[1] \"B\"[1]  # \"b\" lid 3 4xQQR\n\nSwitch 8 \"B\"\n", 2,
       "unknown link speed 'QQR' in '4xQQR'"},
      {"Switch 8 \"A\"\n[1] \"B\"[1]  w=1\n\nSwitch 8 \"B\"\n[1] \"A\"[1]\n", 5,
       "enable no common width or speed (w=1 s=1 e=0 against w=2 s=1 e=0)"},
      {"Switch 8 \"A\"\n[1] \"B\"[1]  x=1\n", 2, "unknown port option 'x=1'"},
      {"Switch 8 \"A\"\n[1] \"B\"[1]  w=64\n", 2, "w=64 is not a width mask 1-31"},
      {"include \"other.net\"\n", 1, "the ibsim directive 'include' is not supported"},
      {"Switch 8 \"A\"\n@[1] \"x\"\n", 2, "aliases"},
      {"Swich 8 \"A\"\n", 1, "expected a node header"},
      {"Switch 70000 \"A\"\n", 1, "expected the port count (1-65535)"},
      {"Switch 8 A\n", 1, "expected the node id in double quotes"},
      {"Switch 8 \"A\"  \"desc\"\n", 1, "expected '# \"<description>\"' after the id"},
      {"switchguid=zz\n", 1, "expected a number after 'switchguid='"},
      {"Ca 1 \"H-1\"  # \"  \"\n", 1, "does not match the host pattern"},
      {"# ibnetdiscover failed before printing anything\n\n", 0, "no node in the file"},
      {"Switch 8 \"A\"  # \"a\" enhanced port 0 lid 3 lmc 0\n\nSwitch 8 \"B\"  # \"b\" enhanced port 0 lid 3 lmc 0\n",
       3, "LID 3 of 'B' is already given to 'A' on line 1"},
      {"caguid=0p100000\nCa 1 \"H\"  # \"gpu001 mlx5_0\"\n", 1, "expected a number after 'caguid=', got '0p100000'"},
      {"caguid=0\nCa 1 \"H\"  # \"gpu001 mlx5_0\"\n", 1, "caguid=0: 0 is not a GUID"},
      {"Switch 8 \"A\"\n[1] \"B\"[1]  w=4x\n", 2, "expected a number in 'w=4x'"},
      {"# routers only\n\nRt 2 \"R-1\"  # \"r1\"\n[1] \"R-2\"[1]\n\nRt 2 \"R-2\"  # \"r2\"\n", 3,
       "no 'Switch' or 'Ca' in the file, only routers"},
  };
  for (const Case& c : cases) {
    auto e = refusal(c.text);
    if (!e) continue;
    EXPECT_EQ(e->file(), "inline.txt");
    EXPECT_EQ(e->line(), c.line) << e->what() << "\nfor:\n" << c.text;
    EXPECT_NE(std::string(e->what()).find(c.message), std::string::npos) << e->what() << "\nfor:\n" << c.text;
  }
}

// A damaged file can hold a word or an id of megabytes: the error names its
// line and quotes at most 64 bytes of it.
TEST(Ibnetdiscover, QuotesAtMost64BytesOfAnyValue) {
  const std::string big(5000, 'x');
  struct Case {
    std::string text;
    int line;
    const char* message;
  };
  const Case cases[] = {
      {"Switch 8 \"A\"  " + big + "\n", 1, "after the id, got 'xxx"},
      {"Switch 8 \"" + big + "\"\n\nSwitch 4 \"" + big + "\"\n", 3, "is defined twice"},
      {"Switch 8 \"A\"\n[1] \"" + big + "\"[1]\n", 2, "no 'Switch' or 'Ca' header"},
      {"Switch 8 \"A\"\n[1] \"B\"[1]  w=" + big + "\n", 2, "expected a number in 'w=xxx"},
      {"Switch 8 \"A\"\n[1] \"B\"[1]  # \"b\" lid 3 4x" + big + "\n", 2, "unknown link speed 'xxx"},
      {"switchguid=" + big + "\n", 1, "expected a number after 'switchguid=', got 'xxx"},
  };
  for (const Case& c : cases) {
    auto e = refusal(c.text);
    if (!e) continue;
    const std::string what = e->what();
    EXPECT_EQ(e->line(), c.line) << what;
    EXPECT_NE(what.find(c.message), std::string::npos) << what;
    EXPECT_NE(what.find("..."), std::string::npos) << what;
    EXPECT_LT(what.size(), 400u) << what;
  }
}

// Routers and their cables are skipped; what is left round-trips. A file
// of routers alone is refused above: it would read as an empty fabric that
// the writer cannot put back.
TEST(Ibnetdiscover, SkipsRoutersAndTheirCables) {
  std::istringstream in(
      "Switch 8 \"S-1\"  # \"leaf\"\n[1] \"H-1\"[1]\n[2] \"R-1\"[1]\n\n"
      "Ca 1 \"H-1\"  # \"gpu001 mlx5_0\"\n[1] \"S-1\"[1]\n\n"
      "Rt 2 \"R-1\"  # \"router\"\n[1] \"S-1\"[2]\n");
  Fabric f = read_ibnetdiscover(in, "inline.txt");
  EXPECT_TRUE(f.find("S-1"));
  EXPECT_EQ(f.summary().hcas, 1);
  EXPECT_EQ(f.cables().size(), 1u);
  EXPECT_FALSE(f.find("R-1"));
  std::ostringstream out;
  write_ibnetdiscover(f, out);
  std::istringstream written(out.str());
  Fabric again = read_ibnetdiscover(written, "written.txt");
  EXPECT_EQ(again.node_count(), f.node_count()) << out.str();
  EXPECT_EQ(again.cables().size(), 1u) << out.str();
}

TEST(Ibnetdiscover, HostPatternMismatchNamesTheHeaderLine) {
  auto e = refusal("Switch 8 \"A\"\n[1] \"H\"[1]\n\nCa 1 \"H\"  # \"gpu001 mlx5_0\"\n[1] \"A\"[1]\n",
                   HostNaming("^(node[0-9]+)"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->line(), 4);
  EXPECT_NE(std::string(e->what()).find("does not match the host pattern"), std::string::npos) << e->what();
}

// A description holding a tab or a NUL could not be written back and read
// as the same name (both found by fuzzing): refused at its line.
TEST(Ibnetdiscover, AControlCharacterInADescriptionNamesTheLine) {
  for (std::string desc : {std::string("gpu001\tmlx5_0"), std::string("gpu001 mlx5_0\0", 14)}) {
    auto e = refusal("Switch 8 \"A\"\n[1] \"H\"[1]\n\nCa 1 \"H\"  # \"" + desc + "\"\n[1] \"A\"[1]\n");
    if (!e) continue;
    EXPECT_EQ(e->line(), 4);
    EXPECT_NE(std::string(e->what()).find("control character"), std::string::npos) << e->what();
  }
}

TEST(Ibnetdiscover, ARateOnBothEndsTrainsToTheSlower) {
  std::istringstream in(
      "Switch 8 \"A\"\n[1] \"B\"[1]  # \"b\" lid 1 4xHDR\n\n"
      "Switch 8 \"B\"\n[1] \"A\"[1]  # \"a\" lid 1 1xNDR\n");
  Fabric f = read_ibnetdiscover(in, "both.txt");
  EXPECT_EQ(cable_at(f, "A", 1).rate, (LinkRate{LinkWidth::X1, LinkSpeed::HDR}));
}

TEST(IbnetdiscoverWriter, RoundTripsSyntheticFabrics) {
  for (const char* spec :
       {"leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,degrade=leaf02:9",
        "railopt:hosts=16,rails=4,spines=2,rate=4xHDR",
        "clos3:pods=2,leaves_per_pod=2,hosts_per_leaf=4,rate=8xXDR,degrade=spine01:1", "fattree:k=4,rate=12xFDR10"}) {
    SCOPED_TRACE(spec);
    Fabric f = make_synthetic(spec);
    Fabric back = round_trip(f);
    expect_same_fabric(f, back);
    EXPECT_EQ(back.source(), "ibnetdiscover:round-trip");
    // And writing what was read gives the same text again.
    std::stringstream once, twice;
    write_ibnetdiscover(f, once);
    write_ibnetdiscover(back, twice);
    auto body = [](std::string s) { return s.substr(s.find("\n#\n")); };  // past the source line
    EXPECT_EQ(body(once.str()), body(twice.str()));
  }
}

TEST(IbnetdiscoverWriter, RoundTripsTheFixtures) {
  for (const char* file : {"two_leaves.ibnetdiscover", "ibsim.net"}) {
    SCOPED_TRACE(file);
    Fabric f = read_ibnetdiscover_file(kDir + file);
    expect_same_fabric(f, round_trip(f));
  }
}

// An ibsim net file's HCA that nothing cables still gets a LID numbered
// (the file gives none); no port line can carry it, so the writer puts it in
// the header (found by fuzzing: read, write, read lost it).
TEST(IbnetdiscoverWriter, AnUncabledCaKeepsItsLid) {
  std::istringstream in(
      "Switch 8 \"S\"\n[1] \"H1\"[1]\n\nHca 2 \"H1\"\n[1] \"S\"[1]\n\nHca 2 \"H2\"  # \"node09 mlx5_0\"[2]\n");
  Fabric f = read_ibnetdiscover(in, "spare.net");
  const Node& spare = named(f, "node09 mlx5_0");
  ASSERT_NE(spare.lid, 0u);
  std::stringstream text;
  write_ibnetdiscover(f, text);
  EXPECT_NE(text.str().find(fmt::format("Ca\t2 \"H2\"\t\t# \"node09 mlx5_0\" lid {}\n", spare.lid)), std::string::npos)
      << text.str();
  Fabric back = read_ibnetdiscover(text, "round-trip");
  EXPECT_EQ(named(back, "node09 mlx5_0").lid, spare.lid);
  expect_same_fabric(f, back);
}

// A CA with several cabled ports reads as a vertex per port, "<id>:<port>",
// and is written as one CA again; a single-port CA whose own id ends in
// ":<number>" is no such part and keeps its id (found by fuzzing: "H:1" was
// written as "H").
TEST(IbnetdiscoverWriter, ACaIdEndingInAPortNumberKeepsIt) {
  std::istringstream in(
      "Switch 8 \"S\"\n[1] \"H:1\"[1]\n[2] \"M\"[1]\n[3] \"M\"[2]\n\n"
      "Hca 2 \"H:1\"\n[1] \"S\"[1]\n\nHca 2 \"M\"\n[1] \"S\"[2]\n[2] \"S\"[3]\n");
  Fabric f = read_ibnetdiscover(in, "colon.net");
  ASSERT_TRUE(f.find("H:1"));
  ASSERT_TRUE(f.find("M:1"));
  ASSERT_TRUE(f.find("M:2"));
  std::stringstream text;
  write_ibnetdiscover(f, text);
  EXPECT_NE(text.str().find("Ca\t2 \"H:1\""), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("Ca\t2 \"M\""), std::string::npos) << text.str();
  Fabric back = read_ibnetdiscover(text, "round-trip");
  EXPECT_TRUE(back.find("H:1"));
  expect_same_fabric(f, back);
}

TEST(IbnetdiscoverWriter, WritesIbnetdiscoverLines) {
  FabricBuilder b;
  b.add_switch("S-7cfe900300a00001", "leaf01", 36, 0x7cfe900300a00001);
  b.add_switch("spine-a", "spine a", 0, 0);
  b.add_hca("H-0002c90300001001", "gpu001 mlx5_0", 1, 0x2c90300001001);
  b.connect("S-7cfe900300a00001", 1, "H-0002c90300001001", 1, {LinkWidth::X4, LinkSpeed::NDR});
  b.connect("S-7cfe900300a00001", 33, "spine-a", 2, {LinkWidth::X1, LinkSpeed::HDR});
  b.connect("S-7cfe900300a00001", 34, "spine-a", 3, {LinkWidth::X4, LinkSpeed::HDR}, PortState::Down);
  std::ostringstream out;
  // LIDs as finish() numbers them: switches first, then HCA ports.
  write_ibnetdiscover(std::move(b).finish(), out);
  const std::string text = out.str();
  for (const char* line : {
           "switchguid=0x7cfe900300a00001(7cfe900300a00001)\n"
           "Switch\t36 \"S-7cfe900300a00001\"\t\t# \"leaf01\" enhanced port 0 lid 1 lmc 0\n"
           "[1]\t\"H-0002c90300001001\"[1](2c90300001002)\t\t# \"gpu001 mlx5_0\" lid 3 4xNDR\n"
           "[33]\t\"spine-a\"[2]\t\t# \"spine a\" lid 2 1xHDR\n\n",
           "\nSwitch\t2 \"spine-a\"\t\t# \"spine a\" enhanced port 0 lid 2 lmc 0\n[2]\t",
           "caguid=0x2c90300001001\n"
           "Ca\t1 \"H-0002c90300001001\"\t\t# \"gpu001 mlx5_0\"\n"
           "[1](2c90300001002)\t\"S-7cfe900300a00001\"[1]\t\t# lid 3 lmc 0 \"leaf01\" lid 1 4xNDR\n",
       })
    EXPECT_NE(text.find(line), std::string::npos) << "missing:\n" << line << "\nin:\n" << text;
  // A Down link is not written: discovery cannot cross it either.
  EXPECT_EQ(text.find("[34]"), std::string::npos) << text;
  EXPECT_EQ(text.find("[3]\t"), std::string::npos) << text;
}

TEST(IbnetdiscoverWriter, RefusesNamesTheFormatCannotCarry) {
  for (const std::string& id : std::vector<std::string>{"with\"quote", "with#hash", "at@sign", std::string(65, 'x')}) {
    FabricBuilder b;
    b.add_switch(id, "name");
    std::ostringstream out;
    EXPECT_THROW(write_ibnetdiscover(std::move(b).finish(), out), FabricError) << id;
  }
  FabricBuilder b;
  b.add_switch("ok", "bad \"name\"");
  std::ostringstream out;
  EXPECT_THROW(write_ibnetdiscover(std::move(b).finish(), out), FabricError);
}

}  // namespace
}  // namespace topo
