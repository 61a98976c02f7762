#include "simulation/report.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace topo {
namespace {

constexpr std::string_view kTopoAware = "topo-aware";
constexpr std::string_view kTree = "tree";
constexpr std::string_view kBlock = "block";
constexpr std::string_view kLinear = "linear";

// The goals against topology/tree (and topology/block, on a fabric with
// NVLink domains).
constexpr double kExcessReductionGoal = 50;     // % lower: at most half of the reference's
constexpr double kP95Goal = 1.10;               // topo-aware's p95 AllReduce slowdown at most
constexpr double kSpineEdgeReductionGoal = 50;  // % fewer
constexpr double kMakespanToleranceGoal = 2;    // % either way
constexpr double kSchedulerRatioGoal = 2;       // times the reference's
// Below this mean excess tree is at the ideal, and a relative cut of noise
// says nothing: the goal is then met when topo-aware is there too.
constexpr double kNegligibleExcess = 0.001;

const PolicyOutcome* find_policy(const Comparison& run, std::string_view name) {
  for (const PolicyOutcome& p : run.policies)
    if (p.policy == name) return &p;
  return nullptr;
}

std::string slowdown_text(double v) { return std::isfinite(v) ? fmt::format("{:.3f}", v) : "inf"; }

// An excess over the ideal: small ones keep two significant digits.
std::string excess_text(double v) {
  if (!std::isfinite(v)) return "inf";
  if (v == 0 || std::abs(v) >= 0.01) return fmt::format("{:.3f}", v);
  return fmt::format("{:.2g}", v);
}

std::string seconds_text(double s) {
  if (!std::isfinite(s)) return "inf";
  if (std::abs(s) < 120) return fmt::format("{:.1f} s", s);
  if (std::abs(s) < 2 * 3600) return fmt::format("{:.1f} min", s / 60);
  return fmt::format("{:.2f} h", s / 3600);
}

std::string percent_text(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

std::string figure_text(double v) {
  if (!std::isfinite(v)) return "inf";
  if (v == std::round(v) && std::abs(v) < 1e12) return fmt::format("{:.0f}", v);
  if (std::abs(v) >= 1) return fmt::format("{:.1f}", v);
  return fmt::format("{:.3g}", v);
}

std::string change_text(std::optional<double> pct) { return pct ? fmt::format("{:+.1f}%", *pct) : "n/a"; }

// Markdown table cells must not break the table.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out;
}

// The scheduler figure both outcomes carry that best stands for job_test
// time: the select plugin's own timing of run-now tests, then slurmctld's
// main scheduling cycle, then the simulator's placement call. Nothing else
// (an RPC's time says nothing about placement).
std::optional<std::string> common_scheduler_key(const PolicyOutcome& a, const PolicyOutcome& b) {
  for (std::string_view key : {"job_test_mean_us", "sdiag_main_mean_cycle_us", "placement_mean_us"})
    if (a.scheduler.contains(std::string(key)) && b.scheduler.contains(std::string(key))) return std::string(key);
  return std::nullopt;
}

double excess(double slowdown) { return slowdown - 1; }

}  // namespace

std::optional<double> percent_change(double value, double reference) {
  if (!std::isfinite(value) || !std::isfinite(reference) || reference == 0) return std::nullopt;
  return 100 * (value - reference) / reference;
}

namespace {

// A goal of cutting a figure by at least `goal` percent against the reference's,
// `pct` the change from the reference's: met or short by how many points, worded
// with `words` (less, more) and the two figures. Equal figures are a 0.0%
// cut, never "-0.0%".
void judge_reduction(GoalVerdict& g, double pct, double goal, std::pair<std::string_view, std::string_view> words,
                     const std::string& figures) {
  g.met = -pct >= goal;
  g.measured = fmt::format("{:.1f}% {} ({})", std::abs(pct), pct <= 0 ? words.first : words.second, figures);
  if (!g.met) g.measured += fmt::format("; short of the goal by {:.1f} points", goal + pct);
}

// The mean excess over the ideal: every job an allreduce job, its
// AllReduce; a mix, every profile.
GoalVerdict excess_goal(const PolicyOutcome& topo_aware, const PolicyOutcome& ref) {
  GoalVerdict g;
  bool mixed =
      topo_aware.profiles.size() > 1 || (topo_aware.profiles.size() == 1 && !topo_aware.profiles.contains("allreduce"));
  g.goal = fmt::format("mean {} excess over ideal (slowdown - 1) at least {:.0f}% lower than {}'s",
                       mixed ? "slowdown (all profiles)" : "AllReduce", kExcessReductionGoal, ref.policy);
  double mine = excess(mixed ? topo_aware.mean_slowdown : topo_aware.mean_allreduce_slowdown),
         theirs = excess(mixed ? ref.mean_slowdown : ref.mean_allreduce_slowdown);
  if (std::isfinite(mine) && std::isfinite(theirs) && theirs < kNegligibleExcess) {
    // The reference is at the ideal already: there is nothing to cut by a quarter.
    g.met = mine < kNegligibleExcess;
    g.measured = fmt::format("{}'s is negligible ({} vs {}, below {})", ref.policy, excess_text(mine),
                             excess_text(theirs), kNegligibleExcess);
  } else if (std::optional<double> pct = percent_change(mine, theirs)) {
    judge_reduction(g, *pct, kExcessReductionGoal, {"lower", "higher"},
                    fmt::format("{} vs {}", excess_text(mine), excess_text(theirs)));
  } else if (!std::isfinite(theirs) && std::isfinite(mine)) {
    g.met = true;
    g.measured = fmt::format("{}'s is infinite (a full cable), topo-aware's {:.3f}", ref.policy, mine);
  } else if (!std::isfinite(mine)) {
    g.met = false;
    g.measured = "topo-aware's is infinite (a full cable)";
  } else {  // both infinite
    g.met = false;
    g.measured = "both infinite (full cables)";
  }
  return g;
}

GoalVerdict spine_edge_goal(const PolicyOutcome& topo_aware, const PolicyOutcome& ref) {
  GoalVerdict g;
  g.goal = fmt::format("ring edges over spines at least {:.0f}% fewer than {}'s", kSpineEdgeReductionGoal, ref.policy);
  double mine = static_cast<double>(topo_aware.spine_ring_edges), theirs = static_cast<double>(ref.spine_ring_edges);
  if (std::optional<double> pct = percent_change(mine, theirs)) {
    judge_reduction(g, *pct, kSpineEdgeReductionGoal, {"fewer", "more"},
                    fmt::format("{} vs {}", topo_aware.spine_ring_edges, ref.spine_ring_edges));
  } else {
    g.met = mine == 0;
    g.measured = fmt::format("{} vs {}", topo_aware.spine_ring_edges, ref.spine_ring_edges);
  }
  return g;
}

GoalVerdict p95_goal(const PolicyOutcome& topo_aware, const PolicyOutcome& ref) {
  GoalVerdict g;
  g.goal = fmt::format("p95 AllReduce slowdown at most {:.2f}", kP95Goal);
  g.met = topo_aware.p95_allreduce_slowdown <= kP95Goal;
  g.measured =
      fmt::format("{:.3f} ({} {:.3f})", topo_aware.p95_allreduce_slowdown, ref.policy, ref.p95_allreduce_slowdown);
  if (!g.met) g.measured += fmt::format("; over by {:.3f}", topo_aware.p95_allreduce_slowdown - kP95Goal);
  return g;
}

// `what` (makespan, utilization) within the tolerance of `ref`'s, either way.
GoalVerdict within_goal(std::string_view what, std::string_view ref, double mine, double theirs,
                        std::string (*text)(double)) {
  GoalVerdict g;
  g.goal = fmt::format("{} within {:.0f}% of {}'s", what, kMakespanToleranceGoal, ref);
  if (std::optional<double> pct = percent_change(mine, theirs)) {
    g.met = std::abs(*pct) <= kMakespanToleranceGoal;
    g.measured = fmt::format("{:+.2f}% ({} vs {})", *pct, text(mine), text(theirs));
    if (!g.met) g.measured += fmt::format("; outside by {:.2f} points", std::abs(*pct) - kMakespanToleranceGoal);
  } else {
    g.met = mine == theirs;
    g.measured = fmt::format("{} vs {}", text(mine), text(theirs));
  }
  return g;
}

GoalVerdict scheduler_goal(const PolicyOutcome& topo_aware, const PolicyOutcome& ref, const std::string& key) {
  GoalVerdict g;
  g.goal = fmt::format("scheduler time ({}) at most {:.0f}x {}'s", key, kSchedulerRatioGoal, ref.policy);
  double mine = topo_aware.scheduler.at(key), theirs = ref.scheduler.at(key);
  if (theirs > 0 && std::isfinite(theirs) && std::isfinite(mine)) {
    double ratio = mine / theirs;
    g.met = ratio <= kSchedulerRatioGoal;
    g.measured = fmt::format("{:.2f}x ({} vs {})", ratio, figure_text(mine), figure_text(theirs));
    if (!g.met) g.measured += fmt::format("; over by {:.2f}x", ratio - kSchedulerRatioGoal);
  } else {
    g.met = mine <= theirs;
    g.measured = fmt::format("{} vs {}", figure_text(mine), figure_text(theirs));
  }
  return g;
}

// Segments split across NVLink domains: none.
GoalVerdict segments_goal(const PolicyOutcome& topo_aware, const PolicyOutcome& ref) {
  GoalVerdict g;
  g.goal = "segments split across NVLink domains: none";
  const DomainFigures &mine = topo_aware.nvlink, &theirs = ref.nvlink;
  g.met = mine.segments_split == 0;
  g.measured = fmt::format("{} of {} ({} {} of {})", mine.segments_split, mine.segments, ref.policy,
                           theirs.segments_split, theirs.segments);
  return g;
}

// Whole domains left free for large jobs, on average over the decisions.
GoalVerdict free_domains_goal(const PolicyOutcome& topo_aware, const PolicyOutcome& ref) {
  GoalVerdict g;
  g.goal = fmt::format("free whole NVLink domains after each decision, on average, no fewer than {}'s", ref.policy);
  const DomainFigures &mine = topo_aware.nvlink, &theirs = ref.nvlink;
  g.met = mine.mean_free_whole_domains >= theirs.mean_free_whole_domains;
  g.measured = fmt::format("{:.2f} vs {:.2f} (minimum {} vs {})", mine.mean_free_whole_domains,
                           theirs.mean_free_whole_domains, mine.min_free_whole_domains, theirs.min_free_whole_domains);
  if (!g.met)
    g.measured += fmt::format("; short by {:.2f}", theirs.mean_free_whole_domains - mine.mean_free_whole_domains);
  return g;
}

}  // namespace

std::vector<GoalVerdict> judge_goals(const PolicyOutcome& topo_aware, const PolicyOutcome& ref) {
  std::vector<GoalVerdict> goals;
  goals.push_back(excess_goal(topo_aware, ref));
  // topology/block's goals (issue 43) leave out the spines (the domains,
  // not the leaves, are what it is judged on) and the scheduler's time
  // (the change table still shows it).
  const bool block = ref.policy == kBlock;
  if (!block) goals.push_back(spine_edge_goal(topo_aware, ref));
  if (topo_aware.profiles.contains("allreduce")) goals.push_back(p95_goal(topo_aware, ref));
  goals.push_back(within_goal("makespan", ref.policy, topo_aware.makespan_s, ref.makespan_s, seconds_text));
  goals.push_back(
      within_goal("GPU utilization", ref.policy, topo_aware.gpu_utilization, ref.gpu_utilization, percent_text));
  if (topo_aware.nvlink.domains > 0 && ref.nvlink.domains > 0) {
    goals.push_back(segments_goal(topo_aware, ref));
    goals.push_back(free_domains_goal(topo_aware, ref));
  }
  if (std::optional<std::string> key = common_scheduler_key(topo_aware, ref); key && !block)
    goals.push_back(scheduler_goal(topo_aware, ref, *key));
  return goals;
}

namespace {

void policy_table(std::string& md, const Comparison& run) {
  md +=
      "| policy | routing | multi-host jobs | mean slowdown (all profiles) | mean AllReduce slowdown | p95 AllReduce "
      "slowdown | mean AllToAll slowdown "
      "| spine ring edges | pod ring edges | mean leaves | makespan | GPU utilization | mean wait | mean JCT | p95 JCT "
      "| rejected |\n";
  md += "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const PolicyOutcome& p : run.policies)
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2f} | {} | {} | {} | {} | {} | {} |\n",
                      cell(p.policy), cell(p.routing), p.multi_host_jobs, slowdown_text(p.mean_slowdown),
                      slowdown_text(p.mean_allreduce_slowdown), slowdown_text(p.p95_allreduce_slowdown),
                      slowdown_text(p.mean_alltoall_slowdown), p.spine_ring_edges, p.pod_ring_edges, p.mean_leaves,
                      seconds_text(p.makespan_s), percent_text(p.gpu_utilization), seconds_text(p.mean_wait_s),
                      seconds_text(p.mean_jct_s), seconds_text(p.p95_jct_s), p.rejected.size());

  std::set<std::string> profiles;
  for (const PolicyOutcome& p : run.policies)
    for (const auto& [name, summary] : p.profiles) profiles.insert(name);
  if (!profiles.empty()) {
    md +=
        "\nPer profile (each job by its own collectives, with its neighbours' traffic): mean / p95 slowdown "
        "(jobs)\n\n| policy |";
    for (const std::string& name : profiles) md += fmt::format(" {} |", cell(name));
    md += "\n|---|";
    for (size_t i = 0; i < profiles.size(); ++i) md += "---:|";
    md += "\n";
    for (const PolicyOutcome& p : run.policies) {
      md += fmt::format("| {} |", cell(p.policy));
      for (const std::string& name : profiles) {
        auto it = p.profiles.find(name);
        md += it == p.profiles.end() ? " |"
                                     : fmt::format(" {} / {} ({}) |", slowdown_text(it->second.mean_slowdown),
                                                   slowdown_text(it->second.p95_slowdown), it->second.jobs);
      }
      md += "\n";
    }
  }

  std::set<std::string> keys;
  for (const PolicyOutcome& p : run.policies)
    for (const auto& [key, value] : p.scheduler) keys.insert(key);
  if (keys.empty()) return;
  md += "\nThe scheduler's own figures:\n\n| policy |";
  for (const std::string& key : keys) md += fmt::format(" {} |", cell(key));
  md += "\n|---|";
  for (size_t i = 0; i < keys.size(); ++i) md += "---:|";
  md += "\n";
  for (const PolicyOutcome& p : run.policies) {
    md += fmt::format("| {} |", cell(p.policy));
    for (const std::string& key : keys) {
      auto it = p.scheduler.find(key);
      md += fmt::format(" {} |", it == p.scheduler.end() ? "" : figure_text(it->second));
    }
    md += "\n";
  }
}

// Multi-host jobs that started with as many hosts free as they took: every
// policy got the same hosts and chose only their ring order. What they
// carry of the excess no choice of hosts could have removed, under the
// same scheduler. Shown when the schedules say how many hosts were free.
void no_choice_table(std::string& md, const Comparison& run) {
  auto known = [](const JobOutcome& j) { return j.hosts > 1 && j.free_hosts_at_start >= 0; };
  if (std::none_of(run.policies.begin(), run.policies.end(),
                   [&](const PolicyOutcome& p) { return std::any_of(p.jobs.begin(), p.jobs.end(), known); }))
    return;
  md += fmt::format(
      "\nJobs with no choice of hosts (as many free as they took, so only their ring order was the policy's), "
      "each job by its own profile; an infinite slowdown counts above {:.2f} but not in the excess:\n\n"
      "| policy | multi-host jobs | with no choice of hosts | their share of the excess over the ideal "
      "| jobs above {:.2f} | of them with no choice |\n|---|---:|---:|---:|---:|---:|\n",
      kP95Goal, kP95Goal);
  for (const PolicyOutcome& p : run.policies) {
    int jobs = 0, no_choice = 0, above = 0, above_no_choice = 0;
    double excess_all = 0, excess_no_choice = 0;
    for (const JobOutcome& j : p.jobs) {
      if (!known(j)) continue;
      const bool had_no_choice = j.free_hosts_at_start == j.hosts;
      const double e = std::isfinite(j.allreduce_slowdown) ? excess(j.allreduce_slowdown) : 0;
      ++jobs;
      no_choice += had_no_choice;
      excess_all += e;
      excess_no_choice += had_no_choice ? e : 0;
      above += j.allreduce_slowdown > kP95Goal;
      above_no_choice += had_no_choice && j.allreduce_slowdown > kP95Goal;
    }
    if (jobs == 0) continue;
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", cell(p.policy), jobs, no_choice,
                      excess_all > 0 ? percent_text(excess_no_choice / excess_all) : "n/a", above, above_no_choice);
  }
}

void change_table(std::string& md, const PolicyOutcome& mine, const PolicyOutcome& theirs) {
  md += fmt::format("\n### topo-aware against {}\n\n", cell(theirs.policy));
  md += fmt::format("| figure | {} | topo-aware | change |\n|---|---:|---:|---:|\n", cell(theirs.policy));
  auto row = [&](std::string_view what, std::string a, std::string b, std::optional<double> pct) {
    md += fmt::format("| {} | {} | {} | {} |\n", what, a, b, change_text(pct));
  };
  double ex_mine = excess(mine.mean_allreduce_slowdown), ex_theirs = excess(theirs.mean_allreduce_slowdown);
  row("mean AllReduce excess over ideal (slowdown - 1)", excess_text(ex_theirs), excess_text(ex_mine),
      percent_change(ex_mine, ex_theirs));
  row("p95 AllReduce slowdown", slowdown_text(theirs.p95_allreduce_slowdown),
      slowdown_text(mine.p95_allreduce_slowdown),
      percent_change(mine.p95_allreduce_slowdown, theirs.p95_allreduce_slowdown));
  row("mean AllToAll slowdown", slowdown_text(theirs.mean_alltoall_slowdown),
      slowdown_text(mine.mean_alltoall_slowdown),
      percent_change(mine.mean_alltoall_slowdown, theirs.mean_alltoall_slowdown));
  row("spine ring edges", std::to_string(theirs.spine_ring_edges), std::to_string(mine.spine_ring_edges),
      percent_change(static_cast<double>(mine.spine_ring_edges), static_cast<double>(theirs.spine_ring_edges)));
  row("pod ring edges", std::to_string(theirs.pod_ring_edges), std::to_string(mine.pod_ring_edges),
      percent_change(static_cast<double>(mine.pod_ring_edges), static_cast<double>(theirs.pod_ring_edges)));
  row("mean leaves", fmt::format("{:.2f}", theirs.mean_leaves), fmt::format("{:.2f}", mine.mean_leaves),
      percent_change(mine.mean_leaves, theirs.mean_leaves));
  row("makespan", seconds_text(theirs.makespan_s), seconds_text(mine.makespan_s),
      percent_change(mine.makespan_s, theirs.makespan_s));
  row("GPU utilization", percent_text(theirs.gpu_utilization), percent_text(mine.gpu_utilization),
      percent_change(mine.gpu_utilization, theirs.gpu_utilization));
  row("mean wait", seconds_text(theirs.mean_wait_s), seconds_text(mine.mean_wait_s),
      percent_change(mine.mean_wait_s, theirs.mean_wait_s));
  row("mean job completion time (wait + run)", seconds_text(theirs.mean_jct_s), seconds_text(mine.mean_jct_s),
      percent_change(mine.mean_jct_s, theirs.mean_jct_s));
  row("p95 job completion time", seconds_text(theirs.p95_jct_s), seconds_text(mine.p95_jct_s),
      percent_change(mine.p95_jct_s, theirs.p95_jct_s));
  if (std::optional<std::string> key = common_scheduler_key(mine, theirs))
    row(cell(*key), figure_text(theirs.scheduler.at(*key)), figure_text(mine.scheduler.at(*key)),
        percent_change(mine.scheduler.at(*key), theirs.scheduler.at(*key)));
}

// On a fabric with NVLink domains: what each policy left of them.
void domain_table(std::string& md, const Comparison& run) {
  if (std::none_of(run.policies.begin(), run.policies.end(),
                   [](const PolicyOutcome& p) { return p.nvlink.domains > 0; }))
    return;
  md +=
      "\nNVLink domains, after each job's start (a placement decision): domains none of whose hosts runs a job, "
      "and the most free hosts in one domain; segments (every segment-size consecutive hosts of a ring) split "
      "across domains; CPU-only jobs and those holding hosts of a domain:\n\n"
      "| policy | domains | decisions | free whole domains, mean | minimum | largest free block, mean | segments "
      "split | segmented jobs | CPU-only jobs (in domains) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const PolicyOutcome& p : run.policies) {
    const DomainFigures& d = p.nvlink;
    md += fmt::format("| {} | {} | {} | {:.2f} | {} | {:.2f} | {} of {} | {} | {} ({}) |\n", cell(p.policy), d.domains,
                      d.decisions, d.mean_free_whole_domains, d.min_free_whole_domains, d.mean_largest_free_block,
                      d.segments_split, d.segments, d.segmented_jobs, d.cpu_only_jobs, d.cpu_only_jobs_in_domains);
  }
}

void goal_table(std::string& md, const PolicyOutcome& mine, const PolicyOutcome& ref, std::string_view plugin) {
  md += fmt::format("\n### Goals against {}\n\n| goal | measured | verdict |\n|---|---|---|\n", plugin);
  for (const GoalVerdict& g : judge_goals(mine, ref))
    md += fmt::format("| {} | {} | {} |\n", cell(g.goal), cell(g.measured), g.met ? "pass" : "**miss**");
}

}  // namespace

std::string report_markdown(std::span<const Comparison> runs, std::string_view picture_file) {
  const bool blocks = std::any_of(runs.begin(), runs.end(), [](const Comparison& r) { return find_policy(r, kBlock); });
  std::string md = fmt::format("# topo-aware against Slurm's topology/tree{}\n\n", blocks ? " and topology/block" : "");
  md +=
      "Slowdown is a job's collective time over the ideal: the same hosts alone on a non-blocking fabric "
      "(AllReduce in the job's ring order, judged with the traffic of the jobs running beside it and "
      "weighted by time; AllToAll alone). Slowdowns and leaves are over multi-host jobs; ring edges are "
      "summed over jobs. Changes are topo-aware's against the reference, in percent of the reference.\n\n";
  const bool domains = std::any_of(runs.begin(), runs.end(), [](const Comparison& r) {
    return std::any_of(r.policies.begin(), r.policies.end(),
                       [](const PolicyOutcome& p) { return p.nvlink.domains > 0; });
  });
  if (domains)
    md +=
        "On NVLink domains, ring edges between two hosts of one domain run over NVLink, in a job's time and its "
        "ideal alike, and a job with segments also runs a tensor-parallel AllReduce inside each segment: over "
        "NVLink when the segment is whole, over the scale-out when it is split (docs/simulation.md, \"On NVLink "
        "domains\").\n\n";
  if (!picture_file.empty())
    md += fmt::format("![AllReduce slowdown over the ideal, CDF per policy]({})\n\n", picture_file);

  for (const Comparison& run : runs) {
    md += fmt::format("## {}\n\n", run.title.empty() ? "replay" : run.title);
    md += fmt::format("Fabric: `{}`  \nTrace: `{}`\n\n", run.fabric, run.trace);
    policy_table(md, run);
    domain_table(md, run);
    no_choice_table(md, run);

    const PolicyOutcome* mine = find_policy(run, kTopoAware);
    const PolicyOutcome* tree = find_policy(run, kTree);
    const PolicyOutcome* linear = find_policy(run, kLinear);
    const PolicyOutcome* block = find_policy(run, kBlock);
    if (!mine) {
      md += "\nNo topo-aware policy in this run: nothing to compare.\n\n";
      continue;
    }
    if (block) change_table(md, *mine, *block);
    if (tree) change_table(md, *mine, *tree);
    if (linear) change_table(md, *mine, *linear);
    if (block) goal_table(md, *mine, *block, "topology/block");
    if (tree) goal_table(md, *mine, *tree, "topology/tree");
    md += "\n";
  }
  return md;
}

std::vector<CdfPanel> slowdown_cdfs(std::span<const Comparison> runs) {
  std::vector<CdfPanel> panels;
  for (const Comparison& run : runs) {
    CdfPanel panel{run.title.empty() ? "replay" : run.title, run.fabric, run.trace, {}};
    for (const PolicyOutcome& p : run.policies) {
      CdfLine line;
      line.policy = p.policy;
      for (const JobOutcome& j : p.jobs) {
        if (j.hosts <= 1) continue;
        if (std::isfinite(j.allreduce_slowdown))
          line.finite.push_back(std::max(1.0, j.allreduce_slowdown));
        else
          ++line.infinite;
      }
      std::sort(line.finite.begin(), line.finite.end());
      panel.lines.push_back(std::move(line));
    }
    panels.push_back(std::move(panel));
  }
  return panels;
}

}  // namespace topo
