// The layout of the snapshot database and the migrations that build it.
//
// A database is marked as ours by PRAGMA application_id and carries its
// schema version in PRAGMA user_version. Migration N brings version N to
// N+1, each in its own transaction together with the version bump, so a
// crash between two migrations leaves a database at a known version. A
// database at a version this build does not know is refused, never touched.
//
// Version 1, one row set per snapshot; nothing is ever updated or deleted:
//
//   snapshot  id INTEGER PRIMARY KEY AUTOINCREMENT (never reused), taken_at
//             (UTC ISO-8601, "2025-01-31T12:00:00Z"), source, host_pattern
//             ("" = default "<host> <device>"), counts: hosts, hcas,
//             switches, leaves, spines, cores, links, pods, rails,
//             rail_optimized (0/1), faults
//   host      (snapshot_id, ordinal) name
//   gpu       (snapshot_id, host, gpu_index) name, pci_bus, numa,
//             closest_hca, rail
//   hca       (snapshot_id, ordinal) node_id, description, host, device,
//             rail, guid, ports
//   switch    (snapshot_id, ordinal) node_id, name, guid, ports, level
//             ('leaf' / 'spine' / 'core' / 'unknown'), pod, down_gbps, up_gbps
//   link      (snapshot_id, ordinal) a_node, a_port, b_node, b_port, width
//             ('4x'), speed ('NDR', '100GbE'), gbps (0 unless Active), state
//             ('Active', 'Down', ...), tier ('host-leaf', 'leaf-spine',
//             'spine-core', 'other'), expected ('4xNDR'), degraded (0/1)
//
// Version 2 adds the Slurm plugin's records (db/placement_store.h):
//
//   placement id (grows), job_id, placed_at (UTC ISO-8601), snapshot_id
//             (NULL when no snapshot was used), hosts and ring_order
//             (comma-separated host names), profile, estimate_s, ideal_s,
//             reasons (one a line), fallback (0/1), fallback_why
//
// Version 3 adds how the fabric routes (fabric/routing.h) and the LIDs
// its tables are indexed by:
//
//   snapshot  + routing ('adaptive' / 'static'), routing_engine ('ftree',
//             ... or ''), routing_emulated (0/1), routing_source
//             ('opensm-dump:/path', 'emulated', ...)
//   hca       + lid (the HCA port's LID; 0 = none stored)
//   switch    + lid (port 0's LID)
//   lft       (snapshot_id, switch) ports: one switch's linear forwarding
//             table, a BLOB of one byte per destination LID (byte i is the
//             out port for LID i, 255 no path), `switch` being the switch's
//             ordinal. Only static snapshots have rows here.
//
// Version 4 adds fabric health (db/health_store.h) and nccl-tests
// baselines (db/nccl_baseline_store.h); nothing earlier changes:
//
//   health_collection  id (grows), snapshot_id (the snapshot the ports
//             were read against), taken_at (UTC ISO-8601), taken_ms (Unix
//             milliseconds, for rates between close collections), source
//             ('libibmad:mlx5_0'), ports (answered), unanswered (one
//             "<node>:<port>" a line)
//   port_sample (collection_id, node, port) the counters of one port as
//             read (health/port_counters.h), node being the Fabric vertex
//             id: symbol_errors, link_recoveries, link_downed, rcv_errors,
//             xmit_discards, xmit_wait, xmit_data and rcv_data (4-octet
//             words), xmit_packets, rcv_packets, extended (0/1); 64-bit
//             values stored bit for bit
//   nccl_run  id (grows), imported_at, ran_at (UTC ISO-8601), snapshot_id
//             (NULL when none), file, job_id (NULL unless given), test
//             ('all_reduce_perf'), nccl_version, ranks, hosts (sorted,
//             comma-separated: the host set), devices (one
//             "rank host gpu bus name" a line), avg_busbw (GB/s, as the
//             file's footer prints it)
//   nccl_result (run_id, ordinal) one row of the run's table: size
//             (bytes), count, type, redop, root, time_us, algbw, busbw
//             (GB/s) out of place and in place, model_busbw (GB/s, the
//             comm_model's prediction for the same hosts and size; NULL
//             when the collective has no model)
//
// Version 5 adds NIC counters of RoCE fabrics (health/ethtool_counters.h)
// to the same time series; nothing earlier changes:
//
//   health_collection + kind ('port': port counters, every collection
//             saved before; 'ethtool': NIC counters); for an ethtool
//             collection `ports` counts NICs and `unanswered` lists the
//             NICs that could not be read ("<host> <iface>" a line)
//   nic       (collection_id, host, iface) a NIC read in that collection,
//             taken_ms (when its host read it, Unix milliseconds; 0: at
//             the collection's time)
//   nic_counter (collection_id, host, iface, counter) value: the counters
//             the reader keeps, by their driver names, stored bit for bit
//
// Version 6 adds NVLink domains (fabric/nvlink_domain.h, db/nvlink_store.h);
// snapshots saved before have none:
//
//   snapshot  + nvlink_generation ('nvlink5', ...; '' = no domains given),
//             nvlink_gbytes (GB/s each way per GPU), nvlink_max_hosts,
//             nvlink_max_gpus (the bounds the domains were checked against),
//             nvlink_source (where those figures come from)
//   nvlink_host (snapshot_id, host) cluster_uuid, clique_id, claimed (0/1):
//             the domain the host claims; only hosts with a claim or GPUs
//   nvlink_gpu (snapshot_id, host, ordinal) pci_bus, state, status,
//             clique_id, cluster_uuid: each GPU's Fabric section as read
//
// Version 7 adds why the engine held a job back before placing it:
//
//   placement + deferred_why (the last reason the engine gave Slurm for
//             holding the job back, DeferAbove= or an NVLink domain to
//             wait for; '' when it never did, and for every row before)
//
// Snapshots saved before version 3 read as adaptive, and their LIDs are
// numbered afresh on load (FabricBuilder::finish()), as when first saved.
//
// `ordinal` is the node's position in the fabric graph (hosts, HCAs and
// switches share one sequence) or the cable's position among cables, so a
// snapshot rebuilds into the very same graph. Link ends are node ids, the
// stable identity of a node (GUID-based for InfiniBand). GUIDs are the
// 64-bit value stored bit for bit in SQLite's signed INTEGER. Words, not
// enum numbers, are stored so the tables read well in `sqlite3`.
#pragma once

#include <cstdint>

#include "db/connection.h"

namespace topo {

inline constexpr int kSchemaVersion = 7;
// "Topo", so that `file` and sqlite3 tell our databases from others.
inline constexpr int32_t kApplicationId = 0x546f706f;

// Sets the connection's pragmas (WAL, synchronous, foreign keys), checks the
// file is ours and brings it to kSchemaVersion. Throws DbError: NotADatabase,
// Corrupt, NotOurs, SchemaTooNew, Locked (a migration needs the write lock).
void prepare_schema(Connection& connection);
// The same, stopping at `version` (at most kSchemaVersion): a database as an
// older build left it, for the tests of the migrations that follow.
void prepare_schema(Connection& connection, int version);

// Read-only: checks the file is ours and at kSchemaVersion, changing
// nothing (no pragmas, no migration). Throws DbError as prepare_schema does,
// and SchemaTooOld for an older (or empty) database, which only a writer
// may migrate.
void check_schema(const Connection& connection);

// What a store does on opening: prepare_schema for a ReadWrite connection,
// check_schema for a ReadOnly one.
void open_schema(Connection& connection);

// The version the database is at.
int schema_version(const Connection& connection);

}  // namespace topo
