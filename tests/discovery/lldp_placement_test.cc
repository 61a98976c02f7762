// Neighbour tables alone: placing each file, kinds, the management network.
//
// fixtures/lldp/rail was collected by `tests/system/lldp_fabric.sh --rail 7`
// from real lldpd in network namespaces: 16 hosts with two RoCE NICs
// (ens1f0np0 on leaf01 or leaf03, ens1f1np1 on leaf02 or leaf04, slots as in
// slots.txt) and a management NIC eno1 on mgmt01, two spines, leaf04 without
// its uplink to spine02. gpu03, 06, 09, ... run Docker (Bridge and Router
// advertised), gpu01, 04, 07, ... forward IP (Router), the rest are
// stations; switches advertise Bridge and Router and name their ports.
// neighbours/ holds each system's `lldpcli -f json show neighbors details`,
// chassis/ its `show chassis`.
#include "discovery/lldp_placement.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "common/hostlist.h"
#include "discovery/lldp.h"
#include "discovery/slurm_topology.h"
#include "fabric/classify.h"
#include "tests/support/lldp_rail.h"
#include "tests/support/temp_dir.h"

namespace topo {
namespace {

namespace fs = std::filesystem;
const fs::path kRail = fs::path(TOPO_FIXTURES) / "lldp" / "rail";

std::set<std::string> cables(const Fabric& f) {
  std::set<std::string> out;
  for (LinkId e : f.cables()) out.insert(describe_link(f, e) + " " + f.link(e).rate.str());
  return out;
}

std::vector<std::string> subjects(const LldpFabric& r, LldpFindingKind kind) {
  std::vector<std::string> out;
  for (const LldpFinding& f : r.findings)
    if (f.kind == kind) out.push_back(f.subject);
  return out;
}

bool has_fault(const Fabric& f, FaultKind kind, std::string_view subject) {
  for (const Fault& fault : f.faults())
    if (fault.kind == kind && fault.subject == subject) return true;
  return false;
}

// The whole rail fabric, as every test here expects it.
void expect_rail_fabric(const LldpFabric& r) {
  const Fabric& f = r.fabric;
  EXPECT_EQ(f.summary().hosts, 16);
  EXPECT_EQ(f.summary().hcas, 32);  // the management NICs are not in the fabric
  EXPECT_EQ(f.summary().leaves, 4);
  EXPECT_EQ(f.summary().spines, 2);
  EXPECT_EQ(f.summary().rails, 2);
  EXPECT_TRUE(f.summary().rail_optimized);
  EXPECT_EQ(r.out_of_band, std::vector<std::string>{"mgmt01"});
  EXPECT_TRUE(has_fault(f, FaultKind::MissingUplinks, "leaf04"));
  EXPECT_EQ(testing::host_leaves(f), testing::rail_slots(kRail / "slots.txt"));
}

TEST(LldpPlacement, NeighbourTablesAloneMakeTheRailFabric) {
  LldpFabric r = read_lldp_dir(kRail / "neighbours");
  expect_rail_fabric(r);
  EXPECT_TRUE(r.findings.empty()) << r.findings.front().subject << ": " << r.findings.front().detail;
  EXPECT_TRUE(cables(r.fabric).count("leaf01:9 <-> spine01:1 10GbE"));
  EXPECT_TRUE(cables(r.fabric).count("leaf03:10 <-> spine02:3 10GbE"));
}

TEST(LldpPlacement, FileNamesSayNothing) {
  testing::TempDir dir("lldp-renamed");
  testing::copy_renamed(kRail / "neighbours", dir.path(), 11);
  LldpFabric r = read_lldp_dir(dir.path());
  expect_rail_fabric(r);
  EXPECT_EQ(cables(r.fabric), cables(read_lldp_dir(kRail / "neighbours").fabric));
}

TEST(LldpPlacement, SwitchTablesMissing) {
  // Without leaf01's and spine02's tables every file is still placed: the
  // hosts of leaf01 through their rail-1 leaf and mgmt01, the leaves
  // through spine01; the cables they alone saw are seen from the other end.
  testing::TempDir dir("lldp-missing");
  testing::copy_renamed(kRail / "neighbours", dir.path(), 12, {"leaf01", "spine02"});
  LldpFabric r = read_lldp_dir(dir.path());
  expect_rail_fabric(r);
  EXPECT_TRUE(r.findings.empty()) << r.findings.front().subject << ": " << r.findings.front().detail;
}

TEST(LldpPlacement, UnplacedFilesAreReportedAndTheRestBuilt) {
  // Both leaves of the first eight slots and the management switch gone:
  // nothing names those hosts' files. They are reported by name, the
  // second half of the fabric is built.
  testing::TempDir dir("lldp-unplaced");
  auto names = testing::copy_renamed(kRail / "neighbours", dir.path(), 13, {"leaf01", "leaf02", "mgmt01"});
  LldpFabric r = read_lldp_dir(dir.path());
  std::set<std::string> unplaced, expected;
  for (const std::string& file : subjects(r, LldpFindingKind::UnplacedFile))
    unplaced.insert(names.at(fs::path(file).filename().string()));
  for (const auto& [host, leaves] : testing::rail_slots(kRail / "slots.txt"))
    if (leaves.count("leaf01")) expected.insert(host);
  EXPECT_EQ(unplaced, expected);
  for (const LldpFinding& f : r.findings)
    EXPECT_NE(f.detail.find("tables of the switches it is cabled to are missing"), std::string::npos) << f.detail;
  EXPECT_EQ(r.fabric.summary().hosts, 8);
  for (const auto& [host, leaves] : testing::host_leaves(r.fabric))
    EXPECT_EQ(leaves, (std::set<std::string>{"leaf03", "leaf04"})) << host;
}

TEST(LldpPlacement, ChassisFilesMixIn) {
  // Half the systems with `show chassis` before their neighbours, in files
  // of their own or concatenated, the rest neighbours alone.
  testing::TempDir dir("lldp-mixed");
  int i = 0;
  for (const auto& e : fs::directory_iterator(kRail / "neighbours")) {
    std::string system = e.path().stem().string();
    fs::copy_file(e.path(), dir.path() / (system + ".json"));
    if (++i % 2) continue;
    if (i % 4)
      fs::copy_file(kRail / "chassis" / (system + ".json"), dir.path() / (system + "-chassis.json"));
    else {
      std::ifstream chassis(kRail / "chassis" / (system + ".json")), neighbours(e.path());
      std::ofstream(dir.path() / (system + ".json")) << chassis.rdbuf() << neighbours.rdbuf();
    }
  }
  LldpFabric r = read_lldp_dir(dir.path());
  expect_rail_fabric(r);
  EXPECT_TRUE(r.findings.empty());
}

TEST(LldpPlacement, ForwardingAndDockerHostsAreHosts) {
  LldpFabric r = read_lldp_dir(kRail / "neighbours");
  // gpu03: Docker (Bridge, Router); gpu04: IP forwarding (Router); gpu05: a station.
  for (const char* host : {"gpu03", "gpu04", "gpu05"}) EXPECT_TRUE(r.fabric.find_host(host)) << host;
}

TEST(LldpPlacement, KindsFromCapabilitiesAndPortIds) {
  // A router naming its ports (an L3 switch OS) is a switch; one whose
  // ports are MACs (lldpd on a forwarding Linux host) is a host; what a
  // station is cabled to is a switch whatever it advertises.
  auto row = [](std::string a, std::string pa, std::string b, std::string pb, bool by_mac) {
    return LldpSighting{{a, pa}, {b, pb}, std::nullopt, a + ".json:1", by_mac};
  };
  LldpSystemView spine{.name = "spine1", .caps = LldpCapabilities{.router = true}, .file = "spine1.json"};
  spine.neighbours = {row("spine1", "Ethernet1", "leaf1", "Ethernet9", false)};
  LldpSystemView leaf{.name = "leaf1", .caps = LldpCapabilities{.bridge = true, .router = true}, .file = "leaf1.json"};
  leaf.neighbours = {row("leaf1", "Ethernet9", "spine1", "Ethernet1", false),
                     row("leaf1", "Ethernet1", "gpu1", "eth0", true), row("leaf1", "Ethernet2", "gpu2", "eth0", true)};
  leaf.peer_caps = {{"spine1", {.router = true}}, {"gpu1", {.bridge = true, .router = true}}, {"gpu2", {}}};
  LldpSystemView gpu1{.name = "gpu1", .caps = LldpCapabilities{.bridge = true, .router = true}, .file = "gpu1.json"};
  gpu1.neighbours = {row("gpu1", "eth0", "leaf1", "Ethernet1", false)};
  LldpFabric r = build_lldp_fabric({spine, leaf, gpu1}, {});
  EXPECT_EQ(r.fabric.summary().hosts, 2);
  EXPECT_EQ(r.fabric.summary().leaves, 1);
  EXPECT_EQ(r.fabric.summary().spines, 1);
  EXPECT_TRUE(r.fabric.find_host("gpu1"));
}

TEST(LldpPlacement, FixedPointThroughChainsOfFiles) {
  // No chassis anywhere: the spine's file places itself (its port pairs are
  // unique), then the leaf's, then the hosts' from the leaf's.
  auto row = [](std::string pa, std::string b, std::string pb) {
    return LldpSighting{{"", pa}, {b, pb}, std::nullopt, "x:1", false};
  };
  std::vector<LldpSystemView> views(5);
  views[0].file = "a.json";  // spine1
  views[0].neighbours = {row("swp1", "leaf1", "swp9"), row("swp2", "leaf2", "swp9")};
  views[1].file = "b.json";  // leaf1
  views[1].neighbours = {row("swp9", "spine1", "swp1"), row("swp1", "gpu1", "eth0"), row("swp2", "gpu2", "eth0")};
  views[2].file = "c.json";  // leaf2
  views[2].neighbours = {row("swp9", "spine1", "swp2"), row("swp1", "gpu3", "eth0")};
  views[3].file = "d.json";  // gpu1
  views[3].neighbours = {row("eth0", "leaf1", "swp1")};
  views[4].file = "e.json";  // gpu3
  views[4].neighbours = {row("eth0", "leaf2", "swp1")};
  EXPECT_TRUE(place_views(views).empty());
  std::vector<std::string> names;
  for (const LldpSystemView& v : views) names.push_back(v.name);
  EXPECT_EQ(names, (std::vector<std::string>{"spine1", "leaf1", "leaf2", "gpu1", "gpu3"}));
  EXPECT_EQ(views[3].neighbours[0].local, (LldpPort{"gpu1", "eth0"}));
}

TEST(LldpPlacement, SymmetricFilesStayUnplaced) {
  // Two hosts on two leaves, the same ports everywhere, no spine: the
  // files fit either way, so none is placed by guessing.
  auto row = [](std::string pa, std::string b, std::string pb) {
    return LldpSighting{{"", pa}, {b, pb}, std::nullopt, "x:1", false};
  };
  std::vector<LldpSystemView> views(4);
  views[0].file = "a.json";
  views[0].neighbours = {row("swp1", "gpu1", "eth0")};
  views[1].file = "b.json";
  views[1].neighbours = {row("swp1", "gpu2", "eth0")};
  views[2].file = "c.json";
  views[2].neighbours = {row("eth0", "leaf1", "swp1")};
  views[3].file = "d.json";
  views[3].neighbours = {row("eth0", "leaf2", "swp1")};
  std::vector<LldpFinding> findings = place_views(views);
  ASSERT_EQ(findings.size(), 4u);
  EXPECT_EQ(findings[0].kind, LldpFindingKind::UnplacedFile);
  EXPECT_EQ(findings[0].subject, "a.json");
  EXPECT_NE(findings[0].detail.find("fit 2 systems (leaf1, leaf2)"), std::string::npos) << findings[0].detail;
  EXPECT_TRUE(views.empty());
}

TEST(LldpPlacement, SlurmTopologyPutsEveryHostUnderItsLeaves) {
  // topology.conf lists a host under the leaf of its rail-0 NIC only
  // (slurm_topology.h): leaf01 or leaf03 here.
  LldpFabric r = read_lldp_dir(kRail / "neighbours");
  std::ostringstream conf;
  write_slurm_topology(r.fabric, conf);
  auto expand = [](const std::string& list) { return expand_hostlist(list); };
  EXPECT_EQ(testing::topology_conf_leaves(conf.str(), expand), testing::rail0_leaves(kRail / "slots.txt"))
      << conf.str();
  EXPECT_EQ(conf.str().find("mgmt01"), std::string::npos);
}

}  // namespace
}  // namespace topo
