// The first stage of an estimate: the traffic pattern of a collective, who
// sends how much to whom, before any routing.
//
// An allocation's hosts are numbered by their position in it (0..N-1), a
// host's ports as PathIndex::ports() lists them. A pattern is written as
// the bytes every port sends into its leaf and receives from it, and the
// bytes that leave a leaf switch for a receiving port: the part routing
// decides (routes.h). Sizes are per unit: a flow between two hosts carries
// `flow_bytes`, so that one pattern serves any message size.
#pragma once

#include <span>
#include <utility>
#include <vector>

#include "comm_model/collective.h"
#include "comm_model/double_binary_tree.h"
#include "comm_model/paths.h"

namespace topo {

// A GPU slot's way out of a host: an HCA port, its rail and how many of the
// host's GPUs send through it.
struct Lane {
  int port;
  int gpus;
  int rail;
};

// The hosts of a collective and their lanes (one flat array, so that a
// thousand hosts cost one allocation).
struct Allocation {
  std::vector<int> host;  // host index (PathIndex::host_index) by position
  std::vector<int> lane_begin{0};
  std::vector<Lane> lane;
  int gpus_per_host = 1;

  int size() const { return static_cast<int>(host.size()); }
  std::span<const Lane> lanes(int i) const {
    return {lane.data() + lane_begin[i], static_cast<size_t>(lane_begin[i + 1] - lane_begin[i])};
  }
};

// `hosts` running `gpus` GPUs each. GPU g of a host uses the HCA hwloc
// found closest to it, else port g*H/G of its H ports. Throws
// std::invalid_argument for a node that is not a host or a host listed
// twice, FabricError for a host of a multi-host allocation with no port.
Allocation allocate(const PathIndex& index, std::span<const NodeId> hosts, int gpus);

struct Traffic {
  std::vector<int> offset;       // port slot of position i, port p: offset[i] + p
  std::vector<double> up, down;  // bytes into and out of the leaf, by port slot
  struct Crossing {
    int leaf;  // the sending port's leaf (PathIndex::leaves())
    int host;  // the receiving port: position and port; -1 when summed per leaf
    int port;
    double bytes;
    int from = -1, from_port = -1;  // the sending port, when one port sends it all
    int to_leaf = -1;               // the receiving leaf, when summed per leaf (host -1)
  };
  std::vector<Crossing> crossings;  // through the leaf switch, to a port
  double flow_bytes = 1;            // bytes one host-to-host flow carries
};

// No bytes yet on any port of the allocation's hosts: what every pattern
// below starts from.
Traffic empty_traffic(const PathIndex& index, const Allocation& al);

// Bytes one edge of a ring (or chain, for Broadcast) carries per run: the
// whole collective's traffic between two neighbours.
double ring_edge_bytes(Collective c, int ranks, double bytes);

// Every position sends `bytes` to the next, the last back to the first
// (not for a chain). A flow between hosts splits over the sender's lanes by
// their GPUs and lands on the receiver's lane of the same rail (or the k-th
// lane when rails do not match), as NCCL's rail-matched rings do.
Traffic ring_traffic(const PathIndex& index, const Allocation& al, double bytes, bool chain = false);

// Point-to-point sends: for every (from, to) pair of positions, `from`
// sends `bytes` to `to`, split over its lanes and landing on the same rail
// as ring_traffic's flows do (a pipeline's stage boundaries).
Traffic pair_traffic(const PathIndex& index, const Allocation& al, std::span<const std::pair<int, int>> pairs,
                     double bytes);

// Both trees of NCCL's double binary tree, each edge both ways (reduce up,
// broadcast down), `bytes` per edge and direction.
Traffic tree_traffic(const PathIndex& index, const Allocation& al, const DoubleBinaryTree& tree, double bytes);

// AllToAll as point-to-point: every rank sends `per_rank` bytes to every
// other rank, with PXN (data for a GPU of another rail first hops over
// NVLink to the local GPU of that rail) or without. Summed in closed form
// per (leaf, receiving port), so a thousand hosts cost leaves x ports; with
// `per_leaf`, further per (leaf, receiving leaf), in the order the spread
// sums them, for a routing that never reads the receiving port (adaptive):
// a packed job then crosses leaves x leaves times instead.
Traffic alltoall_traffic(const PathIndex& index, const Allocation& al, double per_rank, bool pxn,
                         bool per_leaf = false);

// PXN needs at least two GPUs and every host to reach the same rails.
bool pxn_applies(const Allocation& al);

}  // namespace topo
