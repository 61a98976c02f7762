// Every file topoctl reads, given what no tool writes: a word of
// megabytes, megabytes of '[' and '{', random bytes, and (where the reader
// stops at its first line) /dev/zero. Each is an error naming the file,
// exit 2, under a gigabyte: never a signal, an exhausted stack, or memory
// without bound. The fuzzers cannot reach these: their inputs stop at
// 64 KiB, and a matcher that recurses once per character (libstdc++'s
// std::regex) overflows the stack only on megabytes.
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"
#include "tests/support/topoctl_run.h"

namespace {

using topo::testing::run_topoctl;
using topo::testing::TempDir;
namespace fs = std::filesystem;

const char* kFabric = "leafspine:leaves=2,hosts_per_leaf=2,spines=1";

// One reader: the topoctl arguments, with {file} for the path of the
// input, {dir} for the directory holding it, and {db} for a snapshot
// database of kFabric. `name` is what the input is called in {dir}.
struct Reader {
  std::string what, args, name = "input";
  bool stops_at_first_line = false;  // bounded by its line, not by its whole size
};

const std::vector<Reader> kReaders{
    {"ibnetdiscover", "discover --ibnetdiscover {file} --db {dir}/new.db"},
    {"libibnetdisc cache", "discover --cache {file} --db {dir}/new.db"},
    {"topology.conf", "discover --slurm-topology {file} --db {dir}/new.db", "input", true},
    {"lldpcli JSON", "discover --lldp {dir} --db {dir}/new.db", "leaf01.json"},
    {"LLDP CSV", "discover --lldp {dir} --db {dir}/new.db", "links.csv"},
    {"hwloc XML", fmt::format("discover --synthetic {} --hwloc {{dir}} --db {{dir}}/new.db", kFabric), "gpu001.xml"},
    {"OpenSM LFT dump", fmt::format("discover --synthetic {} --lfts-dump {{file}} --db {{dir}}/new.db", kFabric),
     "input", true},
    {"topo_aware.conf", "show --conf {file} --db {db}", "input", true},
    {"busy hosts", "place --gpus 8 --busy {file} --db {db}", "input", true},
    {"running jobs", "place --gpus 8 --running {file} --db {db}", "input", true},
    {"concurrent jobs", "estimate --params 7B --step-time 1s --hosts gpu001,gpu003 --concurrent {file} --db {db}",
     "input", true},
    {"trace CSV", fmt::format("simulate --trace {{file}} --synthetic {}", kFabric), "input", true},
    {"schedule JSON", "score --schedule {file} --db {db}"},
    {"results JSON", "report --results {file} --out {dir}/report"},
    {"ethtool -S", "health --ethtool {dir} --db {db}", "gpu001.txt"},
    {"nccl-tests output", "baseline import {file} --db {db}"},
};

std::string random_bytes(size_t n) {
  std::mt19937 draw(1);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(draw());
  return s;
}

class HostileFiles : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("hostile-files");
    db_ = (dir_->path() / "fabric.db").string();
    auto r = run_topoctl(fmt::format("discover --synthetic {} --db {}", kFabric, db_));
    ASSERT_EQ(r.code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  // Every reader on `content` (or, with `device`, on a link to it): exit 2
  // and an error naming the input.
  void expect_refused_by_all(const std::string& label, const std::string& content, const std::string& device = "") {
    for (const Reader& reader : kReaders) {
      if (!device.empty() && !reader.stops_at_first_line) continue;
      SCOPED_TRACE(fmt::format("{} as {}", label, reader.what));
      TempDir case_dir("hostile-case");
      fs::path file = case_dir.path() / reader.name;
      if (device.empty())
        std::ofstream(file, std::ios::binary) << content;
      else
        fs::create_symlink(device, file);
      std::string args = fmt::format(fmt::runtime(reader.args), fmt::arg("file", file.string()),
                                     fmt::arg("dir", case_dir.path().string()), fmt::arg("db", db_));
      auto r = run_topoctl(args);
      EXPECT_EQ(r.code, 2) << args << "\n" << r.err.substr(0, 600);
      EXPECT_NE(r.err.find(file.string()), std::string::npos) << "the error names the input:\n" << r.err.substr(0, 600);
      EXPECT_LT(r.err.size(), 4096u) << "quotes no more than a piece of the input";
      // The largest peak here is 20 MB (a release build); ASan's shadow adds to it.
      EXPECT_LT(r.max_rss_kb, 1 << 20) << "KB at the peak: a reader held a gigabyte";
    }
  }

  static TempDir* dir_;
  static std::string db_;
};

TempDir* HostileFiles::dir_ = nullptr;
std::string HostileFiles::db_;

TEST_F(HostileFiles, AWordOfMegabytes) {
  expect_refused_by_all("a word of 3 MB", std::string(3 << 20, 'a') + "_perf\n");
}

TEST_F(HostileFiles, MegabytesOfOpenBrackets) { expect_refused_by_all("3 MB of '['", std::string(3 << 20, '[')); }

TEST_F(HostileFiles, RandomBytes) { expect_refused_by_all("1 MB of random bytes", random_bytes(1 << 20)); }

TEST_F(HostileFiles, AnEndlessDevice) { expect_refused_by_all("/dev/zero", "", "/dev/zero"); }

TEST_F(HostileFiles, MegabytesOfOpenBraces) { expect_refused_by_all("3 MB of '{'", std::string(3 << 20, '{')); }

}  // namespace
