// nvidia-smi's GPU fabric records (-q -x and -q), per host, into NVLink
// domains; and every kind of bad file refused with its file, line and field.
#include "discovery/nvidia_smi.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "fabric/synthetic.h"
#include "tests/support/temp_dir.h"

namespace topo {
namespace {

const std::string kGb200 = std::string(TOPO_FIXTURES) + "/nvidia-smi/gb200";
constexpr const char* kUuidA = "b6a1f0c4-3d2e-4f5a-8b9c-0d1e2f3a4b5c";

Fabric eight_hosts() { return make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2"); }

// The message of the ParseError `read` throws, with its file and line.
template <typename F>
std::string error_of(F read) {
  try {
    read();
  } catch (const ParseError& e) {
    return e.what();
  }
  return "no error";
}

TEST(NvidiaSmi, TheXmlReportGivesEachGpusFabricRecord) {
  NvidiaSmiReport r = read_nvidia_smi_file(kGb200 + "/gpu001.xml");
  EXPECT_EQ(r.driver_version, "570.172.08");
  ASSERT_EQ(r.gpus.size(), 4u);
  EXPECT_EQ(r.gpus[2], (GpuFabric{"00000018:01:00.0", "Completed", "Success", "32766", kUuidA}));
}

TEST(NvidiaSmi, TheTextReportGivesTheSameFieldsAndSkipsTheHealthSection) {
  NvidiaSmiReport r = read_nvidia_smi_file(kGb200 + "/gpu006.txt");
  EXPECT_EQ(r.driver_version, "570.172.08");
  ASSERT_EQ(r.gpus.size(), 4u);
  EXPECT_EQ(r.gpus[0].pci_bus, "00000008:01:00.0");
  EXPECT_EQ(r.gpus[0].clique_id, "32767");
  EXPECT_EQ(r.gpus[2].state, "In Progress");
  EXPECT_EQ(r.gpus[2].status, "N/A");
}

TEST(NvidiaSmi, ADirectoryOfBothFormsGivesTheDomainsAndTheFaults) {
  Fabric f = eight_hosts();
  EXPECT_EQ(attach_nvidia_smi_dir(f, kGb200, *nvlink_spec("nvlink5")), 8u);
  ASSERT_EQ(f.domains().count(), 2u);
  EXPECT_EQ(f.domains().key(0).str(), std::string(kUuidA) + ".32766");
  EXPECT_EQ(f.domains().hosts(0).size(), 4u);
  EXPECT_EQ(f.domains().hosts(1).size(), 3u);  // gpu006 has a GPU in progress
  ASSERT_EQ(f.faults().size(), 1u);
  EXPECT_EQ(f.faults()[0].kind, FaultKind::NvlinkFabricState);
  EXPECT_EQ(f.faults()[0].subject, "gpu006 GPU 00000018:01:00.0");
}

TEST(NvidiaSmi, AnOldDriverWithoutAFabricSectionMeansNoDomain) {
  std::string text =
      "\n==============NVSMI LOG==============\n\nDriver Version : 470.82.01\n\nGPU 00000000:18:00.0\n"
      "    Product Name : NVIDIA A100-SXM4-80GB\n    PCI\n        Bus : 0x18\n";
  NvidiaSmiReport r = read_nvidia_smi_text(text, "old.txt");
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].state, "N/A");
  EXPECT_FALSE(gpu_domain(r.gpus[0]));
  std::string xml =
      "<?xml version=\"1.0\" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v12.dtd\">\n<nvidia_smi_log>\n"
      "<gpu id=\"00000000:18:00.0\"><product_name>NVIDIA H100 &amp; co</product_name><fabric><state>Not "
      "Supported</state><status>N/A</status></fabric></gpu></nvidia_smi_log>\n";
  NvidiaSmiReport x = read_nvidia_smi_xml(xml, "hgx.xml");
  EXPECT_EQ(x.gpus[0], (GpuFabric{"00000000:18:00.0", "Not Supported", "N/A", "N/A", "N/A"}));
}

TEST(NvidiaSmi, MalformedXmlIsRefusedNamingFileLineAndElement) {
  auto xml_error = [](const std::string& body) { return error_of([&] { read_nvidia_smi_xml(body, "n.xml"); }); };
  EXPECT_EQ(xml_error("<nvidia_smi_log>\n<gpu id=\"1\">\n<fabric>\n</gpu>\n</nvidia_smi_log>"),
            "n.xml:4: </gpu> closes <fabric>");
  EXPECT_EQ(xml_error("<nvidia_smi_log><gpu><fabric/></gpu></nvidia_smi_log>"),
            "n.xml:1: <gpu> has no id attribute (its PCI bus id)");
  EXPECT_EQ(xml_error("<other/>"), "n.xml:1: expected the root element <nvidia_smi_log>, found <other>");
  EXPECT_EQ(xml_error("<nvidia_smi_log>\n<gpu id=\"1\"><fabric><state>A &bogus; B</state>"),
            "n.xml:2: unknown entity '&bogus;' in state");
  EXPECT_EQ(xml_error("<nvidia_smi_log>\n<gpu id=\"1\">\n<fabric><state>A</state><state>B</state></fabric>"),
            "n.xml:3: GPU 1 has a second <fabric><state>");
  EXPECT_EQ(xml_error("<nvidia_smi_log>\n\n<gpu id=\"1\">"), "n.xml:3: <gpu> is never closed");
  EXPECT_EQ(xml_error("<nvidia_smi_log></nvidia_smi_log>"), "n.xml: no <gpu> element: nvidia-smi saw no GPU");
  EXPECT_EQ(xml_error("<nvidia_smi_log><!-- x </nvidia_smi_log>"), "n.xml:1: a comment is never closed with '-->'");
  // Found by the fuzzer: a <fabric> under an element that is no GPU, before any GPU.
  EXPECT_EQ(xml_error("<nvidia_smi_log><x><fabric></fabric></x></nvidia_smi_log>"),
            "n.xml: no <gpu> element: nvidia-smi saw no GPU");
  std::string deep = "<nvidia_smi_log>";
  for (int i = 0; i < 70; ++i) deep += "<a>";
  EXPECT_EQ(xml_error(deep), "n.xml:1: elements nest deeper than 64");
}

TEST(NvidiaSmi, MalformedTextIsRefusedNamingFileLineAndField) {
  auto text_error = [](const std::string& body) { return error_of([&] { read_nvidia_smi_text(body, "n.txt"); }); };
  EXPECT_EQ(text_error("hello\n"),
            "n.txt:1: expected nvidia-smi -q output, starting with its '=====NVSMI LOG=====' line");
  EXPECT_EQ(text_error("=====NVSMI LOG=====\nGPU \n"), "n.txt:2: 'GPU ' does not name a PCI bus id");
  EXPECT_EQ(text_error("=====NVSMI LOG=====\nGPU 1\n    Fabric\n        State : A\n        State : B\n"),
            "n.txt:5: GPU 1: Fabric field State given twice");
  EXPECT_EQ(text_error("=====NVSMI LOG=====\nGPU 1\n    Fabric\n        ClusterUUID :\n"),
            "n.txt:4: GPU 1: Fabric field ClusterUUID has no value");
  EXPECT_EQ(text_error("=====NVSMI LOG=====\nDriver Version : 1\n"),
            "n.txt:2: no 'GPU <bus id>' section: nvidia-smi saw no GPU");
}

TEST(NvidiaSmi, AFileOfAnUnknownHostOrTwoFilesOfOneAreRefusedAndNothingIsAttached) {
  testing::TempDir dir;
  std::filesystem::copy_file(kGb200 + "/gpu001.xml", dir.path() / "gpu001.xml");
  std::filesystem::copy_file(kGb200 + "/gpu005.txt", dir.path() / "gpu001.txt");
  Fabric f = eight_hosts();
  std::string e = error_of([&] { attach_nvidia_smi_dir(f, dir.path().string(), NvlinkSpec{}); });
  EXPECT_NE(e.find("a second report for host 'gpu001'"), std::string::npos) << e;
  EXPECT_TRUE(f.domains().reports().empty());
  std::filesystem::remove(dir.path() / "gpu001.txt");
  std::filesystem::copy_file(kGb200 + "/gpu005.txt", dir.path() / "node99.txt");
  e = error_of([&] { attach_nvidia_smi_dir(f, dir.path().string(), NvlinkSpec{}); });
  EXPECT_EQ(e, (dir.path() / "node99.txt").string() +
                   ": no host 'node99' in the fabric; expected files named <host>.xml or <host>.txt after its hosts");
}

}  // namespace
}  // namespace topo
