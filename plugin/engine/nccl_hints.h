// The NCCL settings a topo-aware job gets in its environment: the site's
// RoCE values from topo_aware.conf (engine_config.h, NcclSiteHints) and the
// one the fabric decides, NCCL_IB_QPS_PER_CONNECTION for a ring that
// crosses leaves under ECMP hashing. Pure: values in, values out; the
// engine (engine.h, topo_engine_nccl_hints) supplies the fabric's side.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "fabric/routing.h"
#include "plugin/engine/engine_config.h"

namespace topo {

// (NCCL variable, value) pairs, in a fixed order: NCCL_IB_GID_INDEX,
// NCCL_IB_TC, NCCL_SOCKET_IFNAME, NCCL_IB_HCA (the site's fallback),
// NCCL_IB_QPS_PER_CONNECTION; unset ones left out.
using NcclHints = std::vector<std::pair<std::string, std::string>>;

// `leaves` is how many leaves the job's hosts sit on (0 when unknown): a
// ring over more than one crosses leaves. The QP
// hint is given only under ECMP routing, and only when it raises the QPs
// the snapshot says the fabric's jobs use (Routing::qps).
NcclHints nccl_hints(const NcclSiteHints& site, const Routing& routing, int leaves);

// The names nccl_hints() may give, for a caller that clears stale ones.
const std::vector<std::string>& nccl_hint_names();

}  // namespace topo
