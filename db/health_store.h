// Port counter and NIC counter collections in the snapshot database
// (schema 4; NIC counters schema 5).
//
// A collection is one reading of every port's counters
// (health/port_counters.h), saved against the snapshot whose cables the
// ports belong to, with the time it was taken to the millisecond so that
// rates between two close readings stay exact. Collections of a snapshot
// form its time series; nothing is rewritten or deleted.
//
//   HealthStore store(db_path);
//   int64_t id = store.add(snapshot_id, samples, "libibmad:mlx5_0", {});
//   auto last_two = store.latest(snapshot_id, 2);   // newest last
//
// NIC counters of a RoCE fabric (health/ethtool_counters.h) are
// collections of their own kind in the same series:
//   int64_t id = store.add_nics(snapshot_id, nics, "ethtool:/srv/ethtool", {});
//   auto last_two = store.latest_nics(snapshot_id, 2);
//
// Every failure is a DbError naming the database path (db/error.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/connection.h"
#include "health/nic_health.h"
#include "health/port_health.h"

namespace topo {

struct CollectionInfo {
  int64_t id = 0;
  int64_t snapshot_id = 0;
  std::string taken_at;
  int64_t taken_ms = 0;
  std::string source;
  int ports = 0;
  std::vector<std::string> unanswered;
  std::string kind = "port";  // or "ethtool"
};

class HealthStore {
 public:
  // Opens (creating, migrating) the database as SnapshotStore does.
  explicit HealthStore(std::string path, Access access = Access::ReadWrite);

  // Saves one collection, taken now (or at `taken_ms` when given), against
  // snapshot `snapshot_id`, which must exist (DbError(UnknownSnapshot)).
  int64_t add(int64_t snapshot_id, const std::vector<PortSample>& samples, const std::string& source,
              const std::vector<std::string>& unanswered, std::optional<int64_t> taken_ms = std::nullopt);

  // Saves one collection of NIC counters, as add() does. Without
  // `taken_ms`, the collection is dated by its NICs' own times when every
  // one has one (the newest), else now.
  int64_t add_nics(int64_t snapshot_id, const std::vector<NicSample>& nics, const std::string& source,
                   const std::vector<std::string>& unread, std::optional<int64_t> taken_ms = std::nullopt);

  // The port counter collections of a snapshot, oldest first (list_nics:
  // the NIC counter ones).
  std::vector<CollectionInfo> list(int64_t snapshot_id) const;
  std::vector<CollectionInfo> list_nics(int64_t snapshot_id) const;
  // The newest `count` port counter collections of a snapshot with their
  // samples, oldest first.
  std::vector<CounterCollection> latest(int64_t snapshot_id, int count) const;
  // The same for NIC counter collections.
  std::vector<NicCollection> latest_nics(int64_t snapshot_id, int count) const;
  // The newest collection id of either kind over all snapshots; nullopt
  // when there is none. A new collection of either kind changes it.
  std::optional<int64_t> newest() const;
  CounterCollection load(int64_t collection_id) const;
  NicCollection load_nics(int64_t collection_id) const;

 private:
  Connection connection_;
};

// The health of every cable between the snapshot's two newest collections
// (health/port_health.h); empty when it has fewer than two. `fabric` is
// that snapshot's.
std::vector<CableHealth> latest_cable_health(const HealthStore& store, const Fabric& fabric, int64_t snapshot_id);

// The rates of every NIC between the snapshot's two newest NIC counter
// collections (health/nic_health.h); empty when it has fewer than two.
std::vector<NicRates> latest_nic_rates(const HealthStore& store, const Fabric& fabric, int64_t snapshot_id);

}  // namespace topo
