// Prometheus metrics of topo-aware, in the text exposition format (0.0.4):
// what `topoctl metrics` writes for node_exporter's textfile collector and
// what `topoctl serve` answers on /metrics.
//
// Each source of figures is one function appending its families to an
// Exposition; metrics_text() calls them in turn (port counters and nccl-tests
// runs: health_metrics.h). A new source is one more function and one more
// line there.
//
//   Exposition out;
//   snapshot_metrics(out, facts);
//   std::string text = out.text();
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "db/placement_store.h"
#include "db/snapshot_store.h"
#include "fabric/fabric.h"

namespace topoctl {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Exposition {
 public:
  // Starts a family: its # HELP and # TYPE lines. `type` is gauge or
  // counter. Names are topo_* in Prometheus' [a-zA-Z_:][a-zA-Z0-9_:]*.
  void family(std::string_view name, std::string_view type, std::string_view help);
  // One sample of the family last started (label values are escaped).
  void sample(std::string_view name, const Labels& labels, double value);
  void sample(std::string_view name, double value) { sample(name, {}, value); }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// The snapshots: how many, the latest's id and time, and its fabric's
// hosts, switches per level, cables, pods, rails, faults per kind, and
// degraded and down cables per tier. `latest` is the latest snapshot's
// fabric, absent when there is none.
struct SnapshotFacts {
  std::vector<topo::SnapshotInfo> snapshots;  // oldest first
  const topo::Fabric* latest = nullptr;
};
void snapshot_metrics(Exposition& out, const SnapshotFacts& facts);

// The placements: over the newest record of each of the recent jobs
// (db/placement_store.h recent()), how many, how many fell back to
// cons_tres, the mean and worst estimate over ideal, and the time of the
// newest.
void placement_metrics(Exposition& out, const std::vector<topo::PlacementRecord>& recent);

// Every family above, and health_metrics.h's, for the database at `db_path` (which must exist). The
// latest fabric is loaded unless `latest` gives it (serve keeps it). Cables
// and NICs are rated with the thresholds of topo_aware.conf (`conf`, the
// default path when "", built-in defaults when there is none), as lint and
// place rate them. Throws ParseError for a bad conf line. ReadOnly `access`
// (serve) opens every store read-only: a missing database is then
// DbError(CantOpen) rather than std::invalid_argument.
std::string metrics_text(const std::string& db_path, const topo::Fabric* latest = nullptr, const std::string& conf = "",
                         topo::Access access = topo::Access::ReadWrite);

// Seconds since the epoch of a UTC ISO-8601 time ("2025-01-31T12:00:00Z");
// nullopt when it is not one.
std::optional<double> epoch_seconds(std::string_view iso_utc);

}  // namespace topoctl
