// The schedule file of a real cluster's replay (tools/topoctl/schedule_json.h):
// numbers a plain cast cannot hold are errors naming the key, not undefined
// conversions or exceptions of the JSON library.
#include "tools/topoctl/schedule_json.h"

#include <sstream>

#include <gtest/gtest.h>

#include "common/error.h"
#include "fabric/synthetic.h"

namespace topoctl {
namespace {

std::string error_of(const std::string& text) {
  topo::Fabric f = topo::make_synthetic("leafspine:leaves=2,hosts_per_leaf=2,spines=1");
  std::istringstream in(text);
  std::string trace;
  try {
    read_schedule(in, "s.json", f, trace);
  } catch (const topo::ParseError& e) {
    return e.what();
  }
  return "";
}

std::string job(const std::string& gpus, const std::string& host_gpus) {
  return R"({"policy": "tree", "jobs": [{"id": "j1", "gpus": )" + gpus +
         R"(, "submit_s": 0, "start_s": 1, "end_s": 2, "ring": ["gpu001"], "host_gpus": )" + host_gpus + "}]}";
}

TEST(ScheduleJson, AcceptsAWellFormedSchedule) { EXPECT_EQ(error_of(job("8", "[8]")), ""); }

TEST(ScheduleJson, NumbersOutOfRangeNameTheirKey) {
  EXPECT_NE(error_of(job("1e300", "[8]")).find("jobs[0].gpus: expected a whole number"), std::string::npos);
  EXPECT_NE(error_of(job("4294967304", "[8]")).find("jobs[0].gpus"), std::string::npos);
  EXPECT_NE(error_of(job("8", "[8.5]")).find("jobs[0].host_gpus[0]"), std::string::npos);
  EXPECT_NE(error_of(job("8", "[-1]")).find("jobs[0].host_gpus[0]"), std::string::npos);
  EXPECT_NE(error_of(job("8", "8")).find("jobs[0].host_gpus: expected a list"), std::string::npos);
  // Past a double: nlohmann's out_of_range, now a ParseError.
  EXPECT_NE(error_of(job("8", "[-1e400]")).find("s.json: not valid JSON"), std::string::npos);
}

// An error quotes the start of what it refuses, never kilobytes of it.
TEST(ScheduleJson, ErrorsQuoteAnExcerpt) {
  std::string host(5000, 'h');
  std::string text =
      R"({"policy": "tree", "jobs": [{"id": "j1", "gpus": 8, "submit_s": 0, "start_s": 1, "end_s": 2, "ring": [")" +
      host + R"("], "host_gpus": [8]}]})";
  std::string e = error_of(text);
  EXPECT_NE(e.find("unknown host hhhh"), std::string::npos) << e;
  EXPECT_LT(e.size(), 400u);
  EXPECT_LT(error_of("[" + std::string(5000, '\t') + "{\x7f").size(), 400u);
}

}  // namespace
}  // namespace topoctl
