// OpenSM's dump of the linear forwarding tables, `opensm-lfts.dump`
// (written by `opensm -D 0x43 --dump_files_dir DIR`, OpenSM 3.3):
//
//   Unicast lids [0-8] of switch Lid 1 guid 0x0000000000200000 ('leaf01'):
//   0x0001 000 # Switch portguid 0x0000000000200000: 'leaf01'
//   0x0002 001 # Channel Adapter portguid 0x0000000000100001: 'gpu001 mlx5_0'
//   0x0003 003 # Switch portguid 0x0000000000200001: 'leaf02'
//   8 lids dumped
//
// One block per switch, named by node GUID and description; one line per
// LID that has a path (OpenSM leaves out LIDs without one), giving the out
// port (0: the switch itself) and the node the LID belongs to ("unknown node
// and type" when OpenSM knew none). The header's [0-N] is the highest LID
// the switch's table covers, and so is the footer's count.
#pragma once

#include <iosfwd>
#include <string>

#include "fabric/fabric.h"

namespace topo {

// Reads the tables of every switch of `fabric` from a dump, matching each
// block's switch by GUID, else by description (the fabric's switch names,
// when its GUIDs are not the subnet's). The result is static, its source
// "opensm-dump:<filename>", its engine empty; a LID the dump leaves out of a
// switch's block has no path there (kNoPort).
//
// Throws ParseError naming the file and line for malformed input (a line
// that is neither a block header, an entry nor a footer; an entry outside a
// block; a LID or port that is not a number; a switch given twice). A dump
// of another fabric is refused with a ParseError naming what does not
// match: switches of the dump the fabric does not have, switches of the
// fabric the dump leaves out, a switch whose LID differs, a port the switch
// does not have, entries whose LID belongs to another node in the fabric
// (by description) or to none (up to ten of each are named).
Routing read_opensm_lfts(std::istream& in, const std::string& filename, const Fabric& fabric);
Routing read_opensm_lfts_file(const std::string& path, const Fabric& fabric);

// Writes the fabric's static tables in OpenSM's format and block order
// (tests, benchmarks, `topoctl export`). Port GUIDs are written as ibsim makes them: a switch's
// is its node GUID, an HCA port's the node GUID plus the port number.
// Throws FabricError when the fabric routes adaptively.
void write_opensm_lfts(const Fabric& fabric, std::ostream& out);

}  // namespace topo
