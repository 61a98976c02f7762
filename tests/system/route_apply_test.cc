// `topoctl route apply` against a running OpenSM on ibsim.
//
// ibsim simulates a 4-leaf x 8-host, 2-spine, 2:1 fabric; OpenSM runs as a
// daemon with `-R file -U FILE`, FILE not yet there, so its first sweep
// falls back to minhop (osm_ucast_mgr.c: a failing engine gives way to the
// default). A child process (this binary re-executed under libumad2sim)
// reads the fabric and every switch's table live (read_lfts_live); `topoctl
// discover` stores them as the base snapshot. Two running jobs whose rings
// cross a leaf at every edge are planned and applied with `--sweep-command
// 'kill -HUP PID'`; then, read live again:
//   - every switch's entry for every HCA LID equals the file apply wrote,
//     which equals the planned tables (`route plan --json` changes);
//   - every host reaches every host on the live tables, without a down-up
//     turn, and ibtracert follows the walk for a sample of ring flows;
//   - the rings' flows load the cables as the plan says (most flows on a
//     cable, cables shared);
// and after a second apply with the second job ended, its LIDs have their
// base entries back live, the first job's keep their planned ones, and its
// ring, alone, shares no cable (the plan says none).
// Skips only when ibsim or OpenSM is not installed.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "discovery/ibnetdisc.h"
#include "discovery/ibnetdiscover.h"
#include "fabric/synthetic.h"
#include "routing/job_routes.h"
#include "routing/opensm_lfts.h"
#include "routing/route.h"
#include "routing/routing_check.h"
#include "tests/system/ibsim_processes.h"
#include "tests/system/live_tables_child.h"

extern "C" const char* __lsan_default_suppressions() { return "leak:libibnetdisc.so\n"; }

namespace topo {
namespace {

using namespace system_test;
using nlohmann::json;

struct CliRun {
  int status = -1;
  std::string out;
};

class RouteApply : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!find_program("ibsim")) GTEST_SKIP() << "ibsim is not installed (Debian package ibsim-utils)";
    if (!find_program("opensm")) GTEST_SKIP() << "opensm is not installed";
    ASSERT_TRUE(fs::exists(kUmad2sim)) << kUmad2sim << " is missing (Debian package libumad2sim0)";
    written_ = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
    sim_.emplace(written_, "toporte");
    lfts_file_ = dir() / "routes.lfts";
    std::vector<std::string> env = sim_->env({"OSM_TMP_DIR=" + dir().string(), "OSM_CACHE_DIR=" + dir().string()});
    opensm_.emplace(std::vector<std::string>{*find_program("opensm"), "-R", "file", "-U", lfts_file_.string(), "-f",
                                             (dir() / "opensm.log").string()},
                    env, dir(), dir() / "opensm.out", false);
  }

  const fs::path& dir() const { return sim_->dir(); }

  // The fabric and tables read live, once every switch has a table with
  // every HCA LID (the first sweep done).
  Fabric read_live(const std::string& name) {
    fs::path out = dir() / name;
    fs::create_directories(out);
    std::string why;
    for (auto deadline = std::chrono::steady_clock::now() + 90s; std::chrono::steady_clock::now() < deadline;
         std::this_thread::sleep_for(1s)) {
      why = run_live_tables_child(*sim_, out);
      if (!why.empty()) continue;
      Fabric f = read_ibnetdiscover_file((out / "live.ibnetdiscover").string());
      f.set_routing(read_opensm_lfts_file((out / "live.lfts").string(), f));
      if (f.hcas().size() == written_.hcas().size() && check_up_down(f, f.routing()).empty()) return f;
      why = "tables not complete yet";
    }
    throw std::runtime_error("live reading failed: " + why + "\nopensm:\n" + read_file(dir() / "opensm.out"));
  }

  // Reads live until every entry equals `want`'s for every HCA LID.
  Fabric read_live_until(const std::string& name, const Fabric& want) {
    for (int attempt = 0; attempt < 30; ++attempt) {
      Fabric live = read_live(fmt::format("{}-{}", name, attempt));
      if (differing_entries(live, want) == 0) return live;
      std::this_thread::sleep_for(1s);
    }
    return read_live(name + "-last");
  }

  static int differing_entries(const Fabric& live, const Fabric& want) {
    int n = 0;
    for (size_t s = 0; s < live.switches().size(); ++s)
      for (NodeId hca : live.hcas())
        n += live.routing().out_port(s, live.node(hca).lid) != want.routing().out_port(s, live.node(hca).lid);
    return n;
  }

  CliRun topoctl(const std::vector<std::string>& args) {
    std::vector<std::string> argv{TOPOCTL_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    fs::path log = dir() / "topoctl.out";
    Process p(argv, {}, dir(), log, false, dir() / "topoctl.err");
    auto status = p.wait(120s);
    CliRun r;
    r.status = status && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
    r.out = read_file(log);
    if (r.status != 0) r.out += read_file(dir() / "topoctl.err");
    return r;
  }

  // 16 hosts, 4 from each leaf, every ring edge across leaves.
  static std::string scattered(int first) {
    std::vector<std::string> hosts;
    for (int i = 0; i < 4; ++i)
      for (int leaf = 0; leaf < 4; ++leaf) hosts.push_back(fmt::format("gpu{:03}", leaf * 8 + first + i));
    return fmt::format("{}", fmt::join(hosts, ","));
  }

  static std::vector<RingJob> rings(const Fabric& f, const std::vector<std::string>& lines) {
    std::vector<RingJob> jobs;
    for (const std::string& line : lines) {
      RingJob job{line, {}};
      std::istringstream in(line);
      for (std::string h; std::getline(in, h, ',');) job.ring.push_back(*f.find_host(h));
      jobs.push_back(std::move(job));
    }
    return jobs;
  }

  Fabric written_;
  std::optional<Ibsim> sim_;
  std::optional<Process> opensm_;  // after sim_: stops first
  fs::path lfts_file_;
};

std::set<uint32_t> lids_of(const Fabric& f, const RingJob& job) {
  std::set<uint32_t> lids;
  for (NodeId h : job.ring)
    for (NodeId hca : f.hcas_of(h)) lids.insert(f.node(hca).lid);
  return lids;
}

TEST_F(RouteApply, OpenSmLoadsThePlanAndGivesAnEndedJobItsBaseEntriesBack) {
  // Base: OpenSM's own tables (minhop: the file is not there yet), stored as a snapshot.
  Fabric base = read_live("base");
  const std::string db = (dir() / "topo.db").string();
  CliRun stored = topoctl({"discover", "--ibnetdiscover", (dir() / "base/live.ibnetdiscover").string(), "--lfts-dump",
                           (dir() / "base/live.lfts").string(), "--db", db});
  ASSERT_EQ(stored.status, 0) << stored.out;

  const std::vector<std::string> both{scattered(1), scattered(5)}, first_only{scattered(1)};
  fs::path running = dir() / "running.txt";
  std::ofstream(running) << both[0] << "\n" << both[1] << "\n";
  fs::path running_after = dir() / "running-after.txt";
  std::ofstream(running_after) << first_only[0] << "\n";
  const std::vector<RingJob> jobs = rings(base, both);
  const std::string sweep = fmt::format("kill -HUP {}", opensm_->pid());

  CliRun planned = topoctl({"route", "plan", "--db", db, "--running", running.string(), "--json"});
  ASSERT_EQ(planned.status, 0) << planned.out;
  json plan = json::parse(planned.out);
  ASSERT_FALSE(plan["changes"].empty());
  EXPECT_LT(plan["after"]["most_flows"].get<double>(), plan["before"]["most_flows"].get<double>());

  CliRun applied = topoctl({"route", "apply", "--db", db, "--running", running.string(), "--opensm-file",
                            lfts_file_.string(), "--sweep-command", sweep, "--json"});
  ASSERT_EQ(applied.status, 0) << applied.out;
  EXPECT_EQ(json::parse(applied.out)["changes"], plan["changes"]);

  // The file holds the base tables with exactly the plan's changes.
  Fabric want = base;
  want.set_routing(read_opensm_lfts_file(lfts_file_.string(), base));
  int changed = 0;
  for (size_t s = 0; s < base.switches().size(); ++s)
    for (NodeId hca : base.hcas()) {
      const uint32_t lid = base.node(hca).lid;
      changed += want.routing().out_port(s, lid) != base.routing().out_port(s, lid);
    }
  EXPECT_EQ(changed, static_cast<int>(plan["changes"].size()));

  Fabric live = read_live_until("applied", want);
  EXPECT_EQ(differing_entries(live, want), 0) << read_file(dir() / "opensm.log").substr(0, 4000);
  EXPECT_TRUE(check_routing(live).empty());
  EXPECT_TRUE(check_up_down(live, live.routing()).empty());
  const RingLoad load = ring_load(live, live.routing(), rings(live, both));
  EXPECT_EQ(load.shared_cables, plan["after"]["shared_cables"].get<int>());
  EXPECT_DOUBLE_EQ(load.most, plan["after"]["most_flows"].get<double>());

  // ibtracert follows the walk through the live tables, for ring flows of each job.
  for (const RingJob& job : rings(live, both))
    for (size_t i : {size_t{0}, size_t{5}}) {
      NodeId a = live.hcas_of(job.ring[i])[0], b = live.hcas_of(job.ring[i + 1])[0];
      StaticRoute route = trace_static_route(live, a, b);
      ASSERT_EQ(route.status, RouteStatus::Ok);
      fs::path log = dir() / "ibtracert.out";
      Process p({*find_program("ibtracert"), std::to_string(live.node(a).lid), std::to_string(live.node(b).lid)},
                sim_->env({}), dir(), log, false);
      p.wait(30s);
      const std::string out = read_file(log);
      size_t at = 0;
      for (const RouteHop& h : route.hops) {
        const std::string port = fmt::format("[{}]", h.out_port);
        at = out.find(port, at);
        ASSERT_NE(at, std::string::npos) << "hop " << live.node(h.from).name << port << " not in:\n" << out;
      }
    }

  // The second job ends: its LIDs get their base entries back, the first job's keep the plan's.
  CliRun again = topoctl({"route", "apply", "--db", db, "--running", running_after.string(), "--opensm-file",
                          lfts_file_.string(), "--sweep-command", sweep, "--json"});
  ASSERT_EQ(again.status, 0) << again.out;
  json plan_after = json::parse(again.out);
  Fabric want_after = base;
  want_after.set_routing(read_opensm_lfts_file(lfts_file_.string(), base));
  Fabric live_after = read_live_until("ended", want_after);
  EXPECT_EQ(differing_entries(live_after, want_after), 0);
  for (uint32_t lid : lids_of(live_after, jobs[1]))
    for (size_t s = 0; s < base.switches().size(); ++s)
      EXPECT_EQ(live_after.routing().out_port(s, lid), base.routing().out_port(s, lid)) << "LID " << lid;
  int first_kept = 0;
  for (uint32_t lid : lids_of(live_after, jobs[0]))
    for (size_t s = 0; s < base.switches().size(); ++s)
      first_kept += live_after.routing().out_port(s, lid) != base.routing().out_port(s, lid);
  EXPECT_GT(first_kept, 0);
  // One job alone: four flows up from each leaf over four uplinks, none shared, live as planned.
  EXPECT_EQ(plan_after["after"]["shared_cables"].get<int>(), 0);
  EXPECT_GT(plan_after["before"]["shared_cables"].get<int>(), 0);
  EXPECT_EQ(ring_load(live_after, live_after.routing(), rings(live_after, first_only)).shared_cables, 0);
  EXPECT_TRUE(check_routing(live_after).empty());
}

}  // namespace
}  // namespace topo
