#include "placement/defer.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace topo {

bool defer(const DeferRule& rule, const Placement& placement, const std::function<double()>& idle_slowdown,
           double deferred_s, double time_limit_s) {
  if (!rule.enabled() || !placement.feasible || placement.hosts.size() < 2) return false;
  if (placement.score.ideal_s <= 0) return false;  // no estimate (a full cable's is infinite, and counts)
  if (deferred_s >= rule.max_wait_share * time_limit_s) return false;
  // The idle fabric's slowdown is at least 1: below the rule with 1, below it with any.
  if (placement.score.slowdown <= rule.above_slowdown) return false;
  return placement.score.slowdown > rule.above_slowdown * std::max(idle_slowdown(), 1.0);
}

std::string defer_rule_problem(const DeferRule& rule) {
  if (rule.above_slowdown != 0 && !(rule.above_slowdown > 1 && std::isfinite(rule.above_slowdown)))
    return fmt::format("a slowdown to defer above must be 0 (never) or above 1, not {}", rule.above_slowdown);
  if (!(rule.max_wait_share > 0 && std::isfinite(rule.max_wait_share)))
    return fmt::format("the longest wait must be a positive share of the time limit, not {}", rule.max_wait_share);
  return "";
}

}  // namespace topo
