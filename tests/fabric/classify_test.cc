// Classification from shape: levels, pods, rails, oversubscription, faults.
#include "fabric/classify.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "common/error.h"
#include "fabric/synthetic.h"

namespace topo {
namespace {

const Node& by_name(const Fabric& f, std::string_view name) {
  for (NodeId v : f.switches())
    if (f.node(v).name == name) return f.node(v);
  throw std::runtime_error("no switch " + std::string(name));
}

int count_faults(const Fabric& f, FaultKind kind) {
  return static_cast<int>(
      std::count_if(f.faults().begin(), f.faults().end(), [&](const Fault& x) { return x.kind == kind; }));
}

TEST(Classify, LeafSpineLevelsAndOversubscription) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  const FabricSummary& s = f.summary();
  EXPECT_EQ(s.hosts, 32);
  EXPECT_EQ(s.leaves, 4);
  EXPECT_EQ(s.spines, 2);
  EXPECT_EQ(s.cores, 0);
  EXPECT_EQ(s.pods, 1);
  EXPECT_EQ(s.rails, 1);
  EXPECT_FALSE(s.rail_optimized);
  EXPECT_EQ(s.links, 32 + 4 * 4);
  for (NodeId leaf : f.switches_at(Level::Leaf)) {
    EXPECT_DOUBLE_EQ(f.node(leaf).down_gbps, 8 * 400.0);
    EXPECT_DOUBLE_EQ(f.node(leaf).up_gbps, 4 * 400.0);
    EXPECT_DOUBLE_EQ(f.node(leaf).oversubscription(), 2.0);
    EXPECT_EQ(f.hosts_under(leaf).size(), 8u);
  }
  EXPECT_DOUBLE_EQ(by_name(f, "spine01").oversubscription(), 0.0);
  EXPECT_TRUE(f.faults().empty());
}

TEST(Classify, LevelsComeFromShapeNotNames) {
  // A switch called "spine" with hosts on it is a leaf, and vice versa.
  FabricBuilder b;
  b.add_switch("spine-ish", "spine-ish");
  b.add_switch("leaf-ish", "leaf-ish");
  b.add_hca("h1", "node1 mlx5_0");
  b.add_hca("h2", "node2 mlx5_0");
  b.connect("h1", 1, "spine-ish", 1, {});
  b.connect("h2", 1, "spine-ish", 2, {});
  b.connect("spine-ish", 10, "leaf-ish", 1, {});
  Fabric f = std::move(b).finish();
  EXPECT_EQ(by_name(f, "spine-ish").level, Level::Leaf);
  EXPECT_EQ(by_name(f, "leaf-ish").level, Level::Spine);
}

TEST(Classify, HeightCountsEveryStageAboveTheLeaves) {
  // A chain five switches high: level stops at Core, height keeps counting
  // (the topology.conf writer lists switches by it). A switch no leaf
  // reaches has none.
  FabricBuilder b;
  b.add_hca("h1", "node1 mlx5_0");
  for (const char* s : {"s0", "s1", "s2", "s3", "s4", "alone"}) b.add_switch(s, s);
  b.connect("h1", 1, "s0", 1, {});
  b.connect("s0", 2, "s1", 1, {});
  b.connect("s1", 2, "s2", 1, {});
  b.connect("s2", 2, "s3", 1, {});
  b.connect("s3", 2, "s4", 1, {});
  b.connect("s4", 2, "s1", 3, {});  // a shortcut: s4 is two hops up, not four
  Fabric f = std::move(b).finish();
  EXPECT_EQ(by_name(f, "s0").height, 0);
  EXPECT_EQ(by_name(f, "s1").height, 1);
  EXPECT_EQ(by_name(f, "s2").height, 2);
  EXPECT_EQ(by_name(f, "s3").height, 3);
  EXPECT_EQ(by_name(f, "s4").height, 2);
  EXPECT_EQ(by_name(f, "s3").level, Level::Core);
  EXPECT_EQ(by_name(f, "alone").height, -1);
  EXPECT_EQ(by_name(f, "alone").level, Level::Unknown);
  for (NodeId v = 0; v < f.node_count(); ++v)
    if (f.node(v).kind != NodeKind::Switch) EXPECT_EQ(f.node(v).height, -1) << f.node(v).name;
}

TEST(Classify, DegradedUplinkIsFoundAndLowersUplinkBandwidth) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,degrade=leaf02:9");
  ASSERT_EQ(count_faults(f, FaultKind::DegradedLink), 1);
  const Fault& fault = f.faults().front();
  EXPECT_NE(fault.subject.find("leaf02:9"), std::string::npos);
  EXPECT_NE(fault.detail.find("1xNDR"), std::string::npos);
  EXPECT_NE(fault.detail.find("4xNDR"), std::string::npos);
  EXPECT_DOUBLE_EQ(by_name(f, "leaf02").up_gbps, 3 * 400.0 + 100.0);
  EXPECT_DOUBLE_EQ(by_name(f, "leaf01").up_gbps, 4 * 400.0);
}

TEST(Classify, UnpluggedUplinkIsMissingAndUnequal) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,unplug=leaf03:9");
  EXPECT_EQ(count_faults(f, FaultKind::MissingUplinks), 1);
  EXPECT_EQ(count_faults(f, FaultKind::UnequalUplinks), 1);
  EXPECT_EQ(count_faults(f, FaultKind::DegradedLink), 0);
}

// A cable that is there but Down (synthetic `down=`): listed with its
// state, an inactive link, carrying nothing; unlike unplug= the cable stays.
TEST(Classify, ADownCableIsListedAsInactive) {
  const std::string spec = "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2";
  Fabric f = make_synthetic(spec + ",down=leaf03:9");
  EXPECT_EQ(f.cables().size(), make_synthetic(spec).cables().size());
  ASSERT_EQ(count_faults(f, FaultKind::InactiveLink), 1);
  const Fault& inactive = *std::find_if(f.faults().begin(), f.faults().end(),
                                        [](const Fault& x) { return x.kind == FaultKind::InactiveLink; });
  EXPECT_NE(inactive.subject.find("leaf03:9"), std::string::npos) << inactive.subject;
  EXPECT_EQ(inactive.detail, "port state is Down");
  int down = 0;
  for (LinkId e : f.cables()) down += f.link(e).state == PortState::Down && f.link(e).gbps() == 0;
  EXPECT_EQ(down, 1);
  EXPECT_THROW(make_synthetic(spec + ",down=leaf03:99"), FabricError);
}

TEST(Classify, HostWithoutCableIsUnreachable) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=1,unplug=leaf01:1");
  ASSERT_EQ(count_faults(f, FaultKind::UnreachableHost), 1);
  EXPECT_EQ(f.faults().back().subject, "gpu001");
}

TEST(Classify, IsolatedIslandOfHostsIsUnreachable) {
  FabricBuilder b;
  for (int i = 0; i < 3; ++i) b.add_hca("a" + std::to_string(i), "main" + std::to_string(i) + " mlx5_0");
  b.add_hca("x", "island mlx5_0");
  b.add_switch("s1", "s1");
  b.add_switch("s2", "s2");
  for (int i = 0; i < 3; ++i) b.connect("a" + std::to_string(i), 1, "s1", i + 1, {});
  b.connect("x", 1, "s2", 1, {});
  Fabric f = std::move(b).finish();
  ASSERT_EQ(count_faults(f, FaultKind::UnreachableHost), 1);
  EXPECT_EQ(f.faults().front().subject, "island");
}

TEST(Classify, ThreeTierClosHasPodsAndCore) {
  Fabric f = make_synthetic("clos3:pods=3,leaves_per_pod=2,hosts_per_leaf=4");
  EXPECT_EQ(f.summary().leaves, 6);
  EXPECT_EQ(f.summary().spines, 6);
  EXPECT_EQ(f.summary().cores, 2);
  EXPECT_EQ(f.summary().pods, 3);
  EXPECT_EQ(by_name(f, "leaf01").pod, by_name(f, "leaf02").pod);
  EXPECT_NE(by_name(f, "leaf01").pod, by_name(f, "leaf03").pod);
  EXPECT_EQ(by_name(f, "core01").pod, -1);
  EXPECT_DOUBLE_EQ(by_name(f, "spine01").oversubscription(), 1.0);
  EXPECT_TRUE(f.faults().empty());
}

TEST(Classify, FatTreeCounts) {
  Fabric f = make_synthetic("fattree:k=4");
  EXPECT_EQ(f.summary().hosts, 16);
  EXPECT_EQ(f.summary().leaves, 8);
  EXPECT_EQ(f.summary().spines, 8);
  EXPECT_EQ(f.summary().cores, 4);
  EXPECT_EQ(f.summary().pods, 4);
  EXPECT_TRUE(f.faults().empty());
}

TEST(Classify, RailOptimizedFabric) {
  Fabric f = make_synthetic("railopt:hosts=16,rails=4,spines=2");
  EXPECT_EQ(f.summary().hosts, 16);
  EXPECT_EQ(f.summary().hcas, 64);
  EXPECT_EQ(f.summary().rails, 4);
  EXPECT_TRUE(f.summary().rail_optimized);
  EXPECT_EQ(f.summary().leaves, 4);
  NodeId host = *f.find_host("gpu005");
  EXPECT_EQ(f.leaves_of(host).size(), 4u);
  std::vector<NodeId> hcas = f.hcas_of(host);
  ASSERT_EQ(hcas.size(), 4u);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(f.node(hcas[r]).rail, r);
}

TEST(Classify, InterleavedNamingPutsConsecutiveHostsOnDifferentLeaves) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=2,spines=1,naming=interleaved");
  auto leaf_of = [&](std::string_view host) { return f.leaves_of(*f.find_host(host)).front(); };
  EXPECT_NE(leaf_of("gpu001"), leaf_of("gpu002"));
  EXPECT_EQ(leaf_of("gpu001"), leaf_of("gpu005"));
}

TEST(Synthetic, BadSpecsNameTheProblem) {
  auto message = [](std::string_view spec) {
    try {
      make_synthetic(spec);
    } catch (const FabricError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("torus:x=1").find("unknown shape 'torus'"), std::string::npos);
  EXPECT_NE(message("leafspine:leaves=4").find("hosts_per_leaf"), std::string::npos);
  EXPECT_NE(message("leafspine:leaves=4,hosts_per_leaf=8,colour=red").find("unknown key 'colour'"), std::string::npos);
  EXPECT_NE(message("leafspine:leaves=x,hosts_per_leaf=8").find("leaves=x"), std::string::npos);
  EXPECT_NE(message("leafspine:leaves=2,hosts_per_leaf=8,degrade=leaf09:9").find("degrade=leaf09:9"),
            std::string::npos);
  EXPECT_NE(message("leafspine:leaves=2,hosts_per_leaf=6,spines=4").find("spread evenly"), std::string::npos);
  EXPECT_NE(message("fattree:k=5").find("even"), std::string::npos);
  EXPECT_NE(message("leafspine:leaves=2,hosts_per_leaf=8,rate=9xQQ").find("rate=9xQQ"), std::string::npos);
}

TEST(Fabric, SecondSightingOfACableIsMergedAndConflictsAreErrors) {
  FabricBuilder b;
  b.add_switch("s", "s");
  b.add_hca("h", "n1 mlx5_0");
  b.add_hca("g", "n2 mlx5_0");
  b.connect("h", 1, "s", 1, {});
  b.connect("s", 1, "h", 1, {});  // same cable seen from the switch
  EXPECT_THROW(b.connect("g", 1, "s", 1, {}), FabricError);
  EXPECT_THROW(b.connect("g", 1, "nowhere", 1, {}), FabricError);
  Fabric f = std::move(b).finish();
  EXPECT_EQ(f.summary().links, 1);
}

TEST(HostNaming, DefaultAndCustomPatterns) {
  auto d = HostNaming().parse("gpu017 mlx5_3");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->host, "gpu017");
  EXPECT_EQ(d->device, "mlx5_3");
  EXPECT_EQ(d->rail, 3);
  HostNaming custom(R"(^(node\d+)-(hca\d+)$)");
  auto c = custom.parse("node12-hca2");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->host, "node12");
  EXPECT_EQ(c->rail, 2);
  EXPECT_FALSE(custom.parse("switch 7"));
  EXPECT_THROW(HostNaming("(unclosed"), std::invalid_argument);
}

// Nested stars made std::regex recurse once per character until the stack
// overflowed (found by fuzzing topo_aware.conf's HostPattern); regexec
// answers. Bracket expressions and \d keep their meaning.
TEST(HostPattern, NestedStarsOnALongNameAndPosixBrackets) {
  HostPattern nested("(.*)*n");
  std::string name(100000, 'a');
  EXPECT_FALSE(nested.match_whole(name));
  name.back() = 'n';
  auto m = nested.match_whole(name);
  ASSERT_TRUE(m);
  EXPECT_EQ((*m)[0].size(), name.size());

  HostPattern p(R"(^([]a-z[:digit:]\d-]+)\.(ib\d))");
  auto q = p.search("gpu-07].ib3 rest");
  ASSERT_TRUE(q);
  EXPECT_EQ((*q)[1], "gpu-07]");
  EXPECT_EQ((*q)[2], "ib3");
  EXPECT_FALSE(HostPattern("n-(gpu[0-9]+)").match_whole("n-gpu001x"));
  EXPECT_EQ((*HostPattern("n-(gpu[0-9]+)").match_whole("n-gpu001"))[1], "gpu001");
  EXPECT_THROW(HostPattern("no-group"), std::invalid_argument);
}

}  // namespace
}  // namespace topo
