// The judge on a fabric with NVLink domains: what of a job's traffic stays
// on the scale-out network and what its NVLink carries, before the per-flow
// sharing (live_judge.h) shares the rest.
//
// Each of the job's collectives goes through the domain tier of the
// per-flow sharing (comm_model/domain_flows.h): ring edges inside a domain
// leave the network for NVLink, so a job inside one domain has no cable to
// share and its slowdown is 1 whatever runs beside it, and a job split over
// domains is priced on the network by its edges between domains. Its ideal
// and its time alone are taken over the same two tiers.
//
// Segments. A job that asked for segments (simulation/job_kinds.h) runs a
// tensor-parallel AllReduce inside each segment besides its profile's
// collectives: OutcomeOptions::segment_traffic times the judged message
// size each, all segments at once (the slowest sets the time), its ideal
// the segment whole in one domain over NVLink. A segment split over
// domains moves that AllReduce over the scale-out, on its edges between
// domains, shared per flow like any ring; a whole one never touches the
// network. The default (outcome.h, kSegmentTraffic): 28 bytes of
// tensor-parallel AllReduce per byte of the data-parallel gradients'.
// Megatron-LM runs two AllReduces of a layer's activations (b x s x h
// values) in the forward pass and two in the backward pass, per layer and
// micro-batch (Shoeybi et al. 2019, "Megatron-LM", section 3), and one
// AllReduce of the stage's gradients per step. GPT-3 175B as Narayanan et
// al. 2021 train it (SC21, "Efficient Large-Scale Language Model Training
// on GPU Clusters Using Megatron-LM", table 1: hidden 12288, sequence 2048,
// 96 layers, tensor 8, pipeline 8, 1536 GPUs, batch 1536; micro-batch 1
// assumed, so 64 micro-batches per pipeline): 4 x 64 x 12 layers x 2048 x
// 12288 = 7.7e10 activation values against 175e9 / 64 = 2.7e9 gradients per
// GPU, 28 to 1. A model with fewer micro-batches per step moves less:
// `--segment-traffic` sets it.
#pragma once

#include "simulation/live_judge.h"

namespace topo {

// route_collectives() on a fabric with domains: the job's collectives and
// its segments' tensor-parallel AllReduce through the domain tier, their
// ideal and alone times, the cables their network flows cross.
void route_on_domains(const PathIndex& paths, JudgedJob& r, const OutcomeOptions& options);

// AllToAll alone over its ideal on the job's hosts, with the domain tier
// (comm_model/domain_tier.h): 1 inside one domain.
double alltoall_slowdown_on_domains(const PathIndex& paths, const ScheduledJob& job, const Request& a2a,
                                    const ModelOptions& options);

}  // namespace topo
