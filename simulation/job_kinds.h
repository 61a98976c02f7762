// Which replayed jobs ask for NVLink segments and which use no GPUs at all:
// the two kinds of job that decide how well a cluster of NVLink domains
// (GB200/GB300 NVL72 racks) is shared, drawn per job like its profile.
//
// - Segments: tensor- and expert-parallel groups must stay inside one
//   domain, so such a job asks that every `segment` consecutive hosts of it
//   share one (Slurm's --segment, `--network=topo-aware,segment=N`; NeMo
//   sets SBATCH_SEGMENT_SIZE=8 so that each EP32 group of 4-GPU trays lands
//   in one block). A share of the multi-host GPU jobs asks for segments, of
//   a size drawn evenly among those in [segment_min, segment_max] that
//   divide the job's host count (none divides: no segments).
// - CPU-only jobs (preprocessing, evaluation, data loading) hold whole
//   hosts, as an exclusive job does, but use none of their GPUs or NVLink:
//   one held 64 GB200 trays across 9 of 12 domains and left 256 GPUs out of
//   reach of the queued jobs (marin PR #8249). A share of all jobs is
//   CPU-only, on as many hosts as its GPU count would have taken.
//
// The draws are pure functions of the job's id and the seed, each with a
// stream of its own, so every policy replays the same jobs of each kind.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace topo {

struct JobKinds {
  double cpu_only_share = 0;  // of all jobs, in [0, 1]
  double segment_share = 0;   // of multi-host GPU jobs, in [0, 1]
  int segment_min = 2;        // hosts
  int segment_max = 18;       // hosts: one NVL72 rack of 4-GPU trays
  uint64_t seed = 1;
};

// "" when the kinds make sense, else what is wrong with them (a share
// outside [0, 1], a segment size range that is empty or starts below 2).
std::string job_kinds_problem(const JobKinds& kinds);

// "2-18": the segment sizes, MIN-MAX or one size N; throws
// std::invalid_argument naming the text otherwise.
void parse_segment_sizes(std::string_view text, JobKinds& kinds);

// Whether the job with this id runs on CPUs only.
bool draw_cpu_only(const JobKinds& kinds, std::string_view job_id);

// The segment size the job with this id asks for on `hosts` hosts; 0 for
// none (a single host, not drawn, or no size in range divides `hosts`).
int draw_segment(const JobKinds& kinds, std::string_view job_id, int hosts);

// "CPU-only 10% of jobs, segments on 30% of multi-host GPU jobs (2-18
// hosts)": for a run's description; empty when neither is drawn.
std::string job_kinds_text(const JobKinds& kinds);

}  // namespace topo
