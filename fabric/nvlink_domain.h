// NVLink domains: groups of hosts whose GPUs reach each other over NVLink
// switches (a GB200/GB300 NVL72 rack, two NVL36 racks joined), a level of
// the fabric above the hosts and beside the leaves.
//
// A domain is named by what NVML reports for each GPU: the fabric's
// ClusterUUID and the CliqueId inside it, (ClusterUUID, CliqueId). Sites
// that already describe their domains as Slurm blocks name them by the block
// alone (an empty ClusterUUID).
//
// Each host reports what its GPUs say (HostNvlink). resolve_domains() turns
// the reports into domains and findings, with these rules:
// - a GPU whose fabric state is not "Completed", or whose status is not
//   "Success", or whose ClusterUUID or CliqueId is missing (N/A, all zero),
//   is a fault, unless its state says the GPU has no NVLink fabric at all
//   ("Not Supported", "N/A"): an 8-GPU HGX host is simply outside every
//   domain;
// - a host whose GPUs name different domains (or some a domain and some
//   none) is a fault;
// - a domain with more hosts or GPUs than the hardware allows (NvlinkSpec)
//   is a fault;
// a host with any of these counts outside its domain: placement never
// counts on its NVLink, and the domain it claimed is kept for lint and diff.
#pragma once

#include <compare>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace topo {

// One GPU's Fabric section, as nvidia-smi prints it (-q or -q -x).
struct GpuFabric {
  std::string pci_bus;       // "00000008:01:00.0"; empty when the source has none
  std::string state;         // "Completed", "In Progress", "Not Started", "Not Supported", "N/A"
  std::string status;        // "Success", an NVML error string, or "N/A"
  std::string clique_id;     // decimal, "N/A" when none
  std::string cluster_uuid;  // "b0d2...-...", "N/A" or all zeros when none

  bool operator==(const GpuFabric&) const = default;
};

// Who a domain is. A Slurm block read back has only its name, kept in
// clique_id with an empty cluster_uuid.
struct DomainKey {
  std::string cluster_uuid;
  std::string clique_id;

  // "<ClusterUUID>.<CliqueId>" as NVIDIA's GPU feature discovery labels
  // it; the block name alone for a block.
  std::string str() const;
  auto operator<=>(const DomainKey&) const = default;
};

// What one host reports: the domain it claims and, when the source has
// them, its GPUs' records (a Slurm block has none).
struct HostNvlink {
  std::optional<DomainKey> claimed;
  std::vector<GpuFabric> gpus;

  bool operator==(const HostNvlink&) const = default;
};

// The GPU's domain when its record names one (ClusterUUID and CliqueId
// present, the UUID not all zeros), whatever its state.
std::optional<DomainKey> gpu_domain(const GpuFabric& gpu);
// A host's report from its GPUs: it claims the domain most of its GPUs
// name (the smallest key on a tie); none when no GPU names one.
HostNvlink host_nvlink(std::vector<GpuFabric> gpus);

// The hardware's bounds and speed, per NVLink generation.
struct NvlinkSpec {
  std::string generation = "nvlink5";
  // GB/s each way per GPU into the NVLink switches.
  double gpu_gbytes_per_s = 900;
  int max_hosts = 18;  // compute trays per domain
  int max_gpus = 72;
  std::string source;  // where the figures come from, for people

  bool operator==(const NvlinkSpec&) const = default;
};
// "nvlink5" (GB200/GB300 NVL72, NVL36x2), "nvlink4" (GH200 NVL32);
// nullopt for another word.
std::optional<NvlinkSpec> nvlink_spec(std::string_view generation);
// The generations nvlink_spec() knows, for messages.
std::string_view nvlink_generations();

// One finding about the domains, before it becomes a Fault of the fabric.
struct DomainFinding {
  enum class Kind { FabricState, Disagreement, TooLarge } kind;
  std::string subject;  // "gpu017" , "gpu017 GPU 00000008:01:00.0", a domain's name
  std::string detail;
};

// The domains of one snapshot, hosts by their dense id (FabricIndex).
class NvlinkDomains {
 public:
  NvlinkDomains() = default;

  bool empty() const { return keys_.empty(); }
  size_t count() const { return keys_.size(); }
  const DomainKey& key(int domain) const { return keys_[domain]; }
  // The hosts that count in the domain, in host id order.
  std::span<const int> hosts(int domain) const {
    return {members_.data() + begin_[domain], static_cast<size_t>(begin_[domain + 1] - begin_[domain])};
  }
  // The domain the host counts in; -1 when none (no claim, or a fault).
  int domain_of(int host) const {
    return host >= 0 && static_cast<size_t>(host) < domain_of_.size() ? domain_of_[host] : -1;
  }
  // The largest domain, in hosts.
  int largest() const;
  // What each host reported, by host id; empty when no source gave domains.
  const std::vector<HostNvlink>& reports() const { return reports_; }
  const NvlinkSpec& spec() const { return spec_; }
  // The domain with this key; -1 when none counts.
  int find(const DomainKey& key) const;

 private:
  friend struct DomainResolver;
  std::vector<DomainKey> keys_;
  std::vector<int> begin_ = {0};
  std::vector<int> members_;
  std::vector<int> domain_of_;
  std::vector<HostNvlink> reports_;
  NvlinkSpec spec_;
};

// Pure: the domains from each host's report (`reports[h]` for host id h;
// `host_names[h]` names it in findings), and the findings.
struct ResolvedDomains {
  NvlinkDomains domains;
  std::vector<DomainFinding> findings;
};
ResolvedDomains resolve_domains(std::vector<HostNvlink> reports, std::span<const std::string> host_names,
                                const NvlinkSpec& spec);

}  // namespace topo
