// The ethtool -S reader, the PFC/ECN rates and findings, their store and
// their metrics.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "db/connection.h"
#include "db/health_store.h"
#include "db/schema.h"
#include "db/snapshot_store.h"
#include "discovery/lldp.h"
#include "health/ethtool_counters.h"
#include "health/nic_health.h"
#include "tools/topoctl/health_metrics.h"

namespace topo {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

const fs::path kEthtool = fs::path(TOPO_FIXTURES) / "ethtool";
const fs::path kLldp = fs::path(TOPO_FIXTURES) / "lldp" / "twotier-json";

std::vector<NicSample> parse(const std::string& text, const std::string& host = "gpu01") {
  std::istringstream in(text);
  return parse_ethtool_stats(in, "gpu01.txt", host);
}

// The ParseError's "file:line: what", or "" when the text parses.
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const ParseError& e) {
    return e.what();  // "file:line: ..."
  }
  return "";
}

NicCollection collection(const fs::path& dir, int64_t id) {
  std::vector<NicSample> nics = read_ethtool_dir(dir);
  int64_t newest = 0;
  for (const NicSample& n : nics) newest = std::max(newest, n.taken_ms);
  return {id, "", newest, std::move(nics)};
}

const NicRates& rates_of(const std::vector<NicRates>& rates, std::string_view host, std::string_view iface) {
  for (const NicRates& r : rates)
    if (r.host == host && r.iface == iface) return r;
  throw std::runtime_error(fmt::format("no rates for {} {}", host, iface));
}

TEST(EthtoolCounters, ReadsTheDriversLayoutKeepingOnlyTheCountersItKnows) {
  std::vector<NicSample> nics = parse(
      "# host gpu07\n# time 1764759600.5\n# iface eth1\nNIC statistics:\n     rx_packets: 12\n"
      "     rx_pause_ctrl_phy: 3\n     tx_prio3_pause: 1523\n     rx_prio7_pause_duration: 91104\n"
      "     rx_prio8_pause: 9\n     ch0_events: whatever the driver prints\n"
      "# RDMA hw_counters\n     np_ecn_marked_roce_packets: 18446744073709551615\n\n# iface eth2\nNIC statistics:\n");
  ASSERT_EQ(nics.size(), 2u);
  EXPECT_EQ(nics[0].host, "gpu07");
  EXPECT_EQ(nics[0].iface, "eth1");
  EXPECT_EQ(nics[0].taken_ms, 1764759600500);
  std::map<std::string, uint64_t, std::less<>> want = {{"rx_pause_ctrl_phy", 3},
                                                       {"tx_prio3_pause", 1523},
                                                       {"rx_prio7_pause_duration", 91104},
                                                       {"np_ecn_marked_roce_packets", UINT64_MAX}};
  EXPECT_EQ(nics[0].counters, want);
  EXPECT_EQ(nics[1].iface, "eth2");
  EXPECT_TRUE(nics[1].counters.empty());
  // Without "# host", the caller's name (the file's stem).
  EXPECT_EQ(parse("# iface eth0\n", "gpu09")[0].host, "gpu09");
}

TEST(EthtoolCounters, BadInputNamesFileLineAndField) {
  EXPECT_EQ(error_of("NIC statistics:\n     rx_pause_ctrl_phy: 1\n"),
            "gpu01.txt:2: field iface: counter rx_pause_ctrl_phy comes before any '# iface NAME' line");
  EXPECT_EQ(error_of("# iface eth0\n     rx_pause_ctrl_phy: -1\n"),
            "gpu01.txt:2: field rx_pause_ctrl_phy: '-1' is not a count (an unsigned 64-bit number)");
  EXPECT_EQ(error_of("# iface eth0\n     tx_pause_ctrl_phy: 18446744073709551616\n"),
            "gpu01.txt:2: field tx_pause_ctrl_phy: '18446744073709551616' is not a count (an unsigned 64-bit number)");
  EXPECT_EQ(error_of("# iface eth0\nrx_bytes 12\n"),
            "gpu01.txt:2: field counter: expected 'name: value', not 'rx_bytes 12'");
  EXPECT_EQ(error_of("# iface eth0\n rx_bytes: 1\n rx_bytes: 2\n"),
            "gpu01.txt:3: field rx_bytes: counted twice for NIC eth0");
  EXPECT_EQ(error_of("# iface eth0\n# iface eth0\n"),
            "gpu01.txt:2: field iface: NIC eth0 is listed twice in this file");
  EXPECT_EQ(error_of("# iface eth0\n# host gpu02\n"),
            "gpu01.txt:2: field host: '# host' must come once, before the first '# iface'");
  EXPECT_EQ(error_of("# time yesterday\n"), "gpu01.txt:1: field time: 'yesterday' is not Unix seconds (date +%s.%N)");
  EXPECT_EQ(error_of("# iface\n"), "gpu01.txt:1: field iface: '# iface NAME' needs one name without blanks, not ''");
  EXPECT_NE(error_of(std::string("# iface eth0\n") + std::string(5000, 'x') + ": 1\n"), "");
  EXPECT_EQ(error_of("# a comment\n\n"), "");
}

TEST(EthtoolCounters, ADirectoryOfHostsAndTheSameNicTwice) {
  std::vector<NicSample> nics = read_ethtool_dir(kEthtool / "roce-t0");
  EXPECT_EQ(nics.size(), 12u);  // six hosts, eth0 and eth1
  EXPECT_EQ(nics[2].host, "gpu02");
  for (const NicSample& n : nics) {
    EXPECT_TRUE(n.counters.count("rx_prio3_pause")) << n.host << " " << n.iface;
    EXPECT_TRUE(n.counters.count("np_ecn_marked_roce_packets"));
    EXPECT_FALSE(n.counters.count("rx_packets"));  // not a kept counter
  }
  fs::path dir = fs::path(::testing::TempDir()) / ("ethtool_twice_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "a.txt") << "# host gpu01\n# iface eth0\n";
  std::ofstream(dir / "b.txt") << "# host gpu01\n# iface eth0\n";
  try {
    read_ethtool_dir(dir);
    ADD_FAILURE() << "the same NIC in two files was accepted";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), (dir / "b.txt").string());
    EXPECT_NE(std::string(e.what()).find("gpu01 eth0 is also in an earlier file"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(NicHealth, PauseStormAndEcnOutlierBetweenTwoCollections) {
  Fabric f = read_lldp_dir(kLldp).fabric;
  std::vector<NicRates> rates = nic_rates(f, collection(kEthtool / "roce-t0", 1), collection(kEthtool / "roce-t1", 2));
  ASSERT_EQ(rates.size(), 12u);
  const NicRates& storm = rates_of(rates, "gpu03", "eth1");
  // Each host was read at its own time; 60 s apart.
  EXPECT_DOUBLE_EQ(storm.seconds, 60);
  EXPECT_NEAR(storm.rx_pauses_per_second, (1803004 - 2764) / 60.0, 1e-9);
  ASSERT_TRUE(storm.rx_paused_share);
  EXPECT_NEAR(*storm.rx_paused_share, (41009012 - 8292) / 60e6, 1e-9);
  EXPECT_EQ(storm.subject, "gpu03 eth1:1 <-> leaf02:2");
  EXPECT_EQ(storm.tier, Tier::HostLeaf);
  const NicRates& quiet = rates_of(rates, "gpu01", "eth0");
  EXPECT_NEAR(quiet.rx_pauses_per_second, 4, 1e-9);
  ASSERT_TRUE(quiet.rx_gbps && quiet.ecn_marks_per_second && quiet.cnps_handled_per_second);
  EXPECT_GT(*quiet.rx_gbps, 30);
  EXPECT_FALSE(quiet.reset);
  // gpu06 eth1 has no neighbour, so no cable.
  EXPECT_EQ(rates_of(rates, "gpu06", "eth1").cable, -1);

  std::vector<NicFinding> found = check_nic_health(rates, {});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].kind, NicFindingKind::PauseStorm);
  EXPECT_EQ(found[0].host + " " + found[0].iface, "gpu03 eth1");
  EXPECT_NE(found[0].why.find("pause storm on gpu03 eth1"), std::string::npos) << found[0].why;
  EXPECT_NE(found[0].why.find("paused 68.3% of the time"), std::string::npos) << found[0].why;
  EXPECT_EQ(found[1].kind, NicFindingKind::EcnOutlier);
  EXPECT_EQ(found[1].host + " " + found[1].iface, "gpu05 eth0");
  EXPECT_NE(found[1].why.find("np_ecn_marked_roce_packets"), std::string::npos) << found[1].why;

  // Raising the thresholds past what the fixtures show leaves nothing.
  EXPECT_TRUE(check_nic_health(rates, {50000, 100, 1000}).empty());

  apply_nic_health(f, found);
  const Link& l = f.link(f.cables()[static_cast<size_t>(found[0].cable)]);
  EXPECT_TRUE(l.degraded);
  EXPECT_EQ(l.degraded_why, found[0].why);
}

TEST(NicHealth, ResetCountersAndTheMedianNeedsThreePeers) {
  Fabric f = read_lldp_dir(kLldp).fabric;
  auto nic = [](std::string host, uint64_t ecn, uint64_t pause) {
    return NicSample{std::move(host), "eth0", {{"np_ecn_marked_roce_packets", ecn}, {"rx_pause_ctrl_phy", pause}}, 0};
  };
  NicCollection a{1, "t0", 0, {nic("gpu01", 0, 500), nic("gpu02", 0, 0)}};
  NicCollection b{2, "t1", 10'000, {nic("gpu01", 100000, 100), nic("gpu02", 10, 0)}};
  std::vector<NicRates> r = nic_rates(f, a, b);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_TRUE(r[0].reset);  // 500 -> 100: counted from the reset
  EXPECT_DOUBLE_EQ(r[0].rx_pauses_per_second, 10);
  EXPECT_FALSE(r[0].rx_paused_share);            // no duration counter
  EXPECT_TRUE(check_nic_health(r, {}).empty());  // two peers: no median
  b.samples.push_back(nic("gpu03", 20, 0));
  a.samples.push_back(nic("gpu03", 0, 0));
  std::vector<NicFinding> found = check_nic_health(nic_rates(f, a, b), {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].host, "gpu01");
  EXPECT_THROW(nic_rates(f, b, a), std::invalid_argument);
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "topo-nic-test-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(NicHealth, StoredBesidePortCountersAndRatedFromTheStore) {
  TempDir dir;
  std::string db = (dir.path() / "topo.db").string();
  Fabric f = read_lldp_dir(kLldp).fabric;
  int64_t snapshot = SnapshotStore(db).save(f);
  HealthStore store(db);
  NicCollection t0 = collection(kEthtool / "roce-t0", 0), t1 = collection(kEthtool / "roce-t1", 0);
  int64_t first = store.add_nics(snapshot, t0.samples, "ethtool:t0", {});
  EXPECT_TRUE(latest_nic_rates(store, f, snapshot).empty());
  int64_t second = store.add_nics(snapshot, t1.samples, "ethtool:t1", {"gpu07 eth0: no such netdev"});
  EXPECT_EQ(store.newest(), second);
  // NIC collections are not port counter collections.
  EXPECT_TRUE(store.list(snapshot).empty());
  EXPECT_TRUE(store.latest(snapshot, 2).empty());
  std::vector<CollectionInfo> listed = store.list_nics(snapshot);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[1].kind, "ethtool");
  EXPECT_EQ(listed[1].unanswered, std::vector<std::string>{"gpu07 eth0: no such netdev"});
  EXPECT_EQ(listed[0].taken_ms, t0.taken_ms);  // dated by the files' own times
  NicCollection back = store.load_nics(first);
  EXPECT_EQ(back.samples, t0.samples);  // bit for bit
  std::vector<NicRates> rates = latest_nic_rates(store, f, snapshot);
  EXPECT_EQ(check_nic_health(rates, {}).size(), 2u);
}

TEST(NicHealth, ASchema4DatabaseMigratesKeepingItsPortCollections) {
  TempDir dir;
  std::string db = (dir.path() / "old.db").string();
  Fabric f = read_lldp_dir(kLldp).fabric;
  {
    Connection c(db, milliseconds(1000));
    prepare_schema(c, 4);
  }
  // A schema-4 build's rows: a snapshot and one port counter collection.
  int64_t snapshot = 0;
  {
    Connection c(db, milliseconds(1000));
    c.exec(
        "INSERT INTO snapshot (taken_at, source, host_pattern, hosts, hcas, switches, leaves, spines, cores, "
        "links, pods, rails, rail_optimized, faults) VALUES ('2026-12-01T00:00:00Z', 'x', '', 0, 0, 0, 0, 0, 0, 0, "
        "0, 0, 0, 0);"
        "INSERT INTO health_collection (snapshot_id, taken_at, taken_ms, source, ports, unanswered) VALUES "
        "(1, '2026-12-01T00:00:00Z', 1764547200000, 'libibmad:mlx5_0', 1, '');"
        "INSERT INTO port_sample VALUES (1, 'S-1', 3, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1);",
        "rows as schema 4 wrote them");
    snapshot = 1;
  }
  HealthStore store(db);  // migrates
  {
    Connection c(db, milliseconds(1000));
    EXPECT_EQ(schema_version(c), kSchemaVersion);
  }
  std::vector<CollectionInfo> ports = store.list(snapshot);
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(ports[0].kind, "port");
  EXPECT_EQ(store.load(1).samples.at(0).counters.symbol_errors, 7u);
  EXPECT_TRUE(store.list_nics(snapshot).empty());
  store.add_nics(snapshot, read_ethtool_dir(kEthtool / "roce-t0"), "ethtool:t0", {});
  EXPECT_EQ(store.list_nics(snapshot).size(), 1u);
  EXPECT_EQ(store.list(snapshot).size(), 1u);
}

TEST(NicHealth, MetricsInTheExpositionFormat) {
  Fabric f = read_lldp_dir(kLldp).fabric;
  NicCollection t0 = collection(kEthtool / "roce-t0", 1), t1 = collection(kEthtool / "roce-t1", 2);
  topoctl::Exposition out;
  topoctl::nic_metrics(out, &t1, nic_rates(f, t0, t1), {});
  const std::string& text = out.text();
  EXPECT_NE(text.find("# TYPE topo_aware_nic_pause_frames_total counter\n"), std::string::npos) << text;
  EXPECT_NE(text.find("topo_aware_nic_pause_frames_total{host=\"gpu03\",nic=\"eth1\",direction=\"rx\"} 1803004\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("topo_aware_nic_degraded_by_counters{host=\"gpu03\",nic=\"eth1\",finding=\"pause_storm\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("topo_aware_nic_degraded_by_counters{host=\"gpu05\",nic=\"eth0\",finding=\"ecn_outlier\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("topo_aware_nic_paused_ratio{host=\"gpu03\",nic=\"eth1\",direction=\"rx\"} 0.68"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE topo_aware_nic_ecn_marked_packets_per_second gauge\n"), std::string::npos);
}

}  // namespace
}  // namespace topo
