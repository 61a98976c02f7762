#include "tools/topoctl/health_metrics.h"

#include <map>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "db/health_store.h"
#include "db/snapshot_store.h"
#include "topology/hostlist.h"

namespace topoctl {
namespace {

// Label values escape backslash, double quote and newline.
std::string escape(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string port_labels(const topo::Fabric& f, const topo::PortSample& s) {
  auto v = f.find(s.node);
  if (!v) return fmt::format("node=\"{}\",port=\"{}\"", escape(s.node), s.port);
  const topo::Node& n = f.node(*v);
  if (n.kind == topo::NodeKind::Switch) return fmt::format("switch=\"{}\",port=\"{}\"", escape(n.name), s.port);
  return fmt::format("host=\"{}\",hca=\"{}\",port=\"{}\"", escape(n.host), escape(n.device), s.port);
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

void write_health_metrics(std::ostream& out, const topo::Fabric& f, const topo::CounterCollection* newest,
                          const std::vector<topo::CableHealth>& health, const topo::HealthThresholds& thresholds) {
  if (newest) {
    fmt::print(out, "# HELP topo_aware_health_collection_timestamp_seconds When the port counters were last read.\n"
                    "# TYPE topo_aware_health_collection_timestamp_seconds gauge\n"
                    "topo_aware_health_collection_timestamp_seconds {:.3f}\n",
               static_cast<double>(newest->taken_ms) / 1000);
    for (const PortMetric& m : kPortMetrics) {
      fmt::print(out, "# HELP {} {}\n# TYPE {} counter\n", m.name, m.help, m.name);
      for (const topo::PortSample& s : newest->samples)
        fmt::print(out, "{}{{{}}} {}\n", m.name, port_labels(f, s), m.value(s.counters));
    }
  }
  if (health.empty()) return;
  std::vector<topo::HealthFinding> sick = topo::check_health(health, thresholds);
  fmt::print(out, "# HELP topo_aware_cable_errors_per_hour Error counters of both ends, per hour, between the last "
                  "two collections.\n# TYPE topo_aware_cable_errors_per_hour gauge\n");
  for (const topo::CableHealth& h : health)
    fmt::print(out, "topo_aware_cable_errors_per_hour{{link=\"{}\"}} {:g}\n", escape(h.subject), h.errors_per_hour);
  fmt::print(out, "# HELP topo_aware_cable_transmit_wait_ratio Share of the time the cable's busier direction "
                  "waited to transmit.\n# TYPE topo_aware_cable_transmit_wait_ratio gauge\n");
  for (const topo::CableHealth& h : health)
    fmt::print(out, "topo_aware_cable_transmit_wait_ratio{{link=\"{}\"}} {:g}\n", escape(h.subject),
               h.xmit_wait_share);
  fmt::print(out, "# HELP topo_aware_cable_degraded_by_counters Cables past a health threshold, by the counter.\n"
                  "# TYPE topo_aware_cable_degraded_by_counters gauge\n");
  for (const topo::HealthFinding& x : sick)
    fmt::print(out, "topo_aware_cable_degraded_by_counters{{link=\"{}\",counter=\"{}\"}} 1\n", escape(x.subject),
               topo::name(x.counter));
}

void write_health_metrics(std::ostream& out, const std::string& db_path, int64_t snapshot_id,
                          const topo::HealthThresholds& thresholds) {
  topo::HealthStore store(db_path);
  std::vector<topo::CounterCollection> last = store.latest(snapshot_id, 2);
  if (last.empty()) return;
  topo::Fabric fabric = topo::SnapshotStore(db_path).load(snapshot_id);
  std::vector<topo::CableHealth> health =
      last.size() == 2 ? topo::cable_health(fabric, last[0], last[1]) : std::vector<topo::CableHealth>{};
  write_health_metrics(out, fabric, &last.back(), health, thresholds);
}

void write_baseline_metrics(std::ostream& out, const std::vector<topo::NcclRunRecord>& runs) {
  std::map<std::pair<std::string, std::vector<std::string>>, std::vector<const topo::NcclRunRecord*>> sets;
  for (const topo::NcclRunRecord& r : runs) sets[{r.run.test, r.hosts}].push_back(&r);
  if (sets.empty()) return;
  fmt::print(out, "# HELP topo_aware_nccl_bus_bandwidth_bytes_per_second nccl-tests out-of-place bus bandwidth at the "
                  "newest run's largest size: the newest run and the host set's first (baseline).\n"
                  "# TYPE topo_aware_nccl_bus_bandwidth_bytes_per_second gauge\n");
  std::string model_lines, count_lines;
  for (const auto& [key, list] : sets) {
    const topo::NcclRunRecord& now = *list.back();
    if (now.run.rows.empty()) continue;
    size_t last = now.run.rows.size() - 1;
    const topo::NcclTestsRow& row = now.run.rows[last];
    std::string labels = fmt::format("test=\"{}\",hosts=\"{}\",size=\"{}\"", escape(key.first),
                                     escape(topo::compress_hostlist(key.second)), row.size);
    fmt::print(out, "topo_aware_nccl_bus_bandwidth_bytes_per_second{{{},run=\"newest\"}} {:g}\n", labels,
               row.oop_busbw * 1e9);
    for (const topo::NcclTestsRow& b : list.front()->run.rows)
      if (b.size == row.size && b.type == row.type) {
        fmt::print(out, "topo_aware_nccl_bus_bandwidth_bytes_per_second{{{},run=\"baseline\"}} {:g}\n", labels,
                   b.oop_busbw * 1e9);
        break;
      }
    if (last < now.model_busbw.size() && now.model_busbw[last])
      model_lines += fmt::format("topo_aware_nccl_model_bus_bandwidth_bytes_per_second{{{}}} {:g}\n", labels,
                                 *now.model_busbw[last] * 1e9);
    count_lines += fmt::format("topo_aware_nccl_runs{{test=\"{}\",hosts=\"{}\"}} {}\n", escape(key.first),
                               escape(topo::compress_hostlist(key.second)), list.size());
  }
  fmt::print(out, "# HELP topo_aware_nccl_model_bus_bandwidth_bytes_per_second The model's bus bandwidth for the same "
                  "hosts and size.\n# TYPE topo_aware_nccl_model_bus_bandwidth_bytes_per_second gauge\n{}",
             model_lines);
  fmt::print(out, "# HELP topo_aware_nccl_runs nccl-tests runs imported for the host set.\n"
                  "# TYPE topo_aware_nccl_runs gauge\n{}",
             count_lines);
}

void write_baseline_metrics(std::ostream& out, const std::string& db_path) {
  write_baseline_metrics(out, topo::NcclBaselineStore(db_path).list());
}

}  // namespace topoctl
