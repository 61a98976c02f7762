// topoctl health --ethtool, health, lint and place on a RoCE fabric
// discovered from real lldpd output: two collections of mlx5 counters 60 s
// apart, a pause storm on gpu03 eth1 and an ECN outlier on gpu05 eth0.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/topoctl_run.h"

namespace topo {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::Ran;
using testing::run_topoctl;

const fs::path kFixtures = fs::path(TOPO_FIXTURES);

class NicHealthCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("nic_health_cli_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "topo.db").string();
    Ran d = run_topoctl("discover --lldp " + (kFixtures / "lldp" / "twotier-json").string() + " --db " + db_);
    ASSERT_EQ(d.code, 0) << d.out << d.err;
  }
  void TearDown() override { fs::remove_all(dir_); }

  Ran topoctl(const std::string& args) { return run_topoctl(args + " --db " + db_); }

  // Every host but the three named is busy: a two-host job has gpu03+gpu04
  // (one leaf) or a pair across leaves to choose from.
  std::string busy_all_but(std::initializer_list<const char*> free) {
    std::string path = (dir_ / "busy.txt").string();
    std::ofstream out(path);
    for (const char* h : {"gpu01", "gpu02", "gpu03", "gpu04", "gpu05", "gpu06"})
      if (std::find_if(free.begin(), free.end(), [&](const char* f) { return std::string(f) == h; }) == free.end())
        out << h << "\n";
    return path;
  }

  fs::path dir_;
  std::string db_;
};

TEST_F(NicHealthCli, PauseStormIsShownLintedAndAvoided) {
  const std::string busy = busy_all_but({"gpu01", "gpu03", "gpu04"});
  Ran before = topoctl("place --gpus 16 --gpus-per-host 8 --json --busy " + busy);
  ASSERT_EQ(before.code, 0) << before.out << before.err;
  ASSERT_NE(before.out.find("gpu03"), std::string::npos) << "the healthy choice should use gpu03:\n" << before.out;

  Ran t0 = topoctl("health --ethtool " + (kFixtures / "ethtool" / "roce-t0").string());
  ASSERT_EQ(t0.code, 0) << t0.out << t0.err;
  EXPECT_NE(t0.out.find("12 NICs, 0 unread, 1 not in the snapshot"), std::string::npos) << t0.out;
  EXPECT_NE(t0.out.find("not in the snapshot: gpu06 eth1"), std::string::npos) << t0.out;
  Ran one = topoctl("health");
  EXPECT_EQ(one.code, 0) << one.out << one.err;
  ASSERT_EQ(topoctl("health --ethtool " + (kFixtures / "ethtool" / "roce-t1").string()).code, 0);

  Ran text = topoctl("health");
  EXPECT_EQ(text.code, 1) << text.out << text.err;
  EXPECT_NE(text.out.find("pause_storm  gpu03 eth1:1 <-> leaf02:2"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("pause storm on gpu03 eth1: 3e+04 pause frames/s received"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("ecn_outlier  gpu05 eth0:1 <-> leaf03:1"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("12 NICs rated"), std::string::npos) << text.out;

  Ran j = topoctl("health --json");
  ASSERT_EQ(j.code, 1) << j.err;
  json h = json::parse(j.out);
  const json& nic = h.at("nic_health");
  EXPECT_DOUBLE_EQ(nic.at("seconds").get<double>(), 60.0);  // each collection dated by its newest file
  ASSERT_EQ(nic.at("findings").size(), 2u) << nic.dump(1);
  EXPECT_EQ(nic.at("findings")[0].at("kind"), "pause_storm");
  EXPECT_EQ(nic.at("findings")[0].at("host"), "gpu03");
  EXPECT_EQ(nic.at("findings")[0].at("nic"), "eth1");
  EXPECT_EQ(nic.at("findings")[1].at("kind"), "ecn_outlier");
  bool rated = false;
  for (const json& r : nic.at("nics"))
    if (r.at("host") == "gpu03" && r.at("nic") == "eth1")
      rated = r.at("rx_paused_share").get<double>() > 0.68 && r.at("seconds").get<double>() == 60;
  EXPECT_TRUE(rated) << nic.at("nics").dump(1);

  // Raised thresholds: nothing to report, whether given on the command line
  // or in topo_aware.conf; the command line wins over the conf.
  EXPECT_EQ(topoctl("health --pauses-per-second 1e6 --ecn-over-median 1000").code, 0);
  const std::string lenient = (dir_ / "lenient.conf").string();
  std::ofstream(lenient) << "HealthPausesPerSecond=1e6\nHealthEcnOverMedian=1000\n";
  EXPECT_EQ(topoctl("health --conf " + lenient).code, 0);
  EXPECT_EQ(topoctl("health --conf " + lenient + " --pauses-per-second 1000").code, 1);

  Ran lint = topoctl("lint --json");
  ASSERT_EQ(lint.code, 1) << lint.out << lint.err;
  bool named = false;
  const json faults = json::parse(lint.out).at("faults");  // a range-for over a temporary's member would dangle
  for (const json& fault : faults)
    named = named || (fault.at("kind").get<std::string>() == "degraded_link" &&
                      fault.at("subject").get<std::string>() == "gpu03 eth1:1 <-> leaf02:2" &&
                      fault.at("detail").get<std::string>().find("pause storm on gpu03 eth1") != std::string::npos);
  EXPECT_TRUE(named) << lint.out;

  Ran after = topoctl("place --gpus 16 --gpus-per-host 8 --json --busy " + busy);
  ASSERT_EQ(after.code, 0) << after.out << after.err;
  EXPECT_EQ(after.out.find("gpu03"), std::string::npos) << after.out;
}

TEST_F(NicHealthCli, ABadFileIsAnErrorNamingFileLineAndField) {
  fs::path bad = dir_ / "bad";
  fs::create_directories(bad);
  std::ofstream(bad / "gpu01.txt") << "# iface eth0\nNIC statistics:\n     rx_pause_ctrl_phy: lots\n";
  Ran r = topoctl("health --ethtool " + bad.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find((bad / "gpu01.txt").string() + ":3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("field rx_pause_ctrl_phy"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace topo
