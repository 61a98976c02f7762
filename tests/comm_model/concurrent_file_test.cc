// The concurrent-jobs file of `topoctl estimate --concurrent`
// (comm_model/concurrent_file.h): its fields, and its errors by line and
// field.
#include "comm_model/concurrent_file.h"

#include <sstream>

#include <gtest/gtest.h>

#include "common/error.h"
#include "fabric/synthetic.h"

namespace topo {
namespace {

const Request kLike{Collective::AllReduce, 1 << 20, Dtype::Bf16, 8};

std::vector<NeighbourJob> read(const Fabric& f, const std::string& text) {
  std::istringstream in(text);
  return read_concurrent(in, "jobs.txt", f, kLike);
}

TEST(ConcurrentFile, FieldsDefaultToTheEstimatedJob) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2");
  auto jobs = read(f,
                   "# hosts in ring order [collective] [key=value ...]\n"
                   "gpu[002-003] allreduce duty=1\n"
                   "\n"
                   "gpu010,gpu001 alltoall size=4e6 gpus-per-host=4 duty=0.5  # MoE\n"
                   "gpu010,gpu011 collective=broadcast\n");
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].ring, (std::vector<NodeId>{*f.find_host("gpu002"), *f.find_host("gpu003")}));
  EXPECT_EQ(jobs[0].request.collective, Collective::AllReduce);
  EXPECT_EQ(jobs[0].request.bytes, kLike.bytes);
  EXPECT_EQ(jobs[0].request.gpus_per_host, 8);
  EXPECT_EQ(jobs[0].duty, 1);
  EXPECT_EQ(jobs[1].ring, (std::vector<NodeId>{*f.find_host("gpu010"), *f.find_host("gpu001")}));
  EXPECT_EQ(jobs[1].request.collective, Collective::AllToAll);
  EXPECT_EQ(jobs[1].request.bytes, 4e6);
  EXPECT_EQ(jobs[1].request.gpus_per_host, 4);
  EXPECT_EQ(jobs[1].duty, 0.5);
  // A host may run two collectives (GPUs shared): hosts repeat across lines.
  EXPECT_EQ(jobs[2].request.collective, Collective::Broadcast);
  EXPECT_EQ(jobs[2].duty, 1);
}

TEST(ConcurrentFile, ErrorsNameTheLineAndField) {
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2");
  struct Case {
    std::string text;
    int line;
    std::string says;
  };
  const std::vector<Case> cases{
      {"gpu001,gpu002\ngpu003 duty=2\n", 2, "duty field 'duty=2': expected duty=SHARE with SHARE in (0, 1]"},
      {"gpu001 duty=0.5x\n", 1, "duty field 'duty=0.5x': is not a number"},
      {"gpu001 duty=nan\n", 1, "duty field 'duty=nan'"},
      {"gpu001,nosuch\n", 1, "hosts field: 'nosuch' is not a host of the fabric"},
      {"gpu001,gpu002,gpu001\n", 1, "hosts field: 'gpu001' is twice in this job's ring"},
      {"gpu[001-\n", 1, "hosts field 'gpu[001-'"},
      {"gpu[000001-999999]\n", 1, "hosts field"},
      {"gpu001 allreduce alltoall\n", 1, "collective field 'alltoall': appears twice on the line"},
      {"gpu001 fsdp\n", 1, "collective field 'fsdp': expected allreduce, allgather"},
      {"gpu001 size=3\n", 1, "size field 'size=3': expected size=BYTES, a whole number of bf16 elements"},
      {"gpu001 size=1e300\n", 1, "size field 'size=1e300'"},
      {"gpu001 size=-2\n", 1, "size field"},
      {"gpu001 gpus-per-host=0\n", 1, "gpus-per-host field 'gpus-per-host=0': expected gpus-per-host=G with G from 1"},
      {"gpu001 gpus-per-host=2000000\n", 1, "gpus-per-host field"},
      {"gpu001 colour=red\n", 1, "unknown field 'colour=red'"},
      {"ok\n\n\ngpu001 " + std::string(5000, 'x') + "\n", 1, "hosts field: 'ok'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text.substr(0, 80));
    try {
      read(f, c.text);
      ADD_FAILURE() << "accepted";
    } catch (const ParseError& e) {
      EXPECT_EQ(e.file(), "jobs.txt");
      EXPECT_EQ(e.line(), c.line) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
      EXPECT_LT(std::string(e.what()).size(), 300u) << "quotes no more than a short piece";
    }
  }
}

TEST(ConcurrentFile, AMissingFileIsNamed) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=2,spines=1");
  try {
    read_concurrent_file("/nonexistent/jobs.txt", f, kLike);
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), "/nonexistent/jobs.txt");
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace topo
