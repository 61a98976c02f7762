// The report's slowdown CDF as a Scene: a panel per run (x = AllReduce time
// over the ideal for multi-host jobs, from 1 to the largest finite value;
// linear up to 3, logarithmic beyond; y = fraction of jobs at or below it),
// a step line per policy with a legend. Jobs with an infinite slowdown keep
// their policy's line below 1 and are counted in the legend. Drawn by
// render() like the fabric, laid out by the builder (Layout::Pinned).
#pragma once

#include <span>

#include "simulation/report.h"
#include "tools/view/scene.h"

namespace topo::view {

Scene slowdown_cdf_scene(std::span<const CdfPanel> panels);

// A fixed colour per known policy (topo-aware green, tree red, linear
// blue), so pictures compare at a glance; others by their index.
std::string policy_colour(std::string_view policy, size_t index);

}  // namespace topo::view
