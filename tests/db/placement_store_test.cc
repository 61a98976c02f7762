// The Slurm plugin's placement records: round trip, newest per job, the
// schema migrations from versions 1 and 6, and refusals of bad input.
#include "db/placement_store.h"

#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include <gtest/gtest.h>

#include "db/connection.h"
#include "db/schema.h"
#include "db/snapshot_store.h"
#include "fabric/synthetic.h"

namespace topo {
namespace {

class PlacementStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("placement-store-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string db() const { return (dir_ / "fabric.db").string(); }
  std::filesystem::path dir_;
};

PlacementRecord sample(uint32_t job) {
  PlacementRecord r;
  r.job_id = job;
  r.snapshot_id = 3;
  r.hosts = {"gpu001", "gpu002", "gpu009"};
  r.ring_order = {"gpu002", "gpu001", "gpu009"};
  r.profile = "allreduce";
  r.estimate_s = 0.25;
  r.ideal_s = 0.125;
  r.reasons = {"two leaves: no single leaf has 3 free hosts", "ring crosses a spine twice"};
  return r;
}

TEST_F(PlacementStoreTest, RoundTripsEveryField) {
  PlacementStore store(db());
  PlacementRecord in = sample(42);
  int64_t id = store.record(in);
  EXPECT_GT(id, 0);
  auto out = store.latest_for_job(42);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->id, id);
  EXPECT_EQ(out->job_id, 42u);
  EXPECT_EQ(out->snapshot_id, std::optional<int64_t>(3));
  EXPECT_EQ(out->hosts, in.hosts);
  EXPECT_EQ(out->ring_order, in.ring_order);
  EXPECT_EQ(out->profile, "allreduce");
  EXPECT_DOUBLE_EQ(out->estimate_s, 0.25);
  EXPECT_DOUBLE_EQ(out->ideal_s, 0.125);
  EXPECT_EQ(out->reasons, in.reasons);
  EXPECT_FALSE(out->fallback);
  EXPECT_EQ(out->placed_at.size(), std::string("2025-01-31T12:00:00Z").size());
  EXPECT_EQ(out->deferred_why, "");
  EXPECT_FALSE(store.latest_for_job(43));

  PlacementRecord held = sample(44);
  held.deferred_why = "deferred: its best placement now is estimated at 1.40x its ideal";
  store.record(held);
  EXPECT_EQ(store.latest_for_job(44)->deferred_why, held.deferred_why);
}

TEST_F(PlacementStoreTest, NewestRecordIsTheJobsPlacementAndHistoryKeepsAll) {
  PlacementStore store(db());
  store.record(sample(7));
  PlacementRecord requeued = sample(7);
  requeued.fallback = true;
  requeued.fallback_why = "no candidate accepted by cons_tres";
  requeued.snapshot_id.reset();
  requeued.reasons.clear();
  store.record(requeued);
  store.record(sample(8));
  auto latest = store.latest_for_job(7);
  ASSERT_TRUE(latest);
  EXPECT_TRUE(latest->fallback);
  EXPECT_EQ(latest->fallback_why, "no candidate accepted by cons_tres");
  EXPECT_FALSE(latest->snapshot_id);
  EXPECT_TRUE(latest->reasons.empty());
  auto all = store.history(7);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_FALSE(all[0].fallback);
  EXPECT_LT(all[0].id, all[1].id);
}

TEST_F(PlacementStoreTest, RefusesWhatCannotBeStoredFaithfully) {
  PlacementStore store(db());
  PlacementRecord r = sample(0);
  EXPECT_THROW(store.record(r), std::invalid_argument);
  r = sample(1);
  r.hosts.push_back("a,b");
  EXPECT_THROW(store.record(r), std::invalid_argument);
  r = sample(1);
  r.reasons.push_back("two\nlines");
  EXPECT_THROW(store.record(r), std::invalid_argument);
  EXPECT_FALSE(store.latest_for_job(1));
}

// A database written by a build that knew only snapshots gains the table
// and keeps its snapshots.
TEST_F(PlacementStoreTest, MigratesAVersionOneDatabase) {
  int64_t id = 0;
  {
    // The schema as that build left it, and a snapshot in its columns.
    Connection c(db(), std::chrono::milliseconds(1000));
    prepare_schema(c, 1);
    c.exec(
        "INSERT INTO snapshot VALUES (7, '2026-12-02T14:16:51Z', 'synthetic:empty', '', 0, 0, 0, 0, 0, 0, 0, "
        "0, 0, 0, 0)",
        "a version-1 snapshot");
    id = 7;
  }
  PlacementStore store(db());
  {
    Connection c(db(), std::chrono::milliseconds(1000));
    EXPECT_EQ(schema_version(c), kSchemaVersion);
  }
  store.record(sample(5));
  EXPECT_TRUE(store.latest_for_job(5));
  SnapshotStore snapshots(db());
  EXPECT_EQ(snapshots.latest(), std::optional<int64_t>(id));
}

// A database as the build before deferral reasons left it (version 6),
// with a placement in that build's columns: it migrates, and the old row
// reads back whole with no reason.
TEST_F(PlacementStoreTest, MigratesAVersionSixDatabaseKeepingItsPlacements) {
  {
    Connection c(db(), std::chrono::milliseconds(1000));
    prepare_schema(c, 6);
    ASSERT_EQ(schema_version(c), 6);
    c.exec(
        "INSERT INTO placement (job_id, placed_at, snapshot_id, hosts, ring_order, profile, estimate_s, ideal_s, "
        "reasons, fallback, fallback_why) VALUES (9, '2026-12-01T00:00:00Z', NULL, 'gpu001,gpu002', "
        "'gpu002,gpu001', 'allreduce', 0.5, 0.25, 'one leaf', 1, 'no candidate fit')",
        "a version-6 placement");
  }
  PlacementStore store(db());
  {
    Connection c(db(), std::chrono::milliseconds(1000));
    EXPECT_EQ(schema_version(c), kSchemaVersion);
  }
  auto old = store.latest_for_job(9);
  ASSERT_TRUE(old);
  EXPECT_EQ(old->placed_at, "2026-12-01T00:00:00Z");
  EXPECT_EQ(old->ring_order, (std::vector<std::string>{"gpu002", "gpu001"}));
  EXPECT_EQ(old->reasons, std::vector<std::string>{"one leaf"});
  EXPECT_TRUE(old->fallback);
  EXPECT_EQ(old->fallback_why, "no candidate fit");
  EXPECT_EQ(old->deferred_why, "");
  PlacementRecord held = sample(10);
  held.deferred_why = "deferred: waits for a better placement";
  store.record(held);
  EXPECT_EQ(store.latest_for_job(10)->deferred_why, held.deferred_why);
}

TEST_F(PlacementStoreTest, ACorruptFileIsADbError) {
  {
    std::FILE* f = std::fopen(db().c_str(), "w");
    ASSERT_TRUE(f);
    std::fputs("this is not an SQLite database, not even close to one; padding padding padding padding", f);
    std::fclose(f);
  }
  EXPECT_THROW(PlacementStore store(db()), DbError);
}

}  // namespace
}  // namespace topo
