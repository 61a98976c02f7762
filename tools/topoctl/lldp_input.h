// What discover and lint share about LLDP input: the --link-speed values,
// the findings as JSON and as lines for people, the out-of-band note.
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

// The sentence that says which switches were left out as a management
// network; "" when none were.
std::string out_of_band_note(const std::vector<std::string>& switches);

// Whether a file could not be placed: discover then still stores the rest,
// and exits 1.
bool any_unplaced(const std::vector<topo::LldpFinding>& findings);

nlohmann::json lldp_findings_json(const std::vector<topo::LldpFinding>& findings);
void print_lldp_findings(std::ostream& out, const std::vector<topo::LldpFinding>& findings);

}  // namespace topoctl
