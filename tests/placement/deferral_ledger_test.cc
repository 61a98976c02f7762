#include "placement/deferral_ledger.h"

#include <string>

#include <gtest/gtest.h>

namespace topo {
namespace {

TEST(DeferralLedger, CountsFromTheFirstDeferralUntilForgotten) {
  DeferralLedger<std::string> ledger;
  EXPECT_FALSE(ledger.deferred("a"));
  EXPECT_EQ(ledger.deferred_s("a", 500), 0);  // never deferred
  ledger.note("a", 100);
  ledger.note("a", 300);  // a later deferral keeps the first
  EXPECT_TRUE(ledger.deferred("a"));
  EXPECT_EQ(ledger.deferred_s("a", 400), 300);
  EXPECT_EQ(ledger.deferred_s("a", 50), 0);  // a clock behind the first deferral counts none
  ledger.note("b", 350);
  EXPECT_EQ(ledger.size(), 2u);
  ledger.forget("a");
  EXPECT_FALSE(ledger.deferred("a"));
  EXPECT_EQ(ledger.deferred_s("a", 400), 0);
  ledger.note("a", 390);  // deferred again: a share of its own
  EXPECT_EQ(ledger.deferred_s("a", 400), 10);
}

TEST(DeferralLedger, ForgetsOnlyTheJobsFirstDeferredLongerAgoThanTheAge) {
  DeferralLedger<int> ledger;
  ledger.note(1, 0);
  ledger.note(2, 100);
  ledger.note(3, 200);
  ledger.forget_older_than(200, 100);  // 1 is 200 s old; 2 exactly 100: kept
  EXPECT_FALSE(ledger.deferred(1));
  EXPECT_TRUE(ledger.deferred(2));
  EXPECT_TRUE(ledger.deferred(3));
  EXPECT_EQ(ledger.size(), 2u);
}

Placement best_at(double slowdown, bool feasible = true, double ideal_s = 1) {
  Placement p;
  p.feasible = feasible;
  p.score.ideal_s = ideal_s;
  p.score.slowdown = slowdown;
  return p;
}

TEST(DeferralIdleSlowdowns, SearchesOncePerWholeRequest) {
  IdleSlowdowns idle;
  int searches = 0;
  auto search = [&](double slowdown) {
    return [&searches, slowdown] {
      ++searches;
      return best_at(slowdown);
    };
  };
  PlacementRequest r;
  r.hosts = 4;
  r.gpus_per_host = 8;
  EXPECT_EQ(idle.of(r, search(1.3)), 1.3);
  EXPECT_EQ(idle.of(r, search(2.0)), 1.3);  // kept: not searched again
  EXPECT_EQ(searches, 1);
  // Any field tells requests apart, not only their shape.
  PlacementRequest bigger_messages = r;
  bigger_messages.message_bytes *= 4;
  EXPECT_EQ(idle.of(bigger_messages, search(1.6)), 1.6);
  PlacementRequest one_pod = r;
  one_pod.one_pod = true;
  EXPECT_EQ(idle.of(one_pod, search(1.1)), 1.1);
  PlacementRequest two_leaves = r;
  two_leaves.max_leaves = 2;
  EXPECT_EQ(idle.of(two_leaves, search(1.2)), 1.2);
  EXPECT_EQ(searches, 4);
  idle.clear();  // the fabric changed
  EXPECT_EQ(idle.of(r, search(1.4)), 1.4);
  EXPECT_EQ(searches, 5);
}

TEST(DeferralIdleSlowdowns, OneWhenTheIdleFabricHasNoEstimate) {
  IdleSlowdowns idle;
  PlacementRequest r;
  r.hosts = 2;
  EXPECT_EQ(idle.of(r, [] { return best_at(1.5, false); }), 1);  // infeasible
  r.hosts = 3;
  EXPECT_EQ(idle.of(r, [] { return best_at(1.5, true, 0); }), 1);  // no estimate
}

}  // namespace
}  // namespace topo
