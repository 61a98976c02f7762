#include "placement/request.h"

namespace topo {

std::string_view name(Profile p) {
  switch (p) {
    case Profile::AllReduce:
      return "allreduce";
    case Profile::AllToAll:
      return "alltoall";
    case Profile::Mixed:
      return "mixed";
    case Profile::None:
      return "none";
    case Profile::Fsdp:
      return "fsdp";
    case Profile::Pipeline:
      return "pipeline";
  }
  return "?";
}

std::optional<Profile> parse_profile(std::string_view text) {
  for (Profile p : kProfiles)
    if (name(p) == text) return p;
  return std::nullopt;
}

FreeMap FreeMap::all_free(const Fabric& fabric, int gpus) {
  FreeMap map;
  map.free_gpus.assign(fabric.node_count(), 0);
  for (NodeId h : fabric.hosts()) map.free_gpus[h] = gpus;
  return map;
}

}  // namespace topo
