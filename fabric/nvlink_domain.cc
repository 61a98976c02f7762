#include "fabric/nvlink_domain.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace topo {
namespace {

bool missing(std::string_view v) { return v.empty() || v == "N/A"; }

// An all-zero ClusterUUID is what a GPU reports when it is in no multi-node
// NVLink domain (topograph's users met it on unpartitioned GPUs).
bool all_zero_uuid(std::string_view v) {
  return std::all_of(v.begin(), v.end(), [](char c) { return c == '0' || c == '-'; });
}

// A GPU that has no NVLink fabric at all: no fault, no domain.
bool no_fabric(const GpuFabric& g) { return (g.state == "Not Supported" || missing(g.state)) && !gpu_domain(g); }

bool healthy(const GpuFabric& g) { return g.state == "Completed" && g.status == "Success" && gpu_domain(g); }

std::string gpu_subject(std::string_view host, const GpuFabric& g, size_t index) {
  return g.pci_bus.empty() ? fmt::format("{} GPU {}", host, index) : fmt::format("{} GPU {}", host, g.pci_bus);
}

}  // namespace

std::string DomainKey::str() const { return cluster_uuid.empty() ? clique_id : cluster_uuid + "." + clique_id; }

std::optional<DomainKey> gpu_domain(const GpuFabric& g) {
  if (missing(g.cluster_uuid) || missing(g.clique_id) || all_zero_uuid(g.cluster_uuid)) return std::nullopt;
  return DomainKey{g.cluster_uuid, g.clique_id};
}

HostNvlink host_nvlink(std::vector<GpuFabric> gpus) {
  std::map<DomainKey, int> votes;
  for (const GpuFabric& g : gpus)
    if (auto k = gpu_domain(g)) ++votes[*k];
  HostNvlink out;
  int best = 0;
  for (const auto& [key, n] : votes)
    if (n > best) {
      best = n;
      out.claimed = key;
    }
  out.gpus = std::move(gpus);
  return out;
}

std::optional<NvlinkSpec> nvlink_spec(std::string_view generation) {
  if (generation == "nvlink5")
    return NvlinkSpec{"nvlink5", 900, 18, 72,
                      "NVIDIA GB200 NVL72 specifications: fifth-generation NVLink, 1.8 TB/s per GPU (900 GB/s each "
                      "way), 72 GPUs in 18 compute trays"};
  if (generation == "nvlink4")
    return NvlinkSpec{"nvlink4", 450, 32, 32,
                      "NVIDIA GH200 NVL32: fourth-generation NVLink, 900 GB/s per GPU (450 GB/s each way), 32 "
                      "GPUs in 32 compute nodes"};
  return std::nullopt;
}

std::string_view nvlink_generations() { return "nvlink5, nvlink4"; }

int NvlinkDomains::largest() const {
  int best = 0;
  for (size_t d = 0; d < keys_.size(); ++d) best = std::max(best, begin_[d + 1] - begin_[d]);
  return best;
}

int NvlinkDomains::find(const DomainKey& key) const {
  auto it = std::find(keys_.begin(), keys_.end(), key);
  return it == keys_.end() ? -1 : static_cast<int>(it - keys_.begin());
}

// Builds the table; a friend of NvlinkDomains.
struct DomainResolver {
  std::span<const std::string> names;
  const NvlinkSpec& spec;
  std::vector<DomainFinding> findings;

  // Whether the host's report lets it count in the domain it claims.
  bool sound(int host, const HostNvlink& r) {
    bool ok = true;
    for (size_t i = 0; i < r.gpus.size(); ++i) {
      const GpuFabric& g = r.gpus[i];
      if (no_fabric(g) || healthy(g)) continue;
      findings.push_back({DomainFinding::Kind::FabricState, gpu_subject(names[host], g, i),
                          fmt::format("NVLink fabric state {}, status {}, ClusterUUID {}, CliqueId {}: the host "
                                      "counts outside its domain",
                                      g.state, g.status, g.cluster_uuid, g.clique_id)});
      ok = false;
    }
    for (const GpuFabric& g : r.gpus)
      if (gpu_domain(g) != r.claimed) {
        findings.push_back(
            {DomainFinding::Kind::Disagreement, names[host],
             fmt::format("its GPUs name different NVLink domains ({} and {}): it counts outside them",
                         r.claimed ? r.claimed->str() : "none", gpu_domain(g) ? gpu_domain(g)->str() : "none")});
        return false;
      }
    return ok;
  }

  size_t gpus_of(const std::vector<HostNvlink>& reports, const std::vector<int>& hosts) const {
    size_t n = 0;
    for (int h : hosts) n += reports[h].gpus.size();
    return n;
  }

  NvlinkDomains resolve(std::vector<HostNvlink> reports) {
    NvlinkDomains out;
    out.spec_ = spec;
    out.domain_of_.assign(reports.size(), -1);
    std::map<DomainKey, std::vector<int>> members;
    std::vector<DomainKey> order;
    for (size_t h = 0; h < reports.size(); ++h) {
      const HostNvlink& r = reports[h];
      // Every host's GPUs are checked, whether or not they name a domain.
      bool ok = sound(static_cast<int>(h), r);
      if (!r.claimed || !ok) continue;
      auto [it, fresh] = members.try_emplace(*r.claimed);
      if (fresh) order.push_back(*r.claimed);
      it->second.push_back(static_cast<int>(h));
    }
    for (const DomainKey& key : order) {
      const std::vector<int>& hosts = members[key];
      size_t gpus = gpus_of(reports, hosts);
      if (static_cast<int>(hosts.size()) > spec.max_hosts || static_cast<int>(gpus) > spec.max_gpus) {
        findings.push_back({DomainFinding::Kind::TooLarge, key.str(),
                            fmt::format("{} hosts and {} GPUs in one {} domain, which holds at most {} hosts and {} "
                                        "GPUs: its hosts count outside it",
                                        hosts.size(), gpus, spec.generation, spec.max_hosts, spec.max_gpus)});
        continue;
      }
      int d = static_cast<int>(out.keys_.size());
      out.keys_.push_back(key);
      for (int h : hosts) {
        out.members_.push_back(h);
        out.domain_of_[h] = d;
      }
      out.begin_.push_back(static_cast<int>(out.members_.size()));
    }
    out.reports_ = std::move(reports);
    return out;
  }
};

ResolvedDomains resolve_domains(std::vector<HostNvlink> reports, std::span<const std::string> host_names,
                                const NvlinkSpec& spec) {
  DomainResolver r{host_names, spec, {}};
  NvlinkDomains domains = r.resolve(std::move(reports));
  return {std::move(domains), std::move(r.findings)};
}

}  // namespace topo
