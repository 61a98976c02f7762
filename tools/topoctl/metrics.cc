// topoctl metrics: the exposition text, on stdout or written atomically for
// node_exporter's textfile collector.
#include "tools/topoctl/metrics.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "tools/topoctl/command.h"
#include "tools/topoctl/health_metrics.h"
#include "tools/topoctl/input.h"
#include "tools/topoctl/view_input.h"

namespace topoctl {

namespace {

std::string escape_help(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string escape_label(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string value_text(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

}  // namespace

void Exposition::family(std::string_view name, std::string_view type, std::string_view help) {
  text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, escape_help(help), name, type);
}

void Exposition::sample(std::string_view name, const Labels& labels, double value) {
  text_ += name;
  if (!labels.empty()) {
    text_ += '{';
    for (size_t i = 0; i < labels.size(); ++i)
      text_ += fmt::format("{}{}=\"{}\"", i ? "," : "", labels[i].first, escape_label(labels[i].second));
    text_ += '}';
  }
  text_ += ' ' + value_text(value) + '\n';
}

std::optional<double> epoch_seconds(std::string_view iso) {
  std::tm tm{};
  std::string text(iso);
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (!end || *end) return std::nullopt;
  return static_cast<double>(timegm(&tm));
}

void snapshot_metrics(Exposition& out, const SnapshotFacts& facts) {
  out.family("topo_aware_snapshots", "gauge", "Fabric snapshots stored in the database.");
  out.sample("topo_aware_snapshots", static_cast<double>(facts.snapshots.size()));
  if (facts.snapshots.empty() || !facts.latest) return;
  const topo::SnapshotInfo& info = facts.snapshots.back();
  const topo::Fabric& f = *facts.latest;
  out.family("topo_aware_snapshot_latest_id", "gauge", "Id of the latest snapshot.");
  out.sample("topo_aware_snapshot_latest_id", static_cast<double>(info.id));
  if (std::optional<double> t = epoch_seconds(info.taken_at)) {
    out.family("topo_aware_snapshot_latest_timestamp_seconds", "gauge",
               "When the latest snapshot was taken (Unix time).");
    out.sample("topo_aware_snapshot_latest_timestamp_seconds", *t);
  }
  out.family("topo_aware_fabric_hosts", "gauge", "Hosts in the latest snapshot's fabric.");
  out.sample("topo_aware_fabric_hosts", f.summary().hosts);
  out.family("topo_aware_fabric_switches", "gauge", "Switches in the latest snapshot's fabric, per level.");
  std::map<std::string, int> levels = {{"leaf", 0}, {"spine", 0}, {"core", 0}, {"unknown", 0}};
  for (topo::NodeId sw : f.switches()) ++levels[std::string(topo::name(f.node(sw).level))];
  for (const auto& [level, count] : levels) out.sample("topo_aware_fabric_switches", {{"level", level}}, count);
  out.family("topo_aware_fabric_cables", "gauge", "Cables in the latest snapshot's fabric.");
  out.sample("topo_aware_fabric_cables", static_cast<double>(f.cables().size()));
  out.family("topo_aware_fabric_pods", "gauge", "Pods in the latest snapshot's fabric.");
  out.sample("topo_aware_fabric_pods", f.summary().pods);
  out.family("topo_aware_fabric_rails", "gauge", "Rails (HCA indices) in the latest snapshot's fabric.");
  out.sample("topo_aware_fabric_rails", f.summary().rails);

  std::map<std::string, int> faults;
  for (topo::FaultKind k :
       {topo::FaultKind::DegradedLink, topo::FaultKind::InactiveLink, topo::FaultKind::MissingUplinks,
        topo::FaultKind::UnequalUplinks, topo::FaultKind::UnreachableHost, topo::FaultKind::IsolatedSwitch})
    faults[std::string(topo::name(k))] = 0;
  for (const topo::Fault& fault : f.faults()) ++faults[std::string(topo::name(fault.kind))];
  out.family("topo_aware_fabric_faults", "gauge", "Faults topoctl lint finds in the latest snapshot, per kind.");
  for (const auto& [kind, count] : faults) out.sample("topo_aware_fabric_faults", {{"kind", kind}}, count);

  std::map<std::string, std::pair<int, int>> by_tier;  // degraded, down
  for (topo::Tier t : {topo::Tier::HostLeaf, topo::Tier::LeafSpine, topo::Tier::SpineCore, topo::Tier::Other})
    by_tier[std::string(topo::name(t))] = {0, 0};
  for (topo::LinkId e : f.cables()) {
    const topo::Link& l = f.link(e);
    auto& [degraded, down] = by_tier[std::string(topo::name(l.tier))];
    if (l.state != topo::PortState::Active)
      ++down;
    else if (l.degraded)
      ++degraded;
  }
  out.family("topo_aware_fabric_degraded_cables", "gauge",
             "Active cables narrower or slower than their tier's, per tier.");
  for (const auto& [tier, counts] : by_tier)
    out.sample("topo_aware_fabric_degraded_cables", {{"tier", tier}}, counts.first);
  out.family("topo_aware_fabric_down_cables", "gauge", "Cabled ports not Active, per tier.");
  for (const auto& [tier, counts] : by_tier)
    out.sample("topo_aware_fabric_down_cables", {{"tier", tier}}, counts.second);
}

void placement_metrics(Exposition& out, const std::vector<topo::PlacementRecord>& recent) {
  int fallbacks = 0, judged = 0;
  double sum = 0, worst = 0, newest = 0;
  for (const topo::PlacementRecord& r : recent) {
    if (r.fallback) ++fallbacks;
    if (r.ideal_s > 0 && r.estimate_s > 0) {
      double s = r.estimate_s / r.ideal_s;
      sum += s;
      worst = std::max(worst, s);
      ++judged;
    }
    if (std::optional<double> t = epoch_seconds(r.placed_at)) newest = std::max(newest, *t);
  }
  out.family("topo_aware_placement_recent_jobs", "gauge",
             "Jobs among the recent placements (the newest record of each).");
  out.sample("topo_aware_placement_recent_jobs", static_cast<double>(recent.size()));
  out.family("topo_aware_placement_recent_fallbacks", "gauge",
             "Recent jobs that got cons_tres's own choice instead of topo-aware's.");
  out.sample("topo_aware_placement_recent_fallbacks", fallbacks);
  if (judged > 0) {
    out.family("topo_aware_placement_recent_slowdown", "gauge",
               "Estimate over ideal of the recent jobs' collectives (comm_model), mean and worst.");
    out.sample("topo_aware_placement_recent_slowdown", {{"stat", "mean"}}, sum / judged);
    out.sample("topo_aware_placement_recent_slowdown", {{"stat", "max"}}, worst);
  }
  if (newest > 0) {
    out.family("topo_aware_placement_latest_timestamp_seconds", "gauge",
               "When the newest placement was recorded (Unix time).");
    out.sample("topo_aware_placement_latest_timestamp_seconds", newest);
  }
}

std::string metrics_text(const std::string& db_path, const topo::Fabric* latest, const std::string& conf,
                         topo::Access access) {
  if (access == topo::Access::ReadWrite) require_database(db_path);
  const topo::EngineConfig site = site_config(conf);
  Exposition out;
  SnapshotFacts facts;
  std::optional<topo::Fabric> loaded;
  {
    topo::SnapshotStore store(db_path, {.access = access});
    facts.snapshots = store.list();
    if (!facts.snapshots.empty() && !latest) loaded.emplace(store.load(facts.snapshots.back().id));
  }
  facts.latest = latest ? latest : loaded ? &*loaded : nullptr;
  snapshot_metrics(out, facts);
  placement_metrics(out, topo::PlacementStore(db_path, {.access = access}).recent(kRecentPlacements));
  if (facts.latest)
    health_metrics(out, db_path, facts.snapshots.back().id, *facts.latest, site.health, site.nic, access);
  baseline_metrics(out, db_path, access);
  return out.text();
}

Run add_metrics(CLI::App& app) {
  struct Options {
    std::string db_path = default_db_path();
    std::string textfile_dir;
    std::string conf;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "metrics",
      "print the snapshot and placement figures as Prometheus metrics, or write them for the textfile collector");
  add_db_option(*cmd, opts->db_path);
  add_conf_option(*cmd, opts->conf);
  cmd->add_option("--textfile", opts->textfile_dir,
                  "write DIR/topo_aware.prom atomically (node_exporter --collector.textfile.directory=DIR)")
      ->check(CLI::ExistingDirectory);
  cmd->footer("The output is the Prometheus text exposition format itself, which is what scripts read.");
  return [opts] {
    std::string text = metrics_text(opts->db_path, nullptr, opts->conf);
    if (opts->textfile_dir.empty()) {
      std::cout << text;
      return kOk;
    }
    std::filesystem::path file = std::filesystem::path(opts->textfile_dir) / "topo_aware.prom";
    write_atomically(file.string(), text);
    fmt::print("{}\n", file.string());
    return kOk;
  };
}

}  // namespace topoctl
