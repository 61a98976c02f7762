// topoctl show, lint, discover and diff on fabrics that route statically, as users
// and scripts run them.
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "db/snapshot_store.h"
#include "tests/static_snapshot_db.h"
#include "tests/topoctl_run.h"
#include "topology/route.h"
#include "topology/synthetic.h"

namespace topo {
namespace {

using nlohmann::json;
using testing::Ran;
Ran topoctl(const std::string& args) { return testing::run_topoctl(args); }

constexpr const char* kSpec = "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2";

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

}  // namespace
}  // namespace topo
