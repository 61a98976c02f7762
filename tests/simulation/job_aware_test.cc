// The judge under job-aware routing: tables re-planned at every start and
// end, each plan holding after a delay; and the replay that stretches runs
// by the slowdowns under the tables in force.
#include <memory>
#include <utility>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "fabric/synthetic.h"
#include "placement/switch_tree.h"
#include "routing/routing_engine.h"
#include "simulation/job_aware.h"
#include "simulation/replay.h"

namespace topo {
namespace {

// Tables that hold `delay_s` after each start or end, no churn cap.
JobAwareOptions delayed(double delay_s) {
  JobAwareOptions o;
  o.delay_s = delay_s;
  return o;
}

// 16 hosts, 4 from each leaf, every ring edge across leaves.
ScheduledJob scattered(const Fabric& f, const std::string& id, int first, double start, double end) {
  ScheduledJob j;
  j.id = id;
  for (int i = 0; i < 4; ++i)
    for (int leaf = 0; leaf < 4; ++leaf) j.ring.push_back(*f.find_host(fmt::format("gpu{:03}", leaf * 8 + first + i)));
  j.host_gpus.assign(j.ring.size(), 8);
  j.gpus = 8 * static_cast<int>(j.ring.size());
  j.submit_s = j.start_s = start;
  j.end_s = end;
  j.duty = 1.0;
  return j;
}

struct TwoRings {
  Fabric fabric = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  Schedule schedule;
  OutcomeOptions options;
  TwoRings() {
    fabric.set_routing(emulate_routing(fabric, "minhop"));
    schedule.policy = "test";
    schedule.jobs = {scattered(fabric, "a", 1, 0, 100), scattered(fabric, "b", 5, 50, 150)};
    options.fabric_gpus = 32 * 8;
  }
};

TEST(JobAware, ReplannedTablesSpeedTheRingsUp) {
  TwoRings s;
  const PolicyOutcome base = judge(SwitchTree(s.fabric), s.schedule, s.options);
  RerouteFigures fig;
  const PolicyOutcome aware = judge_job_aware(s.fabric, s.schedule, s.options, {}, &fig);
  EXPECT_EQ(aware.routing, "job-aware:minhop");
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_GT(base.jobs[i].allreduce_slowdown, 1.2) << i;
    EXPECT_LT(aware.jobs[i].allreduce_slowdown, base.jobs[i].allreduce_slowdown) << i;
  }
  EXPECT_LT(aware.p95_allreduce_slowdown, base.p95_allreduce_slowdown);
  // Plans at 0 (a), 50 (a and b), 100 (b) and 150 (none: the base tables back).
  EXPECT_EQ(fig.reroutes, 4);
  EXPECT_GT(fig.entries_per_reroute(), 0);
  EXPECT_DOUBLE_EQ(fig.span_s, 150);
}

TEST(JobAware, TablesThatNeverHoldJudgeAsTheBase) {
  TwoRings s;
  const PolicyOutcome base = judge(SwitchTree(s.fabric), s.schedule, s.options);
  const PolicyOutcome late = judge_job_aware(s.fabric, s.schedule, s.options, delayed(1000));
  for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(late.jobs[i].allreduce_slowdown, base.jobs[i].allreduce_slowdown, 1e-9);
  EXPECT_NEAR(late.mean_allreduce_slowdown, base.mean_allreduce_slowdown, 1e-9);
}

TEST(JobAware, ADelayCostsTheJobsTheirWaitForTables) {
  TwoRings s;
  const PolicyOutcome now = judge_job_aware(s.fabric, s.schedule, s.options, {});
  const PolicyOutcome later = judge_job_aware(s.fabric, s.schedule, s.options, delayed(20));
  EXPECT_GT(later.mean_allreduce_slowdown, now.mean_allreduce_slowdown);
}

// While both rings run, each leaf sends 8 cross-leaf flows over 4
// uplinks: no tables give them a cable a flow, and the figures say so.
TEST(JobAware, SlowJobsAtTheFloorAreCounted) {
  TwoRings s;
  RerouteFigures fig;
  const PolicyOutcome aware = judge_job_aware(s.fabric, s.schedule, s.options, {}, &fig);
  ASSERT_GT(aware.p95_allreduce_slowdown, 1.10);
  EXPECT_EQ(fig.slow_jobs, 2);
  EXPECT_EQ(fig.slow_jobs_floored, 2);
  EXPECT_DOUBLE_EQ(fig.p95_at_floor, aware.p95_allreduce_slowdown);
  // One ring alone has an uplink a flow: no floor, nothing slow.
  s.schedule.jobs.pop_back();
  RerouteFigures alone;
  judge_job_aware(s.fabric, s.schedule, s.options, {}, &alone);
  EXPECT_EQ(alone.slow_jobs, 0);
  EXPECT_DOUBLE_EQ(alone.p95_at_floor, 1.0);
}

TEST(JobAware, AdaptiveIsRefused) {
  TwoRings s;
  s.fabric.set_routing(Routing{});
  EXPECT_THROW(judge_job_aware(s.fabric, s.schedule, s.options, {}), FabricError);
}

// A policy that places every job on `ring`'s first hosts, in that order.
PlacementPolicy on_ring(const std::vector<NodeId>& ring) {
  return {"on-ring", false, [ring](const SwitchTree&, const FreeMap&, const PlacementRequest& r, SeamRoutes*) {
            Placement p;
            p.hosts.assign(ring.begin(), ring.begin() + r.hosts);
            p.gpus.assign(p.hosts.size(), r.gpus_per_host);
            p.feasible = true;
            return p;
          }};
}

// One trace job of TwoRings' job "a" (16 hosts, every ring edge across
// leaves), 100 s on an ideal placement, replayed with half of each step
// waiting on the network.
struct StretchedRing : TwoRings {
  SwitchTree tree{fabric};
  Trace trace;
  PlacementPolicy policy = on_ring(schedule.jobs[0].ring);
  ReplayOptions replaying;
  StretchedRing() {
    trace.source = "test";
    trace.jobs = {{"a", 0, 100, 128}};
    replaying.stretch = parse_comm_shares("0.5");
    replaying.judging = options;
    options.stretch = replaying.stretch;
  }
  Schedule replayed(std::optional<JobAwareOptions> job_aware) {
    replaying.job_aware = std::move(job_aware);
    return replay(tree, trace, policy, replaying);
  }
};

TEST(JobAwareReplay, ReplannedTablesShortenAStretchedRun) {
  StretchedRing s;
  const Schedule base = s.replayed(std::nullopt), aware = s.replayed(JobAwareOptions{});
  ASSERT_EQ(base.jobs.size(), 1u);
  ASSERT_EQ(aware.jobs.size(), 1u);
  EXPECT_EQ(base.jobs[0].ring, aware.jobs[0].ring);
  const double base_slowdown = judge(s.tree, base, s.options).jobs[0].allreduce_slowdown;
  ASSERT_GT(base_slowdown, 1.2);
  EXPECT_NEAR(base.jobs[0].end_s, 100 * (0.5 + 0.5 * base_slowdown), 1e-6);
  EXPECT_LT(aware.jobs[0].end_s, base.jobs[0].end_s);
  // The judge walks the stretched schedule through the same plans: the
  // slowdown it finds is the one the run was stretched by.
  RerouteFigures fig;
  const PolicyOutcome judged = judge_job_aware(s.fabric, aware, s.options, {}, &fig);
  const double aware_slowdown = judged.jobs[0].allreduce_slowdown;
  EXPECT_LT(aware_slowdown, base_slowdown);
  EXPECT_NEAR(aware.jobs[0].end_s, 100 * (0.5 + 0.5 * aware_slowdown), 1e-6);
  EXPECT_NEAR(judged.jobs[0].run_s, aware.jobs[0].end_s, 1e-9);
  // A plan at its start, the base tables back at its end.
  EXPECT_EQ(fig.reroutes, 2);
}

// The judge of a replayed schedule takes the replay's plans from a shared
// memo instead of planning again, and judges the same.
TEST(JobAwareReplay, TheJudgeTakesTheReplaysPlans) {
  StretchedRing s;
  auto memo = std::make_shared<PlanMemo>();
  const Schedule aware = s.replayed(JobAwareOptions{0, 0, memo});
  const int made = memo->plans_made();
  EXPECT_GT(made, 0);
  const PolicyOutcome again = judge_job_aware(s.fabric, aware, s.options, {0, 0, memo});
  EXPECT_EQ(memo->plans_made(), made);
  EXPECT_GT(memo->plans_reused(), 0);
  const PolicyOutcome fresh = judge_job_aware(s.fabric, aware, s.options, {});
  EXPECT_DOUBLE_EQ(again.jobs[0].allreduce_slowdown, fresh.jobs[0].allreduce_slowdown);
}

// Tables that hold 20 s into the run: 20 s at the base tables' pace, the
// rest of the work at the planned tables' pace.
TEST(JobAwareReplay, ADelayedPlanChangesThePaceMidRun) {
  StretchedRing s;
  const Schedule base = s.replayed(std::nullopt), now = s.replayed(JobAwareOptions{});
  const Schedule later = s.replayed(delayed(20));
  const double f_base = base.jobs[0].end_s / 100, f_now = now.jobs[0].end_s / 100;
  EXPECT_NEAR(later.jobs[0].end_s, 20 + (100 - 20 / f_base) * f_now, 1e-6);
  EXPECT_GT(later.jobs[0].end_s, now.jobs[0].end_s);
  EXPECT_LT(later.jobs[0].end_s, base.jobs[0].end_s);
}

// Unstretched, the replay judges nothing live: job-aware options change
// no run.
TEST(JobAwareReplay, WithoutAStretchRunsAreTheTraces) {
  StretchedRing s;
  s.replaying.stretch = Stretch{};
  EXPECT_DOUBLE_EQ(s.replayed(JobAwareOptions{}).jobs[0].end_s, 100);
}

}  // namespace
}  // namespace topo
