// How replayed jobs communicate: each multi-host job of a trace gets one
// communication profile, drawn from a mix of the kinds of training jobs.
//
// The default mix, allreduce=0.5,fsdp=0.2,alltoall=0.2,pipeline=0.1, is an
// assumption anchored on public figures, not a measurement of one cluster:
// - plain data parallelism (ring AllReduce of gradients) is still the most
//   common multi-GPU job in shared research clusters: Jeon et al., "Analysis
//   of Large-Scale Multi-Tenant GPU Clusters for DNN Training Workloads"
//   (USENIX ATC'19, Microsoft Philly) and Hu et al., "Characterization and
//   Prediction of Deep Learning Workloads in Large-Scale GPU Datacenters"
//   (SC'21, SenseTime Helios) describe data-parallel training as the
//   dominant multi-GPU pattern: half here;
// - sharded data parallelism (FSDP / ZeRO: AllGather and ReduceScatter per
//   layer) is the default way to train models past one GPU's memory
//   (Zhao et al., "PyTorch FSDP", VLDB 2023): a fifth;
// - mixture-of-experts jobs spend a large share of their step in AllToAll
//   (DeepSeek-V3 technical report, 2024: cross-node expert-parallel
//   AllToAll about as long as the computation it overlaps): a fifth;
// - pipeline parallelism (point to point between consecutive stages) mostly
//   runs beside the others in large jobs (Narayanan et al., "Efficient
//   Large-Scale Language Model Training on GPU Clusters Using
//   Megatron-LM", SC'21): a tenth.
// The draw is a pure function of the job's id and the seed, so every policy
// and every judge sees the same job with the same profile.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "placement/request.h"

namespace topo {

struct Mix {
  std::vector<std::pair<Profile, double>> shares;  // positive weights, summing to 1 once parsed
  uint64_t seed = 1;
};

inline constexpr std::string_view kDefaultMix = "allreduce=0.5,fsdp=0.2,alltoall=0.2,pipeline=0.1";

// "allreduce=0.5,fsdp=0.2,alltoall=0.2,pipeline=0.1": profile=weight pairs
// (allreduce, fsdp, alltoall, pipeline, mixed), weights positive, rescaled
// to sum to 1. Throws std::invalid_argument naming the bad item.
Mix parse_mix(std::string_view text, uint64_t seed = 1);

// The profile the job with this id gets.
Profile draw_profile(const Mix& mix, std::string_view job_id);

// A number in [0, 1) that is a pure function of the job's id and the seed,
// the same on every platform: every per-job draw of the replay (profiles,
// simulation/job_kinds.h) starts from it, each with a seed of its own.
double unit_draw(std::string_view job_id, uint64_t seed);

// "allreduce=0.50,fsdp=0.20,...": for reports.
std::string mix_text(const Mix& mix);

}  // namespace topo
