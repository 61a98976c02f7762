#include "health/nic_health.h"

#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "fabric/classify.h"

namespace topo {
namespace {

using Counters = std::map<std::string, uint64_t, std::less<>>;

// The growth of one counter between two readings; nullopt when either
// reading lacks it.
struct Delta {
  const Counters& a;
  const Counters& b;
  bool& reset;

  std::optional<uint64_t> operator()(std::string_view name) const {
    auto x = a.find(name), y = b.find(name);
    if (x == a.end() || y == b.end()) return std::nullopt;
    return counter_growth(x->second, y->second, reset);
  }
  // The sum over names present; nullopt when none is.
  std::optional<uint64_t> sum(std::initializer_list<std::string> names) const {
    std::optional<uint64_t> out;
    for (const std::string& n : names)
      if (auto d = (*this)(n)) out = out.value_or(0) + *d;
    return out;
  }
};

std::array<std::string, 8> per_prio(std::string_view dir, std::string_view what) {
  std::array<std::string, 8> out;
  for (int p = 0; p < 8; ++p) out[p] = fmt::format("{}_prio{}_{}", dir, p, what);
  return out;
}

double pauses(const Delta& d, std::string_view dir) {
  uint64_t prio = 0;
  for (const std::string& n : per_prio(dir, "pause")) prio += d(n).value_or(0);
  return static_cast<double>(std::max(prio, d(fmt::format("{}_pause_ctrl_phy", dir)).value_or(0)));
}

std::optional<double> paused_us(const Delta& d, std::string_view dir) {
  std::optional<uint64_t> most = d(fmt::format("{}_global_pause_duration", dir));
  for (const std::string& n : per_prio(dir, "pause_duration"))
    if (auto x = d(n)) most = std::max(most.value_or(0), *x);
  if (!most) return std::nullopt;
  return static_cast<double>(*most);
}

struct NicCable {
  int cable = -1;
  std::string subject;
  Tier tier = Tier::Other;
};

// host + " " + device -> the HCA's first cable.
std::map<std::pair<std::string, std::string>, NicCable> nic_cables(const Fabric& f) {
  std::map<std::pair<std::string, std::string>, NicCable> out;
  for (NodeId v : f.hcas()) {
    const Node& n = f.node(v);
    for (int port = 1; port <= std::max(1, n.ports); ++port) {
      if (auto e = f.cable_at(v, port)) {
        out[{n.host, n.device}] = {f.link(*e).id, describe_link(f, *e), f.link(*e).tier};
        break;
      }
    }
  }
  return out;
}

NicRates rates(const NicSample& a, const NicSample& b, double seconds) {
  NicRates r;
  r.host = b.host;
  r.iface = b.iface;
  r.subject = fmt::format("{} {}", b.host, b.iface);
  r.seconds = seconds;
  Delta d{a.counters, b.counters, r.reset};
  auto per_second = [&](std::optional<uint64_t> x) -> std::optional<double> {
    if (!x) return std::nullopt;
    return static_cast<double>(*x) / seconds;
  };
  r.rx_pauses_per_second = pauses(d, "rx") / seconds;
  r.tx_pauses_per_second = pauses(d, "tx") / seconds;
  if (auto us = paused_us(d, "rx")) r.rx_paused_share = std::min(1.0, *us / 1e6 / seconds);
  if (auto us = paused_us(d, "tx")) r.tx_paused_share = std::min(1.0, *us / 1e6 / seconds);
  r.ecn_marks_per_second = per_second(d("np_ecn_marked_roce_packets"));
  r.cnps_sent_per_second = per_second(d("np_cnp_sent"));
  r.cnps_handled_per_second = per_second(d("rp_cnp_handled"));
  std::optional<uint64_t> drops = d.sum({"rx_discards_phy", "tx_discards_phy", "rx_out_of_buffer"});
  if (!drops) drops = d.sum({"rx_dropped", "tx_dropped"});
  r.discards_per_second = per_second(drops).value_or(0);
  auto gbps = [&](std::string_view phy, std::string_view generic) -> std::optional<double> {
    std::optional<uint64_t> bytes = d(phy);
    if (!bytes) bytes = d(generic);
    if (!bytes) return std::nullopt;
    return static_cast<double>(*bytes) * 8 / seconds / 1e9;
  };
  r.rx_gbps = gbps("rx_bytes_phy", "rx_bytes");
  r.tx_gbps = gbps("tx_bytes_phy", "tx_bytes");
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::string_view name(NicFindingKind kind) {
  switch (kind) {
    case NicFindingKind::PauseStorm:
      return "pause_storm";
    case NicFindingKind::EcnOutlier:
      return "ecn_outlier";
  }
  return "?";
}

std::vector<NicRates> nic_rates(const Fabric& f, const NicCollection& before, const NicCollection& after) {
  const int64_t span_ms = interval_ms(before, after, "NIC collection");
  std::map<std::pair<std::string, std::string>, const NicSample*> old;
  for (const NicSample& s : before.samples) old[{s.host, s.iface}] = &s;
  auto cables = nic_cables(f);
  std::vector<NicRates> out;
  for (const NicSample& s : after.samples) {
    auto a = old.find({s.host, s.iface});
    if (a == old.end()) continue;
    // Its own times when both readings have one and they run forward.
    int64_t t0 = a->second->taken_ms ? a->second->taken_ms : before.taken_ms;
    int64_t t1 = s.taken_ms ? s.taken_ms : after.taken_ms;
    if (t1 <= t0) t1 = t0 + span_ms;
    NicRates r = rates(*a->second, s, static_cast<double>(t1 - t0) / 1000);
    if (auto c = cables.find({s.host, s.iface}); c != cables.end()) {
      r.cable = c->second.cable;
      r.subject = c->second.subject;
      r.tier = c->second.tier;
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<NicFinding> check_nic_health(const std::vector<NicRates>& rates, const NicThresholds& t) {
  std::vector<NicFinding> out;
  std::map<Tier, std::vector<double>> marks;
  for (const NicRates& r : rates)
    if (r.ecn_marks_per_second) marks[r.tier].push_back(*r.ecn_marks_per_second);
  std::map<Tier, double> medians;
  for (const auto& [tier, v] : marks)
    if (v.size() >= 3) medians[tier] = median(v);
  for (const NicRates& r : rates) {
    bool rx = r.rx_pauses_per_second >= r.tx_pauses_per_second;
    double pauses = std::max(r.rx_pauses_per_second, r.tx_pauses_per_second);
    if (pauses > 0 && pauses >= t.pauses_per_second) {
      std::optional<double> share = rx ? r.rx_paused_share : r.tx_paused_share;
      out.push_back({NicFindingKind::PauseStorm, r.host, r.iface, r.cable, r.subject, rx ? "rx_pause" : "tx_pause",
                     pauses, t.pauses_per_second,
                     fmt::format("pause storm on {} {}: {:.4g} pause frames/s {} (threshold {:g}){} over {:.1f} s",
                                 r.host, r.iface, pauses, rx ? "received" : "sent", t.pauses_per_second,
                                 share ? fmt::format(", paused {:.1f}% of the time", 100 * *share) : "", r.seconds)});
      continue;
    }
    auto m = medians.find(r.tier);
    if (!r.ecn_marks_per_second || m == medians.end()) continue;
    double bar = std::max(t.ecn_marks_per_second, t.ecn_over_median * m->second);
    double ecn = *r.ecn_marks_per_second;
    if (ecn > 0 && ecn >= bar && ecn > t.ecn_over_median * m->second)
      out.push_back({NicFindingKind::EcnOutlier, r.host, r.iface, r.cable, r.subject, "np_ecn_marked_roce_packets", ecn,
                     bar,
                     fmt::format("ECN marks on {} {}: {:.4g}/s np_ecn_marked_roce_packets, {} the {} median "
                                 "{:.4g}/s (threshold {:g}x, at least {:g}/s) over {:.1f} s",
                                 r.host, r.iface, ecn,
                                 m->second > 0 ? fmt::format("{:.1f}x", ecn / m->second) : std::string("far above"),
                                 name(r.tier), m->second, t.ecn_over_median, t.ecn_marks_per_second, r.seconds)});
  }
  return out;
}

void apply_nic_health(Fabric& fabric, const std::vector<NicFinding>& findings) {
  for (const NicFinding& x : findings)
    if (x.cable >= 0) fabric.mark_degraded(x.cable, x.why);
}

}  // namespace topo
