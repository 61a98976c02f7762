// Port counters: what each switch and HCA port's performance management
// agent counts, read live over the fabric as perfquery reads them.
//
// Every cabled port of every switch and CA answers two GMPs of the
// performance class (LID-routed, so a subnet manager must have assigned
// LIDs and programmed the tables first):
//   PortCounters           the error counters (SymbolErrorCounter,
//                          LinkErrorRecoveryCounter, LinkDownedCounter,
//                          PortRcvErrors, PortXmitDiscards), PortXmitWait
//                          and 32-bit data counters;
//   PortCountersExtended   64-bit data and packet counters, optional: when a
//                          port does not answer it, the 32-bit ones are kept.
// The error counters of PortCounters are 8 to 32 bits wide and saturate at
// their maximum rather than wrap; data counters count 4-octet words
// (octets / 4), as the IBTA defines them.
//
// A sample is keyed by the Fabric vertex id that discovery/ibnetdisc.h gives
// the node ("S-<guid>", "H-<guid>" or "H-<guid>:<port>") and the port
// number, so it maps onto a snapshot's cable through Fabric::find and
// Fabric::cable_at whatever snapshot it is later read against.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "discovery/ibnetdisc.h"

namespace topo {

// The counters health looks at, by their IBTA names.
enum class PortCounter : uint8_t {
  SymbolErrors,    // SymbolErrorCounter: minor link errors on the physical lane
  LinkRecoveries,  // LinkErrorRecoveryCounter: the link trained again
  LinkDowned,      // LinkDownedCounter: the link went down and came back
  RcvErrors,       // PortRcvErrors: packets received with an error
  XmitDiscards,    // PortXmitDiscards: outbound packets dropped (port down, congestion)
  XmitWait,        // PortXmitWait: ticks the port had data but could not send
};
inline constexpr PortCounter kErrorCounters[] = {PortCounter::SymbolErrors, PortCounter::LinkRecoveries,
                                                 PortCounter::LinkDowned, PortCounter::RcvErrors,
                                                 PortCounter::XmitDiscards};

// The IBTA name: "SymbolErrorCounter", "PortXmitWait", ...
std::string_view name(PortCounter c);

struct PortCounters {
  uint64_t symbol_errors = 0;
  uint64_t link_recoveries = 0;
  uint64_t link_downed = 0;
  uint64_t rcv_errors = 0;
  uint64_t xmit_discards = 0;
  uint64_t xmit_wait = 0;
  uint64_t xmit_data = 0;  // 4-octet words
  uint64_t rcv_data = 0;   // 4-octet words
  uint64_t xmit_packets = 0;
  uint64_t rcv_packets = 0;
  bool extended = false;  // data and packets came from PortCountersExtended

  uint64_t get(PortCounter c) const;
  bool operator==(const PortCounters&) const = default;
};

struct PortSample {
  std::string node;  // Fabric vertex id
  int port = 0;
  PortCounters counters;
};

// Reports progress: `done` of `total` ports read so far.
using PortProgress = std::function<void(size_t done, size_t total)>;

// Reads the counters of every cabled port of every switch and CA, through
// the HCA and port `options` name (the walk of discovery/ibnetdisc.h).
// Ports that do not answer PortCounters are listed in `unanswered`
// ("<node description>:<port>"), never guessed. Throws DiscoveryError when
// the fabric cannot be discovered or no port answers at all.
struct PortCounterRead {
  std::vector<PortSample> samples;
  std::vector<std::string> unanswered;
};
PortCounterRead read_port_counters_live(const IbnetdiscOptions& options, const PortProgress& progress = {});

}  // namespace topo
