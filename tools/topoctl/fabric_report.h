// The fabric as admins read it (tables, a tree) and as scripts read it (JSON).
#pragma once

#include <iosfwd>

#include <nlohmann/json.hpp>

#include "tools/topoctl/input.h"

namespace topoctl {

// `topoctl show --json`: hosts, switches per level, leaves with their
// oversubscription, rails, pods, degraded links, the fault count and the
// routing ("adaptive", "static", "static:ftree"; with its source when static).
nlohmann::json fabric_json(const LoadedFabric& loaded);
// Every fault, as `topoctl lint --json` lists them.
nlohmann::json faults_json(const topo::Fabric& fabric);

void print_summary(std::ostream& out, const LoadedFabric& loaded);
void print_leaves(std::ostream& out, const topo::Fabric& fabric);
void print_tree(std::ostream& out, const topo::Fabric& fabric);
void print_faults(std::ostream& out, const topo::Fabric& fabric);
// The NVLink domains: one line per domain with its hosts; nothing when the
// fabric has none.
void print_domains(std::ostream& out, const topo::Fabric& fabric);
// `show --json`'s "nvlink": generation, bounds, each domain and its hosts,
// the hosts that claim a domain but count outside it; null without domains.
nlohmann::json domains_json(const topo::Fabric& fabric);

}  // namespace topoctl
