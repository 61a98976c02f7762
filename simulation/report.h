// The benchmark's report: replays of one trace under several policies, side
// by side, as a markdown page (tables, ratios of topo-aware against Slurm's
// topology/tree and cons_tres's linear choice, the goals as pass /
// miss) and the data of a picture of each job's AllReduce slowdown as a CDF
// per policy (drawn by tools/view, like every picture).
// Pure functions: outcomes in, text out; the caller writes the files.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "simulation/outcome.h"

namespace topo {

// One trace replayed on one fabric under several policies (by name:
// "linear", "tree", "topo-aware"; others are shown but not compared).
struct Comparison {
  std::string title;   // e.g. "2:1 leaf/spine, 4,096 hosts, interleaved names"
  std::string fabric;  // the synthetic spec or the cluster's name
  std::string trace;   // the trace's source
  std::vector<PolicyOutcome> policies;
};

// One of the goals for topo-aware against topology/tree.
struct GoalVerdict {
  std::string goal;      // "mean AllReduce excess over ideal at least 25% lower"
  std::string measured;  // "31.2% lower"
  bool met = false;
};

// The goals that can be judged from the two outcomes, against a reference
// policy (tree, or block on a fabric with NVLink domains): excess of the
// mean AllReduce slowdown over 1 at least 50% lower; spine ring edges at
// least 50% fewer (not against block, which is judged on the domains);
// makespan and GPU utilization within 2% (relative); when both have NVLink
// domains, no segment split across domains and free whole domains per
// decision on average no fewer than the reference's; and (not against
// block, for which the issue sets no such goal) the
// scheduler's time per decision at most 2x, judged only when both outcomes
// carry the same figure ("job_test_mean_us", the select plugin's timing of
// run-now tests, first, else slurmctld's "sdiag_main_mean_cycle_us", else
// the simulator's "placement_mean_us"). A goal whose
// reference is zero or not finite is judged from the values themselves
// (e.g. 0 spine edges against 0 passes); a mean excess of the reference's
// below 0.001 counts as the ideal, and the goal is met when topo-aware's is
// too.
std::vector<GoalVerdict> judge_goals(const PolicyOutcome& topo_aware, const PolicyOutcome& reference);

// Relative change of `value` against `reference` in percent (negative:
// lower); empty when it cannot be said (zero or infinite reference).
std::optional<double> percent_change(double value, double reference);

// The markdown page: per run a table of the policies' figures, a table of
// the scheduler's own figures when any policy has them, how many jobs had
// no choice of hosts and their share of the excess (when known), topo-aware's
// changes against block, tree and linear, the NVLink domains' figures on a
// fabric with domains, and the goals against block and tree.
// `picture_file` (e.g. "slowdown-cdf.svg") is linked as an image; empty
// leaves the link out.
std::string report_markdown(std::span<const Comparison> runs, std::string_view picture_file);

// The slowdown CDF of one policy in one run: the AllReduce time over the
// ideal of each multi-host job (at least 1), sorted, and how many jobs had
// an infinite one (a full cable), which keep the line below 1.
struct CdfLine {
  std::string policy;
  std::vector<double> finite;  // sorted ascending
  size_t infinite = 0;
  size_t count() const { return finite.size() + infinite; }
};

struct CdfPanel {
  std::string title;  // the run's title ("replay" when it has none)
  std::string fabric;
  std::string trace;
  std::vector<CdfLine> lines;  // one per policy, in the run's order
};

// A panel per run, a line per policy: what the report's CDF picture shows
// (tools/view/cdf_scene.h draws it).
std::vector<CdfPanel> slowdown_cdfs(std::span<const Comparison> runs);

}  // namespace topo
