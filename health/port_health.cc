#include "health/port_health.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "fabric/classify.h"

namespace topo {
namespace {

using SampleMap = std::map<std::pair<std::string, int>, const PortCounters*>;

SampleMap by_port(const CounterCollection& c) {
  SampleMap out;
  for (const PortSample& s : c.samples) out[{s.node, s.port}] = &s.counters;
  return out;
}

PortRates rates(const Fabric& f, const Link& l, NodeId self, int port, const PortCounters& a, const PortCounters& b,
                double seconds) {
  PortRates r;
  r.node = f.node(self).id;
  r.name = f.node(self).name;
  r.port = port;
  const double hours = seconds / 3600;
  for (size_t i = 0; i < std::size(kErrorCounters); ++i) {
    r.errors[i] = counter_growth(a.get(kErrorCounters[i]), b.get(kErrorCounters[i]), r.reset);
    r.errors_per_hour[i] = hours > 0 ? static_cast<double>(r.errors[i]) / hours : 0;
  }
  r.xmit_wait = counter_growth(a.xmit_wait, b.xmit_wait, r.reset);
  // One tick: the time to send one 4-octet PortXmitData unit at the link's rate.
  const double ticks = seconds * l.rate.gbps() * 1e9 / 32;
  r.xmit_wait_share = ticks > 0 ? std::min(1.0, static_cast<double>(r.xmit_wait) / ticks) : 0;
  // A 32-bit data counter read through PortCounters only saturates; a reading
  // below the last one is a reset either way.
  bool data_reset = false;
  r.xmit_gbps =
      seconds > 0 ? static_cast<double>(counter_growth(a.xmit_data, b.xmit_data, data_reset)) * 32 / seconds / 1e9 : 0;
  r.rcv_gbps =
      seconds > 0 ? static_cast<double>(counter_growth(a.rcv_data, b.rcv_data, data_reset)) * 32 / seconds / 1e9 : 0;
  r.reset |= data_reset;
  return r;
}

}  // namespace

std::vector<CableHealth> cable_health(const Fabric& f, const CounterCollection& before,
                                      const CounterCollection& after) {
  const double seconds = static_cast<double>(interval_ms(before, after, "collection")) / 1000;
  SampleMap a = by_port(before), b = by_port(after);
  std::vector<CableHealth> out;
  for (LinkId e : f.cables()) {
    const Link& l = f.link(e);
    CableHealth h;
    h.cable = l.id;
    h.subject = describe_link(f, e);
    h.seconds = seconds;
    std::array<double, std::size(kErrorCounters)> per_counter{};
    for (auto [self, port] : {std::pair{l.end_a, l.port_a}, std::pair{l.end_b, l.port_b}}) {
      auto key = std::make_pair(f.node(self).id, port);
      auto x = a.find(key), y = b.find(key);
      if (x == a.end() || y == b.end()) continue;
      PortRates r = rates(f, l, self, port, *x->second, *y->second, seconds);
      for (size_t i = 0; i < per_counter.size(); ++i) {
        per_counter[i] += r.errors_per_hour[i];
        h.errors_per_hour += r.errors_per_hour[i];
      }
      h.xmit_wait_share = std::max(h.xmit_wait_share, r.xmit_wait_share);
      h.ends.push_back(std::move(r));
    }
    if (h.ends.empty()) continue;
    size_t worst = static_cast<size_t>(std::max_element(per_counter.begin(), per_counter.end()) - per_counter.begin());
    h.worst = kErrorCounters[worst];
    h.worst_per_hour = per_counter[worst];
    out.push_back(std::move(h));
  }
  return out;
}

std::vector<HealthFinding> check_health(const std::vector<CableHealth>& health, const HealthThresholds& t) {
  std::vector<HealthFinding> out;
  for (const CableHealth& h : health) {
    auto ends = [&](auto value) {
      std::string text;
      for (const PortRates& r : h.ends)
        text += fmt::format("{}{}:{} {}", text.empty() ? "" : ", ", r.name, r.port, value(r));
      return text;
    };
    if (h.errors_per_hour > 0 && h.errors_per_hour >= t.errors_per_hour) {
      size_t i = static_cast<size_t>(std::find(std::begin(kErrorCounters), std::end(kErrorCounters), h.worst) -
                                     std::begin(kErrorCounters));
      out.push_back(
          {h.cable, h.subject, h.worst, h.errors_per_hour, t.errors_per_hour,
           fmt::format("{} errors/h (threshold {:g}), mostly {} ({}) over {:.1f} s",
                       fmt::format("{:.4g}", h.errors_per_hour), t.errors_per_hour, name(h.worst),
                       ends([&](const PortRates& r) { return fmt::format("+{}", r.errors[i]); }), h.seconds)});
    } else if (h.xmit_wait_share > 0 && h.xmit_wait_share >= t.xmit_wait_share) {
      out.push_back(
          {h.cable, h.subject, PortCounter::XmitWait, h.xmit_wait_share, t.xmit_wait_share,
           fmt::format("{} waited {:.1f}% of the time (threshold {:.1f}%; {}) over {:.1f} s",
                       name(PortCounter::XmitWait), 100 * h.xmit_wait_share, 100 * t.xmit_wait_share,
                       ends([](const PortRates& r) { return fmt::format("{:.1f}%", 100 * r.xmit_wait_share); }),
                       h.seconds)});
    }
  }
  return out;
}

void apply_health(Fabric& fabric, const std::vector<HealthFinding>& findings) {
  for (const HealthFinding& x : findings) fabric.mark_degraded(x.cable, x.why);
}

}  // namespace topo
