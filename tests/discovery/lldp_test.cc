// LLDP discovery: lldpcli JSON (both shapes) and CSV link tables.
//
// The fixtures under fixtures/lldp/ were collected by
// tests/system/lldp_fabric.sh from real lldpd in network namespaces: three
// leaves, two spines, six hosts with eth0 and eth1 on their leaf; leaf03 has
// no uplink to spine02 and gpu06's eth1 has no neighbour. twotier-json is
// `lldpcli -f json`, twotier-json0 the same fabric in `-f json0`.
#include "discovery/lldp.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "fabric/classify.h"

namespace topo {
namespace {

namespace fs = std::filesystem;
const fs::path kDir = fs::path(TOPO_FIXTURES) / "lldp";

std::set<std::string> cables(const Fabric& f) {
  std::set<std::string> out;
  for (LinkId e : f.cables()) out.insert(describe_link(f, e) + " " + f.link(e).rate.str());
  return out;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A copy of a fixture set in a fresh directory, to add or change files.
fs::path copy_fixture(const std::string& set, const std::string& name) {
  fs::path dir = fs::path(::testing::TempDir()) / ("lldp_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::copy(kDir / set, dir);
  return dir;
}

const Node& node_named(const Fabric& f, std::string_view name) {
  for (size_t v = 0; v < f.node_count(); ++v)
    if (f.node(v).name == name) return f.node(v);
  throw std::runtime_error("no node " + std::string(name));
}

TEST(Lldp, TwoTierFabricFromRealLldpd) {
  LldpFabric r = read_lldp_dir(kDir / "twotier-json");
  const Fabric& f = r.fabric;
  EXPECT_EQ(f.summary().hosts, 6);
  EXPECT_EQ(f.summary().hcas, 11);  // gpu06 eth1 sees no one
  EXPECT_EQ(f.summary().leaves, 3);
  EXPECT_EQ(f.summary().spines, 2);
  EXPECT_EQ(f.summary().links, 16);
  EXPECT_EQ(f.summary().rails, 2);
  EXPECT_EQ(node_named(f, "leaf01").level, Level::Leaf);
  EXPECT_EQ(node_named(f, "spine02").level, Level::Spine);
  EXPECT_EQ(node_named(f, "gpu03 eth1").rail, 1);
  // veth advertises 10GBASE-T: every cable is 10GbE.
  for (LinkId e : f.cables()) EXPECT_EQ(f.link(e).rate.str(), "10GbE");
  EXPECT_TRUE(cables(f).count("gpu05 eth0:1 <-> leaf03:1 10GbE"));
  EXPECT_TRUE(cables(f).count("leaf02:6 <-> spine02:2 10GbE"));
  // The missing uplink is the classification's own fault.
  bool missing = false;
  for (const Fault& fault : f.faults())
    if (fault.kind == FaultKind::MissingUplinks && fault.subject == "leaf03") missing = true;
  EXPECT_TRUE(missing);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].kind, LldpFindingKind::NicWithoutNeighbour);
  EXPECT_EQ(r.findings[0].subject, "gpu06:eth1");
  EXPECT_EQ(f.source(), "lldp:" + (kDir / "twotier-json").string());
}

TEST(Lldp, Json0ReadsAsJson) {
  LldpFabric a = read_lldp_dir(kDir / "twotier-json");
  LldpFabric b = read_lldp_dir(kDir / "twotier-json0");
  EXPECT_EQ(cables(a.fabric), cables(b.fabric));
  ASSERT_EQ(b.findings.size(), 1u);
  EXPECT_EQ(b.findings[0].subject, "gpu06:eth1");
}

TEST(Lldp, CsvSpeedMakesASlowerDegradedLink) {
  fs::path dir = copy_fixture("twotier-json", "csv");
  std::ofstream(dir / "admin.csv")
      << "switch,port,peer,peer_port,speed\n# from the switch OS\nleaf01,swp5,spine01,swp1,1G\n";
  LldpFabric r = read_lldp_dir(dir);
  EXPECT_TRUE(cables(r.fabric).count("leaf01:5 <-> spine01:1 1GbE"));
  int degraded = 0;
  for (const Fault& fault : r.fabric.faults())
    if (fault.kind == FaultKind::DegradedLink) {
      ++degraded;
      EXPECT_EQ(fault.subject, "leaf01:5 <-> spine01:1");
    }
  EXPECT_EQ(degraded, 1);
  fs::remove_all(dir);
}

TEST(Lldp, PortSpeedOverrideWins) {
  LldpOptions o;
  o.port_speeds["spine02:swp1"] = LinkRate{LinkWidth::X1, LinkSpeed::Eth25G};
  LldpFabric r = read_lldp_dir(kDir / "twotier-json", o);
  EXPECT_TRUE(cables(r.fabric).count("leaf01:6 <-> spine02:1 25GbE"));
}

TEST(Lldp, FileOfNeighboursAloneIsNamedByItsNeighbours) {
  fs::path dir = copy_fixture("twotier-json", "bare");
  // Keep only the last document (`show neighbors details`) of gpu02's file.
  std::string text = slurp(dir / "gpu02.json");
  std::ofstream(dir / "gpu02.json") << text.substr(text.rfind("\n{") + 1);
  LldpFabric r = read_lldp_dir(dir);
  EXPECT_EQ(r.fabric.summary().hcas, 11);
  EXPECT_TRUE(cables(r.fabric).count("gpu02 eth1:1 <-> leaf01:4 10GbE"));
  fs::remove_all(dir);
}

TEST(Lldp, OneSidedCableAndPortClaimedTwice) {
  LldpSystemView leaf;
  leaf.name = "leaf01";
  leaf.caps = LldpCapabilities{.bridge = true};
  leaf.file = "leaf01.json";
  leaf.neighbours = {{{"leaf01", "swp1"}, {"gpu01", "eth0"}, std::nullopt, "leaf01.json:1"},
                     {{"leaf01", "swp2"}, {"gpu02", "eth0"}, std::nullopt, "leaf01.json:1"}};
  LldpSystemView a;  // agrees with the leaf
  a.name = "gpu01";
  a.file = "gpu01.json";
  a.ports = {"eth0"};
  a.neighbours = {{{"gpu01", "eth0"}, {"leaf01", "swp1"}, std::nullopt, "gpu01.json:1"}};
  LldpSystemView b;  // says it is on swp1 too; its real port swp2 it does not list
  b.name = "gpu02";
  b.file = "gpu02.json";
  b.ports = {"eth0", "eth1"};
  b.neighbours = {{{"gpu02", "eth1"}, {"leaf01", "swp1"}, std::nullopt, "gpu02.json:1"}};
  LldpFabric r = build_lldp_fabric({leaf, a, b}, {});
  std::map<LldpFindingKind, std::vector<std::string>> by_kind;
  for (const LldpFinding& f : r.findings) by_kind[f.kind].push_back(f.subject);
  EXPECT_EQ(by_kind[LldpFindingKind::PortClaimedTwice], std::vector<std::string>{"leaf01:swp1"});
  EXPECT_EQ(by_kind[LldpFindingKind::OneSidedCable], std::vector<std::string>{"gpu02:eth0"});
  EXPECT_TRUE(by_kind[LldpFindingKind::NicWithoutNeighbour].empty());
  // The confirmed cable is the one kept.
  EXPECT_TRUE(cables(r.fabric).count("gpu01 eth0:1 <-> leaf01:1 100GbE"));
  EXPECT_EQ(r.fabric.summary().hcas, 2);
}

TEST(Lldp, CollapsedSingleInterfaceAndUnnamedChassis) {
  // `-f json` with one interface: an object, not a list; a neighbour that
  // advertises no system name is known by its chassis id.
  std::string text = R"({"local-chassis": {"chassis": {"leaf09": {"id": {"type": "mac", "value": "aa"},
      "capability": {"type": "Bridge", "enabled": true}}}}}
{"lldp": {"interface": {"swp3": {"via": "LLDP", "chassis": {"id": {"type": "mac", "value": "02:00:00:00:00:01"}},
      "port": {"id": {"type": "ifname", "value": "ens1f1np1"}, "descr": "uplink 200G"}}}}})";
  LldpSystemView v = parse_lldpcli_json(text, "leaf09.json");
  EXPECT_EQ(v.name, "leaf09");
  EXPECT_EQ(v.caps, std::optional(LldpCapabilities{.bridge = true}));
  ASSERT_EQ(v.neighbours.size(), 1u);
  EXPECT_EQ(v.neighbours[0].local, (LldpPort{"leaf09", "swp3"}));
  EXPECT_EQ(v.neighbours[0].remote, (LldpPort{"02:00:00:00:00:01", "ens1f1np1"}));
  EXPECT_EQ(v.neighbours[0].rate, (LinkRate{LinkWidth::X1, LinkSpeed::Eth200G}));
  EXPECT_TRUE(parse_lldpcli_json(R"({"lldp":{}})", "empty.json").neighbours.empty());
}

TEST(Lldp, MauTypes) {
  EXPECT_EQ(parse_mau_rate("10GbaseT - Four-pair Category 6A"), (LinkRate{LinkWidth::X1, LinkSpeed::Eth10G}));
  EXPECT_EQ(parse_mau_rate("100GbaseCR4"), (LinkRate{LinkWidth::X1, LinkSpeed::Eth100G}));
  EXPECT_EQ(parse_mau_rate("25GbaseCR"), (LinkRate{LinkWidth::X1, LinkSpeed::Eth25G}));
  EXPECT_EQ(parse_mau_rate("10GigBaseLR"), (LinkRate{LinkWidth::X1, LinkSpeed::Eth10G}));
  EXPECT_EQ(parse_mau_rate("1000BaseTFD"), (LinkRate{LinkWidth::X1, LinkSpeed::Eth1G}));
  EXPECT_EQ(parse_mau_rate("100BaseTXFD"), std::nullopt);
  EXPECT_EQ(parse_mau_rate("unknown"), std::nullopt);
}

TEST(Lldp, BadInputNamesFileLineAndField) {
  try {
    parse_lldpcli_json("{\"lldp\": {}}\n{\"lldp\": {\n  \"interface\": [ }\n", "h.json");
    FAIL() << "expected ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), "h.json");
    EXPECT_EQ(e.line(), 3);
  }
  try {
    parse_lldpcli_json(R"({"something": 1})", "x.json");
    FAIL() << "expected ParseError";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("lldpcli"), std::string::npos);
  }
  try {
    parse_lldpcli_json(R"({"lldp": {"interface": {"eth0": {"via": "LLDP", "chassis": {"s1": {}}}}}})", "y.json");
    FAIL() << "expected ParseError";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("interface eth0"), std::string::npos) << e.what();
  }
  // A number past a double's range is the parser's out_of_range, not its
  // parse_error: it escaped the reader (found by fuzzing).
  try {
    parse_lldpcli_json("{\"lldp\": {}}\n{\n  \"local-chassis\":\n 8888888888E888\n}\n", "n.json");
    FAIL() << "expected ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), "n.json");
    EXPECT_EQ(e.line(), 4);
    EXPECT_NE(std::string(e.what()).find("number overflow"), std::string::npos) << e.what();
  }
  std::istringstream short_line("leaf01,swp1,gpu01,eth0,100G\nleaf01,swp2,gpu02\n");
  try {
    parse_lldp_csv(short_line, "t.csv");
    FAIL() << "expected ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 2);
  }
  // A Mb/s figure past a long escaped std::stol as out_of_range (found by fuzzing).
  for (const char* speed : {"fast", "1010066666666666666666666666666Mb/s"}) {
    std::istringstream bad_speed(std::string("leaf01,swp1,gpu01,eth0,") + speed + "\n");
    try {
      parse_lldp_csv(bad_speed, "t.csv");
      FAIL() << "expected ParseError";
    } catch (const ParseError& e) {
      EXPECT_EQ(e.line(), 1);
      EXPECT_NE(std::string(e.what()).find("field speed"), std::string::npos);
    }
  }
  std::istringstream mbps("leaf01,swp1,gpu01,eth0,400000\n");
  EXPECT_EQ(parse_lldp_csv(mbps, "t.csv")[0].rate, (LinkRate{LinkWidth::X1, LinkSpeed::Eth400G}));
}

TEST(Lldp, CsvOnlyFabric) {
  std::istringstream in(
      "leaf1,Ethernet0,gpu1,ens1f0np0,400G\nleaf1,Ethernet4,gpu2,ens1f0np0,400G\n"
      "leaf1,Ethernet8,spine1,Ethernet0,400G\nleaf2,Ethernet0,gpu3,ens1f0np0,400G\n"
      "leaf2,Ethernet8,spine1,Ethernet4,400G\nspine1,Ethernet0,leaf1,Ethernet8,400G\n"
      "spine1,Ethernet4,leaf2,Ethernet8,400G\n");
  LldpFabric r = build_lldp_fabric({}, parse_lldp_csv(in, "sonic.csv"));
  EXPECT_EQ(r.fabric.summary().hosts, 3);
  EXPECT_EQ(r.fabric.summary().leaves, 2);
  EXPECT_EQ(r.fabric.summary().spines, 1);
  // Ethernet0 has no non-zero trailing number: ports in natural order.
  EXPECT_TRUE(cables(r.fabric).count("leaf1:3 <-> spine1:1 400GbE"));
  EXPECT_TRUE(r.findings.empty());
}

}  // namespace
}  // namespace topo
