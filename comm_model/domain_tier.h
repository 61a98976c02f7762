// The NVLink domain tier of the model: what a collective costs when some of
// its ranks share an NVLink domain (a GB200/GB300 NVL72 rack) and the rest
// meet over the scale-out fabric.
//
// The allocation's hosts are grouped by the domain they count in
// (fabric/nvlink_domain.h); a host in no domain is a group alone, whose GPUs
// meet over the host's own NVLink.
// - One group: every byte moves over NVLink. A ring over NVLink at the
//   per-GPU NVLink rate NCCL reaches.
// - Several groups, AllReduce, as NCCL runs it on such systems (NVLS/ring
//   inside the domain, then across domains over the rails, then inside
//   again): reduce-scatter inside each group over NVLink, then one
//   AllReduce per GPU slot across the groups over the network (GPU s of
//   the k-th host of every group in a ring: the same rail, so the ring stays
//   on the rail's leaves where it can), then all-gather inside over NVLink.
//   The network phase moves 2(D-1)/D of a 1/m shard per GPU (D groups, m
//   ranks in the smallest); AllGather and ReduceScatter run one phase of
//   each; Broadcast is a network chain, then NVLink.
// - AllToAll: the pairs inside a group over NVLink, the rest over the
//   network, at the same time; the slower sets the pace.
// The network phase is the comm_model's own estimate (estimate.h) of a ring
// over the hosts taken group by group in turn (the first host of every
// group, then the second, ...), on the snapshot's routes, beside the running
// jobs (`background`): its bus bandwidth, a host's lanes together, over
// the GPUs per host is what each GPU slot's cross-domain ring gets.
//
// Per-GPU NVLink rate: the generation's line rate (NvlinkSpec) times
// `nvlink_efficiency`. The default, 0.802, is NCCL's own figure for NVLink 5:
// 18 links of 40.1 GB/s (SM100_NVLINK_BW in NCCL's src/graph/topo.h, 721.8
// GB/s "maxBw" in its logs, github.com/NVIDIA/nccl/issues/1807) over 900
// GB/s.
//
// Against published NCCL figures on GB200 NVL72 (docs/placement.md, "How
// close to NCCL on NVL72"): 15% low in one rack, where NCCL's NVLS passes
// a ring's bound; 1.44 times high on 20 racks.
#pragma once

#include <span>
#include <vector>

#include "comm_model/estimate.h"

namespace topo {

// The allocation's hosts grouped by the NVLink domain they count in, groups
// in order of first appearance, hosts in their order; a host in no domain
// is a group alone (domain -1).
struct DomainGroups {
  std::vector<std::vector<NodeId>> hosts;
  std::vector<int> domain;
  size_t count() const { return hosts.size(); }
};
DomainGroups group_by_domain(const Fabric& fabric, std::span<const NodeId> hosts);

// The hosts group by group in turn: the first host of every group, then
// the second, and so on (groups shorter than others drop out).
std::vector<NodeId> interleave_groups(const DomainGroups& groups);

struct DomainModelOptions {
  ModelOptions model;
  double nvlink_efficiency = 0.802;
  // Per step over NVLink (NCCL's NVLink latency is about a microsecond).
  double nvlink_step_us = 1.0;
};

struct DomainEstimate {
  Estimate estimate;                // the whole collective: time, algbw and busbw as nccl-tests reports them
  int groups = 0;                   // domains (and lone hosts) the ranks span
  double nvlink_gbps = 0;           // per GPU, each way
  double nvlink_s = 0;              // the NVLink phases
  double network_s = 0;             // the network phase (0 inside one group)
  std::optional<Estimate> network;  // the cross-group ring's own estimate
};

// The per-GPU NVLink rate of the fabric's domains, each way, in Gb/s: the
// generation's line rate times the efficiency.
double nvlink_gbps(const Fabric& fabric, const DomainModelOptions& options);

// The whole collective over NVLink among `ranks` GPUs of one domain at
// `gbps` per GPU: a ring (AllToAll: each rank's pairs), with NVLink's step
// latency.
double nvlink_time_s(const Request& request, int ranks, double gbps, const DomainModelOptions& options);

// Throws like estimate(). A fabric without domains: every host is a group
// alone, so the network carries everything between hosts.
DomainEstimate estimate_with_domains(const PathIndex& index, std::span<const NodeId> hosts, const Request& request,
                                     const BackgroundLoad& background = {}, const DomainModelOptions& options = {});

}  // namespace topo
