// What discover and lint share about LLDP input: the --link-speed values and
// the findings as JSON and as lines for people.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "discovery/lldp.h"

namespace topoctl {

// "leaf01:swp5=25G" -> {"leaf01:swp5": 25GbE}. Throws std::invalid_argument
// naming the value that is not SYSTEM:PORT=RATE.
std::map<std::string, topo::LinkRate> parse_link_speeds(const std::vector<std::string>& values);

nlohmann::json lldp_findings_json(const std::vector<topo::LldpFinding>& findings);
void print_lldp_findings(std::ostream& out, const std::vector<topo::LldpFinding>& findings);

}  // namespace topoctl
