// The numbers NCCL's own cost model uses, as published in its source.
//
// Every constant here is a fact taken from NVIDIA NCCL 2.20.3,
// src/graph/tuning.cc (ncclTopoTuneModel and the tables above it); the code
// around them is ours. NCCL's latencies are in microseconds per step and
// already include the chunk pipelining of its kernels; its bandwidth
// refinements are factors on the bus bandwidth a protocol reaches.
//
// NCCL has no entries for our Hierarchical algorithm or for point-to-point
// (AllToAll): both move data over rings of point-to-point transfers, so they
// use the Ring entries. Left out on purpose: NCCL's per-channel caps (they
// need its channel count, which depends on the GPU model), the tree
// correction factors for medium sizes, and the "ring plateau" latency
// factor, which are empirical fits to particular machines.
#pragma once

#include "comm_model/collective.h"

namespace topo::nccl {

// Where a step's hop runs: NVLink or PCIe inside a host, or the network.
enum class Hw { NvLink, Pci, Net };

// baseLat[algorithm][protocol]: fixed cost of launching a collective, in us.
// tuning.cc 2.20.3: Tree { LL 6.8, LL128 14.0, Simple 0 },
//                   Ring { LL 6.6, LL128 14.0, Simple 8.4 }.
double base_latency_us(Algorithm a, Protocol p);

// hwLat[hw][algorithm][protocol]: latency of one step over that hardware, in us.
// tuning.cc 2.20.3:
//   NVLink  Tree { .6, 1.25, 28 }   Ring { .6, 1.9, 3.4 }
//   PCI     Tree { 1.0, 1.9, 28 }   Ring { 1.0, 2.5, 5.7 }
//   NET     Tree { 5.0, 8.5, 28 }   Ring { 2.7, 4.0, 14.0 }
double hw_latency_us(Hw hw, Algorithm a, Protocol p);

// Inter-host rings pay a network post per step even on NVLink steps:
// getNetOverhead() is 1 us on Intel hosts (2 on AMD), tripled for Simple
// (tuning.cc 2.20.3). We take the Intel figure.
double net_overhead_us(Protocol p);

// The share of the wire bandwidth a protocol delivers (tuning.cc 2.20.3):
//   Ring LL      1/4 across hosts or for AllReduce, else 1/3
//   Ring LL128   0.92 (120/128 payload) with 2+ GPUs per host, 0.7 with one
//   Tree         0.92, then LL x 1/3.8, LL128 x 120/128 (x 7/9 on one host)
//   Simple       1 (ring)
double bandwidth_factor(Collective c, Algorithm a, Protocol p, int hosts, int gpus_per_host);

// llMaxBws: the bus bandwidth LL tops out at, in GB/s (tuning.cc 2.20.3).
// One host: Hopper row, 87.7. Across hosts the row is chosen by CPU vendor;
// we take Intel's: 39.0 for two hosts, 20.4 for more.
double ll_max_busbw_gbytes(int hosts);

}  // namespace topo::nccl
