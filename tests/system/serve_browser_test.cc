// The read-only page as a person sees it: a database made by `topoctl
// discover` from a fixture with a degraded cable and a placed job (a
// placement record as the Slurm plugin writes it), `topoctl serve` on a free
// loopback port, its pages loaded in headless Chromium (the DOM checked for
// the leaves, the degraded cable and the job's ring; a screenshot kept in
// the build tree), /metrics read by the Prometheus client's own text-format
// parser, paths outside the routes refused, names escaped, and the page
// still answering while `topoctl discover` writes a new snapshot.
//
// Needs chromium and python3-prometheus-client (scripts/install-deps.sh),
// read by Debian's /usr/bin/python3 (a python3 earlier on PATH may lack it).
// Every process it starts is stopped and reaped, also on failure.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "db/placement_store.h"
#include "db/snapshot_store.h"
#include "tests/support/serve_process.h"
#include "tests/support/topoctl_run.h"

namespace topo {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using testing::Ran;

// Runs a shell command; what it printed to stderr is in `err`.
Ran sh(const std::string& cmd) { return testing::run_command(cmd); }

std::string quote(const std::string& s) { return "'" + s + "'"; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// `topoctl serve` on a free loopback port with the database and reports given.
class Server : public testing::ServeProcess {
 public:
  Server(const std::string& db, const fs::path& reports, const fs::path& log)
      : ServeProcess(TOPOCTL_PATH, {"--db", db, "--reports", reports.string()}, log.string()) {}
};

class ServeBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    // Under the build tree, beside topoctl: the screenshots are kept there.
    // One directory per test, so that each test's screenshots stay.
    dir_ = fs::path(TOPOCTL_PATH).parent_path().parent_path() / "tests" / "serve_browser" /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "topo.db").string();
  }
  // The screenshots stay; Chromium's profiles go.
  void TearDown() override {
    for (int i = 1; i <= runs_; ++i) fs::remove_all(dir_ / fmt::format("chromium-profile-{}", i));
  }

  // Chromium, headless as root, on a fresh profile; the page's DOM. With
  // `console`, its log (the page's console among it) follows the DOM.
  Ran chromium(const std::string& url, const std::string& extra = "--dump-dom", bool console = false) {
    fs::path profile = dir_ / fmt::format("chromium-profile-{}", ++runs_);
    return sh(fmt::format(
        "timeout 90 chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking "
        "--disable-component-update --disable-sync --disable-dev-shm-usage --user-data-dir={} {} {} {}",
        quote(profile.string()), console ? "--enable-logging=stderr --v=0 " + extra : extra, quote(url),
        console ? "2>&1" : "2>/dev/null"));
  }

  fs::path dir_;
  std::string db_;
  int runs_ = 0;
};

TEST_F(ServeBrowser, PagesShowLeavesADegradedCableAndAJobsRing) {
  ASSERT_EQ(sh("command -v chromium").code, 0) << "chromium is not installed (scripts/install-deps.sh)";
  ASSERT_EQ(sh("/usr/bin/python3 -c 'import prometheus_client'").code, 0)
      << "python3-prometheus-client is not installed";

  // The fixture: two leaves under one spine; leaf01's first uplink runs at 1x.
  Ran discover = sh(fmt::format("{} discover --db {} --ibnetdiscover {}/ibnetdiscover/two_leaves.ibnetdiscover",
                                TOPOCTL_PATH, quote(db_), TOPO_FIXTURES));
  ASSERT_EQ(discover.code, 0) << discover.out << discover.err;
  int64_t snapshot = *SnapshotStore(db_).latest();
  PlacementRecord job;
  job.job_id = 4242;
  job.snapshot_id = snapshot;
  job.hosts = {"gpu001", "gpu002", "gpu003", "gpu004"};
  job.ring_order = {"gpu001", "gpu003", "gpu002", "gpu004"};
  job.profile = "allreduce";
  job.estimate_s = 0.012;
  job.ideal_s = 0.010;
  job.reasons = {"two leaves, one spine", "a name to escape: <script>alert(1)</script>"};
  PlacementStore(db_).record(job);

  // A simulation report, as `topoctl simulate --output` and `topoctl report` write it.
  fs::path reports = dir_ / "reports";
  Ran simulate =
      sh(fmt::format("{} simulate --generate jobs=60,seed=4 --policies tree,topo-aware --synthetic "
                     "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2 --output {}",
                     TOPOCTL_PATH, quote((dir_ / "results.json").string())));
  ASSERT_EQ(simulate.code, 0) << simulate.err;
  Ran report = sh(fmt::format("{} report --results {} --out {}", TOPOCTL_PATH, quote((dir_ / "results.json").string()),
                              quote((reports / "small_run").string())));
  ASSERT_EQ(report.code, 0) << report.err;

  Server server(db_, reports, dir_ / "serve.log");
  ASSERT_GT(server.port(), 0) << "topoctl serve printed no port";

  // The whole fabric: both leaves, the spine, the degraded uplink.
  Ran home = chromium(server.url("/"));
  ASSERT_EQ(home.code, 0) << home.err;
  EXPECT_TRUE(contains(home.out, "class=\"node switch leaf\"")) << home.out.substr(0, 2000);
  EXPECT_TRUE(contains(home.out, ">leaf01<"));
  EXPECT_TRUE(contains(home.out, ">leaf02<"));
  EXPECT_TRUE(contains(home.out, "class=\"node switch spine\""));
  EXPECT_TRUE(contains(home.out, "class=\"edge cable degraded"));
  EXPECT_TRUE(contains(home.out, "1xNDR")) << "the degraded cable's rate is in its tooltip";
  EXPECT_TRUE(contains(home.out, "class=\"edge cable loaded") ||
              contains(home.out, "class=\"edge cable degraded loaded"))
      << "job 4242's traffic colours the uplinks";

  // The job's page: its ring over the fabric, its reasons escaped.
  Ran page = chromium(server.url("/job/4242"));
  ASSERT_EQ(page.code, 0) << page.err;
  EXPECT_TRUE(contains(page.out, "class=\"edge ring job_4242\"")) << page.out.substr(0, 2000);
  EXPECT_TRUE(contains(page.out, "gpu001 -&gt; gpu003 -&gt; gpu002 -&gt; gpu004"));
  EXPECT_TRUE(contains(page.out, "&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_FALSE(contains(page.out, "<script>alert"));
  EXPECT_TRUE(contains(page.out, "1.20x"));

  // A leaf zoomed into: its hosts one by one.
  Ran leaf = chromium(server.url("/fabric?leaf=leaf02"));
  EXPECT_TRUE(contains(leaf.out, ">gpu003<") && contains(leaf.out, ">gpu004<")) << leaf.out.substr(0, 2000);
  EXPECT_FALSE(contains(leaf.out, ">gpu001<"));

  Ran shot = chromium(server.url("/job/4242"),
                      fmt::format("--window-size=1280,1400 --screenshot={}", quote((dir_ / "job-4242.png").string())));
  EXPECT_TRUE(fs::exists(dir_ / "job-4242.png") && fs::file_size(dir_ / "job-4242.png") > 10000) << shot.err;

  // /metrics through the Prometheus client's parser; refused paths; lint.
  std::ofstream(dir_ / "check.py") << R"PY(
import sys, urllib.request, urllib.error
from prometheus_client.parser import text_string_to_metric_families
base = sys.argv[1]
text = urllib.request.urlopen(base + "/metrics").read().decode()
samples = {}
for family in text_string_to_metric_families(text):
    for s in family.samples:
        samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
def want(name, value, **labels):
    got = samples.get((name, tuple(sorted(labels.items()))))
    if got != value:
        sys.exit("%s%s: %r, expected %r" % (name, labels, got, value))
want("topo_aware_fabric_hosts", 4)
want("topo_aware_snapshots", 1)
want("topo_aware_fabric_degraded_cables", 1, tier="leaf-spine")
want("topo_aware_fabric_switches", 2, level="leaf")
want("topo_aware_placement_recent_jobs", 1)
want("topo_aware_placement_recent_slowdown", 1.2, stat="max")
for path in ["/../../etc/passwd", "/static/x", "/job/abc", "/job/7", "/etc/passwd"]:
    try:
        urllib.request.urlopen(base + path)
        sys.exit(path + " answered")
    except urllib.error.HTTPError as e:
        if e.code not in (400, 404):
            sys.exit("%s: %d" % (path, e.code))
lint = urllib.request.urlopen(base + "/lint").read().decode()
if "degraded_link" not in lint:
    sys.exit("lint shows no degraded link")
print("ok", len(samples), "samples")
)PY";
  Ran metrics = sh(fmt::format("/usr/bin/python3 {} {}", quote((dir_ / "check.py").string()), server.url("")));
  EXPECT_EQ(metrics.code, 0) << metrics.out << metrics.err;

  // The pages need nothing their Content-Security-Policy refuses: Chromium
  // logs every refusal to the console ("... violates the following Content
  // Security Policy directive ...").
  for (const char* path : {"/", "/job/4242", "/lint", "/fabric.svg", "/jobs", "/health"}) {
    Ran logged = chromium(server.url(path), "--dump-dom", true);
    EXPECT_FALSE(contains(logged.out, "Content Security Policy")) << path << ": " << logged.out.substr(0, 3000);
    EXPECT_TRUE(contains(logged.out, "<svg") || contains(logged.out, "id=\"faults\"") ||
                contains(logged.out, "id=\"jobs\"") || contains(logged.out, "topoctl health --collect"))
        << path << ": the page loaded";
  }

  // A writer while pages are read: a second snapshot lands, the page keeps
  // answering throughout and then shows it.
  std::thread writer([&] {
    sh(fmt::format("{} discover --db {} --synthetic leafspine:leaves=4,hosts_per_leaf=8,spines=2", TOPOCTL_PATH,
                   quote(db_)));
  });
  int answered = 0;
  for (int i = 0; i < 10; ++i)
    if (sh(fmt::format("/usr/bin/python3 -c \"import urllib.request; urllib.request.urlopen('{}').read()\"",
                       server.url("/snapshots")))
            .code == 0)
      ++answered;
  writer.join();
  EXPECT_EQ(answered, 10);
  Ran diff = chromium(server.url("/diff?from=1&to=2"));
  EXPECT_TRUE(contains(diff.out, "changes from snapshot 1 to 2")) << diff.out.substr(0, 2000);

  // The simulation reports: listed, and one shown with its pictures.
  Ran listed = chromium(server.url("/reports"));
  EXPECT_TRUE(contains(listed.out, "href=\"/report/small_run\"")) << listed.out.substr(0, 2000);
  Ran shown = chromium(server.url("/report/small_run"));
  EXPECT_TRUE(contains(shown.out, "src=\"/report/small_run/fabric-1.svg\"")) << shown.out.substr(0, 2000);
  EXPECT_TRUE(contains(shown.out, "src=\"/report/small_run/slowdown-cdf.svg\""));
  EXPECT_TRUE(contains(shown.out, "topo-aware"));
  Ran picture =
      sh(fmt::format("/usr/bin/python3 -c \"import urllib.request; print(urllib.request.urlopen('{}')"
                     ".read().decode())\"",
                     server.url("/report/small_run/fabric-1.svg")));
  EXPECT_TRUE(contains(picture.out, "class=\"edge ring job_")) << picture.out.substr(0, 1000);
  Ran outside = sh(fmt::format("/usr/bin/python3 -c \"import urllib.request; urllib.request.urlopen('{}')\"",
                               server.url("/report/small_run/..%2f..%2ftopo.db")));
  EXPECT_NE(outside.code, 0) << "a path out of the reports directory is refused";
  Ran report_logged = chromium(server.url("/report/small_run"), "--dump-dom", true);
  EXPECT_FALSE(contains(report_logged.out, "Content Security Policy")) << report_logged.out.substr(0, 3000);
  Ran shot_report = chromium(server.url("/report/small_run"), fmt::format("--window-size=1280,1400 --screenshot={}",
                                                                          quote((dir_ / "report.png").string())));
  EXPECT_TRUE(fs::exists(dir_ / "report.png")) << shot_report.err;

  EXPECT_EQ(server.stop(), 0) << "serve exits 0 on SIGTERM";
}

// 4,096 hosts as a person sees them: a flat fabric's leaves wrapped into
// rows and a three-tier fabric's pods, each page's picture about as tall
// as wide, every leaf (or pod) in the DOM, screenshots kept.
TEST_F(ServeBrowser, FourThousandHostsAreReadable) {
  ASSERT_EQ(sh("command -v chromium").code, 0) << "chromium is not installed (scripts/install-deps.sh)";
  for (const char* spec : {"leafspine:leaves=256,hosts_per_leaf=16,spines=16,degrade=leaf007:17",
                           "clos3:pods=8,leaves_per_pod=16,hosts_per_leaf=32,spines_per_pod=8,cores=8"}) {
    Ran discover = testing::run_topoctl(fmt::format("discover --db {} --synthetic {}", quote(db_), spec));
    ASSERT_EQ(discover.code, 0) << discover.err;
  }
  Server server(db_, dir_, dir_ / "serve.log");
  ASSERT_GT(server.port(), 0) << "topoctl serve printed no port";

  // The drawn size, from the viewBox: the page fits the picture to the
  // window by its width, so its width and height attributes are gone.
  auto size_of = [](const std::string& dom) {
    size_t at = dom.find("viewBox=\"", dom.find("<svg"));
    if (at == std::string::npos) return std::pair{0.0, 0.0};
    double x = 0, y = 0, w = 0, h = 0;
    std::sscanf(dom.c_str() + at + std::strlen("viewBox=\""), "%lf %lf %lf %lf", &x, &y, &w, &h);
    return std::pair{w, h};
  };
  Ran flat = chromium(server.url("/fabric?snapshot=1"));
  ASSERT_EQ(flat.code, 0) << flat.err;
  size_t leaves = 0;
  for (size_t at = flat.out.find("class=\"node switch leaf with_hosts"); at != std::string::npos;
       at = flat.out.find("class=\"node switch leaf with_hosts", at + 1))
    ++leaves;
  EXPECT_EQ(leaves, 256u);
  EXPECT_TRUE(contains(flat.out, ">leaf256<"));
  EXPECT_TRUE(contains(flat.out, "class=\"edge cable degraded"));
  auto [w1, h1] = size_of(flat.out);
  EXPECT_GT(h1, 0);
  EXPECT_LE(w1 / h1, 3.0) << w1 << " x " << h1;
  Ran shot = chromium(server.url("/fabric?snapshot=1"), fmt::format("--window-size=1600,1400 --screenshot={}",
                                                                    quote((dir_ / "fabric-4096-flat.png").string())));
  EXPECT_TRUE(fs::exists(dir_ / "fabric-4096-flat.png") && fs::file_size(dir_ / "fabric-4096-flat.png") > 10000)
      << shot.err;

  Ran pods = chromium(server.url("/fabric?snapshot=2"));
  for (int pod = 0; pod < 8; ++pod) EXPECT_TRUE(contains(pods.out, fmt::format(">pod {}<", pod))) << pod;
  EXPECT_TRUE(contains(pods.out, "/fabric?snapshot=2&amp;pod=3")) << "a pod's box opens the pod";
  auto [w2, h2] = size_of(pods.out);
  EXPECT_GT(h2, 0);
  EXPECT_LE(w2 / h2, 3.0) << w2 << " x " << h2;
  chromium(server.url("/fabric?snapshot=2"),
           fmt::format("--window-size=1600,1000 --screenshot={}", quote((dir_ / "fabric-4096-pods.png").string())));
  EXPECT_TRUE(fs::exists(dir_ / "fabric-4096-pods.png"));
  Ran pod = chromium(server.url("/fabric?snapshot=2&pod=3"));
  EXPECT_TRUE(contains(pod.out, ">leaf049<") && contains(pod.out, ">leaf064<")) << pod.out.substr(0, 2000);
  chromium(server.url("/fabric?snapshot=2&pod=3"),
           fmt::format("--window-size=1600,1000 --screenshot={}", quote((dir_ / "fabric-4096-pod3.png").string())));
  EXPECT_EQ(server.stop(), 0);
}

}  // namespace
}  // namespace topo
