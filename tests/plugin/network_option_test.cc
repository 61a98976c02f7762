#include "plugin/slurm/common/network_option.h"

#include <gtest/gtest.h>

#include <cstring>

#include <string>

namespace {

struct Parsed {
  int rc;
  topo_network_request request;
  std::string error;
};

Parsed parse(const char* network) {
  Parsed out{};
  char error[256];
  // A stale request must not survive a failed parse.
  out.request.topo_aware = true;
  out.request.max_leaves = 99;
  out.rc = topo_network_parse(network, &out.request, error, sizeof(error));
  out.error = error;
  return out;
}

TEST(NetworkOption, AbsentOrEmptyIsAPlainJob) {
  for (const char* network : {static_cast<const char*>(nullptr), ""}) {
    Parsed p = parse(network);
    EXPECT_EQ(p.rc, 0);
    EXPECT_FALSE(p.request.topo_aware);
    EXPECT_EQ(p.request.max_leaves, 0u);
    EXPECT_EQ(p.error, "");
  }
}

TEST(NetworkOption, OtherPluginsStringsAreNotOurs) {
  Parsed p = parse("system,devtype=iba,Instances=2");
  EXPECT_EQ(p.rc, 0);
  EXPECT_FALSE(p.request.topo_aware);
}

TEST(NetworkOption, BareTopoAwareTakesDefaults) {
  Parsed p = parse("topo-aware");
  ASSERT_EQ(p.rc, 0) << p.error;
  EXPECT_TRUE(p.request.topo_aware);
  EXPECT_EQ(p.request.profile, TOPO_PROFILE_DEFAULT);
  EXPECT_EQ(p.request.max_leaves, 0u);
  EXPECT_FALSE(p.request.pod);
}

TEST(NetworkOption, AllOptionsInAnyOrderAndCase) {
  Parsed p = parse("pod,maxleaves=3,Profile=AllToAll,TOPO-AWARE");
  ASSERT_EQ(p.rc, 0) << p.error;
  EXPECT_TRUE(p.request.topo_aware);
  EXPECT_EQ(p.request.profile, TOPO_PROFILE_ALLTOALL);
  EXPECT_EQ(p.request.max_leaves, 3u);
  EXPECT_TRUE(p.request.pod);
}

TEST(NetworkOption, EachProfile) {
  EXPECT_EQ(parse("topo-aware,profile=allreduce").request.profile, TOPO_PROFILE_ALLREDUCE);
  EXPECT_EQ(parse("topo-aware,profile=alltoall").request.profile, TOPO_PROFILE_ALLTOALL);
  EXPECT_EQ(parse("topo-aware,profile=mixed").request.profile, TOPO_PROFILE_MIXED);
  EXPECT_STREQ(topo_profile_name(TOPO_PROFILE_MIXED), "mixed");
  EXPECT_STREQ(topo_profile_name(TOPO_PROFILE_DEFAULT), "default");
}

TEST(NetworkOption, MaxLeavesBounds) {
  EXPECT_EQ(parse("topo-aware,maxleaves=1").request.max_leaves, 1u);
  EXPECT_EQ(parse("topo-aware,maxleaves=65535").request.max_leaves, 65535u);
  for (const char* bad : {"topo-aware,maxleaves=0", "topo-aware,maxleaves=65536", "topo-aware,maxleaves=",
                          "topo-aware,maxleaves", "topo-aware,maxleaves=-2", "topo-aware,maxleaves=+2",
                          "topo-aware,maxleaves=2x", "topo-aware,maxleaves=99999999999999999999"}) {
    Parsed p = parse(bad);
    EXPECT_EQ(p.rc, -1) << bad;
    EXPECT_NE(p.error.find("maxleaves needs a whole number from 1 to 65535"), std::string::npos)
        << bad << ": " << p.error;
  }
}

TEST(NetworkOption, SegmentBounds) {
  EXPECT_EQ(parse("topo-aware").request.segment, 0u);
  EXPECT_EQ(parse("topo-aware,segment=1").request.segment, 1u);
  EXPECT_EQ(parse("Segment=18,topo-aware,pod").request.segment, 18u);
  EXPECT_EQ(parse("topo-aware,segment=65535").request.segment, 65535u);
  for (const char* bad : {"topo-aware,segment=0", "topo-aware,segment=65536", "topo-aware,segment=",
                          "topo-aware,segment", "topo-aware,segment=-4", "topo-aware,segment=4 "}) {
    Parsed p = parse(bad);
    EXPECT_EQ(p.rc, -1) << bad;
    EXPECT_EQ(p.request.segment, 0u) << bad;
    EXPECT_NE(p.error.find("segment needs a whole number of hosts from 1 to 65535"), std::string::npos)
        << bad << ": " << p.error;
  }
}

TEST(NetworkOption, BadProfileSaysWhatIsAllowed) {
  Parsed p = parse("topo-aware,profile=bogus");
  EXPECT_EQ(p.rc, -1);
  EXPECT_FALSE(p.request.topo_aware);  // zeroed, not the stale value
  EXPECT_EQ(p.request.max_leaves, 0u);
  EXPECT_EQ(p.error,
            "unknown profile 'bogus' (allowed: allreduce, alltoall, mixed); expected "
            "--network=topo-aware[,profile=allreduce|alltoall|mixed][,maxleaves=K][,pod][,segment=N]");
}

TEST(NetworkOption, Garbage) {
  struct Case {
    const char* network;
    const char* says;
  };
  for (const Case& c : {
           Case{"topo-aware,maxleaf=2", "unknown item 'maxleaf=2' beside topo-aware"},
           Case{"topo-aware,,pod", "empty item"},
           Case{"topo-aware,", "empty item"},
           Case{"topo-aware,topo-aware", "topo-aware given twice"},
           Case{"topo-aware=yes", "topo-aware takes no value"},
           Case{"topo-aware,pod=1", "pod takes no value"},
           Case{"topo-aware,pod,pod", "pod given twice"},
           Case{"topo-aware,profile=mixed,profile=mixed", "profile given twice"},
           Case{"topo-aware,maxleaves=2,maxleaves=3", "maxleaves given twice"},
           Case{"topo-aware,profile", "unknown profile ''"},
           Case{"topo_aware", "unknown item 'topo_aware' (did you mean topo-aware?)"},
           Case{"topoaware,pod", "unknown item 'topoaware'"},
           Case{"maxleaves=2", "'maxleaves=2' needs topo-aware"},
           Case{"pod", "'pod' needs topo-aware"},
           Case{"segment=4", "'segment=4' needs topo-aware"},
           Case{"topo-aware,segment=4,segment=4", "segment given twice"},
       }) {
    Parsed p = parse(c.network);
    EXPECT_EQ(p.rc, -1) << c.network;
    EXPECT_NE(p.error.find(c.says), std::string::npos) << c.network << ": " << p.error;
    EXPECT_NE(p.error.find("expected --network=topo-aware["), std::string::npos) << p.error;
  }
}

TEST(NetworkOption, ErrorIsTruncatedNotOverrun) {
  char error[16];
  std::memset(error, 'x', sizeof(error));
  topo_network_request request{};
  EXPECT_EQ(topo_network_parse("topo-aware,profile=bogus", &request, error, 8), -1);
  EXPECT_EQ(std::string(error), "unknown");
  EXPECT_EQ(error[8], 'x');
  // No buffer at all is allowed too.
  EXPECT_EQ(topo_network_parse("topo-aware,profile=bogus", &request, nullptr, 0), -1);
}

}  // namespace

namespace {

// A long option quotes only its start: the syntax hint still fits the
// plugins' message buffers, and slurmctld's log gets no megabyte line.
TEST(NetworkOption, LongOptionIsQuotedInPart) {
  std::string bad = "topo-aware,profile=" + std::string(100000, 'z');
  std::string empty = "topo-aware,," + std::string(100000, 'y');
  for (const std::string& network : {bad, empty, "topo_" + std::string(100000, 'a')}) {
    Parsed p = parse(network.c_str());
    EXPECT_EQ(p.rc, -1);
    EXPECT_LT(p.error.size(), 255u);
    EXPECT_NE(p.error.find("expected --network=topo-aware["), std::string::npos) << p.error;
  }
}

}  // namespace
