// Slurm's topology.conf for the topology/tree plugin: read and write.
//
// The file names switches and their children, one switch per line:
//   SwitchName=leaf01 Nodes=gpu[001-008]          a leaf and its hosts
//   SwitchName=spine01 Switches=leaf[01-04]       a switch above others
//   SwitchName=s0 Nodes=dev[0-5] LinkSpeed=100    LinkSpeed: a whole number in
//                                                 arbitrary units Slurm ignores
// The syntax is Slurm's own (src/common/parse_config.c): keys are case
// insensitive, "#" starts a comment unless written "\#", a line ending in an
// odd number of backslashes continues on the next one, a value may be
// quoted ("..."), and "Include <file>" reads another file (relative to the
// including file's directory). Names take Slurm hostlist expressions
// (common/hostlist.h).
//
// Reading gives a Fabric: every host gets one HCA per leaf it is listed
// under, described "<host> mlx5_<i>" so that the default HostNaming maps it
// back to the host (and rail i), and every switch-child pair becomes a cable
// at a configurable rate. The file carries no port numbers, so ports are
// counted out: a switch's ports towards its children come first, in the
// order they are listed, then its ports towards its parents. Levels follow
// from the shape (classify.h), never from the names.
//
// Writing gives what topology/tree in Slurm 22.05 accepts (checked against
// Debian's slurmctld 22.05.8, whose `scontrol show topology` gives back the
// levels and node sets written); see write_slurm_topology for how hosts
// cabled to several leaves are listed.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "fabric/fabric.h"
#include "fabric/link_rate.h"

namespace topo {

// The rate every cable gets: topology.conf records none Slurm uses.
inline constexpr LinkRate kSlurmTopologyDefaultRate{LinkWidth::X4, LinkSpeed::NDR};

// Names all Nodes= and Switches= of a file may expand to, together (with
// its includes): each hostlist is bounded on its own, but a few bytes per
// line can expand to a million hosts, and a fabric of billions of HCAs is
// no cluster's (a 100k-host, 8-rail cluster lists 800k).
inline constexpr uint64_t kMaxSlurmTopologyNames = 1 << 20;

// Reads a topology.conf; `filename` names it in errors and in the fabric's
// source ("slurm-topology:<filename>") and anchors relative Include paths.
// Throws ParseError naming the file, the line and what was expected for: a
// line that does not start with SwitchName=, an unknown key, a key given
// twice on one line, a malformed hostlist or LinkSpeed, a switch with both
// or neither of Nodes= and Switches=, a switch defined twice, a child switch
// no line defines, switches that form a cycle, an Include that cannot be
// read or includes its includer, a file with no switch at all, and one whose
// hostlists together expand past `max_names` (no name past it is written
// out).
Fabric read_slurm_topology(std::istream& in, const std::string& filename, LinkRate rate = kSlurmTopologyDefaultRate,
                           uint64_t max_names = kMaxSlurmTopologyNames);
Fabric read_slurm_topology_file(const std::string& path, LinkRate rate = kSlurmTopologyDefaultRate);

// Writes a topology.conf that Slurm's topology/tree accepts, bottom-up:
// leaves with Nodes= (compressed hostlists), then each level above with
// Switches=, each line's names sorted. A header comment says it was
// generated and from which source.
//
// topology/tree wants every host under exactly one leaf; a host under
// several leaves makes Slurm 22.05 log "Multiple leaf switches contain
// nodes" at every start. Hosts with several HCAs on different leaves (a
// rail-optimized fabric, or dual-homed hosts) are therefore listed under the
// leaf of their lowest-rail HCA only. That keeps locality exact for a
// rail-optimized fabric: the hosts of one rail-0 leaf share a leaf on every
// rail, so "same leaf" means the same thing on all rails. Leaves then left
// without hosts, and switches with nothing listed below them, are left out
// (Slurm rejects a switch with neither Nodes= nor Switches=) and named in
// the header.
//
// Switch names Slurm cannot take as they are (anything outside
// [A-Za-z0-9._-], or longer than 64 characters, as IB node descriptions
// often are) are replaced by "switch-<guid>" (or "switch-<n>" when the GUID
// is unknown), with a header line giving the original name.
//
// Throws FabricError when no host is cabled to a switch (nothing to write)
// or a host name cannot be a Slurm node name.
void write_slurm_topology(const Fabric& fabric, std::ostream& out);

}  // namespace topo
