#include "placement/defer.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace topo {

bool defer(const DeferRule& rule, const Placement& placement, double idle_slowdown, double waited_s,
           double time_limit_s) {
  if (!rule.enabled() || !placement.feasible || placement.hosts.size() < 2) return false;
  if (placement.score.ideal_s <= 0) return false;  // no estimate (a full cable's is infinite, and counts)
  if (placement.score.slowdown <= rule.above_slowdown * std::max(idle_slowdown, 1.0)) return false;
  return waited_s < rule.max_wait_share * time_limit_s;
}

std::string defer_rule_problem(const DeferRule& rule) {
  if (rule.above_slowdown != 0 && !(rule.above_slowdown > 1 && std::isfinite(rule.above_slowdown)))
    return fmt::format("a slowdown to defer above must be 0 (never) or above 1, not {}", rule.above_slowdown);
  if (!(rule.max_wait_share > 0 && std::isfinite(rule.max_wait_share)))
    return fmt::format("the longest wait must be a positive share of the time limit, not {}", rule.max_wait_share);
  return "";
}

}  // namespace topo
