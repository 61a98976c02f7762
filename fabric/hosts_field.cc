#include "fabric/hosts_field.h"

#include <fmt/format.h>

#include "common/error.h"
#include "common/hostlist.h"
#include "common/quote.h"

namespace topo {

std::vector<NodeId> read_hosts_field(std::string_view expression, const Fabric& fabric, const std::string& filename,
                                     int line, std::string_view field) {
  std::vector<std::string> names;
  try {
    names = expand_hostlist(expression, fabric.hosts().size());
  } catch (const HostlistError& e) {
    throw ParseError(filename, line, fmt::format("{} field '{}': {}", field, shown(expression), e.what()));
  }
  std::vector<NodeId> hosts;
  hosts.reserve(names.size());
  for (const std::string& name : names) {
    auto host = fabric.find_host(name);
    if (!host)
      throw ParseError(filename, line, fmt::format("{} field: '{}' is not a host of the fabric", field, shown(name)));
    hosts.push_back(*host);
  }
  return hosts;
}

}  // namespace topo
