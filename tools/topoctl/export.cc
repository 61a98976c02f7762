// topoctl export: write the fabric in another tool's format.
#include <fstream>
#include <iostream>

#include "discovery/ibnetdiscover.h"
#include "discovery/slurm_topology.h"
#include "discovery/slurm_topology_yaml.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/input.h"

namespace topoctl {

Run add_export(CLI::App& app) {
  struct Options {
    FabricInput input;
    bool slurm = false;
    bool ibnetdiscover = false;
    std::string slurm_plugin;
    bool yaml = false;
    std::string output = "-";
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "export", "write the fabric as Slurm topology.conf or topology.yaml, or an ibnetdiscover file");
  add_input_options(*cmd, opts->input);
  auto* slurm = cmd->add_flag("--slurm-topology", opts->slurm, "Slurm topology/tree topology.conf");
  auto* ib = cmd->add_flag("--ibnetdiscover", opts->ibnetdiscover, "ibnetdiscover text (ibsim reads it too)");
  auto* plugin = cmd->add_option("--slurm", opts->slurm_plugin,
                                 "Slurm topology.conf for that plugin: tree (as --slurm-topology) or block (one "
                                 "BlockName= per NVLink domain, and BlockSizes=)")
                     ->check(CLI::IsMember({"tree", "block"}));
  auto* yaml = cmd->add_flag("--yaml", opts->yaml,
                             "Slurm 25.05+ topology.yaml: a block topology of the NVLink domains (the cluster "
                             "default) and a tree topology of the switches");
  slurm->excludes(ib)->excludes(plugin)->excludes(yaml);
  ib->excludes(plugin)->excludes(yaml);
  plugin->excludes(yaml);
  cmd->add_option("-o,--output", opts->output, "file to write, - for standard output")->capture_default_str();
  return [opts] {
    if (!opts->slurm && !opts->ibnetdiscover && opts->slurm_plugin.empty() && !opts->yaml)
      throw std::invalid_argument("choose a format: --slurm-topology, --slurm tree|block, --yaml or --ibnetdiscover");
    LoadedFabric loaded = load(opts->input);
    std::ofstream file;
    if (opts->output != "-") {
      file.open(opts->output);
      if (!file) throw std::runtime_error("cannot write " + opts->output);
    }
    std::ostream& out = opts->output == "-" ? std::cout : file;
    if (opts->slurm || opts->slurm_plugin == "tree")
      topo::write_slurm_topology(loaded.fabric, out);
    else if (opts->slurm_plugin == "block")
      topo::write_slurm_blocks(loaded.fabric, out);
    else if (opts->yaml)
      topo::write_slurm_topology_yaml(loaded.fabric, out);
    else
      topo::write_ibnetdiscover(loaded.fabric, out);
    out.flush();
    if (!out) throw std::runtime_error("writing " + opts->output + " failed");
    return kOk;
  };
}

}  // namespace topoctl
