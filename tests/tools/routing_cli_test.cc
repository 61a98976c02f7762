// topoctl show, lint, discover and diff on fabrics that route statically, as users
// and scripts run them.
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "db/snapshot_store.h"
#include "fabric/synthetic.h"
#include "routing/opensm_lfts.h"
#include "routing/route.h"
#include "routing/routing_check.h"
#include "routing/routing_engine.h"
#include "tests/support/static_snapshot_db.h"
#include "tests/support/topoctl_run.h"

namespace topo {
namespace {

using nlohmann::json;
using namespace testing::cli;

class RoutingCli : public testing::StaticSnapshotDb {};
using testing::lid_of;

TEST_F(RoutingCli, ShowNamesTheRouting) {
  save_static(kSpec);
  Ran text = topoctl("show " + db());
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("routing   static (opensm-dump:/tmp/opensm-lfts.dump)"), std::string::npos) << text.out;
  Ran j = topoctl("show --json " + db());
  ASSERT_EQ(j.code, 0) << j.err;
  json out = json::parse(j.out);
  EXPECT_EQ(out.at("routing"), "static");
  EXPECT_EQ(out.at("routing_source"), "opensm-dump:/tmp/opensm-lfts.dump");
  EXPECT_EQ(out.at("routing_emulated"), false);

  Ran synthetic = topoctl(std::string("show --json --synthetic ") + kSpec);
  ASSERT_EQ(synthetic.code, 0) << synthetic.err;
  EXPECT_EQ(json::parse(synthetic.out).at("routing"), "adaptive");
  EXPECT_FALSE(json::parse(synthetic.out).contains("routing_source"));
}

TEST_F(RoutingCli, DiffListsTheRoutesThatMoved) {
  int64_t a = save_static(kSpec);
  int64_t b = save_static(kSpec, [](const Fabric& f, Routing& r) {
    auto& table = r.lft[f.switch_index(*f.find("leaf02"))];
    std::swap(table[lid_of(f, "gpu017")], table[lid_of(f, "gpu018")]);
  });
  Ran same = topoctl(fmt::format("diff {} {} {}", a, a, db()));
  EXPECT_EQ(same.code, 0) << same.err;

  Ran text = topoctl(fmt::format("diff {} {} {}", a, b, db()));
  EXPECT_EQ(text.code, 1) << text.err;
  EXPECT_NE(text.out.find("routes_changed"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("2 of 32 destinations leave by another port"), std::string::npos) << text.out;

  Ran j = topoctl(fmt::format("diff {} {} --json {}", a, b, db()));
  EXPECT_EQ(j.code, 1) << j.err;
  json out = json::parse(j.out);
  ASSERT_EQ(out.at("changes").size(), 1u) << j.out;
  const json& change = out.at("changes")[0];
  EXPECT_EQ(change.at("kind"), "routes_changed");
  EXPECT_EQ(change.at("subject"), "leaf02");
  ASSERT_EQ(change.at("routes").size(), 2u);
  EXPECT_EQ(change.at("routes")[0].at("destination"), "gpu017 mlx5_0");
  EXPECT_EQ(change.at("routes")[0].at("before_port"), change.at("routes")[1].at("after_port"));

  // A snapshot that routes adaptively against a static one: one routing change.
  SnapshotStore(db_).save(make_synthetic(kSpec));
  Ran kind = topoctl(fmt::format("diff {} latest --json {}", a, db()));
  EXPECT_EQ(kind.code, 1);
  json k = json::parse(kind.out);
  ASSERT_EQ(k.at("changes").size(), 1u) << kind.out;
  EXPECT_EQ(k.at("changes")[0].at("kind"), "routing_changed");
  EXPECT_EQ(k.at("changes")[0].at("detail"),
            "routing went from static (opensm-dump:/tmp/opensm-lfts.dump) to adaptive");
}

TEST_F(RoutingCli, LintAddsTheRoutingsFindings) {
  save_static(kSpec, [](const Fabric& f, Routing& r) {
    r.lft[f.switch_index(*f.find("leaf01"))][lid_of(f, "gpu020")] = kNoPort;
  });
  Ran hole = topoctl("lint --json " + db());
  EXPECT_EQ(hole.code, 1) << hole.err;
  json out = json::parse(hole.out);
  EXPECT_EQ(out.at("routing"), "static");
  EXPECT_TRUE(out.at("faults").empty());
  ASSERT_FALSE(out.at("routing_findings").empty()) << hole.out;
  EXPECT_EQ(out.at("count"), out.at("routing_findings").size());
  bool named = false;
  for (const json& f : out.at("routing_findings"))
    named |= f.at("kind") == std::string(name(RoutingFindingKind::Unrouted)) &&
             f.at("subject").get<std::string>().find("gpu020") != std::string::npos;
  EXPECT_TRUE(named) << hole.out;
  Ran text = topoctl("lint " + db());
  EXPECT_EQ(text.code, 1);
  EXPECT_NE(text.out.find("0 faults, "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("(routing static)"), std::string::npos) << text.out;

  Ran healthy = topoctl(std::string("lint --synthetic ") + kSpec);
  EXPECT_EQ(healthy.code, 0) << healthy.out << healthy.err;
  EXPECT_EQ(healthy.out, "no faults (routing adaptive)\n");

  // ftree gives the 1x uplink its full share of destinations.
  Ran degraded = topoctl(std::string("lint --json --routing static:ftree --synthetic ") + kSpec + ",degrade=leaf01:9");
  EXPECT_EQ(degraded.code, 1) << degraded.err;
  json d = json::parse(degraded.out);
  EXPECT_EQ(d.at("routing"), "static:ftree");
  EXPECT_EQ(d.at("faults").size(), 1u);
  bool degraded_route = false;
  for (const json& f : d.at("routing_findings"))
    degraded_route |= f.at("kind") == std::string(name(RoutingFindingKind::DegradedRoute));
  EXPECT_TRUE(degraded_route) << degraded.out;
}

TEST_F(RoutingCli, DiscoverEmulatesAnEngineAndStoresItsTables) {
  Ran r = topoctl(std::string("discover --routing static:ftree --json --synthetic ") + kSpec + " " + db());
  ASSERT_EQ(r.code, 0) << r.err;
  json out = json::parse(r.out);
  EXPECT_EQ(out.at("routing"), "static:ftree");
  EXPECT_EQ(out.at("routing_emulated"), true);
  Fabric stored = SnapshotStore(db_).load(out.at("snapshot").get<int64_t>());
  Fabric fresh = make_synthetic(kSpec);
  EXPECT_EQ(stored.routing().lft, emulate_routing(fresh, "ftree").lft);
  Ran show = topoctl("show " + db());
  EXPECT_NE(show.out.find("routing   static:ftree (emulated)"), std::string::npos) << show.out;

  Ran adaptive = topoctl(std::string("discover --json --synthetic ") + kSpec + " " + db());
  ASSERT_EQ(adaptive.code, 0) << adaptive.err;
  EXPECT_EQ(json::parse(adaptive.out).at("routing"), "adaptive");
}

TEST_F(RoutingCli, DiscoverReadsOpenSmsDumpAndRefusesAnotherFabrics) {
  const std::string dump = db_ + ".lfts";
  Fabric f = make_synthetic(kSpec);
  Routing hand = testing::shortest_path_routing(f);
  f.set_routing(hand);
  {
    std::ofstream out(dump);
    write_opensm_lfts(f, out);
  }
  Ran r = topoctl(fmt::format("discover --lfts-dump {} --json --synthetic {} {}", dump, kSpec, db()));
  ASSERT_EQ(r.code, 0) << r.err;
  json out = json::parse(r.out);
  EXPECT_EQ(out.at("routing"), "static");
  EXPECT_EQ(out.at("routing_source"), "opensm-dump:" + dump);
  Fabric stored = SnapshotStore(db_).load(out.at("snapshot").get<int64_t>());
  for (size_t s = 0; s < hand.lft.size(); ++s)
    for (NodeId h : stored.hcas()) {
      uint32_t lid = stored.node(h).lid;
      EXPECT_EQ(stored.routing().out_port(s, lid), hand.out_port(s, lid)) << s << " " << lid;
    }

  Ran other =
      topoctl(fmt::format("discover --lfts-dump {} --synthetic leafspine:leaves=2,hosts_per_leaf=4 {}", dump, db()));
  EXPECT_EQ(other.code, 2);
  EXPECT_NE(other.err.find(dump), std::string::npos) << other.err;
  std::filesystem::remove(dump);
}

TEST_F(RoutingCli, DiscoverRefusesRoutingOptionsThatCannotWork) {
  Ran lfts = topoctl(std::string("discover --lfts --synthetic ") + kSpec + " " + db());
  EXPECT_EQ(lfts.code, 2);
  EXPECT_NE(lfts.err.find("--lfts reads the tables live: it needs --ibnetdisc"), std::string::npos) << lfts.err;
  Ran bare = topoctl(std::string("discover --routing static --synthetic ") + kSpec + " " + db());
  EXPECT_EQ(bare.code, 2);
  EXPECT_NE(bare.err.find("--routing static needs tables"), std::string::npos) << bare.err;
  Ran both = topoctl(std::string("discover --routing static:ftree --lfts --ibnetdisc ") + db());
  EXPECT_EQ(both.code, 2);
  Ran dfsssp = topoctl(std::string("discover --routing static:dfsssp --synthetic ") + kSpec + " " + db());
  EXPECT_EQ(dfsssp.code, 2);
  EXPECT_FALSE(dfsssp.err.empty());
  EXPECT_FALSE(SnapshotStore(db_).latest());  // nothing stored by any of them
}

// Two free hosts, gpu001 (leaf01) and gpu010 (leaf02), beside a running
// ring gpu002 <-> gpu018 whose flow to gpu018 takes leaf01's uplink to
// spine02, as the seam to gpu010 must (ftree: the receiver's index under its
// leaf picks the spine). Either ring order of the two hosts meets it.
TEST(PlaceCli, NamesTheSeamFloorAndACableTheRunningJobsFill) {
  const std::string dir = ::testing::TempDir();
  const std::string busy = dir + "place-seam-busy.txt";
  std::ofstream(busy) << "gpu[003-009,011-017,019-032]\n";
  const std::string cmd =
      "place --synthetic leafspine:leaves=4,hosts_per_leaf=8,spines=4,oversub=2 "
      "--routing static:ftree --gpus 16 --busy " +
      busy + " --running ";
  for (const char* duty : {"0.5", "1"}) {
    const std::string running = dir + "place-seam-running-" + duty + ".txt";
    std::ofstream(running) << "gpu002,gpu018 allreduce duty=" << duty << "\n";
    Ran j = topoctl(cmd + running + " --json");
    ASSERT_EQ(j.code, 0) << j.err;
    json out = json::parse(j.out);
    EXPECT_EQ(out.at("hosts"), json({"gpu001", "gpu010"}));
    EXPECT_DOUBLE_EQ(out.at("seam_flows").get<double>(), 1 + std::stod(duty));
    EXPECT_DOUBLE_EQ(out.at("seam_floor").get<double>(), 1 + std::stod(duty));
    Ran text = topoctl(cmd + running);
    ASSERT_EQ(text.code, 0) << text.err;
    EXPECT_NE(text.out.find(fmt::format("seams {:.2f} flows on their busiest cable   floor {:.2f} (no ring order of "
                                        "these hosts has fewer)",
                                        1 + std::stod(duty), 1 + std::stod(duty))),
              std::string::npos)
        << text.out;
    if (std::string(duty) == "1") {
      // The estimate subtracts running jobs' load from a cable's room: at a
      // duty of 1 the shared uplink has none left.
      EXPECT_TRUE(out.at("estimate_s").is_null()) << j.out;
      EXPECT_NE(text.out.find("estimate none (a cable it needs is full)"), std::string::npos) << text.out;
      EXPECT_EQ(text.out.find("inf ms"), std::string::npos) << text.out;
    } else {
      EXPECT_GT(out.at("estimate_s").get<double>(), out.at("ideal_s").get<double>());
    }
  }
}

}  // namespace
}  // namespace topo
