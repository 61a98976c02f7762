// NIC counters for topoctl health: read on this host, and shown.
//
// The local read runs `ethtool -S IFACE` (no shell; ethtool as found on
// PATH) for each NIC and keeps the counters health/ethtool_counters.h
// keeps. Two other places add to it, both world-readable, no root needed:
//   /sys/class/net/IFACE/statistics/{rx,tx}_{bytes,dropped}, when ethtool
//     printed no _phy byte counter (veth, virtio, a driver without
//     ethtool -S);
//   /sys/class/net/IFACE/device/infiniband/DEV/ports/N/hw_counters/
//     {np_ecn_marked_roce_packets, np_cnp_sent, rp_cnp_handled,
//     rp_cnp_ignored}: the RDMA device's congestion counters, read when
//     the device has exactly one port (a ConnectX function per netdev).
// Without --iface, the NICs are the netdevs with an RDMA device
// (/sys/class/net/*/device/infiniband).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "health/ethtool_counters.h"
#include "health/nic_health.h"

namespace topoctl {

struct LocalNics {
  std::vector<topo::NicSample> nics;
  std::vector<std::string> unread;  // "host iface: why"
};

// `ifaces` empty: every RDMA netdev. Throws std::runtime_error when there
// is no NIC to read; a NIC that cannot be read is listed in `unread`.
LocalNics read_local_nics(const std::string& host, const std::vector<std::string>& ifaces);

// This host's short name (up to the first dot).
std::string local_host_name();

nlohmann::json nic_rates_json(const topo::NicRates& r);
nlohmann::json nic_finding_json(const topo::NicFinding& x);

// A table of the NICs that paused, marked or dropped (all with `all`).
void print_nic_rates(const std::vector<topo::NicRates>& rates, bool all);

}  // namespace topoctl
