#include "tools/topoctl/health_metrics.h"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "common/hostlist.h"
#include "db/health_store.h"

namespace topoctl {
namespace {

Labels port_labels(const topo::Fabric& f, const topo::PortSample& s) {
  std::string port = std::to_string(s.port);
  auto v = f.find(s.node);
  if (!v) return {{"node", s.node}, {"port", port}};
  const topo::Node& n = f.node(*v);
  if (n.kind == topo::NodeKind::Switch) return {{"switch", n.name}, {"port", port}};
  return {{"host", n.host}, {"hca", n.device}, {"port", port}};
}

struct PortMetric {
  const char* name;
  const char* help;
  uint64_t (*value)(const topo::PortCounters&);
};

constexpr PortMetric kPortMetrics[] = {
    {"topo_aware_port_symbol_errors_total", "SymbolErrorCounter: minor link errors on the physical lanes.",
     [](const topo::PortCounters& c) { return c.symbol_errors; }},
    {"topo_aware_port_link_error_recoveries_total", "LinkErrorRecoveryCounter: times the link retrained.",
     [](const topo::PortCounters& c) { return c.link_recoveries; }},
    {"topo_aware_port_link_downed_total", "LinkDownedCounter: times the link went down.",
     [](const topo::PortCounters& c) { return c.link_downed; }},
    {"topo_aware_port_receive_errors_total", "PortRcvErrors: packets received with errors.",
     [](const topo::PortCounters& c) { return c.rcv_errors; }},
    {"topo_aware_port_transmit_discards_total", "PortXmitDiscards: outbound packets discarded.",
     [](const topo::PortCounters& c) { return c.xmit_discards; }},
    {"topo_aware_port_transmit_wait_ticks_total", "PortXmitWait: ticks with data to send and none sent.",
     [](const topo::PortCounters& c) { return c.xmit_wait; }},
    {"topo_aware_port_transmit_bytes_total", "PortXmitData, in bytes.",
     [](const topo::PortCounters& c) { return c.xmit_data * 4; }},
    {"topo_aware_port_receive_bytes_total", "PortRcvData, in bytes.",
     [](const topo::PortCounters& c) { return c.rcv_data * 4; }},
    {"topo_aware_port_transmit_packets_total", "PortXmitPkts.",
     [](const topo::PortCounters& c) { return c.xmit_packets; }},
    {"topo_aware_port_receive_packets_total", "PortRcvPkts.",
     [](const topo::PortCounters& c) { return c.rcv_packets; }},
};

}  // namespace

void health_metrics(Exposition& out, const topo::Fabric& f, const topo::CounterCollection* newest,
                    const std::vector<topo::CableHealth>& health, const topo::HealthThresholds& thresholds) {
  if (newest) {
    out.family("topo_aware_health_collection_timestamp_seconds", "gauge", "When the port counters were last read.");
    out.sample("topo_aware_health_collection_timestamp_seconds", static_cast<double>(newest->taken_ms) / 1000);
    for (const PortMetric& m : kPortMetrics) {
      out.family(m.name, "counter", m.help);
      for (const topo::PortSample& s : newest->samples)
        out.sample(m.name, port_labels(f, s), static_cast<double>(m.value(s.counters)));
    }
  }
  if (health.empty()) return;
  out.family("topo_aware_cable_errors_per_hour", "gauge",
             "Error counters of both ends, per hour, between the last two collections.");
  for (const topo::CableHealth& h : health)
    out.sample("topo_aware_cable_errors_per_hour", {{"link", h.subject}}, h.errors_per_hour);
  out.family("topo_aware_cable_transmit_wait_ratio", "gauge",
             "Share of the time the cable's busier direction waited to transmit.");
  for (const topo::CableHealth& h : health)
    out.sample("topo_aware_cable_transmit_wait_ratio", {{"link", h.subject}}, h.xmit_wait_share);
  out.family("topo_aware_cable_degraded_by_counters", "gauge", "Cables past a health threshold, by the counter.");
  for (const topo::HealthFinding& x : topo::check_health(health, thresholds))
    out.sample("topo_aware_cable_degraded_by_counters",
               {{"link", x.subject}, {"counter", std::string(topo::name(x.counter))}}, 1);
}

void health_metrics(Exposition& out, const std::string& db_path, int64_t snapshot_id, const topo::Fabric& fabric,
                    const topo::HealthThresholds& thresholds, const topo::NicThresholds& nic_thresholds,
                    topo::Access access) {
  topo::HealthStore store(db_path, access);
  std::vector<topo::NicCollection> nics = store.latest_nics(snapshot_id, 2);
  if (!nics.empty())
    nic_metrics(out, &nics.back(),
                nics.size() == 2 ? topo::nic_rates(fabric, nics[0], nics[1]) : std::vector<topo::NicRates>{},
                nic_thresholds);
  std::vector<topo::CounterCollection> last = store.latest(snapshot_id, 2);
  if (last.empty()) return;
  std::vector<topo::CableHealth> health =
      last.size() == 2 ? topo::cable_health(fabric, last[0], last[1]) : std::vector<topo::CableHealth>{};
  health_metrics(out, fabric, &last.back(), health, thresholds);
}

void nic_metrics(Exposition& out, const topo::NicCollection* newest, const std::vector<topo::NicRates>& rates,
                 const topo::NicThresholds& thresholds) {
  auto nic = [](const std::string& host, const std::string& iface) { return Labels{{"host", host}, {"nic", iface}}; };
  auto with = [](Labels l, const char* key, std::string value) {
    l.emplace_back(key, std::move(value));
    return l;
  };
  if (newest) {
    out.family("topo_aware_nic_collection_timestamp_seconds", "gauge", "When the NIC counters were last read.");
    out.sample("topo_aware_nic_collection_timestamp_seconds", static_cast<double>(newest->taken_ms) / 1000);
    // Raw counters as the NIC counts them; pause frames per direction as
    // the rates take them (the larger of the link-level and per-priority sums).
    out.family("topo_aware_nic_pause_frames_total", "counter",
               "Pause frames (link-level or PFC, whichever counts more) received (rx) or sent (tx).");
    for (const topo::NicSample& s : newest->samples)
      for (const char* dir : {"rx", "tx"}) {
        uint64_t prio = 0;
        for (int p = 0; p < 8; ++p) {
          auto it = s.counters.find(fmt::format("{}_prio{}_pause", dir, p));
          if (it != s.counters.end()) prio += it->second;
        }
        auto link = s.counters.find(fmt::format("{}_pause_ctrl_phy", dir));
        uint64_t total = std::max(prio, link == s.counters.end() ? uint64_t{0} : link->second);
        out.sample("topo_aware_nic_pause_frames_total", with(nic(s.host, s.iface), "direction", dir),
                   static_cast<double>(total));
      }
    struct Raw {
      const char* metric;
      const char* counter;
      const char* help;
    };
    for (const Raw& r : {Raw{"topo_aware_nic_ecn_marked_packets_total", "np_ecn_marked_roce_packets",
                             "np_ecn_marked_roce_packets: ECN-marked RoCE packets received."},
                         Raw{"topo_aware_nic_cnp_sent_total", "np_cnp_sent", "np_cnp_sent: CNPs sent for them."},
                         Raw{"topo_aware_nic_cnp_handled_total", "rp_cnp_handled",
                             "rp_cnp_handled: CNPs received and acted on (rate reduced)."}}) {
      out.family(r.metric, "counter", r.help);
      for (const topo::NicSample& s : newest->samples)
        if (auto it = s.counters.find(r.counter); it != s.counters.end())
          out.sample(r.metric, nic(s.host, s.iface), static_cast<double>(it->second));
    }
  }
  if (rates.empty()) return;
  out.family("topo_aware_nic_pause_frames_per_second", "gauge",
             "Pause frames per second between the last two NIC collections.");
  for (const topo::NicRates& r : rates) {
    out.sample("topo_aware_nic_pause_frames_per_second", with(nic(r.host, r.iface), "direction", "rx"),
               r.rx_pauses_per_second);
    out.sample("topo_aware_nic_pause_frames_per_second", with(nic(r.host, r.iface), "direction", "tx"),
               r.tx_pauses_per_second);
  }
  out.family("topo_aware_nic_paused_ratio", "gauge", "Share of the time paused (from the pause duration counters).");
  for (const topo::NicRates& r : rates) {
    if (r.rx_paused_share)
      out.sample("topo_aware_nic_paused_ratio", with(nic(r.host, r.iface), "direction", "rx"), *r.rx_paused_share);
    if (r.tx_paused_share)
      out.sample("topo_aware_nic_paused_ratio", with(nic(r.host, r.iface), "direction", "tx"), *r.tx_paused_share);
  }
  struct Rate {
    const char* metric;
    const char* help;
    std::optional<double> topo::NicRates::*value;
  };
  for (const Rate& m :
       {Rate{"topo_aware_nic_ecn_marked_packets_per_second", "ECN-marked RoCE packets received per second.",
             &topo::NicRates::ecn_marks_per_second},
        Rate{"topo_aware_nic_cnp_sent_per_second", "CNPs sent per second.", &topo::NicRates::cnps_sent_per_second},
        Rate{"topo_aware_nic_cnp_handled_per_second", "CNPs handled per second.",
             &topo::NicRates::cnps_handled_per_second}}) {
    out.family(m.metric, "gauge", m.help);
    for (const topo::NicRates& r : rates)
      if (r.*m.value) out.sample(m.metric, nic(r.host, r.iface), *(r.*m.value));
  }
  out.family("topo_aware_nic_discards_per_second", "gauge", "Packets discarded per second (rx and tx).");
  for (const topo::NicRates& r : rates)
    out.sample("topo_aware_nic_discards_per_second", nic(r.host, r.iface), r.discards_per_second);
  out.family("topo_aware_nic_degraded_by_counters", "gauge", "NICs past a PFC/ECN threshold, by the finding.");
  for (const topo::NicFinding& x : topo::check_nic_health(rates, thresholds))
    out.sample("topo_aware_nic_degraded_by_counters",
               with(nic(x.host, x.iface), "finding", std::string(topo::name(x.kind))), 1);
}

void baseline_metrics(Exposition& out, const std::vector<topo::NcclRunRecord>& runs) {
  std::map<std::pair<std::string, std::vector<std::string>>, std::vector<const topo::NcclRunRecord*>> sets;
  for (const topo::NcclRunRecord& r : runs) sets[{r.run.test, r.hosts}].push_back(&r);
  if (sets.empty()) return;
  // One family at a time: a family's samples must follow its HELP and TYPE.
  struct Set {
    Labels labels;  // test, hosts, size: the newest run's largest size
    const topo::NcclRunRecord* newest;
    const topo::NcclTestsRow* baseline;  // the first run's row of that size, if any
    std::optional<double> model;
    size_t runs;
  };
  std::vector<Set> rows;
  for (const auto& [key, list] : sets) {
    const topo::NcclRunRecord& now = *list.back();
    if (now.run.rows.empty()) continue;
    size_t last = now.run.rows.size() - 1;
    const topo::NcclTestsRow& row = now.run.rows[last];
    Set set{{{"test", key.first}, {"hosts", topo::compress_hostlist(key.second)}, {"size", std::to_string(row.size)}},
            &now,
            nullptr,
            std::nullopt,
            list.size()};
    for (const topo::NcclTestsRow& b : list.front()->run.rows)
      if (b.size == row.size && b.type == row.type) {
        set.baseline = &b;
        break;
      }
    if (last < now.model_busbw.size() && now.model_busbw[last]) set.model = *now.model_busbw[last];
    rows.push_back(std::move(set));
  }
  auto with_run = [](Labels labels, const char* run) {
    labels.emplace_back("run", run);
    return labels;
  };
  out.family("topo_aware_nccl_bus_bandwidth_bytes_per_second", "gauge",
             "nccl-tests out-of-place bus bandwidth at the newest run's largest size: the newest run and the host "
             "set's first (baseline).");
  for (const Set& r : rows) {
    out.sample("topo_aware_nccl_bus_bandwidth_bytes_per_second", with_run(r.labels, "newest"),
               r.newest->run.rows.back().oop_busbw * 1e9);
    if (r.baseline)
      out.sample("topo_aware_nccl_bus_bandwidth_bytes_per_second", with_run(r.labels, "baseline"),
                 r.baseline->oop_busbw * 1e9);
  }
  out.family("topo_aware_nccl_model_bus_bandwidth_bytes_per_second", "gauge",
             "The model's bus bandwidth for the same hosts and size.");
  for (const Set& r : rows)
    if (r.model) out.sample("topo_aware_nccl_model_bus_bandwidth_bytes_per_second", r.labels, *r.model * 1e9);
  out.family("topo_aware_nccl_runs", "gauge", "nccl-tests runs imported for the host set.");
  for (const Set& r : rows) out.sample("topo_aware_nccl_runs", {r.labels[0], r.labels[1]}, static_cast<double>(r.runs));
}

void baseline_metrics(Exposition& out, const std::string& db_path, topo::Access access) {
  baseline_metrics(out, topo::NcclBaselineStore(db_path, access).list());
}

}  // namespace topoctl
