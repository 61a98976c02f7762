// The standard output of nccl-tests (all_reduce_perf, all_gather_perf,
// reduce_scatter_perf, alltoall_perf, broadcast_perf, ...), read back into
// values: what a real collective did, to set beside what the model says.
//
// What is read:
//   # nThread 1 nGpus 8 minBytes ... ('nGpus': GPUs per process)
//   #  Rank  0 Group  0 Pid 1887 on worker-1 device  0 [0x8d] NVIDIA H100 80GB HBM3
//   NCCL version 2.19.3+cuda12.3        (also "# NCCL version ...")
//   then the table, one row a size:
//     size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong
//   (out of place, then in place; times in us, bandwidths in GB/s). Older
//   versions print no root column, and the oldest no redop either; both
//   are accepted. "N/A" in a #wrong column is kept as it is.
//   # Avg bus bandwidth    : 6.6972
// Lines from MPI, NCCL's INFO/WARN logging or the shell are skipped; a
// header that MPI repeats (one copy per process) counts once.
//
// Which test ran is not printed by nccl-tests itself: it is taken from the
// first "<name>_perf" the text or the file name mentions (the command line
// is usually pasted above the output), else it must be given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "comm_model/collective.h"

namespace topo {

struct NcclTestsRank {
  int rank = 0;
  std::string host;
  int device = 0;
  std::string bus;   // "0x8d", "0002:00:01"
  std::string name;  // "NVIDIA H100 80GB HBM3"
};

struct NcclTestsRow {
  int64_t size = 0;  // bytes
  int64_t count = 0;
  std::string type, redop;  // redop "" in the oldest format
  int root = -1;
  double oop_time_us = 0, oop_algbw = 0, oop_busbw = 0;
  double ip_time_us = 0, ip_algbw = 0, ip_busbw = 0;
  std::string oop_wrong, ip_wrong;
};

struct NcclTestsRun {
  std::string test;          // "all_reduce_perf"; "" when nothing names it
  std::string nccl_version;  // "2.19.3+cuda12.3"; "" when not printed
  int gpus_per_process = 1;
  std::vector<NcclTestsRank> ranks;
  std::vector<NcclTestsRow> rows;
  std::optional<double> avg_busbw;  // GB/s, the footer's figure

  // The distinct hosts of the ranks, sorted.
  std::vector<std::string> hosts() const;
  // The collective the test runs; nullopt for one the model has no name for.
  std::optional<Collective> collective() const;
};

// A job log with NCCL_DEBUG=INFO from a thousand ranks is tens of
// megabytes; the output is held whole while it is read.
inline constexpr uint64_t kMaxNcclTestsBytes = 256ull << 20;

// Reads one nccl-tests output. `file` names it in errors. Throws
// ParseError(file, line, what) for a row that is not a table row of the
// header's shape, a number that is not one, a file with no table, a
// rank line that cannot be read, or a line longer than kMaxLineBytes.
NcclTestsRun parse_nccl_tests(std::string_view text, const std::string& file);
// The same from a file of at most kMaxNcclTestsBytes (ParseError past it).
NcclTestsRun read_nccl_tests_file(const std::string& path);

}  // namespace topo
