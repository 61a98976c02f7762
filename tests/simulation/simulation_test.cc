// The replay scheduler and the judging of schedules (simulation/).
#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include "comm_model/estimate.h"
#include "comm_model/ring_steps.h"
#include "common/error.h"
#include "fabric/routing.h"
#include "fabric/synthetic.h"
#include "placement/ring_order.h"
#include "simulation/mix.h"
#include "simulation/outcome.h"
#include "simulation/replay.h"
#include "tests/support/dmodk_routing.h"

namespace topo {
namespace {

constexpr const char* kTwoToOne = "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2";

NodeId host(const Fabric& f, const std::string& name) { return *f.find_host(name); }

ScheduledJob job(const Fabric& f, std::string id, const std::vector<std::string>& hosts, double start, double end,
                 int gpus_per_host = 8) {
  ScheduledJob j;
  j.id = std::move(id);
  j.submit_s = 0;
  j.start_s = start;
  j.end_s = end;
  for (const std::string& h : hosts) {
    j.ring.push_back(host(f, h));
    j.host_gpus.push_back(gpus_per_host);
    j.gpus += gpus_per_host;
  }
  return j;
}

// Hosts alternating between leaf 1 and leaf 2: every ring edge climbs.
std::vector<std::string> alternating(const Fabric& f, const SwitchTree& tree, int leaf_a, int leaf_b, int pairs,
                                     int offset = 0) {
  std::vector<std::string> out;
  for (int i = 0; i < pairs; ++i) {
    out.push_back(f.node(tree.leaves()[leaf_a].hosts[offset + i]).name);
    out.push_back(f.node(tree.leaves()[leaf_b].hosts[offset + i]).name);
  }
  return out;
}

// alternating() between leaves 0 and 1 as node ids.
std::vector<NodeId> alternating_ring(const Fabric& f, const SwitchTree& tree, int offset) {
  std::vector<NodeId> out;
  for (const std::string& h : alternating(f, tree, 0, 1, 4, offset)) out.push_back(host(f, h));
  return out;
}

OutcomeOptions options_for(const Fabric& f) {
  OutcomeOptions o;
  o.fabric_gpus = static_cast<int>(f.hosts().size()) * 8;
  return o;
}

TEST(SimulationJudge, AJobAloneIsJudgedAsTheModelEstimatesIt) {
  Fabric f = make_synthetic(kTwoToOne);
  SwitchTree tree(f);
  Schedule s;
  s.policy = "test";
  s.jobs.push_back(job(f, "a", alternating(f, tree, 0, 1, 8), 0, 100));
  PolicyOutcome o = judge(tree, s, options_for(f));
  ASSERT_EQ(o.jobs.size(), 1u);
  ModelOptions ring;
  ring.algorithm = Algorithm::Ring;
  ring.protocol = Protocol::Simple;
  Estimate e = estimate(tree.paths(), s.jobs[0].ring, {Collective::AllReduce, kMessageBytes, Dtype::Bf16, 8}, {}, ring);
  EXPECT_DOUBLE_EQ(o.jobs[0].allreduce_alone_slowdown, e.time_s / e.ideal_time_s);
  EXPECT_DOUBLE_EQ(o.jobs[0].allreduce_slowdown, o.jobs[0].allreduce_alone_slowdown);
  // Eight flows each way over a leaf's four uplinks: twice the ideal's
  // bandwidth time; at 256 MiB the latency (not doubled) keeps it below 2.
  EXPECT_GT(o.jobs[0].allreduce_slowdown, 1.85);
  EXPECT_LT(o.jobs[0].allreduce_slowdown, 2.0);
  EXPECT_EQ(o.jobs[0].spine_ring_edges, 16);
  EXPECT_EQ(o.jobs[0].leaves, 2);
  EXPECT_EQ(o.jobs[0].spines, 2);
  EXPECT_EQ(o.spine_ring_edges, 16);
}

TEST(SimulationJudge, NeighboursOnTheSameUplinksSlowAJobOnlyWhileTheyRun) {
  Fabric f = make_synthetic(kTwoToOne);
  SwitchTree tree(f);
  Schedule s;
  // Four flows each way: alone, each job has a leaf's four uplinks to itself.
  s.jobs.push_back(job(f, "a", alternating(f, tree, 0, 1, 4, 0), 0, 100));
  s.jobs.push_back(job(f, "b", alternating(f, tree, 0, 1, 4, 4), 50, 100));  // same two leaves, other hosts
  s.jobs.push_back(job(f, "c", alternating(f, tree, 2, 3, 4, 0), 0, 100));   // other leaves entirely
  PolicyOutcome o = judge(tree, s, options_for(f));
  const JobOutcome &a = o.jobs[0], &b = o.jobs[1], &c = o.jobs[2];
  EXPECT_NEAR(a.allreduce_alone_slowdown, 1, 0.01);
  // Together, each asks half of every uplink (duty 0.5) and gets the other
  // half: twice the ideal while b runs, for half of a's run.
  EXPECT_GT(b.allreduce_slowdown, 1.8);  // the latency is not doubled
  EXPECT_LT(b.allreduce_slowdown, 2.0);
  double shared = b.allreduce_slowdown;  // symmetric jobs: a's slowdown while b runs
  EXPECT_NEAR(a.allreduce_slowdown, (a.allreduce_alone_slowdown + shared) / 2, 1e-9);
  // c never meets them.
  EXPECT_DOUBLE_EQ(c.allreduce_slowdown, c.allreduce_alone_slowdown);
}

// Judged step by step, two identical jobs on the same uplinks start
// together and share every step: each one's network time doubles (its
// latency does not). The judge asks estimate_by_steps() with the
// neighbour's collective.
TEST(SimulationJudge, StepByStepIdenticalNeighboursShareEveryStep) {
  Fabric f = make_synthetic(kTwoToOne);
  SwitchTree tree(f);
  Schedule s;
  s.jobs.push_back(job(f, "a", alternating(f, tree, 0, 1, 4, 0), 0, 100));
  s.jobs.push_back(job(f, "b", alternating(f, tree, 0, 1, 4, 4), 0, 100));
  OutcomeOptions steps = options_for(f);
  steps.sharing = Sharing::Steps;
  PolicyOutcome stepped = judge(tree, s, steps);

  ModelOptions ring;
  ring.algorithm = Algorithm::Ring;
  ring.protocol = Protocol::Simple;
  const Request r{Collective::AllReduce, kMessageBytes, Dtype::Bf16, 8};
  const NeighbourJob b{s.jobs[1].ring, r, 0.5, std::nullopt};
  Estimate alone = estimate(tree.paths(), s.jobs[0].ring, r, {}, ring);
  Estimate e = estimate_by_steps(tree.paths(), s.jobs[0].ring, r, {&b, 1}, ring);
  EXPECT_NEAR(e.time_s - e.latency_s, 2 * (alone.time_s - alone.latency_s), e.time_s * 1e-9);
  EXPECT_DOUBLE_EQ(e.latency_s, alone.latency_s);
  EXPECT_DOUBLE_EQ(stepped.jobs[0].allreduce_slowdown, e.time_s / e.ideal_time_s);
  // The stationary judge is kinder: b's demand counts the share of its time
  // alone spent in latency as computing, so it asks less than half.
  OutcomeOptions stationary = options_for(f);
  stationary.sharing = Sharing::Stationary;
  EXPECT_LT(judge(tree, s, stationary).jobs[0].allreduce_slowdown, stepped.jobs[0].allreduce_slowdown);
}

// The default judge shares per flow among every job joined through shared
// cables, however far: a job's slowdown is what estimate_each_by_flows()
// gives it among all of them, not among its direct neighbours only.
TEST(SimulationJudge, PerFlowJudgesAJobAmongEveryJobJoinedToIt) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  f.set_routing(testing::dmodk_routing(f));
  SwitchTree tree(f);
  Schedule s;
  // a and b share leaf 0's uplinks, b and c leaf 2's; a never meets c.
  s.jobs.push_back(job(f, "a", alternating(f, tree, 0, 1, 4, 0), 0, 100, 1));
  s.jobs.push_back(job(f, "b", alternating(f, tree, 0, 2, 4, 4), 0, 100, 1));
  s.jobs.push_back(job(f, "c", alternating(f, tree, 2, 3, 4, 0), 0, 100, 1));
  OutcomeOptions o = options_for(f);
  ASSERT_EQ(o.sharing, Sharing::Flows);
  for (ScheduledJob& j : s.jobs) j.duty = 1.0;
  PolicyOutcome judged = judge(tree, s, o);
  ModelOptions ring;
  ring.algorithm = Algorithm::Ring;
  ring.protocol = Protocol::Simple;
  const Request r{Collective::AllReduce, kMessageBytes, Dtype::Bf16, 1};
  std::vector<NeighbourJob> all;
  for (const ScheduledJob& j : s.jobs) all.push_back({j.ring, r, 1.0, std::nullopt});
  std::vector<Estimate> each = estimate_each_by_flows(tree.paths(), all, ring);
  for (size_t j = 0; j < all.size(); ++j)
    EXPECT_NEAR(judged.jobs[j].allreduce_slowdown, each[j].time_s / each[j].ideal_time_s, 1e-9) << j;
  EXPECT_GT(judged.jobs[0].allreduce_slowdown, judged.jobs[0].allreduce_alone_slowdown * 1.05);
}

// Two identical rings always sending on the same uplinks: per flow, each
// gets half of every uplink, both ways the judge bounds it (tied and
// apart), so the network time doubles and the latency does not.
TEST(SimulationJudge, PerFlowIdenticalRingsHalveTheirUplinks) {
  Fabric f = make_synthetic(kTwoToOne);
  SwitchTree tree(f);
  ModelOptions ring;
  ring.algorithm = Algorithm::Ring;
  ring.protocol = Protocol::Simple;
  const Request r{Collective::AllReduce, kMessageBytes, Dtype::Bf16, 8};
  const std::vector<NeighbourJob> jobs{{alternating_ring(f, tree, 0), r, 1.0, std::nullopt},
                                       {alternating_ring(f, tree, 4), r, 1.0, std::nullopt}};
  const Estimate alone = estimate(tree.paths(), jobs[0].ring, r, {}, ring);
  const std::vector<Estimate> each = estimate_each_by_flows(tree.paths(), jobs, ring);
  for (const Estimate& e : each) {
    EXPECT_NEAR(e.time_s - e.latency_s, 2 * (alone.time_s - alone.latency_s), e.time_s * 1e-9);
    EXPECT_DOUBLE_EQ(e.latency_s, alone.latency_s);
  }
  // A neighbour that computes half its time loads the uplinks half as much:
  // the judged ring, sending, gets the other half.
  const NeighbourJob half{jobs[1].ring, r, 0.5, std::nullopt};
  const Estimate e = estimate_by_flows(tree.paths(), jobs[0].ring, r, {&half, 1}, ring);
  EXPECT_NEAR(e.time_s - e.latency_s, 2 * (alone.time_s - alone.latency_s), e.time_s * 1e-9);
}

TEST(SimulationJudge, SummaryCountsWaitsMakespanAndUtilization) {
  Fabric f = make_synthetic(kTwoToOne);
  SwitchTree tree(f);
  Schedule s;
  ScheduledJob one = job(f, "one", {f.node(f.hosts()[0]).name}, 10, 110, 4);
  one.submit_s = 0;
  ScheduledJob two = job(f, "two", {f.node(f.hosts()[1]).name}, 20, 220, 8);
  two.submit_s = 20;
  s.jobs = {one, two};
  PolicyOutcome o = judge(tree, s, options_for(f));
  EXPECT_EQ(o.multi_host_jobs, 0);
  EXPECT_DOUBLE_EQ(o.mean_allreduce_slowdown, 1);
  EXPECT_DOUBLE_EQ(o.mean_wait_s, 5);
  EXPECT_DOUBLE_EQ(o.makespan_s, 220);
  EXPECT_DOUBLE_EQ(o.gpu_utilization, (4 * 100.0 + 8 * 200.0) / (32 * 8 * 220.0));
}

TEST(SimulationJudge, EveryJobIsJudgedByItsOwnProfile) {
  Fabric f = make_synthetic(kTwoToOne);
  SwitchTree tree(f);
  Schedule s;
  s.jobs.push_back(job(f, "fsdp", alternating(f, tree, 0, 1, 4, 0), 0, 100));
  s.jobs.back().profile = Profile::Fsdp;
  s.jobs.push_back(job(f, "pipe", alternating(f, tree, 2, 3, 4, 0), 0, 100));
  s.jobs.back().profile = Profile::Pipeline;
  PolicyOutcome o = judge(tree, s, options_for(f));
  ModelOptions ring;
  ring.algorithm = Algorithm::Ring;
  ring.protocol = Protocol::Simple;
  double time = 0, ideal = 0;
  for (Collective c : {Collective::AllGather, Collective::ReduceScatter}) {
    Estimate e = estimate(tree.paths(), s.jobs[0].ring, {c, kMessageBytes, Dtype::Bf16, 8}, {}, ring);
    time += e.time_s;
    ideal += e.ideal_time_s;
  }
  EXPECT_EQ(o.jobs[0].profile, Profile::Fsdp);
  EXPECT_DOUBLE_EQ(o.jobs[0].allreduce_alone_slowdown, time / ideal);
  EXPECT_EQ(o.jobs[1].profile, Profile::Pipeline);
  ASSERT_EQ(o.profiles.size(), 2u);
  EXPECT_EQ(o.profiles.at("fsdp").jobs, 1);
  EXPECT_EQ(o.profiles.at("pipeline").jobs, 1);
  EXPECT_DOUBLE_EQ(o.mean_allreduce_slowdown, 1);  // no allreduce job
  EXPECT_NEAR(o.mean_slowdown, (o.jobs[0].allreduce_slowdown + o.jobs[1].allreduce_slowdown) / 2, 1e-12);
}

TEST(SimulationJudge, StaticRoutingSlowsJobsWhoseSeamsShareACable) {
  // One uplink per spine; D-mod-k sends a destination through the spine its
  // index under its leaf picks.
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=4,oversub=2");
  f.set_routing(testing::dmodk_routing(f));
  SwitchTree tree(f);
  auto ring = [&](int leaf_a, const std::vector<int>& a, int leaf_b, const std::vector<int>& b) {
    std::vector<std::string> out;
    for (int i : a) out.push_back(f.node(tree.leaves()[leaf_a].hosts[i]).name);
    for (int i : b) out.push_back(f.node(tree.leaves()[leaf_b].hosts[i]).name);
    return out;
  };
  Schedule clash, apart;
  // Both jobs' seams enter at index 0 and 4: the same spine, both ways.
  clash.jobs.push_back(job(f, "a", ring(0, {0, 1, 2, 3}, 1, {0, 1, 2, 3}), 0, 100));
  clash.jobs.push_back(job(f, "b", ring(0, {4, 5, 6, 7}, 1, {4, 5, 6, 7}), 0, 100));
  // The second job's seams enter at index 5: another spine.
  apart.jobs.push_back(clash.jobs[0]);
  apart.jobs.push_back(job(f, "b", ring(0, {5, 6, 7, 4}, 1, {5, 6, 7, 4}), 0, 100));
  PolicyOutcome c = judge(tree, clash, options_for(f)), d = judge(tree, apart, options_for(f));
  EXPECT_EQ(c.routing, "static:ftree");
  EXPECT_GT(c.jobs[1].allreduce_slowdown, 1.2);
  EXPECT_NEAR(d.jobs[1].allreduce_slowdown, d.jobs[1].allreduce_alone_slowdown, 1e-6);
  EXPECT_NEAR(d.jobs[0].allreduce_slowdown, d.jobs[0].allreduce_alone_slowdown, 1e-6);
}

TEST(SimulationJudge, UnderEcmpTheQpsHintJudgesRingsThatCrossLeavesWithMoreQps) {
  Fabric f = make_synthetic(kTwoToOne);
  f.set_routing(ecmp_routing(1));
  SwitchTree tree(f);
  Schedule s;
  s.policy = "topo-aware";
  s.jobs.push_back(job(f, "across", alternating(f, tree, 0, 1, 4), 0, 100));
  s.jobs.push_back(
      job(f, "one-leaf", {f.node(tree.leaves()[2].hosts[0]).name, f.node(tree.leaves()[2].hosts[1]).name}, 0, 100));
  OutcomeOptions hinted = options_for(f);
  hinted.ecmp_qps_hint = 4;
  PolicyOutcome plain = judge(tree, s, options_for(f)), with_hint = judge(tree, s, hinted);
  EXPECT_EQ(plain.routing, "ecmp:1");
  EXPECT_EQ(with_hint.routing, "ecmp:1 (4 QPs on rings crossing leaves)");
  // The crossing ring is judged as an ecmp:4 estimate of it, and gains.
  ModelOptions four;
  four.algorithm = Algorithm::Ring;
  four.protocol = Protocol::Simple;
  four.ecmp_qps = 4;
  Estimate e = estimate(tree.paths(), s.jobs[0].ring, {Collective::AllReduce, kMessageBytes, Dtype::Bf16, 8}, {}, four);
  EXPECT_DOUBLE_EQ(with_hint.jobs[0].allreduce_alone_slowdown, e.time_s / e.ideal_time_s);
  EXPECT_LT(with_hint.jobs[0].allreduce_slowdown, plain.jobs[0].allreduce_slowdown);
  // A ring on one leaf hashes nothing onto an uplink: the same either way.
  EXPECT_DOUBLE_EQ(with_hint.jobs[1].allreduce_slowdown, plain.jobs[1].allreduce_slowdown);
  // Off ECMP the hint changes nothing.
  Fabric adaptive = make_synthetic(kTwoToOne);
  SwitchTree adaptive_tree(adaptive);
  OutcomeOptions adaptive_hinted = options_for(adaptive);
  adaptive_hinted.ecmp_qps_hint = 4;
  EXPECT_DOUBLE_EQ(judge(adaptive_tree, s, adaptive_hinted).jobs[0].allreduce_slowdown,
                   judge(adaptive_tree, s, options_for(adaptive)).jobs[0].allreduce_slowdown);
  EXPECT_TRUE(policy_sets_nccl_hints("topo-aware"));
  EXPECT_FALSE(policy_sets_nccl_hints("tree"));
}

TEST(SimulationMix, ParsesDrawsAndNamesBadItems) {
  Mix m = parse_mix(kDefaultMix);
  ASSERT_EQ(m.shares.size(), 4u);
  EXPECT_EQ(mix_text(m), "allreduce=0.50,fsdp=0.20,alltoall=0.20,pipeline=0.10");
  std::map<Profile, int> drawn;
  for (int i = 0; i < 10000; ++i) ++drawn[draw_profile(m, std::to_string(i))];
  EXPECT_NEAR(drawn[Profile::AllReduce] / 10000.0, 0.5, 0.03);
  EXPECT_NEAR(drawn[Profile::Pipeline] / 10000.0, 0.1, 0.02);
  EXPECT_EQ(draw_profile(m, "job42"), draw_profile(m, "job42"));
  EXPECT_EQ(parse_mix("allreduce=2,alltoall=2").shares[1].second, 0.5);
  EXPECT_EQ(draw_profile(parse_mix("fsdp=1"), "x"), Profile::Fsdp);
  for (const char* bad :
       {"allreduce", "allreduce=x", "bogus=1", "allreduce=-1", "allreduce=0", "none=1", "allreduce=1,allreduce=1"}) {
    try {
      parse_mix(bad);
      ADD_FAILURE() << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--mix"), std::string::npos) << e.what();
    }
  }
}

Trace trace_of(std::vector<TraceJob> jobs) {
  Trace t;
  t.source = "test";
  t.jobs = std::move(jobs);
  return t;
}

TEST(SimulationReplay, JobsStartOnArrivalWhenTheyFitAndWaitWhenNot) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=2,spines=1");
  SwitchTree tree(f);
  Trace t = trace_of({{"big", 0, 100, 32}, {"next", 10, 50, 16}, {"small", 20, 10, 1}, {"huge", 30, 10, 64}});
  Schedule s = replay(tree, t, policy_named("linear", f), {});
  std::map<std::string, ScheduledJob> by_id;
  for (const ScheduledJob& j : s.jobs) by_id[j.id] = j;
  EXPECT_EQ(by_id["big"].start_s, 0);
  EXPECT_EQ(by_id["big"].ring.size(), 4u);
  EXPECT_EQ(by_id["next"].start_s, 100);  // the fabric is full until big ends
  EXPECT_EQ(by_id["small"].start_s, 100);
  EXPECT_EQ(s.rejected, std::vector<std::string>{"huge"});
  EXPECT_EQ(by_id["next"].gpus, 16);
  EXPECT_EQ(by_id["small"].gpus, 1);
  // Hosts free for each when it started: big had no choice of hosts.
  EXPECT_EQ(by_id["big"].free_hosts_at_start, 4);
  EXPECT_EQ(by_id["next"].free_hosts_at_start, 4);
  EXPECT_EQ(by_id["small"].free_hosts_at_start, 2);  // next took two
}

TEST(SimulationReplay, EasyBackfillLetsShortJobsPassButNotDelayTheHead) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=2,spines=1");
  SwitchTree tree(f);
  // Half the fabric busy until 100; the head wants all of it.
  Trace t = trace_of({{"running", 0, 100, 16}, {"head", 1, 10, 32}, {"short", 2, 50, 8}, {"long", 3, 500, 8}});
  Schedule s = replay(tree, t, policy_named("linear", f), {});
  std::map<std::string, ScheduledJob> by_id;
  for (const ScheduledJob& j : s.jobs) by_id[j.id] = j;
  EXPECT_EQ(by_id["short"].start_s, 2);   // ends at 52, before the head's reservation
  EXPECT_EQ(by_id["head"].start_s, 100);  // not delayed
  EXPECT_EQ(by_id["long"].start_s, 110);  // would have delayed it
}

// The block baseline needs NVLink domains (its blocks); on a GB200-like
// fabric a job that fits a domain runs inside one.
TEST(SimulationReplay, BlockPolicyKeepsSmallJobsInOneDomain) {
  EXPECT_THROW(policy_named("block", make_synthetic("leafspine:leaves=2,hosts_per_leaf=4")), FabricError);
  Fabric f = make_synthetic("nvl72:racks=4,trays=4,hosts_per_leaf=8");
  SwitchTree tree(f);
  Trace t = generate_trace(16 * 4, {200, 0.9, 5, 600});
  ReplayOptions o;
  o.gpus_per_host = 4;
  Schedule s = replay(tree, t, policy_named("block", f), o);
  EXPECT_EQ(s.policy, "block");
  int multi = 0;
  for (const ScheduledJob& j : s.jobs) {
    if (j.ring.size() < 2 || j.ring.size() > 4) continue;
    ++multi;
    int domain = f.domains().domain_of(f.index().host_id(j.ring.front()));
    for (NodeId h : j.ring) EXPECT_EQ(f.domains().domain_of(f.index().host_id(h)), domain) << j.id;
  }
  EXPECT_GT(multi, 0);
}

// No host ever runs more GPUs than it has, under any policy.
TEST(SimulationReplay, NoHostIsEverOverbooked) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,naming=interleaved");
  SwitchTree tree(f);
  Trace t = generate_trace(32 * 8, {300, 0.9, 3, 600});
  for (const char* name : {"linear", "tree", "topo-aware"}) {
    Schedule s = replay(tree, t, policy_named(name, f), {});
    EXPECT_EQ(s.jobs.size() + s.rejected.size(), t.jobs.size()) << name;
    std::vector<std::pair<double, std::pair<NodeId, int>>> changes;
    for (const ScheduledJob& j : s.jobs) {
      EXPECT_GE(j.start_s, j.submit_s);
      for (size_t i = 0; i < j.ring.size(); ++i) {
        changes.push_back({j.start_s, {j.ring[i], j.host_gpus[i]}});
        changes.push_back({j.end_s, {j.ring[i], -j.host_gpus[i]}});
      }
    }
    std::sort(changes.begin(), changes.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second.second < b.second.second;  // ends first
    });
    std::map<NodeId, int> used;
    for (const auto& [at, change] : changes) {
      used[change.first] += change.second;
      ASSERT_LE(used[change.first], 8) << name << " at " << at;
      ASSERT_GE(used[change.first], 0);
    }
  }
}

// On names that interleave across leaves, linear first fit scatters rings
// over the spines; topo-aware keeps them on few leaves and orders them.
TEST(SimulationReplay, TopoAwareCrossesFewerSpinesThanTheBaselinesOnInterleavedNames) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,naming=interleaved");
  SwitchTree tree(f);
  Trace t = generate_trace(32 * 8, {300, 0.9, 5, 600});
  OutcomeOptions o = options_for(f);
  std::map<std::string, PolicyOutcome> out;
  for (const char* name : {"linear", "tree", "topo-aware"})
    out[name] = judge(tree, replay(tree, t, policy_named(name, f), {}), o);
  ASSERT_GT(out["linear"].multi_host_jobs, 10);
  EXPECT_LT(out["topo-aware"].spine_ring_edges, out["linear"].spine_ring_edges / 2);
  EXPECT_LT(out["topo-aware"].spine_ring_edges, out["tree"].spine_ring_edges);
  EXPECT_LT(out["topo-aware"].mean_allreduce_slowdown, out["linear"].mean_allreduce_slowdown);
}

// A policy whose placements the model estimates slow while a given job
// runs (its hosts busy), fast once it has ended: linear's hosts, with an
// estimate attached as topo-aware's placements carry one.
PlacementPolicy slow_while_busy(const Fabric& f, NodeId busy_host) {
  PlacementPolicy linear = policy_named("linear", f);
  return {"slow-while-busy", false,
          [linear, busy_host](const SwitchTree& t, const FreeMap& free, const PlacementRequest& r, SeamRoutes* s) {
            Placement p = linear.place(t, free, r, s);
            p.score.estimate_s = p.score.ideal_s = 1;
            p.score.slowdown = free.free(busy_host) == 0 ? 1.5 : 1.0;
            return p;
          }};
}

TEST(SimulationReplay, ADeferredJobWaitsForAFasterPlacementUpToItsShare) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=2,spines=1");
  SwitchTree tree(f);
  NodeId first = tree.leaves()[0].hosts[0];  // linear's first host: the blocker takes it
  Trace t = trace_of({{"blocker", 0, 100, 8}, {"job", 10, 400, 16}, {"later", 20, 1000, 24}});
  ReplayOptions o;
  o.defer_rule = {1.10, 1.0};
  Schedule s = replay(tree, t, slow_while_busy(f, first), o);
  std::map<std::string, ScheduledJob> by_id;
  for (const ScheduledJob& j : s.jobs) by_id[j.id] = j;
  // Estimated 1.5 while the blocker runs: deferred (it had waited 0 of
  // 400 s); it holds EASY's reservation, so the later job of 1000 s, which
  // fits by count, does not pass it.
  EXPECT_EQ(by_id["job"].start_s, 100);
  EXPECT_EQ(by_id["later"].start_s, 500);
  EXPECT_EQ(s.scheduler["deferred_jobs"], 1);
  EXPECT_GE(s.scheduler["placement_deferrals"], 1);

  // A share of 0.1 (40 s): deferred at 10 and 20, started at the first
  // pass past its share (the blocker's end; nothing else happens before).
  o.defer_rule.max_wait_share = 0.1;
  t = trace_of({{"blocker", 0, 100, 8}, {"job", 10, 400, 16}, {"tick", 60, 1, 1}});
  s = replay(tree, t, slow_while_busy(f, first), o);
  for (const ScheduledJob& j : s.jobs) by_id[j.id] = j;
  EXPECT_EQ(by_id["job"].start_s, 60);  // waited 50 s >= 40: starts on the slow hosts
  EXPECT_EQ(by_id["tick"].start_s, 60);

  // Its share counts from the first pass that deferred it, not from its
  // submission: queued 45 s for lack of hosts (one-host jobs, never
  // deferred, hold them), past its 10 s, it is still deferred once they
  // are free, at 50, and starts at the first pass past 60.
  o.defer_rule.max_wait_share = 0.1;
  s = replay(tree,
             trace_of({{"blocker", 0, 200, 8},
                       {"a", 1, 49, 8},
                       {"b", 1, 49, 8},
                       {"c", 1, 49, 8},
                       {"late", 5, 100, 16},
                       {"tick", 70, 1, 1}}),
             slow_while_busy(f, first), o);
  for (const ScheduledJob& j : s.jobs) by_id[j.id] = j;
  EXPECT_EQ(by_id["late"].start_s, 70);
  EXPECT_EQ(s.scheduler["deferred_jobs"], 1);

  // Off by default: the same trace starts the job on arrival.
  s = replay(tree, t, slow_while_busy(f, first), {});
  for (const ScheduledJob& j : s.jobs) by_id[j.id] = j;
  EXPECT_EQ(by_id["job"].start_s, 10);
  EXPECT_EQ(s.scheduler.count("deferred_jobs"), 0u);
}

// A placement as slow as the job's best on the idle fabric is not
// deferred: no wait would buy anything.
TEST(SimulationReplay, NoJobWaitsForWhatTheIdleFabricCannotBeat) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=2,spines=1");
  SwitchTree tree(f);
  PlacementPolicy always_slow = slow_while_busy(f, static_cast<NodeId>(f.node_count()));  // never free
  ReplayOptions o;
  o.defer_rule = {1.10, 10.0};
  Schedule s = replay(tree, trace_of({{"blocker", 0, 100, 8}, {"job", 10, 100, 16}}), always_slow, o);
  ASSERT_EQ(s.jobs.size(), 2u);
  EXPECT_EQ(s.jobs[1].start_s, 10);
  EXPECT_EQ(s.scheduler["deferred_jobs"], 0);
}

// Under static routing, topo-aware with a DeferRule waits for hosts beside
// less traffic: judged (not estimated) slower jobs become fewer, and the
// makespan holds. Trace seed 3 on this fabric has one such job.
TEST(SimulationReplay, DeferringCutsTheJudgedExcessUnderStaticRouting) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=4,oversub=2,naming=contiguous");
  f.set_routing(testing::dmodk_routing(f));
  SwitchTree tree(f);
  Trace t = scale_trace(generate_trace(32 * 8, {300, 0.9, 3, 600}), 32 * 8, {8, 0.9, 0});
  ReplayOptions now, deferred;
  deferred.defer_rule = {1.10, 1.0};
  PlacementPolicy topo_aware = policy_named("topo-aware", f);
  Schedule a = replay(tree, t, topo_aware, now), b = replay(tree, t, topo_aware, deferred);
  PolicyOutcome ja = judge(tree, a, options_for(f)), jb = judge(tree, b, options_for(f));
  ASSERT_GT(ja.multi_host_jobs, 50);
  EXPECT_GE(b.scheduler["deferred_jobs"], 1);
  EXPECT_LT(jb.mean_allreduce_slowdown - 1, 0.5 * (ja.mean_allreduce_slowdown - 1));
  EXPECT_NEAR(jb.makespan_s, ja.makespan_s, 0.02 * ja.makespan_s);
}

TEST(SimulationReplay, UnknownPolicyIsNamed) {
  Fabric f = make_synthetic(kTwoToOne);
  try {
    policy_named("random", f);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("random"), std::string::npos);
  }
}

}  // namespace
}  // namespace topo
