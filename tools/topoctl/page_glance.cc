#include "tools/topoctl/page_glance.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "tools/topoctl/metrics.h"
#include "tools/view/fabric_scene.h"

namespace topoctl {

using topo::view::Card;
using topo::view::count_of;

std::string age_text(double s) {
  if (s < 0) return "in the future (clock skew)";
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 7200) return fmt::format("{:.0f} min", s / 60);
  if (s < 2 * 86400) return fmt::format("{:.0f} h", s / 3600);
  return fmt::format("{:.0f} days", s / 86400);
}

namespace {

Card hosts_card(const Glance& g) {
  const topo::Fabric& f = *g.fabric;
  std::vector<bool> busy(f.node_count(), false), sick = topo::view::sick_hosts(f);
  for (const topo::PlacementRecord& r : g.running)
    for (const std::string& name : r.hosts)
      if (std::optional<topo::NodeId> h = f.find_host(name)) busy[*h] = true;
  long long hosts[3] = {0, 0, 0}, gpus[3] = {0, 0, 0};  // free, busy, sick
  for (topo::NodeId h : f.hosts()) {
    int state = sick[h] ? 2 : busy[h] ? 1 : 0;
    ++hosts[state];
    gpus[state] += static_cast<long long>(f.node(h).gpus.size());
  }
  Card c{"card-hosts",
         "hosts and GPUs",
         count_of(static_cast<long long>(f.hosts().size()), "host"),
         {},
         "/fabric",
         "the fabric picture",
         hosts[2] ? "warn" : "ok"};
  c.lines.push_back(fmt::format("{} free, {} busy, {} sick", hosts[0], hosts[1], hosts[2]));
  long long all_gpus = gpus[0] + gpus[1] + gpus[2];
  c.lines.push_back(
      all_gpus ? fmt::format("{}: {} free, {} busy, {} sick", count_of(all_gpus, "GPU"), gpus[0], gpus[1], gpus[2])
               : "no GPUs recorded in this snapshot");
  return c;
}

Card jobs_card(const Glance& g) {
  size_t slow = 0;
  double worst = 0;
  for (const topo::PlacementRecord& r : g.running) {
    if (r.ideal_s <= 0) continue;
    double s = r.estimate_s / r.ideal_s;
    worst = std::max(worst, s);
    if (s > kSlowJob) ++slow;
  }
  Card c{"card-jobs",
         "running topo-aware jobs",
         count_of(static_cast<long long>(g.running.size()), "job"),
         {fmt::format("{} estimated slower than {:.2f}x their ideal", slow, kSlowJob)},
         "/jobs?sort=slowdown&order=desc",
         "jobs, slowest first",
         slow ? "warn" : "ok"};
  if (worst > 0) c.lines.push_back(fmt::format("slowest {:.2f}x", worst));
  return c;
}

Card faults_card(const Glance& g) {
  std::map<std::string, long long> by_kind;
  bool grave = false;
  for (const topo::Fault& f : g.fabric->faults()) {
    ++by_kind[std::string(topo::name(f.kind))];
    grave |= f.kind == topo::FaultKind::InactiveLink || f.kind == topo::FaultKind::UnreachableHost ||
             f.kind == topo::FaultKind::IsolatedSwitch;
  }
  long long n = static_cast<long long>(g.fabric->faults().size());
  Card c{
      "card-faults", "faults", count_of(n, "fault"), {}, "/lint", "lint findings", grave ? "bad" : n ? "warn" : "ok"};
  for (auto& [kind, count] : by_kind) c.lines.push_back(fmt::format("{} {}", count, kind));
  if (by_kind.empty()) c.lines.push_back("none found by lint");
  return c;
}

Card snapshot_card(const Glance& g) {
  Card c{"card-snapshot", "snapshot", fmt::format("#{}", g.info.id), {}, "/snapshots", "all snapshots", ""};
  std::optional<double> taken = epoch_seconds(g.info.taken_at);
  c.lines.push_back(taken ? fmt::format("taken {} ago ({})", age_text(g.now_s - *taken), g.info.taken_at)
                          : "taken " + g.info.taken_at);
  if (!g.previous) {
    c.lines.push_back("the first snapshot: nothing to compare");
    return c;
  }
  std::map<std::string, long long> by_kind;
  for (const topo::FabricChange& ch : g.changes) ++by_kind[std::string(topo::name(ch.kind))];
  c.lines.push_back(
      fmt::format("{} since snapshot {}", count_of(static_cast<long long>(g.changes.size()), "change"), *g.previous));
  for (auto& [kind, count] : by_kind) c.lines.push_back(fmt::format("{} {}", count, kind));
  c.link = fmt::format("/diff?from={}&to={}", *g.previous, g.info.id);
  c.link_text = "what changed";
  c.state = g.changes.empty() ? "ok" : "warn";
  return c;
}

Card fabric_card(const Glance& g) {
  const topo::FabricSummary& s = g.fabric->summary();
  Card c{"card-fabric",
         "fabric and routing",
         g.info.routing,
         {},
         "/lint#routing",
         "routing findings",
         g.routing_findings ? "warn" : "ok"};
  c.lines.push_back(fmt::format("{}, {}, {}", count_of(s.leaves, "leaf", "leaves"), count_of(s.spines, "spine"),
                                count_of(s.cores, "core")));
  c.lines.push_back(fmt::format("{}, {}", count_of(s.pods, "pod"), count_of(s.links, "cable")));
  c.lines.push_back(count_of(static_cast<long long>(g.routing_findings), "routing finding"));
  return c;
}

Card health_card(const Glance& g) {
  Card c{"card-health", "counters", "", {}, "/health", "cables and NICs, sick first", ""};
  if (!g.rated) {
    c.figure = "no rates";
    c.lines.push_back("fewer than two counter collections of this snapshot");
    return c;
  }
  c.figure = fmt::format("{} sick", *g.sick_rated);
  c.lines.push_back(fmt::format("of {} rated between the last two collections",
                                count_of(static_cast<long long>(*g.rated), "cable or NIC", "cables and NICs")));
  c.state = *g.sick_rated ? "bad" : "ok";
  return c;
}

Card domains_card(const Glance& g) {
  const topo::NvlinkDomains& d = g.fabric->domains();
  size_t inside = 0;
  for (size_t i = 0; i < d.count(); ++i) inside += d.hosts(static_cast<int>(i)).size();
  Card c{"card-domains",
         "NVLink domains",
         count_of(static_cast<long long>(d.count()), "domain"),
         {},
         "/fabric#picture",
         "racks on the fabric",
         ""};
  c.lines.push_back(fmt::format("largest {}", count_of(d.largest(), "host")));
  c.lines.push_back(
      fmt::format("{} outside a domain", count_of(static_cast<long long>(g.fabric->hosts().size() - inside), "host")));
  return c;
}

}  // namespace

std::vector<Card> glance_cards(const Glance& g) {
  std::vector<Card> cards = {hosts_card(g),    jobs_card(g),   faults_card(g),
                             snapshot_card(g), fabric_card(g), health_card(g)};
  if (!g.fabric->domains().empty()) cards.push_back(domains_card(g));
  return cards;
}

}  // namespace topoctl
