// Pipeline parallelism in the NVLink domain tier: what a job's stage
// boundaries cost when its hosts are split into pipeline stages, some
// boundaries inside an NVLink domain and some between domains.
//
// The job's hosts, in ring order, form S consecutive stages of N/S hosts
// (a stage is typically a domain or a part of one). At every boundary GPU
// slot s of the k-th host of stage i sends its activations to GPU slot s of
// the k-th host of stage i+1 (forward), which sends the gradients of the
// same size back (backward): point to point, on the same rail.
// - A pair of hosts in one domain meets over NVLink, each GPU on its own
//   link at the domain tier's per-GPU rate (domain_tier.h), plus one NVLink
//   step latency.
// - A pair in two domains (or with a host in none) meets over the scale-out
//   network on the snapshot's routes, beside the running jobs
//   (`background`): the comm_model's own stages (traffic.h, routes.h,
//   sharing.h), one sharer per boundary, since in a 1F1B steady state every
//   stage sends to the next at the same time; plus a switch latency per
//   switch on the longest path.
// A boundary takes the slower of its NVLink and network pairs, forward then
// backward. The total is the sum over the boundaries: what one micro-batch
// waits on the wires on its way through the pipeline and back.
//
// Ignored: the pipeline bubble, the overlap of sends with compute (the
// figures are the wire time alone), the tensor- and data-parallel
// collectives of the same job, and sends of different boundaries that run
// at different times in the schedule (all are priced as concurrent, so a
// cable two boundaries share counts against both).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "comm_model/domain_tier.h"

namespace topo {

// What one GPU sends the next stage per micro-batch by default: b x s x h
// elements of 2 bytes (fp16/bf16), the tensor Narayanan et al., "Efficient
// Large-Scale Language Model Training on GPU Clusters Using Megatron-LM"
// (SC21, section 4.1) say crosses a stage boundary, for their GPT-3 175B
// configuration (table 1: hidden size h = 12288; sequence length s = 2048
// for all their models) at micro-batch b = 1: 50,331,648 bytes (48 MiB).
// Megatron's scatter/gather optimization sends a tensor-parallel t-th of
// it per GPU: pass the size divided by t.
inline constexpr double kDefaultActivationBytes = 1.0 * 2048 * 12288 * 2;

struct PipelineRequest {
  int stages = 0;
  double activation_bytes = kDefaultActivationBytes;  // per GPU, boundary, micro-batch and direction
  int gpus_per_host = 1;
};

enum class BoundaryTier : uint8_t { NvLink, Network, Mixed };
std::string_view name(BoundaryTier tier);  // "nvlink", "network", "mixed"

struct StageBoundary {
  int from_stage = 0;  // to from_stage + 1
  BoundaryTier tier = BoundaryTier::NvLink;
  int pairs = 0;                     // host pairs: the k-th host of one stage and the k-th of the next
  int network_pairs = 0;             // of them, in two domains (or with a host in none)
  double bytes = 0;                  // forward and backward, every GPU of the stage, one micro-batch
  double nvlink_s = 0;               // one way, its pairs over NVLink (0 without any)
  double forward_s = 0;              // activations: the slower of NVLink and the network
  double backward_s = 0;             // gradients, the other way
  double seconds = 0;                // forward_s + backward_s
  double network_gbps_per_gpu = 0;   // the slowest way's network rate per GPU (0 without network pairs)
  std::string bottleneck;            // the cable that sets the network pace, "NVLink", or empty
  std::vector<int> shares_with;      // other boundaries (from_stage) with a flow on one of its directed cables
  bool shares_with_running = false;  // a cable of its network flows carries running jobs' load
};

struct PipelineEstimate {
  int stages = 0;
  int hosts_per_stage = 0;
  int gpus_per_host = 0;
  double activation_bytes = 0;
  double nvlink_gbps = 0;  // per GPU, each way (domain_tier.h)
  std::vector<StageBoundary> boundaries;
  double bytes = 0;    // over all boundaries
  double seconds = 0;  // over all boundaries
};

// Throws std::invalid_argument when the stages are fewer than one or do not
// divide the hosts, for a size that is not positive, and like estimate() for
// a bad allocation or a host with no path.
PipelineEstimate estimate_pipeline(const PathIndex& index, std::span<const NodeId> hosts,
                                   const PipelineRequest& request, const BackgroundLoad& background = {},
                                   const DomainModelOptions& options = {});

}  // namespace topo
