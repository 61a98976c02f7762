// The counter time series both kinds of health reading share.
#include "health/counter_series.h"

#include <gtest/gtest.h>

#include "health/nic_health.h"
#include "health/port_health.h"

namespace topo {
namespace {

TEST(CounterSeries, GrowthCountsFromZeroAfterAReset) {
  bool reset = false;
  EXPECT_EQ(counter_growth(10, 25, reset), 15u);
  EXPECT_FALSE(reset);
  EXPECT_EQ(counter_growth(10, 10, reset), 0u);
  EXPECT_FALSE(reset);
  EXPECT_EQ(counter_growth(1000, 7, reset), 7u);  // reset, then 7 counted
  EXPECT_TRUE(reset);
}

TEST(CounterSeries, IntervalRefusesCollectionsOutOfOrderNamingBoth) {
  CounterCollection a{1, "t0", 1'000, {}}, b{2, "t1", 3'500, {}};
  EXPECT_EQ(interval_ms(a, b, "collection"), 2'500);
  try {
    interval_ms(b, a, "collection");
    FAIL() << "an older collection after a newer one was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "collection 1 (t0) is not later than collection 2 (t1)");
  }
  NicCollection n{3, "t2", 5'000, {}};
  EXPECT_THROW(interval_ms(n, n, "NIC collection"), std::invalid_argument);  // the same moment
}

TEST(CounterSeries, BothHealthReadingsRefuseTheSameWay) {
  Fabric f;
  CounterCollection a{1, "t0", 0, {}}, b{2, "t1", 10'000, {}};
  EXPECT_THROW(cable_health(f, b, a), std::invalid_argument);
  NicCollection x{1, "t0", 0, {}}, y{2, "t1", 10'000, {}};
  EXPECT_THROW(nic_rates(f, y, x), std::invalid_argument);
  EXPECT_NO_THROW(nic_rates(f, x, y));
}

}  // namespace
}  // namespace topo
