// topoctl path: the cables one flow takes, under static tables and under
// adaptive routing, as users and scripts run it.
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "db/snapshot_store.h"
#include "fabric/synthetic.h"
#include "routing/route.h"
#include "tests/support/static_snapshot_db.h"
#include "tests/support/topoctl_run.h"

namespace topo {
namespace {

using nlohmann::json;
using namespace testing::cli;

class PathCli : public testing::StaticSnapshotDb {};
using testing::lid_of;

TEST_F(PathCli, StaticPathFollowsTheTablesCableByCable) {
  int64_t id = save_static(kSpec);
  Ran r = topoctl("path --from gpu001 --to gpu020 --json " + db());
  ASSERT_EQ(r.code, 0) << r.err;
  json out = json::parse(r.out);
  EXPECT_EQ(out.at("routing"), "static");
  EXPECT_EQ(out.at("from"), "gpu001");
  EXPECT_EQ(out.at("to"), "gpu020");
  EXPECT_EQ(out.at("snapshot"), id);
  EXPECT_EQ(out.at("source_hca"), "gpu001 mlx5_0");
  EXPECT_EQ(out.at("destination_hca"), "gpu020 mlx5_0");

  // The walk, read off the stored tables here: HCA, leaf01, a spine, leaf03.
  Fabric f = SnapshotStore(db_).load(id);
  const Routing& routing = f.routing();
  uint32_t lid = lid_of(f, "gpu020");
  const json& hops = out.at("hops");
  ASSERT_EQ(hops.size(), 4u) << hops.dump();
  EXPECT_EQ(hops[0].at("hca"), "gpu001 mlx5_0");
  EXPECT_EQ(hops[0].at("out_port"), 1);
  EXPECT_EQ(hops[0].at("to"), "leaf01");
  EXPECT_EQ(hops[0].at("in_port"), 1);
  NodeId at = *f.find("leaf01");
  for (size_t i = 1; i < hops.size(); ++i) {
    ASSERT_FALSE(hops[i].contains("hca"));
    EXPECT_EQ(hops[i].at("switch"), f.node(at).name) << i;
    int port = routing.out_port(static_cast<size_t>(f.switch_index(at)), lid);
    EXPECT_EQ(hops[i].at("out_port"), port) << i;
    at = f.peer(*f.cable_at(at, port), at);
    EXPECT_EQ(hops[i].at("to"), f.node(at).name) << i;
  }
  EXPECT_EQ(at, f.hcas_of(*f.find_host("gpu020"))[0]);
  EXPECT_EQ(hops[3].at("switch"), "leaf03");
  EXPECT_EQ(hops[3].at("out_port"), 4);  // gpu020 is leaf03's fourth host

  Ran text = topoctl("path --from gpu001 --to gpu020 " + db());
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("gpu001 -> gpu020  routing static  (4 cables)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("-> gpu020 mlx5_0:1"), std::string::npos) << text.out;
}

TEST_F(PathCli, AdaptivePathsAreEveryShortestUpDownPathWithItsShare) {
  Ran r = topoctl(std::string("path --from gpu001 --to gpu017 --json --synthetic ") + kSpec);
  ASSERT_EQ(r.code, 0) << r.err;
  json out = json::parse(r.out);
  EXPECT_EQ(out.at("routing"), "adaptive");
  // leaf01 spreads over its 4 uplinks, each spine over its 2 cables to leaf03.
  EXPECT_EQ(out.at("path_count"), 8);
  const json& paths = out.at("paths");
  ASSERT_EQ(paths.size(), 8u);
  double total = 0;
  std::set<std::pair<int, int>> seen;
  for (const json& p : paths) {
    total += p.at("share").get<double>();
    EXPECT_DOUBLE_EQ(p.at("share").get<double>(), 0.125);
    const json& hops = p.at("hops");
    ASSERT_EQ(hops.size(), 4u);
    EXPECT_EQ(hops[1].at("switch"), "leaf01");
    EXPECT_EQ(hops[2].at("to"), "leaf03");
    EXPECT_EQ(hops[3].at("to"), "gpu017 mlx5_0");
    seen.insert({hops[1].at("out_port").get<int>(), hops[2].at("out_port").get<int>()});
  }
  EXPECT_DOUBLE_EQ(total, 1.0);
  EXPECT_EQ(seen.size(), 8u);  // no path twice

  Ran same_leaf = topoctl(std::string("path --from gpu001 --to gpu002 --json --synthetic ") + kSpec);
  ASSERT_EQ(same_leaf.code, 0) << same_leaf.err;
  json one = json::parse(same_leaf.out);
  EXPECT_EQ(one.at("path_count"), 1);
  EXPECT_EQ(one.at("paths")[0].at("hops").size(), 2u);

  Ran limited = topoctl(std::string("path --from gpu001 --to gpu017 --max-paths 3 --synthetic ") + kSpec);
  ASSERT_EQ(limited.code, 0) << limited.err;
  EXPECT_NE(limited.out.find("(8 equal paths, the first 3 listed)"), std::string::npos) << limited.out;
}

TEST_F(PathCli, EcmpListsTheEqualCostPathsItsQpsAreHashedOnto) {
  Ran r = topoctl(std::string("path --from gpu001 --to gpu017 --routing ecmp:4 --json --synthetic ") + kSpec);
  ASSERT_EQ(r.code, 0) << r.err;
  json out = json::parse(r.out);
  EXPECT_EQ(out.at("routing"), "ecmp:4");
  EXPECT_EQ(out.at("qps"), 4);
  EXPECT_EQ(out.at("path_count"), 8);
  EXPECT_EQ(out.at("paths").size(), 8u);

  Ran text = topoctl(std::string("path --from gpu001 --to gpu017 --routing ecmp:1 --synthetic ") + kSpec);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("routing ecmp:1  (8 equal-cost paths; its one QP hashed onto one of them per run"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("adaptive"), std::string::npos) << text.out;
}

TEST_F(PathCli, AdaptiveOnAThreeTierFabricClimbsOnlyAsFarAsItMust) {
  const std::string spec = "clos3:pods=2,leaves_per_pod=2,hosts_per_leaf=4";
  Fabric f = make_synthetic(spec);
  std::vector<NodeId> pod0 = f.hosts_under(*f.find("leaf01")), pod1 = f.hosts_under(*f.find("leaf03"));
  ASSERT_FALSE(pod0.empty());
  ASSERT_FALSE(pod1.empty());
  Ran same_pod = topoctl(fmt::format("path --from {} --to {} --json --synthetic {}", f.node(pod0[0]).name,
                                     f.node(f.hosts_under(*f.find("leaf02"))[0]).name, spec));
  Ran cross = topoctl(fmt::format("path --from {} --to {} --json --max-paths 1000 --synthetic {}", f.node(pod0[0]).name,
                                  f.node(pod1[0]).name, spec));
  ASSERT_EQ(same_pod.code, 0) << same_pod.err;
  ASSERT_EQ(cross.code, 0) << cross.err;
  json within = json::parse(same_pod.out);  // the loop must not outlive the parsed document
  for (const json& p : within.at("paths")) EXPECT_EQ(p.at("hops").size(), 4u) << p.dump();
  double total = 0;
  json across = json::parse(cross.out);
  EXPECT_EQ(across.at("path_count"), across.at("paths").size());
  for (const json& p : across.at("paths")) {
    EXPECT_EQ(p.at("hops").size(), 6u) << p.dump();  // HCA, leaf, spine, core, spine, leaf
    total += p.at("share").get<double>();
  }
  EXPECT_NEAR(total, 1.0, 1e-12);
}

TEST_F(PathCli, RoutingOptionOverridesTheSnapshots) {
  save_static(kSpec);
  Ran adaptive = topoctl("path --from gpu001 --to gpu020 --routing adaptive --json " + db());
  ASSERT_EQ(adaptive.code, 0) << adaptive.err;
  EXPECT_EQ(json::parse(adaptive.out).at("routing"), "adaptive");
  EXPECT_EQ(json::parse(adaptive.out).at("path_count"), 8);

  Ran own = topoctl("path --from gpu001 --to gpu020 --routing static --json " + db());
  ASSERT_EQ(own.code, 0) << own.err;
  EXPECT_EQ(json::parse(own.out).at("hops").size(), 4u);

  Ran none = topoctl(std::string("path --from gpu001 --to gpu020 --routing static --synthetic ") + kSpec);
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("routes adaptively and carries no forwarding tables"), std::string::npos) << none.err;

  Ran bad = topoctl(std::string("path --from gpu001 --to gpu020 --routing static:bogus --synthetic ") + kSpec);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--routing static:bogus: not a routing"), std::string::npos) << bad.err;
}

TEST_F(PathCli, UnknownHostsAndUnroutedPairsAreClearErrors) {
  save_static(kSpec, [](const Fabric& f, Routing& r) {
    r.lft[f.switch_index(*f.find("leaf01"))][lid_of(f, "gpu020")] = kNoPort;
  });
  Ran unknown = topoctl("path --from gpu001 --to gpu999 " + db());
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("no host 'gpu999' in snapshot 1"), std::string::npos) << unknown.err;

  Ran same = topoctl("path --from gpu001 --to gpu001 " + db());
  EXPECT_EQ(same.code, 2);
  EXPECT_NE(same.err.find("--from and --to are both gpu001"), std::string::npos) << same.err;

  Ran hole = topoctl("path --from gpu001 --to gpu020 --json " + db());
  EXPECT_EQ(hole.code, 2);
  EXPECT_TRUE(hole.out.empty()) << hole.out;
  EXPECT_NE(hole.err.find("no route from gpu001 mlx5_0"), std::string::npos) << hole.err;
  EXPECT_NE(hole.err.find("no table entry at leaf01"), std::string::npos) << hole.err;

  // Another leaf still routes it.
  Ran other = topoctl("path --from gpu009 --to gpu020 " + db());
  EXPECT_EQ(other.code, 0) << other.err;

  Ran help = topoctl("path --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--routing"), std::string::npos);
}

TEST_F(PathCli, RailPicksTheHcaOnBothHosts) {
  const std::string spec = "railopt:hosts=16,rails=4,spines=2,hosts_per_leaf=8";
  Ran r = topoctl(fmt::format("path --from gpu001 --to gpu002 --rail 2 --json --synthetic {}", spec));
  ASSERT_EQ(r.code, 0) << r.err;
  json out = json::parse(r.out);
  EXPECT_EQ(out.at("rail"), 2);
  EXPECT_EQ(out.at("source_hca"), "gpu001 mlx5_2");
  EXPECT_EQ(out.at("destination_hca"), "gpu002 mlx5_2");
  EXPECT_EQ(out.at("paths")[0].at("hops").size(), 2u);  // one rail leaf: no spine

  Ran none = topoctl(fmt::format("path --from gpu001 --to gpu002 --rail 7 --synthetic {}", spec));
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("host gpu001 has no HCA on rail 7"), std::string::npos) << none.err;
}

}  // namespace
}  // namespace topo
