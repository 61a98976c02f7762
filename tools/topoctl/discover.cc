// topoctl discover: read the fabric from one source, classify it, give it
// its routing (adaptive, tables read live or from OpenSM's dump, or an
// engine's emulated), store it as a new snapshot and print its summary.
#include <functional>
#include <iostream>

#include <fmt/format.h>

#include "db/snapshot_store.h"
#include "discovery/hwloc_affinity.h"
#include "discovery/ibnetdisc.h"
#include "discovery/ibnetdiscover.h"
#include "discovery/lldp.h"
#include "discovery/nvidia_smi.h"
#include "discovery/slurm_topology.h"
#include "fabric/synthetic.h"
#include "routing/opensm_lfts.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/fabric_report.h"
#include "tools/topoctl/lldp_input.h"

namespace topoctl {

namespace {

struct Options {
  std::string db_path = default_db_path();
  bool live = false;
  std::string ca;
  int ca_port = 0;
  std::string cache, ibnetdiscover, slurm_topology, synthetic, lldp;
  std::vector<std::string> link_speeds;
  std::string hwloc_dir;
  std::string nvidia_smi_dir, slurm_blocks;
  std::string nvlink = "nvlink5";
  std::string host_pattern;
  std::string link_rate = "4xNDR";
  std::string routing, lfts_dump;
  bool lfts = false;
  bool json = false;
};

void add_source_options(CLI::App& cmd, Options& o) {
  auto* sources = cmd.add_option_group("source", "where the fabric comes from (exactly one)");
  sources->add_flag("--ibnetdisc", o.live, "live discovery through libibnetdisc on this host's HCA");
  sources->add_option("--cache", o.cache, "a libibnetdisc cache file (ibnetdiscover --cache FILE)")
      ->check(CLI::ExistingFile);
  sources->add_option("--ibnetdiscover", o.ibnetdiscover, "ibnetdiscover text output, or an ibsim net file")
      ->check(CLI::ExistingFile);
  sources->add_option("--slurm-topology", o.slurm_topology, "a Slurm topology.conf")->check(CLI::ExistingFile);
  sources
      ->add_option("--lldp", o.lldp,
                   "a directory of lldpcli JSON files (`lldpcli -f json show neighbors details` from every host and "
                   "switch, any file names; show chassis may be added) and CSV link tables "
                   "(switch,port,peer,peer_port,speed); exit 1 when a file cannot be placed")
      ->check(CLI::ExistingDirectory);
  sources->add_option("--synthetic", o.synthetic, "a synthetic fabric spec, e.g. railopt:hosts=16,rails=4,spines=2");
  sources->require_option(1);
}

void add_routing_options(CLI::App& cmd, Options& o) {
  auto* routing = add_routing_option(cmd, o.routing);
  auto* dump = cmd.add_option("--lfts-dump", o.lfts_dump,
                              "static routing read from OpenSM's opensm-lfts.dump (opensm -D 0x43 "
                              "--dump_files_dir DIR)")
                   ->check(CLI::ExistingFile);
  auto* lfts = cmd.add_flag("--lfts", o.lfts,
                            "static routing read live from the switches (with --ibnetdisc), as dump_lfts does");
  routing->excludes(dump)->excludes(lfts);
  dump->excludes(lfts);
}

void add_options(CLI::App& cmd, Options& o) {
  add_db_option(cmd, o.db_path);
  add_source_options(cmd, o);
  cmd.add_option("--ca", o.ca, "HCA to discover through (default: the first one)");
  cmd.add_option("--ca-port", o.ca_port, "port of that HCA (default: the first active one)");
  cmd.add_option("--hwloc", o.hwloc_dir, "directory of per-node hwloc XML files named <host>.xml")
      ->check(CLI::ExistingDirectory);
  auto* smi = cmd.add_option("--nvidia-smi", o.nvidia_smi_dir,
                             "directory of per-node nvidia-smi -q -x (<host>.xml) or -q (<host>.txt) output: each "
                             "GPU's NVLink fabric ClusterUUID, CliqueId, state and status give the NVLink domains")
                  ->check(CLI::ExistingDirectory);
  auto* blocks = cmd.add_option("--slurm-blocks", o.slurm_blocks,
                                "NVLink domains from Slurm blocks: a topology/block topology.conf (BlockName= lines) "
                                "or a topology.yaml (.yaml) with a block topology")
                     ->check(CLI::ExistingFile);
  smi->excludes(blocks);
  cmd.add_option("--nvlink", o.nvlink,
                 "the NVLink generation whose bounds and speed the domains get: nvlink5 (GB200/GB300 NVL72, "
                 "NVL36x2) or nvlink4 (GH200 NVL32)")
      ->capture_default_str();
  cmd.add_option("--host-pattern", o.host_pattern,
                 "regex mapping an HCA description to its host: group 1 the host, group 2 the device");
  cmd.add_option("--link-speed", o.link_speeds,
                 "with --lldp: SYSTEM:PORT=RATE, a port's measured speed (ethtool), e.g. leaf01:swp5=25G; "
                 "wins over what LLDP says; repeatable");
  cmd.add_option("--link-rate", o.link_rate, "rate assumed for topology.conf links, which carry none")
      ->capture_default_str();
  add_routing_options(cmd, o);
  cmd.add_flag("--json", o.json, "print the stored snapshot as JSON");
}

// Options that CLI11 cannot check alone.
void check_options(const Options& o) {
  if (o.lfts && !o.live)
    throw std::invalid_argument("--lfts reads the tables live: it needs --ibnetdisc (or use --lfts-dump FILE)");
  if (o.routing == "static")
    throw std::invalid_argument(
        "--routing static needs tables: --lfts-dump FILE, --lfts with --ibnetdisc, or static:ENGINE to emulate");
}

using Progress = std::function<void(std::string_view)>;

topo::IbnetdiscOptions ibnetdisc_options(const Options& o) {
  topo::IbnetdiscOptions r;
  r.ca = o.ca;
  r.ca_port = o.ca_port;
  return r;
}

// The fabric from the one source given; LLDP's findings into `lldp_findings`.
topo::Fabric read_fabric(const Options& o, const topo::HostNaming& naming, const Progress& progress,
                         std::vector<topo::LldpFinding>& lldp_findings) {
  if (!o.lldp.empty()) {
    topo::LldpOptions lldp;
    lldp.naming = naming;
    lldp.port_speeds = parse_link_speeds(o.link_speeds);
    topo::LldpFabric r = topo::read_lldp_dir(o.lldp, lldp);
    if (!r.out_of_band.empty()) progress(out_of_band_note(r.out_of_band));
    lldp_findings = std::move(r.findings);
    return std::move(r.fabric);
  }
  if (!o.link_speeds.empty()) throw std::invalid_argument("--link-speed goes with --lldp");
  if (o.live) {
    progress("querying the fabric through libibnetdisc");
    return topo::discover_ibnetdisc(ibnetdisc_options(o), naming);
  }
  if (!o.cache.empty()) return topo::load_ibnetdisc_cache(o.cache, naming);
  if (!o.ibnetdiscover.empty()) return topo::read_ibnetdiscover_file(o.ibnetdiscover, naming);
  if (!o.slurm_topology.empty()) {
    auto rate = topo::parse_rate(o.link_rate);
    if (!rate) throw std::invalid_argument("--link-rate " + o.link_rate + " is not like 4xNDR or 100GbE");
    return topo::read_slurm_topology_file(o.slurm_topology, *rate);
  }
  return topo::make_synthetic(o.synthetic);
}

// The routing asked for: OpenSM's dump, the tables read live, an emulated
// engine or ECMP; adaptive when none is.
void route(topo::Fabric& fabric, const Options& o, const Progress& progress) {
  if (!o.lfts_dump.empty()) {
    fabric.set_routing(topo::read_opensm_lfts_file(o.lfts_dump, fabric));
  } else if (o.lfts) {
    progress("reading the forwarding tables live");
    fabric.set_routing(topo::read_lfts_live(ibnetdisc_options(o), fabric));
  } else if (!o.routing.empty()) {
    apply_routing(fabric, o.routing, "the discovered fabric");
  }
  progress("routing " + topo::routing_name(fabric.routing()));
}

// NVLink domains from nvidia-smi files or Slurm blocks, when given.
void attach_domains(topo::Fabric& fabric, const Options& o, const Progress& progress) {
  if (o.nvidia_smi_dir.empty() && o.slurm_blocks.empty()) return;
  auto spec = topo::nvlink_spec(o.nvlink);
  if (!spec)
    throw std::invalid_argument(fmt::format("--nvlink {}: expected one of {}", o.nvlink, topo::nvlink_generations()));
  if (!o.nvidia_smi_dir.empty())
    topo::attach_nvidia_smi_dir(fabric, o.nvidia_smi_dir, *spec);
  else
    topo::attach_slurm_blocks(fabric, topo::read_slurm_blocks_file(o.slurm_blocks), *spec);
  progress(fmt::format("{} NVLink domains ({})", fabric.domains().count(), spec->generation));
}

void print_stored(const Options& o, const LoadedFabric& loaded, const std::vector<topo::LldpFinding>& lldp_findings) {
  if (o.json) {
    nlohmann::json out = fabric_json(loaded);
    if (!o.lldp.empty()) out["lldp_findings"] = lldp_findings_json(lldp_findings);
    std::cout << out.dump(2) << "\n";
    return;
  }
  fmt::print("stored snapshot {} in {}\n", *loaded.snapshot, o.db_path);
  print_summary(std::cout, loaded);
  if (!lldp_findings.empty())
    fmt::print("{} LLDP finding{} (topoctl lint --lldp {} lists them)\n", lldp_findings.size(),
               lldp_findings.size() == 1 ? "" : "s", o.lldp);
}

}  // namespace

Run add_discover(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("discover", "discover the fabric from one source and store it as a snapshot");
  add_options(*cmd, *opts);
  return [opts] {
    const Options& o = *opts;
    check_options(o);
    Progress progress = [&o](std::string_view what) {
      if (!o.json) fmt::print(stderr, "discover: {}\n", what);
    };
    std::vector<topo::LldpFinding> lldp_findings;
    topo::Fabric fabric = read_fabric(o, topo::HostNaming(o.host_pattern), progress, lldp_findings);
    progress(fmt::format("classified {} hosts, {} switches", fabric.summary().hosts, fabric.switches().size()));
    for (const topo::LldpFinding& f : lldp_findings)
      progress(fmt::format("lldp finding {} {}: {}", topo::name(f.kind), f.subject, f.detail));
    route(fabric, o, progress);
    if (!o.hwloc_dir.empty()) {
      topo::attach_hwloc_dir(fabric, o.hwloc_dir);
      progress("attached GPU/HCA affinity from " + o.hwloc_dir);
    }
    attach_domains(fabric, o, progress);
    topo::SnapshotStore store(o.db_path);
    int64_t id = store.save(fabric);
    print_stored(o, LoadedFabric{std::move(fabric), id, store.info(id).taken_at}, lldp_findings);
    // The rest is stored, but a file that could not be placed is a system missing from it.
    return any_unplaced(lldp_findings) ? kFindings : kOk;
  };
}

}  // namespace topoctl
