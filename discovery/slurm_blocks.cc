// topology.conf for Slurm's topology/block: NVLink domains as blocks, read
// and written (declared in slurm_topology.h).
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <ostream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "common/hostlist.h"
#include "common/quote.h"
#include "discovery/slurm_conf.h"
#include "discovery/slurm_topology.h"
#include "discovery/slurm_topology_yaml.h"

namespace topo {
namespace {

constexpr int kMaxBlockLevel = 15;  // Slurm's MAX_BLOCK_LEVELS - 1

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::vector<int> parse_block_sizes(const SlurmConfLine& line, const std::string& value) {
  std::vector<int> sizes;
  std::string_view rest = value;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    int v = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size() || v <= 0)
      throw ParseError(line.file, line.line,
                       fmt::format("BlockSizes: '{}' is not a positive whole number of nodes", shown(item)));
    sizes.push_back(v);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  if (sizes.empty()) throw ParseError(line.file, line.line, "BlockSizes= lists no size");
  check_block_sizes(sizes, line.file, line.line);
  return sizes;
}

SlurmBlock parse_block(const SlurmConfLine& line, uint64_t& budget) {
  SlurmBlock b{line.pairs.front().second, {}, line.file, line.line};
  if (!is_slurm_name(b.name))
    throw ParseError(line.file, line.line, fmt::format("BlockName '{}' is not a name Slurm takes", shown(b.name)));
  bool has_nodes = false;
  for (size_t i = 1; i < line.pairs.size(); ++i) {
    const auto& [key, value] = line.pairs[i];
    if (lower(key) != "nodes")
      throw ParseError(line.file, line.line,
                       fmt::format("unknown key '{}' for block '{}'; expected Nodes", shown(key), b.name));
    if (has_nodes) throw ParseError(line.file, line.line, fmt::format("Nodes= is given twice for block '{}'", b.name));
    has_nodes = true;
    b.hosts = expand_slurm_names(line, key, value, budget, kMaxSlurmTopologyNames);
  }
  if (!has_nodes) throw ParseError(line.file, line.line, fmt::format("block '{}' has no Nodes=", b.name));
  return b;
}

}  // namespace

void check_unique_blocks(const SlurmBlocks& blocks) {
  std::map<std::string, const SlurmBlock*> names;
  std::map<std::string, const SlurmBlock*> hosts;
  for (const SlurmBlock& b : blocks.blocks) {
    if (auto [it, fresh] = names.emplace(b.name, &b); !fresh)
      throw ParseError(
          b.file, b.line,
          fmt::format("block '{}' is already defined at {}:{}", b.name, it->second->file, it->second->line));
    for (const std::string& h : b.hosts)
      if (auto [it, fresh] = hosts.emplace(h, &b); !fresh)
        throw ParseError(b.file, b.line,
                         fmt::format("host '{}' is in block '{}' and in block '{}'; expected one block per host",
                                     shown(h), it->second->name, b.name));
  }
}

void check_block_sizes(const std::vector<int>& sizes, const std::string& where, int line) {
  int base = sizes.front();
  for (int s : sizes) {
    int ratio = s / base;
    if (s % base != 0 || (ratio & (ratio - 1)) != 0 || ratio > (1 << kMaxBlockLevel))
      throw ParseError(where, line,
                       fmt::format("BlockSizes {} is not the base block ({} nodes) times a power of two up to 2^{}", s,
                                   base, kMaxBlockLevel));
  }
}

SlurmBlocks read_slurm_blocks(std::istream& in, const std::string& filename, uint64_t max_names) {
  SlurmBlocks out;
  uint64_t budget = max_names;
  bool sizes_seen = false;
  for (const SlurmConfLine& line : read_slurm_conf(in, filename)) {
    std::string key = lower(line.pairs.front().first);
    if (key == "blockname") {
      out.blocks.push_back(parse_block(line, budget));
    } else if (key == "blocksizes") {
      if (sizes_seen) throw ParseError(line.file, line.line, "BlockSizes= is given twice");
      if (line.pairs.size() > 1)
        throw ParseError(line.file, line.line,
                         fmt::format("unknown key '{}' after BlockSizes=", shown(line.pairs[1].first)));
      sizes_seen = true;
      out.block_sizes = parse_block_sizes(line, line.pairs.front().second);
    } else {
      throw ParseError(line.file, line.line,
                       fmt::format("expected BlockName= or BlockSizes= (topology/block), found {}=",
                                   shown(line.pairs.front().first)));
    }
  }
  if (out.blocks.empty()) throw ParseError(filename, 0, "no block defined; expected BlockName= lines");
  check_unique_blocks(out);
  return out;
}

SlurmBlocks read_slurm_blocks_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ParseError(path, 0, fmt::format("cannot read: {}", std::strerror(errno)));
  if (path.ends_with(".yaml") || path.ends_with(".yml")) {
    return read_slurm_topology_yaml(in, path).blocks;
  }
  return read_slurm_blocks(in, path);
}

void attach_slurm_blocks(Fabric& fabric, const SlurmBlocks& blocks, const NvlinkSpec& spec) {
  std::vector<HostNvlink> reports(fabric.hosts().size());
  for (const SlurmBlock& b : blocks.blocks)
    for (const std::string& h : b.hosts) {
      auto v = fabric.find_host(h);
      if (!v)
        throw ParseError(b.file, b.line,
                         fmt::format("block '{}' lists host '{}', which the fabric does not have", b.name, shown(h)));
      reports[fabric.index().host_id(*v)].claimed = DomainKey{"", b.name};
    }
  fabric.set_nvlink(std::move(reports), spec);
}

BlockPlan plan_slurm_blocks(const Fabric& f) {
  const NvlinkDomains& d = f.domains();
  if (d.empty()) throw FabricError("the fabric has no NVLink domain to write as a block");
  BlockPlan plan;
  int base = 0;
  for (size_t i = 0; i < d.count(); ++i) {
    const DomainKey& key = d.key(static_cast<int>(i));
    SlurmBlock b{
        key.cluster_uuid.empty() && is_slurm_name(key.clique_id) ? key.clique_id : fmt::format("nvl{:02}", i + 1),
        {},
        {},
        0};
    for (int h : d.hosts(static_cast<int>(i))) {
      const std::string& name = f.node(f.hosts()[h]).name;
      if (!is_slurm_name(name)) throw FabricError(fmt::format("host '{}' cannot be a Slurm node name", shown(name)));
      b.hosts.push_back(name);
    }
    int size = static_cast<int>(b.hosts.size());
    base = base == 0 ? size : std::min(base, size);
    plan.blocks.push_back(std::move(b));
  }
  for (int k = 0; k <= kMaxBlockLevel && (1 << k) <= static_cast<int>(d.count()); ++k)
    plan.block_sizes.push_back(base << k);
  for (size_t h = 0; h < f.hosts().size(); ++h)
    if (d.domain_of(static_cast<int>(h)) < 0) plan.outside.push_back(f.node(f.hosts()[h]).name);
  return plan;
}

void write_slurm_blocks(const Fabric& fabric, std::ostream& out) {
  BlockPlan plan = plan_slurm_blocks(fabric);
  out << "# topology.conf for topology/block, generated by topoctl from " << shown(fabric.source(), std::string::npos)
      << "\n# One block per NVLink domain (" << fabric.domains().spec().generation << ").\n";
  if (!plan.outside.empty())
    out << "# Hosts in no NVLink domain, left out of every block: " << compress_hostlist(plan.outside) << "\n";
  for (const SlurmBlock& b : plan.blocks)
    out << "BlockName=" << b.name << " Nodes=" << compress_hostlist(b.hosts) << "\n";
  out << "BlockSizes=" << fmt::format("{}", fmt::join(plan.block_sizes, ",")) << "\n";
}

}  // namespace topo
