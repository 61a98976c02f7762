// topoctl route plan and apply as users and scripts run them.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fabric/synthetic.h"
#include "routing/opensm_lfts.h"
#include "routing/routing_engine.h"
#include "tests/support/temp_dir.h"
#include "tests/support/topoctl_run.h"

namespace topo {
namespace {

using nlohmann::json;
using namespace testing::cli;
// A ring that crosses a leaf at every edge, and one inside a leaf.
constexpr const char* kRunning =
    "gpu001,gpu009,gpu017,gpu025,gpu002,gpu010,gpu018,gpu026,gpu003,gpu011,gpu019,gpu027,gpu004,gpu012,gpu020,"
    "gpu028 allreduce duty=1\ngpu005,gpu006,gpu007\n";

class RouteCli : public ::testing::Test {
 protected:
  void SetUp() override { std::ofstream(running()) << kRunning; }
  std::string running() const { return (dir_.path() / "running.txt").string(); }
  std::string base() const {
    return fmt::format("--synthetic {} --routing static:minhop --running {}", kSpec, running());
  }
  testing::TempDir dir_{"topo-route-cli"};
};

TEST_F(RouteCli, PlanNamesTheChangesAndTheSlowdowns) {
  Ran j = topoctl("route plan --json " + base());
  ASSERT_EQ(j.code, 0) << j.err;
  json plan = json::parse(j.out);
  EXPECT_FALSE(plan.at("changes").empty());
  EXPECT_LT(plan.at("after").at("most_flows").get<double>(), plan.at("before").at("most_flows").get<double>());
  ASSERT_EQ(plan.at("jobs").size(), 2u);
  const json& ring = plan.at("jobs")[0];
  EXPECT_EQ(ring.at("leaves"), 4);
  EXPECT_LT(ring.at("slowdown_after").get<double>(), ring.at("slowdown_before").get<double>());
  EXPECT_DOUBLE_EQ(plan.at("jobs")[1].at("slowdown_after").get<double>(), 1.0);  // one leaf: untouched
  // Each leaf has uplinks for the ring's four flows out of it: no floor above one.
  EXPECT_DOUBLE_EQ(ring.at("floor_most_flows").get<double>(), 1.0);
  Ran text = topoctl("route plan " + base());
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("entries changed"), std::string::npos) << text.out;

  Ran capped = topoctl("route plan --json --max-changes 2 " + base());
  ASSERT_EQ(capped.code, 0) << capped.err;
  EXPECT_LE(json::parse(capped.out).at("changes").size(), 2u);
}

TEST_F(RouteCli, ApplyWritesCompleteTablesAndRunsTheSweepCommand) {
  const std::string file = (dir_.path() / "routes.lfts").string(), marker = (dir_.path() / "swept").string();
  Ran a =
      topoctl(fmt::format("route apply --json {} --opensm-file {} --sweep-command 'touch {}'", base(), file, marker));
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_TRUE(std::filesystem::exists(marker));
  EXPECT_FALSE(std::filesystem::exists(file + ".tmp"));
  json plan = json::parse(a.out);
  Fabric f = make_synthetic(kSpec);
  const Routing base_tables = emulate_routing(f, "minhop");
  const Routing written = read_opensm_lfts_file(file, f);
  int differ = 0;
  for (size_t s = 0; s < f.switches().size(); ++s)
    for (NodeId hca : f.hcas()) {
      EXPECT_NE(written.out_port(s, f.node(hca).lid), kNoPort);
      differ += written.out_port(s, f.node(hca).lid) != base_tables.out_port(s, f.node(hca).lid);
    }
  EXPECT_EQ(differ, static_cast<int>(plan.at("changes").size()));

  // A failing sweep command: exit 2, why, and the file as it was (here
  // with another running set, whose tables would differ).
  std::ifstream before_in(file);
  const std::string before((std::istreambuf_iterator<char>(before_in)), std::istreambuf_iterator<char>());
  std::ofstream(running()) << "gpu001,gpu009\n";
  Ran failing =
      topoctl(fmt::format("route apply {} --opensm-file {} --sweep-command 'echo no opensm >&2; false'", base(), file));
  EXPECT_EQ(failing.code, 2);
  EXPECT_NE(failing.err.find("exited with status 1: no opensm"), std::string::npos) << failing.err;
  EXPECT_NE(failing.err.find("put back as it was"), std::string::npos) << failing.err;
  std::ifstream after_in(file);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(after_in)), std::istreambuf_iterator<char>()), before);
}

TEST_F(RouteCli, RefusesAdaptiveRoutingAndBadRunningFiles) {
  Ran adaptive = topoctl(fmt::format("route plan --synthetic {} --running {}", kSpec, running()));
  EXPECT_EQ(adaptive.code, 2);
  EXPECT_NE(adaptive.err.find("static tables"), std::string::npos) << adaptive.err;
  std::ofstream(running()) << "gpu001,nohost allreduce\n";
  Ran bad = topoctl("route plan " + base());
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("running.txt:1"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace topo
