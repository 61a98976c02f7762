// A counter time series: collections of counter readings, each taken at
// one moment, and what two of them say about the time between.
//
// Both kinds of health reading are such series, kept per snapshot in the
// database (db/health_store.h): the port counters of every cabled switch
// and HCA port (port_counters.h, rated by port_health.h) and the NIC
// counters of a RoCE fabric (ethtool_counters.h, rated by nic_health.h).
// Rates always come from two collections of one kind, the older first.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace topo {

template <typename Sample>
struct Collection {
  int64_t id = 0;
  std::string taken_at;  // UTC ISO-8601
  int64_t taken_ms = 0;  // Unix milliseconds
  std::vector<Sample> samples;
};

// The milliseconds from `before` to `after`. Throws std::invalid_argument,
// naming both collections (`kind` names the later one's kind: "collection",
// "NIC collection"), when `after` is not the later one.
template <typename Sample>
int64_t interval_ms(const Collection<Sample>& before, const Collection<Sample>& after, std::string_view kind) {
  if (after.taken_ms <= before.taken_ms)
    throw std::invalid_argument(fmt::format("{} {} ({}) is not later than collection {} ({})", kind, after.id,
                                            after.taken_at, before.id, before.taken_at));
  return after.taken_ms - before.taken_ms;
}

// The growth of one counter between two readings. A counter that reads
// lower than before was reset (or its port trained again): the later value
// is the count since the reset, and `reset` is set.
inline uint64_t counter_growth(uint64_t before, uint64_t after, bool& reset) {
  if (after >= before) return after - before;
  reset = true;
  return after;
}

}  // namespace topo
