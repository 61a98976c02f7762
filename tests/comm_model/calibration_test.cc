// Calibration: on non-blocking allocations the model's AllReduce bus
// bandwidth lands within published nccl-tests figures. The figures, the
// fabrics they are checked on and their sources are in
// tests/fixtures/comm_model/nccl_tests_reference.json.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "comm_model/estimate.h"
#include "comm_model/sizing.h"
#include "fabric/synthetic.h"

namespace topo {
namespace {

nlohmann::json references() {
  std::ifstream in(std::string(TOPO_FIXTURES) + "/comm_model/nccl_tests_reference.json");
  if (!in) throw std::runtime_error("cannot read the nccl-tests reference figures");
  return nlohmann::json::parse(in).at("references");
}

TEST(CommModelCalibration, BusBandwidthWithinPublishedNcclTestsFigures) {
  nlohmann::json refs = references();
  ASSERT_GE(refs.size(), 2u);
  for (const auto& ref : refs) {
    SCOPED_TRACE(ref.at("name").get<std::string>());
    ASSERT_FALSE(ref.at("sources").empty());
    for (const auto& s : ref.at("sources")) EXPECT_EQ(s.at("url").get<std::string>().rfind("https://", 0), 0u);
    Fabric f = make_synthetic(ref.at("fabric").get<std::string>());
    PathIndex index(f);
    Request r;
    r.collective = *parse_collective(ref.at("collective").get<std::string>());
    r.bytes = ref.at("bytes").get<double>();
    r.gpus_per_host = ref.at("gpus_per_host").get<int>();
    Estimate e = estimate(index, first_hosts(index, ref.at("hosts").get<int>()), r);
    double busbw_gbytes = e.busbw_gbps / 8;
    double low = ref.at("busbw_gbytes")[0], high = ref.at("busbw_gbytes")[1];
    EXPECT_GE(busbw_gbytes, low) << name(e.algorithm) << "/" << name(e.protocol);
    EXPECT_LE(busbw_gbytes, high) << name(e.algorithm) << "/" << name(e.protocol);
    // Non-blocking: only the hosts' own cables limit; the spines add latency alone.
    EXPECT_NEAR(e.time_s, e.ideal_time_s, 1e-4 * e.time_s);
  }
}

}  // namespace
}  // namespace topo
