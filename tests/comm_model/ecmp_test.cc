// ECMP routing: the spec, the snapshot column, the hash draws and what they
// cost a collective.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>

#include <gtest/gtest.h>

#include "comm_model/ecmp.h"
#include "comm_model/estimate.h"
#include "comm_model/routes.h"
#include "comm_model/traffic.h"
#include "db/snapshot_store.h"
#include "fabric/synthetic.h"

namespace topo {
namespace {

TEST(EcmpRouting, SpecNameAndBounds) {
  auto one = parse_routing_spec("ecmp:1");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->kind, RoutingKind::Ecmp);
  EXPECT_EQ(one->qps, 1);
  EXPECT_EQ(parse_routing_spec("ecmp:4")->qps, 4);
  for (const char* bad : {"ecmp", "ecmp:", "ecmp:0", "ecmp:x", "ecmp:4x", "ecmp:129", "ecmp:-1"})
    EXPECT_FALSE(parse_routing_spec(bad)) << bad;
  EXPECT_EQ(routing_name(ecmp_routing(4)), "ecmp:4");
  EXPECT_THROW(ecmp_routing(0), std::invalid_argument);
}

TEST(EcmpRouting, SnapshotKeepsItInTheRoutingColumn) {
  std::string db = ::testing::TempDir() + "ecmp_" + std::to_string(getpid()) + ".db";
  std::filesystem::remove(db);
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=2,spines=2");
  f.set_routing(ecmp_routing(4));
  SnapshotStore store(db);
  int64_t id = store.save(f);
  EXPECT_EQ(routing_name(store.load(id).routing()), "ecmp:4");
  std::filesystem::remove(db);
}

// Two leaves of two hosts, one uplink to each of two spines; the ring
// alternates leaves, so two flows leave each leaf over its two uplinks.
struct Alternating : ::testing::Test {
  Fabric fabric = [] {
    Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=2,spines=2");
    return f;
  }();
  std::vector<NodeId> ring() const {
    auto h = fabric.hosts();
    return {h[0], h[2], h[1], h[3]};
  }
  Request request() const {
    Request r;
    r.bytes = 1 << 30;
    r.gpus_per_host = 1;
    return r;
  }
};

TEST_F(Alternating, OverManyDrawsEveryCableCarriesTheEvenSpread) {
  fabric.set_routing(ecmp_routing(1));
  PathIndex index(fabric);
  Allocation al = allocate(index, ring(), 1);
  Traffic t = ring_traffic(index, al, 1.0);
  const int draws = 4000;
  std::map<int, double> mean;
  for (int d = 0; d < draws; ++d)
    for (auto [cable, bytes] : route(index, al, t, static_cast<uint64_t>(d)).bytes) mean[cable] += bytes / draws;
  Fabric even_fabric = fabric;
  even_fabric.set_routing(Routing{});
  PathIndex even_index(even_fabric);
  // The spread names each trunk once; ECMP draws name cables.
  CableLoad even = per_cable(even_index, route(even_index, allocate(even_index, ring(), 1), t));
  ASSERT_EQ(mean.size(), even.bytes.size());
  for (auto [cable, bytes] : even.bytes) EXPECT_NEAR(mean[cable], bytes, 0.05 * bytes) << "cable " << cable;
  // One draw pins each QP: an uplink carries a whole flow or none.
  for (auto [cable, bytes] : route(index, al, t, 7).bytes) EXPECT_NEAR(bytes, std::round(bytes), 1e-9);
  // The same draw gives the same paths.
  EXPECT_EQ(route(index, al, t, 7).bytes, route(index, al, t, 7).bytes);
}

TEST_F(Alternating, OneQpCollidesThreeTimesInFour) {
  fabric.set_routing(ecmp_routing(1));
  PathIndex index(fabric);
  ModelOptions o;
  o.algorithm = Algorithm::Ring;
  EcmpSpread s = estimate_ecmp(index, ring(), request(), 400, {}, o);
  // Each leaf sends two flows over two uplinks: they share one with
  // probability 1/2, at either leaf 1 - 1/4.
  EXPECT_NEAR(s.collision_probability, 0.75, 0.08);
  // A collision halves the rate of the uplink both flows take.
  EXPECT_NEAR(s.worst_s / s.even_s, 2.0, 0.1);
  EXPECT_NEAR(s.best_s, s.even_s, 0.001 * s.even_s);
  EXPECT_NEAR(s.mean_s / s.even_s, 0.25 + 0.75 * s.worst_s / s.even_s, 0.15);
  EXPECT_GE(s.p95_s, s.mean_s);
}

TEST_F(Alternating, MoreQpsComeCloserToTheEvenSpread) {
  ModelOptions o;
  o.algorithm = Algorithm::Ring;
  fabric.set_routing(ecmp_routing(1));
  EcmpSpread one = [&] {
    PathIndex index(fabric);
    return estimate_ecmp(index, ring(), request(), 200, {}, o);
  }();
  fabric.set_routing(ecmp_routing(16));
  PathIndex index(fabric);
  EcmpSpread sixteen = estimate_ecmp(index, ring(), request(), 200, {}, o);
  EXPECT_LT(sixteen.mean_s, one.mean_s);
  EXPECT_LT(sixteen.p95_s, one.p95_s);
  EXPECT_LT(sixteen.mean_s / sixteen.even_s, 1.4);
}

TEST(EcmpSpreadSummary, PercentileAndCollisions) {
  EcmpSpread s = summarize_draws({1, 1, 1, 2, 1, 1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1.0);
  EXPECT_EQ(s.draws, 20);
  EXPECT_DOUBLE_EQ(s.mean_s, 23.0 / 20);
  EXPECT_DOUBLE_EQ(s.p95_s, 2.0);  // rank 19 of 20
  EXPECT_DOUBLE_EQ(s.worst_s, 3.0);
  EXPECT_DOUBLE_EQ(s.collision_probability, 0.1);
  EXPECT_THROW(summarize_draws({}, 1.0), std::invalid_argument);
}

}  // namespace
}  // namespace topo
