// A field of hosts in a file: a Slurm hostlist expression whose every name
// is a host of the fabric.
//
// The busy-hosts, running-jobs and concurrent-jobs files each begin a line
// with one ("gpu[001-004],gpu009"). Reading it the same way in each keeps
// their errors alike: the file, the line, the field, and the part of the
// expression that is wrong.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fabric/fabric.h"

namespace topo {

// The hosts the expression names, in the order written; a host named twice
// comes twice (whether that is allowed is the file's rule). Throws
// ParseError(filename, line) whose message begins with `field` and "field":
// for an expression that does not parse, one that names more hosts than the
// fabric has (it could only repeat a host or name a stranger, so a
// "[1-99999999]" is refused before it is written out), and for the first
// name that is not a host of the fabric.
std::vector<NodeId> read_hosts_field(std::string_view expression, const Fabric& fabric, const std::string& filename,
                                     int line, std::string_view field = "hosts");

}  // namespace topo
