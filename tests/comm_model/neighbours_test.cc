// Other jobs' flows on the same cables: shared per flow, max-min fair, a
// neighbour asking at most its demand.
#include <gtest/gtest.h>

#include "comm_model/neighbours.h"
#include "fabric/synthetic.h"
#include "tests/support/static_routing_fixture.h"

namespace topo {
namespace {

using testing::host;
using testing::textbook;

using testing::Trunk;

TEST_F(Trunk, NoNeighboursIsTheEstimateAlone) {
  PathIndex index(f);
  Neighbours none(index);
  Estimate alone = estimate(index, a, request(), {}, textbook());
  Estimate with = estimate(index, a, request(), none, textbook());
  EXPECT_DOUBLE_EQ(with.time_s, alone.time_s);
  EXPECT_DOUBLE_EQ(with.alone_time_s, alone.time_s);
  EXPECT_EQ(with.neighbours, 0);
  EXPECT_DOUBLE_EQ(alone.time_s, ring_seconds(4, C / 2));
}

// Three flows on one uplink, two of A and one of B: each flow gets a third,
// whatever job it belongs to (a per-job share would give A's flows a quarter
// each and B's flow a half).
TEST_F(Trunk, ACableIsSharedPerFlow) {
  PathIndex index(f);
  Neighbours with_b(index), with_a(index);
  with_b.add({b, request()}, textbook());
  with_a.add({a, request()}, textbook());
  Estimate ea = estimate(index, a, request(), with_b, textbook());
  Estimate eb = estimate(index, b, request(), with_a, textbook());
  EXPECT_NEAR(ea.time_s, ring_seconds(4, C / 3), ea.time_s * 1e-12);
  EXPECT_NEAR(eb.time_s, ring_seconds(2, C / 3), eb.time_s * 1e-12);
  EXPECT_DOUBLE_EQ(ea.alone_time_s, ring_seconds(4, C / 2));
  EXPECT_DOUBLE_EQ(eb.alone_time_s, ring_seconds(2, C));
  EXPECT_EQ(ea.neighbours, 1);
  EXPECT_DOUBLE_EQ(ea.bottleneck.flows, 2);
  EXPECT_DOUBLE_EQ(ea.bottleneck.neighbour_flows, 1);
  EXPECT_NEAR(ea.bottleneck.share_gbps, C / 3, 1e-9);

  std::vector<NeighbourJob> jobs = {{a, request()}, {b, request()}};
  std::vector<Estimate> each = estimate_each(index, jobs, textbook());
  EXPECT_DOUBLE_EQ(each[0].time_s, ea.time_s);
  EXPECT_DOUBLE_EQ(each[1].time_s, eb.time_s);
}

// B computes three quarters of its time: its flow asks C/4, and A's two
// flows share the rest of the uplink.
TEST_F(Trunk, ANeighbourAsksAtMostItsDemand) {
  PathIndex index(f);
  Neighbours busy(index);
  busy.add({b, request(), 0.25}, textbook());
  Estimate ea = estimate(index, a, request(), busy, textbook());
  EXPECT_NEAR(ea.time_s, ring_seconds(4, (C - C / 4) / 2), ea.time_s * 1e-12);
  EXPECT_THROW(busy.add({b, request(), 0}, textbook()), std::invalid_argument);
  EXPECT_THROW(busy.add({b, request(), 1.5}, textbook()), std::invalid_argument);
}

// Under adaptive routing the same rings spread over both uplinks: B's one
// flow and A's two share two cables, a neighbour far away changes nothing.
TEST(CommModelNeighbours, AdaptiveSpreadAndDistantJobs) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  PathIndex index(f);
  Request r{Collective::AllReduce, 1 << 26, Dtype::Fp32, 1};
  std::vector<NodeId> mine = {host(f, 1), host(f, 2), host(f, 3)};
  Neighbours far(index);
  far.add({{host(f, 25), host(f, 26)}, r});
  EXPECT_DOUBLE_EQ(estimate(index, mine, r, far).time_s, estimate(index, mine, r).time_s);
  EXPECT_EQ(estimate(index, mine, r, far).neighbours, 0);
  // A neighbour on the same hosts' cables halves what each flow gets.
  Neighbours near(index);
  near.add({{host(f, 3), host(f, 2), host(f, 1)}, r});
  Estimate e = estimate(index, mine, r, near, textbook());
  EXPECT_NEAR(e.time_s, 2 * estimate(index, mine, r, {}, textbook()).time_s, e.time_s * 1e-12);
  EXPECT_EQ(e.neighbours, 1);
}

}  // namespace
}  // namespace topo
