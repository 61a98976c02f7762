// Live discovery in a build without it (TOPO_LIVE_DISCOVERY=OFF: no
// rdma-core, no hwloc). Every entry point of ibnetdisc.h and
// hwloc_affinity.h is here, so the model, the placement, the simulator and
// topoctl build and link from files alone; each says what is missing when
// called.
#include <fmt/format.h>

#include "discovery/hwloc_affinity.h"
#include "discovery/ibnetdisc.h"

namespace topo {
namespace {

std::string without_rdma_core(std::string_view what) {
  return fmt::format("{}: built without live discovery (TOPO_LIVE_DISCOVERY=OFF: no rdma-core)", what);
}

std::string without_hwloc(std::string_view what) {
  return fmt::format("{}: built without live discovery (TOPO_LIVE_DISCOVERY=OFF: no hwloc)", what);
}

}  // namespace

Fabric discover_ibnetdisc(const IbnetdiscOptions&, const HostNaming&) {
  throw DiscoveryError(without_rdma_core("libibnetdisc discovery"));
}

Fabric load_ibnetdisc_cache(const std::string& path, const HostNaming&) {
  throw DiscoveryError(without_rdma_core("libibnetdisc cache " + path));
}

Routing read_lfts_live(const IbnetdiscOptions&, const Fabric&) {
  throw DiscoveryError(without_rdma_core("reading forwarding tables live"));
}

NodeAffinity read_hwloc_xml(const std::string& path) { throw HwlocError(without_hwloc("hwloc export " + path)); }

NodeAffinity read_hwloc_xml_text(std::string_view, const std::string& filename) {
  throw HwlocError(without_hwloc("hwloc export " + filename));
}

NodeAffinity read_hwloc_live() { throw HwlocError(without_hwloc("reading this machine through hwloc")); }

size_t attach_hwloc_dir(Fabric&, const std::string& dir) { throw HwlocError(without_hwloc("hwloc exports in " + dir)); }

}  // namespace topo
