// CPU-only and segmented jobs drawn per job (simulation/job_kinds.h), and
// what a schedule did to the NVLink domains (simulation/domain_figures.h).
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fabric/synthetic.h"
#include "simulation/domain_figures.h"
#include "simulation/job_kinds.h"
#include "simulation/outcome.h"
#include "simulation/replay.h"

namespace topo {
namespace {

TEST(JobKinds, SharesAreDrawnPerJobAndSizesDivideTheJob) {
  JobKinds k;
  k.cpu_only_share = 0.2;
  k.segment_share = 0.5;
  k.segment_min = 2;
  k.segment_max = 8;
  int cpu = 0, segmented = 0;
  std::map<int, int> sizes;
  for (int i = 0; i < 10000; ++i) {
    std::string id = fmt::format("job{}", i);
    cpu += draw_cpu_only(k, id);
    EXPECT_EQ(draw_cpu_only(k, id), draw_cpu_only(k, id));  // a pure function of the id
    int s = draw_segment(k, id, 16);
    if (s == 0) continue;
    ++segmented;
    ++sizes[s];
    EXPECT_EQ(16 % s, 0) << s;
  }
  EXPECT_NEAR(cpu / 10000.0, 0.2, 0.02);
  EXPECT_NEAR(segmented / 10000.0, 0.5, 0.02);
  // 16 hosts in segments of 2-8: 2, 4 or 8, about evenly.
  EXPECT_EQ(sizes.size(), 3u);
  for (auto [size, n] : sizes) EXPECT_NEAR(n / static_cast<double>(segmented), 1.0 / 3, 0.03) << size;

  // A single host, a host count no size in range divides, and no share: none.
  k.segment_share = 1;
  EXPECT_EQ(draw_segment(k, "a", 1), 0);
  EXPECT_EQ(draw_segment(k, "a", 11), 0);  // 11 is prime, above 8
  EXPECT_EQ(draw_segment(k, "a", 3), 3);
  EXPECT_EQ(draw_segment(JobKinds{}, "a", 16), 0);
  EXPECT_FALSE(draw_cpu_only(JobKinds{}, "a"));
  // Another seed draws other jobs.
  JobKinds other = k;
  other.seed = 2;
  other.cpu_only_share = 0.5;
  k.cpu_only_share = 0.5;
  int differ = 0;
  for (int i = 0; i < 100; ++i)
    differ += draw_cpu_only(k, std::to_string(i)) != draw_cpu_only(other, std::to_string(i));
  EXPECT_GT(differ, 20);
}

TEST(JobKinds, SizesAndSharesAreChecked) {
  JobKinds k;
  parse_segment_sizes("4-16", k);
  EXPECT_EQ(k.segment_min, 4);
  EXPECT_EQ(k.segment_max, 16);
  parse_segment_sizes("8", k);
  EXPECT_EQ(k.segment_min, 8);
  EXPECT_EQ(k.segment_max, 8);
  for (const char* bad : {"", "1-4", "8-4", "x", "2-", "-4", "2-4-6", "2.5"})
    EXPECT_THROW(parse_segment_sizes(bad, k), std::invalid_argument) << bad;
  EXPECT_EQ(job_kinds_problem(JobKinds{}), "");
  EXPECT_NE(job_kinds_problem({.cpu_only_share = 1.5}), "");
  EXPECT_NE(job_kinds_problem({.segment_share = -0.1}), "");
  EXPECT_NE(job_kinds_problem({.segment_min = 1}), "");
  EXPECT_EQ(job_kinds_text(JobKinds{}), "");
  EXPECT_EQ(job_kinds_text({.cpu_only_share = 0.1, .segment_share = 0.3}),
            "CPU-only 10% of jobs, segments on 30% of multi-host GPU jobs (2-18 hosts)");
}

// 4 racks of 4 trays: 4 domains of 4 hosts, named gpu... in rack order.
class DomainFiguresTest : public ::testing::Test {
 protected:
  Fabric f = make_synthetic("nvl72:racks=4,trays=4,hosts_per_leaf=8");

  // Host `i` of domain `d`.
  NodeId at(int d, int i) const { return f.hosts()[f.domains().hosts(d)[i]]; }

  ScheduledJob job(std::string id, std::vector<NodeId> ring, double start, double end, int segment = 0) const {
    ScheduledJob j;
    j.id = std::move(id);
    j.start_s = start;
    j.end_s = end;
    j.ring = std::move(ring);
    j.host_gpus.assign(j.ring.size(), 4);
    j.gpus = 4 * static_cast<int>(j.ring.size());
    j.segment = segment;
    return j;
  }
};

TEST_F(DomainFiguresTest, CountsFreeWholeDomainsAfterEachStartAndSplitSegments) {
  ASSERT_EQ(f.domains().count(), 4u);
  Schedule s;
  s.jobs.push_back(job("a", {at(0, 0), at(0, 1)}, 0, 10));
  // Two segments of 2, each in one domain.
  s.jobs.push_back(job("b", {at(1, 0), at(1, 1), at(2, 0), at(2, 1)}, 5, 15, 2));
  // Segments of 2 laid over a domain boundary: the middle one is split.
  s.jobs.push_back(job("c", {at(3, 0), at(0, 2), at(0, 3), at(3, 1)}, 10, 20, 2));
  ScheduledJob cpu = job("d", {at(3, 2)}, 15, 30);
  cpu.cpu_only = true;
  cpu.gpus = 0;
  s.jobs.push_back(cpu);

  EXPECT_EQ(segments_split(f, s.jobs[1]), 0);
  EXPECT_EQ(segments_split(f, s.jobs[2]), 2);  // {d3, d0} and {d0, d3}
  EXPECT_EQ(segments_split(f, s.jobs[0]), 0);  // no segments

  DomainFigures d = domain_figures(f, s);
  EXPECT_EQ(d.domains, 4);
  EXPECT_EQ(d.decisions, 4);
  // After a: 3 free; after b: 1; at 10 a ends before c starts: c takes
  // domains 0 and 3, so 0 free; at 15 b ends before d starts: 1 and 2 free.
  EXPECT_DOUBLE_EQ(d.mean_free_whole_domains, (3 + 1 + 0 + 2) / 4.0);
  EXPECT_EQ(d.min_free_whole_domains, 0);
  EXPECT_DOUBLE_EQ(d.mean_largest_free_block, (4 + 4 + 2 + 4) / 4.0);
  EXPECT_EQ(d.segmented_jobs, 2);
  EXPECT_EQ(d.segments, 4);
  EXPECT_EQ(d.segments_split, 2);
  EXPECT_EQ(d.cpu_only_jobs, 1);
  EXPECT_EQ(d.cpu_only_jobs_in_domains, 1);

  // The judge carries them, and a fabric without domains counts none.
  SwitchTree tree(f);
  OutcomeOptions o;
  o.fabric_gpus = 64;
  PolicyOutcome judged = judge(tree, s, o);
  EXPECT_EQ(judged.nvlink.segments_split, 2);
  EXPECT_EQ(judged.jobs[2].segments_split, 2);
  EXPECT_EQ(judged.jobs[2].segment, 2);
  EXPECT_TRUE(judged.jobs[3].cpu_only);
  EXPECT_EQ(domain_figures(make_synthetic("leafspine:leaves=2,hosts_per_leaf=4"), Schedule{}).domains, 0);
}

// Replayed on a GB200-like fabric with segmented and CPU-only jobs:
// topo-aware never splits a segment, Slurm's tree (which knows no domains)
// does, and CPU-only jobs hold whole hosts but run no GPU.
TEST(SimulationReplay, SegmentsAndCpuOnlyJobsOnNvlinkDomains) {
  Fabric f = make_synthetic("nvl72:racks=8,trays=6,hosts_per_leaf=12");
  SwitchTree tree(f);
  Trace t = generate_trace(48 * 4, {300, 0.9, 7, 600});
  ReplayOptions o;
  o.gpus_per_host = 4;
  o.kinds = {.cpu_only_share = 0.15, .segment_share = 0.6, .segment_min = 2, .segment_max = 6};
  OutcomeOptions judging;
  judging.fabric_gpus = 48 * 4;
  std::map<std::string, DomainFigures> by_policy;
  for (const char* name : {"tree", "block", "topo-aware"}) {
    Schedule s = replay(tree, t, policy_named(name, f), o);
    for (const ScheduledJob& j : s.jobs) {
      if (!j.cpu_only) continue;
      EXPECT_EQ(j.gpus, 0) << j.id;
      for (int g : j.host_gpus) EXPECT_EQ(g, 4) << j.id;
    }
    by_policy[name] = judge(tree, s, judging).nvlink;
  }
  EXPECT_GT(by_policy["topo-aware"].segmented_jobs, 10);
  EXPECT_GT(by_policy["topo-aware"].cpu_only_jobs, 10);
  EXPECT_EQ(by_policy["topo-aware"].segments_split, 0);
  EXPECT_GT(by_policy["tree"].segments_split, 0);
  // The same jobs of each kind under every policy.
  EXPECT_EQ(by_policy["tree"].cpu_only_jobs, by_policy["topo-aware"].cpu_only_jobs);
  EXPECT_EQ(by_policy["block"].segmented_jobs, by_policy["topo-aware"].segmented_jobs);
}

}  // namespace
}  // namespace topo
