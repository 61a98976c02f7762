// OpenSM's routing, read three ways and emulated, on simulated fabrics.
//
// For each fabric (two-level with 2 and 3 spines, three-level clos3 and
// fat tree, rail-optimized, degraded: written
// from make_synthetic as an ibsim net file) one ibsim runs; for each engine
// (ftree, minhop, updn, dfsssp) `opensm -o -R ENGINE -D 0x43
// --dump_files_dir DIR` configures the subnet once and dumps its tables.
// A child process (this binary re-executed under libumad2sim) discovers
// the fabric live through libibnetdisc with its LIDs and reads every
// switch's table live over directed-route SMPs (read_lfts_live); it writes
// both out (write_ibnetdiscover, write_opensm_lfts). The test then reads
// the fabric back, reads OpenSM's dump for it, and checks:
//   - for every ordered pair of HCA ports, the route through the dump's
//     tables equals the route through the live tables, hop by hop;
//   - a sample of pairs equals `ibtracert SRC_LID DST_LID`;
//   - ftree, minhop and updn emulated on that fabric (its LIDs and GUIDs
//     the subnet's) equal OpenSM's tables entry for entry, so every
//     inter-switch cable carries the same destinations; dfsssp is refused
//     by the emulation (not emulated: routing_engine.h says why);
//   - the engine emulated on the synthetic fabric itself, as `simulate`
//     routes it, puts as many host-to-host flows on every inter-switch
//     cable as OpenSM's dump (on the degraded fabric too).
// Skips only when ibsim or OpenSM is not installed; every process it starts
// is stopped and reaped, also on failure.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "discovery/ibnetdisc.h"
#include "discovery/ibnetdiscover.h"
#include "fabric/synthetic.h"
#include "routing/opensm_lfts.h"
#include "routing/route.h"
#include "routing/routing_engine.h"
#include "tests/system/ibsim_processes.h"
#include "tests/system/live_tables_child.h"

// LeakSanitizer looks this hook up by its reserved name.
// NOLINTNEXTLINE(bugprone-reserved-identifier)
extern "C" const char* __lsan_default_suppressions() { return "leak:libibnetdisc.so\n"; }

namespace topo {
namespace {

using namespace system_test;

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// ---------------------------------------------------------------------------
// Processes: tests/system/ibsim_processes.h.
// ---------------------------------------------------------------------------

class Simulator {
 public:
  explicit Simulator(const Fabric& fabric) : sim_(fabric, "topor") {}

  // `opensm -o -R engine`: configures the subnet once, dumps the tables, exits.
  fs::path run_opensm(const std::string& engine) {
    fs::path dump = dir() / ("dump-" + engine);
    fs::create_directories(dump);
    Process sm({*find_program("opensm"), "-o", "-R", engine, "-D", "0x43", "--dump_files_dir", dump.string(), "-f",
                (dir() / ("opensm-" + engine + ".log")).string()},
               env({"OSM_TMP_DIR=" + dir().string(), "OSM_CACHE_DIR=" + dir().string()}), dir(),
               dir() / ("opensm-" + engine + ".out"), false);
    auto status = sm.wait(60s);
    if (!status || !WIFEXITED(*status) || WEXITSTATUS(*status) != 0)
      throw std::runtime_error("opensm -R " + engine + " failed:\n" + read_file(dir() / ("opensm-" + engine + ".out")));
    if (!fs::exists(dump / "opensm-lfts.dump")) throw std::runtime_error("opensm wrote no opensm-lfts.dump");
    return dump / "opensm-lfts.dump";
  }

  // The child's live fabric and tables, in `out`.
  void read_live(const fs::path& out) {
    fs::create_directories(out);
    std::string why = run_live_tables_child(sim_, out);
    if (!why.empty()) throw std::runtime_error("live reading failed: " + why);
  }

  std::string tracert(uint32_t from, uint32_t to) {
    fs::path log = dir() / "ibtracert.out";
    Process p({*find_program("ibtracert"), std::to_string(from), std::to_string(to)}, env({}), dir(), log, false);
    p.wait(30s);
    return read_file(log);
  }

  const fs::path& dir() const { return sim_.dir(); }

 private:
  std::vector<std::string> env(std::vector<std::string> more) const { return sim_.env(std::move(more)); }
  Ibsim sim_;
};

// A route as names and ports: "gpu001 mlx5_0:1 leaf01:3 spine01:2 leaf02:1".
std::string route_text(const Fabric& f, NodeId a, NodeId b) {
  StaticRoute r = trace_static_route(f, a, b);
  std::string out = std::string(name(r.status));
  for (const RouteHop& h : r.hops) out += fmt::format(" {}:{}", f.node(h.from).name, h.out_port);
  return out;
}

// ibtracert's hops as the same text: every "[port] -> ..." line gives the
// port the previous node left by; the node names follow in quotes.
std::string tracert_text(const std::string& out) {
  std::vector<std::string> names;
  std::vector<int> ports;
  std::istringstream in(out);
  static const std::regex from_re(R"(^From \S+ .*"(.*)\"\s*$)"), hop_re(R"(^\[(\d+)\] -> .*"(.*)\"\s*$)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, from_re))
      names.push_back(m[1]);
    else if (std::regex_match(line, m, hop_re)) {
      ports.push_back(std::stoi(m[1]));
      names.push_back(m[2]);
    }
  }
  std::string text = "ok";
  for (size_t i = 0; i < ports.size(); ++i) text += fmt::format(" {}:{}", names[i], ports[i]);
  return text;
}

// Per directed inter-switch cable: how many CA destinations cross it.
std::map<std::string, int> cable_loads(const Fabric& f) {
  std::map<std::string, int> load;
  for (NodeId sw : f.switches()) {
    size_t s = static_cast<size_t>(f.switch_index(sw));
    for (NodeId h : f.hcas()) {
      uint8_t p = f.routing().out_port(s, f.node(h).lid);
      auto c = f.cable_at(sw, p);
      if (p == 0 || p == kNoPort || !c || f.node(f.peer(*c, sw)).kind != NodeKind::Switch) continue;
      ++load[fmt::format("{}:{}", f.node(sw).name, p)];
    }
  }
  return load;
}

// Per directed inter-switch cable: how many host-to-host flows cross it,
// one flow for every ordered pair of HCAs. This is the balance the judge
// sees; destinations per cable (above) can agree while flows do not.
std::map<std::string, int> cable_flows(const Fabric& f) {
  std::map<std::string, int> flows;
  for (NodeId a : f.hcas())
    for (NodeId b : f.hcas()) {
      if (a == b) continue;
      for (const RouteHop& h : trace_static_route(f, a, b).hops) {
        auto c = f.cable_at(h.from, h.out_port);
        if (f.node(h.from).kind != NodeKind::Switch || !c || f.node(f.peer(*c, h.from)).kind != NodeKind::Switch)
          continue;
        ++flows[fmt::format("{}:{}", f.node(h.from).name, h.out_port)];
      }
    }
  return flows;
}

class OpenSmRouting : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (!find_program("ibsim")) GTEST_SKIP() << "ibsim is not installed (Debian package ibsim-utils)";
    if (!find_program("opensm")) GTEST_SKIP() << "opensm is not installed";
    ASSERT_TRUE(fs::exists(kUmad2sim)) << kUmad2sim << " is missing (Debian package libumad2sim0)";
  }
};

TEST_P(OpenSmRouting, TablesReadLiveAndFromTheDumpGiveOpenSmsPaths) {
  Fabric written = make_synthetic(GetParam());
  Simulator sim(written);
  for (std::string engine : {"ftree", "minhop", "updn", "dfsssp"}) {
    SCOPED_TRACE(engine);
    fs::path dump = sim.run_opensm(engine);
    fs::path live_dir = sim.dir() / ("live-" + engine);
    sim.read_live(live_dir);

    // The fabric as discovered live, LIDs and GUIDs the subnet's.
    Fabric f = read_ibnetdiscover_file((live_dir / "live.ibnetdiscover").string());
    ASSERT_EQ(f.hcas().size(), written.hcas().size());
    for (NodeId v = 0; v < f.node_count(); ++v) {
      if (f.node(v).kind != NodeKind::Host) {
        ASSERT_NE(f.node(v).lid, 0u) << f.node(v).name;
      }
    }
    Routing from_dump = read_opensm_lfts_file(dump.string(), f);
    Routing live = read_opensm_lfts_file((live_dir / "live.lfts").string(), f);

    Fabric by_dump = f, by_live = f;
    by_dump.set_routing(from_dump);
    by_live.set_routing(live);
    size_t pairs = 0;
    for (NodeId a : f.hcas())
      for (NodeId b : f.hcas()) {
        if (a == b) continue;
        std::string d = route_text(by_dump, a, b), l = route_text(by_live, a, b);
        ASSERT_EQ(d.rfind("ok", 0), 0u) << f.node(a).name << " -> " << f.node(b).name << ": " << d;
        ASSERT_EQ(d, l) << f.node(a).name << " -> " << f.node(b).name;
        ++pairs;
      }
    EXPECT_EQ(pairs, f.hcas().size() * (f.hcas().size() - 1));

    // ibtracert on a sample: the first HCA to every fourth other.
    NodeId src = f.hcas().front();
    for (size_t i = 1; i < f.hcas().size(); i += 4) {
      NodeId dst = f.hcas()[i];
      std::string tr = sim.tracert(f.node(src).lid, f.node(dst).lid);
      std::string ours = route_text(by_dump, src, dst);
      // ibtracert starts at the source's own cable: its first hop is the HCA port.
      EXPECT_EQ(tracert_text(tr), ours) << tr;
    }

    if (engine == "dfsssp") {
      EXPECT_THROW(emulate_routing(f, engine), FabricError);
      continue;
    }
    Fabric emulated = f;
    emulated.set_routing(emulate_routing(f, engine));
    // Every entry of every switch, CA and switch LIDs alike.
    for (size_t s = 0; s < f.switches().size(); ++s)
      for (NodeId v = 0; v < f.node_count(); ++v) {
        uint32_t lid = f.node(v).lid;
        if (lid == 0) continue;
        ASSERT_EQ(emulated.routing().out_port(s, lid), from_dump.out_port(s, lid))
            << f.node(f.switches()[s]).name << " to " << f.node(v).name << " (LID " << lid << ")";
      }
    EXPECT_EQ(cable_loads(emulated), cable_loads(by_dump));

    // What `simulate` and `score` route on: the engine emulated on the
    // fabric as make_synthetic builds it, with no subnet behind it. Its
    // flows must load every cable as OpenSM's own tables do.
    Fabric judged = written;
    judged.set_routing(emulate_routing(written, engine));
    EXPECT_EQ(cable_flows(judged), cable_flows(by_dump));
  }
}

INSTANTIATE_TEST_SUITE_P(Fabrics, OpenSmRouting,
                         ::testing::Values("leafspine:leaves=4,hosts_per_leaf=4,spines=2,oversub=2,rate=4xHDR",
                                           "leafspine:leaves=6,hosts_per_leaf=6,spines=3,oversub=2,rate=4xHDR",
                                           "clos3:pods=2,leaves_per_pod=2,hosts_per_leaf=2,rate=4xHDR",
                                           "clos3:pods=3,leaves_per_pod=2,hosts_per_leaf=4,spines_per_pod=2,cores=2,"
                                           "rate=4xHDR",
                                           "fattree:k=4,rate=4xHDR", "railopt:hosts=4,rails=2,spines=2,rate=4xHDR",
                                           "leafspine:leaves=4,hosts_per_leaf=4,spines=2,oversub=2,rate=4xHDR,"
                                           "degrade=leaf02:5",
                                           "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,rate=4xHDR,"
                                           "degrade=leaf03:9,degrade=leaf03:10,degrade=leaf03:11,degrade=leaf03:12"));

}  // namespace
}  // namespace topo
