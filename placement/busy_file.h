// The busy-hosts file of `topoctl place --busy FILE`: what is taken now.
//
//   # host [GPUs in use]; a host alone is busy as a whole
//   gpu001
//   gpu002 4
//
// Hostlist expressions are accepted for the host ("gpu[001-004] 8"), of no
// more names than the fabric has hosts.
#pragma once

#include <istream>
#include <string>

#include "placement/request.h"

namespace topo {

// Marks what the file names as used in `free`. Throws ParseError naming the
// file, line and field for an unknown host, a bad count or more GPUs in use
// than the host has.
void read_busy(std::istream& in, const std::string& filename, const Fabric& fabric, FreeMap& free);
void read_busy_file(const std::string& path, const Fabric& fabric, FreeMap& free);

}  // namespace topo
