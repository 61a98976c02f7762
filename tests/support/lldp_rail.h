// The rail-optimized LLDP fabric of `tests/system/lldp_fabric.sh --rail`
// (and its capture in fixtures/lldp/rail): what the script cabled, what a
// discovered fabric says, and the directory variants both tests read: file
// names that say nothing, tables missing, chassis files mixed in.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fabric/fabric.h"

namespace topo::testing {

using HostLeaves = std::map<std::string, std::set<std::string>>;

// slots.txt: "gpu05 leaf01 leaf02" per host, the leaves its RoCE NICs are on.
inline HostLeaves rail_slots(const std::filesystem::path& file) {
  HostLeaves out;
  std::ifstream in(file);
  std::string host, a, b;
  while (in >> host >> a >> b) out[host] = {a, b};
  return out;
}

// Host -> the leaf of its rail-0 NIC (leaf01 or leaf03), where topology.conf
// lists it.
inline HostLeaves rail0_leaves(const std::filesystem::path& file) {
  HostLeaves out;
  for (const auto& [host, leaves] : rail_slots(file)) out[host] = {*leaves.begin()};
  return out;
}

// Host -> the switches its HCAs are cabled to, in a discovered fabric.
inline HostLeaves host_leaves(const Fabric& f) {
  HostLeaves out;
  for (NodeId h : f.hosts())
    for (NodeId leaf : f.leaves_of(h)) out[f.node(h).name].insert(f.node(leaf).name);
  return out;
}

// Host -> the switches topology.conf puts it under (`SwitchName=leaf01
// Nodes=gpu[01-02],gpu05` lines, host lists expanded by `expand`).
template <typename Expand>
HostLeaves topology_conf_leaves(const std::string& conf, Expand&& expand) {
  HostLeaves out;
  std::istringstream in(conf);
  std::string line;
  while (std::getline(in, line)) {
    size_t sw = line.find("SwitchName="), nodes = line.find("Nodes=");
    if (sw == std::string::npos || nodes == std::string::npos) continue;
    std::string name = line.substr(sw + 11, line.find_first_of(" \t", sw) - sw - 11);
    std::string list = line.substr(nodes + 6, line.find_first_of(" \t", nodes) - nodes - 6);
    for (const std::string& host : expand(list)) out[host].insert(name);
  }
  return out;
}

// Copies the neighbour files of `from` (a rail capture's neighbours/) into
// `to` as node01.json, node02.json, ... in an order shuffled by `seed`,
// leaving out the systems in `missing`. Returns new name -> system.
inline std::map<std::string, std::string> copy_renamed(const std::filesystem::path& from,
                                                       const std::filesystem::path& to, unsigned seed,
                                                       const std::set<std::string>& missing = {}) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(from))
    if (!missing.count(e.path().stem().string())) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::mt19937 rng(seed);
  std::shuffle(files.begin(), files.end(), rng);
  std::filesystem::create_directories(to);
  std::map<std::string, std::string> names;
  for (size_t i = 0; i < files.size(); ++i) {
    std::string name = fmt::format("node{:02}.json", i + 1);
    std::filesystem::copy_file(files[i], to / name);
    names[name] = files[i].stem().string();
  }
  return names;
}

}  // namespace topo::testing
