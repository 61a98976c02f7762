#include "plugin/engine/nccl_hints.h"

namespace topo {

NcclHints nccl_hints(const NcclSiteHints& site, const Routing& routing, int leaves) {
  NcclHints out;
  if (site.gid_index >= 0) out.emplace_back("NCCL_IB_GID_INDEX", std::to_string(site.gid_index));
  if (site.traffic_class >= 0) out.emplace_back("NCCL_IB_TC", std::to_string(site.traffic_class));
  if (!site.socket_ifname.empty()) out.emplace_back("NCCL_SOCKET_IFNAME", site.socket_ifname);
  if (!site.ib_hca.empty()) out.emplace_back("NCCL_IB_HCA", site.ib_hca);
  if (routing.is_ecmp() && leaves > 1 && site.ecmp_qps > routing.qps)
    out.emplace_back("NCCL_IB_QPS_PER_CONNECTION", std::to_string(site.ecmp_qps));
  return out;
}

const std::vector<std::string>& nccl_hint_names() {
  static const std::vector<std::string> names = {"NCCL_IB_GID_INDEX", "NCCL_IB_TC", "NCCL_SOCKET_IFNAME", "NCCL_IB_HCA",
                                                 "NCCL_IB_QPS_PER_CONNECTION"};
  return names;
}

}  // namespace topo
