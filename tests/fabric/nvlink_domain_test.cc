// NVLink domains as a level of the fabric: the rules that turn each host's
// GPU fabric records into domains and lint findings, and diff's view of a
// host that left its domain.
#include "fabric/nvlink_domain.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "fabric/diff.h"
#include "fabric/fabric.h"
#include "fabric/synthetic.h"

namespace topo {
namespace {

constexpr const char* kUuidA = "5a3f1c2e-7b8d-4e1f-9a6b-0c2d4e6f8a1b";
constexpr const char* kUuidB = "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b";

GpuFabric good(const char* uuid, const char* clique, int bus = 1) {
  return {fmt::format("00000008:{:02x}:00.0", bus), "Completed", "Success", clique, uuid};
}

std::vector<GpuFabric> four(const char* uuid, const char* clique) {
  return {good(uuid, clique, 1), good(uuid, clique, 2), good(uuid, clique, 3), good(uuid, clique, 4)};
}

// 8 hosts on two leaves: gpu001-004 in domain A.1, gpu005-008 in B.7.
Fabric two_domains() {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2");
  std::vector<HostNvlink> r;
  for (int h = 0; h < 8; ++h) r.push_back(host_nvlink(h < 4 ? four(kUuidA, "1") : four(kUuidB, "7")));
  f.set_nvlink(std::move(r));
  return f;
}

std::vector<std::string> names(const Fabric& f, int domain) {
  std::vector<std::string> out;
  for (int h : f.domains().hosts(domain)) out.push_back(f.node(f.hosts()[h]).name);
  return out;
}

TEST(NvlinkDomain, HostsKnowTheirDomainAndTheIndexListsEachDomainsHosts) {
  Fabric f = two_domains();
  ASSERT_EQ(f.domains().count(), 2u);
  EXPECT_EQ(f.domains().key(0).str(), std::string(kUuidA) + ".1");
  EXPECT_EQ(names(f, 1), (std::vector<std::string>{"gpu005", "gpu006", "gpu007", "gpu008"}));
  EXPECT_EQ(f.index().domains().domain_of(f.index().host_id(*f.find_host("gpu003"))), 0);
  EXPECT_EQ(f.domains().largest(), 4);
  EXPECT_TRUE(f.faults().empty());
  // A copy carries them.
  Fabric copy = f;
  EXPECT_EQ(copy.domains().domain_of(6), 1);
}

TEST(NvlinkDomain, AGpuNotCompletedOrFailedIsAFaultAndItsHostCountsOutside) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2");
  std::vector<HostNvlink> r(8);
  for (int h = 0; h < 8; ++h) r[h] = host_nvlink(four(kUuidA, "1"));
  r[1].gpus[2].state = "In Progress";
  r[2].gpus[0].status = "Unknown Error";
  r = {r.begin(), r.end()};
  f.set_nvlink(std::move(r));
  ASSERT_EQ(f.faults().size(), 2u);
  EXPECT_EQ(f.faults()[0].kind, FaultKind::NvlinkFabricState);
  EXPECT_EQ(f.faults()[0].subject, "gpu002 GPU 00000008:03:00.0");
  EXPECT_NE(f.faults()[0].detail.find("In Progress"), std::string::npos);
  EXPECT_EQ(f.faults()[1].subject, "gpu003 GPU 00000008:01:00.0");
  EXPECT_EQ(name(f.faults()[1].kind), "nvlink_fabric_state");
  EXPECT_EQ(f.domains().domain_of(1), -1);
  EXPECT_EQ(f.domains().domain_of(2), -1);
  EXPECT_EQ(f.domains().hosts(0).size(), 6u);
  // The claim is kept for lint and diff.
  ASSERT_TRUE(f.domains().reports()[1].claimed);
}

TEST(NvlinkDomain, AHostWhoseGpusDisagreeCountsOutsideBoth) {
  Fabric f = make_synthetic("leafspine:leaves=1,hosts_per_leaf=4,spines=1");
  std::vector<HostNvlink> r(4);
  for (int h = 0; h < 4; ++h) r[h] = host_nvlink(four(kUuidA, "1"));
  std::vector<GpuFabric> mixed = four(kUuidA, "1");
  mixed[3] = good(kUuidB, "1", 4);
  r[0] = host_nvlink(mixed);
  f.set_nvlink(std::move(r));
  ASSERT_EQ(f.faults().size(), 1u);
  EXPECT_EQ(f.faults()[0].kind, FaultKind::NvlinkDisagreement);
  EXPECT_EQ(f.faults()[0].subject, "gpu001");
  EXPECT_EQ(f.domains().domain_of(0), -1);
  EXPECT_EQ(f.domains().reports()[0].claimed->cluster_uuid, kUuidA);  // three of four
}

TEST(NvlinkDomain, GpusWithoutAnNvlinkFabricAreNoFaultAndNoDomain) {
  Fabric f = make_synthetic("leafspine:leaves=1,hosts_per_leaf=2,spines=1");
  GpuFabric hgx{"00000000:18:00.0", "Not Supported", "N/A", "N/A", "N/A"};
  GpuFabric zero{"00000000:19:00.0", "Completed", "Success", "0", "00000000-0000-0000-0000-000000000000"};
  f.set_nvlink({host_nvlink({hgx, hgx}), host_nvlink(four(kUuidA, "3"))});
  EXPECT_TRUE(f.faults().empty());
  EXPECT_EQ(f.domains().count(), 1u);
  EXPECT_EQ(f.domains().domain_of(0), -1);
  EXPECT_FALSE(gpu_domain(zero));
}

TEST(NvlinkDomain, ADomainLargerThanTheHardwareAllowsIsAFaultAndCountsForNothing) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=10,spines=2");
  std::vector<HostNvlink> r(20);
  for (int h = 0; h < 20; ++h) r[h] = host_nvlink(h < 19 ? four(kUuidA, "1") : four(kUuidB, "2"));
  f.set_nvlink(std::move(r), *nvlink_spec("nvlink5"));
  ASSERT_EQ(f.faults().size(), 1u);
  EXPECT_EQ(f.faults()[0].kind, FaultKind::NvlinkDomainTooLarge);
  EXPECT_EQ(f.faults()[0].subject, std::string(kUuidA) + ".1");
  EXPECT_NE(f.faults()[0].detail.find("19 hosts and 76 GPUs"), std::string::npos) << f.faults()[0].detail;
  ASSERT_EQ(f.domains().count(), 1u);
  EXPECT_EQ(f.domains().key(0).cluster_uuid, kUuidB);
  EXPECT_EQ(f.domains().domain_of(0), -1);
}

TEST(NvlinkDomain, SettingDomainsAgainReplacesTheirFaultsAndKeepsTheOthers) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2,degrade=leaf01:5");
  size_t base = f.faults().size();
  std::vector<HostNvlink> r(8);
  r[0] = host_nvlink({{"", "In Progress", "N/A", "N/A", "N/A"}});
  f.set_nvlink(r);
  EXPECT_EQ(f.faults().size(), base + 1);
  f.set_nvlink(std::vector<HostNvlink>(8));
  EXPECT_EQ(f.faults().size(), base);
  EXPECT_THROW(f.set_nvlink(std::vector<HostNvlink>(3)), FabricError);
}

TEST(NvlinkDomain, DiffNamesAHostThatLeftItsDomain) {
  Fabric before = two_domains();
  Fabric after = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2");
  std::vector<HostNvlink> r;
  for (int h = 0; h < 8; ++h) r.push_back(host_nvlink(h < 4 ? four(kUuidA, "1") : four(kUuidB, "7")));
  r[5].gpus[0].state = "Not Started";     // gpu006 counts outside
  r[2] = host_nvlink(four(kUuidB, "7"));  // gpu003 moved to B
  after.set_nvlink(std::move(r));
  std::vector<FabricChange> changes = diff(before, after);
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0].kind, ChangeKind::HostLeftDomain);
  EXPECT_EQ(changes[0].subject, "gpu003");
  EXPECT_EQ(changes[1].kind, ChangeKind::HostJoinedDomain);
  EXPECT_EQ(changes[2].subject, "gpu006");
  EXPECT_EQ(changes[2].detail, fmt::format("NVLink domain {}.7 -> none", kUuidB));
  EXPECT_EQ(name(changes[2].kind), "host_left_domain");
  EXPECT_TRUE(diff(before, two_domains()).empty());
}

TEST(NvlinkDomain, SpecsPerGenerationNameTheirSource) {
  auto five = nvlink_spec("nvlink5");
  ASSERT_TRUE(five);
  EXPECT_EQ(five->gpu_gbytes_per_s, 900);
  EXPECT_EQ(five->max_gpus, 72);
  EXPECT_FALSE(five->source.empty());
  EXPECT_FALSE(nvlink_spec("nvlink9"));
}

}  // namespace
}  // namespace topo
