// Port counter collections in the snapshot database (schema 4).
//
// A collection is one reading of every port's counters
// (topology/port_counters.h), saved against the snapshot whose cables the
// ports belong to, with the time it was taken to the millisecond so that
// rates between two close readings stay exact. Collections of a snapshot
// form its time series; nothing is rewritten or deleted.
//
//   HealthStore store(db_path);
//   int64_t id = store.add(snapshot_id, samples, "libibmad:mlx5_0", {});
//   auto last_two = store.latest(snapshot_id, 2);   // newest last
//
// Every failure is a DbError naming the database path (db/error.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/connection.h"
#include "topology/port_health.h"

namespace topo {

struct CollectionInfo {
  int64_t id = 0;
  int64_t snapshot_id = 0;
  std::string taken_at;
  int64_t taken_ms = 0;
  std::string source;
  int ports = 0;
  std::vector<std::string> unanswered;
};

class HealthStore {
 public:
  // Opens (creating, migrating) the database as SnapshotStore does.
  explicit HealthStore(std::string path);

  // Saves one collection, taken now (or at `taken_ms` when given), against
  // snapshot `snapshot_id`, which must exist (DbError(UnknownSnapshot)).
  int64_t add(int64_t snapshot_id, const std::vector<PortSample>& samples, const std::string& source,
              const std::vector<std::string>& unanswered, std::optional<int64_t> taken_ms = std::nullopt);

  // The collections of a snapshot, oldest first.
  std::vector<CollectionInfo> list(int64_t snapshot_id) const;
  // The newest `count` collections of a snapshot with their samples, oldest first.
  std::vector<CounterCollection> latest(int64_t snapshot_id, int count) const;
  // The newest collection id over all snapshots; nullopt when there is none.
  std::optional<int64_t> newest() const;
  CounterCollection load(int64_t collection_id) const;

 private:
  Connection connection_;
};

// The health of every cable between the snapshot's two newest collections
// (topology/port_health.h); empty when it has fewer than two. `fabric` is
// that snapshot's.
std::vector<CableHealth> latest_cable_health(const HealthStore& store, const Fabric& fabric, int64_t snapshot_id);

}  // namespace topo
