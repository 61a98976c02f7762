// RoCE discovery from real lldpd in network namespaces.
//
// LldpRailNamespaces: `tests/system/lldp_fabric.sh --rail SEED` builds a
// rail-optimized fabric (16 hosts with two RoCE NICs and a management NIC,
// stations, IP-forwarding and Docker hosts; 4 leaves; 2 spines with one
// uplink missing; an out-of-band management switch), host slots shuffled by
// SEED (TOPO_LLDP_SEED, else random; printed), and collects on every system
// exactly what docs/routing.md tells admins to: `lldpcli -f json show
// neighbors details`. The tests read those files under names that say
// nothing, with switch tables missing, mixed with `show chassis` files, and
// through topoctl discover, lint and export --slurm-topology.
//
// LldpNamespaces: tests/system/lldp_fabric.sh builds a two-tier fabric (3 leaves, 2 spines,
// 6 hosts with two ports each) as one namespace per host and per switch
// cabled with veth pairs, runs one lldpd per namespace, waits until LLDP has
// converged, writes every system's lldpcli JSON into a directory and stops
// everything it started (its own trap). The fabric has a missing uplink
// (leaf03 to spine02) and a host port with no neighbour (gpu06 eth1).
// This test reads that directory, through the library and through
// `topoctl discover --lldp` and `topoctl lint --lldp`, and checks the fabric.
//
// veth ports cannot be given a speed (every one advertises 10GBASE-T), so
// the slower link is injected as an admin's CSV row next to the JSON files
// (leaf01 swp5 to spine01 at 1G), which is how a switch OS without lldpd
// would report it.
//
// Skips (with the reason) when not root or when lldpd is not installed.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/hostlist.h"
#include "discovery/lldp.h"
#include "fabric/classify.h"
#include "tests/support/lldp_rail.h"
#include "tests/support/temp_dir.h"
#include "tests/support/topoctl_run.h"

namespace topo {
namespace {

namespace fs = std::filesystem;

const fs::path kScript = fs::path(TOPO_FIXTURES) / ".." / "system" / "lldp_fabric.sh";

std::set<std::string> cables(const Fabric& f) {
  std::set<std::string> out;
  for (LinkId e : f.cables()) out.insert(describe_link(f, e) + " " + f.link(e).rate.str());
  return out;
}

class LldpNamespaces : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::path(::testing::TempDir()) / fmt::format("lldp_collected_{}", getpid());
    fs::remove_all(dir_);
    int status = std::system(fmt::format("bash {} {} json", kScript.string(), dir_.string()).c_str());
    code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root for ip netns and veth pairs";
    if (code_ == 77) GTEST_SKIP() << "lldpd is not installed (apt-get install lldpd)";
    ASSERT_EQ(code_, 0) << "lldp_fabric.sh failed";
  }

  static inline fs::path dir_;
  static inline int code_ = -1;
};

TEST_F(LldpNamespaces, DiscoversTheTwoTierFabric) {
  LldpFabric r = read_lldp_dir(dir_);
  const Fabric& f = r.fabric;
  EXPECT_EQ(f.summary().hosts, 6);
  EXPECT_EQ(f.summary().hcas, 11);
  EXPECT_EQ(f.summary().leaves, 3);
  EXPECT_EQ(f.summary().spines, 2);
  EXPECT_EQ(f.summary().links, 16);
  std::set<std::string> c = cables(f);
  for (int l = 1; l <= 3; ++l)
    for (int h = 0; h < 2; ++h)
      for (int p = 0; p < 2; ++p) {
        if (l == 3 && h == 1 && p == 1) continue;  // gpu06 eth1: leaf03 swp4 is down
        EXPECT_TRUE(c.count(fmt::format("gpu{:02} eth{}:1 <-> leaf{:02}:{} 10GbE", 2 * l - 1 + h, p, l, 2 * h + p + 1)))
            << "host cable of leaf" << l;
      }
  for (int l = 1; l <= 3; ++l) EXPECT_TRUE(c.count(fmt::format("leaf{:02}:5 <-> spine01:{} 10GbE", l, l)));
  EXPECT_TRUE(c.count("leaf01:6 <-> spine02:1 10GbE"));
  EXPECT_TRUE(c.count("leaf02:6 <-> spine02:2 10GbE"));
  std::set<std::string> faults;
  for (const Fault& fault : f.faults()) faults.insert(std::string(name(fault.kind)) + " " + fault.subject);
  EXPECT_TRUE(faults.count("missing_uplinks leaf03")) << fmt::format("{}", fmt::join(faults, "; "));
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].subject, "gpu06:eth1");
  // The committed fixture was collected the same way: same fabric.
  EXPECT_EQ(c, cables(read_lldp_dir(fs::path(TOPO_FIXTURES) / "lldp" / "twotier-json").fabric));
}

TEST_F(LldpNamespaces, SlowerLinkFromCsvIsDegraded) {
  fs::path dir = dir_.string() + "_csv";
  fs::remove_all(dir);
  fs::copy(dir_, dir);
  std::ofstream(dir / "leaf01-admin.csv") << "switch,port,peer,peer_port,speed\nleaf01,swp5,spine01,swp1,1G\n";
  LldpFabric r = read_lldp_dir(dir);
  EXPECT_TRUE(cables(r.fabric).count("leaf01:5 <-> spine01:1 1GbE"));
  std::set<std::string> degraded;
  for (const Fault& fault : r.fabric.faults())
    if (fault.kind == FaultKind::DegradedLink) degraded.insert(fault.subject);
  EXPECT_EQ(degraded, std::set<std::string>{"leaf01:5 <-> spine01:1"});
  fs::remove_all(dir);
}

TEST_F(LldpNamespaces, TopoctlDiscoverAndLint) {
  std::string db = (dir_.string() + ".db");
  auto discovered = testing::run_topoctl(fmt::format("discover --lldp {} --db {} --json", dir_.string(), db));
  ASSERT_EQ(discovered.code, 0) << discovered.err;
  auto doc = nlohmann::json::parse(discovered.out);
  EXPECT_EQ(doc["hosts"], 6) << discovered.out.substr(0, 400);
  EXPECT_EQ(doc["lldp_findings"].size(), 1u);
  auto shown = testing::run_topoctl(fmt::format("show --db {}", db));
  EXPECT_EQ(shown.code, 0) << shown.err;
  auto lint = testing::run_topoctl(fmt::format("lint --lldp {} --json", dir_.string()));
  EXPECT_EQ(lint.code, 1) << lint.err;
  auto ldoc = nlohmann::json::parse(lint.out);
  EXPECT_EQ(ldoc["lldp_findings"][0]["kind"], "nic_without_neighbour");
  fs::remove(db);
}

class LldpRailNamespaces : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* env = std::getenv("TOPO_LLDP_SEED");
    seed_ = env ? static_cast<unsigned>(std::strtoul(env, nullptr, 10)) : std::random_device{}() % 100000;
    dir_ = fs::path(::testing::TempDir()) / fmt::format("lldp_rail_{}", getpid());
    fs::remove_all(dir_);
    int status = std::system(fmt::format("bash {} --rail {} {}", kScript.string(), seed_, dir_.string()).c_str());
    code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root for ip netns and veth pairs";
    if (code_ == 77) GTEST_SKIP() << "lldpd is not installed (apt-get install lldpd)";
    ASSERT_EQ(code_, 0) << "lldp_fabric.sh --rail " << seed_ << " failed";
    RecordProperty("seed", static_cast<int>(seed_));
    std::cerr << "lldp rail fabric: seed " << seed_ << " (TOPO_LLDP_SEED=" << seed_ << " repeats it)\n";
  }

  static testing::HostLeaves slots() { return testing::rail_slots(dir_ / "slots.txt"); }

  // Every test's expectations of the whole fabric.
  static void expect_rail_fabric(const LldpFabric& r) {
    const Fabric& f = r.fabric;
    EXPECT_EQ(f.summary().hosts, 16);
    EXPECT_EQ(f.summary().hcas, 32);
    EXPECT_EQ(f.summary().leaves, 4);
    EXPECT_EQ(f.summary().spines, 2);
    EXPECT_EQ(f.summary().rails, 2);
    EXPECT_TRUE(f.summary().rail_optimized);
    EXPECT_EQ(r.out_of_band, std::vector<std::string>{"mgmt01"});
    EXPECT_EQ(testing::host_leaves(f), slots());
  }

  static inline fs::path dir_;
  static inline unsigned seed_ = 0;
  static inline int code_ = -1;
};

TEST_F(LldpRailNamespaces, NeighbourTablesAloneUnderAnyNames) {
  testing::TempDir renamed("lldp-rail-renamed");
  testing::copy_renamed(dir_ / "neighbours", renamed.path(), seed_);
  LldpFabric r = read_lldp_dir(renamed.path());
  expect_rail_fabric(r);
  EXPECT_TRUE(r.findings.empty()) << r.findings.front().subject << ": " << r.findings.front().detail;
  bool missing = false;
  for (const Fault& fault : r.fabric.faults()) missing |= fault.kind == FaultKind::MissingUplinks;
  EXPECT_TRUE(missing);
  // The committed fixture was collected the same way (seed 7): the same
  // fabric but for where the hosts sit.
  LldpFabric fixture = read_lldp_dir(fs::path(TOPO_FIXTURES) / "lldp" / "rail" / "neighbours");
  EXPECT_EQ(fixture.fabric.summary().links, r.fabric.summary().links);
}

TEST_F(LldpRailNamespaces, TopoctlDiscoverLintAndExport) {
  testing::TempDir work("lldp-rail-topoctl");
  fs::path files = work.path() / "lldp", db = work.path() / "topo.db";
  testing::copy_renamed(dir_ / "neighbours", files, seed_ + 1);
  auto discovered = testing::run_topoctl(fmt::format("discover --lldp {} --db {} --json", files.string(), db.string()));
  ASSERT_EQ(discovered.code, 0) << discovered.err;
  auto doc = nlohmann::json::parse(discovered.out);
  EXPECT_EQ(doc["hosts"], 16) << discovered.out.substr(0, 400);
  EXPECT_TRUE(doc["lldp_findings"].empty());
  auto lint = testing::run_topoctl(fmt::format("lint --lldp {} --json", files.string()));
  EXPECT_EQ(lint.code, 1) << lint.err;
  std::set<std::string> faults;
  auto ldoc = nlohmann::json::parse(lint.out);
  for (const auto& fault : ldoc["faults"])
    faults.insert(fault["kind"].get<std::string>() + " " + fault["subject"].get<std::string>());
  EXPECT_EQ(faults, std::set<std::string>{"missing_uplinks leaf04"}) << lint.out.substr(0, 800);
  auto note = testing::run_topoctl(fmt::format("lint --lldp {}", files.string()));
  EXPECT_NE(note.out.find("left out 1 out-of-band switch (mgmt01)"), std::string::npos) << note.out;
  auto conf = testing::run_topoctl(fmt::format("export --slurm-topology --db {}", db.string()));
  ASSERT_EQ(conf.code, 0) << conf.err;
  auto expand = [](const std::string& list) { return expand_hostlist(list); };
  EXPECT_EQ(testing::topology_conf_leaves(conf.out, expand), testing::rail0_leaves(dir_ / "slots.txt")) << conf.out;
}

TEST_F(LldpRailNamespaces, SwitchTablesMissing) {
  testing::TempDir files("lldp-rail-missing");
  testing::copy_renamed(dir_ / "neighbours", files.path(), seed_ + 2, {"leaf03", "spine01"});
  LldpFabric r = read_lldp_dir(files.path());
  expect_rail_fabric(r);
  EXPECT_TRUE(r.findings.empty()) << r.findings.front().subject << ": " << r.findings.front().detail;
}

TEST_F(LldpRailNamespaces, UnplacedFilesAreNamedAndTheRestStored) {
  // The leaves of slots 9-16 and the management switch without tables:
  // those hosts' files cannot be placed.
  testing::TempDir work("lldp-rail-unplaced");
  fs::path files = work.path() / "lldp", db = work.path() / "topo.db";
  auto names = testing::copy_renamed(dir_ / "neighbours", files, seed_ + 3, {"leaf03", "leaf04", "mgmt01"});
  auto discovered = testing::run_topoctl(fmt::format("discover --lldp {} --db {} --json", files.string(), db.string()));
  EXPECT_EQ(discovered.code, 1) << discovered.err;
  auto doc = nlohmann::json::parse(discovered.out);
  EXPECT_EQ(doc["hosts"], 8);
  std::set<std::string> unplaced, expected;
  for (const auto& f : doc["lldp_findings"]) {
    EXPECT_EQ(f["kind"], "unplaced_file");
    unplaced.insert(names.at(fs::path(f["subject"].get<std::string>()).filename().string()));
  }
  for (const auto& [host, leaves] : slots())
    if (leaves.count("leaf03")) expected.insert(host);
  EXPECT_EQ(unplaced, expected);
  auto shown = testing::run_topoctl(fmt::format("show --db {}", db.string()));
  EXPECT_EQ(shown.code, 0) << shown.err;
  auto lint = testing::run_topoctl(fmt::format("lint --lldp {}", files.string()));
  EXPECT_EQ(lint.code, 1);
  EXPECT_NE(lint.out.find("unplaced_file"), std::string::npos) << lint.out;
}

TEST_F(LldpRailNamespaces, ChassisFilesMixIn) {
  testing::TempDir files("lldp-rail-mixed");
  auto names = testing::copy_renamed(dir_ / "neighbours", files.path(), seed_ + 4);
  int i = 0;
  for (const auto& [file, system] : names)
    if (++i % 3 == 0) fs::copy_file(dir_ / "chassis" / (system + ".json"), files.path() / ("chassis-" + file));
  LldpFabric r = read_lldp_dir(files.path());
  expect_rail_fabric(r);
  EXPECT_TRUE(r.findings.empty());
}

}  // namespace
}  // namespace topo
