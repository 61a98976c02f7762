// ibnetdiscover text files: the fabric as admins save it, and as ibsim reads it.
//
// Two dialects of one format are read:
//
//  * ibnetdiscover output (`ibnetdiscover > fabric.txt`):
//        switchguid=0x7cfe900300a00001(7cfe900300a00001)
//        Switch  36 "S-7cfe900300a00001"   # "leaf01" enhanced port 0 lid 3 lmc 0
//        [1]  "H-0002c90300000011"[1](2c90300000012)   # "gpu001 mlx5_0" lid 4 4xNDR
//        [33] "S-7cfe900300a00002"[1]   # "spine01" lid 9 1xNDR
//
//        caguid=0x2c90300000011
//        Ca  1 "H-0002c90300000011"   # "gpu001 mlx5_0"
//        [1](2c90300000012)  "S-7cfe900300a00001"[1]   # lid 4 lmc 0 "leaf01" lid 3 4xNDR
//    A link's width and speed are the `<width>x<speed>` word after the last
//    `lid <n>` of its comment; when both ends carry one, the link runs at the
//    narrower width and slower speed of the two (as a real link trains).
//
//  * ibsim net files (/usr/share/doc/ibsim-utils/net-examples/):
//        Switch 8 "Switch1"
//        [1] "Hca1"[1]
//        [3] "Switch2"[3]  w=1
//        Hca 2 "Hca1"
//    Without a rate word the rate is what ibsim 0.10 negotiates: `w=`, `s=`
//    and `e=` are *bit masks* of enabled widths (1=1x 2=4x 4=8x 8=12x 16=2x),
//    speeds (1=SDR 2=DDR 4=QDR) and extended speeds (1=FDR 2=EDR 4=HDR; 8=NDR
//    is read too, ibsim 0.10 refuses it); a link takes the widest, fastest
//    bit both ends enable; a port that says nothing enables 4x and SDR only,
//    so `w=4` means 8x, not 4x. `width=`, `speed=` and `extspeed=` lines
//    change that default for the nodes after them. `include`, `do`, `module`
//    and `@` aliases are refused. GUIDs follow ibsim too: the
//    `switchguid=`/`caguid=` line before a node, else counting up from
//    0x200000 (switches) and 0x100000 (CAs, which reserve their port GUIDs).

// LIDs: a switch's from its header ("... port 0 lid 3 lmc 0"), a CA port's
// from its own line ("# lid 4 lmc 0 ...") or else from the switch line that
// cables it ("\"gpu001 mlx5_0\" lid 4 4xNDR"); both given and different is
// an error. A CA with no cabled port has no port line: its LID is the
// "lid <n>" of its header's comment ("Ca 2 \"H-...\" # \"spare mlx5_0\" lid 7"),
// which ibnetdiscover never prints and the writer does for such a CA alone.
// A file without LIDs (ibsim net files) gets them numbered by
// FabricBuilder::finish().
//
// An HCA vertex stands for one cabled port (fabric.h): a CA with several
// cabled ports becomes one vertex per port, with id "<id>:<port>" and the
// port's LID; the writer joins them back into one CA.
//
// Node ids are kept as written ("S-7cfe900300a00001", "Switch1"); a node's
// name is its description from the `# "..."` comment, or its id. An HCA's
// description gives its host and rail through the HostNaming. Routers
// (`Rt`) and their links are skipped: the model has no place for them.
// Every `Switch`/`Ca` is read, even one with no cabled port.
//
// Malformed input throws ParseError naming the file, the line and what was
// expected there (bad header, port line outside a node, unknown width or
// speed, unterminated quote, link to a node that is never defined, a port
// cabled to two different peers, a file with no node at all or with
// routers alone).
#pragma once

#include <iosfwd>
#include <string>

#include "fabric/fabric.h"

namespace topo {

// `filename` names the input in errors and in Fabric::source()
// ("ibnetdiscover:<filename>").
Fabric read_ibnetdiscover(std::istream& in, const std::string& filename, const HostNaming& naming = {});
Fabric read_ibnetdiscover_file(const std::string& path, const HostNaming& naming = {});

// Writes the fabric in ibnetdiscover's format, which ibsim reads too: a
// `switchguid=`/`caguid=` line when the node has a GUID (ibsim then gives it
// that GUID), the header with the node's name as description (and the LID
// of a CA with no cable written), and each cabled port with the LIDs of both
// ends and `<width>x<speed>`. Hosts are not written: they come
// back from the HCA descriptions (a host with no HCA, as topology.conf gives,
// does not come back). Links whose state is Down are left out, as
// ibnetdiscover leaves them out; the format has no port state, so every
// written link reads back Active.
//
// Both ends of a link carry the same rate word: under OpenSM, ibsim re-trains
// a link whose ends enable different widths (1x against 1x|4x comes up 4x).
// ibsim 0.10 understands the rate word up to HDR (1x, 2x, 4x, 8x, 12x;
// SDR..HDR). For NDR and XDR it warns "cannot parse speed" and brings the
// link up at the written width and SDR, so a simulated NDR fabric is
// discovered live as <width>xSDR (FDR10 comes up as QDR); our reader still
// reads the written rate back.
//
// Throws FabricError for a node id or name that the format cannot carry: a
// double quote or line break in either, '#' or '@' in an id, or an id
// longer than ibsim's 64 characters.
void write_ibnetdiscover(const Fabric& fabric, std::ostream& out);

}  // namespace topo
