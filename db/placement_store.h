// Where the Slurm plugin placed each job, and why.
//
// Every placement decision of select/topo_cons_tres is one row: the hosts
// the job got, the order its ring should take, the profile it was judged
// by, the comm_model estimate against the ideal, the reasons in words, and
// whether the engine's choice was used or the job fell back to cons_tres's
// (and why), and why the engine held it back first, if it did. A requeued job is placed again and gets a new row; the
// newest row of a job is its current placement. Rows are never changed.
//
//   PlacementStore store("/var/lib/topo-aware/fabric.db");
//   store.record(record);
//   std::optional<PlacementRecord> r = store.latest_for_job(4711);
//
// Shares the snapshot database (and its schema, db/schema.h). Every failure
// is a DbError naming the database path. One thread at a time per store.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "db/connection.h"

namespace topo {

struct PlacementRecord {
  int64_t id = 0;  // set by record()
  uint32_t job_id = 0;
  std::string placed_at;               // UTC ISO-8601; record() fills it when empty
  std::optional<int64_t> snapshot_id;  // the fabric snapshot placement used
  std::vector<std::string> hosts;      // as Slurm allocated them (node order)
  std::vector<std::string> ring_order;
  std::string profile;  // "allreduce", "alltoall", "mixed", "none"
  double estimate_s = 0;
  double ideal_s = 0;
  std::vector<std::string> reasons;
  bool fallback = false;  // cons_tres's own choice was used
  std::string fallback_why;
  // The last reason the engine gave Slurm (the job's AdminComment) for
  // holding the job back before it started; "" when it never did.
  std::string deferred_why;
};

// Throws std::invalid_argument for a record record() would refuse.
void check_placement_record(const PlacementRecord& record);
// Now, as placed_at holds it: UTC ISO-8601 to the second.
std::string placement_time_now();

class PlacementStore {
 public:
  struct Options {
    std::chrono::milliseconds busy_timeout{2000};
    // false: a record is on disk when the write-ahead log next syncs (at a
    // checkpoint), not at every commit. A crash of the process loses
    // nothing; a crash of the machine may lose the last records, never the
    // database. Inside slurmctld's job_test an fsync per placement costs
    // more than the placement itself.
    bool sync_each_record = true;
    // ReadOnly: as SnapshotStore::Options; record() then fails.
    Access access = Access::ReadWrite;
  };

  // Opens (creating when missing) the database and brings its schema up to
  // date; throws DbError like SnapshotStore.
  explicit PlacementStore(std::string path);
  PlacementStore(std::string path, Options options);

  const std::string& path() const { return connection_.path(); }

  // Saves one decision and returns its row id. Host names must not contain
  // ',' and reasons no newline (they are stored joined by them): throws
  // std::invalid_argument otherwise, as for job id 0.
  int64_t record(const PlacementRecord& record);
  // Saves several in one transaction (all or none) and returns how many
  // rows were added. With `skip_recorded`, a record whose job already has a
  // row of the same time, hosts and ring order is taken as that row and
  // not added again (replaying a journal that was partly stored).
  size_t record_all(std::span<const PlacementRecord> records, bool skip_recorded);

  // The newest record of a job; nullopt when it has none.
  std::optional<PlacementRecord> latest_for_job(uint32_t job_id) const;
  // The current (newest) record of the `limit` most recently placed jobs,
  // newest first. The database keeps no job ends: running or ended is
  // Slurm's to say.
  std::vector<PlacementRecord> recent(size_t limit) const;
  // Every record of a job, oldest first.
  std::vector<PlacementRecord> history(uint32_t job_id) const;

 private:
  Connection connection_;
};

}  // namespace topo
