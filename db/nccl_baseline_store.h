// nccl-tests runs in the snapshot database (schema 4), each with its host
// set and, row by row, the comm_model's bus bandwidth for the same hosts
// and size. The oldest run of a host set and test is its baseline; later
// runs are compared with it (health/nccl_baseline.h, `topoctl baseline
// check`). The record itself is NcclRunRecord, a value of that header.
//
// Every failure is a DbError naming the database path (db/error.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/connection.h"
#include "health/nccl_baseline.h"

namespace topo {

class NcclBaselineStore {
 public:
  // Opens as SnapshotStore does; ReadOnly as SnapshotStore::Options says.
  explicit NcclBaselineStore(std::string path, Access access = Access::ReadWrite);

  // Saves `record` (its id and imported_at are set here) and returns the id.
  int64_t add(const NcclRunRecord& record);
  // Every run, oldest first.
  std::vector<NcclRunRecord> list() const;

 private:
  Connection connection_;
};

}  // namespace topo
