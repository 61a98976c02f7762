// LIDs in the ibnetdiscover reader and writer, and OpenSM's LFT dump.
//
// The fixtures under fixtures/routing/ were made under ibsim 0.10 and
// OpenSM 3.3.23: multiport.net (two leaves, two spines, a CA cabled to both
// leaves), `ibnetdiscover` of it (multiport.ibnetdiscover) and
// `opensm -o -R minhop|updn -D 0x43 --dump_files_dir` (multiport.*.lfts).
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "discovery/ibnetdiscover.h"
#include "fabric/synthetic.h"
#include "routing/opensm_lfts.h"
#include "routing/route.h"
#include "routing/routing_engine.h"

namespace topo {
namespace {

const std::string kDir = std::string(TOPO_FIXTURES) + "/routing/";

Fabric multiport() { return read_ibnetdiscover_file(kDir + "multiport.ibnetdiscover"); }

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Routing read_text(const std::string& text, const Fabric& f) {
  std::istringstream in(text);
  return read_opensm_lfts(in, "test.lfts", f);
}

std::string error_of(const std::string& text, const Fabric& f) {
  try {
    read_text(text, f);
  } catch (const ParseError& e) {
    return fmt::format("{}:{}: {}", e.file(), e.line(), e.what());
  }
  return "no error";
}

TEST(RoutingLids, IbnetdiscoverKeepsSwitchAndPortLids) {
  Fabric f = multiport();
  EXPECT_EQ(f.node(*f.find("S-0000000000200000")).lid, 1u);  // leaf01, from its header
  EXPECT_EQ(f.node(*f.find("S-0000000000200003")).lid, 6u);  // spine02
  EXPECT_EQ(f.node(*f.find("H-0000000000100000")).lid, 2u);
  // The CA cabled to both leaves is one HCA vertex per cabled port, each with its LID.
  ASSERT_TRUE(f.find("H-0000000000100002:1"));
  ASSERT_TRUE(f.find("H-0000000000100002:2"));
  EXPECT_FALSE(f.find("H-0000000000100002"));
  EXPECT_EQ(f.node(*f.find("H-0000000000100002:1")).lid, 5u);
  EXPECT_EQ(f.node(*f.find("H-0000000000100002:2")).lid, 7u);
  EXPECT_EQ(f.node(*f.find("H-0000000000100002:2")).host, "gpu002");
  EXPECT_EQ(f.node_by_lid(7), f.find("H-0000000000100002:2"));
}

Fabric read_fabric(const std::string& text) {
  std::istringstream in(text);
  return read_ibnetdiscover(in, "test.ibnd");
}

TEST(RoutingLids, SwitchPortLinesGiveTheCaLidToo) {
  Fabric f = read_fabric(
      "Switch 4 \"S-1\" # \"leaf01\" enhanced port 0 lid 3 lmc 0\n"
      "[1] \"H-1\"[1] # \"gpu001 mlx5_0\" lid 9 4xHDR\n\n"
      "Ca 1 \"H-1\" # \"gpu001 mlx5_0\"\n");
  EXPECT_EQ(f.node(*f.find("S-1")).lid, 3u);
  EXPECT_EQ(f.node(*f.find("H-1")).lid, 9u);
}

TEST(RoutingLids, ContradictoryLidsAreAnError) {
  try {
    read_fabric(
        "Switch 4 \"S-1\" # \"leaf01\" enhanced port 0 lid 3 lmc 0\n"
        "[1] \"H-1\"[1] # \"gpu001 mlx5_0\" lid 9 4xHDR\n\n"
        "Ca 1 \"H-1\" # \"gpu001 mlx5_0\"\n"
        "[1] \"S-1\"[1] # lid 10 lmc 0 \"leaf01\" lid 3 4xHDR\n");
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 5);
    EXPECT_NE(std::string(e.what()).find("LID 10"), std::string::npos) << e.what();
  }
}

TEST(RoutingLids, WriterWritesLidsThatReadBack) {
  for (const Fabric& f : {multiport(), make_synthetic("leafspine:leaves=2,hosts_per_leaf=2,spines=2")}) {
    std::ostringstream out;
    write_ibnetdiscover(f, out);
    EXPECT_EQ(out.str().find(" lid 0 "), std::string::npos) << out.str();
    Fabric back = read_fabric(out.str());
    ASSERT_EQ(back.node_count(), f.node_count()) << out.str();
    for (NodeId v = 0; v < f.node_count(); ++v) {
      auto w = back.find(f.node(v).id);
      ASSERT_TRUE(w) << f.node(v).id;
      EXPECT_EQ(back.node(*w).lid, f.node(v).lid) << f.node(v).id;
    }
  }
  // The dual-homed CA is written back as one CA with two ports.
  std::ostringstream out;
  write_ibnetdiscover(multiport(), out);
  EXPECT_NE(out.str().find("Ca\t2 \"H-0000000000100002\""), std::string::npos) << out.str();
}

TEST(RoutingLfts, ReadsOpenSmsDump) {
  Fabric f = multiport();
  Routing r = read_opensm_lfts_file(kDir + "multiport.minhop.lfts", f);
  EXPECT_TRUE(r.is_static());
  EXPECT_FALSE(r.emulated);
  EXPECT_EQ(r.source, "opensm-dump:" + kDir + "multiport.minhop.lfts");
  size_t leaf01 = static_cast<size_t>(f.switch_index(*f.find("S-0000000000200000")));
  EXPECT_EQ(r.out_port(leaf01, 1), 0);  // itself
  EXPECT_EQ(r.out_port(leaf01, 2), 1);  // gpu001
  EXPECT_EQ(r.out_port(leaf01, 8), 3);  // gpu003, up through spine01
  EXPECT_EQ(r.out_port(leaf01, 9), kNoPort);
  f.set_routing(r);
  // gpu001 -> gpu003: leaf01 port 3, spine01 port 2, leaf02 port 1 (as ibtracert 2 8 printed).
  StaticRoute route = trace_static_route(f, *f.find("H-0000000000100000"), *f.find("H-0000000000100005"));
  ASSERT_EQ(route.status, RouteStatus::Ok);
  ASSERT_EQ(route.hops.size(), 4u);
  EXPECT_EQ(f.node(route.hops[1].from).name, "leaf01");
  EXPECT_EQ(route.hops[1].out_port, 3);
  EXPECT_EQ(f.node(route.hops[2].from).name, "spine01");
  EXPECT_EQ(route.hops[2].out_port, 2);
  EXPECT_EQ(route.hops[3].out_port, 1);
}

TEST(RoutingLfts, WriteReadRoundTrip) {
  Fabric f = multiport();
  f.set_routing(read_opensm_lfts_file(kDir + "multiport.updn.lfts", f));
  std::ostringstream out;
  write_opensm_lfts(f, out);
  EXPECT_EQ(out.str(), slurp(kDir + "multiport.updn.lfts"));
  Routing back = read_text(out.str(), f);
  EXPECT_EQ(back.lft, f.routing().lft);
}

TEST(RoutingLfts, MalformedLinesNameFileAndLine) {
  Fabric f = multiport();
  std::string good = slurp(kDir + "multiport.minhop.lfts");
  auto with_line = [&](int n, const std::string& text) {
    std::istringstream in(good);
    std::string out, line;
    for (int i = 1; std::getline(in, line); ++i) out += (i == n ? text : line) + "\n";
    return out;
  };
  EXPECT_EQ(error_of(with_line(3, "0x00zz 001 # x"), f).substr(0, 13), "test.lfts:3: ");
  EXPECT_NE(error_of(with_line(3, "0x0002 abc # x"), f).find("expected the out port"), std::string::npos);
  EXPECT_NE(error_of(with_line(3, "garbage"), f).find("test.lfts:3: expected a block header"), std::string::npos);
  EXPECT_NE(error_of(with_line(3, "0x0002 017 # Channel Adapter portguid 0x1: 'gpu001 mlx5_0'"), f).find("port 17"),
            std::string::npos);
  EXPECT_NE(error_of("0x0002 001 # x\n", f).find("test.lfts:1: entry outside"), std::string::npos);
  EXPECT_NE(error_of("", f).find("no switch table"), std::string::npos);
  EXPECT_NE(error_of(good + good, f).find("second table"), std::string::npos);
  EXPECT_NE(error_of(with_line(1, "Unicast lids [0-8] of switch Lid 1 ('leaf01'):"), f).find("guid"),
            std::string::npos);
}

TEST(RoutingLfts, RefusesADumpOfAnotherFabric) {
  Fabric f = multiport();
  // A synthetic fabric of another shape: other switches, other LIDs.
  Fabric other = make_synthetic("leafspine:leaves=3,hosts_per_leaf=2,spines=1");
  other.set_routing(emulate_routing(other, "minhop"));
  std::ostringstream dump;
  write_opensm_lfts(other, dump);
  std::string e = error_of(dump.str(), f);
  EXPECT_NE(e.find("another fabric"), std::string::npos) << e;
  EXPECT_NE(e.find("leaf03"), std::string::npos) << e;   // a switch the fabric lacks
  EXPECT_NE(e.find("spine02"), std::string::npos) << e;  // a switch the dump leaves out
  EXPECT_NE(e.find("LIDs of other nodes"), std::string::npos) << e;
  // One entry naming another node for a LID.
  std::string good = slurp(kDir + "multiport.minhop.lfts");
  std::string bad = good;
  bad.replace(bad.find("'gpu001 mlx5_0'"), 15, "'gpu999 mlx5_0'");
  e = error_of(bad, f);
  EXPECT_NE(e.find("LID 2 is 'gpu999 mlx5_0' in the dump but 'gpu001 mlx5_0' in the fabric"), std::string::npos) << e;
}

// Ten switches the fabric lacks and eight LIDs of other nodes, every name
// of 64 bytes: listed whole, ten of each kind made a message of 2 KB
// (found by fuzzing). The listing stops at a budget; the count stays.
TEST(RoutingLfts, AForeignDumpIsRefusedInAFewLinesWhateverItHolds) {
  Fabric f = multiport();
  std::string dump;
  for (int i = 0; i < 10; ++i)
    dump += fmt::format("Unicast lids [0-8] of switch Lid 9 guid 0x{:016x} ('{}{:02}'):\n", 0x900000 + i,
                        std::string(62, 'f'), i);
  // leaf01's own table, every destination named as a node the fabric lacks.
  std::istringstream good(slurp(kDir + "multiport.minhop.lfts"));
  std::string line;
  for (int n = 0; n < 9 && std::getline(good, line); ++n)
    dump += (n == 0 ? line : line.substr(0, line.find('\'') + 1) + std::string(64, 'x') + "'") + "\n";
  std::string e = error_of(dump, f);
  EXPECT_NE(e.find("another fabric"), std::string::npos) << e;
  EXPECT_NE(e.find("switches the fabric does not have: '" + std::string(62, 'f') + "00'"), std::string::npos) << e;
  EXPECT_NE(e.find("(21 mismatches in all)"), std::string::npos) << e;  // 10 switches, 8 LIDs, 3 left out
  EXPECT_LT(e.size(), 1600u) << e;
}

}  // namespace
}  // namespace topo
