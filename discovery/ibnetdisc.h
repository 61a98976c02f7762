// The fabric as libibnetdisc sees it: live, through this host's HCA, or
// from a cache file that `ibnetdiscover --cache FILE` wrote.
//
// Every switch and CA becomes a node with the ids ibnetdiscover prints
// ("S-<node guid>", "H-<node guid>"), its node description as name and its
// node GUID; every cabled port pair becomes a link with the active width and
// speed from PortInfo (LinkWidthActive; LinkSpeedExtActive for FDR..NDR,
// Mellanox's extended PortInfo for FDR10, else LinkSpeedActive) and the
// lower PortState of its two ends. A link is Active only once a subnet
// manager has brought it up: on a fabric without one, every link is Init
// and the classification reports each as inactive. Routers are skipped.
// LIDs: a switch's is its port 0's, an HCA port's its own base LID (a
// fabric no subnet manager has configured has none, and FabricBuilder
// numbers them as for any source without LIDs). A CA with several
// cabled ports becomes one HCA vertex per port, "H-<guid>:<port>", as the
// ibnetdiscover reader makes it.
//
// Under ibsim (LD_PRELOAD=.../umad2sim/libumad2sim.so) the simulator is found
// through IBSIM_SOCKNAME (abstract unix socket "<name>:ctl", default "sim"),
// or IBSIM_SERVER_NAME/IBSIM_SERVER_PORT for a remote one; SIM_HOST picks the
// node to attach at. libumad2sim would wait forever for a simulator that is
// not running: discover_ibnetdisc checks for the local socket first and
// throws DiscoveryError instead. libumad2sim also creates ./sys-<pid> in the
// working directory, which must be writable.
//
// libibnetdisc reports its own failures on stderr; these functions add a
// typed exception and always free what libibnetdisc allocated.
#pragma once

#include <stdexcept>
#include <string>

#include "fabric/fabric.h"

namespace topo {

// Live discovery failed: no HCA, no such HCA or port, or the query itself.
class DiscoveryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct IbnetdiscOptions {
  std::string ca;      // HCA to discover through ("mlx5_0"); empty: the first one
  int ca_port = 0;     // its port; 0: the first active one
  int timeout_ms = 0;  // per-query timeout; 0: libibmad's default
};

// Throws DiscoveryError; FabricError when an HCA description does not match the naming.
Fabric discover_ibnetdisc(const IbnetdiscOptions& options, const HostNaming& naming = {});

// Throws ParseError(path, 0, ...) for a file that cannot be opened or is not
// a libibnetdisc cache.
Fabric load_ibnetdisc_cache(const std::string& path, const HostNaming& naming = {});

// The switches' linear forwarding tables, read live as rdma-core's
// dump_fts reads them: the fabric is discovered again through libibnetdisc
// (for each switch's directed route and SwitchInfo), then every switch is
// asked by directed route for LinearForwardingTable blocks 0..LinearFDBTop/64
// (64 LIDs a block). Switches are matched to `fabric`'s by id ("S-<guid>"),
// else by description; the result is static, its source
// "libibnetdisc:live", indexed by `fabric`'s switches. A switch of `fabric`
// that discovery does not find, or one found that `fabric` lacks, throws
// DiscoveryError naming it, as does a block that cannot be read.
Routing read_lfts_live(const IbnetdiscOptions& options, const Fabric& fabric);

}  // namespace topo
