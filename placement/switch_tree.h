// The fabric as placement walks it: pods, their leaves, each leaf's hosts in
// port order, and the health of each leaf's uplinks. Built once per fabric
// snapshot and shared by every placement on it (Fluxion keeps its resource
// graph the same way: the traversal is separate from the policy).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "comm_model/paths.h"
#include "fabric/fabric.h"

namespace topo {

class SwitchTree {
 public:
  explicit SwitchTree(const Fabric& fabric);

  struct Leaf {
    NodeId node = 0;
    int pod = 0;
    std::vector<NodeId> hosts;    // hosts whose home is this leaf, by leaf port
    std::vector<LinkId> uplinks;  // Active cables to the level above
    std::vector<LinkId> degraded_uplinks;
    double up_gbps = 0;
    double oversubscription = 0;
    double host_gbps = 0;  // its host-facing bandwidth over its hosts: what one host sends at
  };

  const Fabric& fabric() const { return *fabric_; }
  const PathIndex& paths() const { return *paths_; }
  std::span<const Leaf> leaves() const { return leaves_; }
  int pods() const { return pods_; }

  // The leaf a host belongs to for placement: its FabricIndex::home_leaf,
  // the leaf of its lowest rail with an Active cable (rail-optimized hosts
  // sit on one leaf per rail, all in the same group). -1 for a host with no
  // Active HCA cable.
  int home_leaf(NodeId host) const { return host < home_.size() ? home_[host] : -1; }
  // Position of the host on its home leaf, for rail-aligned ring order.
  int leaf_port(NodeId host) const { return host < port_.size() ? port_[host] : 0; }
  // The host's degraded HCA cables.
  std::span<const LinkId> degraded_cables(NodeId host) const;
  // Every HCA cable of the host.
  std::span<const LinkId> cables(NodeId host) const;
  // The leaf whose uplink the cable is (by Link::id), -1 for any other.
  int uplink_of(int cable) const { return cable >= 0 && cable < int(uplink_of_.size()) ? uplink_of_[cable] : -1; }
  // Whether both ends of the cable (by Link::id) are switches above the
  // leaves: spine to core, say.
  bool above_leaves(int cable) const { return cable >= 0 && cable < int(above_leaves_.size()) && above_leaves_[cable]; }

 private:
  const Fabric* fabric_;
  std::unique_ptr<PathIndex> paths_;
  std::vector<Leaf> leaves_;
  std::vector<int> home_, port_;
  std::vector<int> uplink_of_;      // by Link::id
  std::vector<char> above_leaves_;  // by Link::id
  std::vector<std::vector<LinkId>> cables_, degraded_;
  int pods_ = 0;
};

}  // namespace topo
