// Reading nccl-tests output (health/nccl_tests.h), on real outputs from
// public bug reports (tests/fixtures/nccl-tests/README.md) and broken ones.
#include "health/nccl_tests.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.h"

namespace topo {
namespace {

std::string fixture(const std::string& name) { return std::string(TOPO_FIXTURES) + "/nccl-tests/" + name; }

TEST(NcclTests, TwoHostAllReduceWithTheNewHeader) {
  NcclTestsRun run = read_nccl_tests_file(fixture("spark-all_reduce_perf.txt"));
  EXPECT_EQ(run.test, "all_reduce_perf");
  EXPECT_EQ(run.collective(), Collective::AllReduce);
  EXPECT_EQ(run.nccl_version, "2.31.2");
  EXPECT_EQ(run.hosts(), (std::vector<std::string>{"spark-d708", "spark-dbf4"}));
  ASSERT_EQ(run.ranks.size(), 2u);
  EXPECT_EQ(run.ranks[1].bus, "000f:01:00");
  EXPECT_EQ(run.ranks[1].name, "NVIDIA GB10");
  ASSERT_EQ(run.rows.size(), 4u);
  EXPECT_EQ(run.rows[3].size, 65536);
  EXPECT_EQ(run.rows[3].redop, "sum");
  EXPECT_EQ(run.rows[3].root, -1);
  EXPECT_DOUBLE_EQ(run.rows[3].oop_busbw, 0.96);
  EXPECT_DOUBLE_EQ(run.rows[3].ip_time_us, 64.71);
  EXPECT_FALSE(run.avg_busbw);
}

TEST(NcclTests, TheTestIsNamedByThePastedCommandLine) {
  NcclTestsRun run = read_nccl_tests_file(fixture("a100-all_gather_perf.txt"));
  EXPECT_EQ(run.test, "all_gather_perf");
  EXPECT_EQ(run.collective(), Collective::AllGather);
  EXPECT_TRUE(run.ranks.empty());
  ASSERT_EQ(run.rows.size(), 7u);
  EXPECT_EQ(run.rows[0].type, "bfloat16");
  EXPECT_DOUBLE_EQ(run.rows[6].oop_algbw, 239.27);
}

TEST(NcclTests, ATableWithNoRowsNamesTheHeaderLine) {
  try {
    read_nccl_tests_file(fixture("testgpu-all_reduce_perf.txt"));
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 16);
    EXPECT_NE(std::string(e.what()).find("no rows"), std::string::npos) << e.what();
  }
}

TEST(NcclTests, OldFormatsAndBrokenRows) {
  // NCCL 2.6's nccl-tests: no redop and no root column, errors as 0e+00.
  NcclTestsRun old = parse_nccl_tests(
      "./broadcast_perf -b 8 -e 128M -f 2 -g 2\n"
      "#       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error\n"
      "       65536          8192   float    16.57    1.98    1.98  0e+00    13.83    2.37    2.37  0e+00\n"
      "# Avg bus bandwidth    : 6.6972 \n",
      "old.txt");
  ASSERT_EQ(old.rows.size(), 1u);
  EXPECT_EQ(old.rows[0].redop, "");
  EXPECT_EQ(old.rows[0].oop_wrong, "0e+00");
  EXPECT_EQ(old.avg_busbw, 6.6972);
  EXPECT_EQ(old.test, "broadcast_perf");
  const std::string header = "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n";
  auto error_of = [](const std::string& text) {
    try {
      parse_nccl_tests(text, "bad.txt");
    } catch (const ParseError& e) {
      return fmt::format("{}:{}: {}", e.file(), e.line(), e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of(header + "  8 2 float sum -1 40.64 0.00 x.00 0 45.02 0.00 0.00 0\n").find("bad.txt:2"),
            std::string::npos);
  EXPECT_NE(error_of(header + "  8 2 float sum -1 40.64 0.00 x.00 0 45.02 0.00 0.00 0\n").find("busbw"),
            std::string::npos);
  EXPECT_NE(error_of(header + "\n  8 2 float sum -1 40.64 0.00\n").find("bad.txt:3"), std::string::npos);
  EXPECT_NE(error_of("hello\n").find("no nccl-tests table"), std::string::npos);
  EXPECT_NE(error_of("#  Rank  0 Group 0 Pid 1 on\n" + header).find("bad.txt:1"), std::string::npos);
  EXPECT_THROW(read_nccl_tests_file("/nonexistent/out.txt"), ParseError);
}

}  // namespace
}  // namespace topo
