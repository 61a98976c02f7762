// topoctl discover: read the fabric from one source, classify it, give it
// its routing (adaptive, tables read live or from OpenSM's dump, or an
// engine's emulated), store it as a new snapshot and print its summary.
#include <iostream>

#include <fmt/format.h>

#include "db/snapshot_store.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/fabric_report.h"
#include "tools/topoctl/lldp_input.h"
#include "topology/hwloc_affinity.h"
#include "topology/ibnetdisc.h"
#include "topology/ibnetdiscover.h"
#include "topology/lldp.h"
#include "topology/opensm_lfts.h"
#include "topology/slurm_topology.h"
#include "topology/synthetic.h"

namespace topoctl {

Run add_discover(CLI::App& app) {
  struct Options {
    std::string db_path = default_db_path();
    bool live = false;
    std::string ca;
    int ca_port = 0;
    std::string cache, ibnetdiscover, slurm_topology, synthetic, lldp;
    std::vector<std::string> link_speeds;
    std::string hwloc_dir;
    std::string host_pattern;
    std::string link_rate = "4xNDR";
    std::string routing, lfts_dump;
    bool lfts = false;
    bool json = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("discover", "discover the fabric from one source and store it as a snapshot");
  add_db_option(*cmd, opts->db_path);
  auto* sources = cmd->add_option_group("source", "where the fabric comes from (exactly one)");
  sources->add_flag("--ibnetdisc", opts->live, "live discovery through libibnetdisc on this host's HCA");
  sources->add_option("--cache", opts->cache, "a libibnetdisc cache file (ibnetdiscover --cache FILE)")
      ->check(CLI::ExistingFile);
  sources->add_option("--ibnetdiscover", opts->ibnetdiscover, "ibnetdiscover text output, or an ibsim net file")
      ->check(CLI::ExistingFile);
  sources->add_option("--slurm-topology", opts->slurm_topology, "a Slurm topology.conf")->check(CLI::ExistingFile);
  sources->add_option("--lldp", opts->lldp,
                      "a directory of lldpcli JSON files (show chassis, interfaces, neighbors details; one per host "
                      "and switch, -f json or json0) and CSV link tables (switch,port,peer,peer_port,speed)")
      ->check(CLI::ExistingDirectory);
  sources->add_option("--synthetic", opts->synthetic, "a synthetic fabric spec, e.g. railopt:hosts=16,rails=4,spines=2");
  sources->require_option(1);
  cmd->add_option("--ca", opts->ca, "HCA to discover through (default: the first one)");
  cmd->add_option("--ca-port", opts->ca_port, "port of that HCA (default: the first active one)");
  cmd->add_option("--hwloc", opts->hwloc_dir, "directory of per-node hwloc XML files named <host>.xml")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--host-pattern", opts->host_pattern,
                  "regex mapping an HCA description to its host: group 1 the host, group 2 the device");
  cmd->add_option("--link-speed", opts->link_speeds,
                  "with --lldp: SYSTEM:PORT=RATE, a port's measured speed (ethtool), e.g. leaf01:swp5=25G; "
                  "wins over what LLDP says; repeatable");
  cmd->add_option("--link-rate", opts->link_rate, "rate assumed for topology.conf links, which carry none")
      ->capture_default_str();
  auto* routing = cmd->add_option("--routing", opts->routing,
                                  "adaptive (the default), static:ENGINE (ftree, minhop, updn): tables emulated "
                                  "by that OpenSM engine's rules, or ecmp:QPS (RoCE: QPS queue pairs per connection, "
                                  "each hashed onto one equal-cost path)");
  auto* dump = cmd->add_option("--lfts-dump", opts->lfts_dump,
                               "static routing read from OpenSM's opensm-lfts.dump (opensm -D 0x43 "
                               "--dump_files_dir DIR)")
                   ->check(CLI::ExistingFile);
  auto* lfts = cmd->add_flag("--lfts", opts->lfts,
                             "static routing read live from the switches (with --ibnetdisc), as dump_lfts does");
  routing->excludes(dump)->excludes(lfts);
  dump->excludes(lfts);
  cmd->add_flag("--json", opts->json, "print the stored snapshot as JSON");

  return [opts] {
    if (opts->lfts && !opts->live)
      throw std::invalid_argument("--lfts reads the tables live: it needs --ibnetdisc (or use --lfts-dump FILE)");
    if (opts->routing == "static")
      throw std::invalid_argument(
          "--routing static needs tables: --lfts-dump FILE, --lfts with --ibnetdisc, or static:ENGINE to emulate");
    topo::HostNaming naming(opts->host_pattern);
    auto progress = [&](std::string_view what) {
      if (!opts->json) fmt::print(stderr, "discover: {}\n", what);
    };
    std::vector<topo::LldpFinding> lldp_findings;
    topo::Fabric fabric = [&] {
      if (!opts->lldp.empty()) {
        topo::LldpOptions o;
        o.naming = naming;
        o.port_speeds = parse_link_speeds(opts->link_speeds);
        topo::LldpFabric r = topo::read_lldp_dir(opts->lldp, o);
        lldp_findings = std::move(r.findings);
        return std::move(r.fabric);
      }
      if (!opts->link_speeds.empty()) throw std::invalid_argument("--link-speed goes with --lldp");
      if (opts->live) {
        progress("querying the fabric through libibnetdisc");
        topo::IbnetdiscOptions o;
        o.ca = opts->ca;
        o.ca_port = opts->ca_port;
        return topo::discover_ibnetdisc(o, naming);
      }
      if (!opts->cache.empty()) return topo::load_ibnetdisc_cache(opts->cache, naming);
      if (!opts->ibnetdiscover.empty()) return topo::read_ibnetdiscover_file(opts->ibnetdiscover, naming);
      if (!opts->slurm_topology.empty()) {
        auto rate = topo::parse_rate(opts->link_rate);
        if (!rate) throw std::invalid_argument("--link-rate " + opts->link_rate + " is not like 4xNDR or 100GbE");
        return topo::read_slurm_topology_file(opts->slurm_topology, *rate);
      }
      return topo::make_synthetic(opts->synthetic);
    }();
    progress(fmt::format("classified {} hosts, {} switches", fabric.summary().hosts, fabric.switches().size()));
    for (const topo::LldpFinding& f : lldp_findings)
      progress(fmt::format("lldp finding {} {}: {}", topo::name(f.kind), f.subject, f.detail));
    if (!opts->lfts_dump.empty()) {
      fabric.set_routing(topo::read_opensm_lfts_file(opts->lfts_dump, fabric));
    } else if (opts->lfts) {
      progress("reading the forwarding tables live");
      topo::IbnetdiscOptions o;
      o.ca = opts->ca;
      o.ca_port = opts->ca_port;
      fabric.set_routing(topo::read_lfts_live(o, fabric));
    } else if (!opts->routing.empty()) {
      apply_routing(fabric, opts->routing, "the discovered fabric");
    }
    progress("routing " + topo::routing_name(fabric.routing()));
    if (!opts->hwloc_dir.empty()) {
      topo::attach_hwloc_dir(fabric, opts->hwloc_dir);
      progress("attached GPU/HCA affinity from " + opts->hwloc_dir);
    }
    topo::SnapshotStore store(opts->db_path);
    int64_t id = store.save(fabric);
    LoadedFabric loaded{std::move(fabric), id, store.info(id).taken_at};
    if (opts->json) {
      nlohmann::json out = fabric_json(loaded);
      if (!opts->lldp.empty()) out["lldp_findings"] = lldp_findings_json(lldp_findings);
      std::cout << out.dump(2) << "\n";
    } else {
      fmt::print("stored snapshot {} in {}\n", id, opts->db_path);
      print_summary(std::cout, loaded);
      if (!lldp_findings.empty())
        fmt::print("{} LLDP finding{} (topoctl lint --lldp {} lists them)\n", lldp_findings.size(),
                   lldp_findings.size() == 1 ? "" : "s", opts->lldp);
    }
    return kOk;
  };
}

}  // namespace topoctl
