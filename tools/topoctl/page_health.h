// The page's health table: per cable (InfiniBand port counters) or NIC
// (RoCE ethtool counters) the rates between the last two collections of a
// snapshot and their trend over up to kHealthCollections stored ones, the
// sick first (those past the site's thresholds, as lint and place judge).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "db/connection.h"
#include "fabric/fabric.h"
#include "health/nic_health.h"
#include "health/port_health.h"

namespace topoctl {

// How many of a snapshot's newest collections the trend covers.
inline constexpr int kHealthCollections = 12;

struct HealthRow {
  std::string kind;           // "cable" or "nic"
  std::string subject;        // as faults name it
  std::string rates;          // the last rates in words
  std::string unit;           // of `trend`
  std::vector<double> trend;  // the headline rate per interval, oldest first
  bool sick = false;
  std::string why;  // the finding's sentence when sick
};

struct HealthTable {
  std::vector<HealthRow> rows;  // sick first, then by the last headline rate
  size_t port_collections = 0, nic_collections = 0;
};

// Reads the newest `collections` (at least 2) of snapshot `snapshot_id`
// (whose fabric is `fabric`); the overview's card needs only the last two.
// Throws DbError.
HealthTable health_table(const std::string& db_path, int64_t snapshot_id, const topo::Fabric& fabric,
                         const topo::HealthThresholds& cables, const topo::NicThresholds& nics, topo::Access access,
                         int collections = kHealthCollections);

// The table as HTML (a sparkline per row).
std::string health_html(const HealthTable& table);

}  // namespace topoctl
