// PFC and ECN health of a RoCE fabric's NICs, from two readings of their
// counters (ethtool_counters.h).
//
// Between two collections each NIC gets rates:
//   pauses per second, received and sent: per direction the larger of the
//     link-level counter's growth (rx_pause_ctrl_phy) and the per-priority
//     counters' summed growth (rx_prioN_pause), since a driver may count a
//     PFC frame in both;
//   paused share of the time, per direction, where the NIC counts pause
//     duration: the largest growth of rx_prioN_pause_duration or
//     rx_global_pause_duration (microseconds) over the interval, at most 1;
//     absent when the NIC has no duration counter;
//   ECN-marked RoCE packets received, CNPs sent and CNPs handled per second,
//     absent when the NIC has no such counter;
//   discards per second (rx_discards_phy + tx_discards_phy +
//     rx_out_of_buffer, or rx_dropped + tx_dropped when there are no _phy
//     counters);
//   Gb/s received and sent (rx_bytes_phy, or rx_bytes).
// A NIC's interval runs between its own reading times (NicSample::taken_ms)
// where both readings carry one, else between the collections'.
// A counter that reads lower than before was reset: the later value is
// taken as the count since the reset (counter_series.h).
//
// A NIC is the host end of one cable: the fabric's HCA whose host and
// device are the sample's host and iface (an LLDP fabric names a host's
// NIC ports so, lldp.h), cabled on its port 1. NICs the fabric does not
// know are rated but cannot be marked.
//
// Findings:
//   pause storm: pauses per second, either direction, at or past
//     NicThresholds::pauses_per_second;
//   ECN outlier: ECN marks per second at or past ecn_marks_per_second and
//     more than ecn_over_median times the median of the NICs on cables of
//     the same tier (at least three NICs of the tier rated; the median of a
//     tier that marks nothing is 0, and then the floor alone decides).
// Each finding marks its cable degraded (Fabric::mark_degraded, the same
// path port counters take), naming the counter, the host and the NIC.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/fabric.h"
#include "health/counter_series.h"
#include "health/ethtool_counters.h"

namespace topo {

// Every NIC's counters at one moment (counter_series.h); a NIC whose own
// taken_ms is 0 was read at the collection's.
using NicCollection = Collection<NicSample>;

struct NicRates {
  std::string host;
  std::string iface;
  int cable = -1;       // -1: the fabric has no such NIC
  std::string subject;  // the cable as faults name it, or "host iface"
  Tier tier = Tier::Other;
  double seconds = 0;
  double rx_pauses_per_second = 0;
  double tx_pauses_per_second = 0;
  std::optional<double> rx_paused_share;
  std::optional<double> tx_paused_share;
  std::optional<double> ecn_marks_per_second;
  std::optional<double> cnps_sent_per_second;
  std::optional<double> cnps_handled_per_second;
  double discards_per_second = 0;
  std::optional<double> rx_gbps;
  std::optional<double> tx_gbps;
  bool reset = false;  // some counter went backwards
};

// Every NIC read in both collections, in `after`'s order. `before` must be
// older than `after`; throws std::invalid_argument otherwise.
std::vector<NicRates> nic_rates(const Fabric& fabric, const NicCollection& before, const NicCollection& after);

// When a NIC counts as sick. The defaults are documented in plugin/engine/engine.h
// (topo_aware.conf HealthPausesPerSecond, HealthEcnOverMedian,
// HealthEcnMarksPerSecond).
struct NicThresholds {
  double pauses_per_second = 1000;     // either direction
  double ecn_over_median = 10;         // times the tier's median
  double ecn_marks_per_second = 1000;  // below this, never an outlier
};

enum class NicFindingKind : uint8_t { PauseStorm, EcnOutlier };
std::string_view name(NicFindingKind kind);  // "pause_storm", "ecn_outlier"

struct NicFinding {
  NicFindingKind kind = NicFindingKind::PauseStorm;
  std::string host;
  std::string iface;
  int cable = -1;
  std::string subject;
  std::string counter;  // what passed: "rx_pause", "np_ecn_marked_roce_packets"
  double value = 0;
  double threshold = 0;  // for an outlier: the value it had to reach
  std::string why;       // a sentence naming the counter, the host and the NIC
};

std::vector<NicFinding> check_nic_health(const std::vector<NicRates>& rates, const NicThresholds& thresholds);

// Marks every finding's cable degraded on `fabric` with its why; findings
// on NICs the fabric does not know are skipped.
void apply_nic_health(Fabric& fabric, const std::vector<NicFinding>& findings);

}  // namespace topo
