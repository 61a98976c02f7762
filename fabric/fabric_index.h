// The facts of one fabric snapshot that every layer looks up, in dense
// tables: hosts by id, each host's HCA ports with their cable and leaf,
// both ends of every cable, and the node behind every LID.
//
// One index is built per Fabric, by FabricBuilder::finish(), and travels
// with it (Fabric::index()). Everything that asks "which leaf is this host
// on", "which cable is on this port" or "who has this LID" reads it: the
// comm_model's PathIndex, placement's SwitchTree and Slurm baselines, the
// topology.conf writer. So a host's leaf means one thing everywhere.
//
// The index holds node ids and dense cable ids (Link::id), never edge
// descriptors or pointers, so a copy of the fabric carries a valid copy of
// its index. It is built in O(nodes + ports) plus sorting each host's HCAs.
//
// Two words, kept apart:
// - a host port is any HCA cable to a switch, whatever its state: the
//   cabling, as topology.conf and `leaves_of` describe it;
// - a routed port is a host port whose cable is Active with a rate: the
//   only ones traffic can take. A leaf is a switch with at least one routed
//   port, so a switch whose host cables are all down is no leaf to routing.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "fabric/nvlink_domain.h"

namespace topo {

class Fabric;

class FabricIndex {
 public:
  // The vertex type of FabricGraph (fabric.h), named here without it.
  using NodeId = std::size_t;

  FabricIndex() = default;
  // Reads a fabric whose cables have their ids. Throws FabricError when
  // two nodes carry the same LID.
  explicit FabricIndex(const Fabric& fabric);

  // ---- Hosts, by dense id: the position in Fabric::hosts().
  size_t host_count() const { return host_ports_begin_.empty() ? 0 : host_ports_begin_.size() - 1; }
  // -1 for a node that is not a host.
  int host_id(NodeId host) const { return host < host_id_.size() ? host_id_[host] : -1; }

  // One HCA cable of a host to a switch.
  struct HostPort {
    NodeId hca = 0;
    int rail = -1;           // the HCA's rail; -1 when its name carries none
    int cable = -1;          // Link::id
    NodeId leaf_switch = 0;  // the switch at the far end
    int leaf_port = 0;       // the port of that switch
    int leaf = -1;           // leaf id of that switch (leaves()), -1 when it is none
    bool routed = false;     // Active with a rate: traffic can take it
    double gbps = 0;         // line rate when routed, else 0
  };
  // Every host port, ordered by rail, then HCA name (Fabric::hcas_of), then
  // as the HCA's cables were added. Empty for a host with no cabled HCA.
  std::span<const HostPort> host_ports(int host) const {
    return {host_ports_.data() + host_ports_begin_[host],
            static_cast<size_t>(host_ports_begin_[host + 1] - host_ports_begin_[host])};
  }
  // The switches a host is cabled to, in host_ports() order, each once.
  std::vector<NodeId> switches_of(int host) const;

  // ---- Leaves: switches with a routed port, in Fabric::switches() order.
  std::span<const NodeId> leaves() const { return leaves_; }
  // -1 for a node that is not a leaf.
  int leaf_id(NodeId node) const { return node < leaf_id_.size() ? leaf_id_[node] : -1; }
  // The leaf of the host's first routed port (its lowest rail that can
  // carry traffic): where placement and the Slurm baselines count the
  // host. -1 when no port is routed.
  int home_leaf(int host) const { return home_leaf_[host]; }
  // The leaf of the host's first routed port on `rail`; -1 when none.
  int leaf_on_rail(int host, int rail) const;

  // ---- Cables, by Link::id.
  struct PortRef {
    NodeId node = 0;
    int port = 0;
  };
  size_t cable_count() const { return ends_.size(); }
  // {Link::end_a with port_a, Link::end_b with port_b}.
  const std::array<PortRef, 2>& cable_ends(int cable) const { return ends_[cable]; }
  // The cable on a port of a switch or HCA; -1 when none is cabled.
  int cable_at(NodeId node, int port) const;

  // ---- LIDs: a switch's (its port 0) and each HCA port's.
  std::optional<NodeId> node_by_lid(uint32_t lid) const;

  // ---- NVLink domains (nvlink_domain.h): domain -> hosts and host ->
  // domain, by host id. Empty until Fabric::set_nvlink() gives them.
  const NvlinkDomains& domains() const { return domains_; }

 private:
  friend class Fabric;
  // The constructor's stages, in this order (hosts read the leaves).
  void index_cables(const Fabric& fabric);
  void index_lids(const Fabric& fabric);
  void index_leaves(const Fabric& fabric);
  void index_hosts(const Fabric& fabric);

  std::vector<int> host_id_;           // by NodeId
  std::vector<int> host_ports_begin_;  // by host id, host_ports_ slice
  std::vector<HostPort> host_ports_;
  std::vector<int> home_leaf_;  // by host id
  std::vector<NodeId> leaves_;
  std::vector<int> leaf_id_;                         // by NodeId
  std::vector<std::array<PortRef, 2>> ends_;         // by cable id
  std::vector<uint32_t> port_begin_;                 // by NodeId, a slice of port_cable_
  std::vector<int> port_cable_;                      // cable id by (node, port), -1 uncabled
  std::vector<std::pair<uint32_t, NodeId>> by_lid_;  // sorted by LID
  NvlinkDomains domains_;
};

}  // namespace topo
