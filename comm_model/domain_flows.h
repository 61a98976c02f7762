// The NVLink domain tier of the per-flow sharing (ring_steps.h), as the
// replay's judge and `topoctl estimate --concurrent` take it: which of a
// collective's flows leave the scale-out network on a fabric with NVLink
// domains (fabric/nvlink_domain.h), and what they cost over NVLink.
//
// A ring edge between two hosts of one domain goes over NVLink: each GPU
// hands its chunk to the same GPU of the next host on its own NVLink, at the
// per-GPU rate of domain_tier.h (the generation's line rate times NCCL's
// efficiency). That link belongs to the host (no other job's flow crosses
// it), so it shares with nobody: it only bounds the ring's pace from below.
// An edge between domains, or to or from a host in no domain, stays on the
// network on its real routes, a part of the flow job as before.
// - A ring inside one domain leaves the network entirely: its time is the
//   NVLink ring's (domain_tier.h), alone, beside anything and ideally alike.
// - A ring across domains keeps only its edges between domains; its pace is
//   the slower of those (shared per flow with whatever runs beside it) and
//   NVLink. Its ideal: the network edges at the hosts' own line rate, and
//   never below the NVLink pace.
// - A collective that is not a ring (AllToAll, Broadcast's chain) inside
//   one domain runs over NVLink (domain_tier.h's figure); across domains it
//   stays whole on the network, its pairs inside a domain included: an
//   over-estimate of its load there. So does a ring under ECMP hashing,
//   which shares as one pattern (ring_steps.h).
// This is NCCL's flat ring over the domains, one ring through all ranks,
// not the hierarchical form `topoctl estimate` prices alone (domain_tier.h,
// reduce-scatter inside, a shard across, all-gather inside): the flat ring
// is what the judge's per-edge sharing can share cable by cable.
#pragma once

#include <span>
#include <vector>

#include "comm_model/domain_tier.h"
#include "comm_model/ring_steps.h"

namespace topo {

// Whether every host counts in one and the same NVLink domain.
bool in_one_domain(const Fabric& fabric, std::span<const NodeId> hosts);

// The job's collective as the per-flow sharing takes it (flow_job()), on a
// fabric with domains with its ring edges inside a domain taken off the
// network, and its alone and ideal times (`alone`) over both tiers; a
// collective all over NVLink has no parts. On a fabric without domains,
// flow_job()'s own. Throws like flow_job().
FlowJob domain_flow_job(const PathIndex& index, const NeighbourJob& job, const DomainModelOptions& options = {});

// share_by_flows() among the jobs that still have flows on the network;
// the others at their time alone. On a fabric with domains no job beats its
// time alone (its NVLink edges' pace). On one without, share_by_flows().
// `steps` as share_by_flows() takes it.
std::vector<Estimate> share_by_flows_with_domains(const PathIndex& index, std::span<const FlowJob* const> jobs,
                                                  double efficiency, bool steps = true);

// The collective on `hosts` beside the neighbours, all sharing per flow
// through the domain tier: `topoctl estimate --concurrent` on a fabric with
// domains. Its alone and ideal times are the tier's, `neighbours` counts
// the jobs with a network flow on a cable its network flows cross. Throws
// like estimate_by_flows().
Estimate estimate_by_flows_with_domains(const PathIndex& index, std::span<const NodeId> hosts, const Request& request,
                                        std::span<const NeighbourJob> neighbours,
                                        const DomainModelOptions& options = {});

// The directed cables the job's parts load, appended to `out`.
void flow_job_cables(const PathIndex& index, const FlowJob& job, std::vector<int>& out);

}  // namespace topo
