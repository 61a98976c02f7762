// RouteJobs=: the pacing of applies (a fake clock), the route thread's
// writes for OpenSM's file engine (the plan, a job's end giving its LIDs
// their base entries back, a plan equal to the last writing nothing, a
// failing RouteCommand leaving the file as it was and said once), the
// topo_aware.conf keys, and the engine's C ABI handing the running set
// over, and a newer snapshot's tables without a job event.
#include "plugin/engine/route_writer.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "common/shell_command.h"
#include "db/snapshot_store.h"
#include "fabric/synthetic.h"
#include "plugin/engine/engine.h"
#include "plugin/engine/engine_config.h"
#include "routing/opensm_lfts.h"
#include "routing/routing_engine.h"
#include "tests/support/temp_dir.h"

namespace topo::engine {
namespace {

using namespace std::chrono_literals;
using Clock = RoutePacing::Clock;

TEST(RoutePacing, TheFirstChangeIsDueAtOnceAndLaterOnesWaitTheInterval) {
  RoutePacing p(30s);
  const Clock::time_point t0{};
  EXPECT_FALSE(p.due(t0));  // nothing changed
  p.changed();
  EXPECT_EQ(p.due(t0), t0);
  p.take();
  p.applied(t0);
  EXPECT_FALSE(p.due(t0 + 1s));
  // Two changes 5 s and 12 s later: one apply, 30 s after the last.
  p.changed();
  p.changed();
  EXPECT_EQ(p.due(t0 + 5s), t0 + 30s);
  EXPECT_EQ(p.due(t0 + 12s), t0 + 30s);
  EXPECT_EQ(p.due(t0 + 31s), t0 + 31s);
  p.take();
  EXPECT_FALSE(p.pending());
  // A change that comes while the thread plans is not lost.
  p.changed();
  p.applied(t0 + 31s);
  EXPECT_EQ(p.due(t0 + 40s), t0 + 61s);
}

TEST(RoutePacing, AFailureIsTriedAgainAfterTheIntervalButNeverInALoop) {
  RoutePacing p(30s);
  const Clock::time_point t0{};
  p.changed();
  p.take();
  p.failed(t0);
  EXPECT_TRUE(p.pending());
  EXPECT_EQ(p.due(t0 + 1s), t0 + 30s);
  RoutePacing eager(0s);
  eager.changed();
  eager.take();
  eager.applied(t0);
  eager.changed();
  EXPECT_EQ(eager.due(t0 + 1s), t0 + 1s);  // RouteInterval=0: every change at once
  eager.take();
  eager.failed(t0 + 1s);
  EXPECT_EQ(eager.due(t0 + 2s), t0 + 1s + RoutePacing::kRetry);
}

TEST(ShellCommand, StatusLastLineAndTimeout) {
  ShellResult ok = run_shell("echo one; echo two", 10s);
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.output_tail, "two");
  ShellResult bad = run_shell("echo 'opensm: no such process' >&2; exit 3", 10s);
  EXPECT_EQ(bad.exit_status, 3);
  EXPECT_EQ(bad.describe(), "exited with status 3: opensm: no such process");
  ShellResult slow = run_shell("sleep 30", 200ms);
  EXPECT_TRUE(slow.timed_out);
  EXPECT_FALSE(slow.ok());
}

// A daemon that ignores SIGCHLD has its children reaped for it: the command
// then has no status, and must not count as a success.
TEST(ShellCommand, NoStatusToReadIsNoSuccess) {
  struct sigaction ignore {
  }, before{};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ASSERT_EQ(sigaction(SIGCHLD, &ignore, &before), 0);
  ShellResult r = run_shell("true", 10s);
  sigaction(SIGCHLD, &before, nullptr);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.describe().find("exit status could not be read"), std::string::npos) << r.describe();
}

constexpr const char* kFabric = "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2";

std::shared_ptr<const Fabric> minhop_fabric() {
  auto f = std::make_shared<Fabric>(make_synthetic(kFabric));
  f->set_routing(emulate_routing(*f, "minhop"));
  return f;
}

// 16 hosts, 4 from each leaf, every ring edge across leaves.
RingJob scattered(const Fabric& f, const std::string& id, int first) {
  RingJob job{id, {}};
  for (int i = 0; i < 4; ++i)
    for (int leaf = 0; leaf < 4; ++leaf)
      job.ring.push_back(*f.find_host(fmt::format("gpu{:03}", leaf * 8 + first + i)));
  return job;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class RouteWriterTest : public ::testing::Test {
 protected:
  RouteSettings settings(const std::string& command, int interval_s = 0) {
    RouteSettings s;
    s.enabled = true;
    s.file = (dir_.path() / "routes.lfts").string();
    s.interval_s = interval_s;
    s.command = command;
    return s;
  }
  void listen(RouteWriter& w) {
    w.set_notice([this](const std::string& line, bool failed) {
      std::lock_guard guard(lock_);
      lines_.push_back({line, failed});
    });
  }
  RouteInputs inputs(std::vector<RingJob> jobs) { return RouteInputs{fabric_, 7, std::move(jobs)}; }
  // The tables the writer wrote, read back.
  Routing written() { return read_opensm_lfts_file((dir_.path() / "routes.lfts").string(), *fabric_); }
  Routing planned(const std::vector<RingJob>& jobs) {
    return plan_job_routes(*fabric_, fabric_->routing(), jobs).routing;
  }
  std::vector<std::pair<std::string, bool>> lines() {
    std::lock_guard guard(lock_);
    return lines_;
  }

  testing::TempDir dir_{"route-writer"};
  std::shared_ptr<const Fabric> fabric_ = minhop_fabric();
  std::mutex lock_;
  std::vector<std::pair<std::string, bool>> lines_;
};

TEST_F(RouteWriterTest, WritesThePlanRunsTheCommandAndGivesAnEndedJobsLidsBack) {
  const std::string swept = (dir_.path() / "swept").string();
  RouteWriter w(settings("echo swept >> " + swept));
  listen(w);
  const std::vector<RingJob> both{scattered(*fabric_, "1", 1), scattered(*fabric_, "2", 5)};
  w.update(inputs(both));
  ASSERT_TRUE(w.wait_settled(30s));
  const Routing want = planned(both);
  ASSERT_NE(want.lft, fabric_->routing().lft);  // the plan changes entries
  EXPECT_EQ(written().lft, want.lft);
  EXPECT_EQ(slurp(swept), "swept\n");
  ASSERT_EQ(lines().size(), 1u);
  EXPECT_FALSE(lines()[0].second);
  EXPECT_NE(lines()[0].first.find("routes applied: 2 running jobs"), std::string::npos) << lines()[0].first;

  // The same running set again: nothing written, no sweep.
  w.update(inputs(both));
  ASSERT_TRUE(w.wait_settled(30s));
  EXPECT_EQ(w.status().unchanged, 1);
  EXPECT_EQ(slurp(swept), "swept\n");

  // Job 2 ends: its LIDs' base entries come back, job 1 keeps its plan.
  w.update(inputs({both[0]}));
  ASSERT_TRUE(w.wait_settled(30s));
  EXPECT_EQ(written().lft, planned({both[0]}).lft);
  for (NodeId h : both[1].ring)
    for (NodeId hca : fabric_->hcas_of(h))
      for (size_t s = 0; s < fabric_->switches().size(); ++s)
        EXPECT_EQ(written().out_port(s, fabric_->node(hca).lid),
                  fabric_->routing().out_port(s, fabric_->node(hca).lid));
  // Every job ended: the base tables, whole.
  w.update(inputs({}));
  ASSERT_TRUE(w.wait_settled(30s));
  EXPECT_EQ(written().lft, fabric_->routing().lft);
  EXPECT_EQ(w.status().applies, 3);
}

TEST_F(RouteWriterTest, AtMostOneApplyPerInterval) {
  RouteWriter w(settings("", 3600));
  const std::vector<RingJob> both{scattered(*fabric_, "1", 1), scattered(*fabric_, "2", 5)};
  w.update(inputs(both));
  ASSERT_TRUE(w.wait_settled(30s));
  EXPECT_EQ(w.status().applies, 1);
  w.update(inputs({both[0]}));
  ASSERT_TRUE(w.wait_settled(30s));
  // The change waits for the hour to pass; the file keeps the first plan.
  EXPECT_TRUE(w.status().waiting);
  EXPECT_EQ(w.status().applies, 1);
  EXPECT_EQ(written().lft, planned(both).lft);
}

TEST_F(RouteWriterTest, AFailingCommandLeavesTheFileAsItWasAndSaysWhyOnce) {
  const std::filesystem::path fail = dir_.path() / "fail";
  RouteWriter w(
      settings(fmt::format("test ! -e {} || {{ echo 'opensm: no process found' >&2; exit 3; }}", fail.string())));
  listen(w);
  const std::vector<RingJob> one{scattered(*fabric_, "1", 1)}, both{one[0], scattered(*fabric_, "2", 5)};
  w.update(inputs(one));
  ASSERT_TRUE(w.wait_settled(30s));
  const std::string before = slurp(dir_.path() / "routes.lfts");
  ASSERT_FALSE(before.empty());

  std::ofstream(fail) << "";
  w.update(inputs(both));
  ASSERT_TRUE(w.wait_settled(30s));
  EXPECT_EQ(slurp(dir_.path() / "routes.lfts"), before);
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "routes.lfts.tmp"));
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "routes.lfts.previous"));
  ASSERT_EQ(lines().size(), 2u);
  EXPECT_TRUE(lines()[1].second);
  EXPECT_NE(lines()[1].first.find("routes not applied, the tables stay as they were: "), std::string::npos);
  EXPECT_NE(lines()[1].first.find("exited with status 3: opensm: no process found"), std::string::npos)
      << lines()[1].first;
  EXPECT_NE(lines()[1].first.find("put back as it was"), std::string::npos) << lines()[1].first;
  EXPECT_EQ(w.status().failures, 1);
}

// RouteCommandTimeout: a command that runs longer is killed, and the apply
// fails as a failing command does.
TEST_F(RouteWriterTest, ACommandPastItsTimeoutFailsTheApply) {
  RouteSettings s = settings("sleep 30");
  s.command_timeout_s = 1;
  RouteWriter w(s);
  listen(w);
  w.update(inputs({scattered(*fabric_, "1", 1)}));
  ASSERT_TRUE(w.wait_settled(20s));
  ASSERT_EQ(lines().size(), 1u);
  EXPECT_TRUE(lines()[0].second);
  EXPECT_NE(lines()[0].first.find("ran past its timeout and was killed"), std::string::npos) << lines()[0].first;
  EXPECT_EQ(w.status().failures, 1);
}

TEST_F(RouteWriterTest, AFabricWithoutStaticTablesIsRefusedAndNothingWritten) {
  RouteWriter w(settings(""));
  listen(w);
  auto f = std::make_shared<Fabric>(make_synthetic(kFabric));
  w.update(RouteInputs{f, 3, {scattered(*f, "1", 1)}});
  ASSERT_TRUE(w.wait_settled(30s));
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "routes.lfts"));
  ASSERT_EQ(lines().size(), 1u);
  EXPECT_NE(lines()[0].first.find("fabric snapshot 3 routes"), std::string::npos) << lines()[0].first;
}

// --- topo_aware.conf ---

class RouteConfigTest : public ::testing::Test {
 protected:
  std::string conf(const std::string& body) {
    std::string p = (dir_.path() / "topo_aware.conf").string();
    std::ofstream(p) << body;
    return p;
  }
  testing::TempDir dir_{"route-config"};
};

TEST_F(RouteConfigTest, OffByDefaultAndReadWhenSet) {
  auto c = read_engine_config(conf("DbPath=/tmp/x.db\n"));
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->routes.enabled);
  EXPECT_EQ(c->routes.interval_s, 30);
  EXPECT_EQ(c->routes.command_timeout_s, 60);
  c =
      read_engine_config(conf("routejobs=yes\nRouteFile=/etc/opensm/job-routes.lfts\nRouteInterval=5\n"
                              "RouteCommand=kill -HUP $(pidof opensm)\nRouteMaxChanges=64\nRouteCommandTimeout=120\n"));
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->routes.enabled);
  EXPECT_EQ(c->routes.file, "/etc/opensm/job-routes.lfts");
  EXPECT_EQ(c->routes.interval_s, 5);
  EXPECT_EQ(c->routes.command, "kill -HUP $(pidof opensm)");
  EXPECT_EQ(c->routes.max_changes, 64);
  EXPECT_EQ(c->routes.command_timeout_s, 120);
}

TEST_F(RouteConfigTest, BadRouteKeysNameFileLineAndField) {
  struct Case {
    std::string body;
    int line;
    const char* says;
  } cases[] = {
      {"RouteJobs=maybe\n", 1, "RouteJobs 'maybe': expected yes or no"},
      {"RouteFile=routes.lfts\n", 1, "RouteFile 'routes.lfts': expected an absolute path"},
      {"RouteInterval=-1\n", 1, "RouteInterval '-1': expected whole seconds"},
      {"RouteInterval=1.5\n", 1, "RouteInterval '1.5'"},
      {"RouteMaxChanges=many\n", 1, "RouteMaxChanges 'many'"},
      {"RouteCommandTimeout=0\n", 1, "RouteCommandTimeout '0': expected whole seconds from 1 to 3600"},
      {"# routes\nRouteJobs=yes\nRouteInterval=10\n", 2, "RouteJobs=yes needs RouteFile=PATH"},
  };
  for (const Case& c : cases) {
    std::string p = conf(c.body);
    try {
      read_engine_config(p);
      ADD_FAILURE() << c.body << " was accepted";
    } catch (const ParseError& e) {
      EXPECT_NE(std::string(e.what()).find(fmt::format("{}:{}", p, c.line)), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
    }
  }
}

// --- the engine hands the running set over ---

std::mutex engine_lines_lock;
std::vector<std::string> engine_lines;
void remember(const char* line, bool failed) {
  std::lock_guard guard(engine_lines_lock);
  engine_lines.push_back(std::string(failed ? "FAILED " : "") + line);
}
size_t engine_line_count() {
  std::lock_guard guard(engine_lines_lock);
  return engine_lines.size();
}

// An engine on `db` with RouteJobs=yes and RouteInterval=0, Slurm's nodes
// gpu001-gpu032, prepared (its snapshot watcher runs), its route lines
// going to engine_lines.
topo_engine_t* open_routing_engine(const testing::TempDir& dir, const std::string& db) {
  const std::string conf = (dir.path() / "topo_aware.conf").string();
  std::ofstream(conf) << fmt::format("DbPath={}\nRouteJobs=yes\nRouteFile={}\nRouteInterval=0\n", db,
                                     (dir.path() / "routes.lfts").string());
  char msg[512];
  topo_engine_t* e = nullptr;
  EXPECT_EQ(topo_engine_open(conf.c_str(), &e, msg, sizeof msg), TOPO_ENGINE_OK) << msg;
  if (!e) return nullptr;
  engine_lines.clear();
  topo_engine_on_routes(e, remember);
  std::vector<std::string> names;
  for (int i = 1; i <= 32; ++i) names.push_back(fmt::format("gpu{:03}", i));
  std::vector<const char*> ptrs;
  for (const std::string& n : names) ptrs.push_back(n.c_str());
  EXPECT_EQ(topo_engine_set_nodes(e, ptrs.data(), ptrs.size(), msg, sizeof msg), TOPO_ENGINE_OK) << msg;
  EXPECT_EQ(topo_engine_prepare(e, msg, sizeof msg), TOPO_ENGINE_OK) << msg;
  return e;
}

// Records Slurm's own choice of node indices `alloc` for job `id`; the
// engine's ring order, as host names.
std::vector<std::string> record_job(topo_engine_t* e, uint32_t id, std::vector<size_t> alloc) {
  topo_engine_job job{};
  job.job_id = id;
  job.nodes = static_cast<uint32_t>(alloc.size());
  char msg[512];
  char *ring = nullptr, *hcas = nullptr;
  EXPECT_EQ(topo_engine_record(e, &job, nullptr, -1, alloc.data(), alloc.size(), "test", &ring, &hcas, msg, sizeof msg),
            TOPO_ENGINE_OK)
      << msg;
  std::vector<std::string> names;
  std::stringstream in(ring ? ring : "");
  for (std::string h; std::getline(in, h, ',');) names.push_back(h);
  std::free(ring);
  std::free(hcas);
  return names;
}

RingJob ring_on(const Fabric& f, const std::string& id, const std::vector<std::string>& names) {
  RingJob job{id, {}};
  for (const std::string& n : names) job.ring.push_back(*f.find_host(n));
  return job;
}

bool wait_engine_lines(size_t n) {
  for (auto deadline = Clock::now() + 30s; engine_line_count() < n && Clock::now() < deadline;)
    std::this_thread::sleep_for(10ms);
  return engine_line_count() >= n;
}

TEST_F(RouteWriterTest, TheEngineAppliesWhenARecordedJobStartsAndEnds) {
  const std::string db = (dir_.path() / "fabric.db").string();
  SnapshotStore(db).save(*fabric_);
  topo_engine_t* e = open_routing_engine(dir_, db);
  ASSERT_NE(e, nullptr);
  // Job 1 on gpu001-004 and gpu009-012 (two leaves), Slurm's own choice.
  const RingJob rings = ring_on(*fabric_, "1", record_job(e, 1, {0, 1, 2, 3, 8, 9, 10, 11}));
  ASSERT_TRUE(wait_engine_lines(1));
  EXPECT_EQ(written().lft, planned({rings}).lft) << engine_lines[0];
  char msg[512];
  ASSERT_EQ(topo_engine_job_ended(e, 1, msg, sizeof msg), TOPO_ENGINE_OK) << msg;
  // The plan for job 1 may equal the base (its two ring edges may already
  // have cables of their own): then the end writes nothing.
  if (planned({rings}).lft != fabric_->routing().lft) {
    ASSERT_TRUE(wait_engine_lines(2));
  }
  EXPECT_EQ(written().lft, fabric_->routing().lft);
  topo_engine_close(e);
  for (const std::string& l : engine_lines) EXPECT_EQ(l.find("FAILED"), std::string::npos) << l;
}

TEST_F(RouteWriterTest, TheEngineAppliesANewSnapshotsTablesWithoutAJobEvent) {
  const std::string db = (dir_.path() / "fabric.db").string();
  SnapshotStore(db).save(*fabric_);
  topo_engine_t* e = open_routing_engine(dir_, db);
  ASSERT_NE(e, nullptr);
  // Job 1 on four hosts of each leaf, Slurm's own choice.
  std::vector<size_t> alloc;
  for (size_t leaf = 0; leaf < 4; ++leaf)
    for (size_t i = 0; i < 4; ++i) alloc.push_back(leaf * 8 + i);
  const std::vector<std::string> names = record_job(e, 1, alloc);
  ASSERT_TRUE(wait_engine_lines(1));
  const Routing before = planned({ring_on(*fabric_, "1", names)});
  EXPECT_EQ(written().lft, before.lft) << engine_lines[0];

  // The subnet now routes with ftree: `topoctl discover --lfts` stores its
  // tables as a new snapshot, and no job starts or ends.
  auto ftree = std::make_shared<Fabric>(make_synthetic(kFabric));
  ftree->set_routing(emulate_routing(*ftree, "ftree"));
  const int64_t id = SnapshotStore(db).save(*ftree);
  const Routing want = plan_job_routes(*ftree, ftree->routing(), {ring_on(*ftree, "1", names)}).routing;
  ASSERT_NE(want.lft, before.lft);    // else the test could not tell
  ASSERT_TRUE(wait_engine_lines(2));  // the watcher looks once a second
  EXPECT_EQ(read_opensm_lfts_file((dir_.path() / "routes.lfts").string(), *ftree).lft, want.lft);
  EXPECT_NE(engine_lines[1].find(fmt::format("from fabric snapshot {}'s tables", id)), std::string::npos)
      << engine_lines[1];
  topo_engine_close(e);
  for (const std::string& l : engine_lines) EXPECT_EQ(l.find("FAILED"), std::string::npos) << l;
}

}  // namespace
}  // namespace topo::engine
