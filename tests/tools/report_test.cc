// The benchmark report: markdown tables and goal verdicts from given
// outcomes, the slowdown CDF picture, the results JSON and `topoctl report`.
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include "tests/support/topoctl_run.h"

#include "common/error.h"
#include "simulation/report.h"
#include "tools/topoctl/outcome_json.h"
#include "tools/view/cdf_scene.h"
#include "tools/view/render.h"

namespace topo {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Figures {
  double mean = 1, p95 = 1, alltoall = 1;
  long spine = 0, pod = 0;
  double leaves = 1, makespan = 1000, utilization = 0.8, wait = 10;
};

// An outcome whose per-job slowdowns are `slowdowns` (multi-host jobs) plus
// one single-host job, with the summary figures given.
PolicyOutcome outcome(const std::string& policy, const Figures& f, const std::vector<double>& slowdowns) {
  PolicyOutcome o;
  o.policy = policy;
  o.routing = "adaptive";
  for (size_t i = 0; i < slowdowns.size(); ++i) {
    JobOutcome j;
    j.id = fmt::format("{}-{}", policy, i);
    j.gpus = 16;
    j.hosts = 2;
    j.wait_s = static_cast<double>(i);
    j.leaves = 1 + static_cast<int>(i % 2);
    j.pods = 1;
    j.spines = static_cast<int>(i % 2);
    j.spine_ring_edges = static_cast<int>(i % 2) * 2;
    j.allreduce_slowdown = slowdowns[i];
    j.allreduce_alone_slowdown = std::isfinite(slowdowns[i]) ? 1 + (slowdowns[i] - 1) / 2 : slowdowns[i];
    j.alltoall_slowdown = 1.5;
    o.jobs.push_back(j);
  }
  JobOutcome single;
  single.id = policy + "-single";
  single.gpus = 4;
  single.hosts = 1;
  o.jobs.push_back(single);
  o.multi_host_jobs = static_cast<int>(slowdowns.size());
  o.mean_allreduce_slowdown = f.mean;
  o.p95_allreduce_slowdown = f.p95;
  o.mean_alltoall_slowdown = f.alltoall;
  o.spine_ring_edges = f.spine;
  o.pod_ring_edges = f.pod;
  o.mean_leaves = f.leaves;
  o.makespan_s = f.makespan;
  o.gpu_utilization = f.utilization;
  o.mean_wait_s = f.wait;
  return o;
}

Comparison sample() {
  Comparison c;
  c.title = "2:1 leaf/spine <loaded> & interleaved";
  c.fabric = "leafspine:leaves=8,hosts_per_leaf=16,spines=4,oversub=2";
  c.trace = "generated:jobs=100";
  c.policies.push_back(outcome("linear",
                               {.mean = 1.8,
                                .p95 = 3.1,
                                .alltoall = 2.2,
                                .spine = 300,
                                .pod = 0,
                                .leaves = 3.5,
                                .makespan = 5000,
                                .utilization = 0.70,
                                .wait = 60},
                               {1.2, 1.9, 3.1, 1.0}));
  c.policies.push_back(outcome("tree",
                               {.mean = 1.4,
                                .p95 = 2.05,
                                .alltoall = 1.9,
                                .spine = 120,
                                .pod = 0,
                                .leaves = 2.25,
                                .makespan = 4000,
                                .utilization = 0.80,
                                .wait = 30},
                               {1.1, 1.3, 2.05, kInf}));
  c.policies.push_back(outcome("topo-aware",
                               {.mean = 1.25,
                                .p95 = 1.6,
                                .alltoall = 1.7,
                                .spine = 48,
                                .pod = 0,
                                .leaves = 1.5,
                                .makespan = 4060,
                                .utilization = 0.77,
                                .wait = 33},
                               {1.0, 1.05, 1.6, 1.3}));
  return c;
}

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

const GoalVerdict* goal(const std::vector<GoalVerdict>& goals, const std::string& word) {
  for (const GoalVerdict& g : goals)
    if (contains(g.goal, word)) return &g;
  return nullptr;
}

TEST(Report, GoalsFollowTheFigures) {
  Comparison c = sample();
  const PolicyOutcome &tree = c.policies[1], &mine = c.policies[2];
  std::vector<GoalVerdict> goals = judge_goals(mine, tree);
  ASSERT_EQ(goals.size(), 4u);  // no common scheduler figure
  double excess_cut = 100 * (1 - (mine.mean_allreduce_slowdown - 1) / (tree.mean_allreduce_slowdown - 1));
  double edge_cut = 100 * (1 - static_cast<double>(mine.spine_ring_edges) / static_cast<double>(tree.spine_ring_edges));
  double makespan = 100 * (mine.makespan_s / tree.makespan_s - 1);
  double utilization = 100 * (mine.gpu_utilization / tree.gpu_utilization - 1);
  EXPECT_EQ(goal(goals, "excess")->met, excess_cut >= 50);
  EXPECT_TRUE(contains(goal(goals, "excess")->measured, fmt::format("{:.1f}% lower", excess_cut)));
  EXPECT_EQ(goal(goals, "spines")->met, edge_cut >= 50);
  EXPECT_TRUE(contains(goal(goals, "spines")->measured, fmt::format("{:.1f}% fewer", edge_cut)));
  EXPECT_EQ(goal(goals, "makespan")->met, std::abs(makespan) <= 2);
  EXPECT_TRUE(contains(goal(goals, "makespan")->measured, fmt::format("{:+.2f}%", makespan)));
  EXPECT_EQ(goal(goals, "utilization")->met, std::abs(utilization) <= 2);

  // A miss says by how much.
  PolicyOutcome worse = mine;
  worse.mean_allreduce_slowdown = 1 + 0.8 * (tree.mean_allreduce_slowdown - 1);  // 20% lower
  worse.makespan_s = tree.makespan_s * 1.05;
  goals = judge_goals(worse, tree);
  EXPECT_FALSE(goal(goals, "excess")->met);
  EXPECT_TRUE(contains(goal(goals, "excess")->measured, "short of the goal by 30.0 points"))
      << goal(goals, "excess")->measured;
  EXPECT_FALSE(goal(goals, "makespan")->met);
  EXPECT_TRUE(contains(goal(goals, "makespan")->measured, "outside by 3.00 points"));

  // The scheduler goal only with the same figure on both sides.
  worse.scheduler["placement_mean_us"] = 250;
  EXPECT_EQ(judge_goals(worse, tree).size(), 4u);
  PolicyOutcome tree_timed = tree;
  tree_timed.scheduler["placement_mean_us"] = 100;
  goals = judge_goals(worse, tree_timed);
  ASSERT_EQ(goals.size(), 5u);
  EXPECT_FALSE(goals[4].met);
  EXPECT_TRUE(contains(goals[4].measured, "2.50x"));
  tree_timed.scheduler["sdiag_main_mean_cycle_us"] = 400;
  worse.scheduler["sdiag_main_mean_cycle_us"] = 500;
  goals = judge_goals(worse, tree_timed);
  EXPECT_TRUE(goals[4].met);  // slurmctld's own figure wins over the simulator's
  EXPECT_TRUE(contains(goals[4].goal, "sdiag_main_mean_cycle_us"));
  tree_timed.scheduler["job_test_mean_us"] = 10;
  worse.scheduler["job_test_mean_us"] = 35;
  goals = judge_goals(worse, tree_timed);
  EXPECT_FALSE(goals[4].met);  // the plugin's own job_test timing wins over sdiag's cycle
  EXPECT_TRUE(contains(goals[4].goal, "job_test_mean_us"));
  // An unrelated time (an RPC's) never stands for job_test.
  PolicyOutcome rpc_only = tree, rpc_mine = mine;
  rpc_only.scheduler["rpc_submit_mean_us"] = 1;
  rpc_mine.scheduler["rpc_submit_mean_us"] = 100;
  EXPECT_EQ(judge_goals(rpc_mine, rpc_only).size(), 4u);

  // With per-profile figures: the p95 goal for allreduce jobs, and a mix
  // judged by the mean over all profiles.
  PolicyOutcome mixed = mine, mixed_tree = tree;
  mixed.profiles = {{"allreduce", {10, 1.25, 1.08}}, {"alltoall", {5, 1.5, 2.0}}};
  mixed.p95_allreduce_slowdown = 1.08;
  mixed.mean_slowdown = 1.1;
  mixed_tree.mean_slowdown = 1.4;
  goals = judge_goals(mixed, mixed_tree);
  ASSERT_EQ(goals.size(), 5u);
  EXPECT_TRUE(goal(goals, "p95")->met);
  EXPECT_TRUE(contains(goal(goals, "excess")->goal, "all profiles"));
  EXPECT_TRUE(goal(goals, "excess")->met);  // 0.1 against 0.4
  mixed.p95_allreduce_slowdown = 1.2;
  EXPECT_TRUE(contains(goal(judge_goals(mixed, mixed_tree), "p95")->measured, "over by 0.100"));

  // Equal figures are no cut, worded without a sign.
  PolicyOutcome same_edges = mine;
  same_edges.spine_ring_edges = tree.spine_ring_edges;
  EXPECT_EQ(goal(judge_goals(same_edges, tree), "spines")->measured,
            fmt::format("0.0% fewer ({} vs {}); short of the goal by 50.0 points", tree.spine_ring_edges,
                        tree.spine_ring_edges));
  EXPECT_FALSE(goal(judge_goals(same_edges, tree), "spines")->met);
  PolicyOutcome more_edges = mine;
  more_edges.spine_ring_edges = tree.spine_ring_edges + tree.spine_ring_edges / 4;
  EXPECT_TRUE(contains(goal(judge_goals(more_edges, tree), "spines")->measured, "25.0% more"));
  EXPECT_TRUE(contains(goal(judge_goals(more_edges, tree), "spines")->measured, "short of the goal by 75.0 points"));

  // tree at the ideal: a relative cut of noise is not judged.
  PolicyOutcome ideal_tree = tree, near_ideal = mine;
  ideal_tree.mean_allreduce_slowdown = 1.0002;
  near_ideal.mean_allreduce_slowdown = 1.0004;
  EXPECT_TRUE(goal(judge_goals(near_ideal, ideal_tree), "excess")->met);
  EXPECT_TRUE(contains(goal(judge_goals(near_ideal, ideal_tree), "excess")->measured, "negligible"));
  near_ideal.mean_allreduce_slowdown = 1.01;
  EXPECT_FALSE(goal(judge_goals(near_ideal, ideal_tree), "excess")->met);

  // tree with a full cable: any finite figure is better.
  PolicyOutcome blocked = tree;
  blocked.mean_allreduce_slowdown = kInf;
  EXPECT_TRUE(goal(judge_goals(mine, blocked), "excess")->met);
  EXPECT_FALSE(goal(judge_goals(blocked, tree), "excess")->met);
}

TEST(Report, MarkdownHoldsTheTablesRatiosAndVerdicts) {
  Comparison c = sample();
  c.policies[1].mean_jct_s = 7200;  // tree: 2 h
  c.policies[2].mean_jct_s = 5400;  // topo-aware: 1.5 h, 25% less
  std::string md = report_markdown(std::span<const Comparison>(&c, 1), "slowdown-cdf.svg");
  EXPECT_TRUE(contains(md, "](slowdown-cdf.svg)"));
  EXPECT_TRUE(contains(md, "## " + c.title));
  EXPECT_TRUE(contains(md, c.fabric));
  for (const PolicyOutcome& p : c.policies) {
    std::string row =
        fmt::format("| {} | {} | {} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {} | {} | {:.2f} |", p.policy, p.routing,
                    p.multi_host_jobs, p.mean_slowdown, p.mean_allreduce_slowdown, p.p95_allreduce_slowdown,
                    p.mean_alltoall_slowdown, p.spine_ring_edges, p.pod_ring_edges, p.mean_leaves);
    EXPECT_TRUE(contains(md, row)) << row << "\n" << md;
    EXPECT_TRUE(contains(md, fmt::format("{:.1f}%", 100 * p.gpu_utilization))) << p.policy;
  }
  const PolicyOutcome &linear = c.policies[0], &tree = c.policies[1], &mine = c.policies[2];
  EXPECT_TRUE(contains(md, "### topo-aware against tree"));
  EXPECT_TRUE(contains(md, "### topo-aware against linear"));
  double vs_tree = 100 * ((mine.mean_allreduce_slowdown - 1) / (tree.mean_allreduce_slowdown - 1) - 1);
  double vs_linear = 100 * ((mine.mean_allreduce_slowdown - 1) / (linear.mean_allreduce_slowdown - 1) - 1);
  EXPECT_TRUE(contains(md, fmt::format("{:+.1f}%", vs_tree))) << md;
  EXPECT_TRUE(contains(md, fmt::format("{:+.1f}%", vs_linear))) << md;
  double edges_vs_tree =
      100 * (static_cast<double>(mine.spine_ring_edges) / static_cast<double>(tree.spine_ring_edges) - 1);
  EXPECT_TRUE(contains(md, fmt::format("| spine ring edges | {} | {} | {:+.1f}% |", tree.spine_ring_edges,
                                       mine.spine_ring_edges, edges_vs_tree)))
      << md;
  EXPECT_TRUE(contains(md, "| mean job completion time (wait + run) | 2.00 h | 90.0 min | -25.0% |")) << md;
  EXPECT_TRUE(contains(md, "| mean JCT | p95 JCT |")) << md;

  size_t passes = 0, misses = 0;
  for (const GoalVerdict& g : judge_goals(mine, tree)) {
    EXPECT_TRUE(contains(md, fmt::format("| {} | {} | {} |", g.goal, g.measured, g.met ? "pass" : "**miss**")))
        << g.goal;
    (g.met ? passes : misses)++;
  }
  EXPECT_GT(passes, 0u);
  EXPECT_GT(misses, 0u);  // makespan 1.5% longer passes, utilization 3.75% lower misses

  // No picture, no link; a run without topo-aware says so.
  Comparison alone = c;
  alone.policies.pop_back();
  std::string plain = report_markdown(std::span<const Comparison>(&alone, 1), "");
  EXPECT_FALSE(contains(plain, "]("));
  EXPECT_TRUE(contains(plain, "nothing to compare"));
}

// Tags of an XML document balance; returns the element names seen.
std::vector<std::string> balanced_tags(const std::string& xml, std::string& problem) {
  std::vector<std::string> stack, seen;
  size_t pos = 0;
  while ((pos = xml.find('<', pos)) != std::string::npos) {
    size_t end = xml.find('>', pos);
    if (end == std::string::npos) {
      problem = "unclosed '<'";
      return seen;
    }
    std::string tag = xml.substr(pos + 1, end - pos - 1);
    pos = end + 1;
    if (tag.starts_with("?") || tag.starts_with("!")) continue;
    if (tag.starts_with("/")) {
      std::string name = tag.substr(1);
      if (stack.empty() || stack.back() != name) {
        problem = "unbalanced </" + name + ">";
        return seen;
      }
      stack.pop_back();
      continue;
    }
    std::string name = tag.substr(0, tag.find_first_of(" \t\n/"));
    seen.push_back(name);
    if (!tag.ends_with("/")) stack.push_back(name);
    if (std::count(tag.begin(), tag.end(), '"') % 2 != 0) problem = "odd quotes in <" + name + ">";
  }
  if (!stack.empty()) problem = "unclosed <" + stack.back() + ">";
  // Text outside tags holds no raw '&' that is not an entity.
  for (size_t amp = xml.find('&'); amp != std::string::npos; amp = xml.find('&', amp + 1)) {
    size_t semi = xml.find(';', amp);
    if (semi == std::string::npos || semi - amp > 6) problem = "a raw '&'";
  }
  return seen;
}

// Jobs that started with as many hosts free as they took: their count,
// their share of the excess (infinite slowdowns counted above the bound but
// not in the sums) and how many of the jobs above 1.10 they are.
TEST(Report, CountsTheJobsThatHadNoChoiceOfHosts) {
  Comparison c = sample();
  std::string md = report_markdown(std::span<const Comparison>(&c, 1), "");
  EXPECT_FALSE(contains(md, "no choice of hosts")) << "no schedule said how many hosts were free";

  // tree's slowdowns 1.1, 1.3, 2.05, inf; topo-aware's 1.0, 1.05, 1.6, 1.3.
  for (int p : {1, 2})
    for (int i = 0; i < 4; ++i) c.policies[p].jobs[i].free_hosts_at_start = 5;
  c.policies[1].jobs[1].free_hosts_at_start = c.policies[1].jobs[2].free_hosts_at_start = 2;
  c.policies[2].jobs[2].free_hosts_at_start = c.policies[2].jobs[3].free_hosts_at_start = 2;
  md = report_markdown(std::span<const Comparison>(&c, 1), "");
  EXPECT_TRUE(contains(md, "| policy | multi-host jobs | with no choice of hosts |")) << md;
  // tree: excess 0.1 + 0.3 + 1.05, of which 0.3 + 1.05 had no choice; above 1.10: 1.3, 2.05, inf.
  EXPECT_TRUE(contains(md, fmt::format("| tree | 4 | 2 | {:.1f}% | 3 | 2 |", 100 * 1.35 / 1.45))) << md;
  // topo-aware: excess 0.05 + 0.6 + 0.3, of which 0.6 + 0.3; above 1.10: 1.6, 1.3.
  EXPECT_TRUE(contains(md, fmt::format("| topo-aware | 4 | 2 | {:.1f}% | 2 | 2 |", 100 * 0.9 / 0.95))) << md;
  EXPECT_FALSE(contains(md, "| linear | 0 |")) << "linear's schedule did not say";
}

TEST(Report, CdfLinesHoldEachPolicysMultiHostJobs) {
  Comparison a = sample(), b = sample();
  b.title = "";
  b.policies.pop_back();
  std::vector<Comparison> runs = {a, b};
  std::vector<CdfPanel> panels = slowdown_cdfs(runs);
  ASSERT_EQ(panels.size(), 2u);
  EXPECT_EQ(panels[1].title, "replay");
  ASSERT_EQ(panels[0].lines.size(), 3u);
  ASSERT_EQ(panels[1].lines.size(), 2u);
  const CdfLine& tree = panels[0].lines[1];
  EXPECT_EQ(tree.policy, "tree");
  EXPECT_EQ(tree.infinite, 1u);
  EXPECT_EQ(tree.finite, (std::vector<double>{1.1, 1.3, 2.05}));
  EXPECT_EQ(tree.count(), 4u);  // the single-host job is left out
  EXPECT_TRUE(std::is_sorted(panels[0].lines[0].finite.begin(), panels[0].lines[0].finite.end()));
}

TEST(Report, CdfPictureIsWellFormedWithALinePerPolicy) {
  Comparison a = sample(), b = sample();
  b.title = "second run";
  b.policies.pop_back();
  std::vector<Comparison> runs = {a, b};
  auto draw = [](std::span<const Comparison> r) {
    return view::render(view::slowdown_cdf_scene(slowdown_cdfs(r)), view::Format::Svg);
  };
  std::string svg = draw(runs);
  std::string problem;
  std::vector<std::string> tags = balanced_tags(svg, problem);
  EXPECT_EQ(problem, "") << svg;
  EXPECT_EQ(std::count(tags.begin(), tags.end(), "svg"), 1);
  for (const char* policy : {"linear", "tree", "topo_aware"})
    EXPECT_TRUE(contains(svg, fmt::format("class=\"edge cdf policy_{}\"", policy))) << policy;
  size_t lines = 0;
  for (size_t at = svg.find("class=\"edge cdf "); at != std::string::npos; at = svg.find("class=\"edge cdf ", at + 1))
    ++lines;
  EXPECT_EQ(lines, a.policies.size() + b.policies.size());
  EXPECT_TRUE(contains(svg, "2:1 leaf/spine &lt;loaded&gt; &amp; interleaved"));
  EXPECT_FALSE(contains(svg, "<loaded>"));
  EXPECT_TRUE(contains(svg, "1 infinite"));  // tree's full-cable job
  // Graphviz writes '-' in text as a character reference.
  for (const char* policy : {"linear", "tree", "topo&#45;aware"})
    EXPECT_TRUE(contains(svg, fmt::format(">{}<", policy)));

  // A linear axis while slowdowns stay small, a log axis past 3.
  Comparison mild = sample();
  for (PolicyOutcome& p : mild.policies)
    for (JobOutcome& job : p.jobs) job.allreduce_slowdown = std::min(job.allreduce_slowdown, 1.6);
  EXPECT_FALSE(contains(draw(std::span<const Comparison>(&mild, 1)), "log scale"));
  mild.policies[0].jobs[0].allreduce_slowdown = 12;
  EXPECT_TRUE(contains(draw(std::span<const Comparison>(&mild, 1)), "log scale"));

  std::string empty = draw({});
  balanced_tags(empty, problem);
  EXPECT_EQ(problem, "");
  EXPECT_TRUE(contains(empty, "no runs to show"));
}

TEST(OutcomeJson, RoundTripKeepsEveryFieldAndInfinity) {
  Comparison c = sample();
  c.policies[1].scheduler["sdiag_main_mean_cycle_us"] = 812.5;
  c.policies[1].rejected = {"j9"};
  c.policies[1].p95_allreduce_slowdown = kInf;
  c.policies[2].jobs[1].free_hosts_at_start = 7;
  c.policies[1].mean_jct_s = 1234.5;
  c.policies[1].p95_jct_s = 4321;
  c.policies[1].jobs[0].run_s = 77;
  c.policies[1].jobs[0].jct_s = 99;
  nlohmann::json j = topoctl::to_json(c);
  EXPECT_FALSE(j["policies"]["topo-aware"]["jobs"][0].contains("free_hosts_at_start"));  // not known: not written
  // JSON has no infinity: null stands for it.
  EXPECT_TRUE(j["policies"]["tree"]["p95_allreduce_slowdown"].is_null());
  EXPECT_TRUE(j["policies"]["tree"]["jobs"][3]["allreduce_slowdown"].is_null());
  for (const char* key : {"policy", "multi_host_jobs", "mean_allreduce_slowdown", "p95_allreduce_slowdown",
                          "mean_alltoall_slowdown", "spine_ring_edges", "pod_ring_edges", "mean_leaves", "makespan_s",
                          "gpu_utilization", "mean_wait_s", "mean_jct_s", "p95_jct_s", "rejected", "scheduler", "jobs"})
    EXPECT_TRUE(j["policies"]["linear"].contains(key)) << key;

  Comparison back = topoctl::comparison_from_json(nlohmann::json::parse(j.dump()), "results.json");
  ASSERT_EQ(back.policies.size(), 3u);
  EXPECT_EQ(back.policies[0].policy, "linear");  // baselines first, whatever the key order
  EXPECT_EQ(back.policies[1].policy, "tree");
  EXPECT_EQ(back.policies[2].policy, "topo-aware");
  EXPECT_EQ(back.title, c.title);
  EXPECT_EQ(back.fabric, c.fabric);
  EXPECT_EQ(back.trace, c.trace);
  ASSERT_EQ(back.policies.size(), c.policies.size());
  for (const PolicyOutcome& want : c.policies) {
    auto it = std::find_if(back.policies.begin(), back.policies.end(),
                           [&](const PolicyOutcome& p) { return p.policy == want.policy; });
    ASSERT_NE(it, back.policies.end()) << want.policy;
    const PolicyOutcome& got = *it;
    EXPECT_EQ(got.multi_host_jobs, want.multi_host_jobs);
    EXPECT_EQ(got.mean_allreduce_slowdown, want.mean_allreduce_slowdown);
    EXPECT_EQ(got.p95_allreduce_slowdown, want.p95_allreduce_slowdown);
    EXPECT_EQ(got.mean_alltoall_slowdown, want.mean_alltoall_slowdown);
    EXPECT_EQ(got.spine_ring_edges, want.spine_ring_edges);
    EXPECT_EQ(got.pod_ring_edges, want.pod_ring_edges);
    EXPECT_EQ(got.mean_leaves, want.mean_leaves);
    EXPECT_EQ(got.makespan_s, want.makespan_s);
    EXPECT_EQ(got.gpu_utilization, want.gpu_utilization);
    EXPECT_EQ(got.mean_wait_s, want.mean_wait_s);
    EXPECT_EQ(got.mean_jct_s, want.mean_jct_s);
    EXPECT_EQ(got.p95_jct_s, want.p95_jct_s);
    EXPECT_EQ(got.rejected, want.rejected);
    EXPECT_EQ(got.scheduler, want.scheduler);
    ASSERT_EQ(got.jobs.size(), want.jobs.size());
    for (size_t i = 0; i < want.jobs.size(); ++i) {
      const JobOutcome &a = got.jobs[i], &b = want.jobs[i];
      EXPECT_EQ(a.id, b.id);
      EXPECT_EQ(a.gpus, b.gpus);
      EXPECT_EQ(a.hosts, b.hosts);
      EXPECT_EQ(a.wait_s, b.wait_s);
      EXPECT_EQ(a.run_s, b.run_s);
      EXPECT_EQ(a.jct_s, b.jct_s);
      EXPECT_EQ(a.free_hosts_at_start, b.free_hosts_at_start);
      EXPECT_EQ(a.leaves, b.leaves);
      EXPECT_EQ(a.pods, b.pods);
      EXPECT_EQ(a.spines, b.spines);
      EXPECT_EQ(a.spine_ring_edges, b.spine_ring_edges);
      EXPECT_EQ(a.pod_ring_edges, b.pod_ring_edges);
      EXPECT_EQ(a.allreduce_slowdown, b.allreduce_slowdown);
      EXPECT_EQ(a.allreduce_alone_slowdown, b.allreduce_alone_slowdown);
      EXPECT_EQ(a.alltoall_slowdown, b.alltoall_slowdown);
    }
  }
}

TEST(OutcomeJson, ErrorsNameTheFileAndKey) {
  nlohmann::json j = topoctl::to_json(sample());
  auto error_of = [](const nlohmann::json& doc) -> std::string {
    try {
      topoctl::comparison_from_json(doc, "runs/a.json");
    } catch (const ParseError& e) {
      return e.what();
    }
    return "accepted";
  };
  nlohmann::json missing = j;
  missing["policies"]["tree"].erase("makespan_s");
  EXPECT_EQ(error_of(missing), "runs/a.json: key 'policies.tree.makespan_s': is missing");
  nlohmann::json wrong = j;
  wrong["policies"]["linear"]["jobs"][2]["wait_s"] = "soon";
  EXPECT_EQ(error_of(wrong), "runs/a.json: key 'policies.linear.jobs[2].wait_s': expected a number");
  for (long n : {-1L, 1L << 40}) {
    nlohmann::json count = j;
    count["policies"]["tree"]["jobs"][1]["free_hosts_at_start"] = n;
    EXPECT_EQ(error_of(count),
              "runs/a.json: key 'policies.tree.jobs[1].free_hosts_at_start': expected a count of hosts, 0 or more");
  }
  nlohmann::json fractional = j;
  fractional["policies"]["topo-aware"]["spine_ring_edges"] = 1.5;
  EXPECT_EQ(error_of(fractional), "runs/a.json: key 'policies.topo-aware.spine_ring_edges': expected a whole number");
  nlohmann::json renamed = j;
  renamed["policies"]["tree"]["policy"] = "linear";
  EXPECT_TRUE(contains(error_of(renamed), "policies.tree.policy")) << error_of(renamed);
  EXPECT_TRUE(contains(error_of(nlohmann::json::array()), "runs/a.json: key 'the document'"));
  EXPECT_THROW(topoctl::outcome_from_json(nlohmann::json{{"policy", "x"}}, "o.json"), ParseError);

  // A number past a double's range is nlohmann's out_of_range, not a parse
  // error: still a ParseError naming the file.
  const std::string path = ::testing::TempDir() + "/overflow.json";
  std::ofstream(path) << "{\"policies\": [1e999]}";
  try {
    topoctl::read_comparison_file(path);
    ADD_FAILURE() << "accepted";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_TRUE(contains(e.what(), "1e999")) << e.what();
  }
}

// A results file is read within a bound, and its nesting is measured before
// nlohmann builds a node per level.
TEST(Report, ResultsFilesAreReadWithinBounds) {
  auto error_of = [](const std::string& path, uint64_t max_bytes) {
    try {
      topoctl::read_comparison_file(path, max_bytes);
    } catch (const ParseError& e) {
      return std::string(e.what());  // "file:line: what"
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of("/dev/zero", 1 << 20), "/dev/zero: more than 1048576 bytes; expected a file of this format");
  const std::string deep = ::testing::TempDir() + "/deep.json";
  std::ofstream(deep) << "{\"policies\":\n" << std::string(1 << 20, '[');
  EXPECT_EQ(error_of(deep, topoctl::kMaxResultsBytes),
            deep + ":2: JSON nested deeper than 64 levels; results JSON nests 6");
}

using topo::testing::Ran;
Ran topoctl_run(const std::string& args) { return topo::testing::run_topoctl(args); }

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ReportCli, WritesTheReportAndPictureFromResultsFiles) {
  std::filesystem::path dir = ::testing::TempDir() + "report_cli." + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Comparison c = sample();
  c.policies[2].jobs[0].ring = {"gpu001", "gpu017", "gpu002"};
  std::ofstream(dir / "results.json") << topoctl::to_json(c).dump(1);
  std::filesystem::path out = dir / "out";

  Ran ok = topoctl_run(fmt::format("report --results {0}/results.json --results {0}/results.json --out {1}",
                                   dir.string(), out.string()));
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_TRUE(contains(ok.out, (out / "report.md").string()));
  EXPECT_TRUE(contains(ok.out, (out / "slowdown-cdf.svg").string()));
  std::string md = slurp(out / "report.md"), svg = slurp(out / "slowdown-cdf.svg");
  // The report's own page, then the fabric pictures' section.
  EXPECT_TRUE(md.starts_with(
      report_markdown(std::vector<Comparison>{topoctl::read_comparison_file((dir / "results.json").string()),
                                              topoctl::read_comparison_file((dir / "results.json").string())},
                      "slowdown-cdf.svg")));
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '\n') > 0, true);
  std::string problem;
  std::vector<std::string> tags = balanced_tags(svg, problem);
  EXPECT_EQ(problem, "");
  size_t lines = 0;
  for (size_t at = svg.find("class=\"edge cdf "); at != std::string::npos; at = svg.find("class=\"edge cdf ", at + 1))
    ++lines;
  EXPECT_EQ(lines, 6u);
  // The fabric of each run, with topo-aware's largest job's ring.
  std::string fabric = slurp(out / "fabric-1.svg");
  EXPECT_TRUE(contains(fabric, "class=\"edge ring job_topo_aware_0\"")) << fabric.substr(0, 3000);
  EXPECT_TRUE(contains(md, "](fabric-1.svg)"));

  Ran named = topoctl_run(
      fmt::format("report --results {}/results.json --out {} --picture cdf.svg --json", dir.string(), out.string()));
  ASSERT_EQ(named.code, 0) << named.err;
  EXPECT_EQ(nlohmann::json::parse(named.out).at("picture").get<std::string>(), (out / "cdf.svg").string());
  EXPECT_TRUE(contains(slurp(out / "report.md"), "](cdf.svg)"));

  // Errors exit 2 and name the file.
  std::ofstream(dir / "broken.json")
      << "{\"fabric\": \"x\", \"trace\": \"y\", \"policies\": {\"tree\": {\"policy\": \"tree\"}}}";
  Ran bad = topoctl_run(fmt::format("report --results {}/broken.json --out {}", dir.string(), out.string()));
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(contains(bad.err, (dir / "broken.json").string() + ": key 'policies.tree.multi_host_jobs'")) << bad.err;
  std::ofstream(dir / "garbage.json") << "{ not json";
  Ran garbage = topoctl_run(fmt::format("report --results {}/garbage.json --out {}", dir.string(), out.string()));
  EXPECT_EQ(garbage.code, 2);
  EXPECT_TRUE(contains(garbage.err, (dir / "garbage.json").string())) << garbage.err;
  Ran absent = topoctl_run(fmt::format("report --results {}/absent.json --out {}", dir.string(), out.string()));
  EXPECT_EQ(absent.code, 2);
  EXPECT_TRUE(contains(absent.err, "absent.json")) << absent.err;
  EXPECT_EQ(topoctl_run(fmt::format("report --results {}/results.json", dir.string())).code, 2);  // no --out
  EXPECT_EQ(topoctl_run(
                fmt::format("report --results {}/results.json --out {} --picture ../x.svg", dir.string(), out.string()))
                .code,
            2);
  Ran help = topoctl_run("report --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_TRUE(contains(help.out, "--results"));
  std::filesystem::remove_all(dir);
}

// On a fabric with NVLink domains the report compares topo-aware with
// topology/block too: the domains' table, the goals against block
// (segments, free whole domains; no spine goal), and the figures survive
// the results JSON.
TEST(Report, JudgesTopoAwareAgainstBlockOnNvlinkDomains) {
  Comparison c = sample();
  c.policies.erase(c.policies.begin());  // tree, topo-aware
  PolicyOutcome block = c.policies[0];
  block.policy = "block";
  block.spine_ring_edges = 0;
  auto figures = [](double free_mean, int free_min, long split) {
    DomainFigures d;
    d.domains = 16;
    d.decisions = 100;
    d.mean_free_whole_domains = free_mean;
    d.min_free_whole_domains = free_min;
    d.mean_largest_free_block = 12.5;
    d.segmented_jobs = 20;
    d.segments = 50;
    d.segments_split = split;
    d.cpu_only_jobs = 9;
    d.cpu_only_jobs_in_domains = 4;
    return d;
  };
  c.policies[0].nvlink = figures(1.5, 0, 17);  // tree
  block.nvlink = figures(2.25, 1, 3);
  c.policies[1].nvlink = figures(3.0, 1, 0);  // topo-aware
  c.policies.insert(c.policies.begin() + 1, block);
  c.policies[2].jobs[0].segment = 2;
  c.policies[2].jobs[0].segments_split = 1;
  c.policies[2].jobs[1].cpu_only = true;

  c.policies[1].scheduler["placement_mean_us"] = 1;
  c.policies[2].scheduler["placement_mean_us"] = 9;
  std::vector<GoalVerdict> goals = judge_goals(c.policies[2], c.policies[1]);
  EXPECT_EQ(goal(goals, "spines"), nullptr);
  EXPECT_EQ(goal(goals, "scheduler time"), nullptr);
  ASSERT_NE(goal(goals, "segments split"), nullptr);
  EXPECT_TRUE(goal(goals, "segments split")->met);
  EXPECT_EQ(goal(goals, "segments split")->measured, "0 of 50 (block 3 of 50)");
  ASSERT_NE(goal(goals, "free whole"), nullptr);
  EXPECT_TRUE(goal(goals, "free whole")->met);
  EXPECT_EQ(goal(goals, "free whole")->measured, "3.00 vs 2.25 (minimum 1 vs 1)");
  EXPECT_TRUE(contains(goal(goals, "excess")->goal, "block's"));
  PolicyOutcome fragmenting = c.policies[2];
  fragmenting.nvlink.mean_free_whole_domains = 2;
  fragmenting.nvlink.segments_split = 2;
  goals = judge_goals(fragmenting, c.policies[1]);
  EXPECT_FALSE(goal(goals, "segments split")->met);
  EXPECT_FALSE(goal(goals, "free whole")->met);
  EXPECT_TRUE(contains(goal(goals, "free whole")->measured, "short by 0.25"));
  // Against tree the spines still count.
  EXPECT_NE(goal(judge_goals(c.policies[2], c.policies[0]), "spines"), nullptr);

  std::string md = report_markdown(std::span<const Comparison>(&c, 1), "");
  EXPECT_TRUE(contains(md, "# topo-aware against Slurm's topology/tree and topology/block")) << md;
  EXPECT_TRUE(contains(md, "### topo-aware against block")) << md;
  EXPECT_TRUE(contains(md, "### Goals against topology/block")) << md;
  EXPECT_TRUE(contains(md, "### Goals against topology/tree")) << md;
  EXPECT_TRUE(contains(md, "| block | 16 | 100 | 2.25 | 1 | 12.50 | 3 of 50 | 20 | 9 (4) |")) << md;
  EXPECT_TRUE(contains(md, "| segments split across NVLink domains: none | 0 of 50 (block 3 of 50) | pass |")) << md;
  // Without domains, no domain table.
  EXPECT_FALSE(
      contains(report_markdown(std::span<const Comparison>(std::vector<Comparison>{sample()}), ""), "NVLink domains"));

  nlohmann::json j = topoctl::to_json(c);
  EXPECT_FALSE(topoctl::to_json(sample())["policies"]["tree"].contains("nvlink"));
  Comparison back = topoctl::comparison_from_json(nlohmann::json::parse(j.dump()), "results.json");
  ASSERT_EQ(back.policies.size(), 3u);
  EXPECT_EQ(back.policies[1].policy, "block");
  for (size_t i = 0; i < 3; ++i) {
    const DomainFigures &a = back.policies[i].nvlink, &b = c.policies[i].nvlink;
    EXPECT_EQ(a.domains, b.domains);
    EXPECT_EQ(a.decisions, b.decisions);
    EXPECT_EQ(a.mean_free_whole_domains, b.mean_free_whole_domains);
    EXPECT_EQ(a.min_free_whole_domains, b.min_free_whole_domains);
    EXPECT_EQ(a.mean_largest_free_block, b.mean_largest_free_block);
    EXPECT_EQ(a.segmented_jobs, b.segmented_jobs);
    EXPECT_EQ(a.segments, b.segments);
    EXPECT_EQ(a.segments_split, b.segments_split);
    EXPECT_EQ(a.cpu_only_jobs, b.cpu_only_jobs);
    EXPECT_EQ(a.cpu_only_jobs_in_domains, b.cpu_only_jobs_in_domains);
  }
  EXPECT_EQ(back.policies[2].jobs[0].segment, 2);
  EXPECT_EQ(back.policies[2].jobs[0].segments_split, 1);
  EXPECT_TRUE(back.policies[2].jobs[1].cpu_only);
  EXPECT_FALSE(back.policies[2].jobs[0].cpu_only);
  // A bad figure names its key.
  j["policies"]["block"]["nvlink"]["segments_split"] = -1;
  try {
    topoctl::comparison_from_json(j, "r.json");
    ADD_FAILURE() << "a negative count was read";
  } catch (const ParseError& e) {
    EXPECT_TRUE(contains(e.what(), "policies.block.nvlink.segments_split")) << e.what();
  }
}

}  // namespace
}  // namespace topo
