#include "tools/topoctl/view_input.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

namespace topoctl {

void require_database(const std::string& db_path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(db_path, ec))
    throw std::invalid_argument(
        fmt::format("{}: no such database (run `topoctl discover` first, or give --db)", db_path));
}

void require_database(const FabricInput& input) {
  if (input.synthetic.empty()) require_database(input.db_path);
}

std::vector<topo::PlacementRecord> running_records(const std::string& db_path, int64_t snapshot,
                                                   const std::vector<uint32_t>& running,
                                                   const std::vector<uint32_t>& wanted, topo::Access access) {
  topo::PlacementStore store(db_path, {.access = access});
  std::vector<topo::PlacementRecord> out;
  std::set<uint32_t> have;
  auto add_job = [&](uint32_t id) {
    if (have.contains(id)) return;
    std::optional<topo::PlacementRecord> r = store.latest_for_job(id);
    if (!r) throw std::invalid_argument(fmt::format("job {}: no placement recorded in {}", id, db_path));
    have.insert(id);
    out.push_back(std::move(*r));
  };
  if (!running.empty()) {
    for (uint32_t id : running) add_job(id);
  } else {
    for (topo::PlacementRecord& r : store.recent(kRecentPlacements))
      if (r.snapshot_id == snapshot && !r.fallback && have.insert(r.job_id).second) out.push_back(std::move(r));
  }
  for (uint32_t id : wanted) add_job(id);
  return out;
}

topo::NodeId find_leaf(const topo::Fabric& fabric, std::string_view name) {
  std::vector<std::string> names;
  for (topo::NodeId sw : fabric.switches()) {
    const topo::Node& n = fabric.node(sw);
    if (n.level != topo::Level::Leaf) continue;
    if (n.name == name) return sw;
    if (names.size() < 8) names.push_back(n.name);
  }
  throw std::invalid_argument(
      fmt::format("--leaf {}: no leaf of that name (leaves are named like {})", name, fmt::join(names, ", ")));
}

void write_atomically(const std::string& path, std::string_view data) {
  std::filesystem::path target(path);
  std::filesystem::path tmp = target;
  tmp += fmt::format(".tmp.{}", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(fmt::format("{}: cannot write: {}", tmp.string(), std::strerror(errno)));
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.close();
    if (!out) throw std::runtime_error(fmt::format("{}: writing failed", tmp.string()));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, target, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw std::runtime_error(fmt::format("{}: cannot replace: {}", path, ec.message()));
  }
}

}  // namespace topoctl
