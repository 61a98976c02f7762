#include "discovery/slurm_topology.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "common/error.h"
#include "common/hostlist.h"
#include "fabric/synthetic.h"

namespace topo {
namespace {

const std::string kSlurm = std::string(TOPO_FIXTURES) + "/slurm/";

Fabric read_text(const std::string& text, LinkRate rate = kSlurmTopologyDefaultRate) {
  std::istringstream in(text);
  return read_slurm_topology(in, "test.conf", rate);
}

NodeId switch_named(const Fabric& f, const std::string& name) {
  for (NodeId s : f.switches())
    if (f.node(s).name == name) return s;
  ADD_FAILURE() << "no switch " << name;
  return 0;
}

std::vector<std::string> host_names_under(const Fabric& f, const std::string& leaf) {
  std::vector<std::string> out;
  for (NodeId h : f.hosts_under(switch_named(f, leaf))) out.push_back(f.node(h).name);
  std::sort(out.begin(), out.end());
  return out;
}

// leaf name -> sorted host names, for every leaf.
std::map<std::string, std::vector<std::string>> leaves_with_hosts(const Fabric& f) {
  std::map<std::string, std::vector<std::string>> out;
  for (NodeId leaf : f.switches_at(Level::Leaf)) out[f.node(leaf).name] = host_names_under(f, f.node(leaf).name);
  return out;
}

std::map<std::string, Level> switch_levels(const Fabric& f) {
  std::map<std::string, Level> out;
  for (NodeId s : f.switches()) out[f.node(s).name] = f.node(s).level;
  return out;
}

std::string written(const Fabric& f) {
  std::ostringstream out;
  write_slurm_topology(f, out);
  return out.str();
}

TEST(SlurmTopology, ReadsTheManPageExample) {
  Fabric f = read_text(
      "SwitchName=s0 Nodes=dev[0-5]\n"
      "SwitchName=s1 Nodes=dev[6-11]\n"
      "SwitchName=s2 Nodes=dev[12-17]\n"
      "SwitchName=s3 Switches=s[0-2]\n");
  EXPECT_EQ(f.summary().hosts, 18);
  EXPECT_EQ(f.summary().leaves, 3);
  EXPECT_EQ(f.summary().spines, 1);
  EXPECT_EQ(f.source(), "slurm-topology:test.conf");
  EXPECT_EQ(host_names_under(f, "s0"), (std::vector<std::string>{"dev0", "dev1", "dev2", "dev3", "dev4", "dev5"}));
  EXPECT_EQ(f.node(switch_named(f, "s3")).level, Level::Spine);
  // Each host gets one HCA the default naming maps back to it, rail 0.
  NodeId dev7 = *f.find_host("dev7");
  ASSERT_EQ(f.hcas_of(dev7).size(), 1u);
  const Node& hca = f.node(f.hcas_of(dev7)[0]);
  EXPECT_EQ(hca.name, "dev7 mlx5_0");
  EXPECT_EQ(hca.host, "dev7");
  EXPECT_EQ(hca.rail, 0);
  EXPECT_EQ(f.node(f.leaves_of(dev7)[0]).name, "s1");
}

TEST(SlurmTopology, CablesRunAtTheConfiguredRate) {
  for (LinkRate rate : {kSlurmTopologyDefaultRate, LinkRate{LinkWidth::X4, LinkSpeed::HDR}}) {
    Fabric f =
        read_text("SwitchName=l1 Nodes=a[1-2]\nSwitchName=l2 Nodes=a[3-4]\nSwitchName=sp Switches=l[1-2]\n", rate);
    int cables = 0;
    for (auto e : boost::make_iterator_range(boost::edges(f.graph()))) {
      if (f.link(e).kind != LinkKind::Cable) continue;
      ++cables;
      EXPECT_EQ(f.link(e).rate, rate);
    }
    EXPECT_EQ(cables, 6);
    EXPECT_DOUBLE_EQ(f.node(switch_named(f, "l1")).oversubscription(), 2.0);
  }
}

TEST(SlurmTopology, CountsPortsChildrenFirstThenParents) {
  Fabric f = read_text(
      "SwitchName=core Switches=sp[1-2]\n"  // parents may come before their children
      "SwitchName=sp1 Switches=l1\n"
      "SwitchName=sp2 Switches=l1\n"
      "SwitchName=l1 Nodes=h[1-3]\n");
  NodeId l1 = switch_named(f, "l1"), sp1 = switch_named(f, "sp1"), core = switch_named(f, "core");
  EXPECT_EQ(f.node(l1).ports, 5);
  EXPECT_EQ(f.node(sp1).ports, 2);
  EXPECT_EQ(f.node(core).ports, 2);
  std::map<int, std::string> l1_ports, sp1_ports;
  for (auto e : boost::make_iterator_range(boost::out_edges(l1, f.graph())))
    l1_ports[f.local_port(e, l1)] = f.node(f.peer(e, l1)).name;
  for (auto e : boost::make_iterator_range(boost::out_edges(sp1, f.graph())))
    sp1_ports[f.local_port(e, sp1)] = f.node(f.peer(e, sp1)).name;
  EXPECT_EQ(l1_ports,
            (std::map<int, std::string>{{1, "h1 mlx5_0"}, {2, "h2 mlx5_0"}, {3, "h3 mlx5_0"}, {4, "sp1"}, {5, "sp2"}}));
  EXPECT_EQ(sp1_ports, (std::map<int, std::string>{{1, "l1"}, {2, "core"}}));
  EXPECT_EQ(f.node(core).level, Level::Core);
}

TEST(SlurmTopology, ReadsTheSyntaxAdminsWrite) {
  Fabric f = read_slurm_topology_file(kSlurm + "tree.conf");
  EXPECT_EQ(f.source(), "slurm-topology:" + kSlurm + "tree.conf");
  EXPECT_EQ(leaves_with_hosts(f),
            (std::map<std::string, std::vector<std::string>>{{"leaf1", {"gpu001", "gpu002", "gpu003", "gpu004"}},
                                                             {"leaf2", {"gpu005", "gpu006", "gpu007", "gpu008"}},
                                                             {"leaf3", {"gpu009", "gpu010"}}}));
  EXPECT_EQ(f.switches_at(Level::Spine).size(), 2u);
}

TEST(SlurmTopology, HandlesEscapesCommentsAndLineEndingsAsSlurmDoes) {
  // "\#" is a literal '#'; a trailing odd backslash continues (blanks after it
  // allowed); CRLF ends lines.
  Fabric f = read_text(
      "SwitchName=odd\\#name Nodes=a1 # comment\r\n"
      "SwitchName=l2 \\   \r\n"
      "  Nodes=a2\r\n"
      "SwitchName=top Switches=odd\\#name,l2\r\n");
  EXPECT_EQ(switch_levels(f),
            (std::map<std::string, Level>{{"odd#name", Level::Leaf}, {"l2", Level::Leaf}, {"top", Level::Spine}}));
}

TEST(SlurmTopology, FollowsIncludeRelativeToTheIncludingFile) {
  Fabric f = read_slurm_topology_file(kSlurm + "include/main.conf");
  EXPECT_EQ(f.summary().hosts, 4);
  EXPECT_EQ(f.node(switch_named(f, "spine01")).level, Level::Spine);
}

TEST(SlurmTopology, AnErrorInAnIncludedFileNamesThatFileAndLine) {
  try {
    read_slurm_topology_file(kSlurm + "include/broken.conf");
    FAIL() << "accepted";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), kSlurm + "include/broken_spines.conf");
    EXPECT_EQ(e.line(), 3);
    EXPECT_NE(std::string(e.what()).find("'leaf03', which no SwitchName= line defines"), std::string::npos) << e.what();
  }
}

TEST(SlurmTopology, AHostUnderSeveralLeavesGetsAnHcaOnEach) {
  Fabric f = read_text(
      "SwitchName=rail0 Nodes=h[1-2]\n"
      "SwitchName=rail1 Nodes=h[1-2]\n"
      "SwitchName=sp Switches=rail[0-1]\n");
  NodeId h1 = *f.find_host("h1");
  auto hcas = f.hcas_of(h1);
  ASSERT_EQ(hcas.size(), 2u);
  EXPECT_EQ(f.node(hcas[0]).name, "h1 mlx5_0");
  EXPECT_EQ(f.node(hcas[1]).name, "h1 mlx5_1");
  EXPECT_EQ(f.leaves_of(h1).size(), 2u);
  EXPECT_EQ(f.summary().rails, 2);
}

struct Malformed {
  std::string text;
  int line;
  std::string says;
};

TEST(SlurmTopology, MalformedFilesNameTheLineAndWhatWasExpected) {
  const std::vector<Malformed> cases{
      {"SwitchName=a Nodes=x1\nSwitchName=b Nodez=x2\n", 2,
       "unknown key 'Nodez'; expected Nodes, Switches or LinkSpeed"},
      {"# header\n\nNodes=x1 SwitchName=a\n", 3, "expected the line to start with SwitchName=, found Nodes="},
      {"SwitchName=a Nodes=x1\nSwitchName=b Nodes=x2\nSwitchName=a Nodes=x3\n", 3,
       "switch 'a' is already defined at test.conf:1"},
      {"SwitchName=a Nodes=x1\nSwitchName=top Switches=a,b\n", 2, "lists child switch 'b', which no SwitchName= line"},
      {"SwitchName=a Switches=a\n", 1, "lists itself as a child"},
      {"SwitchName=a Nodes=x1\nSwitchName=b Switches=a,c\nSwitchName=c Switches=b\n", 2,
       "switches form a cycle (b -> c -> b)"},
      {"SwitchName=a Nodes=x1 Switches=b\nSwitchName=b Nodes=x2\n", 1, "has both Nodes= and Switches="},
      {"SwitchName=a LinkSpeed=10\n", 1, "has neither Nodes= nor Switches="},
      {"SwitchName=a Nodes=x[1-\n", 1, "Nodes=: hostlist 'x[1-' at offset 1: expected ']'"},
      {"SwitchName=a Nodes=x[3-1]\n", 1, "runs backwards"},
      {"SwitchName=a Nodes=x1 LinkSpeed=fast\n", 1, "LinkSpeed must be a whole number"},
      {"SwitchName=a Nodes=x1 Nodes=x2\n", 1, "Nodes= is given twice for switch 'a'"},
      {"SwitchName=a Nodes=x1 SwitchName=b\n", 1, "a second SwitchName= on one line"},
      {"SwitchName=a Nodes=x1\nSwitchName=b Nodes=\"x2\n", 2, "expected a closing '\"'"},
      {"SwitchName=a Nodes=x1\nhello world\n", 2, "expected Key=Value, found 'hello'"},
      {"SwitchName=a Nodes+=x1\n", 1, "operator '+=' after Nodes"},
      {"SwitchName=a Nodes=\n", 1, "expected a value after Nodes="},
      {"SwitchName=a Nodes=,\n", 1, "expected at least one name in Nodes="},
      {"SwitchName=" + std::string(65, 'x') + " Nodes=a\n", 1, "longer than Slurm's 64 characters"},
      // A continued line reports its first line; the lines after count on.
      {"SwitchName=a \\\n Nodes=x1\nSwitchName=b Nodes=x2 Bogus=1\n", 3, "unknown key 'Bogus'"},
      // An even run of backslashes is no continuation: "\\" is one backslash.
      {"SwitchName=a Nodes=x1 \\\\\n Nodes=x2\n", 1, "expected Key=Value, found '\\'"},
      {"Include nowhere.conf\n", 1, "Include: cannot read"},
      {"Include\tone.conf two.conf\n", 1, "expected 'Include <file>' with a single file name"},
      {"# nothing but comments\n\n", 0, "no switch defined"},
      // Switches named as topo-aware names a host or its HCA, refused at the
      // line that lists the host, wherever the switch is.
      {"SwitchName=a Nodes=x1\nSwitchName=host:x1 Nodes=x2\n", 1,
       "host 'x1' clashes with switch 'host:x1' (test.conf:2)"},
      {"SwitchName=\"x2 mlx5_0\" Nodes=x1\nSwitchName=b Nodes=x2\n", 2,
       "host 'x2' clashes with switch 'x2 mlx5_0' (test.conf:1)"},
  };
  for (const Malformed& c : cases) {
    SCOPED_TRACE(c.text);
    try {
      read_text(c.text);
      ADD_FAILURE() << "accepted";
    } catch (const ParseError& e) {
      EXPECT_EQ(e.file(), "test.conf");
      EXPECT_EQ(e.line(), c.line) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
    }
  }
}

TEST(SlurmTopology, ACycleFixtureIsRejected) {
  try {
    read_slurm_topology_file(kSlurm + "cycle.conf");
    FAIL() << "accepted";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(std::string(e.what()).find("agg1 -> core1 -> agg1"), std::string::npos) << e.what();
  }
}

TEST(SlurmTopology, AMissingFileIsAParseError) {
  EXPECT_THROW(read_slurm_topology_file(kSlurm + "does-not-exist.conf"), ParseError);
}

// --- writing ---------------------------------------------------------------

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Checks what Slurm's topology/tree requires of a file: every switch once,
// Nodes= or Switches= but not both, children defined, each host under one leaf.
void expect_slurm_accepts(const std::string& text) {
  std::set<std::string> defined, referenced, hosts;
  for (const std::string& line : lines_of(text)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string name, list;
    words >> name >> list;
    ASSERT_EQ(name.rfind("SwitchName=", 0), 0u) << line;
    EXPECT_TRUE(defined.insert(name.substr(11)).second) << "defined twice: " << line;
    if (list.rfind("Nodes=", 0) == 0) {
      for (const std::string& h : expand_hostlist(list.substr(6)))
        EXPECT_TRUE(hosts.insert(h).second) << h << " under two leaves";
    } else {
      ASSERT_EQ(list.rfind("Switches=", 0), 0u) << line;
      for (const std::string& s : expand_hostlist(list.substr(9))) {
        EXPECT_TRUE(defined.contains(s)) << s << " is listed before its own line (the file goes bottom-up)";
        referenced.insert(s);
      }
    }
    std::string rest;
    EXPECT_FALSE(words >> rest) << "more than Nodes=/Switches= on: " << line;
  }
}

TEST(SlurmTopology, WritesAHeaderAndGoesBottomUp) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  std::string text = written(f);
  auto lines = lines_of(text);
  ASSERT_GE(lines.size(), 7u);
  EXPECT_NE(lines[0].find("generated by topo-aware"), std::string::npos) << text;
  EXPECT_NE(text.find("from synthetic:leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2"), std::string::npos)
      << text;
  EXPECT_NE(text.find("SwitchName=leaf01 Nodes=gpu[001-008]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("SwitchName=spine01 Switches=leaf[01-04]\n"), std::string::npos) << text;
  EXPECT_LT(text.find("SwitchName=leaf04"), text.find("SwitchName=spine01")) << text;
  expect_slurm_accepts(text);
}

void expect_round_trip(const std::string& spec) {
  SCOPED_TRACE(spec);
  Fabric original = make_synthetic(spec);
  std::string text = written(original);
  expect_slurm_accepts(text);
  std::istringstream in(text);
  Fabric back = read_slurm_topology(in, "written.conf");
  EXPECT_EQ(leaves_with_hosts(back), leaves_with_hosts(original)) << text;
  EXPECT_EQ(switch_levels(back), switch_levels(original)) << text;
  EXPECT_EQ(back.summary().hosts, original.summary().hosts);
  EXPECT_EQ(back.summary().pods, original.summary().pods);
}

TEST(SlurmTopology, RoundTripsSyntheticFabrics) {
  expect_round_trip("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  expect_round_trip("clos3:pods=2,leaves_per_pod=2,hosts_per_leaf=4");
  expect_round_trip("fattree:k=4");
  expect_round_trip("leafspine:leaves=3,hosts_per_leaf=4,spines=2,naming=interleaved");
}

TEST(SlurmTopology, WritesEveryLevelOfATreeDeeperThanCore) {
  // Five levels of switches: core is every level from the third up, but
  // Slurm's file keeps each, by the switches' heights.
  const std::string conf =
      "SwitchName=s0 Nodes=node1\n"
      "SwitchName=t0 Nodes=node2\n"
      "SwitchName=s1 Switches=s0,t0\n"
      "SwitchName=s2 Switches=s1\n"
      "SwitchName=s3 Switches=s2\n"
      "SwitchName=s4 Switches=s3\n";
  std::istringstream in(conf);
  Fabric f = read_slurm_topology(in, "deep.conf");
  EXPECT_EQ(f.node(switch_named(f, "s4")).height, 4);
  EXPECT_EQ(f.node(switch_named(f, "s4")).level, Level::Core);
  std::string text = written(f);
  std::string switch_lines;
  for (const std::string& line : lines_of(text))
    if (!line.starts_with("#")) switch_lines += line + "\n";
  EXPECT_EQ(switch_lines, conf) << text;
  expect_slurm_accepts(text);
}

TEST(SlurmTopology, ReadingBackGivesOneCablePerSwitchPair) {
  Fabric original = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  std::istringstream in(written(original));
  Fabric back = read_slurm_topology(in, "written.conf");
  // topology.conf has one cable per switch pair, so a leaf with several
  // uplinks to one spine comes back with one: 8 hosts over 2 spines.
  EXPECT_DOUBLE_EQ(back.node(switch_named(back, "leaf01")).oversubscription(), 4.0);
}

TEST(SlurmTopology, RailOptimizedHostsAreListedUnderTheirRailZeroLeaf) {
  Fabric f = make_synthetic("railopt:hosts=16,rails=4,spines=2,hosts_per_leaf=8");
  std::string text = written(f);
  expect_slurm_accepts(text);
  EXPECT_NE(text.find("16 hosts are cabled to several leaves (one per rail)"), std::string::npos) << text;
  EXPECT_NE(text.find("# Left out, as nothing listed here sits below them: leaf[03-08]"), std::string::npos) << text;
  std::istringstream in(text);
  Fabric back = read_slurm_topology(in, "written.conf");
  for (NodeId host : f.hosts()) {
    const std::string& name = f.node(host).name;
    NodeId rail0_leaf = f.leaves_of(host).front();
    ASSERT_EQ(f.node(f.hcas_of(host).front()).rail, 0);
    auto back_leaves = back.leaves_of(*back.find_host(name));
    ASSERT_EQ(back_leaves.size(), 1u) << name;
    EXPECT_EQ(back.node(back_leaves[0]).name, f.node(rail0_leaf).name) << name;
  }
  EXPECT_EQ(back.switches_at(Level::Spine).size(), 2u);
}

TEST(SlurmTopology, RenamesSwitchesSlurmCannotTakeAndSaysSo) {
  FabricBuilder b;
  b.add_switch("S-7cfe900300a00001", "MF0;ib-sw01:MQM9700/U1", 36, 0x7cfe900300a00001);
  // A description with a newline, longer than an error's quote: kept whole, on one line.
  b.add_switch("S-2", "leaf 2\nof row 7, aisle 3, rack 12, the lower of the two switches in it", 36, 0);
  b.add_switch("S-3", "spine", 36, 0);
  b.add_switch("S-4", "spine", 36, 0);  // a duplicate name
  b.add_hca("H-1", "gpu001 mlx5_0");
  b.add_hca("H-2", "gpu002 mlx5_0");
  b.connect("H-1", 1, "S-7cfe900300a00001", 1, kSlurmTopologyDefaultRate);
  b.connect("H-2", 1, "S-2", 1, kSlurmTopologyDefaultRate);
  b.connect("S-7cfe900300a00001", 2, "S-3", 1, kSlurmTopologyDefaultRate);
  b.connect("S-2", 2, "S-3", 2, kSlurmTopologyDefaultRate);
  b.connect("S-7cfe900300a00001", 3, "S-4", 1, kSlurmTopologyDefaultRate);
  b.connect("S-2", 3, "S-4", 2, kSlurmTopologyDefaultRate);
  std::string text = written(std::move(b).finish());
  expect_slurm_accepts(text);
  EXPECT_NE(text.find("# switch-7cfe900300a00001 is \"MF0;ib-sw01:MQM9700/U1\""), std::string::npos) << text;
  EXPECT_NE(text.find("# switch-1 is \"leaf 2?of row 7, aisle 3, rack 12, the lower of the two switches in it\"\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("SwitchName=switch-7cfe900300a00001 Nodes=gpu001\n"), std::string::npos) << text;
  EXPECT_NE(text.find("SwitchName=switch-1 Nodes=gpu002\n"), std::string::npos) << text;
  EXPECT_NE(text.find("SwitchName=spine Switches=switch-1,switch-7cfe900300a00001\n"), std::string::npos) << text;
  EXPECT_NE(text.find("SwitchName=switch-2 Switches=switch-1,switch-7cfe900300a00001\n"), std::string::npos) << text;
}

TEST(SlurmTopology, RefusesWhatSlurmCannotRead) {
  FabricBuilder lonely;
  lonely.add_host("gpu001");
  lonely.add_switch("s1", "s1");
  EXPECT_THROW(written(std::move(lonely).finish()), FabricError);

  FabricBuilder bad_host;
  bad_host.add_switch("s1", "s1");
  bad_host.add_hca("h", "gpu[1] mlx5_0");
  bad_host.connect("h", 1, "s1", 1, kSlurmTopologyDefaultRate);
  EXPECT_THROW(written(std::move(bad_host).finish()), FabricError);
}

TEST(SlurmTopology, UncabledHostsAreNamedInTheHeader) {
  FabricBuilder b;
  b.add_switch("s1", "s1");
  b.add_hca("h1", "gpu001 mlx5_0");
  b.add_hca("h2", "gpu002 mlx5_0");
  b.connect("h1", 1, "s1", 1, kSlurmTopologyDefaultRate);
  std::string text = written(std::move(b).finish());
  EXPECT_NE(text.find("# Hosts cabled to no switch, not listed: gpu002\n"), std::string::npos) << text;
  EXPECT_NE(text.find("SwitchName=s1 Nodes=gpu001\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace topo
