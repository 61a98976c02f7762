// The layout of a libibnetdisc cache file (`ibnetdiscover --cache FILE`),
// checked before rdma-core's loader sees it.
//
// ibnd_load_fabric trusts the file: a port number past its node's port
// count is written past the end of that node's port array, and a file whose
// nodes and ports do not refer to each other takes error paths that leak
// what was built. So the whole file is read and held to what
// ibnd_cache_fabric writes, little endian:
//   header   magic 0x8FE7832B, version 1, node count, port count,
//            the GUID of the node discovery started from, max hops (28 bytes);
//   a node   SM LID, LMC, enhanced port 0, SwitchInfo (64), GUID, type
//            (CA, switch, router), port count, NodeInfo (64), NodeDescription
//            (64), then the ports it stores as (port GUID, port number), each
//            port number at most its port count (207 bytes + 9 a port);
//   a port   GUID, port number, external port number, base LID, LMC (at
//            most 7: rdma-core loops over the LIDs it covers), PortInfo (64),
//            its node's GUID, whether a peer is cabled and the peer's (GUID,
//            port number) (95 bytes);
// nodes and ports unique, every reference (a node's ports, a port's node
// and peer, the start node) found, its port number within its node's and
// taken by no other of that node's ports, every port listed by its own node
// (rdma-core frees an unlisted port while its peer still points at it), no
// LID answered by two ports but those of one switch, every LID kept a
// unicast one (0-49151), and nothing after the last port.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace topo {

// A cache larger than a 100k-host fabric's.
inline constexpr uint64_t kMaxIbnetdiscCacheBytes = uint64_t{1} << 30;

// The bytes for rdma-core's loader: `bytes` with the LID of every switch
// port but port 0 cleared. Those ports answer to their switch's LID, and
// rdma-core 44 (Debian 12) files each under it again and leaks the repeat
// (later releases free it); the switch's LID is read from its port 0.
// Throws ParseError(path, 0, ...) saying what does not hold, and at which
// node, port or byte offset; also when two ports other than one switch's
// answer to one LID (a subnet manager never assigns it twice).
std::string checked_ibnetdisc_cache(std::string bytes, const std::string& path);

}  // namespace topo
