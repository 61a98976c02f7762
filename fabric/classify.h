// Classification of a fabric from its shape.
//
// Levels come from switch-hop distance to the nearest HCA (leaf 0, spine 1,
// core 2+); pods are the connected groups of leaves and spines once the core
// is taken away; a cable's tier is the pair of levels it joins, and it is
// degraded when narrower or slower than the most common cable of its tier.
// Switch names are never consulted. FabricBuilder::finish() runs this; it is
// public so that tests can state its rules directly.
#pragma once

#include "fabric/fabric.h"

namespace topo {

void classify(Fabric& fabric);

// A cable's ends, the lower one first (HCA, then leaf, spine, core; by name
// within a level), so that a cable reads the same whichever end a source
// saw it from.
struct LinkEnds {
  NodeId lower = 0, upper = 0;
  int lower_port = 0, upper_port = 0;
};
LinkEnds ordered_ends(const Fabric& fabric, LinkId e);

// "leaf02:9 <-> spine01:3": a cable named by its ends, as faults and diffs show it.
std::string describe_link(const Fabric& fabric, LinkId e);

}  // namespace topo
