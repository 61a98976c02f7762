// NCCL_IB_HCA values from hwloc exports (node_hcas.h), on the fixtures of
// tests/fixtures/hwloc: gpu001 has 8 GPUs, two per PCIe switch with one HCA
// each; gpu003 has 3 GPUs whose HCAs share only a package; gpu002 has none.
#include "plugin/engine/node_hcas.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

namespace {

struct Free {
  void operator()(topo_node_hcas_t* h) const { topo_node_hcas_free(h); }
};
using Hcas = std::unique_ptr<topo_node_hcas_t, Free>;

Hcas read(const std::string& name) {
  topo_node_hcas_t* h = nullptr;
  char msg[256];
  std::string path = std::string(TOPO_FIXTURES) + "/hwloc/" + name;
  EXPECT_EQ(topo_node_hcas_read(path.c_str(), &h, msg, sizeof msg), 0) << msg;
  return Hcas(h);
}

std::string value(const Hcas& h, std::initializer_list<int> gpus, int first) {
  std::vector<int> v(gpus);
  char* text = topo_node_hcas_value(h.get(), v.data(), v.size(), first);
  std::string out = text ? text : "(none)";
  std::free(text);
  return out;
}

TEST(NodeHcas, EveryGpuOfTheHostByRail) {
  Hcas h = read("gpu001.xml");
  ASSERT_TRUE(h);
  EXPECT_EQ(topo_node_hcas_gpu_count(h.get()), 8u);
  EXPECT_EQ(value(h, {}, -1), "mlx5_0,mlx5_1,mlx5_2,mlx5_3");
}

TEST(NodeHcas, OnlyTheJobsGpus) {
  Hcas h = read("gpu001.xml");
  EXPECT_EQ(value(h, {4, 5, 6}, -1), "mlx5_2,mlx5_3");
}

TEST(NodeHcas, TheTasksGpuFirst) {
  Hcas h = read("gpu001.xml");
  EXPECT_EQ(value(h, {0, 1, 2, 3, 4, 5, 6, 7}, 2), "mlx5_1,mlx5_0,mlx5_2,mlx5_3");
  EXPECT_EQ(value(h, {0, 1, 2, 3, 4, 5, 6, 7}, 7), "mlx5_3,mlx5_0,mlx5_1,mlx5_2");
}

TEST(NodeHcas, AnotherBuildGetsItsOwn) {
  Hcas h = read("gpu003.xml");
  ASSERT_TRUE(h);
  EXPECT_EQ(topo_node_hcas_gpu_count(h.get()), 3u);
  EXPECT_EQ(value(h, {0, 1, 2, 3, 4, 5, 6, 7}, -1), "mlx5_0,mlx5_1,mlx5_2");
  EXPECT_EQ(value(h, {0, 1, 2, 3, 4, 5, 6, 7}, 1), "mlx5_1,mlx5_0,mlx5_2");
}

TEST(NodeHcas, NoHcaNoValue) {
  Hcas h = read("gpu002.xml");
  EXPECT_EQ(value(h, {}, 0), "(none)");
  // GPUs the host does not have are skipped, not an error.
  Hcas g = read("gpu001.xml");
  EXPECT_EQ(value(g, {42}, 42), "(none)");
}

TEST(NodeHcas, ADamagedExportIsAnErrorNamingTheFile) {
  topo_node_hcas_t* h = nullptr;
  char msg[512];
  std::string path = std::string(TOPO_FIXTURES) + "/hwloc/malformed/gpu002.xml";
  EXPECT_EQ(topo_node_hcas_read(path.c_str(), &h, msg, sizeof msg), -1);
  EXPECT_EQ(h, nullptr);
  EXPECT_NE(std::string(msg).find("gpu002.xml"), std::string::npos) << msg;
}

}  // namespace
