// Port counters read live, in a build without live discovery
// (TOPO_LIVE_DISCOVERY=OFF: no rdma-core): the entry point says so.
#include "health/port_counters.h"

namespace topo {

PortCounterRead read_port_counters_live(const IbnetdiscOptions&, const PortProgress&) {
  throw DiscoveryError(
      "reading port counters live: built without live discovery (TOPO_LIVE_DISCOVERY=OFF: no rdma-core)");
}

}  // namespace topo
