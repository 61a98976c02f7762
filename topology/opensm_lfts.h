// OpenSM's dump of the linear forwarding tables, `opensm-lfts.dump`
// (written by `opensm -D 0x40 --dump_files_dir DIR` and by `dump_lfts.sh`):
//
//   Unicast lids [0x0-0x2a] of switch DR path slid 0; dlid 0; 0,1 guid 0x0002c90000000002 (Switch2):
//   0x0001 001 : (Channel Adapter portguid 0x...: 'Hca1 mlx5_0')
//   0x0003 000 : (Switch portguid 0x...: 'Switch2')
//   ...
//   3 lids valid for this switch
//
// Each block names a switch by GUID (and description); each entry gives a
// destination LID, the out port, and what the LID belongs to.
#pragma once

#include <iosfwd>
#include <string>

#include "topology/fabric.h"

namespace topo {

// Reads the tables of every switch of `fabric` from a dump, matching each
// block's switch by GUID, else by description. The result is static, its
// source "opensm-dump:<filename>", its engine empty.
//
// Throws ParseError naming the file and line for malformed input, and for a
// dump of another fabric: a switch the fabric does not have, a switch of the
// fabric the dump leaves out, or an entry whose LID belongs to another node
// than the fabric's LID of that name (each named).
Routing read_opensm_lfts(std::istream& in, const std::string& filename, const Fabric& fabric);
Routing read_opensm_lfts_file(const std::string& path, const Fabric& fabric);

// Writes the tables of a static routing in the same format (for tests and
// for `topoctl export`).
void write_opensm_lfts(const Fabric& fabric, std::ostream& out);

}  // namespace topo
