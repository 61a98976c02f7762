// topoctl baseline import / check / plan on a synthetic snapshot, with the
// real nccl-tests outputs of tests/fixtures/nccl-tests and one slowed copy.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/topoctl_run.h"

namespace topo {
namespace {

using testing::run_topoctl;
namespace fs = std::filesystem;

class BaselineCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("baseline_cli." + std::to_string(getpid()));
    fs::create_directories(dir_);
    db_ = (dir_ / "t.db").string();
    ASSERT_EQ(run_topoctl("discover --synthetic leafspine:leaves=2,hosts_per_leaf=4,spines=2 --db " + db_).code, 0);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string fixture(const std::string& name) const { return std::string(TOPO_FIXTURES) + "/nccl-tests/" + name; }
  fs::path dir_;
  std::string db_;
};

TEST_F(BaselineCli, ImportStoresTheHostSetAndTheModelsFigures) {
  auto r = run_topoctl("baseline import " + fixture("spark-all_reduce_perf.txt") +
                       " --hosts 'gpu[001-002]' --json --db " + db_);
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["hosts"], nlohmann::json({"gpu001", "gpu002"}));
  EXPECT_EQ(j["rows"], 4);
  EXPECT_EQ(j["predicted_rows"], 4);
  // The file's own hosts are not in this fabric: stored, not predicted.
  r = run_topoctl("baseline import " + fixture("spark-all_reduce_perf.txt") + " --json --db " + db_);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["predicted_rows"], 0);
  // A table with no rows: file and line.
  r = run_topoctl("baseline import " + fixture("testgpu-all_reduce_perf.txt") + " --db " + db_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("testgpu-all_reduce_perf.txt:16:"), std::string::npos) << r.err;
}

TEST_F(BaselineCli, CheckFindsTheSlowSetAndNamesTheHostAndItsCable) {
  std::ifstream in(fixture("spark-all_reduce_perf.txt"));
  std::stringstream text;
  text << in.rdbuf();
  // The same run with the largest size at half its bus bandwidth.
  std::string slow = std::regex_replace(text.str(), std::regex(R"(67\.93    0\.96    0\.96)"), "67.93    0.48    0.48");
  ASSERT_NE(slow, text.str());
  std::ofstream(dir_ / "slow.txt") << slow;
  for (const char* hosts : {"gpu[001-002]", "gpu[002-003]", "gpu[005-006]"})
    ASSERT_EQ(
        run_topoctl("baseline import " + fixture("spark-all_reduce_perf.txt") + " --hosts '" + hosts + "' --db " + db_)
            .code,
        0);
  auto ok = run_topoctl("baseline check --db " + db_);
  EXPECT_EQ(ok.code, 0) << ok.out;
  ASSERT_EQ(run_topoctl("baseline import " + (dir_ / "slow.txt").string() + " --hosts 'gpu[001-002]' --db " + db_).code,
            0);
  ASSERT_EQ(run_topoctl("baseline import " + (dir_ / "slow.txt").string() + " --hosts 'gpu[002-003]' --db " + db_).code,
            0);
  ASSERT_EQ(
      run_topoctl("baseline import " + fixture("spark-all_reduce_perf.txt") + " --hosts 'gpu[005-006]' --db " + db_)
          .code,
      0);
  auto r = run_topoctl("baseline check --json --db " + db_);
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["slow"], 2);
  std::vector<std::string> causes = j["likely_causes"];
  EXPECT_NE(std::find(causes.begin(), causes.end(), "host gpu002: slow in every set it joins (2 of 2)"), causes.end())
      << j.dump(1);
  EXPECT_NE(std::find(causes.begin(), causes.end(),
                      "cable gpu002 mlx5_0:1 <-> leaf01:2: every slow set crosses it, no healthy one does"),
            causes.end())
      << j.dump(1);
  EXPECT_EQ(std::count_if(causes.begin(), causes.end(), [](const std::string& c) { return c.starts_with("host"); }), 1);
}

// a100-all_gather_perf.txt measured up to 112 MiB, where the model is held
// to its figure: as posted it is above what one NIC per host can give (no
// finding); a copy whose largest row reads 5 GB/s is slow by the model
// alone, with no earlier run of its host set.
TEST_F(BaselineCli, CheckHoldsALargeRunAgainstTheModel) {
  std::ifstream in(fixture("a100-all_gather_perf.txt"));
  std::stringstream text;
  text << in.rdbuf();
  std::string slow =
      std::regex_replace(text.str(), std::regex(R"(490\.8  239\.27  119\.64)"), "11744.0  10.00    5.00");
  ASSERT_NE(slow, text.str());
  std::ofstream(dir_ / "all_gather_perf.slow.txt") << slow;
  ASSERT_EQ(
      run_topoctl("baseline import " + fixture("a100-all_gather_perf.txt") + " --hosts 'gpu[001,005]' --db " + db_)
          .code,
      0);
  auto ok = run_topoctl("baseline check --json --db " + db_);
  ASSERT_EQ(ok.code, 0) << ok.out << ok.err;
  auto j = nlohmann::json::parse(ok.out);
  ASSERT_EQ(j["sets"].size(), 1u) << j.dump(1);
  EXPECT_EQ(j["sets"][0]["model_size"], 117440512);
  EXPECT_GT(j["sets"][0]["measured_at_model_size"].get<double>(), j["sets"][0]["model_busbw"].get<double>());
  EXPECT_TRUE(j["sets"][0]["baseline_run"].is_null());

  ASSERT_EQ(run_topoctl("baseline import " + (dir_ / "all_gather_perf.slow.txt").string() +
                        " --hosts 'gpu[002,006]' --db " + db_)
                .code,
            0);
  auto r = run_topoctl("baseline check --json --db " + db_);
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["slow"], 1);
  EXPECT_EQ(j["model_threshold"], 0.15);
  const auto& set = j["sets"][1];
  EXPECT_EQ(set["hosts"], nlohmann::json({"gpu002", "gpu006"}));
  EXPECT_TRUE(set["slower_than_model"].get<bool>());
  EXPECT_FALSE(set["slower_than_baseline"].get<bool>());
  EXPECT_DOUBLE_EQ(set["measured_at_model_size"].get<double>(), 5.0);
  // Both hosts are in the slow set only: named, with their cables.
  std::vector<std::string> causes = j["likely_causes"];
  EXPECT_NE(std::find(causes.begin(), causes.end(), "host gpu002: slow in every set it joins (1 of 1)"), causes.end())
      << j.dump(1);
  auto text_out = run_topoctl("baseline check --db " + db_);
  EXPECT_EQ(text_out.code, 1);
  EXPECT_NE(text_out.out.find("below the model"), std::string::npos) << text_out.out;
  // A looser model threshold lets it pass.
  EXPECT_EQ(run_topoctl("baseline check --model-threshold 0.99 --db " + db_).code, 0);
  EXPECT_EQ(run_topoctl("baseline check --model-threshold 2 --db " + db_).code, 2);
}

TEST_F(BaselineCli, PlanIsABisectionInLog2Rounds) {
  auto r = run_topoctl("baseline plan --hosts 'gpu[001-008]' --gpus-per-node 4");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Bisection of 8 hosts for the slow one: 3 rounds of all_reduce_perf"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("suspects=(gpu001 gpu002 gpu003 gpu004 gpu005 gpu006 gpu007 gpu008)"), std::string::npos);
  EXPECT_NE(r.out.find("srun --nodes=$# --nodelist=\"$list\" --ntasks-per-node=4"), std::string::npos);
  EXPECT_NE(run_topoctl("baseline plan --hosts gpu001").code, 0);
}

}  // namespace
}  // namespace topo
