#include "discovery/hwloc_affinity.h"

#include <sys/utsname.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>

#include <gtest/gtest.h>
#include <hwloc.h>

#include "common/error.h"
#include "discovery/slurm_topology.h"

namespace topo {
namespace {

namespace fs = std::filesystem;

const std::string kHwloc = std::string(TOPO_FIXTURES) + "/hwloc/";

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// A fresh directory under the test's temporary directory.
class TempDir {
 public:
  explicit TempDir(const std::string& name) : path_(fs::path(::testing::TempDir()) / ("hwloc_affinity_test_" + name)) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(file(name)) << text; }

 private:
  fs::path path_;
};

TEST(HwlocAffinity, ADgxLikeNodeHasEightGpusEachWithTheHcaOnItsSwitch) {
  NodeAffinity node = read_hwloc_xml(kHwloc + "gpu001.xml");
  EXPECT_EQ(node.hostname, "gpu001");
  EXPECT_EQ(node.hcas, (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}));
  // cudaN and nvmlN are one GPU each; the BMC's VGA with DRM card0 is none.
  ASSERT_EQ(node.gpus.size(), 8u);
  const std::vector<std::string> buses{"0000:02:00.0", "0000:03:00.0", "0000:12:00.0", "0000:13:00.0",
                                       "0000:82:00.0", "0000:83:00.0", "0000:92:00.0", "0000:93:00.0"};
  for (int i = 0; i < 8; ++i) {
    const Gpu& g = node.gpus[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(g.index, i);
    EXPECT_EQ(g.name, "cuda" + std::to_string(i));
    EXPECT_EQ(g.pci_bus, buses[i]);
    EXPECT_EQ(g.numa, i / 4);
    EXPECT_EQ(g.closest_hca, "mlx5_" + std::to_string(i / 2));
    EXPECT_EQ(g.rail, i / 2);
  }
}

TEST(HwlocAffinity, GpusAreIndexedInPciOrderNotByTheirCudaNames) {
  NodeAffinity node = read_hwloc_xml(kHwloc + "gpu002.xml");
  EXPECT_EQ(node.hostname, "gpu002");
  EXPECT_TRUE(node.hcas.empty());
  ASSERT_EQ(node.gpus.size(), 4u);
  EXPECT_EQ(node.gpus[0].pci_bus, "0000:21:00.0");
  EXPECT_EQ(node.gpus[0].name, "cuda1");
  EXPECT_EQ(node.gpus[1].pci_bus, "0000:41:00.0");
  EXPECT_EQ(node.gpus[1].name, "cuda0");
  // No OS device: hwloc without the CUDA/NVML plugins still shows the PCI GPU.
  EXPECT_EQ(node.gpus[2].pci_bus, "0000:61:00.0");
  EXPECT_EQ(node.gpus[2].name, "");
  EXPECT_EQ(node.gpus[3].pci_bus, "0000:81:00.0");
  for (const Gpu& g : node.gpus) {
    EXPECT_EQ(g.closest_hca, "");
    EXPECT_EQ(g.rail, -1);
    EXPECT_EQ(g.numa, 0);
  }
}

TEST(HwlocAffinity, EquallyCloseHcasAreSharedOutAndThePackageBeatsTheMachine) {
  NodeAffinity node = read_hwloc_xml(kHwloc + "gpu003.xml");
  ASSERT_EQ(node.gpus.size(), 3u);
  // GPUs 0 and 1 see mlx5_0 and mlx5_1 only through package 0: one each.
  EXPECT_EQ(node.gpus[0].closest_hca, "mlx5_0");
  EXPECT_EQ(node.gpus[1].closest_hca, "mlx5_1");
  EXPECT_EQ(node.gpus[1].rail, 1);
  // GPU 2 shares package 1 with mlx5_2 and only the machine with the others.
  EXPECT_EQ(node.gpus[2].closest_hca, "mlx5_2");
  EXPECT_EQ(node.gpus[2].numa, 1);
}

// A minimal export hwloc loads; the malformed cases below break one line.
const std::string kTiny =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"  // 1
    "<topology version=\"2.0\">\n"                  // 2
    "  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" "
    "complete_nodeset=\"0x1\">\n"                     // 3
    "    <info name=\"HostName\" value=\"tiny\"/>\n"  // 4
    "    <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" "
    "complete_nodeset=\"0x1\" local_memory=\"1024\"/>\n"  // 5
    "    <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" "
    "complete_nodeset=\"0x1\"/>\n"  // 6
    "  </object>\n"                 // 7
    "</topology>\n";                // 8

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(HwlocAffinity, TheMinimalExportLoads) {
  NodeAffinity node = read_hwloc_xml_text(kTiny, "tiny.xml");
  EXPECT_EQ(node.hostname, "tiny");
  EXPECT_TRUE(node.gpus.empty());
  // An export that went through Windows still loads.
  std::string crlf;
  for (char c : kTiny) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  EXPECT_EQ(read_hwloc_xml_text(crlf, "tiny.xml").hostname, "tiny");
  // An HCA alone: the device types lstopo writes pass the check in front of hwloc.
  std::string hca =
      replaced(kTiny, "  </object>\n", "    <object type=\"OSDev\" name=\"mlx5_0\" osdev_type=\"3\"/>\n  </object>\n");
  EXPECT_EQ(read_hwloc_xml_text(hca, "tiny.xml").hcas, std::vector<std::string>{"mlx5_0"});
}

struct Malformed {
  std::string xml;
  int line;
  std::string says;
};

TEST(HwlocAffinity, MalformedXmlNamesTheLineAndWhatWasExpected) {
  const std::string pu = "<object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\"";
  std::string deep_misc;
  for (int i = 0; i < 300; ++i) deep_misc.insert(0, "<object type=\"Misc\">").append("</object>");
  const std::vector<Malformed> cases{
      // hwloc 2.9 crashes on each of the first three.
      {replaced(kTiny, pu, "<object type=\"PU\" os_index=\"0\" cpuset=\"0x1\""), 6, "has no complete_cpuset"},
      {replaced(kTiny, "cpuset=\"0x1\" complete_cpuset", "cpuset=\"0x1\"complete_cpuset"), 3, "expected a blank"},
      {kTiny.substr(0, kTiny.find("    <object type=\"PU\"")), 3,
       "<object> opened here is never closed; the file ends at line 5"},
      {replaced(kTiny, "  </object>\n", ""), 7, "expected </object> to close <object> of line 3, found </topology>"},
      {replaced(kTiny, "nodeset=\"0x1\" local_memory", "nodeset=\"zz\" local_memory"), 5, "is not an hwloc bitmap"},
      // hwloc 2.9 spends seconds and gigabytes on these two.
      {replaced(kTiny, "<object type=\"PU\" os_index=\"0\" ", "<object type=\"PU\" "), 6, "has no os_index"},
      {replaced(kTiny, "\"NUMANode\" os_index=\"0\"", "\"NUMANode\" os_index=\"4000000000\""), 5,
       "is not a whole number below"},
      {replaced(kTiny, "<object type=\"PU\"", "<object"), 6, "has no type attribute"},
      {replaced(kTiny, "value=\"tiny\"", "value=\"ti&ny\""), 4, "expected one of the entities hwloc writes"},
      {replaced(kTiny, "value=\"tiny\"", "value=\"tiny"), 4, "holds a '<' or '>'"},
      {replaced(kTiny, "os_index=\"0\" cpuset", "os_index=\"0\" os_index=\"1\" cpuset"), 3, "appears twice"},
      {replaced(kTiny, "<info", "<!-- a note -->\n    <info"), 4, "a comment; hwloc's own XML reader"},
      {kTiny + "<topology/>\n", 9, "expected nothing after </topology>"},
      {kTiny + "trailing words\n", 9, "expected only blanks after </topology>"},
      {"<html><body/></html>\n", 1, "expected <topology version=\"2.0\"> at the start of this line"},
      {"", 1, "expected <topology version=\"2.0\">"},
      // What libxml2 reads but hwloc's own reader does not: refused either way.
      {replaced(kTiny, "type=\"PU\"", "type='PU'"), 6, "expected name=\"value\" in <object>, found 'type='PU'"},
      {replaced(kTiny, "name=\"HostName\"", "name = \"HostName\""), 4, "expected name=\"value\" in <info>"},
      {replaced(kTiny, "<object type=\"PU\"", "<object\ttype=\"PU\""), 6,
       "expected a space, '>' or '/>' after <object"},
      {replaced(kTiny, "<topology version", "\n<topology version"), 2, "at the start of this line"},
      {replaced(kTiny, "value=\"tiny\"", "value=\"a&apos;b\""), 4, "expected one of the entities hwloc writes"},
      {"<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n</topology>\n", 0, "hwloc could not load it"},
      {replaced(kTiny, "type=\"PU\"", "type=\"Banana\""), 6, "is not an hwloc object type"},
      // hwloc 2.9 fails on these and leaks what it had built so far.
      {replaced(kTiny, "<info name", "<infx name"), 4, "<infx> is not an element of hwloc's XML"},
      {replaced(kTiny, "<info name=\"HostName\" ", "<info "), 4, "<info> has no name attribute"},
      {replaced(kTiny, "</topology>", "<object type=\"Misc\"><topology/></object></topology>"), 8,
       "<topology> cannot sit inside <object>"},
      {replaced(kTiny, "name=\"HostName\" value", "name=\"HostName\" colour=\"red\" value"), 4,
       "<info> has no attribute 'colour'"},
      {replaced(kTiny, "<info", "stray text\n    <info"), 4, "<object> holds text; expected only elements"},
      {replaced(kTiny, "complete_nodeset=\"0x1\"/>\n  </object>",
                "complete_nodeset=\"0x1\"><page_type size=\"4096\" count=\"1\"/></object>\n  </object>"),
       6, "<page_type> inside <object type=\"PU\">; expected it in a NUMANode"},
      // libxml2 would load an ICU converter that outlives hwloc's plugin.
      {replaced(kTiny, "encoding=\"UTF-8\"", "encoding=\"ISO-8859-1\""), 1, "expected encoding=\"UTF-8\""},
      {replaced(kTiny, "version=\"1.0\"", "version='1.0\""), 1, "expected <?xml version=\"1.0\" encoding=\"UTF-8\"?>"},
      {"\n" + kTiny, 1, "at the start of this line"},
      {replaced(kTiny, "<?xml version", "<!DOCTYPE t [<!ENTITY e \"x\">]>\n<?xml version"), 1,
       "expected <!DOCTYPE topology SYSTEM \"hwloc2.dtd\">"},
      {replaced(kTiny, "value=\"tiny\"", "value=\"&#0;\""), 4, "expected one of the entities hwloc writes"},
      {replaced(kTiny, "value=\"tiny\"", "value=\"a>b\""), 4, "expected &lt; or &gt;"},
      // hwloc keeps any number as the device type, past its enum's values.
      {replaced(kTiny, "  </object>\n", "    <object type=\"OSDev\" name=\"ib0\" osdev_type=\"52\"/>\n  </object>\n"),
       7, "osdev_type=\"52\" of <object type=\"OSDev\"> is not an hwloc OS device type; expected 0 to 5"},
      {replaced(kTiny, "  </object>\n", "    <object type=\"OSDev\" name=\"ib0\" osdev_type=\"03\"/>\n  </object>\n"),
       7, "is not an hwloc OS device type"},
      // hwloc 2.9 asserts on these in hwloc_bitmap_sscanf (found by fuzzing).
      {replaced(kTiny, "nodeset=\"0x1\" local_memory", "nodeset=\"0x1\" allowed_nodeset=\",x1\" local_memory"), 5,
       "allowed_nodeset=\",x1\" of <object type=\"NUMANode\"> is not an hwloc bitmap"},
      {replaced(kTiny, "cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\">",
                "cpuset=\"0x1\" complete_cpuset=\"0x1\" allowed_cpuset=\",x0000000f\" nodeset=\"0x1\" "
                "complete_nodeset=\"0x1\">"),
       3, "allowed_cpuset=\",x0000000f\" of <object type=\"Machine\"> is not an hwloc bitmap"},
      // hwloc reads nesting recursively.
      {replaced(kTiny, "</topology>", deep_misc + "</topology>"), 8, "nest deeper than 256"},
  };
  for (const Malformed& c : cases) {
    SCOPED_TRACE(c.xml);
    try {
      read_hwloc_xml_text(c.xml, "node.xml");
      ADD_FAILURE() << "accepted";
    } catch (const ParseError& e) {
      EXPECT_EQ(e.file(), "node.xml");
      EXPECT_EQ(e.line(), c.line) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
    }
  }
}

// A damaged value of kilobytes is named by its line and quoted only in
// part (found by fuzzing: a 2.7 kB nodeset landed whole in the error).
TEST(HwlocAffinity, ALongBadValueIsQuotedShort) {
  const std::string garbage(10000, 'z');
  for (const std::string& xml :
       {replaced(kTiny, "nodeset=\"0x1\" local_memory", "nodeset=\"" + garbage + "\" local_memory"),
        replaced(kTiny, "type=\"PU\"", "type=\"" + garbage + "\""),
        replaced(kTiny, "<info name", "<" + garbage + " name"),
        replaced(kTiny, "value=\"tiny\"", "value=\"&" + garbage + ";\"")}) {
    try {
      read_hwloc_xml_text(xml, "node.xml");
      ADD_FAILURE() << "accepted";
    } catch (const ParseError& e) {
      EXPECT_GT(e.line(), 0);
      EXPECT_LT(std::string(e.what()).size(), 400u) << e.what();
      EXPECT_NE(std::string(e.what()).find("zzz..."), std::string::npos) << e.what();
    }
  }
}

TEST(HwlocAffinity, ATruncatedFixtureFileIsAParseError) {
  const std::string path = kHwloc + "malformed/gpu002.xml";
  try {
    read_hwloc_xml(path);
    FAIL() << "accepted";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), 28);
    EXPECT_NE(std::string(e.what()).find("never closed; the file ends at line 32"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_hwloc_xml(kHwloc + "no-such-node.xml"), ParseError);
}

// Damaged exports must come back as ParseError, never bring the process
// down inside hwloc: cut, drop, repeat and garble pieces of every fixture.
TEST(HwlocAffinity, DamagedExportsNeverCrash) {
  std::vector<std::string> sources{kTiny};
  for (const char* name : {"gpu001.xml", "gpu002.xml", "gpu003.xml"}) sources.push_back(file_text(kHwloc + name));
  // hwloc unloads its plugins with the last topology; keep one so that each
  // round does not load them again.
  hwloc_topology_t keeper = nullptr;
  ASSERT_EQ(hwloc_topology_init(&keeper), 0);
  std::unique_ptr<hwloc_topology, void (*)(hwloc_topology_t)> keep(keeper, hwloc_topology_destroy);
  std::mt19937 rng(7);
  int loaded = 0, refused = 0;
  for (int round = 0; round < 1000; ++round) {
    std::string s = sources[rng() % sources.size()];
    for (int edits = 1 + rng() % 3; edits > 0 && !s.empty(); --edits) {
      size_t p = rng() % s.size();
      switch (rng() % 6) {
        case 0:
          s.resize(p);
          break;
        case 1:
          s.erase(p, 1 + rng() % 20);
          break;
        case 2:
          s.insert(p, 1, "<>/\"=&; x0\n"[rng() % 11]);
          break;
        case 3:
          s.insert(p, s.substr(rng() % s.size(), 1 + rng() % 40));
          break;
        case 4: {  // drop the next attribute
          size_t q = s.find("=\"", p);
          size_t start = q == std::string::npos ? q : s.rfind(' ', q);
          size_t end = q == std::string::npos ? q : s.find('"', q + 2);
          if (start != std::string::npos && end != std::string::npos) s.erase(start, end + 1 - start);
          break;
        }
        default: {  // garble a digit
          size_t q = s.find_first_of("0123456789", p);
          if (q != std::string::npos) s[q] = "0123456789abcdefx-"[rng() % 18];
        }
      }
    }
    try {
      read_hwloc_xml_text(s, "damaged.xml");
      ++loaded;
    } catch (const ParseError&) {
      ++refused;
    }
  }
  EXPECT_GT(loaded, 0);
  EXPECT_GT(refused, 0);
}

TEST(HwlocAffinity, ReadsThisMachine) {
  NodeAffinity node = read_hwloc_live();
  utsname name{};
  ASSERT_EQ(uname(&name), 0);
  EXPECT_EQ(node.hostname, name.nodename);
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    EXPECT_EQ(node.gpus[i].index, static_cast<int>(i));
    if (i > 0) {
      EXPECT_LT(node.gpus[i - 1].pci_bus, node.gpus[i].pci_bus);
    }
  }
}

// --- attaching a directory of exports to a fabric ------------------------------

Fabric cluster() { return read_slurm_topology_file(std::string(TOPO_FIXTURES) + "/slurm/hwloc_cluster.conf"); }

const std::vector<Gpu>& gpus_of(const Fabric& f, const std::string& host) { return f.node(*f.find_host(host)).gpus; }

TEST(HwlocAffinity, AttachesEveryHostFileInADirectory) {
  Fabric f = cluster();
  EXPECT_EQ(attach_hwloc_dir(f, kHwloc), 3u);  // malformed/ is a subdirectory, not read
  ASSERT_EQ(gpus_of(f, "gpu001").size(), 8u);
  EXPECT_EQ(gpus_of(f, "gpu001")[5].closest_hca, "mlx5_2");
  EXPECT_EQ(gpus_of(f, "gpu002").size(), 4u);
  EXPECT_EQ(gpus_of(f, "gpu003").size(), 3u);
  EXPECT_TRUE(gpus_of(f, "gpu004").empty());
}

void expect_attach_error(const TempDir& dir, const std::string& file, const std::string& says) {
  Fabric f = cluster();
  try {
    attach_hwloc_dir(f, dir.str());
    ADD_FAILURE() << "accepted";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), dir.file(file));
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
  // All or nothing: the good file read before the bad one attached nothing.
  EXPECT_TRUE(gpus_of(f, "gpu001").empty());
}

TEST(HwlocAffinity, AMalformedFileAttachesNothingAndIsNamed) {
  TempDir dir("malformed");
  dir.write("gpu001.xml", file_text(kHwloc + "gpu001.xml"));
  dir.write("gpu002.xml", file_text(kHwloc + "malformed/gpu002.xml"));
  expect_attach_error(dir, "gpu002.xml", "never closed");
}

TEST(HwlocAffinity, AFileForAnUnknownHostIsAnError) {
  TempDir dir("unknown");
  dir.write("gpu001.xml", file_text(kHwloc + "gpu001.xml"));
  dir.write("gpu999.xml", file_text(kHwloc + "gpu002.xml"));
  expect_attach_error(dir, "gpu999.xml", "no host 'gpu999' in the fabric");
}

TEST(HwlocAffinity, AFileHoldingAnotherHostsExportIsAnError) {
  TempDir dir("swapped");
  dir.write("gpu001.xml", file_text(kHwloc + "gpu001.xml"));
  dir.write("gpu004.xml", file_text(kHwloc + "gpu002.xml"));
  expect_attach_error(dir, "gpu004.xml", "holds the topology of host 'gpu002' (its HostName), not of 'gpu004'");
}

TEST(HwlocAffinity, AHostNameWithADomainMatchesItsShortName) {
  TempDir dir("domain");
  dir.write("gpu004.xml",
            replaced(file_text(kHwloc + "gpu003.xml"), "value=\"gpu003\"", "value=\"gpu004.example.org\""));
  dir.write("notes.txt", "not an export");
  Fabric f = cluster();
  EXPECT_EQ(attach_hwloc_dir(f, dir.str()), 1u);
  EXPECT_EQ(gpus_of(f, "gpu004").size(), 3u);
}

TEST(HwlocAffinity, AMissingDirectoryIsAnError) {
  Fabric f = cluster();
  EXPECT_THROW(attach_hwloc_dir(f, kHwloc + "no-such-dir"), ParseError);
}

}  // namespace
}  // namespace topo
