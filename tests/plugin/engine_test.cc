// The engine's C ABI on a real snapshot database: config parsing and its
// errors, ranking on a fragmented leaf/spine fabric by Slurm node index, a
// new snapshot or node table picked up without reopening, database failures
// as status + message, records through the journal, which a killed process
// leaves for the next start to replay exactly once.
#include "plugin/engine/engine.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "db/connection.h"
#include "db/placement_journal.h"
#include "db/placement_store.h"
#include "db/snapshot_store.h"
#include "fabric/synthetic.h"
#include "placement/search.h"
#include "plugin/engine/engine_config.h"
#include "plugin/engine/placement_writer.h"

namespace {

constexpr const char* kFabric = "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,degrade=leaf02:9";

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("engine-test-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    for (int i = 1; i <= 32; ++i) {
      char n[16];
      std::snprintf(n, sizeof n, "gpu%03d", i);
      names_.push_back(n);
    }
    names_.push_back("nothere");  // a Slurm node the fabric does not know
  }
  void TearDown() override {
    topo_engine_close(engine_);
    std::filesystem::remove_all(dir_);
  }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  void save(const char* spec) { topo::SnapshotStore(path("fabric.db")).save(topo::make_synthetic(spec)); }
  std::string conf(const std::string& body) {
    std::ofstream(path("topo_aware.conf")) << body;
    return path("topo_aware.conf");
  }
  void open(const std::string& conf_path) {
    ASSERT_EQ(topo_engine_open(conf_path.c_str(), &engine_, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
    set_nodes(names_);
  }
  // Slurm's node table: index i is names[i].
  void set_nodes(const std::vector<std::string>& names) {
    std::vector<const char*> ptrs;
    for (const std::string& n : names) ptrs.push_back(n.c_str());
    char m[512];  // msg_ keeps what open said
    ASSERT_EQ(topo_engine_set_nodes(engine_, ptrs.data(), ptrs.size(), m, sizeof m), TOPO_ENGINE_OK) << m;
  }
  // Ranks a whole-host job over the nodes with `free` GPUs (index = gpu00N-1).
  int rank(uint32_t nodes, const std::vector<int>& free, topo_engine_ranking* out, uint32_t job_id = 1,
           bool all_candidates = false) {
    topo_engine_job job{};
    job.job_id = job_id;
    job.nodes = nodes;
    job.gpus_per_node = 8;
    job.request.topo_aware = true;
    job.all_candidates = all_candidates;
    return topo_engine_rank(engine_, &job, free.data(), free.size(), out, msg_, sizeof msg_);
  }
  std::vector<std::string> hosts(const topo_engine_candidate& c) const {
    std::vector<std::string> out;
    for (size_t i = 0; i < c.count; ++i) out.push_back(names_[c.nodes[i]]);
    return out;
  }
  // Node indices of names in the fixture's table.
  std::vector<size_t> indices(const std::vector<std::string>& names) const {
    std::vector<size_t> out;
    for (const std::string& n : names) out.push_back(std::find(names_.begin(), names_.end(), n) - names_.begin());
    return out;
  }
  // Records a fallback placement of `job_id` on `nodes`; returns the ring.
  std::string record_fallback(uint32_t job_id, const std::vector<std::string>& nodes, std::string* hca = nullptr) {
    topo_engine_job job{};
    job.job_id = job_id;
    job.nodes = static_cast<uint32_t>(nodes.size());
    std::vector<size_t> alloc = indices(nodes);
    char *ring = nullptr, *hcas = nullptr;
    EXPECT_EQ(topo_engine_record(engine_, &job, nullptr, -1, alloc.data(), alloc.size(), "test", &ring, &hcas, msg_,
                                 sizeof msg_),
              TOPO_ENGINE_OK)
        << msg_;
    std::string out = ring ? ring : "";
    if (hca) *hca = hcas ? hcas : "(none)";
    std::free(ring);
    std::free(hcas);
    return out;
  }
  // Records candidate `chosen` of `r` for `job`, allocated `nodes` (given
  // in node order, as Slurm does); returns the ring.
  std::string record_candidate(const topo_engine_job& job, topo_engine_ranking* r, int chosen,
                               const std::vector<std::string>& nodes, std::string* hca = nullptr) {
    std::vector<size_t> alloc = indices(nodes);
    std::sort(alloc.begin(), alloc.end());
    char *ring = nullptr, *hcas = nullptr;
    EXPECT_EQ(topo_engine_record(engine_, &job, r, chosen, alloc.data(), alloc.size(), nullptr, &ring, &hcas, msg_,
                                 sizeof msg_),
              TOPO_ENGINE_OK)
        << msg_;
    std::string out = ring ? ring : "";
    if (hca) *hca = hcas ? hcas : "(none)";
    std::free(ring);
    std::free(hcas);
    return out;
  }
  void flush() { ASSERT_EQ(topo_engine_flush(engine_, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_; }

  // The running-traffic tests' cluster: 4 leaves of 8, four hosts free on
  // each (gpu005-008, 013-016, 021-024, 029-032).
  static std::vector<int> four_free_per_leaf() {
    std::vector<int> free(32, 0);
    for (int leaf = 0; leaf < 4; ++leaf)
      for (int i = 4; i < 8; ++i) free[leaf * 8 + i] = 8;
    return free;
  }
  // The best candidate of an 8-host job (job 2), sorted.
  std::vector<std::string> best_of_eight(const std::vector<int>& free) {
    topo_engine_ranking r{};
    EXPECT_EQ(rank(8, free, &r, 2), TOPO_ENGINE_OK) << msg_;
    std::vector<std::string> out = r.count ? hosts(r.candidates[0]) : std::vector<std::string>{};
    std::sort(out.begin(), out.end());
    topo_engine_ranking_free(&r);
    return out;
  }
  // A job on the busy hosts (gpu001-004 of a leaf) of the two leaves `alone`
  // spans: a ring across their uplinks. Empty when `alone` is on one leaf.
  std::vector<std::string> busy_half_of_leaves(const std::vector<std::string>& alone, int* a, int* b) const {
    *a = (std::stoi(alone.front().substr(3)) - 1) / 8;
    *b = (std::stoi(alone.back().substr(3)) - 1) / 8;
    std::vector<std::string> job;
    if (*a == *b) return job;
    for (int leaf : {*a, *b})
      for (int i = 0; i < 4; ++i) job.push_back(names_[leaf * 8 + i]);
    return job;
  }

  std::filesystem::path dir_;
  std::vector<std::string> names_;
  topo_engine_t* engine_ = nullptr;
  char msg_[512] = "";
};

TEST_F(EngineTest, WeightsNameEveryTierAndRefuseOthersNamingTheLine) {
  std::optional<topo::EngineConfig> c =
      topo::read_engine_config(conf("Weights=overloaded_leaf=2000, spine_edge=500\n"));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->weights.overloaded_leaf, 2000);
  EXPECT_EQ(c->weights.spine_edge, 500);
  EXPECT_EQ(c->weights.leaf, topo::Weights{}.leaf);
  std::string bad = conf("Strict=no\nWeights=overloaded=1\n");
  try {
    topo::read_engine_config(bad);
    ADD_FAILURE() << "accepted an unknown weight";
  } catch (const topo::ParseError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(std::string(e.what()).find("overloaded_leaf"), std::string::npos) << e.what();  // the names it takes
  }
}

TEST_F(EngineTest, MissingConfigMeansDefaultsAndSaysSo) {
  open(path("nope.conf"));
  EXPECT_NE(std::string(msg_).find("nope.conf: no such file; using the defaults"), std::string::npos) << msg_;
  EXPECT_FALSE(topo_engine_strict(engine_));
  topo_network_request r{};
  EXPECT_STREQ(topo_engine_profile(engine_, &r), "allreduce");
}

TEST_F(EngineTest, ConfigIsReadAndBadLinesNameFileAndLine) {
  open(conf("# comment\nDbPath = " + path("fabric.db") +
            "\nStrict=yes\nPartitions=gpu, big\nDefaultProfile=alltoall\nWeights=leaf=50,fragment=2\n"));
  EXPECT_TRUE(topo_engine_strict(engine_));
  EXPECT_TRUE(topo_engine_partition_selected(engine_, "big"));
  EXPECT_FALSE(topo_engine_partition_selected(engine_, "cpu"));
  topo_network_request r{};
  EXPECT_STREQ(topo_engine_profile(engine_, &r), "alltoall");
  r.profile = TOPO_PROFILE_MIXED;
  EXPECT_STREQ(topo_engine_profile(engine_, &r), "mixed");

  std::string bad = conf("Strict=no\nDefaultProfile=bogus\n");
  topo_engine_t* other = nullptr;
  EXPECT_EQ(topo_engine_open(bad.c_str(), &other, msg_, sizeof msg_), TOPO_ENGINE_CONFIG);
  EXPECT_EQ(other, nullptr);
  EXPECT_NE(std::string(msg_).find(bad + ":2"), std::string::npos) << msg_;
  EXPECT_NE(std::string(msg_).find("allreduce, alltoall, mixed or none"), std::string::npos) << msg_;
  // reconfigure with a bad file keeps the running config
  EXPECT_EQ(topo_engine_reconfigure(engine_, bad.c_str(), msg_, sizeof msg_), TOPO_ENGINE_CONFIG);
  EXPECT_TRUE(topo_engine_strict(engine_));
  conf("Frobnicate=1\n");
  EXPECT_EQ(topo_engine_reconfigure(engine_, path("topo_aware.conf").c_str(), msg_, sizeof msg_), TOPO_ENGINE_CONFIG);
  EXPECT_NE(std::string(msg_).find(":1"), std::string::npos) << msg_;
  EXPECT_NE(std::string(msg_).find("unknown key 'Frobnicate'"), std::string::npos) << msg_;
  conf("Strict=no\n");
  EXPECT_EQ(topo_engine_reconfigure(engine_, path("topo_aware.conf").c_str(), msg_, sizeof msg_), TOPO_ENGINE_OK)
      << msg_;
  EXPECT_FALSE(topo_engine_strict(engine_));
}

TEST_F(EngineTest, RanksBestFitLeafFirstAndAvoidsTheDegradedLeaf) {
  save(kFabric);
  open(conf("DbPath=" + path("fabric.db") + "\n"));
  // leaf01 (gpu001-008): 5 free; leaf02 (degraded uplink): all 8 free;
  // leaf03: 4 free; leaf04: 6 free.  A 4-host job: best fit is leaf03.
  std::vector<int> free(32, 0);
  for (int i = 0; i < 5; ++i) free[i] = 8;
  for (int i = 8; i < 16; ++i) free[i] = 8;
  for (int i = 16; i < 20; ++i) free[i] = 8;
  for (int i = 24; i < 30; ++i) free[i] = 8;
  topo_engine_ranking r{};
  ASSERT_EQ(rank(4, free, &r), TOPO_ENGINE_OK) << msg_;
  // The best only, first: the others are ranked when Slurm refuses it.
  ASSERT_EQ(r.count, 1u);
  EXPECT_TRUE(r.more);
  EXPECT_EQ(hosts(r.candidates[0]), (std::vector<std::string>{"gpu017", "gpu018", "gpu019", "gpu020"}));
  topo_engine_ranking_free(&r);
  ASSERT_EQ(rank(4, free, &r, 1, true), TOPO_ENGINE_OK) << msg_;
  ASSERT_GE(r.count, 2u);
  EXPECT_FALSE(r.more);
  EXPECT_EQ(hosts(r.candidates[0]), (std::vector<std::string>{"gpu017", "gpu018", "gpu019", "gpu020"}));
  topo_engine_ranking_free(&r);
  // 6 hosts: leaf04 holds exactly 6, leaf02 holds 8 but has the degraded uplink.
  ASSERT_EQ(rank(6, free, &r), TOPO_ENGINE_OK) << msg_;
  for (const std::string& h : hosts(r.candidates[0])) EXPECT_GE(h, "gpu025") << h;
  topo_engine_ranking_free(&r);
  // 8 hosts: only leaf02 holds 8.  The job's ring stays inside the leaf and
  // never crosses its degraded uplink, so one leaf beats two healthy ones.
  ASSERT_EQ(rank(8, free, &r), TOPO_ENGINE_OK) << msg_;
  EXPECT_EQ(hosts(r.candidates[0]).front(), "gpu009");
  EXPECT_EQ(hosts(r.candidates[0]).back(), "gpu016");
  topo_engine_ranking_free(&r);
  // 11 hosts: two leaves either way; leaf01 + leaf04 (5 + 6) keep off the
  // degraded uplink, which leaf02 + anything would cross.
  ASSERT_EQ(rank(11, free, &r), TOPO_ENGINE_OK) << msg_;
  for (const std::string& h : hosts(r.candidates[0])) EXPECT_TRUE(h < "gpu009" || h > "gpu024") << h;
  topo_engine_ranking_free(&r);
}

TEST_F(EngineTest, RecordsAndReturnsTheRingOrder) {
  save("leafspine:leaves=4,hosts_per_leaf=8,spines=2,naming=interleaved");
  open(conf("DbPath=" + path("fabric.db") + "\n"));
  std::vector<int> free(32, 8);
  topo_engine_ranking r{};
  ASSERT_EQ(rank(16, free, &r, 77), TOPO_ENGINE_OK) << msg_;
  std::vector<std::string> alloc = hosts(r.candidates[0]);
  // Slurm gives the allocation in node order; the record keeps the ring.
  topo_engine_job job{};
  job.job_id = 77;
  job.nodes = 16;
  std::string hcas;
  EXPECT_EQ(record_candidate(job, &r, 0, alloc, &hcas), fmt::format("{}", fmt::join(alloc, ",")));
  EXPECT_EQ(hcas, "(none)");  // no hwloc data in this snapshot
  // Interleaved naming: host i on leaf (i-1) mod 4.  Leaf changes along the
  // ring, counting the closing edge, are exactly 2 for two leaves.
  std::vector<int> leaf;
  for (const std::string& h : alloc) leaf.push_back((std::stoi(h.substr(3)) - 1) % 4);
  int crossings = 0;
  for (size_t i = 0; i < leaf.size(); ++i) crossings += leaf[i] != leaf[(i + 1) % leaf.size()];
  EXPECT_EQ(crossings, 2);
  topo_engine_ranking_free(&r);
  flush();
  auto stored = topo::PlacementStore(path("fabric.db")).latest_for_job(77);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->ring_order, alloc);
  EXPECT_FALSE(stored->fallback);
  EXPECT_GT(stored->estimate_s, 0);
  EXPECT_EQ(stored->snapshot_id, std::optional<int64_t>(1));

  // A fallback: node order in, ring order out, recorded with the reason.
  std::vector<size_t> mixed = indices({"gpu001", "gpu002", "gpu003", "gpu004", "gpu005", "gpu006", "nothere"});
  char *ring = nullptr, *hca = nullptr;
  ASSERT_EQ(topo_engine_record(engine_, &job, nullptr, -1, mixed.data(), mixed.size(), "no candidate fit", &ring, &hca,
                               msg_, sizeof msg_),
            TOPO_ENGINE_OK)
      << msg_;
  EXPECT_STREQ(ring, "gpu001,gpu005,gpu002,gpu006,gpu003,gpu004,nothere");
  std::free(ring);
  flush();
  stored = topo::PlacementStore(path("fabric.db")).latest_for_job(77);
  EXPECT_TRUE(stored->fallback);
  EXPECT_EQ(stored->fallback_why, "no candidate fit");
}

// Ranking leaves the reasons unworded; the record words the chosen one's
// as the search would have, on the tree it ran on (kept while a newer
// snapshot is loaded between the evaluation and the job's start).
TEST_F(EngineTest, RecordsTheSearchsReasonsForTheChosenPlacement) {
  save(kFabric);
  open(conf("DbPath=" + path("fabric.db") + "\n"));
  // leaf01: 5 free, leaf02 (degraded uplink): 8, leaf03: 4, leaf04: 6.
  std::vector<int> free(32, 0);
  for (int i : {0, 1, 2, 3, 4, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 24, 25, 26, 27, 28, 29}) free[i] = 8;
  topo_engine_ranking r{};
  ASSERT_EQ(rank(11, free, &r, 5), TOPO_ENGINE_OK) << msg_;
  std::vector<std::string> alloc = hosts(r.candidates[0]);
  save("leafspine:leaves=2,hosts_per_leaf=16,spines=1");
  ASSERT_EQ(topo_engine_prepare(engine_, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  topo_engine_job job{};
  job.job_id = 5;
  job.nodes = 11;
  job.gpus_per_node = 8;
  record_candidate(job, &r, 0, alloc);
  topo_engine_ranking_free(&r);
  flush();
  auto stored = topo::PlacementStore(path("fabric.db")).latest_for_job(5);
  ASSERT_TRUE(stored);

  topo::Fabric fabric = topo::make_synthetic(kFabric);
  topo::SwitchTree tree(fabric);
  topo::FreeMap search_free;
  search_free.free_gpus.assign(fabric.node_count(), 0);
  for (size_t i = 0; i < free.size(); ++i) search_free.free_gpus[*fabric.find_host(names_[i])] = free[i];
  topo::PlacementRequest request;
  request.hosts = 11;
  request.gpus_per_host = 8;
  topo::Placement p = topo::place(tree, search_free, request);
  EXPECT_EQ(stored->ring_order, alloc);
  EXPECT_EQ(stored->reasons, p.reasons);
  ASSERT_GE(stored->reasons.size(), 3u);
  EXPECT_EQ(stored->reasons[0], "2 leaves (leaf01, leaf04) in 1 pod: no single leaf has 11 free hosts");
  EXPECT_EQ(stored->reasons[2].rfind("leaf02 skipped: uplink leaf02:9 degraded", 0), 0u) << stored->reasons[2];
}

TEST_F(EngineTest, NcclIbHcaFollowsTheGpusClosestHcasWhenAllHostsAgree) {
  topo::Fabric f = topo::make_synthetic("railopt:hosts=8,rails=4,spines=2");
  for (const char* name : {"gpu001", "gpu002", "gpu003"}) {
    std::vector<topo::Gpu> gpus;
    for (int i = 0; i < 8; ++i) {
      topo::Gpu g;
      g.index = i;
      g.name = "cuda" + std::to_string(i);
      g.closest_hca = "mlx5_" + std::to_string(3 - i / 2);
      g.rail = 3 - i / 2;
      gpus.push_back(g);
    }
    if (std::string(name) == "gpu003") gpus.resize(2);  // only rail 3's HCA
    f.set_gpus(*f.find_host(name), gpus);
  }
  topo::SnapshotStore(path("fabric.db")).save(f);
  open(conf("DbPath=" + path("fabric.db") + "\n"));
  auto record = [&](const std::vector<std::string>& hosts) {
    std::string hca;
    record_fallback(9, hosts, &hca);
    return hca;
  };
  EXPECT_EQ(record({"gpu001", "gpu002"}), "mlx5_0,mlx5_1,mlx5_2,mlx5_3");
  EXPECT_EQ(record({"gpu001", "gpu003"}), "(none)");  // they differ
  EXPECT_EQ(record({"gpu001", "gpu004"}), "(none)");  // gpu004 has no hwloc data
}

// What the engine said about the snapshots it loaded.
std::vector<std::string> snapshot_lines;
void keep_snapshot_line(const char* line) { snapshot_lines.emplace_back(line); }

// The job's NCCL hints on `nodes`, "" for none.
std::string hints_of(topo_engine_t* engine, const std::vector<size_t>& nodes) {
  char msg[512], *hints = nullptr;
  EXPECT_EQ(topo_engine_nccl_hints(engine, nodes.data(), nodes.size(), &hints, msg, sizeof msg), TOPO_ENGINE_OK) << msg;
  std::string out = hints ? hints : "";
  std::free(hints);
  return out;
}

TEST_F(EngineTest, RoceHintsComeFromTheSiteAndTheQpHintFromAnEcmpFabric) {
  topo::Fabric f = topo::make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  f.set_routing(topo::ecmp_routing(1));
  topo::SnapshotStore(path("fabric.db")).save(f);
  open(conf("DbPath=" + path("fabric.db") +
            "\nRoceGidIndex=3\nRoceTrafficClass=106\nSocketIfname=^docker,lo\nRoceHca=^mlx5_bond_0\n"));
  ASSERT_EQ(topo_engine_prepare(engine_, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  const std::string site =
      "NCCL_IB_GID_INDEX=3\nNCCL_IB_TC=106\nNCCL_SOCKET_IFNAME=^docker,lo\nNCCL_IB_HCA=^mlx5_bond_0";
  // One leaf: nothing hashed onto an uplink, no QP hint.
  EXPECT_EQ(hints_of(engine_, indices({"gpu001", "gpu002"})), site);
  // Across leaves: the default 4 QPs per connection.
  EXPECT_EQ(hints_of(engine_, indices({"gpu001", "gpu009"})), site + "\nNCCL_IB_QPS_PER_CONNECTION=4");
  // A node the fabric does not know does not hide the crossing.
  EXPECT_EQ(hints_of(engine_, indices({"gpu001", "gpu009", "nothere"})), site + "\nNCCL_IB_QPS_PER_CONNECTION=4");

  conf("DbPath=" + path("fabric.db") + "\nEcmpQpsPerConnection=0\n");
  ASSERT_EQ(topo_engine_reconfigure(engine_, path("topo_aware.conf").c_str(), msg_, sizeof msg_), TOPO_ENGINE_OK)
      << msg_;
  EXPECT_EQ(hints_of(engine_, indices({"gpu001", "gpu009"})), "");  // nothing set: NCCL picks

  // A fabric whose jobs already run 8 QPs is not lowered to 4.
  f.set_routing(topo::ecmp_routing(8));
  topo::SnapshotStore(path("fabric.db")).save(f);
  conf("DbPath=" + path("fabric.db") + "\n");
  ASSERT_EQ(topo_engine_reconfigure(engine_, path("topo_aware.conf").c_str(), msg_, sizeof msg_), TOPO_ENGINE_OK)
      << msg_;
  ASSERT_EQ(topo_engine_prepare(engine_, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  EXPECT_EQ(hints_of(engine_, indices({"gpu001", "gpu009"})), "");
}

TEST_F(EngineTest, NoQpHintOffEcmp) {
  save("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");  // adaptive
  open(conf("DbPath=" + path("fabric.db") + "\nEcmpQpsPerConnection=8\n"));
  ASSERT_EQ(topo_engine_prepare(engine_, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  EXPECT_EQ(hints_of(engine_, indices({"gpu001", "gpu009"})), "");
}

TEST_F(EngineTest, BadRoceKeysNameFileLineAndField) {
  struct Case {
    const char* line;
    const char* says;
  } cases[] = {
      {"RoceGidIndex=256", "RoceGidIndex '256': expected a whole number from 0 to 255"},
      {"RoceGidIndex=-1", "RoceGidIndex '-1'"},
      {"RoceTrafficClass=1.5", "RoceTrafficClass '1.5'"},
      {"SocketIfname=eth0 eth1", "SocketIfname 'eth0 eth1': expected NCCL's name list"},
      {"RoceHca=mlx5_0\x01", "RoceHca"},
      {"EcmpQpsPerConnection=129", "EcmpQpsPerConnection '129': expected a whole number from 0 (never set) to 128"},
  };
  for (const Case& c : cases) {
    std::string bad = conf(std::string("# RoCE\nRoceGidIndex=3\n") + c.line + "\n");
    topo_engine_t* other = nullptr;
    EXPECT_EQ(topo_engine_open(bad.c_str(), &other, msg_, sizeof msg_), TOPO_ENGINE_CONFIG) << c.line;
    EXPECT_NE(std::string(msg_).find(bad + ":3"), std::string::npos) << msg_;
    EXPECT_NE(std::string(msg_).find(c.says), std::string::npos) << msg_;
    topo_engine_close(other);
  }
}

TEST_F(EngineTest, PicksUpANewSnapshotWithoutReopening) {
  save("leafspine:leaves=2,hosts_per_leaf=8,spines=1");
  open(conf("DbPath=" + path("fabric.db") + "\n"));
  snapshot_lines.clear();
  topo_engine_on_snapshot(engine_, keep_snapshot_line);
  std::vector<int> free(32, 8);
  topo_engine_ranking r{};
  ASSERT_EQ(rank(12, free, &r), TOPO_ENGINE_OK) << msg_;
  for (const std::string& h : hosts(r.candidates[0])) EXPECT_LE(h, "gpu016");
  topo_engine_ranking_free(&r);
  EXPECT_EQ(rank(20, free, &r), TOPO_ENGINE_NO_PLACEMENT);
  EXPECT_NE(std::string(msg_).find("16 hosts"), std::string::npos) << msg_;
  save(kFabric);
  // Rank calls look for a new snapshot once a second: the next one after
  // that sees it.
  EXPECT_EQ(rank(20, free, &r), TOPO_ENGINE_NO_PLACEMENT);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  ASSERT_EQ(rank(20, free, &r), TOPO_ENGINE_OK) << msg_;
  EXPECT_EQ(r.candidates[0].count, 20u);
  topo_engine_ranking_free(&r);
  // Each snapshot loaded is said once: the first, then the newer one.
  ASSERT_EQ(snapshot_lines.size(), 2u);
  EXPECT_NE(snapshot_lines[0].find("fabric snapshot 1 of "), std::string::npos) << snapshot_lines[0];
  EXPECT_NE(snapshot_lines[1].find("fabric snapshot 2 of "), std::string::npos) << snapshot_lines[1];
  EXPECT_NE(snapshot_lines[1].find(": 32 hosts"), std::string::npos) << snapshot_lines[1];
  // prepare (start-up, reconfigure) looks at once.
  save("leafspine:leaves=2,hosts_per_leaf=8,spines=1");
  ASSERT_EQ(topo_engine_prepare(engine_, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  EXPECT_EQ(rank(20, free, &r), TOPO_ENGINE_NO_PLACEMENT);
  topo_engine_on_snapshot(engine_, nullptr);
}

TEST_F(EngineTest, DatabaseProblemsAreAStatusAndAMessage) {
  open(conf("DbPath=" + path("fabric.db") + "\n"));
  std::vector<int> free(32, 8);
  topo_engine_ranking r{};
  EXPECT_EQ(rank(2, free, &r), TOPO_ENGINE_DATABASE);
  EXPECT_NE(std::string(msg_).find("no such database"), std::string::npos) << msg_;
  EXPECT_FALSE(std::filesystem::exists(path("fabric.db")));  // not created behind the admin's back
  {
    topo::SnapshotStore created(path("fabric.db"));  // an empty database: no snapshot yet
  }
  EXPECT_EQ(rank(2, free, &r), TOPO_ENGINE_NO_FABRIC);
  EXPECT_NE(std::string(msg_).find("no fabric snapshot"), std::string::npos) << msg_;
  std::filesystem::remove(path("fabric.db"));
  std::filesystem::remove(path("fabric.db-wal"));
  std::filesystem::remove(path("fabric.db-shm"));
  std::ofstream(path("fabric.db")) << std::string(8192, 'x');
  EXPECT_EQ(rank(2, free, &r), TOPO_ENGINE_DATABASE);
  EXPECT_NE(std::string(msg_).find(path("fabric.db")), std::string::npos) << msg_;
  EXPECT_EQ(r.count, 0u);
  // Fixed by the admin: the next call works.
  std::filesystem::remove(path("fabric.db"));
  save(kFabric);
  EXPECT_EQ(rank(2, free, &r), TOPO_ENGINE_OK) << msg_;
  topo_engine_ranking_free(&r);
  // Damaged in place (same file, the engine's connection still open): noticed.
  std::filesystem::remove(path("fabric.db-wal"));
  std::filesystem::remove(path("fabric.db-shm"));
  { std::ofstream(path("fabric.db"), std::ios::trunc) << std::string(16384, 'y'); }
  EXPECT_EQ(topo_engine_prepare(engine_, msg_, sizeof msg_), TOPO_ENGINE_DATABASE) << msg_;
  EXPECT_EQ(rank(2, free, &r), TOPO_ENGINE_DATABASE) << msg_;
  std::filesystem::remove(path("fabric.db"));
  save(kFabric);
  // Nodes the fabric does not know.
  set_nodes({"cpu1", "cpu2"});
  std::vector<int> two = {8, 8};
  topo_engine_job job{};
  job.job_id = 3;
  job.nodes = 1;
  EXPECT_EQ(topo_engine_rank(engine_, &job, two.data(), 2, &r, msg_, sizeof msg_), TOPO_ENGINE_NO_FABRIC);
  EXPECT_NE(std::string(msg_).find("'cpu1'"), std::string::npos) << msg_;
  // More nodes than the table holds: the caller forgot set_nodes.
  std::vector<int> three = {8, 8, 8};
  EXPECT_EQ(topo_engine_rank(engine_, &job, three.data(), 3, &r, msg_, sizeof msg_), TOPO_ENGINE_INVALID);
  EXPECT_NE(std::string(msg_).find("topo_engine_set_nodes"), std::string::npos) << msg_;
}

TEST_F(EngineTest, HostPatternMapsNodeNames) {
  save(kFabric);
  open(conf("DbPath=" + path("fabric.db") + "\nHostPattern=n-(gpu[0-9]+)\n"));
  // Slurm's order need not be the fabric's: indices come back as given.
  set_nodes({"login", "n-gpu003", "n-gpu001", "n-gpu002"});
  std::vector<int> free = {-1, 8, 8, 0};
  topo_engine_job job{};
  job.job_id = 4;
  job.nodes = 2;
  job.gpus_per_node = 8;
  topo_engine_ranking r{};
  ASSERT_EQ(topo_engine_rank(engine_, &job, free.data(), free.size(), &r, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  ASSERT_EQ(r.candidates[0].count, 2u);
  EXPECT_EQ(r.candidates[0].nodes[0], 2u);  // n-gpu001 first in ring order
  EXPECT_EQ(r.candidates[0].nodes[1], 1u);
  topo_engine_ranking_free(&r);
  // A new table (reconfigure) is mapped afresh.
  set_nodes({"n-gpu009", "n-gpu010"});
  free = {8, 8};
  ASSERT_EQ(topo_engine_rank(engine_, &job, free.data(), free.size(), &r, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  EXPECT_EQ(r.candidates[0].count, 2u);
  topo_engine_ranking_free(&r);
  topo_engine_t* other = nullptr;
  EXPECT_EQ(topo_engine_open(conf("HostPattern=gpu(\n").c_str(), &other, msg_, sizeof msg_), TOPO_ENGINE_CONFIG);
  EXPECT_NE(std::string(msg_).find(":1"), std::string::npos) << msg_;
}

}  // namespace

namespace {

// slurmctld prepares the engine at start-up; a database not discovered
// yet is reported, not fatal, and the first snapshot saved is then found.
TEST_F(EngineTest, PrepareLoadsTheSnapshotOrSaysThereIsNone) {
  open(conf("DbPath=" + path("fabric.db") + "\n"));
  EXPECT_NE(topo_engine_prepare(engine_, msg_, sizeof msg_), TOPO_ENGINE_OK);
  EXPECT_NE(std::string(msg_).find("no such database"), std::string::npos) << msg_;
  EXPECT_FALSE(std::filesystem::exists(path("fabric.db"))) << "preparing creates no database";
  save(kFabric);
  EXPECT_EQ(topo_engine_prepare(engine_, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  topo_engine_ranking r{};
  std::vector<int> free(32, 8);
  ASSERT_EQ(rank(4, free, &r), TOPO_ENGINE_OK) << msg_;
  topo_engine_ranking_free(&r);
}

}  // namespace

namespace {

// record() hands the record to the writer, which journals it at once and
// stores it later; a process killed once it is journaled loses nothing:
// the next engine replays it into the database, once. (Killed before, the
// shims rebuild it from the job's saved ring: topo_engine_recover.)
TEST_F(EngineTest, RecordsSurviveAKillAndAreReplayedOnce) {
  save(kFabric);
  std::string conf_path = conf("DbPath=" + path("fabric.db") + "\n");
  // Hold the write lock so the child's writer stores nothing before it dies.
  topo::Connection blocker(path("fabric.db"), std::chrono::milliseconds(100));
  blocker.exec("BEGIN IMMEDIATE", "hold the write lock");
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    topo_engine_t* e = nullptr;
    char m[512];
    if (topo_engine_open(conf_path.c_str(), &e, m, sizeof m) != TOPO_ENGINE_OK) ::_exit(2);
    std::vector<const char*> ptrs;
    for (const std::string& n : names_) ptrs.push_back(n.c_str());
    if (topo_engine_set_nodes(e, ptrs.data(), ptrs.size(), m, sizeof m) != TOPO_ENGINE_OK) ::_exit(3);
    if (topo_engine_prepare(e, m, sizeof m) != TOPO_ENGINE_OK) ::_exit(4);
    for (uint32_t job = 1; job <= 20; ++job) {
      topo_engine_job j{};
      j.job_id = job;
      j.nodes = 2;
      size_t alloc[2] = {2 * job % 32, (2 * job + 1) % 32};
      char *ring = nullptr, *hca = nullptr;
      topo_engine_record(e, &j, nullptr, -1, alloc, 2, "test", &ring, &hca, m, sizeof m);
      std::free(ring);
      std::free(hca);
    }
    // Returns once the writer tried to store them (the lock refuses it):
    // by then they are journaled.
    if (topo_engine_flush(e, m, sizeof m) != TOPO_ENGINE_DATABASE) ::_exit(5);
    ::raise(SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  blocker.exec("ROLLBACK", "release the write lock");
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  auto left = topo::PlacementJournal(path("fabric.db.journal")).read();
  EXPECT_EQ(left.records.size(), 20u);

  // Half of them were stored before the crash (the writer died between its
  // commit and emptying the journal): those are not added twice.
  {
    topo::PlacementStore store(path("fabric.db"));
    std::vector<topo::PlacementRecord> first(left.records.begin(), left.records.begin() + 10);
    EXPECT_EQ(store.record_all(first, false), 10u);
  }
  // A line torn by a machine crash is skipped.
  { std::ofstream(path("fabric.db.journal-1"), std::ios::app) << "{\"job_id\": 99, \"plac"; }

  open(conf_path);
  ASSERT_EQ(topo_engine_prepare(engine_, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  EXPECT_NE(std::string(msg_).find("10 placement records replayed into the database, 10 were there already, 1 "
                                   "unreadable lines skipped"),
            std::string::npos)
      << msg_;
  topo::PlacementStore store(path("fabric.db"));
  for (uint32_t job = 1; job <= 20; ++job) {
    auto history = store.history(job);
    ASSERT_EQ(history.size(), 1u) << "job " << job;
    EXPECT_EQ(history[0].hosts.size(), 2u);
    EXPECT_TRUE(history[0].fallback);
  }
  EXPECT_TRUE(topo::PlacementJournal(path("fabric.db.journal")).read().records.empty());
  // New records go through and the journal is emptied behind them.
  record_fallback(21, {"gpu001", "gpu002"});
  flush();
  EXPECT_EQ(store.history(21).size(), 1u);
  EXPECT_EQ(
      std::filesystem::file_size(path("fabric.db.journal-0")) + std::filesystem::file_size(path("fabric.db.journal-1")),
      0u);
}

// A database that refuses writes keeps the records in the journal; they
// are stored once it takes them again.
TEST_F(EngineTest, ALockedDatabaseDelaysRecordsWithoutLosingThem) {
  save(kFabric);
  open(conf("DbPath=" + path("fabric.db") + "\n"));
  ASSERT_EQ(topo_engine_prepare(engine_, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  {
    topo::Connection blocker(path("fabric.db"), std::chrono::milliseconds(100));
    blocker.exec("BEGIN IMMEDIATE", "hold the write lock");
    record_fallback(5, {"gpu001"});
    EXPECT_EQ(topo_engine_flush(engine_, msg_, sizeof msg_), TOPO_ENGINE_DATABASE);
    EXPECT_NE(std::string(msg_).find("locked"), std::string::npos) << msg_;
    EXPECT_EQ(topo::PlacementJournal(path("fabric.db.journal")).read().records.size(), 1u);
    blocker.exec("ROLLBACK", "release the write lock");
  }
  flush();
  EXPECT_EQ(topo::PlacementStore(path("fabric.db")).history(5).size(), 1u);
}

TEST(PlacementJournal, LinesRoundTrip) {
  topo::PlacementRecord r;
  r.job_id = 12;
  r.placed_at = "2026-12-03T04:05:06Z";
  r.snapshot_id = 3;
  r.hosts = {"a", "b"};
  r.ring_order = {"b", "a"};
  r.profile = "alltoall";
  r.estimate_s = 0.25;
  r.ideal_s = 0.125;
  r.reasons = {"fits in one leaf, \"leaf01\"", "tab\there"};
  r.fallback_why = "";
  r.deferred_why = "deferred: its best placement now is estimated at 1.25x its ideal";
  auto back = topo::parse_journal_line(topo::journal_line(r, 7));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->seq, 7u);
  EXPECT_EQ(back->record.job_id, 12u);
  EXPECT_EQ(back->record.deferred_why, r.deferred_why);
  EXPECT_EQ(back->record.snapshot_id, std::optional<int64_t>(3));
  EXPECT_EQ(back->record.ring_order, r.ring_order);
  EXPECT_EQ(back->record.reasons, r.reasons);
  EXPECT_EQ(back->record.estimate_s, 0.25);
  r.snapshot_id.reset();
  EXPECT_FALSE(topo::parse_journal_line(topo::journal_line(r, 8))->record.snapshot_id);
  // A line an older build journaled before a crash has no deferral reason.
  nlohmann::json older = nlohmann::json::parse(topo::journal_line(r, 9));
  older.erase("deferred_why");
  auto before = topo::parse_journal_line(older.dump());
  ASSERT_TRUE(before);
  EXPECT_EQ(before->record.deferred_why, "");
  EXPECT_FALSE(topo::parse_journal_line("{\"job_id\": 1}"));
  EXPECT_FALSE(topo::parse_journal_line("not json"));
}

}  // namespace

namespace {

// submit_later: the caller hands the record over without any I/O; the
// writer's thread fills in the rest, journals and stores it, in order
// with records submitted as they are.
TEST(PlacementWriter, CompletesJournalsAndStoresLaterRecords) {
  auto dir = std::filesystem::temp_directory_path() / ("writer-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string db = (dir / "p.db").string();
  {
    topo::PlacementWriter writer(db, db + ".journal");
    topo::PlacementRecord r;
    r.hosts = {"a", "b"};
    r.ring_order = {"b", "a"};
    r.job_id = 7;
    writer.submit_later(r, [](topo::PlacementRecord& later) { later.reasons = {"worded on the writer"}; });
    r.job_id = 8;
    writer.submit(r);
    EXPECT_EQ(writer.flush(), std::nullopt);
    topo::PlacementStore store(db);
    auto history = store.history(7);
    ASSERT_EQ(history.size(), 1u);
    EXPECT_EQ(history[0].reasons, std::vector<std::string>{"worded on the writer"});
    EXPECT_FALSE(history[0].placed_at.empty());  // the time of the hand-over
    EXPECT_EQ(store.history(8).size(), 1u);
    EXPECT_TRUE(topo::PlacementJournal(db + ".journal").read().records.empty());
  }
  std::filesystem::remove_all(dir);
}

// Appends go to one side while the writer syncs and stores the other; a
// reader after a crash gets both sides' records in the order appended.
TEST(PlacementJournal, SidesAlternateAndReadKeepsTheOrder) {
  auto dir = std::filesystem::temp_directory_path() / ("journal-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string base = (dir / "j").string();
  {
    topo::PlacementJournal j(base);
    topo::PlacementRecord r;
    r.hosts = {"a"};
    r.ring_order = {"a"};
    r.job_id = 1;
    j.append(r);
    EXPECT_EQ(j.seal(), 0);
    r.job_id = 2;
    j.append(r);  // side 1
    EXPECT_EQ(j.seal(), 1);
    r.job_id = 3;
    j.append(r);  // side 0 again, after job 1
    std::vector<uint32_t> order;
    for (const auto& rec : j.read().records) order.push_back(rec.job_id);
    EXPECT_EQ(order, (std::vector<uint32_t>{1, 2, 3}));
    j.sync(1);
    j.clear(1);
    order.clear();
    for (const auto& rec : j.read().records) order.push_back(rec.job_id);
    EXPECT_EQ(order, (std::vector<uint32_t>{1, 3}));
  }
  std::filesystem::remove_all(dir);
}

}  // namespace

namespace {

// A running job's traffic is part of the fabric a new job is judged on:
// with a two-leaf job running across leaf01 and leaf02, a new two-leaf job
// keeps off their uplinks; once the first ends, those leaves are as good as
// any again.
TEST_F(EngineTest, RunningJobsTrafficSteersNewJobsUntilTheyEnd) {
  save("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  open(conf("DbPath=" + path("fabric.db") + "\n"));
  const std::vector<int> free = four_free_per_leaf();
  auto best = [&] { return best_of_eight(free); };
  std::vector<std::string> alone = best();
  ASSERT_EQ(alone.size(), 8u);
  // Job 1 runs on the two leaves the idle choice took (gpu001-004 of one, 4
  // of the other's busy hosts), a ring across their uplinks.
  int a = 0, b = 0;
  std::vector<std::string> job1 = busy_half_of_leaves(alone, &a, &b);
  ASSERT_FALSE(job1.empty());
  record_fallback(1, job1);
  std::vector<std::string> beside = best();
  for (const std::string& h : beside) {
    int leaf = (std::stoi(h.substr(3)) - 1) / 8;
    EXPECT_TRUE(leaf != a && leaf != b) << h << " is on a leaf whose uplinks job 1 loads";
  }
  ASSERT_EQ(topo_engine_job_ended(engine_, 1, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  EXPECT_EQ(best(), alone);

  // slurmctld restarted: the running set comes back from the records.
  record_fallback(1, job1);
  flush();
  topo_engine_close(engine_);
  engine_ = nullptr;
  open(conf("DbPath=" + path("fabric.db") + "\n"));
  EXPECT_EQ(best(), alone);  // nothing running yet
  topo_engine_job running{};
  running.job_id = 1;
  running.nodes = 8;
  running.gpus_per_node = 8;
  ASSERT_EQ(topo_engine_set_running(engine_, &running, 1, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  EXPECT_EQ(best(), beside);
  ASSERT_EQ(topo_engine_set_running(engine_, nullptr, 0, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  EXPECT_EQ(best(), alone);
}

// 24.05+: the shim hands a job's ring over as the job starts, and its
// writer records it a moment later. The next evaluation sees the ring's
// traffic at once; the record on the same ring then changes nothing (the
// answers given since stay); the job's end takes it away.
TEST_F(EngineTest, AStartedJobsTrafficCountsBeforeItsRecord) {
  save("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  open(conf("DbPath=" + path("fabric.db") + "\n"));
  const std::vector<int> free = four_free_per_leaf();
  std::vector<std::string> alone = best_of_eight(free);
  int a = 0, b = 0;
  std::vector<std::string> job1 = busy_half_of_leaves(alone, &a, &b);
  ASSERT_FALSE(job1.empty());
  topo_engine_job started{};
  started.job_id = 1;
  started.nodes = static_cast<uint32_t>(job1.size());
  std::vector<size_t> alloc = indices(job1);
  ASSERT_EQ(topo_engine_job_started(engine_, &started, nullptr, -1, alloc.data(), alloc.size(), msg_, sizeof msg_),
            TOPO_ENGINE_OK)
      << msg_;
  std::vector<std::string> beside = best_of_eight(free);
  for (const std::string& h : beside) {
    int leaf = (std::stoi(h.substr(3)) - 1) / 8;
    EXPECT_TRUE(leaf != a && leaf != b) << h << " is on a leaf whose uplinks the started job loads";
  }
  record_fallback(1, job1);
  topo_engine_ranking after_record{};
  ASSERT_EQ(rank(8, free, &after_record, 2), TOPO_ENGINE_OK) << msg_;
  EXPECT_TRUE(after_record.answered_before) << "the record added no traffic the hand-over had not";
  std::vector<std::string> got = hosts(after_record.candidates[0]);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, beside);
  topo_engine_ranking_free(&after_record);
  ASSERT_EQ(topo_engine_job_ended(engine_, 1, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  EXPECT_EQ(best_of_eight(free), alone);
}

// DeferAbove=: a job whose only hosts would share a degraded leaf's
// uplinks with a running ring waits, until it has been deferred for its
// share of its time limit (counted from the first evaluation that deferred
// it, not from its submission) or the ring has ended; a job without a time
// limit (or an evaluation that cannot start it) never does.
TEST_F(EngineTest, DeferAboveHoldsBackAJobThatWouldRunSlowBesideTheRunningOnes) {
  save(kFabric);
  open(conf("DbPath=" + path("fabric.db") + "\nDeferAbove=1.10\nDeferShare=0.5\n"));
  // Job 1 on leaf01 and leaf02 but gpu008 and gpu016: its ring crosses
  // their uplinks, leaf02's with the 1x cable.
  record_fallback(1, {"gpu001", "gpu002", "gpu003", "gpu004", "gpu005", "gpu006", "gpu007", "gpu009", "gpu010",
                      "gpu011", "gpu012", "gpu013", "gpu014", "gpu015"});
  std::vector<int> free(32, -1);
  free[7] = free[15] = 8;  // gpu008 and gpu016: the job's only choice
  auto rank_at = [&](uint32_t job_id, double now_s, double time_limit_s, topo_engine_ranking* r) {
    topo_engine_job job{};
    job.job_id = job_id;
    job.nodes = 2;
    job.gpus_per_node = 8;
    job.request.topo_aware = true;
    job.now_s = now_s;
    job.time_limit_s = time_limit_s;
    return topo_engine_rank(engine_, &job, free.data(), free.size(), r, msg_, sizeof msg_);
  };
  EXPECT_TRUE(topo_engine_defers(engine_));
  topo_engine_ranking r{};
  // Job 2 first asked at 1e6 s (whenever it was submitted).
  ASSERT_EQ(rank_at(2, 1e6, 3600, &r), TOPO_ENGINE_DEFERRED) << msg_;
  EXPECT_EQ(r.count, 0u);
  EXPECT_NE(std::string(msg_).find("job 2: deferred: its best placement now is estimated at"), std::string::npos)
      << msg_;
  EXPECT_NE(std::string(msg_).find("DeferAbove=1.1 times its best on the idle fabric (1.00x)"), std::string::npos)
      << msg_;
  EXPECT_NE(std::string(msg_).find("deferred for 0 s of 1800"), std::string::npos) << msg_;
  ASSERT_EQ(rank_at(3, 1e6 + 1000, 3600, &r), TOPO_ENGINE_DEFERRED) << msg_;  // its share starts now
  EXPECT_NE(std::string(msg_).find("job 3: deferred: "), std::string::npos) << msg_;
  ASSERT_EQ(rank_at(2, 1e6 + 1799, 3600, &r), TOPO_ENGINE_DEFERRED) << msg_;
  EXPECT_NE(std::string(msg_).find("deferred for 1799 s of 1800"), std::string::npos) << msg_;
  ASSERT_EQ(rank_at(2, 1e6 + 1800, 3600, &r), TOPO_ENGINE_OK) << msg_;  // deferred for its share
  EXPECT_GT(r.candidates[0].estimate_s, 1.10 * r.candidates[0].ideal_s);
  // It starts; its record keeps the last reason Slurm was given.
  topo_engine_job two{};
  two.job_id = 2;
  two.nodes = 2;
  record_candidate(two, &r, 0, hosts(r.candidates[0]));
  topo_engine_ranking_free(&r);
  // It ends: what follows sees job 1's ring alone, as before it started.
  ASSERT_EQ(topo_engine_job_ended(engine_, 2, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  ASSERT_EQ(rank_at(3, 1e6 + 1800, 3600, &r), TOPO_ENGINE_DEFERRED) << msg_;  // 800 s of its 1800
  EXPECT_NE(std::string(msg_).find("deferred for 800 s of 1800"), std::string::npos) << msg_;
  ASSERT_EQ(rank_at(4, 1e6, 0, &r), TOPO_ENGINE_OK) << msg_;  // no time limit
  topo_engine_job four{};
  four.job_id = 4;
  four.nodes = 2;
  record_candidate(four, &r, 0, hosts(r.candidates[0]));
  topo_engine_ranking_free(&r);
  ASSERT_EQ(topo_engine_job_ended(engine_, 4, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  flush();
  {
    topo::PlacementStore store(path("fabric.db"));
    const std::string two_why = store.latest_for_job(2)->deferred_why;
    EXPECT_TRUE(two_why.starts_with("deferred: its best placement now is estimated at")) << two_why;
    EXPECT_NE(two_why.find("deferred for 1799 s of 1800"), std::string::npos) << two_why;
    EXPECT_EQ(store.latest_for_job(4)->deferred_why, "") << "never held back";
  }

  // Job 3 started (on Slurm's choice): a later job of that id, once
  // requeued, is deferred for a share of its own.
  ASSERT_EQ(rank_at(3, 1e6 + 2000, 3600, &r), TOPO_ENGINE_DEFERRED) << msg_;
  record_fallback(3, {"gpu008", "gpu016"});
  flush();
  EXPECT_NE(topo::PlacementStore(path("fabric.db")).latest_for_job(3)->deferred_why.find("deferred for 1000 s of 1800"),
            std::string::npos)
      << "a fallback after a deferral keeps it too";
  ASSERT_EQ(topo_engine_job_ended(engine_, 3, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  ASSERT_EQ(rank_at(3, 1e6 + 5000, 3600, &r), TOPO_ENGINE_DEFERRED) << msg_;
  EXPECT_NE(std::string(msg_).find("deferred for 0 s of 1800"), std::string::npos) << msg_;

  ASSERT_EQ(topo_engine_job_ended(engine_, 1, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  ASSERT_EQ(rank_at(5, 1e6, 3600, &r), TOPO_ENGINE_OK) << msg_;  // nothing beside it now
  EXPECT_LT(r.candidates[0].estimate_s, 1.10 * r.candidates[0].ideal_s);
  topo_engine_ranking_free(&r);

  // Off by default.
  record_fallback(1, {"gpu001", "gpu002", "gpu003", "gpu004", "gpu005", "gpu006", "gpu007", "gpu009", "gpu010",
                      "gpu011", "gpu012", "gpu013", "gpu014", "gpu015"});
  conf("DbPath=" + path("fabric.db") + "\n");
  ASSERT_EQ(topo_engine_reconfigure(engine_, path("topo_aware.conf").c_str(), msg_, sizeof msg_), TOPO_ENGINE_OK)
      << msg_;
  EXPECT_FALSE(topo_engine_defers(engine_));
  ASSERT_EQ(rank_at(6, 1e6, 3600, &r), TOPO_ENGINE_OK) << msg_;
  topo_engine_ranking_free(&r);
}

TEST_F(EngineTest, BadDeferKeysNameFileLineAndField) {
  for (const auto& [line, expected] : std::vector<std::pair<std::string, std::string>>{
           {"DeferAbove=1", "DeferAbove '1': expected 0 (never) or a slowdown above 1"},
           {"DeferAbove=0.5", "DeferAbove '0.5': expected 0 (never) or a slowdown above 1"},
           {"DeferAbove=fast", "DeferAbove 'fast': expected"},
           {"DeferAbove=inf", "DeferAbove 'inf': expected"},
           {"DeferShare=0", "DeferShare '0': expected a share of the job's time limit above 0"},
           {"DeferShare=-1", "DeferShare '-1': expected"},
           {"DeferShare=nan", "DeferShare 'nan': expected"}}) {
    std::string bad = conf("DbPath=" + path("fabric.db") + "\n" + line + "\n");
    topo_engine_t* e = nullptr;
    EXPECT_EQ(topo_engine_open(bad.c_str(), &e, msg_, sizeof msg_), TOPO_ENGINE_CONFIG) << line;
    EXPECT_NE(std::string(msg_).find(bad + ":2"), std::string::npos) << msg_;
    EXPECT_NE(std::string(msg_).find(expected), std::string::npos) << msg_;
    topo_engine_close(e);
  }
  open(conf("DeferAbove=0\nDeferShare=2\n"));  // 0: never, spelled out
}

// A suspended job's traffic leaves the fabric model and comes back on
// resume: new jobs avoid its uplinks only while it runs.
TEST_F(EngineTest, ASuspendedJobsTrafficLeavesUntilItResumes) {
  save("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  open(conf("DbPath=" + path("fabric.db") + "\n"));
  const std::vector<int> free = four_free_per_leaf();
  auto best = [&] { return best_of_eight(free); };
  std::vector<std::string> alone = best();
  int a = 0, b = 0;
  std::vector<std::string> job1 = busy_half_of_leaves(alone, &a, &b);
  ASSERT_FALSE(job1.empty());
  record_fallback(1, job1);
  std::vector<std::string> beside = best();
  ASSERT_NE(beside, alone);

  ASSERT_EQ(topo_engine_job_suspended(engine_, 1, true, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  EXPECT_NE(std::string(msg_).find("job 1 suspended"), std::string::npos) << msg_;
  EXPECT_NE(std::string(msg_).find("0 running jobs' traffic"), std::string::npos) << msg_;
  EXPECT_EQ(best(), alone);
  ASSERT_EQ(topo_engine_job_suspended(engine_, 1, false, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  EXPECT_NE(std::string(msg_).find("job 1 resumed"), std::string::npos) << msg_;
  EXPECT_EQ(best(), beside);
  // Unknown jobs, or a resume without a suspend: no error, nothing said.
  ASSERT_EQ(topo_engine_job_suspended(engine_, 7, true, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  EXPECT_STREQ(msg_, "");
  ASSERT_EQ(topo_engine_job_suspended(engine_, 1, false, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  EXPECT_STREQ(msg_, "");
  // A job that ends while suspended is forgotten: its resume brings nothing back.
  ASSERT_EQ(topo_engine_job_suspended(engine_, 1, true, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  ASSERT_EQ(topo_engine_job_ended(engine_, 1, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  ASSERT_EQ(topo_engine_job_suspended(engine_, 1, false, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  EXPECT_EQ(best(), alone);
}

// The same question gets the same answer without a new search, until the
// running traffic changes; one possible host set is the only candidate.
TEST_F(EngineTest, RepeatedQuestionsReuseTheAnswerUntilTrafficChanges) {
  save(kFabric);
  open(conf("DbPath=" + path("fabric.db") + "\n"));
  std::vector<int> free(names_.size(), 8);
  topo_engine_ranking first{}, again{}, other_job{};
  ASSERT_EQ(rank(4, free, &first, 1), TOPO_ENGINE_OK) << msg_;
  EXPECT_FALSE(first.answered_before);
  ASSERT_EQ(rank(4, free, &again, 1), TOPO_ENGINE_OK) << msg_;
  EXPECT_TRUE(again.answered_before);
  ASSERT_EQ(rank(4, free, &other_job, 9), TOPO_ENGINE_OK) << msg_;
  EXPECT_TRUE(other_job.answered_before) << "another job of the same shape asks the same question";
  ASSERT_EQ(first.count, again.count);
  for (size_t c = 0; c < first.count; ++c) EXPECT_EQ(hosts(first.candidates[c]), hosts(again.candidates[c]));
  // A record adds running traffic: the next answer is searched afresh.
  char *ring = nullptr, *hcas = nullptr;
  topo_engine_job placed{};
  placed.job_id = 1;
  placed.nodes = 4;
  placed.gpus_per_node = 8;
  placed.request.topo_aware = true;
  ASSERT_EQ(topo_engine_record(engine_, &placed, &first, 0, first.candidates[0].nodes, first.candidates[0].count,
                               nullptr, &ring, &hcas, msg_, sizeof msg_),
            TOPO_ENGINE_OK)
      << msg_;
  std::free(ring);
  std::free(hcas);
  topo_engine_ranking after{};
  ASSERT_EQ(rank(4, free, &after, 1), TOPO_ENGINE_OK) << msg_;
  EXPECT_FALSE(after.answered_before);
  // A different offer is a different question.
  free[0] = 0;
  topo_engine_ranking changed{};
  ASSERT_EQ(rank(4, free, &changed, 1), TOPO_ENGINE_OK) << msg_;
  EXPECT_FALSE(changed.answered_before);
  for (topo_engine_ranking* r : {&first, &again, &other_job, &after, &changed}) topo_engine_ranking_free(r);

  // Exactly four hosts with 8 free GPUs: one choice, in a ring.
  std::vector<int> four(names_.size(), 0);
  for (int i : {2, 12, 13, 30}) four[i] = 8;
  topo_engine_ranking only{};
  ASSERT_EQ(rank(4, four, &only, 1), TOPO_ENGINE_OK) << msg_;
  ASSERT_EQ(only.count, 1u);
  EXPECT_FALSE(only.more) << "the only choice has no others to rank";
  std::vector<std::string> got = hosts(only.candidates[0]);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"gpu003", "gpu013", "gpu014", "gpu031"}));
  EXPECT_GT(only.candidates[0].estimate_s, 0);
  topo_engine_ranking_free(&only);
  // One fewer: no placement, said without a search.
  four[30] = 4;
  topo_engine_ranking none{};
  EXPECT_EQ(rank(4, four, &none, 1), TOPO_ENGINE_NO_PLACEMENT);
  EXPECT_NE(std::string(msg_).find("3 hosts with 8 free GPUs"), std::string::npos) << msg_;
}

// Slurm's own choice in ring order, as a fallback's record gives it.
TEST_F(EngineTest, SlurmsOwnChoiceGetsTheRingItsRecordWouldGive) {
  save("leafspine:leaves=4,hosts_per_leaf=8,spines=2,naming=interleaved");
  open(conf("DbPath=" + path("fabric.db") + "\n"));
  ASSERT_EQ(topo_engine_prepare(engine_, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  // Interleaved: gpu001, 005, 009, ... on one leaf; node order crosses leaves at every hop.
  std::vector<std::string> nodes = {"gpu001", "gpu002", "gpu005", "gpu006", "nothere"};
  std::vector<size_t> idx = indices(nodes);
  char* ring = nullptr;
  ASSERT_EQ(topo_engine_ring(engine_, idx.data(), idx.size(), &ring, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  std::string got = ring;
  std::free(ring);
  EXPECT_EQ(got, record_fallback(5, nodes));
  // Leaf neighbours are next to each other; the node the fabric does not know comes last.
  EXPECT_TRUE(got.find("gpu001,gpu005") != std::string::npos || got.find("gpu005,gpu001") != std::string::npos) << got;
  EXPECT_EQ(got.substr(got.size() - 8), ",nothere") << got;
}

// After a slurmctld restart a started job without a record of this run is
// recorded once, with the ring it was given; one with a record is left alone.
TEST_F(EngineTest, RecoverRecordsAStartedJobOnlyWhenItsRunHasNoRecord) {
  save(kFabric);
  open(conf("DbPath=" + path("fabric.db") + "\n"));
  std::vector<size_t> ring = indices({"gpu002", "gpu001"}), alloc = indices({"gpu001", "gpu002"});
  topo_engine_started job{};
  job.job.job_id = 42;
  job.job.nodes = 2;
  job.job.gpus_per_node = 8;
  job.job.request.topo_aware = true;
  job.ring = ring.data();
  job.ring_count = ring.size();
  job.allocated = alloc.data();
  job.allocated_count = alloc.size();
  job.started_at = static_cast<int64_t>(std::time(nullptr)) - 5;
  // A job recorded before the restart, in the same batch: left alone.
  record_fallback(43, {"gpu009", "gpu010"});
  topo_engine_started done = job;
  done.job.job_id = 43;
  topo_engine_started both[2] = {job, done};
  ASSERT_EQ(topo_engine_recover(engine_, both, 2, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  EXPECT_TRUE(both[0].recorded);
  EXPECT_FALSE(both[1].recorded);
  flush();
  std::optional<topo::PlacementRecord> r = topo::PlacementStore(path("fabric.db")).latest_for_job(42);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->ring_order, (std::vector<std::string>{"gpu002", "gpu001"}));
  EXPECT_EQ(r->hosts, (std::vector<std::string>{"gpu001", "gpu002"}));
  EXPECT_FALSE(r->fallback);
  EXPECT_GT(r->estimate_s, 0);
  // Asked again (another restart): this run has its record now.
  ASSERT_EQ(topo_engine_recover(engine_, &job, 1, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  EXPECT_FALSE(job.recorded);
  // A later run of the same job (requeued, on Slurm's own choice) has none yet.
  job.started_at += 3600;
  job.fallback = true;
  ASSERT_EQ(topo_engine_recover(engine_, &job, 1, msg_, sizeof msg_), TOPO_ENGINE_OK) << msg_;
  EXPECT_TRUE(job.recorded);
  flush();
  r = topo::PlacementStore(path("fabric.db")).latest_for_job(42);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->fallback);
}

// NVLink domains (placement/domain_fit.h) through the engine: 4 racks of
// 4 four-GPU trays, a domain each (gpu001-004, 005-008, 009-012, 013-016),
// and 4 eight-GPU hosts in no domain (gpu017-020).
constexpr const char* kDomains = "nvl72:racks=4,trays=4,hgx=4,hosts_per_leaf=8";

class EngineDomainTest : public EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    save(kDomains);
    open(conf("DbPath=" + path("fabric.db") + "\n"));
  }
  // Ranks a job of `nodes` hosts with `gpus` GPUs each (0: none) and
  // `segment`; free[i] the free GPUs of gpu00(i+1).
  int rank_job(uint32_t nodes, uint32_t gpus, uint32_t segment, const std::vector<int>& free, topo_engine_ranking* r) {
    topo_engine_job job{};
    job.job_id = 7;
    job.nodes = nodes;
    job.gpus_per_node = gpus;
    job.request.topo_aware = true;
    job.request.segment = segment;
    return topo_engine_rank(engine_, &job, free.data(), free.size(), r, msg_, sizeof msg_);
  }
  // The domain (0-3) of a host named gpu001-016, -1 outside.
  static int domain(const std::string& host) {
    int n = std::stoi(host.substr(3));
    return n <= 16 ? (n - 1) / 4 : -1;
  }
  // Free GPUs: `hosts` (numbers, 1-based) free, the rest not offered
  // (Slurm offers a job without GPUs any host with a core free).
  static std::vector<int> free_hosts(std::initializer_list<int> hosts) {
    std::vector<int> free(20, -1);
    for (int h : hosts) free[h - 1] = h > 16 ? 8 : 4;
    return free;
  }
};

TEST_F(EngineDomainTest, EverySegmentInsideOneDomainOrTheJobWaits) {
  // Free: 3 hosts of domain 0, 3 of domain 1, 2 of domain 2, and the 4
  // hosts outside: 12 hosts, but 3 whole segments of 2 inside domains.
  std::vector<int> free = free_hosts({1, 2, 3, 5, 6, 7, 9, 10, 17, 18, 19, 20});
  topo_engine_ranking r{};
  ASSERT_EQ(rank_job(6, 4, 2, free, &r), TOPO_ENGINE_OK) << msg_;
  std::vector<std::string> ring = hosts(r.candidates[0]);
  ASSERT_EQ(ring.size(), 6u);
  for (size_t i = 0; i < ring.size(); i += 2) {
    EXPECT_GE(domain(ring[i]), 0) << ring[i];
    EXPECT_EQ(domain(ring[i]), domain(ring[i + 1])) << ring[i] << " " << ring[i + 1];
  }
  topo_engine_ranking_free(&r);

  // 8 hosts in segments of 2: 12 free hosts, 3 segments. It waits, saying
  // why, even without Strict=yes: Slurm's own choice could split one.
  EXPECT_EQ(rank_job(8, 4, 2, free, &r), TOPO_ENGINE_NO_PLACEMENT);
  EXPECT_NE(std::string(msg_).find("segment=2"), std::string::npos) << msg_;
  EXPECT_NE(std::string(msg_).find("3 whole segments of 2 hosts, 4 needed"), std::string::npos) << msg_;
  EXPECT_EQ(r.count, 0u);
  topo_engine_job job{};
  job.request.segment = 2;
  EXPECT_STREQ(topo_engine_holds(engine_, &job), "segments");
  job.request.segment = 0;
  EXPECT_EQ(topo_engine_holds(engine_, &job), nullptr);  // Strict=no: Slurm's own choice
  // Without segments the same 8 hosts fit.
  ASSERT_EQ(rank_job(8, 4, 0, free, &r), TOPO_ENGINE_OK) << msg_;
  topo_engine_ranking_free(&r);
  // A job that is not whole segments waits too.
  EXPECT_EQ(rank_job(6, 4, 4, free, &r), TOPO_ENGINE_NO_PLACEMENT);
  EXPECT_NE(std::string(msg_).find("not whole segments of 4"), std::string::npos) << msg_;
}

// A job one domain could hold, when none has room and the hosts outside
// are busy: it waits (deferred, whatever Strict= says) rather than take
// Slurm's own choice, which would split it over domains.
TEST_F(EngineDomainTest, AJobOneDomainHoldsWaitsForOne) {
  std::vector<int> free = free_hosts({1, 2, 3, 5, 6, 7, 9, 10});
  topo_engine_ranking r{};
  EXPECT_EQ(rank_job(4, 4, 0, free, &r), TOPO_ENGINE_DEFERRED);
  EXPECT_NE(
      std::string(msg_).find("4 hosts fit one NVLink domain (the largest holds 4), but the most free in one is 3"),
      std::string::npos)
      << msg_;
  EXPECT_EQ(r.count, 0u);
  // Larger than any domain: no domain to wait for; it spans them.
  ASSERT_EQ(rank_job(6, 4, 0, free, &r), TOPO_ENGINE_OK) << msg_;
  topo_engine_ranking_free(&r);
  // With the hosts outside free, the 4-host job goes there at once.
  free = free_hosts({1, 2, 3, 5, 6, 7, 9, 10, 17, 18, 19, 20});
  ASSERT_EQ(rank_job(4, 4, 0, free, &r), TOPO_ENGINE_OK) << msg_;
  for (const std::string& h : hosts(r.candidates[0])) EXPECT_EQ(domain(h), -1) << h;
  // Its record says what held it back.
  topo_engine_job seven{};
  seven.job_id = 7;
  seven.nodes = 4;
  record_candidate(seven, &r, 0, hosts(r.candidates[0]));
  topo_engine_ranking_free(&r);
  flush();
  EXPECT_NE(topo::PlacementStore(path("fabric.db")).latest_for_job(7)->deferred_why.find("fit one NVLink domain"),
            std::string::npos);
}

TEST_F(EngineDomainTest, ExactlyEnoughHostsAreStillSearchedForSegments) {
  // Exactly 4 usable hosts, two in each of two domains: one segment of 4
  // fits in neither, two of 2 fit.
  std::vector<int> free = free_hosts({1, 2, 5, 6});
  topo_engine_ranking r{};
  EXPECT_EQ(rank_job(4, 4, 4, free, &r), TOPO_ENGINE_NO_PLACEMENT);
  EXPECT_NE(std::string(msg_).find("0 whole segments of 4 hosts, 1 needed"), std::string::npos) << msg_;
  ASSERT_EQ(rank_job(4, 4, 2, free, &r), TOPO_ENGINE_OK) << msg_;
  std::vector<std::string> ring = hosts(r.candidates[0]);
  EXPECT_EQ(domain(ring[0]), domain(ring[1]));
  EXPECT_EQ(domain(ring[2]), domain(ring[3]));
  topo_engine_ranking_free(&r);
}

TEST_F(EngineDomainTest, AJobWithoutGpusGoesOutsideTheDomains) {
  std::vector<int> all = free_hosts({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20});
  topo_engine_ranking r{};
  ASSERT_EQ(rank_job(4, 0, 0, all, &r), TOPO_ENGINE_OK) << msg_;
  for (const std::string& h : hosts(r.candidates[0])) EXPECT_EQ(domain(h), -1) << h;
  topo_engine_ranking_free(&r);
  // The same job with GPUs takes one whole domain (its ring on NVLink).
  ASSERT_EQ(rank_job(4, 4, 0, all, &r), TOPO_ENGINE_OK) << msg_;
  std::vector<std::string> ring = hosts(r.candidates[0]);
  for (const std::string& h : ring) EXPECT_EQ(domain(h), domain(ring[0])) << h;
  EXPECT_GE(domain(ring[0]), 0);
  topo_engine_ranking_free(&r);
  // With the hosts outside busy, a job without GPUs takes the most
  // fragmented domain's hosts first (a preference, never a refusal).
  std::vector<int> inside = free_hosts({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13});
  ASSERT_EQ(rank_job(2, 0, 0, inside, &r), TOPO_ENGINE_OK) << msg_;
  for (const std::string& h : hosts(r.candidates[0])) EXPECT_TRUE(domain(h) == 2 || domain(h) == 3) << h;
  topo_engine_ranking_free(&r);
}

TEST_F(EngineDomainTest, TheRingFinishesADomainBeforeItLeaves) {
  // 8 hosts over two whole free domains: the ring visits one domain's four
  // hosts, then the other's.
  std::vector<int> free = free_hosts({1, 2, 3, 4, 9, 10, 11, 12});
  topo_engine_ranking r{};
  ASSERT_EQ(rank_job(8, 4, 0, free, &r), TOPO_ENGINE_OK) << msg_;
  std::vector<std::string> ring = hosts(r.candidates[0]);
  ASSERT_EQ(ring.size(), 8u);
  int changes = 0;
  for (size_t i = 1; i < ring.size(); ++i) changes += domain(ring[i]) != domain(ring[i - 1]);
  EXPECT_EQ(changes, 1) << fmt::format("{}", fmt::join(ring, ","));
  topo_engine_ranking_free(&r);
}

}  // namespace
