#include "discovery/ibnetdisc.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <infiniband/ibnetdisc.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include "common/error.h"
#include "common/line_source.h"
#include "discovery/ibnetdisc_cache.h"
#include "discovery/ibnetdisc_walk.h"

namespace topo {
namespace {

// Bytes in an anonymous in-memory file, for a loader that takes a path.
class MemoryFile {
 public:
  MemoryFile(std::string_view bytes, const std::string& name) : fd_(memfd_create("topo-ibnetdisc-cache", MFD_CLOEXEC)) {
    if (fd_ < 0) throw ParseError(name, 0, fmt::format("cannot hold the cache in memory: {}", std::strerror(errno)));
    for (size_t done = 0; done < bytes.size();) {
      ssize_t n = write(fd_, bytes.data() + done, bytes.size() - done);
      if (n <= 0) {
        close(fd_);
        throw ParseError(name, 0, fmt::format("cannot hold the cache in memory: {}", std::strerror(errno)));
      }
      done += static_cast<size_t>(n);
    }
  }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  ~MemoryFile() { close(fd_); }
  std::string path() const { return fmt::format("/proc/self/fd/{}", fd_); }

 private:
  int fd_;
};

}  // namespace

namespace ibnd_walk {

std::string node_id(const ibnd_node_t* n) {
  return fmt::format("{}-{:016x}", n->type == IB_NODE_SWITCH ? 'S' : 'H', n->guid);
}

// NodeDescription is 64 bytes, NUL-padded, and may carry trailing blanks.
std::string description(const ibnd_node_t* n) {
  std::string d(n->nodedesc, strnlen(n->nodedesc, sizeof(n->nodedesc)));
  while (!d.empty() && (d.back() == ' ' || d.back() == '\t' || d.back() == '\n')) d.pop_back();
  return d.empty() ? node_id(n) : d;
}

}  // namespace ibnd_walk

namespace {

using namespace ibnd_walk;

std::optional<LinkWidth> width_of(unsigned code) {
  switch (code) {  // IBTA PortInfo:LinkWidthActive
    case 1:
      return LinkWidth::X1;
    case 2:
      return LinkWidth::X4;
    case 4:
      return LinkWidth::X8;
    case 8:
      return LinkWidth::X12;
    case 16:
      return LinkWidth::X2;
  }
  return std::nullopt;
}

std::optional<LinkSpeed> speed_of(const ibnd_port_t* p) {
  // An extended speed, when the port runs one, overrides LinkSpeedActive
  // (which then stays at QDR or below); reserved bits read as zero.
  switch (mad_get_field(const_cast<uint8_t*>(p->info), 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F)) {
    case 1:
      return LinkSpeed::FDR;
    case 2:
      return LinkSpeed::EDR;
    case 4:
      return LinkSpeed::HDR;
    case 8:
      return LinkSpeed::NDR;
    default:
      break;
  }
  // FDR10 is Mellanox's: only in its extended PortInfo, bit 0.
  if (mad_get_field(const_cast<uint8_t*>(p->ext_info), 0, IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F) & 1)
    return LinkSpeed::FDR10;
  switch (mad_get_field(const_cast<uint8_t*>(p->info), 0, IB_PORT_LINK_SPEED_ACTIVE_F)) {
    case 1:
      return LinkSpeed::SDR;
    case 2:
      return LinkSpeed::DDR;
    case 4:
      return LinkSpeed::QDR;
  }
  return std::nullopt;
}

PortState state_of(const ibnd_port_t* p) {
  unsigned s = mad_get_field(const_cast<uint8_t*>(p->info), 0, IB_PORT_STATE_F);
  return s >= 1 && s <= 4 ? static_cast<PortState>(s) : PortState::Down;
}

std::string where(const ibnd_port_t* p) {
  return fmt::format("port {} of {} (\"{}\")", p->portnum, node_id(p->node), description(p->node));
}

// Either end may hold the usable PortInfo; a port reached only as a peer
// (a CA port seen from its switch) still has its own, so each end is read.
LinkRate rate_of(const ibnd_port_t* p, const std::string& source) {
  auto width = width_of(mad_get_field(const_cast<uint8_t*>(p->info), 0, IB_PORT_LINK_WIDTH_ACTIVE_F));
  auto speed = speed_of(p);
  if (!width || !speed) {
    const ibnd_port_t* r = p->remoteport;
    if (!width) width = width_of(mad_get_field(const_cast<uint8_t*>(r->info), 0, IB_PORT_LINK_WIDTH_ACTIVE_F));
    if (!speed) speed = speed_of(r);
  }
  if (!width)
    throw FabricError(fmt::format("{}: {} reports link width code {}, not 1x/2x/4x/8x/12x", source, where(p),
                                  mad_get_field(const_cast<uint8_t*>(p->info), 0, IB_PORT_LINK_WIDTH_ACTIVE_F)));
  if (!speed)
    throw FabricError(fmt::format("{}: {} reports no link speed this model knows (LinkSpeedActive {})", source,
                                  where(p),
                                  mad_get_field(const_cast<uint8_t*>(p->info), 0, IB_PORT_LINK_SPEED_ACTIVE_F)));
  return {*width, *speed};
}

}  // namespace

namespace ibnd_walk {

bool is_cabled(const ibnd_port_t* port) {
  return port && port->remoteport && port->remoteport->node &&
         (port->remoteport->node->type == IB_NODE_SWITCH || port->remoteport->node->type == IB_NODE_CA);
}

std::vector<int> cabled_ports(const ibnd_node_t* n) {
  std::vector<int> out;
  if (n->ports)
    for (int p = 1; p <= n->numports; ++p)
      if (is_cabled(n->ports[p])) out.push_back(p);
  return out;
}

// An HCA vertex stands for one cabled port (fabric.h): a CA with several
// cabled ports becomes "H-<guid>:<port>" per port, as the text reader does.
std::string vertex_id(const ibnd_node_t* n, int port) {
  if (n->type == IB_NODE_SWITCH || cabled_ports(n).size() <= 1) return node_id(n);
  return fmt::format("{}:{}", node_id(n), port);
}

}  // namespace ibnd_walk

namespace {

Fabric convert(const ibnd_fabric_t* f, const HostNaming& naming, std::string source) {
  // Nodes in a stable order (by description, then GUID) whatever order the
  // scan met them in, so that two discoveries of one fabric build alike.
  std::vector<const ibnd_node_t*> nodes;
  for (const ibnd_node_t* n = f->nodes; n; n = n->next)
    if (n->type == IB_NODE_SWITCH || n->type == IB_NODE_CA) nodes.push_back(n);
  std::vector<std::string> names;
  names.reserve(nodes.size());
  std::vector<size_t> order(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    names.push_back(description(nodes[i]));
    order[i] = i;
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (nodes[a]->type != nodes[b]->type) return nodes[a]->type == IB_NODE_SWITCH;
    return std::tie(names[a], nodes[a]->guid) < std::tie(names[b], nodes[b]->guid);
  });

  FabricBuilder builder(naming);
  for (size_t i : order) {
    const ibnd_node_t* n = nodes[i];
    if (n->type == IB_NODE_SWITCH) {
      builder.add_switch(node_id(n), names[i], n->numports, n->guid);
      // A switch's LID is its port 0's.
      uint32_t lid = n->ports && n->ports[0] ? n->ports[0]->base_lid : n->smalid;
      if (lid) builder.set_lid(node_id(n), lid);
      continue;
    }
    std::vector<int> ports = cabled_ports(n);
    if (ports.size() <= 1) {
      builder.add_hca(node_id(n), names[i], n->numports, n->guid);
      if (!ports.empty() && n->ports[ports[0]]->base_lid) builder.set_lid(node_id(n), n->ports[ports[0]]->base_lid);
      continue;
    }
    for (int p : ports) {
      builder.add_hca(vertex_id(n, p), names[i], n->numports, n->guid);
      if (n->ports[p]->base_lid) builder.set_lid(vertex_id(n, p), n->ports[p]->base_lid);
    }
  }
  for (size_t i : order) {
    const ibnd_node_t* n = nodes[i];
    if (!n->ports) continue;
    for (int p = 1; p <= n->numports; ++p) {
      const ibnd_port_t* port = n->ports[p];
      if (!port || !port->remoteport || !port->remoteport->node) continue;
      const ibnd_port_t* peer = port->remoteport;
      if (peer->node->type != IB_NODE_SWITCH && peer->node->type != IB_NODE_CA) continue;
      // Each cable once, from the end with the smaller (GUID, port).
      if (std::make_pair(peer->node->guid, peer->portnum) < std::make_pair(n->guid, port->portnum)) continue;
      PortState state = std::min(state_of(port), state_of(peer));
      builder.connect(vertex_id(n, port->portnum), port->portnum, vertex_id(peer->node, peer->portnum), peer->portnum,
                      rate_of(port, source), state);
    }
  }
  Fabric fabric = std::move(builder).finish();
  fabric.set_source(std::move(source));
  return fabric;
}

// The HCAs libibumad can open, with their port counts. libibumad names a
// default "mthca0" when the host has none, so each name is opened to check.
std::vector<std::pair<std::string, int>> local_cas() {
  char names[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
  int n = umad_get_cas_names(names, UMAD_MAX_DEVICES);
  std::vector<std::pair<std::string, int>> out;
  for (int i = 0; i < n; ++i) {
    umad_ca_t info{};
    if (umad_get_ca(names[i], &info) < 0) continue;
    out.emplace_back(std::string(names[i], strnlen(names[i], UMAD_CA_NAME_LEN)), info.numports);
    umad_release_ca(&info);
  }
  return out;
}

// Preloaded libumad2sim waits forever for a simulator that is not running;
// a local one shows as the abstract socket "@<IBSIM_SOCKNAME>:ctl" (padded
// with NULs, which /proc/net/unix prints as '@').
void check_simulator() {
  const char* preload = std::getenv("LD_PRELOAD");
  if (!preload || !std::strstr(preload, "umad2sim")) return;
  const char* remote = std::getenv("IBSIM_SERVER_NAME");
  if (remote && *remote) return;  // a remote simulator is not visible from here
  const char* base = std::getenv("IBSIM_SOCKNAME");
  const std::string name = std::string("@") + (base && *base ? base : "sim") + ":ctl";
  std::ifstream unix_sockets("/proc/net/unix");
  if (!unix_sockets) return;
  for (std::string line; std::getline(unix_sockets, line);) {
    size_t space = line.find_last_of(' ');
    std::string_view path = std::string_view(line).substr(space == std::string::npos ? 0 : space + 1);
    if (path.starts_with(name) && path.find_first_not_of('@', name.size()) == std::string_view::npos) return;
  }
  throw DiscoveryError(
      fmt::format("libumad2sim is preloaded but no ibsim listens on '{}' (IBSIM_SOCKNAME={}): start 'ibsim -s NETFILE' "
                  "with the same IBSIM_SOCKNAME first, or libumad2sim waits for it forever",
                  name.substr(1), base && *base ? base : "unset, so 'sim'"));
}

}  // namespace

Fabric discover_ibnetdisc(const IbnetdiscOptions& options, const HostNaming& naming) {
  if (options.ca_port < 0) throw DiscoveryError(fmt::format("HCA port {} is not a port number", options.ca_port));
  check_simulator();
  if (umad_init() < 0) throw DiscoveryError("cannot initialise libibumad");
  auto cas = local_cas();
  if (cas.empty())
    throw DiscoveryError(
        "no InfiniBand HCA on this host (nothing under /sys/class/infiniband_mad); to discover a simulated "
        "fabric, start ibsim and run under LD_PRELOAD=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so");
  std::string ca = options.ca.empty() ? cas.front().first : options.ca;
  auto found = std::find_if(cas.begin(), cas.end(), [&](const auto& c) { return c.first == ca; });
  if (found == cas.end()) {
    std::vector<std::string> names;
    for (const auto& c : cas) names.push_back(c.first);
    throw DiscoveryError(fmt::format("no HCA named '{}' on this host (found: {})", ca, fmt::join(names, ", ")));
  }
  // libumad2sim reports no ports when attached at a switch: only a known count is checked.
  if (options.ca_port > 0 && found->second > 0 && options.ca_port > found->second)
    throw DiscoveryError(fmt::format("HCA '{}' has ports 1-{}, not {}", ca, found->second, options.ca_port));

  ibnd_config_t config{};
  config.timeout_ms = static_cast<unsigned>(std::max(0, options.timeout_ms));
  config.flags = IBND_CONFIG_MLX_EPI;  // Mellanox extended PortInfo: FDR10
  std::vector<char> ca_name(ca.begin(), ca.end());
  ca_name.push_back('\0');
  FabricHandle fabric(ibnd_discover_fabric(ca_name.data(), options.ca_port, nullptr, &config));
  if (!fabric)
    throw DiscoveryError(fmt::format("libibnetdisc could not discover the fabric through {} port {}", ca,
                                     options.ca_port ? fmt::format("{}", options.ca_port) : "(first active)"));
  return convert(fabric.get(), naming,
                 options.ca_port ? fmt::format("ibnetdisc:{}/{}", ca, options.ca_port) : "ibnetdisc:" + ca);
}

namespace ibnd_walk {

FabricHandle discover_handle(const IbnetdiscOptions& options, std::string& ca) {
  check_simulator();
  if (umad_init() < 0) throw DiscoveryError("cannot initialise libibumad");
  auto cas = local_cas();
  if (cas.empty()) throw DiscoveryError("no InfiniBand HCA on this host (nothing under /sys/class/infiniband_mad)");
  ca = options.ca.empty() ? cas.front().first : options.ca;
  ibnd_config_t config{};
  config.timeout_ms = static_cast<unsigned>(std::max(0, options.timeout_ms));
  std::vector<char> ca_name(ca.begin(), ca.end());
  ca_name.push_back('\0');
  FabricHandle fabric(ibnd_discover_fabric(ca_name.data(), options.ca_port, nullptr, &config));
  if (!fabric) throw DiscoveryError(fmt::format("libibnetdisc could not discover the fabric through {}", ca));
  return fabric;
}

}  // namespace ibnd_walk

namespace {

struct MadPortDeleter {
  void operator()(ibmad_port* p) const { mad_rpc_close_port(p); }
};

// One switch's table: LinearFDBTop from the SwitchInfo discovery read, then
// the blocks by directed route.
std::vector<uint8_t> read_switch_lft(ibmad_port* port, ibnd_node_t* n, int timeout_ms) {
  unsigned top = mad_get_field(n->switchinfo, 0, IB_SW_LINEAR_FDB_TOP_F);
  std::vector<uint8_t> table(top + 1, kNoPort);
  uint8_t block[IB_SMP_DATA_SIZE];
  for (unsigned b = 0; b <= top / 64; ++b) {
    int status = 0;
    ib_portid_t portid = n->path_portid;
    if (!smp_query_status_via(block, &portid, IB_ATTR_LINEARFORWTBL, b, static_cast<unsigned>(timeout_ms), &status,
                              port) ||
        status != 0)
      throw DiscoveryError(fmt::format("cannot read LinearForwardingTable block {} of switch {} (\"{}\"), status {}", b,
                                       node_id(n), description(n), status));
    for (unsigned i = 0; i < 64 && b * 64 + i <= top; ++i) table[b * 64 + i] = block[i];
  }
  table[0] = kNoPort;  // LID 0 is no destination
  return table;
}

}  // namespace

Routing read_lfts_live(const IbnetdiscOptions& options, const Fabric& fabric) {
  std::string ca;
  FabricHandle handle = discover_handle(options, ca);
  std::vector<char> ca_name(ca.begin(), ca.end());
  ca_name.push_back('\0');
  int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS};
  std::unique_ptr<ibmad_port, MadPortDeleter> port(mad_rpc_open_port(ca_name.data(), options.ca_port, classes, 2));
  if (!port) throw DiscoveryError(fmt::format("cannot open a MAD port on {} port {}", ca, options.ca_port));

  Routing routing;
  routing.kind = RoutingKind::Static;
  routing.source = "libibnetdisc:live";
  routing.lft.assign(fabric.switches().size(), {});
  std::vector<bool> seen(fabric.switches().size(), false);
  for (ibnd_node_t* n = handle->switches; n; n = n->type_next) {
    auto v = fabric.find(node_id(n));
    if (!v) {
      for (NodeId s : fabric.switches())
        if (fabric.node(s).name == description(n)) v = s;
    }
    if (!v || fabric.switch_index(*v) < 0)
      throw DiscoveryError(
          fmt::format("switch {} (\"{}\") is not in the fabric the tables are read for", node_id(n), description(n)));
    size_t i = static_cast<size_t>(fabric.switch_index(*v));
    routing.lft[i] = read_switch_lft(port.get(), n, options.timeout_ms);
    seen[i] = true;
  }
  for (size_t i = 0; i < seen.size(); ++i)
    if (!seen[i])
      throw DiscoveryError(
          fmt::format("switch '{}' of the fabric was not found live", fabric.node(fabric.switches()[i]).name));
  return routing;
}

Fabric load_ibnetdisc_cache(const std::string& path, const HostNaming& naming) {
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ParseError(path, 0, fmt::format("cannot open: {}", std::strerror(errno)));
    bytes = read_all(in, path, kMaxIbnetdiscCacheBytes);
  }
  // rdma-core loads from a path: the bytes checked, not the file again,
  // which may have changed since.
  MemoryFile checked(checked_ibnetdisc_cache(std::move(bytes), path), path);
  FabricHandle fabric(ibnd_load_fabric(checked.path().c_str(), 0));
  if (!fabric)
    throw ParseError(path, 0, "not a libibnetdisc cache file: expected one written by 'ibnetdiscover --cache FILE'");
  return convert(fabric.get(), naming, "ibnetdisc-cache:" + path);
}

}  // namespace topo
