#include "health/port_counters.h"

namespace topo {

std::string_view name(PortCounter c) {
  switch (c) {
    case PortCounter::SymbolErrors:
      return "SymbolErrorCounter";
    case PortCounter::LinkRecoveries:
      return "LinkErrorRecoveryCounter";
    case PortCounter::LinkDowned:
      return "LinkDownedCounter";
    case PortCounter::RcvErrors:
      return "PortRcvErrors";
    case PortCounter::XmitDiscards:
      return "PortXmitDiscards";
    case PortCounter::XmitWait:
      return "PortXmitWait";
  }
  return "?";
}

uint64_t PortCounters::get(PortCounter c) const {
  switch (c) {
    case PortCounter::SymbolErrors:
      return symbol_errors;
    case PortCounter::LinkRecoveries:
      return link_recoveries;
    case PortCounter::LinkDowned:
      return link_downed;
    case PortCounter::RcvErrors:
      return rcv_errors;
    case PortCounter::XmitDiscards:
      return xmit_discards;
    case PortCounter::XmitWait:
      return xmit_wait;
  }
  return 0;
}

}  // namespace topo
