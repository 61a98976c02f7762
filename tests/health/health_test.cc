// Cable health from port counters (health/port_health.h), its store
// (db/health_store.h, schema 4) and the migration from schema 3.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "db/connection.h"
#include "db/health_store.h"
#include "db/placement_store.h"
#include "db/schema.h"
#include "db/snapshot_store.h"
#include "fabric/classify.h"
#include "fabric/synthetic.h"
#include "health/port_health.h"
#include "placement/search.h"
#include "placement/switch_tree.h"
#include "tests/support/temp_dir.h"
#include "tests/support/topoctl_run.h"
#include "tools/topoctl/health_metrics.h"

namespace topo {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr const char* kFabric = "leafspine:leaves=2,hosts_per_leaf=4,spines=2";

// Every cabled port of the fabric with zero counters.
std::vector<PortSample> quiet_ports(const Fabric& f) {
  std::vector<PortSample> out;
  for (LinkId e : f.cables()) {
    const Link& l = f.link(e);
    out.push_back({f.node(l.end_a).id, l.port_a, {}});
    out.push_back({f.node(l.end_b).id, l.port_b, {}});
  }
  return out;
}

PortCounters& counters_at(std::vector<PortSample>& samples, const Fabric& f, const std::string& name, int port) {
  for (PortSample& s : samples)
    if (f.node(*f.find(s.node)).name == name && s.port == port) return s.counters;
  throw std::runtime_error("no sample for " + name);
}

int cable_on(const Fabric& f, const std::string& switch_name, int port) {
  for (NodeId s : f.switches())
    if (f.node(s).name == switch_name) return f.link(*f.cable_at(s, port)).id;
  throw std::runtime_error("no switch " + switch_name);
}

TEST(PortHealth, SymbolErrorsOnOneEndMakeThatCableSickNamingTheCounterAndBothEnds) {
  Fabric f = make_synthetic(kFabric);
  CounterCollection a{1, "t0", 1'000'000, quiet_ports(f)};
  CounterCollection b{2, "t1", 1'000'000 + 3'600'000, quiet_ports(f)};
  // leaf01 port 5 is its first uplink: 50 symbol errors in an hour, seen at the spine end.
  int cable = cable_on(f, "leaf01", 5);
  const Link& l = f.link(f.cables()[static_cast<size_t>(cable)]);
  NodeId spine = f.node(l.end_a).name == "leaf01" ? l.end_b : l.end_a;
  counters_at(b.samples, f, f.node(spine).name, f.local_port(f.cables()[static_cast<size_t>(cable)], spine))
      .symbol_errors = 50;
  std::vector<CableHealth> health = cable_health(f, a, b);
  EXPECT_EQ(health.size(), f.cables().size());
  const CableHealth& h = health[static_cast<size_t>(cable)];
  EXPECT_EQ(h.cable, cable);
  EXPECT_DOUBLE_EQ(h.errors_per_hour, 50);
  EXPECT_EQ(h.worst, PortCounter::SymbolErrors);
  ASSERT_EQ(h.ends.size(), 2u);

  std::vector<HealthFinding> found = check_health(health, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cable, cable);
  EXPECT_EQ(found[0].counter, PortCounter::SymbolErrors);
  EXPECT_EQ(found[0].subject, describe_link(f, f.cables()[static_cast<size_t>(cable)]));
  EXPECT_NE(found[0].why.find("SymbolErrorCounter"), std::string::npos) << found[0].why;
  EXPECT_NE(found[0].why.find("leaf01:5"), std::string::npos) << found[0].why;
  EXPECT_NE(found[0].why.find(f.node(spine).name), std::string::npos) << found[0].why;
  // Below the threshold: nothing.
  EXPECT_TRUE(check_health(health, {100, 0.1}).empty());
}

TEST(PortHealth, XmitWaitShareIsTicksOverTheLinksWordTimeAndACounterResetCountsFromZero) {
  Fabric f = make_synthetic(kFabric + std::string(",rate=4xHDR"));  // 200 Gb/s: 6.25e9 words/s
  CounterCollection a{1, "t0", 0, quiet_ports(f)};
  CounterCollection b{2, "t1", 10'000, quiet_ports(f)};  // 10 s
  int cable = cable_on(f, "leaf02", 6);
  counters_at(b.samples, f, "leaf02", 6).xmit_wait = static_cast<uint64_t>(0.25 * 10 * 6.25e9);
  counters_at(a.samples, f, "leaf02", 6).link_downed = 7;  // went backwards: reset, 2 since
  counters_at(b.samples, f, "leaf02", 6).link_downed = 2;
  std::vector<CableHealth> health = cable_health(f, a, b);
  const CableHealth& h = health[static_cast<size_t>(cable)];
  EXPECT_NEAR(h.xmit_wait_share, 0.25, 1e-9);
  EXPECT_DOUBLE_EQ(h.errors_per_hour, 2 * 360.0);
  bool reset = false;
  for (const PortRates& r : h.ends) reset |= r.reset;
  EXPECT_TRUE(reset);
  // Errors pass first and name their counter; with a high error threshold the wait does.
  auto found = check_health(health, {1e9, 0.2});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].counter, PortCounter::XmitWait);
  EXPECT_NE(found[0].why.find("PortXmitWait"), std::string::npos);
  found = check_health(health, {100, 0.2});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].counter, PortCounter::LinkDowned);
  EXPECT_THROW(cable_health(f, b, a), std::invalid_argument);
}

TEST(PortHealth, AMarkedCableIsAFaultAndPlacementAvoidsItAsItAvoidsASlowOne) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2");
  size_t faults = f.faults().size();
  // gpu001's own cable (leaf01 port 1) is sick.
  int cable = cable_on(f, "leaf01", 1);
  apply_health(f, {{cable, "", PortCounter::SymbolErrors, 99, 10, "SymbolErrorCounter 99 errors/h"}});
  ASSERT_EQ(f.faults().size(), faults + 1);
  EXPECT_EQ(f.faults().back().kind, FaultKind::DegradedLink);
  EXPECT_EQ(f.faults().back().detail, "SymbolErrorCounter 99 errors/h");
  EXPECT_TRUE(f.link(f.cables()[static_cast<size_t>(cable)]).degraded);
  SwitchTree tree(f);
  EXPECT_EQ(tree.degraded_cables(*f.find_host("gpu001")).size(), 1u);
  EXPECT_THROW(f.mark_degraded(static_cast<int>(f.cables().size()), "x"), std::exception);
}

using testing::TempDir;

TEST(HealthStore, CollectionsRoundTripBitForBitAndRateTheNewestTwo) {
  TempDir dir;
  std::string db = (dir.path() / "topo.db").string();
  Fabric f = make_synthetic(kFabric);
  int64_t snapshot = SnapshotStore(db).save(f);
  HealthStore store(db);
  EXPECT_TRUE(latest_cable_health(store, f, snapshot).empty());
  std::vector<PortSample> first = quiet_ports(f), second = quiet_ports(f);
  counters_at(first, f, "leaf01", 1).xmit_data = 0xfffffffffffffff0ull;  // past INT64_MAX
  counters_at(second, f, "leaf01", 1).symbol_errors = 40;
  counters_at(second, f, "leaf01", 1).extended = true;
  int64_t a = store.add(snapshot, first, "test", {"gpu009 mlx5_0:1"}, 1'000);
  int64_t b = store.add(snapshot, second, "test", {}, 1'000 + 1'800'000);  // half an hour
  EXPECT_EQ(store.newest(), b);
  auto listed = store.list(snapshot);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].unanswered, std::vector<std::string>{"gpu009 mlx5_0:1"});
  EXPECT_EQ(listed[1].ports, static_cast<int>(second.size()));
  CounterCollection loaded = store.load(a);
  EXPECT_EQ(counters_at(loaded.samples, f, "leaf01", 1).xmit_data, 0xfffffffffffffff0ull);
  auto health = latest_cable_health(store, f, snapshot);
  ASSERT_EQ(health.size(), f.cables().size());
  EXPECT_DOUBLE_EQ(health[static_cast<size_t>(cable_on(f, "leaf01", 1))].errors_per_hour, 80);
  EXPECT_THROW(store.add(snapshot + 7, first, "test", {}), DbError);
}

// topoctl reads topo_aware.conf with the engine's reader: a cable with 6
// errors an hour is healthy by the default (10) and degraded by a conf
// that says HealthErrorsPerHour=5, in lint, place and health alike.
TEST(HealthConf, AConfThresholdTurnsACableDegradedForLintPlaceAndHealth) {
  TempDir dir("topo-health-conf");
  const std::string db = (dir.path() / "topo.db").string();
  const fs::path defaults = dir.path() / "defaults.conf", strict = dir.path() / "strict.conf",
                 bad = dir.path() / "bad.conf";
  std::ofstream(defaults) << "# nothing set: the defaults\n";
  std::ofstream(strict) << "HealthErrorsPerHour=5\n";
  std::ofstream(bad) << "HealthErrorsPerHour=5\nHealthXmitWaitShare=lots\n";
  Fabric f = make_synthetic(kFabric);
  int64_t snapshot = SnapshotStore(db).save(f);
  HealthStore store(db);
  std::vector<PortSample> first = quiet_ports(f), second = quiet_ports(f);
  counters_at(second, f, "leaf01", 1).symbol_errors = 3;
  store.add(snapshot, first, "test", {}, 1'000);
  store.add(snapshot, second, "test", {}, 1'000 + 1'800'000);  // half an hour: 6 errors/h
  const std::string subject = describe_link(f, f.cables()[static_cast<size_t>(cable_on(f, "leaf01", 1))]);
  auto run = [&](const std::string& args, const fs::path& conf) {
    return testing::run_topoctl(args + " --db " + db + " --conf " + conf.string());
  };

  testing::Ran quiet = run("lint --json", defaults);
  EXPECT_EQ(quiet.code, 0) << quiet.out << quiet.err;
  testing::Ran sick = run("lint --json", strict);
  ASSERT_EQ(sick.code, 1) << sick.out << sick.err;
  nlohmann::json faults = nlohmann::json::parse(sick.out).at("faults");
  ASSERT_EQ(faults.size(), 1u) << faults.dump(1);
  EXPECT_EQ(faults[0].at("kind"), "degraded_link");
  EXPECT_EQ(faults[0].at("subject"), subject);
  EXPECT_NE(faults[0].at("detail").get<std::string>().find("SymbolErrorCounter"), std::string::npos) << faults;

  // 16 GPUs are two whole hosts of one leaf: leaf01's first two, unless
  // gpu001's cable is sick.
  testing::Ran placed = run("place --gpus 16 --json", defaults), avoided = run("place --gpus 16 --json", strict);
  ASSERT_EQ(placed.code, 0) << placed.err;
  ASSERT_EQ(avoided.code, 0) << avoided.err;
  EXPECT_NE(placed.out.find("gpu001"), std::string::npos) << placed.out;
  EXPECT_EQ(avoided.out.find("gpu001"), std::string::npos) << avoided.out;

  EXPECT_EQ(run("health", defaults).code, 0);
  testing::Ran health = run("health --json", strict);
  EXPECT_EQ(health.code, 1) << health.out;
  EXPECT_EQ(nlohmann::json::parse(health.out).at("thresholds").at("errors_per_hour"), 5);
  // The command line still wins over the conf.
  EXPECT_EQ(run("health --errors-per-hour 7", strict).code, 0);

  // Metrics rate the cable as lint does.
  testing::Ran exposed = run("metrics", defaults), exposed_strict = run("metrics", strict);
  ASSERT_EQ(exposed.code, 0) << exposed.err;
  ASSERT_EQ(exposed_strict.code, 0) << exposed_strict.err;
  EXPECT_EQ(exposed.out.find("topo_aware_cable_degraded_by_counters{"), std::string::npos) << exposed.out;
  EXPECT_NE(exposed_strict.out.find("topo_aware_cable_degraded_by_counters{"), std::string::npos) << exposed_strict.out;

  testing::Ran broken = run("lint", bad);
  EXPECT_EQ(broken.code, 2);
  EXPECT_NE(broken.err.find(bad.string() + ":2: HealthXmitWaitShare 'lots'"), std::string::npos) << broken.err;
  EXPECT_EQ(testing::run_topoctl("lint --db " + db + " --conf " + (dir.path() / "none.conf").string()).code, 2);
}

TEST(HealthStore, ASchema3DatabaseMigratesKeepingSnapshotsAndPlacements) {
  TempDir dir;
  const std::string old_db = (dir.path() / "old.db").string(), now_db = (dir.path() / "now.db").string();
  {
    Connection c(old_db, milliseconds(1000));
    prepare_schema(c, 3);
    ASSERT_EQ(schema_version(c), 3);
  }
  Fabric original = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,degrade=leaf02:9");
  SnapshotStore(now_db).save(original);
  {
    // Rows as a schema-3 build wrote them: its columns of the snapshot
    // tables (later schemas added columns, e.g. NVLink domains in 6).
    Connection c(old_db, milliseconds(1000));
    c.exec(fmt::format("ATTACH DATABASE '{}' AS now", now_db), "attach");
    for (const char* table : {"snapshot", "host", "gpu", "hca", "switch", "link", "lft"}) {
      std::string columns;
      Statement info(c, fmt::format("SELECT name FROM pragma_table_info('{}', 'main')", table), "columns");
      while (info.step()) columns += (columns.empty() ? "" : ", ") + info.column_text(0);
      c.exec(fmt::format("INSERT INTO main.{0} ({1}) SELECT {1} FROM now.{0}", table, columns), "copy a table");
    }
    c.exec(
        "INSERT INTO placement (job_id, placed_at, snapshot_id, hosts, ring_order, profile, estimate_s, ideal_s, "
        "reasons, fallback, fallback_why) VALUES (42, '2026-12-01T00:00:00Z', 1, 'gpu001,gpu002', "
        "'gpu001,gpu002', 'allreduce', 0.5, 0.4, 'fits in one leaf', 0, '')",
        "copy the rows a schema-3 build would have written");
    c.exec("DETACH DATABASE now", "detach");
  }
  HealthStore health(old_db);  // migrates
  {
    Connection c(old_db, milliseconds(1000));
    EXPECT_EQ(schema_version(c), kSchemaVersion);
    EXPECT_EQ(c.query_int("SELECT count(*) FROM placement WHERE job_id = 42", "q"), 1);
  }
  SnapshotStore store(old_db);
  Fabric loaded = store.load(1);
  EXPECT_EQ(loaded.cables().size(), original.cables().size());
  EXPECT_EQ(loaded.faults().size(), original.faults().size());
  EXPECT_EQ(PlacementStore(old_db).history(42).size(), 1u);
  // And it takes collections from now on.
  health.add(1, quiet_ports(loaded), "test", {});
  EXPECT_EQ(health.list(1).size(), 1u);
}

TEST(HealthMetrics, PortCountersAndCableRatesInTheExpositionFormat) {
  Fabric f = make_synthetic(kFabric);
  CounterCollection a{1, "t0", 0, quiet_ports(f)};
  CounterCollection b{2, "t1", 3'600'000, quiet_ports(f)};
  counters_at(b.samples, f, "leaf01", 1).symbol_errors = 12;
  counters_at(b.samples, f, "leaf01", 1).xmit_data = 1000;
  topoctl::Exposition out;
  topoctl::health_metrics(out, f, &b, cable_health(f, a, b), {});
  const std::string& text = out.text();
  EXPECT_NE(text.find("# TYPE topo_aware_port_symbol_errors_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("topo_aware_port_symbol_errors_total{switch=\"leaf01\",port=\"1\"} 12\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("topo_aware_port_transmit_bytes_total{switch=\"leaf01\",port=\"1\"} 4000\n"), std::string::npos);
  EXPECT_NE(text.find("topo_aware_port_symbol_errors_total{host=\"gpu001\",hca=\"mlx5_0\",port=\"1\"} 0\n"),
            std::string::npos);
  std::string link = describe_link(f, f.cables()[static_cast<size_t>(cable_on(f, "leaf01", 1))]);
  EXPECT_NE(text.find(fmt::format("topo_aware_cable_errors_per_hour{{link=\"{}\"}} 12\n", link)), std::string::npos);
  EXPECT_NE(text.find(fmt::format(
                "topo_aware_cable_degraded_by_counters{{link=\"{}\",counter=\"SymbolErrorCounter\"}} 1\n", link)),
            std::string::npos);
  // Every sample line is `name{labels} value`; every metric has HELP and TYPE once.
  std::istringstream lines(text);
  std::map<std::string, int> types;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# TYPE ", 0) == 0) ++types[line.substr(7, line.find(' ', 7) - 7)];
    if (line.empty() || line[0] == '#') continue;
    std::string name = line.substr(0, line.find_first_of("{ "));
    EXPECT_EQ(types.count(name), 1u) << line;
  }
  for (const auto& [name, n] : types) EXPECT_EQ(n, 1) << name;
}

TEST(HealthMetrics, NcclRunsAsNewestBaselineAndModelBusBandwidth) {
  NcclRunRecord first, second;
  first.hosts = second.hosts = {"gpu001", "gpu002"};
  first.run.test = second.run.test = "all_reduce_perf";
  NcclTestsRow row;
  row.size = 1 << 20;
  row.type = "float";
  row.oop_busbw = 20;
  first.run.rows = {row};
  row.oop_busbw = 10;
  second.run.rows = {row};
  second.model_busbw = {24.5};
  topoctl::Exposition out;
  topoctl::baseline_metrics(out, {first, second});
  const std::string& text = out.text();
  const std::string labels = "test=\"all_reduce_perf\",hosts=\"gpu[001-002]\",size=\"1048576\"";
  EXPECT_NE(text.find("topo_aware_nccl_bus_bandwidth_bytes_per_second{" + labels + ",run=\"newest\"} 10000000000\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("topo_aware_nccl_bus_bandwidth_bytes_per_second{" + labels + ",run=\"baseline\"} 20000000000\n"),
            std::string::npos);
  EXPECT_NE(text.find("topo_aware_nccl_model_bus_bandwidth_bytes_per_second{" + labels + "} 24500000000\n"),
            std::string::npos);
  EXPECT_NE(text.find("topo_aware_nccl_runs{test=\"all_reduce_perf\",hosts=\"gpu[001-002]\"} 2\n"), std::string::npos);
}

}  // namespace
}  // namespace topo
