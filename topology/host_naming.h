// From an HCA's node description to the Slurm host and the HCA's rail.
//
// Subnet managers see HCAs, not hosts: an HCA's node description is usually
// "<hostname> <device>", e.g. "gpu017 mlx5_3". The default pattern takes the
// first word as the host and the trailing number of the second as the rail
// index. Sites with other conventions configure a regular expression whose
// first group is the host and whose optional second group is the device.
#pragma once

#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>

namespace topo {

struct HcaName {
  std::string host;
  std::string device;  // "mlx5_3"; empty when the description has none
  int rail = -1;       // trailing number of the device; -1 when none
};

class HostNaming {
 public:
  // The default convention, "<host> <device>".
  HostNaming() = default;
  // Throws std::invalid_argument when `pattern` is not a valid ECMAScript
  // regular expression with at least one group.
  explicit HostNaming(std::string pattern);

  // nullopt when the description does not match.
  std::optional<HcaName> parse(std::string_view description) const;

  // The pattern as configured; empty for the default.
  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  std::shared_ptr<const std::regex> regex_;  // shared: Fabric copies stay cheap
};

}  // namespace topo
