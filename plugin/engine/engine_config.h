// topo_aware.conf: what the Slurm plugin's engine is told by the admin.
// The format is described in plugin/engine/engine.h.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "common/host_naming.h"
#include "health/nic_health.h"
#include "health/port_health.h"
#include "placement/defer.h"
#include "placement/objective.h"
#include "placement/request.h"

namespace topo {

// The site's NCCL settings for RoCE, handed to every topo-aware job
// (plugin/engine/engine.h, topo_engine_nccl_hints): empty or -1 is unset, and NCCL
// then picks its own.
struct NcclSiteHints {
  std::string ib_hca;         // NCCL_IB_HCA where a node's hwloc data gives none
  int gid_index = -1;         // NCCL_IB_GID_INDEX: the RoCEv2 GID's index, 0-255
  int traffic_class = -1;     // NCCL_IB_TC: the lossless class's traffic class, 0-255
  std::string socket_ifname;  // NCCL_SOCKET_IFNAME: NCCL's bootstrap interfaces
  // NCCL_IB_QPS_PER_CONNECTION for a job whose ring crosses leaves on an
  // ECMP fabric (snapshot routing ecmp:QPS); 0: never set. A QP keeps one
  // path (its UDP source port is part of the switches' hash), so a ring
  // edge of one QP pins one uplink and two edges that hash onto the same
  // one halve each other; with QPS QPs an edge is spread over QPS draws and
  // a collision costs a fraction of it. Meta's RoCE paper (Gangidi et al.,
  // "RDMA over Ethernet for Distributed AI Training at Meta Scale",
  // SIGCOMM'24, the routing section) reports up to 40% better AllReduce
  // from more QPs per connection under ECMP. 4 takes most of that in our
  // model (README, the ECMP cost table: 64 hosts, ecmp:1 20.2 s, ecmp:4
  // 14.9 s, the even spread 14.6 s) while keeping the QPs, and the NIC
  // memory they hold, few. The hint only raises: a snapshot routed
  // ecmp:QPS with QPS >= this is left alone.
  int ecmp_qps = 4;
};

// RouteJobs=: forwarding tables for the running topo-aware jobs' rings
// (routing/job_routes.h), planned and handed to OpenSM's `file` engine by
// a thread of the engine's (plugin/engine/route_writer.h), never on the
// scheduler's path.
struct RouteSettings {
  bool enabled = false;        // RouteJobs
  std::string file;            // RouteFile: the file OpenSM's -U (lfts_file) names; absolute
  int interval_s = 30;         // RouteInterval: at most one apply per this many seconds
  std::string command;         // RouteCommand: run by /bin/sh after a write, e.g. kill -HUP of OpenSM
  int command_timeout_s = 60;  // RouteCommandTimeout: a command running longer fails the apply
  int max_changes = 0;         // RouteMaxChanges: table entries a plan may change (0: no cap)
  bool operator==(const RouteSettings&) const = default;
};

struct EngineConfig {
  std::string source;  // the file read, or "" for the defaults
  std::string db_path = "/var/lib/topo-aware/topo.db";
  std::string host_pattern;               // "" : Slurm NodeNames are the fabric's host names
  std::optional<HostPattern> host_regex;  // the whole NodeName must match
  Weights weights;
  Profile default_profile = Profile::AllReduce;
  bool strict = false;
  std::set<std::string> partitions;
  int candidates = 8;
  DeferRule defer;          // DeferAbove, DeferShare: off unless DeferAbove is set
  HealthThresholds health;  // HealthErrorsPerHour, HealthXmitWaitShare
  NcclSiteHints nccl;       // RoceHca, RoceGidIndex, RoceTrafficClass, SocketIfname, EcmpQpsPerConnection
  NicThresholds nic;        // HealthPausesPerSecond, HealthEcnOverMedian, HealthEcnMarksPerSecond
  RouteSettings routes;     // RouteJobs, RouteFile, RouteInterval, RouteCommand(Timeout), RouteMaxChanges

  // The fabric's name for a Slurm NodeName.
  std::string fabric_host(const std::string& node_name) const;
};

// Reads `path`. Throws ParseError(file, line, what) for a bad line and
// std::system_error when the file exists but cannot be read. A file that
// does not exist gives nullopt (the caller uses the defaults).
std::optional<EngineConfig> read_engine_config(const std::string& path);

}  // namespace topo
