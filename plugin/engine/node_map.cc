#include "plugin/engine/node_map.h"

#include <set>
#include <utility>

#include <fmt/format.h>

#include "placement/ring_order.h"

namespace topo::engine {

std::vector<std::string> NodeTable::names_of(const size_t* nodes, size_t count) const {
  std::vector<std::string> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i)
    if (nodes[i] < names.size() && named[nodes[i]]) out.push_back(names[nodes[i]]);
  return out;
}

NodeMap build_node_map(const Fabric& fabric, const EngineConfig& config, const NodeTable& table) {
  NodeMap m;
  m.host.assign(table.names.size(), std::nullopt);
  m.node.assign(fabric.node_count(), kNoNode);
  for (size_t i = 0; i < table.names.size(); ++i) {
    if (!table.named[i]) continue;
    std::string host = config.fabric_host(table.names[i]);
    std::optional<NodeId> id = fabric.find_host(host);
    // Two NodeNames on one fabric host (a HostPattern that folds them):
    // the first keeps it, the second is not on the fabric.
    if (!id || m.node[*id] != kNoNode) {
      if (m.unknown++ == 0) m.first_unknown = host;
      continue;
    }
    m.host[i] = *id;
    m.node[*id] = i;
  }
  return m;
}

std::vector<size_t> ring_of_nodes(const SwitchTree* tree, const NodeMap* map, const size_t* nodes, size_t count) {
  std::vector<NodeId> known;
  std::vector<size_t> ring;
  for (size_t i = 0; i < count; ++i) {
    if (map && nodes[i] < map->host.size() && map->host[nodes[i]])
      known.push_back(*map->host[nodes[i]]);
    else
      ring.push_back(nodes[i]);
  }
  if (known.empty()) return ring;
  std::vector<size_t> ordered;
  ordered.reserve(count);
  for (NodeId h : topo::ring_order(*tree, known)) ordered.push_back(map->node[h]);
  ordered.insert(ordered.end(), ring.begin(), ring.end());
  return ordered;
}

std::string job_hcas(const Fabric& fabric, const std::vector<std::optional<NodeId>>& hosts) {
  std::optional<std::vector<std::pair<int, std::string>>> common;
  for (const std::optional<NodeId>& host : hosts) {
    if (!host) return "";
    std::set<std::pair<int, std::string>> hcas;
    for (const Gpu& g : fabric.node(*host).gpus)
      if (!g.closest_hca.empty()) hcas.insert({g.rail, g.closest_hca});
    if (hcas.empty()) return "";
    std::vector<std::pair<int, std::string>> sorted(hcas.begin(), hcas.end());
    if (common && *common != sorted) return "";
    common = std::move(sorted);
  }
  if (!common) return "";
  std::vector<std::string> names;
  for (const auto& [rail, name] : *common) names.push_back(name);
  return fmt::format("{}", fmt::join(names, ","));
}

}  // namespace topo::engine
