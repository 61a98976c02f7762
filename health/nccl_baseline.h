// nccl-tests baselines: each host set's runs held against its first run and
// against what the model says the fabric should give, and, when some sets
// are slow, what the slow sets have in common.
//
// A host set is the sorted hosts of a run and its test (all_reduce_perf on
// gpu[001-004] is one set, all_gather_perf on the same hosts another). Its
// oldest run is its baseline; its newest run is judged.
//
// Two rules, each on out-of-place bus bandwidth (busbw, GB/s):
//   - against the baseline, at the largest size (and type) both runs
//     measured: slow when newest < baseline x (1 - drop);
//   - against the model, at the largest size the newest run measured with a
//     prediction stored beside it (the model's busbw for those hosts and
//     that size on the snapshot of the import): slow when
//     newest < model x (1 - model_drop). Only sizes of at least
//     model_min_bytes are held against the model: the model is calibrated
//     where bandwidth decides (tests/fixtures/comm_model/
//     nccl_tests_reference.json, 8 GiB AllReduce on non-blocking IB: within
//     the published ranges, about +-3% of their middle); for small messages
//     latency and NCCL's protocol choice decide, and the model's figure
//     there was never checked against a measurement. The default model_drop
//     (0.15) is that calibration error (up to 5%) plus 10% for what real
//     setups lose to a perfect one without anything being broken; NCCL's
//     maintainers call 20 GB/s where 24 are expected (-17%) a problem
//     (nccl-tests issue 160), and that is a finding here.
//   A measurement above the model is never a finding. A set with a single
//   run is judged against the model alone.
//
// Likely causes, when some sets are slow (each says why):
//   - a host that is in slow sets only, preferring one in every slow set;
//   - a cable every slow set's traffic crosses and no healthy set's does.
//     A set's cables are those its ring (hosts in sorted order, the run's
//     collective) loads on the snapshot of its newest run, routed as the
//     model routes (comm_model/link_load.h): the forwarding tables under
//     static routing, every equal path under adaptive routing. A host's own
//     cable appears with the host: nccl-tests cannot tell them apart;
//   - a fabric change (fabric/diff.h) between the snapshot of a slow
//     set's baseline and that of its newest run.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fabric/fabric.h"
#include "health/nccl_tests.h"

namespace topo {

// One stored nccl-tests run (db/nccl_baseline_store.h keeps them).
struct NcclRunRecord {
  int64_t id = 0;
  std::string imported_at, ran_at;
  std::optional<int64_t> snapshot_id;  // the snapshot the model predicted on
  std::string file;
  std::optional<int64_t> job_id;
  std::vector<std::string> hosts;  // sorted: the host set
  NcclTestsRun run;                // test, version, ranks, rows
  // Per row: the model's bus bandwidth in GB/s; nullopt when not predicted.
  std::vector<std::optional<double>> model_busbw;
};

// The model's bus bandwidth (GB/s) for each row of `run` on `hosts` of
// `fabric`; nullopt for a row with an unknown type or size 0. All nullopt,
// with `why_not` set, when the collective has no model or a host is not in
// the fabric.
std::vector<std::optional<double>> predict_busbw(const Fabric& fabric, const std::vector<std::string>& hosts,
                                                 const NcclTestsRun& run, std::string& why_not);

struct BaselineOptions {
  double drop = 0.10;        // against the set's first run
  double model_drop = 0.15;  // against the model (see above)
  int64_t model_min_bytes = int64_t{64} << 20;
};

// One host set: its newest run against its baseline and the model.
struct SetVerdict {
  std::string test;
  std::vector<std::string> hosts;
  int64_t newest_run = 0;
  std::optional<int64_t> newest_snapshot;
  // Against the baseline (absent for a set with one run, or no common size).
  std::optional<int64_t> baseline_run, baseline_snapshot;
  int64_t size = 0;  // the size compared with the baseline
  double baseline_busbw = 0, newest_busbw = 0;
  bool slower_than_baseline = false;
  // Against the model (absent when no row of the newest run is predicted
  // at model_min_bytes or more).
  int64_t model_size = 0;
  std::optional<double> model_busbw;
  double measured_at_model_size = 0;
  bool slower_than_model = false;

  bool slow() const { return slower_than_baseline || slower_than_model; }
};

enum class CauseKind { Host, Cable, FabricChange };
const char* name(CauseKind kind);  // "host", "cable", "fabric"

struct LikelyCause {
  CauseKind kind = CauseKind::Host;
  std::string subject;  // the host, the cable ("a:port <-> b:port"), "snapshot A -> B"
  std::string why;      // one sentence, as `topoctl baseline check` prints it
};

struct BaselineCheck {
  std::vector<SetVerdict> sets;  // sets with something to compare, by (test, hosts)
  std::vector<LikelyCause> causes;
  size_t slow() const;
};

// Judges every host set of `runs` (oldest first, as the store lists them).
// `snapshots` holds the fabrics the runs name (NcclRunRecord::snapshot_id);
// a run whose snapshot is missing gives no cables and no fabric change.
BaselineCheck check_baselines(const std::vector<NcclRunRecord>& runs, const std::map<int64_t, Fabric>& snapshots,
                              const BaselineOptions& options = {});

}  // namespace topo
