// The walk over a libibnetdisc fabric that every live reader shares: the
// discovery handle, and the names discovery/ibnetdisc.h gives nodes and
// vertices, so that what the LFT reader and the port counter reader find
// matches a discovered Fabric's ids. Internal to topology/.
#pragma once

#include <memory>
#include <string>

#include <infiniband/ibnetdisc.h>

#include "discovery/ibnetdisc.h"

namespace topo::ibnd_walk {

struct FabricDeleter {
  void operator()(ibnd_fabric_t* f) const { ibnd_destroy_fabric(f); }
};
using FabricHandle = std::unique_ptr<ibnd_fabric_t, FabricDeleter>;

// "S-<node guid>" or "H-<node guid>", as ibnetdiscover prints them.
std::string node_id(const ibnd_node_t* n);
// The node description without its padding; the id when it is empty.
std::string description(const ibnd_node_t* n);
// True when the port has a switch or CA at its far end.
bool is_cabled(const ibnd_port_t* port);
// The Fabric vertex id of a node's port: the node id, or "H-<guid>:<port>"
// for a CA with several cabled ports.
std::string vertex_id(const ibnd_node_t* n, int port);

// Discovers the fabric through `options` (checking for a simulator first);
// `ca` is set to the HCA used. Throws DiscoveryError.
FabricHandle discover_handle(const IbnetdiscOptions& options, std::string& ca);

}  // namespace topo::ibnd_walk
