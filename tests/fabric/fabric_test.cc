// Fabric as a value: copies are independent, moves hand over the graph.
#include "fabric/fabric.h"

#include <utility>

#include <gtest/gtest.h>

#include "fabric/synthetic.h"

namespace topo {
namespace {

// Every cable descriptor of the fabric names its own graph's cable.
void expect_cables_index_the_graph(const Fabric& f) {
  for (size_t i = 0; i < f.cables().size(); ++i) EXPECT_EQ(f.link(f.cables()[i]).id, static_cast<int>(i));
}

TEST(Fabric, AMoveHandsOverTheGraphItself) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=4,spines=2");
  const FabricGraph* graph = &f.graph();
  size_t cables = f.cables().size(), nodes = f.node_count();
  Fabric moved = std::move(f);
  // The same graph, not a copy of it: its edge descriptors stay valid.
  EXPECT_EQ(&moved.graph(), graph);
  EXPECT_EQ(moved.cables().size(), cables);
  EXPECT_EQ(moved.node_count(), nodes);
  expect_cables_index_the_graph(moved);
  // The moved-from fabric is empty, and takes a new value.
  EXPECT_EQ(f.node_count(), 0u);  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(f.cables().empty());
  EXPECT_TRUE(f.hosts().empty());
  EXPECT_TRUE(f.switches().empty());
  EXPECT_FALSE(f.find_host("gpu001").has_value());
  EXPECT_EQ(f.summary().hosts, 0);
  EXPECT_TRUE(f.source().empty());
  f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=2,spines=1");
  EXPECT_EQ(f.hosts().size(), 4u);
  expect_cables_index_the_graph(f);
}

TEST(Fabric, ACopyIsIndependentOfItsOriginal) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=4,spines=2");
  Fabric copy = f;
  EXPECT_NE(&copy.graph(), &f.graph());
  expect_cables_index_the_graph(copy);
  copy.mark_degraded(0, "a test");
  EXPECT_TRUE(copy.link(copy.cables()[0]).degraded);
  EXPECT_FALSE(f.link(f.cables()[0]).degraded);
  const Fabric& same = copy;
  copy = same;  // self-assignment keeps the fabric
  EXPECT_EQ(copy.hosts().size(), 16u);
  expect_cables_index_the_graph(copy);
}

}  // namespace
}  // namespace topo
