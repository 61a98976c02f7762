// The HCAs next to this host's GPUs (node_hcas.h).
#include "plugin/engine/node_hcas.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "discovery/hwloc_affinity.h"

struct topo_node_hcas {
  topo::NodeAffinity affinity;
};

namespace {

void say(char* msg, size_t size, const std::string& text) {
  if (size == 0) return;
  std::snprintf(msg, size, "%s", text.c_str());
}

}  // namespace

extern "C" int topo_node_hcas_read(const char* xml_path, topo_node_hcas_t** out, char* msg, size_t msg_size) {
  say(msg, msg_size, "");
  if (!out) return -1;
  *out = nullptr;
  try {
    auto* n = new topo_node_hcas;
    try {
      n->affinity = xml_path ? topo::read_hwloc_xml(xml_path) : topo::read_hwloc_live();
    } catch (...) {
      delete n;
      throw;
    }
    *out = n;
    return 0;
  } catch (const std::exception& e) {
    say(msg, msg_size, e.what());
  } catch (...) {
    say(msg, msg_size, "unknown error reading hwloc data");
  }
  return -1;
}

extern "C" void topo_node_hcas_free(topo_node_hcas_t* hcas) { delete hcas; }

extern "C" size_t topo_node_hcas_gpu_count(const topo_node_hcas_t* hcas) {
  return hcas ? hcas->affinity.gpus.size() : 0;
}

extern "C" char* topo_node_hcas_value(const topo_node_hcas_t* hcas, const int* gpus, size_t count, int first_gpu) {
  if (!hcas) return nullptr;
  try {
    const auto& all = hcas->affinity.gpus;
    auto known = [&](int i) { return i >= 0 && static_cast<size_t>(i) < all.size() && !all[i].closest_hca.empty(); };
    std::vector<std::pair<int, std::string>> by_rail;  // (rail, hca), each hca once
    auto add = [&](int i) {
      if (!known(i)) return;
      for (const auto& [rail, name] : by_rail)
        if (name == all[i].closest_hca) return;
      by_rail.emplace_back(all[i].rail, all[i].closest_hca);
    };
    if (count == 0)
      for (size_t i = 0; i < all.size(); i++) add(static_cast<int>(i));
    else
      for (size_t k = 0; k < count; k++) add(gpus[k]);
    if (by_rail.empty()) return nullptr;
    std::stable_sort(by_rail.begin(), by_rail.end());
    if (known(first_gpu)) {
      auto lead = std::find_if(by_rail.begin(), by_rail.end(),
                               [&](const auto& e) { return e.second == all[first_gpu].closest_hca; });
      if (lead != by_rail.end()) std::rotate(by_rail.begin(), lead, lead + 1);
    }
    std::string text;
    for (const auto& [rail, name] : by_rail) {
      if (!text.empty()) text += ',';
      text += name;
    }
    char* out = static_cast<char*>(std::malloc(text.size() + 1));
    if (out) std::memcpy(out, text.c_str(), text.size() + 1);
    return out;
  } catch (...) {
    return nullptr;
  }
}
