// Versioned fabric snapshots in an SQLite database.
//
// Every discovery is saved as a new snapshot: its hosts (with their GPUs),
// HCAs, switches with their classification, cables with every attribute,
// the LIDs and how the fabric routes (static routing with every switch's
// forwarding table), plus where the fabric came from and when. Snapshots are numbered by an id
// that only grows; nothing ever rewrites or deletes an earlier one, so
// `topoctl diff 12 15` means the same thing next year.
//
// One writer, many readers: the database runs in WAL mode, so list() and
// load() see the last committed snapshot while another process is saving
// the next one. A save is one transaction: if it throws (disk full, a lock
// held too long, bad data) or the process dies half-way, no part of the new
// snapshot is visible and the earlier ones are untouched.
//
//   SnapshotStore store("/var/lib/topo-aware/fabric.db");
//   int64_t id = store.save(fabric);
//   Fabric before = store.load(store.resolve("-2"));
//
// Every failure is a DbError naming the database path (see db/error.h). The
// table layout is described in db/schema.h. A store is used from one thread
// at a time; open one per thread or process.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/connection.h"
#include "fabric/fabric.h"

namespace topo {

struct SnapshotInfo {
  int64_t id = 0;
  std::string taken_at;   // UTC ISO-8601, "2025-01-31T12:00:00Z"
  std::string source;     // Fabric::source(): "ibnetdiscover:/path", "synthetic:spec"
  FabricSummary summary;  // as classified when saved
  int switches = 0;       // all switches, whatever their level
  int faults = 0;         // Fabric::faults().size() when saved
  std::string routing;    // routing_name(): "adaptive", "static", "static:ftree"
};

class SnapshotStore {
 public:
  struct Options {
    // How long to wait for another connection's lock before DbError(Locked).
    std::chrono::milliseconds busy_timeout{5000};
    // ReadOnly: an existing database at this build's schema, never changed
    // (check_schema in db/schema.h); save() then fails.
    Access access = Access::ReadWrite;
  };

  // Opens the database at `path`, creating it when missing, and brings its
  // schema up to date. Throws DbError when the file is not an SQLite
  // database, is damaged, belongs to another application, was written by a
  // newer build, or is locked beyond the busy timeout while a migration waits.
  explicit SnapshotStore(std::string path);
  SnapshotStore(std::string path, Options options);

  const std::string& path() const { return connection_.path(); }
  int schema_version() const;

  // Saves `fabric` as a new snapshot and returns its id, taken now.
  int64_t save(const Fabric& fabric);

  // All snapshots, oldest first.
  std::vector<SnapshotInfo> list() const;
  // The newest snapshot's id; nullopt when there is none.
  std::optional<int64_t> latest() const;
  // One snapshot's row. Throws DbError(UnknownSnapshot) for an unknown id.
  SnapshotInfo info(int64_t id) const;

  // The id a reference names: "latest", "-N" (the Nth newest: -1 is the
  // latest, -2 the one before) or a plain id ("12"). Throws
  // DbError(UnknownSnapshot) when it names no snapshot or is not one of these.
  int64_t resolve(std::string_view reference) const;

  // Rebuilds snapshot `id` through FabricBuilder, in the graph order it was
  // saved in, with its source, host naming, GPUs, LIDs and routing (a
  // snapshot saved before routing was stored is adaptive). The classification is
  // computed afresh and checked against the one stored: a difference throws
  // DbError(Inconsistent) naming the first switch, HCA or link that differs.
  Fabric load(int64_t id) const;

 private:
  Connection connection_;
};

}  // namespace topo
