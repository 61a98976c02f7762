// Real InfiniBand discovery of simulated fabrics.
//
// Each test writes a synthetic fabric as an ibsim net file
// (write_ibnetdiscover), starts `ibsim -s` on it with a private socket name
// (IBSIM_SOCKNAME) and OpenSM under libumad2sim to bring the ports Active,
// then discovers the fabric through libibnetdisc twice: live, in a child
// process (this binary re-executed under LD_PRELOAD with TOPO_IBSIM_CHILD
// set, calling discover_ibnetdisc), and from the cache file that
// `ibnetdiscover --cache` writes under the same preload. Both must match the
// fabric that was written: hosts, levels, oversubscription, rails, the
// degraded link. Faults are injected through ibsim's console (Unlink/Link).
//
// Skips only when ibsim is not installed. Every process it starts is
// stopped and reaped when the test ends, also on failure.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "discovery/ibnetdisc.h"
#include "discovery/ibnetdiscover.h"
#include "fabric/classify.h"
#include "fabric/synthetic.h"
#include "tests/system/ibsim_processes.h"

// libibnetdisc 44 leaks 64-byte blocks in ibnd_discover_fabric and
// ibnd_load_fabric on fabrics of a few dozen nodes, after
// ibnd_destroy_fabric; LeakSanitizer is told so (a no-op in other builds).
// LeakSanitizer looks this hook up by its reserved name.
// NOLINTNEXTLINE(bugprone-reserved-identifier)
extern "C" const char* __lsan_default_suppressions() { return "leak:libibnetdisc.so\n"; }

namespace topo {
namespace {

using namespace system_test;

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

// ---------------------------------------------------------------------------
// What a discovery found, in terms that do not depend on where it came from:
// node names (descriptions) and port numbers, never ids or GUIDs.

std::string end_name(const Fabric& f, size_t v, int port) { return fmt::format("{}:{}", f.node(v).name, port); }

std::string link_name(const Fabric& f, const Link& l) {
  std::string a = end_name(f, l.end_a, l.port_a), b = end_name(f, l.end_b, l.port_b);
  return a < b ? a + " <-> " + b : b + " <-> " + a;
}

json summarize(const Fabric& f) {
  const FabricSummary& s = f.summary();
  json out;
  out["hosts"] = s.hosts;
  out["hcas"] = s.hcas;
  out["switches"] = {{"leaf", s.leaves}, {"spine", s.spines}, {"core", s.cores}};
  out["pods"] = s.pods;
  out["rails"] = s.rails;
  out["rail_optimized"] = s.rail_optimized;
  int cables = 0, inactive = 0;
  json rates = json::object(), degraded = json::array();
  for (auto e : boost::make_iterator_range(boost::edges(f.graph()))) {
    const Link& l = f.link(e);
    if (l.kind != LinkKind::Cable) continue;
    ++cables;
    inactive += l.state != PortState::Active;
    rates[link_name(f, l)] = l.rate.str();
    if (l.degraded)
      degraded.push_back({{"link", link_name(f, l)}, {"rate", l.rate.str()}, {"expected", l.expected.str()}});
  }
  out["cables"] = cables;
  out["inactive"] = inactive;
  out["rates"] = rates;
  out["degraded_links"] = degraded;
  json leaves = json::array();
  for (NodeId leaf : f.switches_at(Level::Leaf)) {
    const Node& n = f.node(leaf);
    leaves.push_back({{"name", n.name},
                      {"hosts", f.hosts_under(leaf).size()},
                      {"oversubscription", n.oversubscription()},
                      {"down_gbps", n.down_gbps},
                      {"up_gbps", n.up_gbps}});
  }
  std::sort(leaves.begin(), leaves.end(), [](const json& a, const json& b) { return a["name"] < b["name"]; });
  out["leaves"] = leaves;
  std::multiset<std::string> faults;
  for (const Fault& x : f.faults()) {
    std::string subject = x.subject;
    if (size_t arrow = subject.find(" <-> "); arrow != std::string::npos) {
      std::string a = subject.substr(0, arrow), b = subject.substr(arrow + 5);
      subject = std::min(a, b) + " <-> " + std::max(a, b);
    }
    faults.insert(fmt::format("{} {}", name(x.kind), subject));
  }
  out["faults"] = faults;
  return out;
}

const json* leaf_named(const json& summary, const std::string& name) {
  for (const json& l : summary["leaves"])
    if (l["name"] == name) return &l;
  return nullptr;
}

// ---------------------------------------------------------------------------
// The child: discover through libibnetdisc (under libumad2sim) until the
// subnet manager has every expected cable Active, then write the summary.

int run_child() {
  const char* out_path = std::getenv("TOPO_IBSIM_OUT");
  if (!out_path) return 3;
  int expect = std::atoi(std::getenv("TOPO_IBSIM_CABLES") ? std::getenv("TOPO_IBSIM_CABLES") : "0");
  const bool once = std::getenv("TOPO_IBSIM_ONCE") != nullptr;
  auto deadline = std::chrono::steady_clock::now() + (once ? 0s : 40s);
  json result;
  for (;;) {
    try {
      Fabric f = discover_ibnetdisc({});
      result = summarize(f);
      result["source"] = f.source();
      if ((result["inactive"] == 0 && result["cables"] == expect) || std::chrono::steady_clock::now() > deadline) break;
    } catch (const std::exception& e) {
      result = {{"error", e.what()}};
      if (std::chrono::steady_clock::now() > deadline) break;
    }
    std::this_thread::sleep_for(200ms);
  }
  std::ofstream(out_path) << result.dump(1);
  return result.contains("error") ? 2 : 0;
}

// Re-executed as the child, this binary does the child's work before gtest
// starts; exit() (not _exit) lets libumad2sim detach from ibsim and clean up.
const bool kChild = [] {
  if (std::getenv("TOPO_IBSIM_CHILD")) std::exit(run_child());
  return false;
}();

// ---------------------------------------------------------------------------
// Processes: tests/system/ibsim_processes.h.
// ---------------------------------------------------------------------------
// A simulated fabric: ibsim on a net file, OpenSM on top, discovery on demand.

class SimulatedFabric {
 public:
  explicit SimulatedFabric(const Fabric& fabric) : sim_(fabric, "topo") {
    auto opensm = find_program("opensm");
    if (!opensm)
      throw std::runtime_error(
          "opensm is not installed: without a subnet manager every simulated port stays in Init "
          "(scripts/install-deps.sh installs it)");
    opensm_.emplace(std::vector<std::string>{*opensm, "-f", (dir() / "opensm.log").string()},
                    sim_.env({"OSM_TMP_DIR=" + dir().string(), "OSM_CACHE_DIR=" + dir().string()}), dir(),
                    dir() / "opensm.out", false);
  }

  // Live discovery in a child process, waiting until `cables` cables are up.
  json discover_live(int cables) {
    fs::path out = dir() / fmt::format("live{}.json", ++runs_);
    Process child(
        {fs::read_symlink("/proc/self/exe").string()},
        sim_.env({"TOPO_IBSIM_CHILD=1", "TOPO_IBSIM_OUT=" + out.string(), fmt::format("TOPO_IBSIM_CABLES={}", cables)}),
        dir(), dir() / fmt::format("live{}.log", runs_), false);
    auto status = child.wait(60s);
    if (!status) throw std::runtime_error("live discovery did not finish in 60 s:\n" + diagnostics());
    if (!fs::exists(out))
      throw std::runtime_error(fmt::format("live discovery wrote nothing (status {}):\n{}", *status,
                                           sim_.log(fmt::format("live{}.log", runs_)) + diagnostics()));
    json result = json::parse(read_file(out));
    if (result.contains("error"))
      throw std::runtime_error("live discovery failed: " + result["error"].get<std::string>());
    return result;
  }

  // `ibnetdiscover --cache` under the preload, then load_ibnetdisc_cache.
  Fabric discover_cache() {
    fs::path cache = dir() / fmt::format("fabric{}.cache", ++runs_);
    auto ibnetdiscover = find_program("ibnetdiscover");
    if (!ibnetdiscover) throw std::runtime_error("ibnetdiscover (infiniband-diags) is not installed");
    Process p({*ibnetdiscover, "--cache", cache.string()}, sim_.env({}), dir(), dir() / "ibnetdiscover.log", false);
    auto status = p.wait(60s);
    if (!status || !WIFEXITED(*status) || WEXITSTATUS(*status) != 0)
      throw std::runtime_error("ibnetdiscover --cache failed:\n" + sim_.log("ibnetdiscover.log"));
    return load_ibnetdisc_cache(cache.string());
  }

  void console(const std::string& command) { sim_.console(command); }
  const fs::path& dir() const { return sim_.dir(); }
  std::vector<std::string> preload_env(std::vector<std::string> more) const { return sim_.env(std::move(more)); }

 private:
  std::string diagnostics() const {
    return "--- ibsim.log\n" + sim_.log("ibsim.log") + "--- opensm.out\n" + sim_.log("opensm.out");
  }

  Ibsim sim_;
  std::optional<Process> opensm_;  // declared after sim_: stopped before ibsim
  int runs_ = 0;
};

class IbsimDiscovery : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!find_program("ibsim")) GTEST_SKIP() << "ibsim is not installed (Debian package ibsim-utils)";
    ASSERT_TRUE(fs::exists(kUmad2sim)) << kUmad2sim << " is missing (Debian package libumad2sim0)";
  }
};

int cable_count(const Fabric& f) { return f.summary().links; }

// The 2:1 leaf/spine fabric: 4 leaves x 8 hosts, 2 spines, leaf02's first
// uplink (port 9) trained down to 1x. HDR, the fastest rate ibsim 0.10
// simulates, so that live rates can be compared with the written ones.
constexpr const char* kLeafSpine = "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,rate=4xHDR,degrade=leaf02:9";
constexpr const char* kRails = "railopt:hosts=16,rails=4,spines=2,rate=4xHDR";

TEST_F(IbsimDiscovery, LeafSpineWithADegradedUplink) {
  Fabric written = make_synthetic(kLeafSpine);
  const json expected = summarize(written);
  // The expectations hold for the written fabric itself, so that a
  // discovery matching it is a discovery that found them.
  ASSERT_EQ(expected["hosts"], 32);
  ASSERT_EQ(expected["switches"]["leaf"], 4);
  ASSERT_EQ(expected["switches"]["spine"], 2);
  ASSERT_EQ(expected["degraded_links"].size(), 1u);

  SimulatedFabric sim(written);
  json live = sim.discover_live(cable_count(written));
  EXPECT_EQ(live["source"], "ibnetdisc:ibsim0");
  EXPECT_EQ(live["inactive"], 0) << "OpenSM did not bring every port Active";
  EXPECT_EQ(live["hosts"], 32);
  EXPECT_EQ(live["switches"], json({{"leaf", 4}, {"spine", 2}, {"core", 0}}));
  for (const char* leaf : {"leaf01", "leaf03", "leaf04"}) {
    const json* l = leaf_named(live, leaf);
    ASSERT_TRUE(l) << leaf;
    EXPECT_EQ((*l)["hosts"], 8);
    EXPECT_DOUBLE_EQ((*l)["oversubscription"].get<double>(), 2.0) << leaf;
    EXPECT_DOUBLE_EQ((*l)["down_gbps"].get<double>(), 8 * 200.0) << leaf;
  }
  const json* leaf02 = leaf_named(live, "leaf02");
  ASSERT_TRUE(leaf02);
  EXPECT_DOUBLE_EQ((*leaf02)["up_gbps"].get<double>(), 3 * 200.0 + 50.0);
  EXPECT_GT((*leaf02)["oversubscription"].get<double>(), 2.0);
  ASSERT_EQ(live["degraded_links"].size(), 1u);
  EXPECT_NE(live["degraded_links"][0]["link"].get<std::string>().find("leaf02:9"), std::string::npos);
  EXPECT_EQ(live["degraded_links"][0]["rate"], "1xHDR");
  EXPECT_EQ(live["degraded_links"][0]["expected"], "4xHDR");
  // Everything else, rate by rate and fault by fault, as written.
  json live_only = live;
  live_only.erase("source");
  EXPECT_EQ(live_only, expected) << "live:\n" << live.dump(1) << "\nwritten:\n" << expected.dump(1);

  // The same fabric from a cache file written by ibnetdiscover under the preload.
  Fabric cached = sim.discover_cache();
  EXPECT_EQ(summarize(cached), expected);
  EXPECT_EQ(cached.source().rfind("ibnetdisc-cache:", 0), 0u);

  // Fault: unplug one of leaf03's uplinks through the ibsim console...
  const Node& leaf03 = written.node(*written.find("leaf03"));
  std::optional<std::pair<std::string, int>> far;
  for (auto e : boost::make_iterator_range(boost::out_edges(*written.find("leaf03"), written.graph())))
    if (written.local_port(e, *written.find("leaf03")) == 10) {
      NodeId p = written.peer(e, *written.find("leaf03"));
      far = {{written.node(p).id, written.local_port(e, p)}};
    }
  ASSERT_TRUE(far) << "leaf03 has no cable on port 10";
  sim.console(fmt::format("Unlink \"{}\"[10]", leaf03.id));
  json unplugged = sim.discover_live(cable_count(written) - 1);
  EXPECT_EQ(unplugged["cables"], cable_count(written) - 1);
  const json* l3 = leaf_named(unplugged, "leaf03");
  ASSERT_TRUE(l3);
  EXPECT_DOUBLE_EQ((*l3)["up_gbps"].get<double>(), 3 * 200.0);
  EXPECT_NE(unplugged["faults"].dump().find("missing_uplinks leaf03"), std::string::npos) << unplugged["faults"];

  // ...and plug it back: OpenSM brings it up again and the fabric is whole.
  sim.console(fmt::format("Link \"{}\"[10] \"{}\"[{}]", leaf03.id, far->first, far->second));
  json replugged = sim.discover_live(cable_count(written));
  replugged.erase("source");
  EXPECT_EQ(replugged, expected);
}

TEST_F(IbsimDiscovery, RailOptimizedFabric) {
  Fabric written = make_synthetic(kRails);
  const json expected = summarize(written);
  ASSERT_EQ(expected["rails"], 4);
  ASSERT_EQ(expected["rail_optimized"], true);

  SimulatedFabric sim(written);
  json live = sim.discover_live(cable_count(written));
  EXPECT_EQ(live["inactive"], 0);
  EXPECT_EQ(live["hosts"], 16);
  EXPECT_EQ(live["hcas"], 64);
  EXPECT_EQ(live["rails"], 4);
  EXPECT_EQ(live["rail_optimized"], true);
  EXPECT_TRUE(live["degraded_links"].empty());
  live.erase("source");
  EXPECT_EQ(live, expected) << "live:\n" << live.dump(1) << "\nwritten:\n" << expected.dump(1);
  EXPECT_EQ(summarize(sim.discover_cache()), expected);
}

// The admin's path: `topoctl discover --ibnetdisc` under libumad2sim, then
// `topoctl show --json` on the snapshot it stored.
TEST_F(IbsimDiscovery, TopoctlDiscoversTheSimulatedFabric) {
  ASSERT_TRUE(fs::exists(TOPOCTL_PATH)) << TOPOCTL_PATH;
  for (const char* spec : {kLeafSpine, kRails}) {
    SCOPED_TRACE(spec);
    Fabric written = make_synthetic(spec);
    const json expected = summarize(written);
    SimulatedFabric sim(written);
    sim.discover_live(cable_count(written));  // waits until OpenSM has every port Active
    const std::string db = (sim.dir() / "topo.db").string();
    Process discover({TOPOCTL_PATH, "discover", "--ibnetdisc", "--db", db}, sim.preload_env({}), sim.dir(),
                     sim.dir() / "discover.out", false, sim.dir() / "discover.err");
    auto status = discover.wait(60s);
    ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
        << read_file(sim.dir() / "discover.out") << read_file(sim.dir() / "discover.err");
    Process show({TOPOCTL_PATH, "show", "--db", db, "--json"}, {}, sim.dir(), sim.dir() / "show.json", false,
                 sim.dir() / "show.err");
    status = show.wait(60s);
    ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << read_file(sim.dir() / "show.err");
    json shown = json::parse(read_file(sim.dir() / "show.json"));

    EXPECT_EQ(shown["hosts"], expected["hosts"]);
    EXPECT_EQ(shown["switches"]["leaf"], expected["switches"]["leaf"]);
    EXPECT_EQ(shown["switches"]["spine"], expected["switches"]["spine"]);
    EXPECT_EQ(shown["switches"]["core"], expected["switches"]["core"]);
    EXPECT_EQ(shown["rails"], expected["rails"]);
    EXPECT_EQ(shown["pods"], expected["pods"]);
    ASSERT_EQ(shown["leaves"].size(), expected["leaves"].size()) << shown.dump(1);
    for (const json& leaf : shown["leaves"]) {
      const json* want = leaf_named(expected, leaf["name"].get<std::string>());
      ASSERT_TRUE(want) << leaf;
      EXPECT_EQ(leaf["hosts"], (*want)["hosts"]) << leaf;
      EXPECT_DOUBLE_EQ(leaf["oversubscription"].get<double>(), (*want)["oversubscription"].get<double>()) << leaf;
      EXPECT_DOUBLE_EQ(leaf["down_gbps"].get<double>(), (*want)["down_gbps"].get<double>()) << leaf;
      EXPECT_DOUBLE_EQ(leaf["up_gbps"].get<double>(), (*want)["up_gbps"].get<double>()) << leaf;
    }
    ASSERT_EQ(shown["degraded_links"].size(), expected["degraded_links"].size()) << shown.dump(1);
    if (std::string(spec) == kLeafSpine) {
      const std::string link = shown["degraded_links"][0].dump();
      EXPECT_NE(link.find("leaf02"), std::string::npos) << link;
      EXPECT_NE(link.find("\"1x\""), std::string::npos) << link;
      EXPECT_NE(link.find("\"4x\""), std::string::npos) << link;  // what the tier expects
      EXPECT_DOUBLE_EQ(leaf_named(expected, "leaf01")->at("oversubscription").get<double>(), 2.0);
    }
  }
}

// Preloaded libumad2sim with no simulator to talk to would wait forever;
// discovery says so instead.
TEST_F(IbsimDiscovery, NoSimulatorIsATypedError) {
  TempDir dir;
  fs::path out = dir.path() / "result.json";
  Process child({fs::read_symlink("/proc/self/exe").string()},
                with_preload({"TOPO_IBSIM_CHILD=1", "TOPO_IBSIM_ONCE=1", "TOPO_IBSIM_OUT=" + out.string()},
                             fmt::format("topo{}none", getpid())),
                dir.path(), dir.path() / "child.log", false);
  auto status = child.wait(20s);
  ASSERT_TRUE(status) << "discovery hung without a simulator";
  json result = json::parse(read_file(out));
  ASSERT_TRUE(result.contains("error")) << result.dump(1);
  EXPECT_NE(result["error"].get<std::string>().find("no ibsim listens on"), std::string::npos) << result["error"];
}

// The ibsim dialect fixture, run by the simulator itself: our reading of the
// net file must be the fabric ibsim builds from it, negotiated rates included.
TEST_F(IbsimDiscovery, NetFileReadsAsIbsimRunsIt) {
  const std::string net = std::string(TOPO_FIXTURES) + "/ibnetdiscover/ibsim.net";
  Fabric read = read_ibnetdiscover_file(net);
  TempDir dir;
  std::string socket = fmt::format("topo{}net", getpid());
  Process ibsim({*find_program("ibsim"), "-s", net}, {"IBSIM_SOCKNAME=" + socket}, dir.path(), dir.path() / "ibsim.log",
                true);
  for (auto deadline = std::chrono::steady_clock::now() + 15s; !abstract_socket_listening(socket);) {
    ASSERT_TRUE(ibsim.running() && std::chrono::steady_clock::now() < deadline) << read_file(dir.path() / "ibsim.log");
    std::this_thread::sleep_for(20ms);
  }
  fs::path cache = dir.path() / "net.cache";
  Process p({*find_program("ibnetdiscover"), "--cache", cache.string()}, with_preload({}, socket), dir.path(),
            dir.path() / "ibnetdiscover.log", false);
  auto status = p.wait(60s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << read_file(dir.path() / "ibnetdiscover.log");
  Fabric live = load_ibnetdisc_cache(cache.string());
  json a = summarize(read), b = summarize(live);
  // No subnet manager here: the live ports are in Init, the file's are Active.
  EXPECT_EQ(b["inactive"], b["cables"]);
  EXPECT_EQ(a["rates"], b["rates"]);
  EXPECT_EQ(a["hosts"], b["hosts"]);
  EXPECT_EQ(a["switches"], b["switches"]);
  for (NodeId v : read.switches()) {
    auto twin = live.find(fmt::format("S-{:016x}", read.node(v).guid));
    ASSERT_TRUE(twin) << read.node(v).name << ": ibsim gave it another GUID";
    EXPECT_EQ(live.node(*twin).name, read.node(v).name);
  }
}

}  // namespace
}  // namespace topo
