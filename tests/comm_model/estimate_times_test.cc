// estimate_times(): the placement objective's two figures, the very numbers
// estimate() gives, on random rings beside background load, under adaptive
// and static routing, for every collective a profile asks for.
#include "comm_model/estimate_times.h"

#include <algorithm>
#include <random>
#include <stdexcept>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fabric/synthetic.h"
#include "tests/support/static_routing_fixture.h"

namespace topo {
namespace {

// A few cables loaded by other jobs, each direction its own rate.
BackgroundLoad some_load(const Fabric& f, std::mt19937& rng) {
  BackgroundLoad load;
  std::uniform_int_distribution<size_t> cable(0, f.cables().size() - 1);
  std::uniform_real_distribution<double> gbps(0, 150);
  for (int k = 0; k < 12; ++k) {
    const LinkId e = f.cables()[cable(rng)];
    load.add(f, e, f.link(e).end_a, gbps(rng));
    load.add(f, e, f.link(e).end_b, gbps(rng));
  }
  return load;
}

void expect_same_times(const Fabric& f, std::mt19937& rng) {
  PathIndex index(f);
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<NodeId> ring(f.hosts().begin(), f.hosts().end());
    std::shuffle(ring.begin(), ring.end(), rng);
    ring.resize(std::uniform_int_distribution<size_t>(1, std::min<size_t>(ring.size(), 40))(rng));
    const BackgroundLoad load = trial % 4 == 0 ? BackgroundLoad() : some_load(f, rng);
    for (Collective c : {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll,
                         Collective::Broadcast})
      for (int gpus : {1, 8}) {
        const Request r{c, 1 << 26, Dtype::Bf16, gpus};
        const Estimate full = estimate(index, ring, r, load);
        const EstimateTimes times = estimate_times(index, ring, r, load);
        SCOPED_TRACE(fmt::format("trial {}, {} hosts, {}, {} GPUs", trial, ring.size(), name(c), gpus));
        EXPECT_EQ(times.time_s, full.time_s);
        EXPECT_EQ(times.ideal_time_s, full.ideal_time_s);
      }
  }
}

TEST(EstimateTimes, TheTimesEstimateGivesUnderAdaptiveRouting) {
  std::mt19937 rng(11);
  expect_same_times(make_synthetic("leafspine:leaves=4,hosts_per_leaf=16,spines=2,oversub=2"), rng);
}

TEST(EstimateTimes, TheTimesEstimateGivesUnderStaticRouting) {
  std::mt19937 rng(12);
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=16,spines=2,oversub=2");
  f.set_routing(testing::dmodk_tables(f));
  expect_same_times(f, rng);
}

TEST(EstimateTimes, AHostListedTwiceIsRefusedInSmallAndLargeJobs) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=16,spines=2");
  PathIndex index(f);
  const Request r{Collective::AllReduce, 1 << 20, Dtype::Bf16, 1};
  for (size_t size : {3, 40}) {
    std::vector<NodeId> ring(f.hosts().begin(), f.hosts().begin() + static_cast<long>(size));
    ring.push_back(ring[1]);
    EXPECT_THROW(estimate_times(index, ring, r), std::invalid_argument) << size << " hosts";
    EXPECT_THROW(estimate(index, ring, r), std::invalid_argument) << size << " hosts";
  }
}

}  // namespace
}  // namespace topo
