// The judge under job-aware routing: tables re-planned at every start and
// end, each plan holding after a delay.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "fabric/synthetic.h"
#include "placement/switch_tree.h"
#include "routing/routing_engine.h"
#include "simulation/job_aware.h"

namespace topo {
namespace {

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
  const PolicyOutcome late = judge_job_aware(s.fabric, s.schedule, s.options, JobAwareOptions{1000, 0});
  for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(late.jobs[i].allreduce_slowdown, base.jobs[i].allreduce_slowdown, 1e-9);
  EXPECT_NEAR(late.mean_allreduce_slowdown, base.mean_allreduce_slowdown, 1e-9);
}

TEST(JobAware, ADelayCostsTheJobsTheirWaitForTables) {
  TwoRings s;
  const PolicyOutcome now = judge_job_aware(s.fabric, s.schedule, s.options, {});
  const PolicyOutcome later = judge_job_aware(s.fabric, s.schedule, s.options, JobAwareOptions{20, 0});
  EXPECT_GT(later.mean_allreduce_slowdown, now.mean_allreduce_slowdown);
}

TEST(JobAware, AdaptiveIsRefused) {
  TwoRings s;
  s.fabric.set_routing(Routing{});
  EXPECT_THROW(judge_job_aware(s.fabric, s.schedule, s.options, {}), FabricError);
}

}  // namespace
}  // namespace topo
