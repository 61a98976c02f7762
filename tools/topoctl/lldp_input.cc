#include "tools/topoctl/lldp_input.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

namespace topoctl {

std::map<std::string, topo::LinkRate> parse_link_speeds(const std::vector<std::string>& values) {
  std::map<std::string, topo::LinkRate> out;
  for (const std::string& v : values) {
    size_t eq = v.rfind('=');
    size_t colon = v.find(':');
    auto rate = eq == std::string::npos ? std::nullopt : topo::parse_rate(v.substr(eq + 1));
    if (colon == std::string::npos || eq == std::string::npos || colon > eq || !rate || !topo::is_ethernet(rate->speed))
      throw std::invalid_argument(
          fmt::format("--link-speed {}: expected SYSTEM:PORT=RATE with an Ethernet rate, e.g. leaf01:swp5=25G", v));
    out[v.substr(0, eq)] = *rate;
  }
  return out;
}

std::string out_of_band_note(const std::vector<std::string>& switches) {
  if (switches.empty()) return "";
  return fmt::format(
      "left out {} out-of-band switch{} ({}): not cabled to the fabric's switches, and every host on {} has more "
      "bandwidth into the fabric (a management network)",
      switches.size(), switches.size() == 1 ? "" : "es", fmt::join(switches, ", "),
      switches.size() == 1 ? "it" : "them");
}

bool any_unplaced(const std::vector<topo::LldpFinding>& findings) {
  return std::any_of(findings.begin(), findings.end(),
                     [](const topo::LldpFinding& f) { return f.kind == topo::LldpFindingKind::UnplacedFile; });
}

nlohmann::json lldp_findings_json(const std::vector<topo::LldpFinding>& findings) {
  nlohmann::json out = nlohmann::json::array();
  for (const topo::LldpFinding& f : findings)
    out.push_back({{"kind", topo::name(f.kind)}, {"subject", f.subject}, {"detail", f.detail}});
  return out;
}

void print_lldp_findings(std::ostream& out, const std::vector<topo::LldpFinding>& findings) {
  for (const topo::LldpFinding& f : findings)
    fmt::print(out, "{:<21} {:<28} {}\n", topo::name(f.kind), f.subject, f.detail);
}

}  // namespace topoctl
