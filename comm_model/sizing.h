// The sizing arithmetic of data-parallel training, and the hypothetical
// allocations what-if questions are asked about.
//
// Each step, data parallelism AllReduces the gradients: parameters x bytes
// per element. A ring over N GPUs makes every GPU send (and receive)
// 2(N-1)/N of that; to hide it behind compute it must fit in the share of
// the step the overlap leaves it, which sets the bus bandwidth each GPU
// needs (nccl-tests busbw: comparable with a link's rate).
#pragma once

#include <span>
#include <vector>

#include "comm_model/collective.h"
#include "comm_model/paths.h"

namespace topo {

struct TrainingStep {
  double parameters = 0;
  Dtype dtype = Dtype::Bf16;
  int gpus = 0;
  double step_time_s = 0;
  double overlap = 0.5;  // share of the step time the gradient AllReduce may take, in (0, 1]
};

struct StepRequirement {
  double gradient_bytes = 0;          // the AllReduce size: parameters x bytes per element
  double bytes_per_gpu_per_step = 0;  // 2(N-1)/N x gradient_bytes
  double window_s = 0;                // step_time_s x overlap
  double required_gbps_per_gpu = 0;   // bytes_per_gpu_per_step / window_s, in Gb/s of bus bandwidth
};

// Throws std::invalid_argument naming the value that is out of range.
StepRequirement requirement(const TrainingStep& step);

// The first `count` hosts of the fabric that have an Active HCA cable, in
// fabric order. Throws FabricError when there are fewer.
std::vector<NodeId> first_hosts(const PathIndex& index, int count);

// `count` hosts spread as evenly as possible over `leaves` leaves, one leaf
// after the other, so that a ring in this order crosses each leaf boundary
// once. Hosts belong to the leaf of their first port (rail 0 on a
// rail-optimized fabric); the first leaves in fabric order with enough
// hosts are used. Throws FabricError when the fabric cannot supply them.
std::vector<NodeId> spread_over_leaves(const PathIndex& index, int count, int leaves);

// The least total HCA line rate of any of the hosts, in Gb/s: across hosts a
// ring's bus bandwidth cannot exceed it.
double least_host_hca_gbps(const PathIndex& index, std::span<const NodeId> hosts);

}  // namespace topo
