// Fabric health as Prometheus metrics, in the text exposition format
// (the node_exporter textfile collector reads it): the counters of every
// port as last collected, and each rated cable's error rate and XmitWait
// share between the last two collections; and the nccl-tests runs. Two more
// sources of tools/topoctl/metrics.h, which metrics_text() calls.
//
//   topo_aware_port_symbol_errors_total{switch="leaf01",port="3"} 12
//   topo_aware_port_symbol_errors_total{host="gpu001",hca="mlx5_0",port="1"} 0
//   topo_aware_cable_errors_per_hour{link="gpu001 mlx5_0:1 <-> leaf01:1"} 0.5
//
// RoCE NICs (health/nic_health.h), from the last two NIC collections:
//   topo_aware_nic_pause_frames_total{host="gpu03",nic="eth1",direction="rx"} 1523
//   topo_aware_nic_pause_frames_per_second{host=,nic=,direction=} 2.5e4
//   topo_aware_nic_paused_ratio{host=,nic=,direction=}   (where the NIC counts pause time)
//   topo_aware_nic_ecn_marked_packets_per_second{host=,nic=}, ..._cnp_sent_..., ..._cnp_handled_...
//   topo_aware_nic_discards_per_second{host=,nic=}
//   topo_aware_nic_degraded_by_counters{host=,nic=,finding="pause_storm"} 1
//
// Switch ports carry `switch` and `port`; HCA ports `host`, `hca` and
// `port`. Counters are the ports' own (they restart when a port resets);
// data counters are converted from 4-octet words to bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "db/nccl_baseline_store.h"
#include "fabric/fabric.h"
#include "health/nic_health.h"
#include "health/port_health.h"
#include "tools/topoctl/metrics.h"

namespace topoctl {

// From values: `newest` is the last collection (may be null: no port
// metrics), `health` the cables rated between the last two.
void health_metrics(Exposition& out, const topo::Fabric& fabric, const topo::CounterCollection* newest,
                    const std::vector<topo::CableHealth>& health, const topo::HealthThresholds& thresholds);

// From the database: the last two collections of snapshot `snapshot_id`,
// whose fabric is `fabric` (nothing is written when it has none). Throws
// DbError. `access` is how the database is opened (serve: ReadOnly).
void health_metrics(Exposition& out, const std::string& db_path, int64_t snapshot_id, const topo::Fabric& fabric,
                    const topo::HealthThresholds& thresholds = {}, const topo::NicThresholds& nic_thresholds = {},
                    topo::Access access = topo::Access::ReadWrite);

// From values: `newest` is the last NIC collection (may be null), `rates`
// the NICs rated between the last two.
void nic_metrics(Exposition& out, const topo::NicCollection* newest, const std::vector<topo::NicRates>& rates,
                 const topo::NicThresholds& thresholds);

// nccl-tests runs (db/nccl_baseline_store.h), per host set and test: the
// out-of-place bus bandwidth of the newest run and of the first (the
// baseline) at the newest run's largest size, and the model's there:
//   topo_aware_nccl_bus_bandwidth_bytes_per_second{test="all_reduce_perf",hosts="gpu[001-002]",run="newest"}
//   topo_aware_nccl_model_bus_bandwidth_bytes_per_second{test=,hosts=}
//   topo_aware_nccl_runs{test=,hosts=}
void baseline_metrics(Exposition& out, const std::vector<topo::NcclRunRecord>& runs);
void baseline_metrics(Exposition& out, const std::string& db_path, topo::Access access = topo::Access::ReadWrite);

}  // namespace topoctl
