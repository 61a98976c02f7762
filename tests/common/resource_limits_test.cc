// Inputs built to exhaust a reader: a line of megabytes, a stream that
// never ends, a topology.conf that includes itself, hostlists that expand to
// billions of names, a routing dump with a LID past any table, JSON nested a
// million deep. Each is a ParseError naming the file and line, reached
// without holding the input or building what it describes.
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <streambuf>
#include <string>

#include <gtest/gtest.h>

#include "comm_model/concurrent_file.h"
#include "common/error.h"
#include "common/host_naming.h"
#include "common/hostlist.h"
#include "common/json_nesting.h"
#include "common/line_source.h"
#include "discovery/hwloc_affinity.h"
#include "discovery/lldp.h"
#include "discovery/slurm_topology.h"
#include "fabric/synthetic.h"
#include "health/nccl_tests.h"
#include "placement/busy_file.h"
#include "placement/running_file.h"
#include "plugin/engine/engine_config.h"
#include "routing/opensm_lfts.h"
#include "routing/routing_engine.h"
#include "simulation/trace.h"

namespace topo {
namespace {

// An endless stream, as /dev/zero or /dev/urandom give: `pattern` over and over.
class Endless : public std::streambuf {
 public:
  explicit Endless(const std::string& pattern) {
    while (block_.size() < (1 << 16)) block_ += pattern;
    setg(block_.data(), block_.data(), block_.data() + block_.size());
  }

 protected:
  int_type underflow() override {
    setg(block_.data(), block_.data(), block_.data() + block_.size());
    return traits_type::to_int_type(block_[0]);
  }

 private:
  std::string block_;
};

// The error `read` throws; fails the test when it throws none.
template <typename F>
ParseError error_of(F read) {
  try {
    read();
  } catch (const ParseError& e) {
    return e;
  }
  ADD_FAILURE() << "no ParseError";
  return ParseError("", 0, "");
}

std::string temp_dir() {
  std::string dir = ::testing::TempDir() + "resource_limits_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  return dir;
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(ResourceLimits, LineOfMegabytesNamesItsLine) {
  std::string text = "first\nsecond\n" + std::string(kMaxLineBytes + 1, 'x') + "\n";
  std::istringstream in(text);
  LineSource lines(in, "big.txt");
  std::string_view line;
  ASSERT_TRUE(lines.next(line));
  ASSERT_TRUE(lines.next(line));
  ParseError e = error_of([&] { lines.next(line); });
  EXPECT_EQ(e.file(), "big.txt");
  EXPECT_EQ(e.line(), 3);
  EXPECT_NE(std::string(e.what()).find("longer than 1048576 bytes"), std::string::npos) << e.what();
}

TEST(ResourceLimits, EndlessStreamStopsAtTheBound) {
  Endless zeros(std::string(1, '\0')), lines_of_a("a\n");
  std::istream no_breaks(&zeros), only_breaks(&lines_of_a);
  std::string_view line;
  LineSource one(no_breaks, "/dev/zero");
  EXPECT_EQ(error_of([&] { one.next(line); }).line(), 1);
  LineSource many(only_breaks, "/dev/urandom", kMaxLineBytes, 8 << 20);
  ParseError e = error_of([&] {
    while (many.next(line)) {
    }
  });
  EXPECT_NE(std::string(e.what()).find("more than 8388608 bytes"), std::string::npos) << e.what();
  std::istream again(&zeros);
  e = error_of([&] { read_all(again, "cache", 4 << 20); });
  EXPECT_NE(std::string(e.what()).find("more than 4194304 bytes"), std::string::npos) << e.what();
}

TEST(ResourceLimits, LinesUpToTheBoundAreRead) {
  std::string text = std::string(kMaxLineBytes, 'y') + "\nlast";
  std::istringstream in(text);
  LineSource lines(in, "edge.txt");
  std::string_view line;
  ASSERT_TRUE(lines.next(line));
  EXPECT_EQ(line.size(), kMaxLineBytes);
  ASSERT_TRUE(lines.next(line));
  EXPECT_EQ(line, "last");
  EXPECT_FALSE(lines.next(line));
}

TEST(ResourceLimits, TopologyConfIncludingItselfIsRefusedAtOnce) {
  std::string dir = temp_dir();
  write_file(dir + "/self.conf", "SwitchName=s1 Nodes=n[1-2]\nInclude self.conf\n");
  ParseError e = error_of([&] { read_slurm_topology_file(dir + "/self.conf"); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_NE(std::string(e.what()).find("includes a file that includes it"), std::string::npos) << e.what();

  // Around a loop of two, and twice per file (which would otherwise grow
  // as 2^depth).
  write_file(dir + "/a.conf", "SwitchName=s1 Nodes=n[1-2]\nInclude b.conf\nInclude b.conf\n");
  write_file(dir + "/b.conf", "Include a.conf\nInclude a.conf\n");
  e = error_of([&] { read_slurm_topology_file(dir + "/a.conf"); });
  EXPECT_EQ(e.file(), dir + "/b.conf");
  EXPECT_EQ(e.line(), 1);
  EXPECT_NE(std::string(e.what()).find("a.conf -> "), std::string::npos) << e.what();
}

TEST(ResourceLimits, TopologyConfIncludeOfADeviceIsRefused) {
  std::istringstream in("SwitchName=s1 Nodes=n[1-2]\nInclude /dev/zero\n");
  ParseError e = error_of([&] { read_slurm_topology(in, "topology.conf"); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
}

TEST(ResourceLimits, TopologyConfIncludedManyTimesStopsAtTheBudget) {
  std::string dir = temp_dir();
  // 1 MiB included 100 times is more text than any cluster's topology.conf.
  std::string line = "# " + std::string(256 << 10, '.') + "\n";
  std::string leaf = line + line + line + line;
  write_file(dir + "/big.conf", leaf);
  std::string main = "SwitchName=s1 Nodes=n[1-2]\n";
  for (int i = 0; i < 100; ++i) main += "Include big.conf\n";
  write_file(dir + "/many.conf", main);
  ParseError e = error_of([&] { read_slurm_topology_file(dir + "/many.conf"); });
  EXPECT_NE(std::string(e.what()).find("with the files it includes"), std::string::npos) << e.what();
}

TEST(ResourceLimits, TopologyConfContinuationsCannotJoinForever) {
  std::string text = "SwitchName=s1 Nodes=n[1-2] \\\n";
  for (int i = 0; i < 40; ++i) text += std::string(64 << 10, ' ') + "\\\n";
  std::istringstream in(text);
  ParseError e = error_of([&] { read_slurm_topology(in, "topology.conf"); });
  EXPECT_EQ(e.line(), 1);
  EXPECT_NE(std::string(e.what()).find("continues past"), std::string::npos) << e.what();
}

TEST(ResourceLimits, TraceFromAnEndlessFileNamesLineOne) {
  ParseError e = error_of([] { read_trace_csv("/dev/zero"); });
  EXPECT_EQ(e.file(), "/dev/zero");
  EXPECT_EQ(e.line(), 1);
}

TEST(ResourceLimits, BusyAndRunningFilesStopAtTheirBound) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=2,spines=1");
  Endless comments("#");
  std::istream busy(&comments);
  FreeMap free = FreeMap::all_free(f, 8);
  EXPECT_EQ(error_of([&] { read_busy(busy, "busy", f, free); }).line(), 1);
  Endless blank("# a long comment line of a running-jobs file " + std::string(4000, '.') + "\n");
  std::istream running(&blank);
  ParseError e = error_of([&] { read_running(running, "running", f, 8, free); });
  EXPECT_NE(std::string(e.what()).find("more than"), std::string::npos) << e.what();
}

// A value of kilobytes in a field: the error names the line and quotes at
// most 64 bytes of the value, not the whole of it into slurmctld's log.
TEST(ResourceLimits, AValueOfKilobytesIsQuotedShort) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=2,spines=1");
  const std::string big(10000, 'x');
  FreeMap free = FreeMap::all_free(f, 8);
  auto busy = [&](const std::string& text) {
    std::istringstream in(text);
    read_busy(in, "busy", f, free);
  };
  auto running = [&](const std::string& text) {
    std::istringstream in(text);
    read_running(in, "running", f, 8, free);
  };
  auto topology_conf = [&](const std::string& text) {
    std::istringstream in(text);
    read_slurm_topology(in, "topology.conf");
  };
  auto lldp_csv = [&](const std::string& text) {
    std::istringstream in(text);
    parse_lldp_csv(in, "links.csv");
  };
  const std::pair<std::function<void()>, int> cases[] = {
      {[&] { busy("gpu001 " + big + "\n"); }, 1},
      {[&] { busy("\n" + big + "\n"); }, 2},
      {[&] { busy("gpu001 1 " + big + "\n"); }, 1},
      {[&] { running("gpu001 " + big + "\n"); }, 1},
      {[&] { running(big + "\n"); }, 1},
      {[&] { running("gpu001 duty=0." + big + "\n"); }, 1},
      {[&] { topology_conf("SwitchName=" + big + " Nodes=gpu001\n"); }, 1},
      {[&] { topology_conf("SwitchName=s1 Nodes=gpu001 " + big + "=1\n"); }, 1},
      {[&] { topology_conf("SwitchName=s1 Nodes=gpu001 LinkSpeed=" + big + "\n"); }, 1},
      {[&] { topology_conf("SwitchName=s1 Switches=" + big + "\n"); }, 1},
      {[&] { lldp_csv("switch,port,peer,peer_port,speed\nsw1,1,sw2,1," + big + "\n"); }, 2},
  };
  for (const auto& [read, line] : cases) {
    ParseError e = error_of(read);
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_LT(std::string(e.what()).size(), 400u) << e.what();
    EXPECT_NE(std::string(e.what()).find("xxx..."), std::string::npos) << e.what();
  }
}

TEST(ResourceLimits, HostlistOfBillionsIsRefusedBeforeExpanding) {
  // 2^32 names from two groups, and again from one group of 65,536 ranges.
  for (std::string expr : {std::string("a[0-65535]b[0-65535]"), std::string()}) {
    if (expr.empty()) {
      expr = "n[";
      for (int i = 0; i < 65536; ++i) expr += i ? ",0-65535" : "0-65535";
      expr += "]";
    }
    try {
      expand_hostlist(expr);
      ADD_FAILURE() << "expanded " << expr.substr(0, 40);
    } catch (const HostlistError& e) {
      EXPECT_NE(std::string(e.what()).find("expands to more than 1048576 names"), std::string::npos) << e.what();
    }
  }
}

// A few long names in a million would be gigabytes: the bytes are capped too.
TEST(ResourceLimits, HostlistOfLongNamesIsRefusedByItsBytes) {
  const std::string expr = std::string(520, 'a') + "[0-65535]";  // 65,536 names of 525 bytes
  try {
    expand_hostlist(expr);
    ADD_FAILURE() << "expanded";
  } catch (const HostlistError& e) {
    EXPECT_NE(std::string(e.what()).find("expands to more than 33554432 bytes of names"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(expand_hostlist(std::string(100, 'a') + "[0-65535]").size(), 65536u);  // 6.9 MB
}

TEST(ResourceLimits, HostlistErrorQuotesAroundTheOffsetOnly) {
  std::string expr = "gpu[";
  for (int i = 0; i < 1500; ++i) expr += "1,";
  expr += "x]";
  try {
    expand_hostlist(expr);
    ADD_FAILURE() << "expanded";
  } catch (const HostlistError& e) {
    EXPECT_EQ(e.position(), expr.size() - 2);
    EXPECT_LT(std::string(e.what()).size(), 200u) << e.what();
    EXPECT_NE(std::string(e.what()).find("1,1,x]"), std::string::npos) << e.what();
  }
}

// The quote of one range piece is bounded too: a running-jobs line of
// "[1xxx...]" (3,000 bytes) gave an error of 3,266 bytes through topoctl place.
TEST(ResourceLimits, HostlistErrorQuotesALongRangePieceInPart) {
  const std::string long_pieces[] = {"1" + std::string(3000, 'x'), std::string(3000, '7'),
                                     "9-" + std::string(3000, '1')};
  for (const std::string& piece : long_pieces) {
    const std::string expr = "gpu[" + piece + "]";
    try {
      expand_hostlist(expr);
      ADD_FAILURE() << "expanded";
    } catch (const HostlistError& e) {
      EXPECT_EQ(e.position(), 4u);
      EXPECT_LT(std::string(e.what()).size(), 400u) << e.what();
      EXPECT_NE(std::string(e.what()).find(piece.substr(0, 20)), std::string::npos) << e.what();
    }
  }
}

// The expansion recurses once per bracket group of a name: "[0]" repeated
// 300,000 times overflowed the stack (a crash of topoctl place --running).
TEST(ResourceLimits, HostlistOfManyBracketGroupsIsRefusedAtTheFirstPastTheBound) {
  std::string deep = "gpu";
  for (int i = 0; i < 300000; ++i) deep += "[0]";
  try {
    expand_hostlist(deep);
    ADD_FAILURE() << "expanded";
  } catch (const HostlistError& e) {
    EXPECT_EQ(e.position(), 3u + 16 * 3);
    EXPECT_NE(std::string(e.what()).find("more than 16 bracket groups in one name"), std::string::npos) << e.what();
  }
  std::string sixteen = "r";
  for (int i = 0; i < 16; ++i) sixteen += "[1-2]";
  EXPECT_EQ(expand_hostlist(sixteen).size(), 65536u);
  EXPECT_EQ(expand_hostlist(sixteen)[1],
            "r111111111111111"
            "2");
}

// 147 bytes of two ranges under a long prefix: 824,464 names of about 150
// bytes, 87 s under ASan before a name was looked up. No expression of a
// busy or running-jobs file may name more hosts than the fabric has.
TEST(ResourceLimits, BusyAndRunningFilesExpandNoMoreNamesThanTheFabricHasHosts) {
  const Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2");
  const std::string hosts =
      std::string("gp") + std::string(60, '\xff') + "u[022-929]" + std::string(60, '\xff') + "u[022-929]";
  std::istringstream busy(hosts + " 8\n"), running(hosts + " allreduce\n");
  FreeMap free = FreeMap::all_free(f, 8);
  ParseError b = error_of([&] { read_busy(busy, "busy.txt", f, free); });
  ParseError r = error_of([&] { read_running(running, "running.txt", f, 8, free); });
  for (const ParseError& e : {b, r}) {
    EXPECT_EQ(e.line(), 1);
    EXPECT_NE(std::string(e.what()).find("expands to more than 32 names"), std::string::npos) << e.what();
  }
  std::istringstream all("gpu[001-032]\n");
  read_busy(all, "busy.txt", f, free);  // every host, once
  for (NodeId h : f.hosts()) EXPECT_EQ(free.free(h), 0);
}

// Each line's hostlist is within bounds, but 40 bytes a line expand to
// 65,536 hosts: the file as a whole is refused at the line that passes 2^20
// names, before a fabric of millions of HCAs is built.
TEST(ResourceLimits, TopologyConfLinesTogetherCannotListBillionsOfHosts) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "SwitchName=s" + std::to_string(i) + " Nodes=n[0-65535]\n";
  std::istringstream in(text);
  ParseError e = error_of([&] { read_slurm_topology(in, "topology.conf"); });
  EXPECT_EQ(e.file(), "topology.conf");
  EXPECT_EQ(e.line(), 17);  // 16 lines of 65,536 are 2^20
  EXPECT_NE(std::string(e.what()).find("past 1048576 names"), std::string::npos) << e.what();
}

// A lower cap is the same check: the line that passes it is named, however
// many names it would have added, and a line of fewer names than the whole
// cap but more than is left is refused the same way.
TEST(ResourceLimits, TopologyConfNameCapIsCountedAcrossLinesBeforeExpanding) {
  const std::string text =
      "SwitchName=a Nodes=n[1-40]\nSwitchName=b Nodes=m[1-40]\nSwitchName=c Nodes=k[1-60000]-[1-60000]\n";
  for (const auto& [conf, line] : std::vector<std::pair<std::string, int>>{
           {text, 3}, {"SwitchName=a Nodes=n[1-60]\nSwitchName=b Nodes=m[1-41]\n", 2}}) {
    std::istringstream in(conf);
    ParseError e = error_of([&] { read_slurm_topology(in, "topology.conf", kSlurmTopologyDefaultRate, 100); });
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_NE(std::string(e.what()).find("Nodes= takes the file past 100 names"), std::string::npos) << e.what();
  }
  std::istringstream fits("SwitchName=a Nodes=n[1-60]\nSwitchName=b Nodes=m[1-40]\n");
  EXPECT_EQ(read_slurm_topology(fits, "topology.conf", kSlurmTopologyDefaultRate, 100).hosts().size(), 100u);
}

TEST(ResourceLimits, OpensmDumpWithAGiantLidNamesItsLine) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=2,spines=1");
  f.set_routing(emulate_routing(f, "minhop"));
  std::ostringstream out;
  write_opensm_lfts(f, out);
  const std::string good = out.str();
  const size_t header_end = good.find('\n') + 1;
  auto read = [&](const std::string& text) {
    std::istringstream in(text);
    return error_of([&] { read_opensm_lfts(in, "lfts.dump", f); });
  };
  // A header whose table would be 4 GiB, or past 64 bits.
  for (const char* top : {"4294967295", "0xffffffff", "99999999999999999999999"}) {
    std::string text = good;
    size_t open = text.find("[0-") + 3;
    text.replace(open, text.find(']') - open, top);
    ParseError e = read(text);
    EXPECT_EQ(e.line(), 1) << top;
    EXPECT_TRUE(std::string(e.what()).find("not a unicast LID") != std::string::npos ||
                std::string(e.what()).find("expected '[0-<highest LID>]'") != std::string::npos)
        << e.what();
  }
  // An entry past its header's range, or past 32 bits.
  for (const char* entry : {"0xbfff 001\n", "0xffffffff 001\n", "0xffffffffffffffffffff 001\n"}) {
    std::string text = good;
    text.insert(header_end, entry);
    ParseError e = read(text);
    EXPECT_EQ(e.line(), 2) << entry;
    EXPECT_TRUE(std::string(e.what()).find("past the highest LID") != std::string::npos ||
                std::string(e.what()).find("expected the destination LID") != std::string::npos)
        << e.what();
  }
}

TEST(ResourceLimits, LldpJsonNestedAMillionDeepIsRefusedBeforeParsing) {
  std::string text = "{\"lldp\":\n" + std::string(1'000'000, '[') + std::string(1'000'000, ']') + "}";
  ParseError e = error_of([&] { parse_lldpcli_json(text, "deep.json"); });
  EXPECT_EQ(e.file(), "deep.json");
  EXPECT_EQ(e.line(), 2);
  EXPECT_NE(std::string(e.what()).find("nested deeper than 64"), std::string::npos) << e.what();
}

// from_chars reads "nan" and "inf": NaN passed every range check, and
// Candidates=nan was then turned into an int, which is undefined (found by
// fuzzing topo_aware.conf); a NaN or infinite weight would sort candidates
// on NaN. Every number in the file must be finite.
TEST(ResourceLimits, ConfNumbersThatAreNotFiniteAreRefusedAtTheirLine) {
  const std::string conf = temp_dir() + "/topo_aware.conf";
  for (const char* setting : {"Candidates=nan", "Candidates=inf", "Weights=slowdown=nan", "Weights=leaf=-inf",
                              "Weights=fragment=infinity", "HealthErrorsPerHour=inf", "HealthXmitWaitShare=NaN",
                              "HealthPausesPerSecond=nan", "HealthEcnOverMedian=inf", "HealthEcnMarksPerSecond=nan"}) {
    write_file(conf, std::string("DbPath=/tmp/x.db\n") + setting + "\n");
    ParseError e = error_of([&] { read_engine_config(conf); });
    EXPECT_EQ(e.line(), 2) << setting;
    const std::string key = std::string(setting).substr(0, std::string(setting).find('='));
    EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
  }
  write_file(conf, "Candidates=16\nWeights=slowdown=20,fragment=0.5\nHealthXmitWaitShare=0.2\n");
  std::optional<EngineConfig> c = read_engine_config(conf);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->candidates, 16);
  EXPECT_EQ(c->weights.slowdown, 20);
  EXPECT_EQ(c->health.xmit_wait_share, 0.2);
}

// A refused HostPattern throws before regcomp, saying why in a short message.
void expect_refused(const std::string& pattern, const std::string& why) {
  try {
    HostPattern p(pattern);
    ADD_FAILURE() << "accepted " << pattern;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    EXPECT_LT(std::string(e.what()).size(), 400u) << e.what();
  }
}

// regcomp writes x+ out as x x*: sixty stacked '+' asked glibc for 2^60
// nodes inside slurmctld (found by fuzzing topo_aware.conf), and nested
// counted repeats multiply the same way.
TEST(ResourceLimits, HostPatternThatRepeatsWithoutBoundIsRefusedBeforeCompiling) {
  const std::string stacked = "(gpu\\+" + std::string(60, '+') + ")";
  for (const std::string& pattern :
       {stacked, std::string("((((n{1000}){1000}){1000}))"), std::string("(a{30000}b{30000})")}) {
    expect_refused(pattern, "repeats too much");
  }
  // What sites write stays well inside the bound.
  for (const char* pattern :
       {"^(node\\d+)-(hca\\d+)$", "(gpu[0-9]+)+", "^([a-z0-9-]{1,63})(\\.[a-z0-9-]{1,63}){0,4}$", "((.*)*)*(n)"})
    EXPECT_NO_THROW(HostPattern{pattern}) << pattern;
  EXPECT_EQ((*HostPattern("^([a-z0-9-]{1,63})(\\.[a-z0-9-]{1,63}){0,4}$").match_whole("gpu001.ib"))[1], "gpu001");

  const std::string conf = temp_dir() + "/topo_aware.conf";
  write_file(conf, "# a site's file\nCandidates=8\nHostPattern=" + stacked + "\n");
  ParseError e = error_of([&] { read_engine_config(conf); });
  EXPECT_EQ(e.file(), conf);
  EXPECT_EQ(e.line(), 3);
  EXPECT_NE(std::string(e.what()).find("HostPattern"), std::string::npos) << e.what();
}

// glibc's closures over copies of something that can match nothing grow
// with the square of the copies and faster with their nesting: a 53-byte
// HostPattern took regcomp 100 s and 800 MB (found by fuzzing
// topo_aware.conf). Such copies are refused; every one has a plain form.
TEST(ResourceLimits, HostPatternThatCopiesTheEmptyMatchIsRefusedBeforeCompiling) {
  const std::string found = "ttern=gp??tt\xe5r??\x7f???++++++++t\x9b=";
  for (const std::string& pattern :
       {found, std::string("(x)a?+"), std::string("(gpu(a?){3})"), std::string("(x)((((a?)?)?)+)"),
        std::string("(n)(a|)+"), std::string("(n)(a*){2}"), std::string("(n)(\\b)+"),
        std::string("(n)([0-9]{0,9}){4}")}) {
    expect_refused(pattern, "can match nothing");
  }
  // Stars and options over what can match nothing cost little, and what
  // can match nothing may be repeated once or made optional.
  for (const char* pattern : {"(.*)*n", "((.*)*)*(n)", "(gpu[0-9]*)(-ib)?", "(a|b?)*(n)", "(n)(a|b)+",
                              "(n)([a-z]{1,100}){50}", "(n)(a?){1}", "(n)(a?){0,1}", "^(gpu\\d+)$"})
    EXPECT_NO_THROW(HostPattern{pattern}) << pattern;

  const std::string conf = temp_dir() + "/topo_aware.conf";
  write_file(conf, "Candidates=8\nHostPattern=(gpu[0-9]?+)\n");
  ParseError e = error_of([&] { read_engine_config(conf); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_NE(std::string(e.what()).find("write (x?)+ as x*"), std::string::npos) << e.what();
}

TEST(ResourceLimits, LldpCsvLineOfMegabytesNamesItsLine) {
  std::istringstream in("switch,port,peer,peer_port,speed\n" + std::string(kMaxLineBytes + 1, ',') + "\n");
  ParseError e = error_of([&] { parse_lldp_csv(in, "links.csv"); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_NE(std::string(e.what()).find("longer than"), std::string::npos) << e.what();
}

// libstdc++'s std::regex recurses once per character of a run it repeats
// over: a word of megabytes overflowed the stack. The fuzzers' inputs stop
// at 64 KiB, short of it.
TEST(ResourceLimits, NcclTestsWordOfMegabytesNamesItsLine) {
  ParseError e = error_of([] { parse_nccl_tests(std::string(3 << 20, 'a') + "_perf\n", "job.log"); });
  EXPECT_EQ(e.file(), "job.log");
  EXPECT_EQ(e.line(), 1);
  EXPECT_NE(std::string(e.what()).find("longer than 1048576 bytes"), std::string::npos) << e.what();
  // Within the line bound, a long word names no test; the command line does.
  const std::string table =
      "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
      "  8 2 float sum -1 40.64 0.00 0.00 0 45.02 0.00 0.00 0\n";
  NcclTestsRun run =
      parse_nccl_tests(std::string(kMaxLineBytes - 8, 'a') + "_perf\n./all_gather_perf -g 8\n" + table, "job.log");
  EXPECT_EQ(run.test, "all_gather_perf");
  EXPECT_EQ(parse_nccl_tests("mpirun ./alltoall_perf_mpi -b 8\n" + table, "job.log").test, "alltoall_perf");
  EXPECT_EQ(parse_nccl_tests("./all_reduce_perfx; ./broadcast_perf\n" + table, "job.log").test, "broadcast_perf");
}

TEST(ResourceLimits, HwlocHeaderOfMegabytesNamesItsLine) {
  const std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"" +
                          std::string(3 << 20, 'a') + "\">\n<topology version=\"2.0\">\n</topology>\n";
  ParseError e = error_of([&] { read_hwloc_xml_text(xml, "node.xml"); });
  EXPECT_EQ(e.file(), "node.xml");
  EXPECT_EQ(e.line(), 2);
  EXPECT_NE(std::string(e.what()).find("a header line longer than 1024 bytes"), std::string::npos) << e.what();
}

TEST(ResourceLimits, ConcurrentJobsFileStopsAtItsBound) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=2,spines=1");
  const Request like{Collective::AllReduce, 1 << 20, Dtype::Bf16, 8};
  Endless zeros(std::string(1, '\0'));
  std::istream endless(&zeros);
  ParseError e = error_of([&] { read_concurrent(endless, "jobs", f, like); });
  EXPECT_EQ(e.line(), 1);
  EXPECT_NE(std::string(e.what()).find("longer than"), std::string::npos) << e.what();
  Endless comments("# a long comment line of a concurrent-jobs file " + std::string(4000, '.') + "\n");
  std::istream many(&comments);
  e = error_of([&] { read_concurrent(many, "jobs", f, like); });
  EXPECT_NE(std::string(e.what()).find("more than"), std::string::npos) << e.what();
}

// JSON of megabytes of '[' cost gigabytes in the parser before it failed.
TEST(ResourceLimits, JsonNestedAMillionDeepIsRefusedBeforeParsing) {
  const std::string text = "{\"jobs\":\n" + std::string(1 << 20, '[');
  ParseError e = error_of([&] { end_of_json_value(text, 0, 64, "results.json", "results JSON nests 6"); });
  EXPECT_EQ(e.file(), "results.json");
  EXPECT_EQ(e.line(), 2);
  EXPECT_NE(std::string(e.what()).find("JSON nested deeper than 64 levels; results JSON nests 6"), std::string::npos)
      << e.what();
  // Brackets in strings do not count, and the value ends at its own close.
  const std::string inside = "{\"a\": \"" + std::string(100, '[') + "\"} [[";
  EXPECT_EQ(end_of_json_value(inside, 0, 2, "x.json", ""), inside.find('}') + 1);
}

// A synthetic spec of 60 bytes asked for 10^10 hosts and ran out of memory
// building them; each shape's size is checked first, in floating point.
TEST(ResourceLimits, SyntheticSpecOfBillionsOfHostsIsRefusedBeforeBuilding) {
  for (const char* spec :
       {"leafspine:leaves=100000,hosts_per_leaf=100000,spines=1", "railopt:hosts=1000000,rails=8,spines=2",
        "clos3:pods=1000,leaves_per_pod=1000,hosts_per_leaf=1000",
        "clos3:pods=1000000,leaves_per_pod=1000000,hosts_per_leaf=2,spines_per_pod=1"}) {
    SCOPED_TRACE(spec);
    try {
      make_synthetic(spec);
      ADD_FAILURE() << "built";
    } catch (const FabricError& e) {
      EXPECT_NE(std::string(e.what()).find("expected at most 1048576 HCAs and 4194304 cables"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(make_synthetic("fattree:k=16").hosts().size(), 1024u);
}

// Repeats right after repeats are undefined in POSIX, and glibc's regcomp
// grows fast over them after an anchor: a 186-byte HostPattern found by
// fuzzing took 17 s under ASan. Each has a form with one repeat.
TEST(ResourceLimits, HostPatternThatStacksRepeatsIsRefusedBeforeCompiling) {
  const std::string found =
      "a$-" + std::string(14, '*') + "2" + std::string(20, '*') + "3" + std::string(18, '*') + "gp(.*)*";
  for (const std::string& pattern :
       {found, std::string("(gpu[0-9]**)"), std::string("(n)a*?"), std::string("(n)a+*"), std::string("(n)a{2}*")})
    expect_refused(pattern, "puts a repeat right after a repeat");
  for (const char* pattern : {"(n)(a*)*", "(gpu\\*)*", "(n)[*]*", "(a+)+(n)", "(n)a{2}b*"})
    EXPECT_NO_THROW(HostPattern{pattern}) << pattern;
}

}  // namespace
}  // namespace topo
