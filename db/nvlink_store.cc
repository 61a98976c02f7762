#include "db/nvlink_store.h"

#include <fmt/format.h>

#include "db/error.h"

namespace topo {
namespace {

constexpr const char* kCannotSave = "cannot save the snapshot's NVLink domains";

[[noreturn]] void inconsistent(const Connection& c, int64_t snapshot, std::string_view what) {
  throw DbError(DbErrorKind::Inconsistent, c.path(), fmt::format("snapshot {}: {}", snapshot, what));
}

void insert_spec(Connection& c, const NvlinkSpec& spec, int64_t snapshot) {
  Statement s = c.prepare(
      "UPDATE snapshot SET nvlink_generation = ?2, nvlink_gbytes = ?3, nvlink_max_hosts = ?4, "
      "nvlink_max_gpus = ?5, nvlink_source = ?6 WHERE id = ?1",
      kCannotSave);
  s.bind(1, snapshot).bind(2, spec.generation).bind(3, spec.gpu_gbytes_per_s).bind(4, spec.max_hosts);
  s.bind(5, spec.max_gpus).bind(6, spec.source).run();
}

// The generation and bounds saved with the snapshot; nullopt when it has none.
std::optional<NvlinkSpec> read_spec(const Connection& c, int64_t snapshot) {
  Statement s = c.prepare(
      "SELECT nvlink_generation, nvlink_gbytes, nvlink_max_hosts, nvlink_max_gpus, nvlink_source FROM snapshot "
      "WHERE id = ?1",
      fmt::format("cannot read the NVLink domains of snapshot {}", snapshot));
  s.bind(1, snapshot);
  if (!s.step() || s.column_text(0).empty()) return std::nullopt;
  NvlinkSpec spec;
  spec.generation = s.column_text(0);
  spec.gpu_gbytes_per_s = s.column_double(1);
  spec.max_hosts = static_cast<int>(s.column_int(2));
  spec.max_gpus = static_cast<int>(s.column_int(3));
  spec.source = s.column_text(4);
  return spec;
}

int host_id(const Connection& c, int64_t snapshot, const Fabric& fabric, const std::string& host) {
  auto v = fabric.find_host(host);
  if (!v) inconsistent(c, snapshot, fmt::format("NVLink report of host '{}', which the snapshot does not have", host));
  return fabric.index().host_id(*v);
}

}  // namespace

void insert_nvlink(Connection& c, const Fabric& f, int64_t snapshot) {
  const NvlinkDomains& d = f.domains();
  if (d.reports().empty()) return;
  insert_spec(c, d.spec(), snapshot);
  Statement host = c.prepare("INSERT INTO nvlink_host VALUES (?1, ?2, ?3, ?4, ?5)", kCannotSave);
  Statement gpu = c.prepare("INSERT INTO nvlink_gpu VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", kCannotSave);
  for (size_t h = 0; h < d.reports().size(); ++h) {
    const HostNvlink& r = d.reports()[h];
    if (!r.claimed && r.gpus.empty()) continue;
    const std::string& name = f.node(f.hosts()[h]).name;
    host.bind(1, snapshot).bind(2, name).bind(3, r.claimed ? r.claimed->cluster_uuid : "");
    host.bind(4, r.claimed ? r.claimed->clique_id : "").bind(5, r.claimed ? 1 : 0).run();
    for (size_t i = 0; i < r.gpus.size(); ++i) {
      const GpuFabric& g = r.gpus[i];
      gpu.bind(1, snapshot).bind(2, name).bind(3, static_cast<int64_t>(i)).bind(4, g.pci_bus).bind(5, g.state);
      gpu.bind(6, g.status).bind(7, g.clique_id).bind(8, g.cluster_uuid).run();
    }
  }
}

void read_nvlink(const Connection& c, int64_t snapshot, Fabric& fabric) {
  std::optional<NvlinkSpec> spec = read_spec(c, snapshot);
  if (!spec) return;
  std::vector<HostNvlink> reports(fabric.hosts().size());
  std::string what = fmt::format("cannot read the NVLink domains of snapshot {}", snapshot);
  Statement hosts = c.prepare(
      "SELECT host, cluster_uuid, clique_id, claimed FROM nvlink_host WHERE snapshot_id = ?1 ORDER BY host", what);
  hosts.bind(1, snapshot);
  while (hosts.step()) {
    HostNvlink& r = reports[host_id(c, snapshot, fabric, hosts.column_text(0))];
    if (hosts.column_int(3) != 0) r.claimed = DomainKey{hosts.column_text(1), hosts.column_text(2)};
  }
  Statement gpus = c.prepare(
      "SELECT host, pci_bus, state, status, clique_id, cluster_uuid FROM nvlink_gpu WHERE snapshot_id = ?1 "
      "ORDER BY host, ordinal",
      what);
  gpus.bind(1, snapshot);
  while (gpus.step())
    reports[host_id(c, snapshot, fabric, gpus.column_text(0))].gpus.push_back(
        {gpus.column_text(1), gpus.column_text(2), gpus.column_text(3), gpus.column_text(4), gpus.column_text(5)});
  fabric.set_nvlink(std::move(reports), *spec);
}

}  // namespace topo
