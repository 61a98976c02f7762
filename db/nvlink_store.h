// A snapshot's NVLink domains in the database (schema version 6): the
// generation whose bounds they were checked against, each host's claim and
// its GPUs' Fabric records. The domains themselves are not stored: a load
// resolves them again from the reports (Fabric::set_nvlink), so the rules
// of nvlink_domain.h are the ones every reader sees.
#pragma once

#include <cstdint>

#include "db/connection.h"
#include "fabric/fabric.h"

namespace topo {

// Part of SnapshotStore::save()'s transaction; writes nothing for a fabric
// that was given no domains.
void insert_nvlink(Connection& c, const Fabric& fabric, int64_t snapshot);
// Part of SnapshotStore::load(): gives the fabric its domains when the
// snapshot has them (one saved before version 6 has none). Throws
// DbError(Inconsistent) for a row naming a host the fabric lacks or a
// generation this build does not know.
void read_nvlink(const Connection& c, int64_t snapshot, Fabric& fabric);

}  // namespace topo
