// nccl-tests runs in the snapshot database (schema 4), each with its host
// set and, row by row, the comm_model's bus bandwidth for the same hosts
// and size. The oldest run of a host set and test is its baseline; later
// runs are compared with it (`topoctl baseline check`).
//
// Every failure is a DbError naming the database path (db/error.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm_model/nccl_tests.h"
#include "db/connection.h"

namespace topo {

struct NcclRunRecord {
  int64_t id = 0;
  std::string imported_at, ran_at;
  std::optional<int64_t> snapshot_id;
  std::string file;
  std::optional<int64_t> job_id;
  std::vector<std::string> hosts;  // sorted: the host set
  NcclTestsRun run;                // test, version, ranks, rows
  // Per row: the model's bus bandwidth in GB/s; nullopt when not predicted.
  std::vector<std::optional<double>> model_busbw;
};

class NcclBaselineStore {
 public:
  explicit NcclBaselineStore(std::string path);

  // Saves `record` (its id and imported_at are set here) and returns the id.
  int64_t add(const NcclRunRecord& record);
  // Every run, oldest first.
  std::vector<NcclRunRecord> list() const;

 private:
  Connection connection_;
};

}  // namespace topo
