// topoctl health: the port counters of every switch and HCA port, read live
// (--collect) and stored as a time series per snapshot; without --collect,
// the rates between the snapshot's last two collections: errors per hour per
// cable, with both ends, and the share of time each waited to transmit.
// Cables past a threshold are findings (exit 1); lint and placement treat
// them as degraded (tools/topoctl/input.cc, plugin/engine/engine_database.cc).
// On RoCE, --ethtool DIR (files per host) or --ethtool-local (this host)
// store NIC counters (health/ethtool_counters.h) as a collection of their
// own; the rates between the last two (pauses, time paused, ECN marks,
// CNPs, discards) are shown beside the cables', pause storms and ECN
// outliers being findings too (health/nic_health.h).
#include <unistd.h>
#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "db/health_store.h"
#include "db/snapshot_store.h"
#include "health/ethtool_counters.h"
#include "health/nic_health.h"
#include "health/port_counters.h"
#include "health/port_health.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/input.h"
#include "tools/topoctl/nic_input.h"

namespace topoctl {
namespace {

struct Options {
  FabricInput input;
  bool collect = false;
  bool json = false;
  bool all = false;
  std::string ca;
  int ca_port = 0;
  int timeout_ms = 0;
  topo::HealthThresholds thresholds;
  std::string ethtool_dir;
  bool ethtool_local = false;
  std::vector<std::string> ifaces;
  std::string host;
  topo::NicThresholds nic_thresholds;
};

// Progress on stderr: a line every tenth of a large fabric's ports.
topo::PortProgress progress_printer(bool quiet) {
  if (quiet) return {};
  return [step = size_t{0}](size_t done, size_t total) mutable {
    if (total < 100) return;
    if (step == 0) step = std::max<size_t>(1, total / 10);
    if (done % step == 0 || done == total) fmt::print(stderr, "health: {}/{} ports read\n", done, total);
  };
}

int collect(const Options& o) {
  topo::SnapshotStore snapshots(o.input.db_path);
  int64_t snapshot = snapshots.resolve(o.input.snapshot);
  topo::IbnetdiscOptions live;
  live.ca = o.ca;
  live.ca_port = o.ca_port;
  live.timeout_ms = o.timeout_ms;
  if (!o.json) fmt::print(stderr, "health: reading port counters through libibmad\n");
  topo::PortCounterRead read = topo::read_port_counters_live(live, progress_printer(o.json));
  // Ports the snapshot does not know would be stored but never rated: say so.
  topo::Fabric fabric = snapshots.load(snapshot);
  size_t unknown = 0;
  for (const topo::PortSample& s : read.samples) {
    auto v = fabric.find(s.node);
    unknown += !v || !fabric.cable_at(*v, s.port);
  }
  topo::HealthStore store(o.input.db_path);
  std::string source = "libibmad:" + (o.ca.empty() ? std::string("first HCA") : o.ca);
  int64_t id = store.add(snapshot, read.samples, source, read.unanswered);
  if (o.json) {
    std::cout << nlohmann::json{{"collection", id},
                                {"snapshot", snapshot},
                                {"ports", read.samples.size()},
                                {"unanswered", read.unanswered},
                                {"not_in_snapshot", unknown}}
                     .dump(2)
              << "\n";
  } else {
    fmt::print("stored collection {} of snapshot {}: {} ports, {} unanswered{}\n", id, snapshot, read.samples.size(),
               read.unanswered.size(),
               unknown ? fmt::format(", {} not cabled in the snapshot (discover again?)", unknown) : "");
    for (const std::string& u : read.unanswered) fmt::print("  no answer: {}\n", u);
  }
  return kOk;
}

int collect_nics(const Options& o) {
  topo::SnapshotStore snapshots(o.input.db_path);
  int64_t snapshot = snapshots.resolve(o.input.snapshot);
  std::vector<topo::NicSample> nics;
  std::vector<std::string> unread;
  std::string source;
  if (!o.ethtool_dir.empty()) {
    nics = topo::read_ethtool_dir(o.ethtool_dir);
    source = "ethtool:" + o.ethtool_dir;
  } else {
    std::string host = o.host.empty() ? local_host_name() : o.host;
    LocalNics local = read_local_nics(host, o.ifaces);
    nics = std::move(local.nics);
    unread = std::move(local.unread);
    source = "ethtool-local:" + host;
  }
  // NICs the snapshot does not know are stored but never marked: say so.
  topo::Fabric fabric = snapshots.load(snapshot);
  std::vector<std::string> unknown;
  for (const topo::NicSample& n : nics) {
    bool known = false;
    for (topo::NodeId v : fabric.hcas()) known |= fabric.node(v).host == n.host && fabric.node(v).device == n.iface;
    if (!known) unknown.push_back(n.host + " " + n.iface);
  }
  topo::HealthStore store(o.input.db_path);
  int64_t id = store.add_nics(snapshot, nics, source, unread);
  if (o.json) {
    std::cout << nlohmann::json{{"collection", id},
                                {"snapshot", snapshot},
                                {"nics", nics.size()},
                                {"unread", unread},
                                {"not_in_snapshot", unknown}}
                     .dump(2)
              << "\n";
  } else {
    fmt::print("stored NIC collection {} of snapshot {}: {} NIC{}, {} unread{}\n", id, snapshot, nics.size(),
               nics.size() == 1 ? "" : "s", unread.size(),
               unknown.empty() ? "" : fmt::format(", {} not in the snapshot (discover --lldp again?)", unknown.size()));
    for (const std::string& u : unread) fmt::print("  not read: {}\n", u);
    for (const std::string& u : unknown) fmt::print("  not in the snapshot: {}\n", u);
  }
  return unread.empty() ? kOk : kFindings;
}

// The NICs' rates between the snapshot's last two NIC collections.
struct NicSection {
  std::vector<topo::NicCollection> last;
  std::vector<topo::NicRates> rates;
  std::vector<topo::NicFinding> findings;
  bool rated() const { return last.size() == 2; }
};

NicSection nic_section(const Options& o, const topo::HealthStore& store, const topo::Fabric& fabric, int64_t snapshot) {
  NicSection s;
  s.last = store.latest_nics(snapshot, 2);
  if (!s.rated()) return s;
  s.rates = topo::nic_rates(fabric, s.last[0], s.last[1]);
  s.findings = topo::check_nic_health(s.rates, o.nic_thresholds);
  return s;
}

nlohmann::json nic_section_json(const Options& o, const NicSection& s) {
  nlohmann::json nics = nlohmann::json::array(), found = nlohmann::json::array();
  for (const topo::NicRates& r : s.rates) nics.push_back(nic_rates_json(r));
  for (const topo::NicFinding& x : s.findings) found.push_back(nic_finding_json(x));
  return {{"from", {{"collection", s.last[0].id}, {"taken_at", s.last[0].taken_at}}},
          {"to", {{"collection", s.last[1].id}, {"taken_at", s.last[1].taken_at}}},
          {"seconds", (s.last[1].taken_ms - s.last[0].taken_ms) / 1000.0},
          {"thresholds",
           {{"pauses_per_second", o.nic_thresholds.pauses_per_second},
            {"ecn_over_median", o.nic_thresholds.ecn_over_median},
            {"ecn_marks_per_second", o.nic_thresholds.ecn_marks_per_second}}},
          {"nics", nics},
          {"findings", found}};
}

void print_nic_section(const Options& o, const NicSection& s) {
  fmt::print("NIC collections {} ({}) -> {} ({}), {:.1f} s, {} NICs rated\n", s.last[0].id, s.last[0].taken_at,
             s.last[1].id, s.last[1].taken_at, (s.last[1].taken_ms - s.last[0].taken_ms) / 1000.0, s.rates.size());
  print_nic_rates(s.rates, o.all);
  for (const topo::NicFinding& x : s.findings) fmt::print("{:<12} {:<44} {}\n", topo::name(x.kind), x.subject, x.why);
  fmt::print("{} NIC{} past a threshold (pauses/s >= {:g}; ECN marks > {:g}x the tier's median and >= {:g}/s)\n",
             s.findings.size(), s.findings.size() == 1 ? "" : "s", o.nic_thresholds.pauses_per_second,
             o.nic_thresholds.ecn_over_median, o.nic_thresholds.ecn_marks_per_second);
}

nlohmann::json end_json(const topo::PortRates& r) {
  nlohmann::json errors = nlohmann::json::object(), per_hour = nlohmann::json::object();
  for (size_t i = 0; i < std::size(topo::kErrorCounters); ++i) {
    errors[std::string(topo::name(topo::kErrorCounters[i]))] = r.errors[i];
    per_hour[std::string(topo::name(topo::kErrorCounters[i]))] = r.errors_per_hour[i];
  }
  return {{"node", r.node},
          {"name", r.name},
          {"port", r.port},
          {"errors", errors},
          {"errors_per_hour", per_hour},
          {"xmit_wait", r.xmit_wait},
          {"xmit_wait_share", r.xmit_wait_share},
          {"xmit_gbps", r.xmit_gbps},
          {"rcv_gbps", r.rcv_gbps},
          {"reset", r.reset}};
}

// With fewer than two port counter collections: the NICs' section alone, or
// why there are no rates yet.
int show_without_port_rates(const Options& o, int64_t snapshot, size_t collections, const NicSection& nics) {
  if (nics.rated()) {
    if (o.json)
      std::cout << nlohmann::json{{"snapshot", snapshot},
                                  {"collections", collections},
                                  {"nic_health", nic_section_json(o, nics)}}
                       .dump(2)
                << "\n";
    else
      print_nic_section(o, nics);
    return nics.findings.empty() ? kOk : kFindings;
  }
  std::string why = fmt::format(
      "snapshot {} has {} port counter collection{}; rates need two (run topoctl health "
      "--collect twice, some time apart)",
      snapshot, collections, collections == 1 ? "" : "s");
  if (o.json)
    std::cout << nlohmann::json{{"snapshot", snapshot}, {"collections", collections}, {"note", why}}.dump(2) << "\n";
  else
    fmt::print("{}\n", why);
  return kOk;
}

// The cables show lists: every one with --all, else those with errors or transmit wait.
bool listed(const Options& o, const topo::CableHealth& h) {
  return o.all || h.errors_per_hour > 0 || h.xmit_wait_share > 0;
}

// The two collections rated, their cables worst first and the findings.
struct RatedCables {
  int64_t snapshot = 0;
  const topo::CounterCollection& from;
  const topo::CounterCollection& to;
  std::vector<topo::CableHealth> health;
  std::vector<topo::HealthFinding> findings;
  double seconds() const { return (to.taken_ms - from.taken_ms) / 1000.0; }
};

nlohmann::json port_rates_json(const Options& o, const RatedCables& r, const NicSection& nics) {
  nlohmann::json cables = nlohmann::json::array(), found = nlohmann::json::array();
  for (const topo::CableHealth& h : r.health) {
    if (!listed(o, h)) continue;
    nlohmann::json ends = nlohmann::json::array();
    for (const topo::PortRates& end : h.ends) ends.push_back(end_json(end));
    cables.push_back({{"cable", h.cable},
                      {"link", h.subject},
                      {"errors_per_hour", h.errors_per_hour},
                      {"worst_counter", topo::name(h.worst)},
                      {"xmit_wait_share", h.xmit_wait_share},
                      {"ends", ends}});
  }
  for (const topo::HealthFinding& x : r.findings)
    found.push_back({{"cable", x.cable},
                     {"link", x.subject},
                     {"counter", topo::name(x.counter)},
                     {"value", x.value},
                     {"threshold", x.threshold},
                     {"detail", x.why}});
  return {{"snapshot", r.snapshot},
          {"from", {{"collection", r.from.id}, {"taken_at", r.from.taken_at}}},
          {"to", {{"collection", r.to.id}, {"taken_at", r.to.taken_at}}},
          {"seconds", r.seconds()},
          {"thresholds",
           {{"errors_per_hour", o.thresholds.errors_per_hour}, {"xmit_wait_share", o.thresholds.xmit_wait_share}}},
          {"cables_rated", r.health.size()},
          {"cables", cables},
          {"findings", found},
          {"nic_health", nics.rated() ? nic_section_json(o, nics) : nlohmann::json()}};
}

void print_port_rates(const Options& o, const RatedCables& r, const NicSection& nics) {
  fmt::print("snapshot {}: collections {} ({}) -> {} ({}), {:.1f} s, {} cables rated\n", r.snapshot, r.from.id,
             r.from.taken_at, r.to.id, r.to.taken_at, r.seconds(), r.health.size());
  size_t shown = 0;
  for (const topo::CableHealth& h : r.health) {
    if (!listed(o, h)) continue;
    if (shown++ == 0) fmt::print("{:<44} {:>12} {:<26} {:>9}\n", "link", "errors/h", "mostly", "xmitwait");
    fmt::print("{:<44} {:>12.4g} {:<26} {:>8.2f}%\n", h.subject, h.errors_per_hour,
               h.errors_per_hour > 0 ? topo::name(h.worst) : "-", 100 * h.xmit_wait_share);
  }
  if (shown == 0) fmt::print("no errors and no transmit wait on any cable\n");
  for (const topo::HealthFinding& x : r.findings) fmt::print("sick  {:<44} {}\n", x.subject, x.why);
  fmt::print("{} cable{} past a threshold (errors/h >= {:g}, XmitWait >= {:g}%)\n", r.findings.size(),
             r.findings.size() == 1 ? "" : "s", o.thresholds.errors_per_hour, 100 * o.thresholds.xmit_wait_share);
  if (nics.rated()) print_nic_section(o, nics);
}

int show(const Options& o) {
  topo::SnapshotStore snapshots(o.input.db_path);
  int64_t snapshot = snapshots.resolve(o.input.snapshot);
  topo::HealthStore store(o.input.db_path);
  std::vector<topo::CounterCollection> last = store.latest(snapshot, 2);
  NicSection nics =
      store.list_nics(snapshot).size() >= 2 ? nic_section(o, store, snapshots.load(snapshot), snapshot) : NicSection{};
  if (last.size() < 2) return show_without_port_rates(o, snapshot, last.size(), nics);
  topo::Fabric fabric = snapshots.load(snapshot);
  RatedCables r{snapshot, last[0], last[1], topo::cable_health(fabric, last[0], last[1]), {}};
  r.findings = topo::check_health(r.health, o.thresholds);
  std::stable_sort(r.health.begin(), r.health.end(), [](const auto& a, const auto& b) {
    return std::make_pair(a.errors_per_hour, a.xmit_wait_share) > std::make_pair(b.errors_per_hour, b.xmit_wait_share);
  });
  if (o.json)
    std::cout << port_rates_json(o, r, nics).dump(2) << "\n";
  else
    print_port_rates(o, r, nics);
  return r.findings.empty() && nics.findings.empty() ? kOk : kFindings;
}

// topo_aware.conf's thresholds, ports' and NICs', for those not given on
// the command line: lint, place and metrics judge by the same.
void conf_thresholds(Options& o, const CLI::App& cmd) {
  const topo::EngineConfig site = site_config(o.input.conf);
  auto take = [&](const char* option, double& value, double conf) {
    if (cmd.count(option) == 0) value = conf;
  };
  take("--errors-per-hour", o.thresholds.errors_per_hour, site.health.errors_per_hour);
  take("--xmit-wait-share", o.thresholds.xmit_wait_share, site.health.xmit_wait_share);
  take("--pauses-per-second", o.nic_thresholds.pauses_per_second, site.nic.pauses_per_second);
  take("--ecn-over-median", o.nic_thresholds.ecn_over_median, site.nic.ecn_over_median);
  take("--ecn-marks-per-second", o.nic_thresholds.ecn_marks_per_second, site.nic.ecn_marks_per_second);
}

}  // namespace

Run add_health(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "health", "port counters per cable: collect them live, or show the rates between the last two collections");
  add_db_option(*cmd, opts->input.db_path);
  cmd->add_option("--snapshot", opts->input.snapshot, "snapshot the ports belong to: id, or 'latest'")
      ->capture_default_str();
  cmd->add_flag("--collect", opts->collect,
                "read every switch and HCA port's counters through libibmad (PortCounters, PortCountersExtended) "
                "and store them");
  cmd->add_option("--ca", opts->ca, "HCA to query through (default: the first one)");
  cmd->add_option("--ca-port", opts->ca_port, "port of that HCA (default: the first active one)");
  cmd->add_option("--timeout-ms", opts->timeout_ms, "per-query timeout (default: libibmad's)");
  cmd->add_option("--errors-per-hour", opts->thresholds.errors_per_hour,
                  "a cable whose ends count this many errors per hour is sick (default: "
                  "topo_aware.conf's HealthErrorsPerHour, else this)")
      ->capture_default_str();
  cmd->add_option("--xmit-wait-share", opts->thresholds.xmit_wait_share,
                  "a cable that waits to transmit this share of the time (0-1) is sick (default: "
                  "topo_aware.conf's HealthXmitWaitShare, else this)")
      ->capture_default_str();
  auto* ethtool = cmd->add_option("--ethtool", opts->ethtool_dir,
                                  "store NIC counters from a directory of ethtool -S output, a HOST.txt per host "
                                  "with a '# iface NAME' line before each NIC's (see README, PFC / ECN health)")
                      ->check(CLI::ExistingDirectory);
  auto* local = cmd->add_flag("--ethtool-local", opts->ethtool_local,
                              "store this host's NIC counters: ethtool -S of its RDMA netdevs (or --iface)");
  local->excludes(ethtool);
  cmd->add_option("--iface", opts->ifaces, "with --ethtool-local: the NICs to read (default: every RDMA netdev)");
  cmd->add_option("--host", opts->host, "with --ethtool-local: this host's name in the fabric (default: hostname)");
  cmd->add_option("--pauses-per-second", opts->nic_thresholds.pauses_per_second,
                  "a NIC receiving or sending this many pause frames per second is in a pause storm (default: "
                  "topo_aware.conf's HealthPausesPerSecond, else this)")
      ->capture_default_str();
  cmd->add_option("--ecn-over-median", opts->nic_thresholds.ecn_over_median,
                  "a NIC whose ECN marks per second pass this many times its tier's median is an outlier "
                  "(default: topo_aware.conf's HealthEcnOverMedian, else this)")
      ->capture_default_str();
  cmd->add_option("--ecn-marks-per-second", opts->nic_thresholds.ecn_marks_per_second,
                  "ECN marks per second below which a NIC is never an outlier (default: topo_aware.conf's "
                  "HealthEcnMarksPerSecond, else this)")
      ->capture_default_str();
  add_conf_option(*cmd, opts->input.conf);
  cmd->add_flag("--all", opts->all, "list every rated cable, quiet ones too");
  cmd->add_flag("--json", opts->json, "print JSON for scripts");
  return [opts, cmd] {
    if (!opts->ethtool_dir.empty() || opts->ethtool_local) return collect_nics(*opts);
    if (opts->collect) return collect(*opts);
    conf_thresholds(*opts, *cmd);
    return show(*opts);
  };
}

}  // namespace topoctl
