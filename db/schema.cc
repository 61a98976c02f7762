#include "db/schema.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <stdexcept>
#include <string_view>
#include <thread>

#include <fmt/format.h>

namespace topo {
namespace {

// migrations[n] brings version n to n + 1. Append, never edit: databases in
// the field have already run the earlier ones.
constexpr std::array<std::string_view, kSchemaVersion> migrations = {
    // 0 -> 1: fabric snapshots.
    R"sql(
CREATE TABLE snapshot (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  taken_at       TEXT NOT NULL,
  source         TEXT NOT NULL,
  host_pattern   TEXT NOT NULL,
  hosts          INTEGER NOT NULL,
  hcas           INTEGER NOT NULL,
  switches       INTEGER NOT NULL,
  leaves         INTEGER NOT NULL,
  spines         INTEGER NOT NULL,
  cores          INTEGER NOT NULL,
  links          INTEGER NOT NULL,
  pods           INTEGER NOT NULL,
  rails          INTEGER NOT NULL,
  rail_optimized INTEGER NOT NULL,
  faults         INTEGER NOT NULL
);
CREATE TABLE host (
  snapshot_id INTEGER NOT NULL REFERENCES snapshot(id),
  ordinal     INTEGER NOT NULL,
  name        TEXT NOT NULL,
  PRIMARY KEY (snapshot_id, ordinal)
) WITHOUT ROWID;
CREATE TABLE gpu (
  snapshot_id INTEGER NOT NULL REFERENCES snapshot(id),
  host        TEXT NOT NULL,
  gpu_index   INTEGER NOT NULL,
  name        TEXT NOT NULL,
  pci_bus     TEXT NOT NULL,
  numa        INTEGER NOT NULL,
  closest_hca TEXT NOT NULL,
  rail        INTEGER NOT NULL,
  PRIMARY KEY (snapshot_id, host, gpu_index)
) WITHOUT ROWID;
CREATE TABLE hca (
  snapshot_id INTEGER NOT NULL REFERENCES snapshot(id),
  ordinal     INTEGER NOT NULL,
  node_id     TEXT NOT NULL,
  description TEXT NOT NULL,
  host        TEXT NOT NULL,
  device      TEXT NOT NULL,
  rail        INTEGER NOT NULL,
  guid        INTEGER NOT NULL,
  ports       INTEGER NOT NULL,
  PRIMARY KEY (snapshot_id, ordinal)
) WITHOUT ROWID;
CREATE TABLE switch (
  snapshot_id INTEGER NOT NULL REFERENCES snapshot(id),
  ordinal     INTEGER NOT NULL,
  node_id     TEXT NOT NULL,
  name        TEXT NOT NULL,
  guid        INTEGER NOT NULL,
  ports       INTEGER NOT NULL,
  level       TEXT NOT NULL,
  pod         INTEGER NOT NULL,
  down_gbps   REAL NOT NULL,
  up_gbps     REAL NOT NULL,
  PRIMARY KEY (snapshot_id, ordinal)
) WITHOUT ROWID;
CREATE TABLE link (
  snapshot_id INTEGER NOT NULL REFERENCES snapshot(id),
  ordinal     INTEGER NOT NULL,
  a_node      TEXT NOT NULL,
  a_port      INTEGER NOT NULL,
  b_node      TEXT NOT NULL,
  b_port      INTEGER NOT NULL,
  width       TEXT NOT NULL,
  speed       TEXT NOT NULL,
  gbps        REAL NOT NULL,
  state       TEXT NOT NULL,
  tier        TEXT NOT NULL,
  expected    TEXT NOT NULL,
  degraded    INTEGER NOT NULL,
  PRIMARY KEY (snapshot_id, ordinal)
) WITHOUT ROWID;
)sql",
    // 1 -> 2: where the Slurm plugin placed each job, and why.
    R"sql(
CREATE TABLE placement (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id      INTEGER NOT NULL,
  placed_at   TEXT NOT NULL,
  snapshot_id INTEGER,
  hosts       TEXT NOT NULL,
  ring_order  TEXT NOT NULL,
  profile     TEXT NOT NULL,
  estimate_s  REAL NOT NULL,
  ideal_s     REAL NOT NULL,
  reasons     TEXT NOT NULL,
  fallback    INTEGER NOT NULL,
  fallback_why TEXT NOT NULL
);
CREATE INDEX placement_job ON placement(job_id, id);
)sql",
    // 2 -> 3: how the fabric routes, and the LIDs its tables are indexed by.
    // Snapshots saved before keep the defaults: adaptive, no LIDs.
    R"sql(
ALTER TABLE snapshot ADD COLUMN routing TEXT NOT NULL DEFAULT 'adaptive';
ALTER TABLE snapshot ADD COLUMN routing_engine TEXT NOT NULL DEFAULT '';
ALTER TABLE snapshot ADD COLUMN routing_emulated INTEGER NOT NULL DEFAULT 0;
ALTER TABLE snapshot ADD COLUMN routing_source TEXT NOT NULL DEFAULT '';
ALTER TABLE hca ADD COLUMN lid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE switch ADD COLUMN lid INTEGER NOT NULL DEFAULT 0;
CREATE TABLE lft (
  snapshot_id INTEGER NOT NULL REFERENCES snapshot(id),
  switch      INTEGER NOT NULL,
  ports       BLOB NOT NULL,
  PRIMARY KEY (snapshot_id, switch)
) WITHOUT ROWID;
)sql",
    // 3 -> 4: port counters read over time, and nccl-tests runs with the
    // model's prediction beside them.
    R"sql(
CREATE TABLE health_collection (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  snapshot_id INTEGER NOT NULL REFERENCES snapshot(id),
  taken_at    TEXT NOT NULL,
  taken_ms    INTEGER NOT NULL,
  source      TEXT NOT NULL,
  ports       INTEGER NOT NULL,
  unanswered  TEXT NOT NULL
);
CREATE INDEX health_collection_snapshot ON health_collection(snapshot_id, id);
CREATE TABLE port_sample (
  collection_id   INTEGER NOT NULL REFERENCES health_collection(id),
  node            TEXT NOT NULL,
  port            INTEGER NOT NULL,
  symbol_errors   INTEGER NOT NULL,
  link_recoveries INTEGER NOT NULL,
  link_downed     INTEGER NOT NULL,
  rcv_errors      INTEGER NOT NULL,
  xmit_discards   INTEGER NOT NULL,
  xmit_wait       INTEGER NOT NULL,
  xmit_data       INTEGER NOT NULL,
  rcv_data        INTEGER NOT NULL,
  xmit_packets    INTEGER NOT NULL,
  rcv_packets     INTEGER NOT NULL,
  extended        INTEGER NOT NULL,
  PRIMARY KEY (collection_id, node, port)
) WITHOUT ROWID;
CREATE TABLE nccl_run (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  imported_at  TEXT NOT NULL,
  ran_at       TEXT NOT NULL,
  snapshot_id  INTEGER,
  file         TEXT NOT NULL,
  job_id       INTEGER,
  test         TEXT NOT NULL,
  nccl_version TEXT NOT NULL,
  ranks        INTEGER NOT NULL,
  hosts        TEXT NOT NULL,
  devices      TEXT NOT NULL,
  avg_busbw    REAL NOT NULL
);
CREATE INDEX nccl_run_hosts ON nccl_run(hosts, test, id);
CREATE TABLE nccl_result (
  run_id      INTEGER NOT NULL REFERENCES nccl_run(id),
  ordinal     INTEGER NOT NULL,
  size        INTEGER NOT NULL,
  count       INTEGER NOT NULL,
  type        TEXT NOT NULL,
  redop       TEXT NOT NULL,
  root        INTEGER NOT NULL,
  oop_time_us REAL NOT NULL,
  oop_algbw   REAL NOT NULL,
  oop_busbw   REAL NOT NULL,
  ip_time_us  REAL NOT NULL,
  ip_algbw    REAL NOT NULL,
  ip_busbw    REAL NOT NULL,
  model_busbw REAL,
  PRIMARY KEY (run_id, ordinal)
) WITHOUT ROWID;
)sql",
    // 4 -> 5: NIC counters (ethtool -S) beside the port counters. Every
    // earlier collection is a port counter one.
    R"sql(
ALTER TABLE health_collection ADD COLUMN kind TEXT NOT NULL DEFAULT 'port';
CREATE TABLE nic (
  collection_id INTEGER NOT NULL REFERENCES health_collection(id),
  host          TEXT NOT NULL,
  iface         TEXT NOT NULL,
  taken_ms      INTEGER NOT NULL,
  PRIMARY KEY (collection_id, host, iface)
) WITHOUT ROWID;
CREATE TABLE nic_counter (
  collection_id INTEGER NOT NULL,
  host          TEXT NOT NULL,
  iface         TEXT NOT NULL,
  counter       TEXT NOT NULL,
  value         INTEGER NOT NULL,
  PRIMARY KEY (collection_id, host, iface, counter),
  FOREIGN KEY (collection_id, host, iface) REFERENCES nic(collection_id, host, iface)
) WITHOUT ROWID;
)sql",
    // 5 -> 6: NVLink domains. Earlier snapshots have none (an empty
    // generation).
    R"sql(
ALTER TABLE snapshot ADD COLUMN nvlink_generation TEXT NOT NULL DEFAULT '';
ALTER TABLE snapshot ADD COLUMN nvlink_gbytes REAL NOT NULL DEFAULT 0;
ALTER TABLE snapshot ADD COLUMN nvlink_max_hosts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE snapshot ADD COLUMN nvlink_max_gpus INTEGER NOT NULL DEFAULT 0;
ALTER TABLE snapshot ADD COLUMN nvlink_source TEXT NOT NULL DEFAULT '';
CREATE TABLE nvlink_host (
  snapshot_id  INTEGER NOT NULL REFERENCES snapshot(id),
  host         TEXT NOT NULL,
  cluster_uuid TEXT NOT NULL,
  clique_id    TEXT NOT NULL,
  claimed      INTEGER NOT NULL,
  PRIMARY KEY (snapshot_id, host)
) WITHOUT ROWID;
CREATE TABLE nvlink_gpu (
  snapshot_id  INTEGER NOT NULL,
  host         TEXT NOT NULL,
  ordinal      INTEGER NOT NULL,
  pci_bus      TEXT NOT NULL,
  state        TEXT NOT NULL,
  status       TEXT NOT NULL,
  clique_id    TEXT NOT NULL,
  cluster_uuid TEXT NOT NULL,
  PRIMARY KEY (snapshot_id, host, ordinal),
  FOREIGN KEY (snapshot_id, host) REFERENCES nvlink_host(snapshot_id, host)
) WITHOUT ROWID;
)sql",
    // 6 -> 7: why the engine held a job back before it started. Earlier
    // placements have no reason stored.
    R"sql(
ALTER TABLE placement ADD COLUMN deferred_why TEXT NOT NULL DEFAULT '';
)sql",
};

// Refuses files that are not ours; returns the schema version. One
// statement, so one read snapshot: another process may be creating the
// schema at this very moment.
int check_ours(const Connection& c) {
  // The first read of the file: a file that is not SQLite fails here.
  Statement s = c.prepare(
      "SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version), "
      "(SELECT count(*) FROM sqlite_schema)",
      "cannot read the database");
  s.step();
  int64_t app = s.column_int(0), version = s.column_int(1), tables = s.column_int(2);
  if (app != 0 && app != kApplicationId)
    throw DbError(DbErrorKind::NotOurs, c.path(),
                  fmt::format("an SQLite database of another application (application_id {:#x}), not a "
                              "topo-aware snapshot database",
                              static_cast<uint32_t>(app)));
  if (app == 0 && tables > 0)
    throw DbError(
        DbErrorKind::NotOurs, c.path(),
        fmt::format("an SQLite database with {} tables of its own, not a topo-aware snapshot database", tables));
  return static_cast<int>(version);
}

void check_version(const Connection& c, int version) {
  if (version > kSchemaVersion)
    throw DbError(DbErrorKind::SchemaTooNew, c.path(),
                  fmt::format("schema version {} is newer than this build knows (up to {}); use a newer "
                              "topo-aware to read it",
                              version, kSchemaVersion));
  if (version < 0)
    throw DbError(DbErrorKind::Corrupt, c.path(), fmt::format("schema version {} is not valid", version));
}

// Switching a new database to WAL needs the exclusive lock. SQLite reports
// a conflict at once rather than through the busy handler (the pragma holds
// a read lock it would have to upgrade), so two processes creating the same
// database would fail; retry within the busy timeout instead.
std::string switch_to_wal(Connection& c) {
  const auto deadline = std::chrono::steady_clock::now() + c.busy_timeout();
  for (auto pause = std::chrono::milliseconds(1);; pause = std::min(pause * 2, std::chrono::milliseconds(50))) {
    try {
      Statement wal = c.prepare("PRAGMA journal_mode = WAL", "cannot switch to write-ahead logging");
      return wal.step() ? wal.column_text(0) : "";
    } catch (const DbError& e) {
      if (e.kind() != DbErrorKind::Locked || std::chrono::steady_clock::now() >= deadline) throw;
    }
    std::this_thread::sleep_for(pause);
  }
}

}  // namespace

int schema_version(const Connection& c) {
  return static_cast<int>(c.query_int("PRAGMA user_version", "cannot read the schema version"));
}

void prepare_schema(Connection& c) { prepare_schema(c, kSchemaVersion); }

void check_schema(const Connection& c) {
  int version = check_ours(c);
  check_version(c, version);
  if (version == 0)
    throw DbError(DbErrorKind::SchemaTooOld, c.path(),
                  "an empty database, opened read-only: a writer (topoctl discover, the plugin) creates the schema");
  if (version < kSchemaVersion)
    throw DbError(DbErrorKind::SchemaTooOld, c.path(),
                  fmt::format("schema version {} is older than this build's {}, opened read-only: a writer "
                              "(topoctl discover, the plugin) migrates it",
                              version, kSchemaVersion));
}

void open_schema(Connection& c) {
  if (c.access() == Access::ReadOnly)
    check_schema(c);
  else
    prepare_schema(c);
}

void prepare_schema(Connection& c, int target) {
  if (target < 1 || target > kSchemaVersion)
    throw std::invalid_argument(
        fmt::format("schema version {} is not one this build knows (1 to {})", target, kSchemaVersion));
  check_version(c, check_ours(c));

  // WAL: readers see the last committed snapshot while a writer writes.
  std::string mode = switch_to_wal(c);
  if (mode != "wal")
    throw DbError(DbErrorKind::Sqlite, c.path(),
                  fmt::format("cannot switch to write-ahead logging (journal mode stays '{}')", mode));
  // FULL: a committed snapshot survives a power cut, not only a crash.
  c.exec("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON", "cannot set the connection's pragmas");

  for (;;) {
    int version = schema_version(c);
    check_version(c, version);
    if (version >= target) return;
    Transaction tx(c, fmt::format("the schema migration to version {}", version + 1));
    // Another process may have migrated while we waited for the lock.
    if (schema_version(c) != version) continue;
    c.exec(migrations[static_cast<size_t>(version)],
           fmt::format("cannot migrate the schema to version {}", version + 1));
    if (version == 0)
      c.exec(fmt::format("PRAGMA application_id = {}", kApplicationId), "cannot mark the database as ours");
    c.exec(fmt::format("PRAGMA user_version = {}", version + 1),
           fmt::format("cannot record schema version {}", version + 1));
    tx.commit();
  }
}

}  // namespace topo
