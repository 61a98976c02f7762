// What changed between two fabrics: cables unplugged, degraded and restored,
// ports down, hosts and switches gone or new, switch levels, routing and
// the routes of static tables.
#include "fabric/diff.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fabric/synthetic.h"
#include "tests/support/static_routing_fixture.h"

namespace topo {
namespace {

constexpr const char* kBase = "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2";

std::string with(const std::string& extra) { return std::string(kBase) + "," + extra; }

std::string dump(const std::vector<FabricChange>& changes) {
  std::string out;
  for (const auto& c : changes) out += std::string(name(c.kind)) + " " + c.subject + ": " + c.detail + "\n";
  return out;
}

// A small fabric built by hand: leaf01 and leaf02 under spine01, hosts on
// leaf01 ports 1.. and leaf02 ports 1.., each with HCA mlx5_0 (and mlx5_1
// where `second_hca` names the host).
struct Small {
  std::vector<std::string> hosts_a = {"gpu001", "gpu002"};
  std::vector<std::string> hosts_b = {"gpu003"};
  std::vector<std::string> second_hca;
  LinkRate uplink{LinkWidth::X4, LinkSpeed::NDR};
  PortState uplink_state = PortState::Active;
  bool spine02 = false;        // a second spine under leaf01 port 21
  bool host_on_spine = false;  // a host cabled straight to spine01, making it a leaf
  uint32_t lid_base = 0;       // LIDs from here (switches, then HCAs) instead of finish()'s numbering

  Fabric build() const {
    FabricBuilder b;
    b.add_switch("S-01", "leaf01");
    b.add_switch("S-02", "leaf02");
    b.add_switch("S-10", "spine01");
    if (spine02) b.add_switch("S-11", "spine02");
    auto hosts_on = [&](const std::vector<std::string>& hosts, const std::string& leaf) {
      int port = 0;
      for (const std::string& h : hosts) {
        b.add_hca(h + "/0", h + " mlx5_0");
        b.connect(h + "/0", 1, leaf, ++port, {});
        if (std::find(second_hca.begin(), second_hca.end(), h) != second_hca.end()) {
          b.add_hca(h + "/1", h + " mlx5_1");
          b.connect(h + "/1", 1, leaf, 10 + port, {});
        }
      }
    };
    hosts_on(hosts_a, "S-01");
    hosts_on(hosts_b, "S-02");
    b.connect("S-01", 20, "S-10", 1, uplink, uplink_state);
    b.connect("S-02", 20, "S-10", 2, {});
    if (spine02) b.connect("S-01", 21, "S-11", 1, {});
    if (host_on_spine) {
      b.add_hca("gpu099/0", "gpu099 mlx5_0");
      b.connect("gpu099/0", 1, "S-10", 30, {});
    }
    if (lid_base != 0) {
      uint32_t lid = lid_base;
      for (const char* sw : {"S-01", "S-02", "S-10", "S-11"})
        if (b.has(sw)) b.set_lid(sw, lid++);
      for (const auto* hosts : {&hosts_a, &hosts_b})
        for (const std::string& h : *hosts) b.set_lid(h + "/0", lid++);
    }
    return std::move(b).finish();
  }
};

TEST(Diff, IdenticalFabricsHaveNoChanges) {
  for (const char* spec : {kBase, "clos3:pods=2,leaves_per_pod=2,hosts_per_leaf=4,degrade=leaf02:5",
                           "railopt:hosts=16,rails=4,spines=2", "fattree:k=4"}) {
    SCOPED_TRACE(spec);
    Fabric a = make_synthetic(spec), b = make_synthetic(spec);
    EXPECT_TRUE(diff(a, b).empty()) << dump(diff(a, b));
    EXPECT_TRUE(diff(a, a).empty());
  }
}

TEST(Diff, UnpluggedCableIsALinkGoneNamedByBothEnds) {
  Fabric before = make_synthetic(kBase), after = make_synthetic(with("unplug=leaf02:9"));
  auto changes = diff(before, after);
  ASSERT_EQ(changes.size(), 1u) << dump(changes);
  EXPECT_EQ(changes[0].kind, ChangeKind::LinkGone);
  EXPECT_EQ(changes[0].subject, "leaf02:9 <-> spine01:3");
  EXPECT_EQ(changes[0].detail, "cable is gone (it ran at 4xNDR, Active): unplugged, or neither end sees the other");

  // And back: plugged in again.
  auto back = diff(after, before);
  ASSERT_EQ(back.size(), 1u) << dump(back);
  EXPECT_EQ(back[0].kind, ChangeKind::LinkAdded);
  EXPECT_EQ(back[0].subject, "leaf02:9 <-> spine01:3");
  EXPECT_EQ(back[0].detail, "new cable at 4xNDR, Active");
}

TEST(Diff, NarrowedCableIsSlowerAndItsRepairIsARestore) {
  Fabric before = make_synthetic(kBase), after = make_synthetic(with("degrade=leaf02:9"));
  auto changes = diff(before, after);
  ASSERT_EQ(changes.size(), 1u) << dump(changes);
  EXPECT_EQ(changes[0].kind, ChangeKind::LinkSlower);
  EXPECT_EQ(changes[0].subject, "leaf02:9 <-> spine01:3");
  EXPECT_EQ(changes[0].detail, "width narrowed from 4x to 1x: 400 -> 100 Gb/s; leaf-spine links are 4xNDR");

  auto repaired = diff(after, before);
  ASSERT_EQ(repaired.size(), 1u) << dump(repaired);
  EXPECT_EQ(repaired[0].kind, ChangeKind::LinkFaster);
  EXPECT_EQ(repaired[0].detail,
            "width widened from 1x to 4x: 100 -> 400 Gb/s; restored to 4xNDR, the usual rate of leaf-spine links");
}

TEST(Diff, SpeedDropIsNamedAsSuch) {
  Small s;
  Fabric before = s.build();
  s.uplink = {LinkWidth::X4, LinkSpeed::HDR};
  Fabric after = s.build();
  auto changes = diff(before, after);
  ASSERT_EQ(changes.size(), 1u) << dump(changes);
  EXPECT_EQ(changes[0].kind, ChangeKind::LinkSlower);
  EXPECT_EQ(changes[0].subject, "leaf01:20 <-> spine01:1");
  EXPECT_EQ(changes[0].detail.rfind("speed dropped from NDR to HDR: 400 -> 200 Gb/s", 0), 0u) << changes[0].detail;
}

TEST(Diff, PortGoingDownIsAStateChange) {
  Small s;
  Fabric before = s.build();
  s.uplink_state = PortState::Down;
  Fabric after = s.build();
  auto changes = diff(before, after);
  ASSERT_EQ(changes.size(), 1u) << dump(changes);
  EXPECT_EQ(changes[0].kind, ChangeKind::LinkStateChanged);
  EXPECT_EQ(changes[0].subject, "leaf01:20 <-> spine01:1");
  EXPECT_EQ(changes[0].detail, "port state went from Active to Down");
}

TEST(Diff, HostGoneAndAddedAreOneLineEachNotOnePerCable) {
  Small s;
  s.second_hca = {"gpu002"};
  Fabric before = s.build();
  s.hosts_a = {"gpu001"};            // gpu002 is gone, with both its HCAs
  s.hosts_b = {"gpu003", "gpu004"};  // gpu004 is new
  Fabric after = s.build();
  auto changes = diff(before, after);
  ASSERT_EQ(changes.size(), 2u) << dump(changes);
  EXPECT_EQ(changes[0].kind, ChangeKind::HostGone);
  EXPECT_EQ(changes[0].subject, "gpu002");
  EXPECT_EQ(changes[0].detail, "host is gone (it had 2 HCAs, on leaf01)");
  EXPECT_EQ(changes[1].kind, ChangeKind::HostAdded);
  EXPECT_EQ(changes[1].subject, "gpu004");
  EXPECT_EQ(changes[1].detail, "new host with 1 HCA, on leaf02");
}

TEST(Diff, HcaLostFromAHostThatStaysShowsAsItsCableGone) {
  Small s;
  s.second_hca = {"gpu002"};
  Fabric before = s.build();
  s.second_hca.clear();
  Fabric after = s.build();
  auto changes = diff(before, after);
  ASSERT_EQ(changes.size(), 1u) << dump(changes);
  EXPECT_EQ(changes[0].kind, ChangeKind::LinkGone);
  EXPECT_EQ(changes[0].subject, "gpu002 mlx5_1:1 <-> leaf01:12");
}

TEST(Diff, SwitchGoneTakesItsCablesWithIt) {
  Small s;
  s.spine02 = true;
  Fabric before = s.build();
  s.spine02 = false;
  Fabric after = s.build();
  auto changes = diff(before, after);
  ASSERT_EQ(changes.size(), 1u) << dump(changes);
  EXPECT_EQ(changes[0].kind, ChangeKind::SwitchGone);
  EXPECT_EQ(changes[0].subject, "spine02");
  EXPECT_EQ(changes[0].detail, "spine switch is gone, and its 1 cable with it");
  auto back = diff(after, before);
  ASSERT_EQ(back.size(), 1u) << dump(back);
  EXPECT_EQ(back[0].kind, ChangeKind::SwitchAdded);
  EXPECT_EQ(back[0].detail, "new spine switch with 1 cable");
}

TEST(Diff, SwitchThatGainsAHostBecomesALeaf) {
  Small s;
  Fabric before = s.build();
  s.host_on_spine = true;
  Fabric after = s.build();
  auto changes = diff(before, after);
  ASSERT_EQ(changes.size(), 2u) << dump(changes);
  EXPECT_EQ(changes[0].kind, ChangeKind::HostAdded);
  EXPECT_EQ(changes[0].subject, "gpu099");
  EXPECT_EQ(changes[1].kind, ChangeKind::SwitchLevelChanged);
  EXPECT_EQ(changes[1].subject, "spine01");
  EXPECT_EQ(changes[1].detail, "level changed from spine to leaf");
}

TEST(Diff, NodesMatchByIdSoARenameIsNoChange) {
  FabricBuilder a, b;
  a.add_switch("S-0002c90300000001", "leaf01");
  b.add_switch("S-0002c90300000001", "edge-switch-1");  // renamed in the SM's node description
  for (FabricBuilder* x : {&a, &b}) {
    x->add_hca("H-1", "gpu001 mlx5_0");
    x->connect("H-1", 1, "S-0002c90300000001", 1, {});
  }
  Fabric before = std::move(a).finish(), after = std::move(b).finish();
  EXPECT_TRUE(diff(before, after).empty()) << dump(diff(before, after));
}

TEST(Diff, CablesMatchByBothEndsWhicheverWayTheyWereSeen) {
  FabricBuilder a, b;
  for (FabricBuilder* x : {&a, &b}) {
    x->add_switch("S-1", "leaf01");
    x->add_switch("S-2", "spine01");
    x->add_hca("H-1", "gpu001 mlx5_0");
    x->connect("H-1", 1, "S-1", 1, {});
  }
  a.connect("S-1", 9, "S-2", 3, {});
  b.connect("S-2", 3, "S-1", 9, {});  // the same cable, seen from the other end first
  Fabric before = std::move(a).finish(), after = std::move(b).finish();
  EXPECT_TRUE(diff(before, after).empty()) << dump(diff(before, after));
}

TEST(Diff, SeveralChangesComeHostsFirstThenSwitchesThenLinks) {
  Fabric before = make_synthetic(kBase);
  Fabric after = make_synthetic(with("unplug=leaf01:9,degrade=leaf04:12,unplug=leaf03:2"));
  auto changes = diff(before, after);
  ASSERT_EQ(changes.size(), 3u) << dump(changes);
  // The host on leaf03:2 is still there (its HCA is), only its cable is gone.
  EXPECT_EQ(changes[0].kind, ChangeKind::LinkGone);
  EXPECT_EQ(changes[0].subject, "leaf01:9 <-> spine01:1");
  EXPECT_EQ(changes[1].kind, ChangeKind::LinkGone);
  EXPECT_EQ(changes[1].subject, "gpu018 mlx5_0:1 <-> leaf03:2");
  EXPECT_EQ(changes[2].kind, ChangeKind::LinkSlower);
  EXPECT_EQ(changes[2].subject, "leaf04:12 <-> spine02:8");
}

Fabric routed(Fabric f, const std::string& engine = "ftree") {
  Routing r = testing::shortest_path_routing(f, engine, engine.empty() ? "opensm-dump:lfts.dump" : "emulated");
  r.emulated = !engine.empty();
  f.set_routing(std::move(r));
  return f;
}

TEST(Diff, AFabricThatStartsRoutingStaticallyIsOneRoutingChange) {
  Fabric before = make_synthetic(kBase), after = routed(make_synthetic(kBase));
  auto changes = diff(before, after);
  ASSERT_EQ(changes.size(), 1u) << dump(changes);
  EXPECT_EQ(changes[0].kind, ChangeKind::RoutingChanged);
  EXPECT_EQ(changes[0].subject, "routing");
  EXPECT_EQ(changes[0].detail, "routing went from adaptive to static:ftree (emulated)");
  EXPECT_EQ(dump(diff(after, before)),
            "routing_changed routing: routing went from static:ftree (emulated) to adaptive\n");
  EXPECT_TRUE(diff(after, routed(make_synthetic(kBase))).empty());
}

TEST(Diff, ReadTablesReplacingEmulatedOnesWithTheSameRoutesChangeOnlyTheRouting) {
  Fabric before = routed(make_synthetic(kBase)), after = routed(make_synthetic(kBase), "");
  auto changes = diff(before, after);
  ASSERT_EQ(changes.size(), 1u) << dump(changes);
  EXPECT_EQ(changes[0].detail, "routing went from static:ftree (emulated) to static (opensm-dump:lfts.dump)");
}

TEST(Diff, RoutesThatMovedAreListedPerSwitchAndSummarisedByPort) {
  Fabric before = routed(make_synthetic(kBase)), after = make_synthetic(kBase);
  Routing r = before.routing();
  NodeId leaf = *after.find("leaf01");
  int s = after.switch_index(leaf);
  // Two destinations of leaf03 swap uplinks on leaf01, and one loses its path.
  std::vector<NodeId> far = after.hosts_under(*after.find("leaf03"));
  uint32_t a = after.node(after.hcas_of(far[0])[0]).lid, b = after.node(after.hcas_of(far[1])[0]).lid;
  uint32_t c = after.node(after.hcas_of(far[2])[0]).lid;
  ASSERT_NE(r.lft[s][a], r.lft[s][b]);
  std::swap(r.lft[s][a], r.lft[s][b]);
  int lost = r.lft[s][c];
  r.lft[s][c] = kNoPort;
  after.set_routing(r);

  auto changes = diff(before, after);
  ASSERT_EQ(changes.size(), 1u) << dump(changes);
  const FabricChange& change = changes[0];
  EXPECT_EQ(change.kind, ChangeKind::RoutesChanged);
  EXPECT_EQ(change.subject, "leaf01");
  ASSERT_EQ(change.routes.size(), 3u);
  EXPECT_EQ(change.routes[0].destination, after.node(far[0]).name + " mlx5_0");
  EXPECT_EQ(change.routes[0].before_port, r.lft[s][b]);
  EXPECT_EQ(change.routes[0].after_port, r.lft[s][a]);
  EXPECT_EQ(change.routes[2].after_port, -1);
  EXPECT_EQ(change.routes[2].before_port, lost);
  EXPECT_NE(change.detail.find("3 of 32 destinations leave by another port: "), std::string::npos) << change.detail;
  EXPECT_NE(change.detail.find(fmt::format("{} -> none for 1", lost)), std::string::npos) << change.detail;
}

TEST(Diff, NewLidsForTheSameHcasAreNoRouteChange) {
  Small before, after;
  after.lid_base = 40;
  Fabric a = routed(before.build()), b = routed(after.build());
  ASSERT_NE(a.node(*a.find("gpu001/0")).lid, b.node(*b.find("gpu001/0")).lid);
  EXPECT_TRUE(diff(a, b).empty()) << dump(diff(a, b));
}

TEST(Diff, RoutesAreComparedOnlyForSwitchesAndHcasBothFabricsHave) {
  Small before, after;
  after.hosts_b.push_back("gpu004");  // a new destination: the host change says it
  auto changes = diff(routed(before.build()), routed(after.build()));
  ASSERT_EQ(changes.size(), 1u) << dump(changes);
  EXPECT_EQ(changes[0].kind, ChangeKind::HostAdded);
}

TEST(Diff, ChangeKindsHaveStableNames) {
  EXPECT_EQ(name(ChangeKind::LinkGone), "link_gone");
  EXPECT_EQ(name(ChangeKind::LinkSlower), "link_slower");
  EXPECT_EQ(name(ChangeKind::HostAdded), "host_added");
  EXPECT_EQ(name(ChangeKind::SwitchLevelChanged), "switch_level_changed");
  EXPECT_EQ(name(ChangeKind::RoutingChanged), "routing_changed");
  EXPECT_EQ(name(ChangeKind::RoutesChanged), "routes_changed");
}

}  // namespace
}  // namespace topo
