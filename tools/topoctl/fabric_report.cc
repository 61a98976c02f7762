#include "tools/topoctl/fabric_report.h"

#include <map>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "common/hostlist.h"
#include "fabric/classify.h"

namespace topoctl {
namespace {

using nlohmann::json;
using topo::Fabric;
using topo::Level;
using topo::NodeId;

std::vector<std::string> host_names(const Fabric& f, const std::vector<NodeId>& hosts) {
  std::vector<std::string> names;
  for (NodeId h : hosts) names.push_back(f.node(h).name);
  return names;
}

json rate_json(const topo::LinkRate& r) {
  return {{"width", topo::name(r.width)}, {"speed", topo::name(r.speed)}, {"gbps", r.gbps()}};
}

json end_json(const Fabric& f, NodeId v, int port) {
  const topo::Node& n = f.node(v);
  json j = {{"node", n.name}, {"port", port}, {"kind", topo::name(n.kind)}};
  if (n.kind == topo::NodeKind::Hca) j["host"] = n.host;
  return j;
}

// "static:ftree (emulated)", "static (opensm-dump:/var/log/opensm-lfts.dump)", "adaptive".
std::string routing_line(const topo::Routing& r) {
  if (!r.is_static()) return topo::routing_name(r);
  return fmt::format("{} ({})", topo::routing_name(r), r.emulated ? "emulated" : r.source.empty() ? "read" : r.source);
}

std::vector<std::string> domain_hosts(const Fabric& f, int domain) {
  std::vector<std::string> names;
  for (int h : f.domains().hosts(domain)) names.push_back(f.node(f.hosts()[h]).name);
  return names;
}

size_t hosts_in_domains(const topo::NvlinkDomains& d) {
  size_t n = 0;
  for (size_t i = 0; i < d.count(); ++i) n += d.hosts(static_cast<int>(i)).size();
  return n;
}

std::string ratio(double oversubscription) {
  return oversubscription > 0 ? fmt::format("{:.2f}:1", oversubscription) : "-";
}

}  // namespace

json fabric_json(const LoadedFabric& loaded) {
  const Fabric& f = loaded.fabric;
  const topo::FabricSummary& s = f.summary();
  json leaves = json::array();
  for (NodeId leaf : f.switches_at(Level::Leaf)) {
    const topo::Node& n = f.node(leaf);
    std::vector<std::string> hosts = host_names(f, f.hosts_under(leaf));
    leaves.push_back({{"name", n.name},
                      {"hosts", hosts.size()},
                      {"host_list", topo::compress_hostlist(hosts)},
                      {"pod", n.pod},
                      {"oversubscription", n.oversubscription()},
                      {"down_gbps", n.down_gbps},
                      {"up_gbps", n.up_gbps}});
  }
  json degraded = json::array();
  for (auto e : boost::make_iterator_range(boost::edges(f.graph()))) {
    const topo::Link& l = f.link(e);
    if (!l.degraded) continue;
    json d = rate_json(l.rate);
    topo::LinkEnds ends = topo::ordered_ends(f, e);
    d["a"] = end_json(f, ends.lower, ends.lower_port);
    d["b"] = end_json(f, ends.upper, ends.upper_port);
    d["tier"] = topo::name(l.tier);
    d["expected"] = rate_json(l.expected);
    degraded.push_back(std::move(d));
  }
  json out = {{"source", f.source()},
              {"hosts", s.hosts},
              {"hcas", s.hcas},
              {"links", s.links},
              {"switches", {{"leaf", s.leaves}, {"spine", s.spines}, {"core", s.cores}}},
              {"leaves", std::move(leaves)},
              {"rails", s.rails},
              {"rail_optimized", s.rail_optimized},
              {"pods", s.pods},
              {"degraded_links", std::move(degraded)},
              {"faults", f.faults().size()},
              {"routing", topo::routing_name(f.routing())},
              {"nvlink", domains_json(f)}};
  if (f.routing().is_static()) {
    out["routing_source"] = f.routing().source;
    out["routing_emulated"] = f.routing().emulated;
  }
  if (loaded.snapshot) {
    out["snapshot"] = *loaded.snapshot;
    out["taken_at"] = loaded.taken_at;
  }
  return out;
}

json faults_json(const Fabric& fabric) {
  json out = json::array();
  for (const topo::Fault& fault : fabric.faults())
    out.push_back({{"kind", topo::name(fault.kind)}, {"subject", fault.subject}, {"detail", fault.detail}});
  return out;
}

void print_summary(std::ostream& out, const LoadedFabric& loaded) {
  const Fabric& f = loaded.fabric;
  const topo::FabricSummary& s = f.summary();
  if (loaded.snapshot) fmt::print(out, "snapshot {}  taken {}\n", *loaded.snapshot, loaded.taken_at);
  fmt::print(out, "source    {}\n", f.source());
  fmt::print(out, "hosts     {}   hcas {}   cables {}\n", s.hosts, s.hcas, s.links);
  fmt::print(out, "switches  leaf {}   spine {}   core {}\n", s.leaves, s.spines, s.cores);
  fmt::print(out, "pods      {}   rails {}{}\n", s.pods, s.rails, s.rail_optimized ? " (rail-optimized)" : "");
  fmt::print(out, "routing   {}\n", routing_line(f.routing()));
  const topo::NvlinkDomains& d = f.domains();
  if (!d.reports().empty())
    fmt::print(out, "nvlink    {} domain{} ({}, at most {} hosts, {:g} GB/s per GPU), {} host{} in them\n", d.count(),
               d.count() == 1 ? "" : "s", d.spec().generation, d.spec().max_hosts, d.spec().gpu_gbytes_per_s,
               hosts_in_domains(d), hosts_in_domains(d) == 1 ? "" : "s");
  fmt::print(out, "faults    {}{}\n", f.faults().size(), f.faults().empty() ? "" : "  (topoctl lint lists them)");
}

json domains_json(const Fabric& f) {
  const topo::NvlinkDomains& d = f.domains();
  if (d.reports().empty()) return nullptr;
  json domains = json::array();
  for (size_t i = 0; i < d.count(); ++i) {
    std::vector<std::string> hosts = domain_hosts(f, static_cast<int>(i));
    domains.push_back({{"name", d.key(static_cast<int>(i)).str()},
                       {"cluster_uuid", d.key(static_cast<int>(i)).cluster_uuid},
                       {"clique_id", d.key(static_cast<int>(i)).clique_id},
                       {"hosts", hosts.size()},
                       {"host_list", topo::compress_hostlist(hosts)}});
  }
  std::vector<std::string> outside;
  for (size_t h = 0; h < d.reports().size(); ++h)
    if (d.reports()[h].claimed && d.domain_of(static_cast<int>(h)) < 0) outside.push_back(f.node(f.hosts()[h]).name);
  return {{"generation", d.spec().generation},
          {"gbytes_per_gpu", d.spec().gpu_gbytes_per_s},
          {"max_hosts", d.spec().max_hosts},
          {"max_gpus", d.spec().max_gpus},
          {"source", d.spec().source},
          {"domains", std::move(domains)},
          {"counted_outside", topo::compress_hostlist(outside)}};
}

void print_domains(std::ostream& out, const Fabric& f) {
  const topo::NvlinkDomains& d = f.domains();
  if (d.empty()) return;
  fmt::print(out, "\n{:<44} {:>5}  {}\n", "nvlink domain", "hosts", "hosts");
  for (size_t i = 0; i < d.count(); ++i) {
    std::vector<std::string> hosts = domain_hosts(f, static_cast<int>(i));
    fmt::print(out, "{:<44} {:>5}  {}\n", d.key(static_cast<int>(i)).str(), hosts.size(),
               topo::compress_hostlist(hosts));
  }
}

void print_leaves(std::ostream& out, const Fabric& f) {
  fmt::print(out, "\n{:<16} {:>5} {:>4} {:>10} {:>10} {:>9}  {}\n", "leaf", "hosts", "pod", "down Gb/s", "up Gb/s",
             "oversub", "hosts");
  for (NodeId leaf : f.switches_at(Level::Leaf)) {
    const topo::Node& n = f.node(leaf);
    std::vector<std::string> hosts = host_names(f, f.hosts_under(leaf));
    fmt::print(out, "{:<16} {:>5} {:>4} {:>10g} {:>10g} {:>9}  {}\n", n.name, hosts.size(), n.pod, n.down_gbps,
               n.up_gbps, ratio(n.oversubscription()), topo::compress_hostlist(hosts));
  }
}

void print_tree(std::ostream& out, const Fabric& f) {
  std::vector<NodeId> cores = f.switches_at(Level::Core);
  if (!cores.empty()) {
    std::vector<std::string> names;
    for (NodeId c : cores) names.push_back(f.node(c).name);
    fmt::print(out, "core: {}\n", topo::compress_hostlist(names));
  }
  std::map<int, std::vector<NodeId>> pods;
  for (NodeId s : f.switches())
    if (f.node(s).level == Level::Spine || f.node(s).level == Level::Leaf) pods[f.node(s).pod].push_back(s);
  for (const auto& [pod, members] : pods) {
    fmt::print(out, "pod {}\n", pod);
    std::vector<std::string> spines;
    for (NodeId s : members)
      if (f.node(s).level == Level::Spine) spines.push_back(f.node(s).name);
    if (!spines.empty()) fmt::print(out, "  spine: {}\n", topo::compress_hostlist(spines));
    for (NodeId s : members) {
      const topo::Node& n = f.node(s);
      if (n.level != Level::Leaf) continue;
      fmt::print(out, "    leaf {} ({}, up {:g} Gb/s): {}\n", n.name, ratio(n.oversubscription()), n.up_gbps,
                 topo::compress_hostlist(host_names(f, f.hosts_under(s))));
    }
  }
}

void print_faults(std::ostream& out, const Fabric& f) {
  for (const topo::Fault& fault : f.faults())
    fmt::print(out, "{:<17} {:<32} {}\n", topo::name(fault.kind), fault.subject, fault.detail);
}

}  // namespace topoctl
