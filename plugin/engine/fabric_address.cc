// A node's place in the fabric, for SLURM_TOPOLOGY_ADDR (fabric_address.h).
#include "plugin/engine/fabric_address.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <string>

#include "db/snapshot_store.h"
#include "fabric/fabric.h"
#include "plugin/engine/engine_config.h"

namespace {

char* copy_out(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out) std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

std::string address_of(const char* conf_path, const std::string& node, std::string& pattern) {
  std::optional<topo::EngineConfig> config = topo::read_engine_config(conf_path ? conf_path : "");
  if (!config) config = topo::EngineConfig{};
  struct stat st;
  if (stat(config->db_path.c_str(), &st) != 0)
    throw std::runtime_error(config->db_path + ": no such database on this node");
  topo::SnapshotStore store(config->db_path);
  std::optional<int64_t> latest = store.latest();
  if (!latest) throw std::runtime_error(config->db_path + ": no snapshot");
  topo::Fabric fabric = store.load(*latest);
  std::string host = config->fabric_host(node);
  std::optional<topo::NodeId> h = fabric.find_host(host);
  if (!h) throw std::runtime_error("host " + host + " is not in snapshot " + std::to_string(*latest));
  std::vector<topo::NodeId> leaves = fabric.leaves_of(*h);
  if (leaves.empty()) throw std::runtime_error("host " + host + " is cabled to no leaf");
  const topo::Node& leaf = fabric.node(leaves.front());
  if (leaf.pod >= 0) {
    pattern = "pod.leaf.node";
    return "pod" + std::to_string(leaf.pod) + "." + leaf.name + "." + node;
  }
  pattern = "leaf.node";
  return leaf.name + "." + node;
}

}  // namespace

extern "C" int topo_fabric_address(const char* conf_path, const char* node_name, char** addr, char** pattern, char* msg,
                                   size_t msg_size) {
  if (msg_size) msg[0] = '\0';
  if (!addr || !pattern || !node_name) return -1;
  *addr = *pattern = nullptr;
  try {
    std::string p;
    std::string a = address_of(conf_path, node_name, p);
    *addr = copy_out(a);
    *pattern = copy_out(p);
    if (*addr && *pattern) return 0;
    std::free(*addr);
    std::free(*pattern);
    *addr = *pattern = nullptr;
    if (msg_size) std::snprintf(msg, msg_size, "out of memory");
  } catch (const std::exception& e) {
    if (msg_size) std::snprintf(msg, msg_size, "%s", e.what());
  } catch (...) {
    if (msg_size) std::snprintf(msg, msg_size, "unknown error reading the fabric");
  }
  return -1;
}
