#include "simulation/plan_memo.h"

#include <fmt/format.h>

namespace topo {
namespace {

// "id:host,host;id:host,...": the rings exactly, as a map key.
std::string key_of(const std::vector<RingJob>& rings) {
  std::string key;
  for (const RingJob& r : rings) {
    key += r.id;
    key += ':';
    for (NodeId h : r.ring) key += fmt::format("{},", h);
    key += ';';
  }
  return key;
}

}  // namespace

const Routing& PlanMemo::tables(const std::vector<RingJob>& rings, const std::function<Routing()>& plan) {
  const std::string key = key_of(rings);
  if (auto it = kept_.find(key); it != kept_.end()) {
    ++reused_;
    return it->second;
  }
  ++made_;
  return kept_.emplace(key, plan()).first->second;
}

}  // namespace topo
