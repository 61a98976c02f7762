// Runs stretched by their slowdowns in the replay (simulation/stretch.h).
#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fabric/synthetic.h"
#include "simulation/outcome.h"
#include "simulation/replay.h"
#include "simulation/stretch.h"

namespace topo {
namespace {

constexpr const char* kTwoToOne = "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2";

// A policy that takes free hosts in a fixed order: first `ring` (whatever
// it crosses), then every other host.
PlacementPolicy in_order(const Fabric& f, std::vector<NodeId> ring) {
  for (NodeId h : f.hosts())
    if (std::find(ring.begin(), ring.end(), h) == ring.end()) ring.push_back(h);
  return {"in-order", false, [ring](const SwitchTree&, const FreeMap& free, const PlacementRequest& r, SeamRoutes*) {
            Placement p;
            for (NodeId h : ring)
              if (static_cast<int>(p.hosts.size()) < r.hosts && free.free(h) >= r.gpus_per_host) {
                p.hosts.push_back(h);
                p.gpus.push_back(r.gpus_per_host);
              }
            p.feasible = static_cast<int>(p.hosts.size()) == r.hosts;
            return p;
          }};
}

// Hosts alternating between two leaves, `pairs` of them from `offset` on:
// every ring edge climbs to a spine.
std::vector<NodeId> alternating(const SwitchTree& tree, int leaf_a, int leaf_b, int pairs, int offset = 0) {
  std::vector<NodeId> out;
  for (int i = 0; i < pairs; ++i) {
    out.push_back(tree.leaves()[leaf_a].hosts[offset + i]);
    out.push_back(tree.leaves()[leaf_b].hosts[offset + i]);
  }
  return out;
}

Trace trace_of(std::vector<TraceJob> jobs) {
  Trace t;
  t.source = "test";
  t.jobs = std::move(jobs);
  return t;
}

std::map<std::string, ScheduledJob> by_id(const Schedule& s) {
  std::map<std::string, ScheduledJob> out;
  for (const ScheduledJob& j : s.jobs) out[j.id] = j;
  return out;
}

ReplayOptions stretched(double share) {
  ReplayOptions o;
  o.stretch = parse_comm_shares(fmt::format("{}", share));
  return o;
}

TEST(SimulationStretch, DefaultsParseAndFactor) {
  Stretch s = default_stretch();
  EXPECT_TRUE(s.on);
  EXPECT_DOUBLE_EQ(s.share_of(Profile::AllReduce), 0.3);
  EXPECT_DOUBLE_EQ(s.share_of(Profile::AllToAll), 0.5);
  EXPECT_DOUBLE_EQ(s.share_of(Profile::None), 0);
  for (Profile p : kProfiles) EXPECT_DOUBLE_EQ(s.share_of(p), default_comm_share(p)) << name(p);
  EXPECT_DOUBLE_EQ(s.factor(Profile::AllReduce, 2), 0.7 + 0.3 * 2);
  EXPECT_DOUBLE_EQ(s.factor(Profile::AllReduce, std::numeric_limits<double>::infinity()), 1);

  Stretch one = parse_comm_shares("allreduce=0.6");
  EXPECT_DOUBLE_EQ(one.share_of(Profile::AllReduce), 0.6);
  EXPECT_DOUBLE_EQ(one.share_of(Profile::AllToAll), 0.5);  // the default stays
  EXPECT_EQ(stretch_text(one), "allreduce=0.60,alltoall=0.50,mixed=0.40,fsdp=0.40,pipeline=0.10");
  EXPECT_FALSE(parse_comm_shares("0").on);  // a share of 0 everywhere: today's replay
  EXPECT_EQ(stretch_text(Stretch{}), "off");
  EXPECT_DOUBLE_EQ(Stretch{}.factor(Profile::AllReduce, 3), 1);
  for (const char* bad : {"1.5", "-0.1", "x", "allreduce=2", "none=0.3", "ring=0.3", "allreduce"}) {
    try {
      parse_comm_shares(bad);
      ADD_FAILURE() << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--comm-share"), std::string::npos) << e.what();
    }
  }
}

// A job whose ring climbs to the spines (slowed alone) holds the whole
// half of the fabric the next job needs: stretched, it ends later, and the
// next one starts later by exactly the stretch.
TEST(SimulationStretch, ASlowedPredecessorMakesTheNextJobWaitLonger) {
  Fabric f = make_synthetic(kTwoToOne);
  SwitchTree tree(f);
  PlacementPolicy policy = in_order(f, alternating(tree, 0, 1, 8));
  // 16 hosts x 8 GPUs, then the whole fabric.
  Trace t = trace_of({{"slow", 0, 100, 128}, {"next", 1, 50, 256}});
  auto plain = by_id(replay(tree, t, policy, {}));
  EXPECT_EQ(plain["next"].start_s, 100);

  Schedule s = replay(tree, t, policy, stretched(0.5));
  EXPECT_TRUE(s.runs_stretched);
  auto jobs = by_id(s);
  OutcomeOptions judging;
  judging.fabric_gpus = 256;
  PolicyOutcome o = judge(tree, s, judging);
  const double slowdown = o.jobs[0].allreduce_slowdown;  // alone all along
  ASSERT_GT(slowdown, 1.5);
  EXPECT_NEAR(jobs["slow"].end_s, 100 * (0.5 + 0.5 * slowdown), 1e-6);
  EXPECT_DOUBLE_EQ(jobs["next"].start_s, jobs["slow"].end_s);
  EXPECT_GT(jobs["next"].start_s, 140);
  // The next job waits for it, and completes later: wait + run.
  EXPECT_NEAR(o.jobs[1].wait_s, jobs["slow"].end_s - 1, 1e-6);
  EXPECT_NEAR(o.jobs[0].jct_s, jobs["slow"].end_s, 1e-6);
  EXPECT_NEAR(o.jobs[1].jct_s, o.jobs[1].wait_s + o.jobs[1].run_s, 1e-9);
  EXPECT_GT(o.makespan_s, plain["next"].end_s);

  // Judged after the fact without moving anything (a real cluster's
  // schedule): the same run, the next job's wait unchanged.
  Schedule unmoved = replay(tree, t, policy, {});
  OutcomeOptions after = judging;
  after.stretch = parse_comm_shares("0.5");
  PolicyOutcome late = judge(tree, unmoved, after);
  EXPECT_NEAR(late.jobs[0].run_s, 100 * (0.5 + 0.5 * slowdown), 1e-6);
  EXPECT_DOUBLE_EQ(late.jobs[1].wait_s, 99);
  // A schedule the replay stretched is not stretched again.
  PolicyOutcome again = judge(tree, s, after);
  EXPECT_NEAR(again.jobs[0].run_s, jobs["slow"].end_s, 1e-6);
}

// A neighbour that starts halfway slows the job from then on: its end is
// each piece of its run at that piece's pace, with the slowdowns the judge
// finds on the stretched schedule.
TEST(SimulationStretch, ANeighbourSlowsTheRestOfTheRunOnly) {
  Fabric f = make_synthetic(kTwoToOne);
  SwitchTree tree(f);
  // Four flows each way: alone, each has a leaf's four uplinks to itself;
  // together they halve them.
  std::vector<NodeId> first = alternating(tree, 0, 1, 4, 0), second = alternating(tree, 0, 1, 4, 4);
  std::vector<NodeId> ring = first;
  ring.insert(ring.end(), second.begin(), second.end());
  PlacementPolicy policy = in_order(f, ring);
  Trace t = trace_of({{"a", 0, 100, 64}, {"b", 50, 1000, 64}});
  const double share = 0.5;
  Schedule s = replay(tree, t, policy, stretched(share));
  auto jobs = by_id(s);
  ASSERT_EQ(jobs["b"].start_s, 50);
  PolicyOutcome o = judge(tree, s, {});
  const JobOutcome& a = o.jobs[0];
  const double end = jobs["a"].end_s;
  // a: alone until 50, beside b after; its weighted slowdown gives the pace
  // beside b.
  const double alone = a.allreduce_alone_slowdown;
  const double beside = (a.allreduce_slowdown * end - alone * 50) / (end - 50);
  EXPECT_GT(beside, 1.5);
  auto factor = [&](double slowdown) { return (1 - share) + share * slowdown; };
  EXPECT_NEAR(end, 50 + (100 - 50 / factor(alone)) * factor(beside), 1e-6);
  // Not the trace's end, nor the end at its alone pace.
  EXPECT_GT(end, 100 * factor(alone) + 10);
}

// Stretched or not, no host ever runs more GPUs than it has, and every
// job ends; stretched runs last at least the trace's, and the policies'
// makespans move.
TEST(SimulationStretch, StretchedReplaysStayConsistent) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,naming=interleaved");
  SwitchTree tree(f);
  Trace t = generate_trace(32 * 8, {200, 0.9, 3, 600});
  for (const char* name : {"linear", "topo-aware"}) {
    Schedule plain = replay(tree, t, policy_named(name, f), {});
    Schedule s = replay(tree, t, policy_named(name, f), stretched(0.5));
    ASSERT_EQ(s.jobs.size(), plain.jobs.size()) << name;
    std::map<std::string, double> duration;
    for (const TraceJob& j : t.jobs) duration[j.id] = j.duration_s;
    int longer = 0;
    for (const ScheduledJob& j : s.jobs) {
      EXPECT_GE(j.end_s - j.start_s, duration[j.id] * (1 - 1e-9)) << j.id;
      longer += j.end_s - j.start_s > duration[j.id] * 1.001;
    }
    EXPECT_GT(longer, 0) << name;
    std::vector<std::pair<double, std::pair<NodeId, int>>> changes;
    for (const ScheduledJob& j : s.jobs)
      for (size_t i = 0; i < j.ring.size(); ++i) {
        changes.push_back({j.start_s, {j.ring[i], j.host_gpus[i]}});
        changes.push_back({j.end_s, {j.ring[i], -j.host_gpus[i]}});
      }
    std::sort(changes.begin(), changes.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second.second < b.second.second;
    });
    std::map<NodeId, int> used;
    for (const auto& [at, change] : changes) {
      used[change.first] += change.second;
      ASSERT_LE(used[change.first], 8) << name << " at " << at;
    }
  }
}

}  // namespace
}  // namespace topo
