// Synthetic fabrics for tests, benchmarks and what-if simulation.
//
// A spec is "<shape>:key=value,key=value,...":
//   leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2
//   railopt:hosts=16,rails=4,spines=2[,hosts_per_leaf=H]
//   clos3:pods=2,leaves_per_pod=2,hosts_per_leaf=4[,spines_per_pod=S,cores=C,oversub=O]
//   fattree:k=8
//   nvl72:racks=16[,rails=4,oversub=2,hosts_per_leaf=18,spines=S,hgx=H,trays=18,gpus=4,nvlink=nvlink5]
//   nvl36x2:racks=4[,...]      as nvl72 with 9 trays a rack, two racks a domain
// nvl72 is GB200/GB300 NVL72-like: racks of `trays` compute trays of `gpus`
// GPUs, one NVLink domain per rack (`domain_racks` racks per domain), each
// tray with one HCA per rail to a rail-optimized two-tier scale-out as
// railopt's (hosts_per_leaf trays of a rail per leaf, uplinks at `oversub`,
// by default one uplink from each leaf to each spine); `hgx=H` adds H
// 8-GPU hosts in no domain after the racks (a mixed cluster). Every host
// gets its GPUs (GPU g on rail g mod rails) and every GPU a completed
// NVLink fabric record in its domain (Fabric::set_nvlink).
// Keys every shape takes:
//   rate=4xNDR            rate of every cable (host and switch links alike)
//   naming=contiguous     host i on leaf i / hosts_per_leaf; `interleaved`
//                         puts host i on leaf i mod leaves, as racks cabled
//                         across rows
//   degrade=leaf02:9      the cable on that switch port runs at 1x (repeatable)
//   unplug=leaf02:9       the cable on that switch port is absent (repeatable)
//   down=leaf02:9         the cable on that switch port is there but its
//                         ports are Down (PortState): listed, carrying
//                         nothing, as a cable whose link did not come up
//                         (repeatable)
// Names: hosts gpu001.., switches leaf01.., spine01.., core01..; HCA
// descriptions "gpu001 mlx5_0" so the default host naming applies. Leaf
// ports 1..hosts_per_leaf face hosts, uplinks follow.
#pragma once

#include <string>
#include <string_view>

#include "fabric/fabric.h"

namespace topo {

// The largest fabric a spec may describe. 262,144 hosts (a leafspine of
// 4,096 leaves of 64 and 64 spines) take 12 s and 1 GB to build.
inline constexpr int kMaxSyntheticHcas = 1 << 20;
inline constexpr int kMaxSyntheticCables = 1 << 22;

// Throws FabricError naming the key that is unknown, missing or out of
// range, or the fabric's size when it passes the bounds above.
Fabric make_synthetic(std::string_view spec);

}  // namespace topo
