// Placement into NVLink domains: segments inside one domain or the job
// waits, best fit for a job that fits one domain, whole domains for larger
// ones, CPU jobs outside the domains, the ring keeping a domain's hosts
// together, and the fragmentation figures.
#include "placement/domain_fit.h"

#include <map>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fabric/synthetic.h"
#include "placement/seams.h"
#include "placement/switch_tree.h"
#include "placement/traffic.h"
#include "routing/routing_engine.h"

namespace topo {
namespace {

class DomainFit : public ::testing::Test {
 protected:
  DomainFit() : fabric_(make_synthetic("nvl72:racks=4,oversub=2,hgx=4")), tree_(fabric_) {}

  FreeMap free() const { return FreeMap::all_free(fabric_, 4); }
  NodeId host(int i) const { return *fabric_.find_host(fmt::format("gpu{:03}", i)); }
  int domain(NodeId h) const { return fabric_.domains().domain_of(fabric_.index().host_id(h)); }
  // Takes hosts first..last (1-based) out of `free`.
  void busy(FreeMap& f, int first, int last) const {
    for (int i = first; i <= last; ++i) f.free_gpus[host(i)] = 0;
  }
  PlacementRequest job(int hosts, int segment = 0) const {
    PlacementRequest r;
    r.hosts = hosts;
    r.gpus_per_host = 4;
    r.segment = segment;
    return r;
  }
  // The domains the ring visits, in order, each once per visit.
  std::vector<int> visits(const Placement& p) const {
    std::vector<int> out;
    for (NodeId h : p.hosts)
      if (out.empty() || out.back() != domain(h)) out.push_back(domain(h));
    return out;
  }

  Fabric fabric_;
  SwitchTree tree_;
};

TEST_F(DomainFit, AJobThatFitsOneDomainGetsTheBestFit) {
  FreeMap f = free();
  busy(f, 1, 8);    // domain 0: 10 free
  busy(f, 37, 42);  // domain 2: 12 free
  Placement p = place(tree_, f, job(10));
  ASSERT_TRUE(p.feasible) << p.reasons.front();
  EXPECT_EQ(visits(p), std::vector<int>{0});
  p = place(tree_, f, job(11));
  EXPECT_EQ(visits(p), std::vector<int>{2});
  EXPECT_NE(p.reasons.front().find("NVLink domain"), std::string::npos) << p.reasons.front();
}

// Single-host and sub-host jobs (most of a trace's jobs) take the best fit
// as well, counted in the hosts that can take them, as topology/block
// counts a block's usable nodes, and the leaf search then packs the partly
// used host. With racks cabled across the leaves (interleaved), the
// fullest leaf is not the fullest rack: a leaf search alone would open a
// whole free domain.
TEST_F(DomainFit, SingleHostAndSubHostJobsTakeTheBestFitDomain) {
  Fabric fabric = make_synthetic("nvl72:racks=4,oversub=2,naming=interleaved");
  SwitchTree tree(fabric);
  auto at = [&](int i) { return *fabric.find_host(fmt::format("gpu{:03}", i)); };
  auto in = [&](const Placement& p) { return fabric.domains().domain_of(fabric.index().host_id(p.hosts.at(0))); };
  FreeMap f = FreeMap::all_free(fabric, 4);
  for (int i = 1; i <= 15; ++i) f.free_gpus[at(i)] = 0;   // domain 0: 3 whole hosts free
  for (int i = 19; i <= 34; ++i) f.free_gpus[at(i)] = 0;  // domain 1: one whole host free (35)
  f.free_gpus[at(36)] = 2;                                //   and one with 2 GPUs free
  for (int i = 37; i <= 48; ++i) f.free_gpus[at(i)] = 0;  // domain 2: 6 free
  auto sub = [this](int gpus) {
    PlacementRequest r = job(1);
    r.gpus_per_host = gpus;
    return r;
  };
  Placement whole = place(tree, f, job(1));
  ASSERT_TRUE(whole.feasible) << whole.reasons.front();
  EXPECT_EQ(whole.hosts, std::vector<NodeId>{at(35)});  // the one host domain 1 has for it
  Placement two = place(tree, f, sub(2));
  ASSERT_TRUE(two.feasible) << two.reasons.front();
  EXPECT_EQ(two.hosts, std::vector<NodeId>{at(36)});  // domain 1's 2 hosts, the fuller one
  f.free_gpus[at(35)] = 0;
  f.free_gpus[at(36)] = 0;
  Placement three = place(tree, f, sub(3));  // domain 0 (3 hosts) before 2 (6) and 3 (18)
  ASSERT_TRUE(three.feasible) << three.reasons.front();
  EXPECT_EQ(in(three), 0);
  EXPECT_EQ(fragmentation(fabric, f).free_whole_domains, 1);  // domain 3, untouched
}

// A job one domain could hold, when none has room: hosts outside the
// domains if enough are free, else it waits, never split over domains.
TEST_F(DomainFit, AJobThatFitsOneDomainWaitsRatherThanSplit) {
  FreeMap f = free();
  for (int d = 0; d < 4; ++d) busy(f, d * 18 + 1, d * 18 + 15);  // 3 free in each domain
  Placement p = place(tree_, f, job(4));
  ASSERT_TRUE(p.feasible) << p.reasons.front();
  for (NodeId h : p.hosts) EXPECT_EQ(domain(h), -1) << fabric_.node(h).name;  // the 8-GPU hosts
  p = place(tree_, f, job(5));
  EXPECT_FALSE(p.feasible);
  EXPECT_NE(p.reasons.front().find("5 hosts fit one NVLink domain (the largest holds 18), but the most free in one "
                                   "is 3; the job waits"),
            std::string::npos)
      << p.reasons.front();
  // Twelve free hosts over four domains would hold it: still no split.
  EXPECT_FALSE(place(tree_, f, job(12)).feasible);
}

TEST_F(DomainFit, ALargerJobTakesWholeDomainsAndItsRingLeavesEachOnce) {
  FreeMap f = free();
  busy(f, 1, 1);  // domain 0 not whole
  Placement p = place(tree_, f, job(40));
  ASSERT_TRUE(p.feasible) << p.reasons.front();
  std::vector<int> v = visits(p);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_NE(v[0], 0);  // the two whole domains first
  EXPECT_NE(v[1], 0);
  EXPECT_EQ(v[2], 0);  // the rest (4) from the partly used domain, its best fit
  for (NodeId h : p.hosts) EXPECT_GE(domain(h), 0);
}

// Under ftree's tables a flow takes the spine its destination's index
// under the leaf picks. A running job already leaves domain 0 for the
// first host of domain 1; a new job whose ring joined its domains' rings
// as they came would leave domain 0 for the first host of domain 2 on the
// same uplink. The seams are chosen across the domains: no cable its
// cross-domain flows use carries a second flow, and it still visits each
// domain once.
TEST_F(DomainFit, ARingOverSeveralDomainsChoosesItsSeams) {
  Fabric fabric = make_synthetic("nvl72:racks=4,oversub=2");
  fabric.set_routing(emulate_routing(fabric, "ftree"));
  SwitchTree tree(fabric);
  auto at = [&](int i) { return *fabric.find_host(fmt::format("gpu{:03}", i)); };
  FreeMap f = FreeMap::all_free(fabric, 4);
  RunningJob running;
  running.gpus_per_host = 4;
  for (int i : {1, 2, 3, 4, 5, 6, 7, 8, 9, 19, 20, 21, 22, 23, 24, 25, 26, 27}) {
    running.ring.push_back(at(i));
    f.free_gpus[at(i)] = 0;
  }
  busy(f, 55, 72);  // domain 3 taken whole by a job inside it
  f.running.push_back(running);
  fill_traffic(tree, f);
  Placement p = place(tree, f, job(27));  // domain 2 whole, then 9 from domain 0 or 1
  ASSERT_TRUE(p.feasible) << p.reasons.front();
  std::vector<int> v;
  for (NodeId h : p.hosts) {
    int d = fabric.domains().domain_of(fabric.index().host_id(h));
    if (v.empty() || v.back() != d) v.push_back(d);
  }
  EXPECT_EQ(v.size(), 2u);
  EXPECT_LE(seam_cost(tree, f, job(27), p.hosts).worst, 1 + 1e-9);
}

// An AllToAll job over two domains on 2:1 rails under ftree: whole domain
// first gives 18 + 14 hosts, whose 14 destinations spread unevenly over a
// leaf's 9 uplinks; 16 + 16 spread evenly, and the estimate says so.
TEST_F(DomainFit, AnAllToAllJobOverDomainsTakesEvenShares) {
  Fabric fabric = make_synthetic("nvl72:racks=4,oversub=2");
  fabric.set_routing(emulate_routing(fabric, "ftree"));
  SwitchTree tree(fabric);
  FreeMap f = FreeMap::all_free(fabric, 4);
  busy(f, 19, 20);  // domain 1: 16 free
  busy(f, 37, 72);  // domains 2 and 3 busy
  PlacementRequest a2a = job(32);
  a2a.profile = Profile::AllToAll;
  Placement p = place(tree, f, a2a);
  ASSERT_TRUE(p.feasible) << p.reasons.front();
  std::map<int, int> per_domain;
  for (NodeId h : p.hosts) ++per_domain[fabric.domains().domain_of(fabric.index().host_id(h))];
  EXPECT_EQ(per_domain, (std::map<int, int>{{0, 16}, {1, 16}}));
}

TEST_F(DomainFit, SegmentsStayInsideOneDomainOrTheJobWaits) {
  FreeMap f = free();
  busy(f, 1, 7);    // domain 0: 11 free, room for no 12-host segment
  busy(f, 19, 22);  // domain 1: 14 free, one segment
  Placement p = place(tree_, f, job(36, 12));
  ASSERT_TRUE(p.feasible) << p.reasons.front();
  for (size_t s = 0; s < p.hosts.size(); s += 12)
    for (size_t i = s; i < s + 12; ++i) EXPECT_EQ(domain(p.hosts[i]), domain(p.hosts[s])) << i;
  EXPECT_EQ(visits(p).size(), 3u);
  Placement wait = place(tree_, f, job(48, 12));
  EXPECT_FALSE(wait.feasible);
  EXPECT_NE(wait.reasons.front().find("hold 3 whole segments of 12 hosts, 4 needed"), std::string::npos)
      << wait.reasons.front();
  Placement odd = place(tree_, f, job(20, 12));
  EXPECT_FALSE(odd.feasible);
}

TEST_F(DomainFit, AJobWithoutNvlinkGoesOutsideTheDomains) {
  PlacementRequest cpu = job(4);
  cpu.nvlink = false;
  Placement p = place(tree_, free(), cpu);
  ASSERT_TRUE(p.feasible);
  for (NodeId h : p.hosts) EXPECT_EQ(domain(h), -1);
  // More than are outside: among them and the most fragmented domain,
  // never a whole free one.
  FreeMap f = free();
  busy(f, 1, 10);  // domain 0: 8 free
  cpu.hosts = 6;
  p = place(tree_, f, cpu);
  ASSERT_TRUE(p.feasible);
  for (NodeId h : p.hosts) EXPECT_LE(domain(h), 0);
  EXPECT_EQ(fragmentation(fabric_, f).free_whole_domains, 3);
}

TEST_F(DomainFit, FragmentationCountsFreeWholeDomainsAndTheLargestBlock) {
  FreeMap f = free();
  Fragmentation all = fragmentation(fabric_, f);
  EXPECT_EQ(all.domains, 4);
  EXPECT_EQ(all.free_whole_domains, 4);
  EXPECT_EQ(all.largest_free_block, 18);
  busy(f, 1, 3);
  busy(f, 19, 36);
  Fragmentation some = fragmentation(fabric_, f);
  EXPECT_EQ(some.free_whole_domains, 2);
  EXPECT_EQ(some.free_hosts_in_domains, 15 + 36);
}

}  // namespace
}  // namespace topo
