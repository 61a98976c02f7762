// The page at a glance, as a person sees it in headless Chromium: a
// 512-host synthetic fabric (a second snapshot with a degraded cable, so
// the snapshot card has a change to show), placement records of running
// jobs (some estimated slower than 1.10x, one fallen back to cons_tres),
// three port counter collections with one cable's errors climbing;
// `topoctl serve` on a free loopback port. tests/system/page_browser.py
// drives Chromium over the DevTools protocol at 1280x800 and 1920x1080
// (no sideways scroll, every card's link answers and opens its page, the
// jobs table sorts with and without scripting and shows a job's deferral,
// the health table lists the sick first, a Down cable is drawn dotted red
// and listed) and keeps its screenshots under
// build/.../tests/page_glance/<test>/. Every page's HTML is then checked by
// the Nu Html Checker (vnu.jar, npm's vnu-jar, run by Java 17: both from
// scripts/install-deps.sh). A 64-leaf fabric is checked for sideways
// scroll too, and a GB200-like one for its NVLink domains.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "db/health_store.h"
#include "db/placement_store.h"
#include "db/snapshot_store.h"
#include "tests/support/serve_process.h"
#include "tests/support/topoctl_run.h"

namespace topo {
namespace {

namespace fs = std::filesystem;
using testing::Ran;

std::string quote(const std::string& s) { return "'" + s + "'"; }
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Where scripts/install-deps.sh puts the Nu Html Checker; TOPO_VNU_JAR names another.
std::string vnu_jar() {
  const char* env = std::getenv("TOPO_VNU_JAR");
  return env ? env : "/usr/local/lib/topo-aware/node_modules/vnu-jar/build/dist/vnu.jar";
}

class PageGlance : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(TOPOCTL_PATH).parent_path().parent_path() / "tests" / "page_glance" /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "topo.db").string();
    ASSERT_EQ(testing::run_command("command -v chromium").code, 0)
        << "chromium is not installed (scripts/install-deps.sh)";
  }

  void discover(const std::string& spec) {
    Ran r = testing::run_topoctl(fmt::format("discover --db {} --synthetic {}", quote(db_), spec));
    ASSERT_EQ(r.code, 0) << r.err;
  }

  // page_browser.py's checks against `server`; its report in the log.
  Ran browse(const testing::ServeProcess& server, const std::string& checks) {
    return testing::run_command(
        fmt::format("timeout 600 /usr/bin/python3 {}/../system/page_browser.py --base {} --out {} "
                    "--checks {}",
                    TOPO_FIXTURES, quote(server.url("")), quote(dir_.string()), checks));
  }

  fs::path dir_;
  std::string db_;
};

// What the engine told Slurm while it held job 104 back.
constexpr const char* kDeferredWhy =
    "deferred: its best placement now is estimated at 1.40x its ideal, more than DeferAbove=1.1 times its best on "
    "the idle fabric (1.00x); deferred for 600 s of 1800 (DeferShare=0.5 of a time limit of 3600 s)";

std::string fetch(const testing::ServeProcess& server, const std::string& path) {
  return testing::run_command(
             fmt::format(
                 "/usr/bin/python3 -c \"import urllib.request; print(urllib.request.urlopen('{}').read().decode())\"",
                 server.url(path)))
      .out;
}

// Jobs across leaves of snapshot `snapshot`, with their estimates over ideal
// (job 104 held back first).
void record_jobs(const std::string& db, int64_t snapshot) {
  PlacementStore store(db);
  struct Job {
    uint32_t id;
    std::vector<std::string> hosts;
    double slowdown;
    bool fallback;
  };
  const std::vector<Job> jobs = {
      {101, {"gpu001", "gpu002", "gpu003", "gpu004"}, 1.00, false},
      {102, {"gpu017", "gpu033", "gpu018", "gpu034"}, 1.25, false},
      {103, {"gpu049", "gpu050", "gpu065", "gpu066", "gpu081", "gpu082"}, 1.05, false},
      {104, {"gpu100", "gpu200", "gpu300", "gpu400"}, 1.40, false},
      {105, {"gpu500", "gpu501"}, 1.02, true},
  };
  for (const Job& j : jobs) {
    PlacementRecord r;
    r.job_id = j.id;
    r.snapshot_id = snapshot;
    r.hosts = j.hosts;
    r.ring_order = j.hosts;
    r.profile = "allreduce";
    r.ideal_s = 0.010;
    r.estimate_s = 0.010 * j.slowdown;
    r.reasons = {"placed for the page's test"};
    r.fallback = j.fallback;
    if (j.fallback) r.fallback_why = "no candidate within the partition";
    if (j.id == 104) r.deferred_why = kDeferredWhy;
    store.record(r);
  }
}

// Three collections a minute apart; the cable on leaf01's first uplink
// counts 60 symbol errors a minute, every other port none.
void record_counters(const std::string& db, int64_t snapshot) {
  Fabric f = SnapshotStore(db).load(snapshot);
  HealthStore store(db);
  const int64_t start_ms = 1'700'000'000'000;
  for (int i = 0; i < 3; ++i) {
    std::vector<PortSample> samples;
    for (LinkId e : f.cables()) {
      const Link& l = f.link(e);
      bool sick = f.node(l.end_a).name == "leaf01" && l.port_a == 17;
      sick |= f.node(l.end_b).name == "leaf01" && l.port_b == 17;
      for (auto [end, port] : {std::pair{l.end_a, l.port_a}, std::pair{l.end_b, l.port_b}}) {
        PortSample s{f.node(end).id, port, {}};
        s.counters.symbol_errors = sick ? 60u * static_cast<unsigned>(i) : 0;
        s.counters.xmit_data = 1000u * static_cast<unsigned>(i);
        samples.push_back(s);
      }
    }
    store.add(snapshot, samples, "test", {}, start_ms + 60'000 * i);
  }
}

TEST_F(PageGlance, FirstScreenOfFiveHundredTwelveHosts) {
  const std::string spec = "leafspine:leaves=32,hosts_per_leaf=16,spines=8";
  discover(spec);
  discover(spec + ",degrade=leaf07:17");
  int64_t snapshot = *SnapshotStore(db_).latest();
  record_jobs(db_, snapshot);
  record_counters(db_, snapshot);

  testing::ServeProcess server(TOPOCTL_PATH, {"--db", db_}, (dir_ / "serve.log").string());
  ASSERT_GT(server.port(), 0) << "topoctl serve printed no port";
  Ran checks = browse(server, "first-screen,jobs-sort,scripting-off");
  EXPECT_EQ(checks.code, 0) << checks.out << checks.err;
  for (const char* shot : {"first-screen-1280x800.png", "first-screen-1920x1080.png", "job-ring.png", "health.png"})
    EXPECT_TRUE(fs::exists(dir_ / shot) && fs::file_size(dir_ / shot) > 10000) << shot;
  EXPECT_TRUE(contains(checks.out, "1 change since snapshot 1") || contains(checks.out, "0 failed")) << checks.out;

  // What the cards say, in words (plurals right).
  Ran home = testing::run_command(
      fmt::format("/usr/bin/python3 -c \"import urllib.request; print(urllib.request.urlopen('{}').read().decode())\"",
                  server.url("/")));
  EXPECT_TRUE(contains(home.out, "512 hosts")) << home.out.substr(0, 3000);
  EXPECT_TRUE(contains(home.out, "4 jobs")) << "4 running topo-aware jobs (105 fell back)";
  EXPECT_TRUE(contains(home.out, "2 estimated slower than 1.10x"));
  EXPECT_TRUE(contains(home.out, "1 change since snapshot 1"));
  EXPECT_TRUE(contains(home.out, "1 pod,"));
  EXPECT_TRUE(contains(home.out, "1 sick"));
  EXPECT_FALSE(contains(home.out, "1 pods"));
  EXPECT_FALSE(contains(home.out, "1 faults"));
  // The deferral stored with job 104's placement, in its row and on its page.
  EXPECT_TRUE(contains(fetch(server, "/jobs"), kDeferredWhy));
  EXPECT_TRUE(contains(fetch(server, "/job/104"), kDeferredWhy));

  // Every page's HTML through the Nu Html Checker.
  ASSERT_TRUE(fs::exists(vnu_jar())) << vnu_jar() << " is missing (scripts/install-deps.sh installs npm's vnu-jar)";
  std::string files;
  int pages = 0;
  for (const char* path : {"/", "/fabric", "/fabric?leaf=leaf07", "/jobs", "/jobs?sort=slowdown&order=desc", "/job/102",
                           "/health", "/lint", "/snapshots", "/diff?from=1&to=2", "/reports"}) {
    fs::path file = dir_ / fmt::format("page-{}.html", ++pages);
    Ran got =
        testing::run_command(fmt::format("/usr/bin/python3 -c \"import sys, urllib.request; open(sys.argv[2], "
                                         "'wb').write(urllib.request.urlopen(sys.argv[1]).read())\" "
                                         "{} {}",
                                         quote(server.url(path)), quote(file.string())));
    ASSERT_EQ(got.code, 0) << path << got.err;
    files += " " + quote(file.string());
  }
  Ran valid = testing::run_command(fmt::format("java -jar {} --errors-only {} 2>&1", quote(vnu_jar()), files));
  EXPECT_EQ(valid.code, 0) << valid.out << valid.err;
  EXPECT_EQ(server.stop(), 0);
}

// A cable present but Down (synthetic down=): drawn as a dotted red line
// on the first screen and listed on /lint with its state.
TEST_F(PageGlance, ADownCableIsDrawnAndListed) {
  discover("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,down=leaf03:9");
  testing::ServeProcess server(TOPOCTL_PATH, {"--db", db_}, (dir_ / "serve.log").string());
  ASSERT_GT(server.port(), 0);
  Ran checks = browse(server, "down-cable");
  EXPECT_EQ(checks.code, 0) << checks.out << checks.err;
  EXPECT_TRUE(contains(checks.out, "ok   / draws 1 down cable line(s)")) << checks.out;
  EXPECT_TRUE(fs::exists(dir_ / "down-cable.png") && fs::file_size(dir_ / "down-cable.png") > 10000);
  EXPECT_TRUE(contains(fetch(server, "/"), "red dotted down (1)"));
  EXPECT_EQ(server.stop(), 0);
}

TEST_F(PageGlance, SixtyFourLeavesFitTheWindow) {
  discover("leafspine:leaves=64,hosts_per_leaf=16,spines=16,degrade=leaf40:17");
  testing::ServeProcess server(TOPOCTL_PATH, {"--db", db_}, (dir_ / "serve.log").string());
  ASSERT_GT(server.port(), 0);
  Ran checks = browse(server, "first-screen");
  EXPECT_EQ(checks.code, 0) << checks.out << checks.err;
  EXPECT_EQ(server.stop(), 0);
}

// A GB200-like cluster: the overview counts its domains, and the picture
// draws each rack as one box under its rail leaves.
TEST_F(PageGlance, NvlinkDomainsAreRacksUnderTheirLeaves) {
  discover("nvl72:racks=4");
  testing::ServeProcess server(TOPOCTL_PATH, {"--db", db_}, (dir_ / "serve.log").string());
  ASSERT_GT(server.port(), 0);
  Ran checks = browse(server, "first-screen");
  EXPECT_EQ(checks.code, 0) << checks.out << checks.err;
  Ran home = testing::run_command(
      fmt::format("/usr/bin/python3 -c \"import urllib.request; print(urllib.request.urlopen('{}').read().decode())\"",
                  server.url("/")));
  EXPECT_TRUE(contains(home.out, "id=\"card-domains\"")) << home.out.substr(0, 3000);
  EXPECT_TRUE(contains(home.out, "4 domains"));
  EXPECT_TRUE(contains(home.out, "288 GPUs: 288 free, 0 busy, 0 sick")) << "72 trays of 4 GPUs";
  size_t racks = 0;
  for (size_t at = home.out.find("class=\"node domain"); at != std::string::npos;
       at = home.out.find("class=\"node domain", at + 1))
    ++racks;
  EXPECT_EQ(racks, 4u);
  // Each rack's 18 hosts hang under the 4 rail leaves they are cabled to.
  EXPECT_TRUE(contains(home.out, "18 cables, ")) << "a bundle of 18 host cables from a leaf to its rack";
  EXPECT_EQ(server.stop(), 0);
}

}  // namespace
}  // namespace topo
