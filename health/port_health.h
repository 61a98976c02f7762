// Cable health from two readings of the port counters.
//
// A collection is every port's counters at one moment (port_counters.h).
// Between two collections each port gets rates: errors per hour for each
// error counter, and the share of time it waited to transmit. A cable's
// health joins its two ends: the errors both ends counted (a symbol error
// is counted by the receiver, so a bad cable shows on either end), and the
// larger XmitWait share of its two directions.
//
// XmitWait share. PortXmitWait counts ticks during which the port had data
// but sent none; the IBTA leaves the tick's length to the implementation.
// Here a tick is taken as the time the link needs to send one PortXmitData
// unit (4 octets) at its active rate, so the share is
//   delta(PortXmitWait) / (seconds x Gb/s x 1e9 / 32), at most 1.
// It is a comparison between ports and over time, not a calibrated figure.
//
// A counter that reads lower than before was reset (or the port
// re-trained): the later value is taken as the count since the reset
// (counter_series.h).
//
// A cable passes a threshold when its errors per hour (all error counters
// summed) or its XmitWait share reaches it; it is then marked degraded on
// the Fabric (Fabric::mark_degraded), with the counter that drove it named,
// and placement treats it as it treats a slow cable.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabric/fabric.h"
#include "health/counter_series.h"
#include "health/port_counters.h"

namespace topo {

// Every port's counters at one moment (counter_series.h).
using CounterCollection = Collection<PortSample>;

// One end of a cable between two collections.
struct PortRates {
  std::string node;  // Fabric vertex id
  std::string name;  // node name, for people
  int port = 0;
  // Per error counter, in kErrorCounters order: what it counted, and per hour.
  std::array<uint64_t, std::size(kErrorCounters)> errors{};
  std::array<double, std::size(kErrorCounters)> errors_per_hour{};
  uint64_t xmit_wait = 0;
  double xmit_wait_share = 0;
  double xmit_gbps = 0;  // data sent, Gb/s
  double rcv_gbps = 0;
  bool reset = false;  // some counter went backwards
};

struct CableHealth {
  int cable = -1;
  std::string subject;          // "a:port <-> b:port", as faults name cables
  double seconds = 0;           // between the two collections
  std::vector<PortRates> ends;  // the ends both collections read (0 to 2)
  double errors_per_hour = 0;   // all error counters, both ends
  double xmit_wait_share = 0;   // the larger of the two directions
  // The error counter with the most errors per hour over both ends.
  PortCounter worst = PortCounter::SymbolErrors;
  double worst_per_hour = 0;
};

// Every cable with at least one end read in both collections, by cable id.
// `before` must be older than `after`; throws std::invalid_argument otherwise.
std::vector<CableHealth> cable_health(const Fabric& fabric, const CounterCollection& before,
                                      const CounterCollection& after);

// When a cable counts as sick. The defaults are documented in
// plugin/engine/engine.h (topo_aware.conf HealthErrorsPerHour, HealthXmitWaitShare).
struct HealthThresholds {
  double errors_per_hour = 10;    // all error counters of both ends summed
  double xmit_wait_share = 0.10;  // of the time, in either direction
};

struct HealthFinding {
  int cable = -1;
  std::string subject;
  PortCounter counter = PortCounter::SymbolErrors;  // what passed
  double value = 0;                                 // per hour, or share for XmitWait
  double threshold = 0;
  std::string why;  // a sentence naming the counter and both ends
};

std::vector<HealthFinding> check_health(const std::vector<CableHealth>& health, const HealthThresholds& thresholds);

// Marks every finding's cable degraded on `fabric` with its why.
void apply_health(Fabric& fabric, const std::vector<HealthFinding>& findings);

}  // namespace topo
