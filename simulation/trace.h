// A job trace: when each job arrived, how long it ran and how many GPUs it
// used, read from a CSV (the ITP traces in tests/fixtures/traces/itp),
// scaled to a larger fabric, or generated with a realistic size mix.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace topo {

struct TraceJob {
  std::string id;
  double submit_s = 0;    // seconds from the start of the trace
  double duration_s = 0;  // run time, as the trace recorded it
  int gpus = 0;
};

struct Trace {
  std::string source;          // file name, or the generator's spec
  std::vector<TraceJob> jobs;  // by submit time (stable for equal times)

  // GPU-seconds the jobs ask for over the span from the first submission
  // to the last: the average number of GPUs the trace keeps busy. 0 when
  // that span is empty (fewer than two distinct submission times).
  double offered_gpus() const;
};

// Reads "job_id,submission_time,duration,num_gpu" (header required; columns
// found by name, extra columns ignored; times in seconds). Throws ParseError
// (common/error.h) naming the file, line and column for a malformed row,
// a negative time or a GPU count below 1. Rows are sorted by submission.
Trace read_trace_csv(const std::string& path);

// Makes a trace fit a fabric of `fabric_gpus` GPUs, the documented way:
// 1. length: the first `max_jobs` jobs by submission (0 keeps all), taken
//    first so that the load set below holds for the jobs kept;
// 2. sizes: every job's GPU count times `gpu_factor`, rounded, at least 1
//    and capped at the fabric, so the size mix keeps its shape on a larger
//    fabric;
// 3. load: the gaps between submissions are compressed or stretched by one
//    factor (the first submission stays) so that offered_gpus() becomes
//    `load` x fabric_gpus; 0 keeps the times, as does a trace whose jobs
//    all arrive at once.
// Durations are never changed. Throws std::invalid_argument for
// fabric_gpus < 1, gpu_factor <= 0 or load < 0.
struct TraceScaling {
  double gpu_factor = 1;
  double load = 0;
  size_t max_jobs = 0;
};
Trace scale_trace(Trace trace, int fabric_gpus, const TraceScaling& scaling);

// A synthetic trace: Poisson arrivals at the rate that offers `load` x
// fabric_gpus (the gaps scaled so the offered load is exact; the first job
// arrives at 0), a size mix like production GPU clusters (the ITP mix: 90%
// of jobs 1-8 GPUs; plus a tail of 128-4,096 GPU jobs; sizes larger than the
// fabric are not drawn) and log-normal run times whose median grows with
// size. Deterministic for a given seed on every platform (no
// std::*_distribution). Throws std::invalid_argument for fabric_gpus < 1,
// load <= 0, median_duration_s <= 0 or more than kMaxGeneratedJobs jobs.
//
// Ten million jobs and their replay reach 1.7 GB in 20 s; a hundred million
// passed 4.6 GB, and a billion failed to allocate.
inline constexpr size_t kMaxGeneratedJobs = 10'000'000;
struct TraceShape {
  size_t jobs = 1000;
  double load = 0.9;
  uint64_t seed = 1;
  double median_duration_s = 1800;
};
Trace generate_trace(int fabric_gpus, const TraceShape& shape);

}  // namespace topo
