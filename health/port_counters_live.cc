// The live read of port counters (port_counters.h): performance MADs
// through libibmad over a libibnetdisc walk. Built only with live
// discovery (TOPO_LIVE_DISCOVERY); port_counters_live_off.cc stands in
// without it.
#include <algorithm>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <infiniband/mad.h>

#include "discovery/ibnetdisc_walk.h"
#include "health/port_counters.h"

namespace topo {

namespace {

using namespace ibnd_walk;

struct MadPort {
  void operator()(ibmad_port* p) const { mad_rpc_close_port(p); }
};

struct Target {
  const ibnd_node_t* node;
  int port;
  uint16_t lid;  // the LID the performance agent answers on
};

// A switch's agent answers on its port 0's LID for every port; a CA's on
// the LID of the port asked about.
uint16_t agent_lid(const ibnd_node_t* n, int port) {
  if (n->type == IB_NODE_SWITCH)
    return static_cast<uint16_t>(n->ports && n->ports[0] ? n->ports[0]->base_lid : n->smalid);
  return static_cast<uint16_t>(n->ports[port]->base_lid);
}

std::vector<Target> targets(const ibnd_fabric_t* f) {
  std::vector<Target> out;
  for (const ibnd_node_t* n = f->nodes; n; n = n->next) {
    if ((n->type != IB_NODE_SWITCH && n->type != IB_NODE_CA) || !n->ports) continue;
    for (int p = 1; p <= n->numports; ++p)
      if (is_cabled(n->ports[p])) out.push_back({n, p, agent_lid(n, p)});
  }
  return out;
}

bool read_basic(ibmad_port* src, ib_portid_t& id, int port, int timeout, PortCounters& c) {
  uint8_t buf[1024] = {};
  if (!pma_query_via(buf, &id, port, static_cast<unsigned>(timeout), IB_GSI_PORT_COUNTERS, src)) return false;
  auto field = [&](MAD_FIELDS f) {
    uint32_t v = 0;
    mad_decode_field(buf, f, &v);
    return static_cast<uint64_t>(v);
  };
  c.symbol_errors = field(IB_PC_ERR_SYM_F);
  c.link_recoveries = field(IB_PC_LINK_RECOVERS_F);
  c.link_downed = field(IB_PC_LINK_DOWNED_F);
  c.rcv_errors = field(IB_PC_ERR_RCV_F);
  c.xmit_discards = field(IB_PC_XMT_DISCARDS_F);
  c.xmit_wait = field(IB_PC_XMT_WAIT_F);
  c.xmit_data = field(IB_PC_XMT_BYTES_F);
  c.rcv_data = field(IB_PC_RCV_BYTES_F);
  c.xmit_packets = field(IB_PC_XMT_PKTS_F);
  c.rcv_packets = field(IB_PC_RCV_PKTS_F);
  return true;
}

// The optional 64-bit data counters; an agent without them leaves `c` as is.
void read_extended(ibmad_port* src, ib_portid_t& id, int port, int timeout, PortCounters& c) {
  uint8_t buf[1024] = {};
  if (!pma_query_via(buf, &id, port, static_cast<unsigned>(timeout), IB_GSI_PORT_COUNTERS_EXT, src)) return;
  auto field = [&](MAD_FIELDS f) {
    uint64_t v = 0;
    mad_decode_field(buf, f, &v);
    return v;
  };
  c.xmit_data = field(IB_PC_EXT_XMT_BYTES_F);
  c.rcv_data = field(IB_PC_EXT_RCV_BYTES_F);
  c.xmit_packets = field(IB_PC_EXT_XMT_PKTS_F);
  c.rcv_packets = field(IB_PC_EXT_RCV_PKTS_F);
  c.extended = true;
}

}  // namespace

PortCounterRead read_port_counters_live(const IbnetdiscOptions& options, const PortProgress& progress) {
  std::string ca;
  FabricHandle fabric = discover_handle(options, ca);
  std::vector<char> ca_name(ca.begin(), ca.end());
  ca_name.push_back('\0');
  int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS, IB_SA_CLASS, IB_PERFORMANCE_CLASS};
  std::unique_ptr<ibmad_port, MadPort> src(mad_rpc_open_port(ca_name.data(), options.ca_port, classes, 4));
  if (!src) throw DiscoveryError(fmt::format("cannot open a MAD port on {} port {}", ca, options.ca_port));

  std::vector<Target> todo = targets(fabric.get());
  PortCounterRead out;
  out.samples.reserve(todo.size());
  for (size_t i = 0; i < todo.size(); ++i) {
    const Target& t = todo[i];
    PortCounters c;
    ib_portid_t id{};
    ib_portid_set(&id, t.lid, 0, 0);
    if (t.lid == 0 || !read_basic(src.get(), id, t.port, options.timeout_ms, c)) {
      out.unanswered.push_back(fmt::format("{}:{}", description(t.node), t.port));
    } else {
      read_extended(src.get(), id, t.port, options.timeout_ms, c);
      out.samples.push_back({vertex_id(t.node, t.port), t.port, c});
    }
    if (progress) progress(i + 1, todo.size());
  }
  if (out.samples.empty() && !todo.empty())
    throw DiscoveryError(
        fmt::format("none of the {} ports answered PortCounters (first: {}): has a subnet manager assigned LIDs?",
                    todo.size(), out.unanswered.front()));
  return out;
}

}  // namespace topo
