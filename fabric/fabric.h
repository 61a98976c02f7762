// The fabric: hosts, their HCAs, switches and the links between them.
//
// A Fabric is a Boost.Graph undirected graph. Vertices are hosts, HCAs (one
// vertex per HCA port that is cabled) and switches; edges are either cables
// (HCA-switch, switch-switch) with a width, speed and state, or the
// attachment of an HCA to its host inside the chassis.
//
// Fabrics are built with FabricBuilder and are classified when built: every
// switch knows its level (leaf / spine / core), pod and oversubscription,
// every HCA its rail, every cable its tier and whether it is degraded. The
// classification is derived from the shape of the graph, never from names.
// After finish() the graph is immutable; only per-host GPU affinity (from
// hwloc, which arrives later than the fabric) may be attached.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "common/host_naming.h"
#include "fabric/fabric_index.h"
#include "fabric/link_rate.h"
#include "fabric/routing.h"

namespace topo {

enum class NodeKind : uint8_t { Host, Hca, Switch };

// Switch level, by distance from the hosts: a leaf has HCAs cabled to it,
// a spine is one switch hop above the nearest leaf, core two or more.
enum class Level : uint8_t { Leaf, Spine, Core, Unknown };

// The layer a cable runs between; links of one tier are expected to be alike.
enum class Tier : uint8_t { HostLeaf, LeafSpine, SpineCore, Other };

// A GPU inside a host and the HCA closest to it on the PCIe tree (from hwloc).
struct Gpu {
  int index = 0;            // as CUDA_VISIBLE_DEVICES / Slurm GRES count them
  std::string name;         // hwloc OS device name, e.g. "cuda0" or "nvidia0"
  std::string pci_bus;      // "0000:17:00.0"
  int numa = -1;            // NUMA node, -1 when unknown
  std::string closest_hca;  // "mlx5_3"; empty when no HCA shares its tree
  int rail = -1;            // rail of that HCA; -1 when unknown
};

struct Node {
  NodeKind kind = NodeKind::Switch;
  std::string id;    // unique within the fabric ("S-0002c90300000001" or a name)
  std::string name;  // switch name, host name, or HCA description "gpu017 mlx5_3"
  uint64_t guid = 0;
  int ports = 0;

  // HCA: the host it sits in, its device ("mlx5_3") and rail index.
  std::string host;
  std::string device;
  int rail = -1;

  // Switch (its port 0) and HCA port: the LID the subnet manager gave it;
  // 0 when unknown. A fabric whose source carries no LIDs gets them numbered
  // by finish() (see FabricBuilder), so routing always has one per port.
  uint32_t lid = 0;

  // Switch classification. height: switch hops above the nearest leaf over
  // cables of any state, 0 for a leaf, -1 where no leaf reaches (and for
  // hosts and HCAs); level is its summary. The topology.conf writer lists
  // switches by height, so a five-stage tree keeps its five levels there.
  Level level = Level::Unknown;
  int height = -1;
  int pod = -1;
  double down_gbps = 0;  // towards the hosts
  double up_gbps = 0;    // towards the core

  // Host: its GPUs, when hwloc data was attached.
  std::vector<Gpu> gpus;

  // down:up, e.g. 2.0 for a 2:1 leaf; 0 for a switch with no uplinks.
  double oversubscription() const { return up_gbps > 0 ? down_gbps / up_gbps : 0; }
};

enum class LinkKind : uint8_t { Cable, Attachment };

struct Link {
  LinkKind kind = LinkKind::Cable;
  // Cables: the dense cable id, the position in Fabric::cables(); -1 for
  // attachments. Per-cable tables everywhere are indexed by it.
  int id = -1;
  // The two ends. Boost reports an undirected edge's source as whichever end
  // it was reached from, so the ends are recorded here, not inferred.
  size_t end_a = 0;
  size_t end_b = 0;
  int port_a = 0;
  int port_b = 0;
  LinkRate rate;
  PortState state = PortState::Active;

  // Classification.
  Tier tier = Tier::Other;
  LinkRate expected;         // the usual rate of this tier
  bool degraded = false;     // narrower or slower than `expected`, or marked by mark_degraded()
  std::string degraded_why;  // set by mark_degraded(): which counter, how high

  double gbps() const { return state == PortState::Active ? rate.gbps() : 0; }
};

using FabricGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, Node, Link>;
using NodeId = FabricGraph::vertex_descriptor;
using LinkId = FabricGraph::edge_descriptor;

enum class FaultKind : uint8_t {
  DegradedLink,     // narrower or slower than the tier's usual link
  InactiveLink,     // cabled but not Active
  MissingUplinks,   // fewer uplinks than the other switches of its level
  UnequalUplinks,   // uplinks spread unevenly over the switches above
  UnreachableHost,  // no path to the rest of the fabric
  IsolatedSwitch,   // a switch no host can reach
  // NVLink domains (nvlink_domain.h); such a host counts outside its domain.
  NvlinkFabricState,     // a GPU's fabric state not completed, or its status a failure
  NvlinkDisagreement,    // a host whose GPUs name different domains
  NvlinkDomainTooLarge,  // more hosts or GPUs than the hardware allows
};

struct Fault {
  FaultKind kind;
  std::string subject;  // switch, host or "a:port <-> b:port"
  std::string detail;   // a sentence for the admin
};

std::string_view name(NodeKind k);
std::string_view name(Level l);
std::string_view name(Tier t);
std::string_view name(FaultKind k);
std::optional<Level> parse_level(std::string_view text);

// Whole-fabric facts from the classification.
struct FabricSummary {
  int hosts = 0;
  int hcas = 0;
  int leaves = 0;
  int spines = 0;
  int cores = 0;
  int links = 0;  // cables
  int pods = 0;
  int rails = 0;                // distinct HCA indices seen on hosts
  bool rail_optimized = false;  // every leaf carries a single rail
};

class Fabric {
 public:
  Fabric() : graph_(std::make_unique<FabricGraph>()) {}
  // A copy re-derives cables(): an edge descriptor points into its own
  // graph's edge list, which Boost copies node by node. A move hands over
  // the graph itself, which lives on the heap so that its descriptors stay
  // valid (Boost's graph has no move: moving it would copy it, and a
  // snapshot's fabric moves several times on its way out of a reader). A
  // moved-from fabric is empty.
  Fabric(const Fabric& other) { *this = other; }
  Fabric(Fabric&& other) noexcept { *this = std::move(other); }
  Fabric& operator=(const Fabric& other);
  Fabric& operator=(Fabric&& other) noexcept;

  const FabricGraph& graph() const { return *graph_; }
  const Node& node(NodeId v) const { return (*graph_)[v]; }
  const Link& link(LinkId e) const { return (*graph_)[e]; }
  size_t node_count() const { return boost::num_vertices(*graph_); }

  std::optional<NodeId> find(std::string_view id) const;
  std::optional<NodeId> find_host(std::string_view host) const;

  // Vertices by kind, in the order they were added.
  std::span<const NodeId> hosts() const { return hosts_; }
  std::span<const NodeId> hcas() const { return hcas_; }
  std::span<const NodeId> switches() const { return switches_; }

  // Hosts by dense id, each host's ports and leaf, cable ends, LIDs: the
  // dense tables every layer looks these up in (fabric_index.h).
  const FabricIndex& index() const { return index_; }

  // Cables (not attachments) by dense id: cables()[link(e).id] == e.
  std::span<const LinkId> cables() const { return cables_; }
  // The cable on a port of a switch or HCA; nullopt when none is cabled.
  std::optional<LinkId> cable_at(NodeId node, int port) const;
  // The switch or HCA port with this LID; nullopt when none has it.
  std::optional<NodeId> node_by_lid(uint32_t lid) const;
  // The position of a switch in switches(), or -1 for any other node.
  int switch_index(NodeId node) const { return node < switch_index_.size() ? switch_index_[node] : -1; }

  // How the fabric forwards (routing.h). Adaptive unless tables were read
  // or emulated and set; set_routing() checks that `routing` fits this
  // fabric (one table per switch) and throws FabricError otherwise.
  const Routing& routing() const { return routing_; }
  void set_routing(Routing routing);
  std::vector<NodeId> switches_at(Level level) const;

  // The HCAs of a host, by rail; the switches its HCAs are cabled to,
  // whatever the cables' state (FabricIndex::switches_of).
  std::vector<NodeId> hcas_of(NodeId host) const;
  std::vector<NodeId> leaves_of(NodeId host) const;
  // Hosts cabled to a leaf, in the order they were added.
  std::vector<NodeId> hosts_under(NodeId leaf) const;
  // The far end of a link seen from `from`, with the local and remote port.
  NodeId peer(LinkId e, NodeId from) const;
  int local_port(LinkId e, NodeId from) const;

  const FabricSummary& summary() const { return summary_; }
  const std::vector<Fault>& faults() const { return faults_; }
  const HostNaming& naming() const { return naming_; }

  // Where the fabric came from: "ibnetdiscover:/path", "synthetic:spec", ...
  const std::string& source() const { return source_; }
  void set_source(std::string source) { source_ = std::move(source); }

  // A cable whose port counters pass a threshold (health/port_health.h)
  // counts as degraded from then on: placement avoids it as it avoids a
  // slow cable, and faults() lists it as a degraded link with `why`.
  // Throws FabricError for a cable id out of range.
  void mark_degraded(int cable, std::string why);

  // hwloc data arrives per node after discovery.
  void set_gpus(NodeId host, std::vector<Gpu> gpus) { (*graph_)[host].gpus = std::move(gpus); }

  // NVLink domains arrive after discovery too: each host's report, by host
  // id (index()), resolved into index().domains() with `spec`'s bounds;
  // their findings replace the NVLink faults in faults(). Throws
  // FabricError when `reports` does not have one entry per host.
  void set_nvlink(std::vector<HostNvlink> reports, const NvlinkSpec& spec = NvlinkSpec{});
  const NvlinkDomains& domains() const { return index_.domains(); }

 private:
  friend class FabricBuilder;
  friend void classify(Fabric& fabric);

  // Every member but the graph and cables_, copied or moved.
  template <typename Self>
  void assign_values(Self&& other);
  // cables_ from the graph's own edges and their ids: a copied graph's
  // edge descriptors are new, its links' ids the same.
  void index_cables(size_t count);

  std::unique_ptr<FabricGraph> graph_;
  std::unordered_map<std::string, NodeId> by_id_;
  std::unordered_map<std::string, NodeId> host_by_name_;
  std::vector<NodeId> hosts_, hcas_, switches_;
  std::vector<LinkId> cables_;
  std::vector<int> switch_index_;  // by NodeId
  FabricIndex index_;
  Routing routing_;
  FabricSummary summary_;
  std::vector<Fault> faults_;
  HostNaming naming_;
  std::string source_;
};

// The hosts with these names, in order. Throws FabricError naming the names
// that are not hosts of the fabric (the first eight, each quoted within 64
// bytes, and how many more).
std::vector<NodeId> find_hosts(const Fabric& fabric, std::span<const std::string> names);

// Builds a Fabric from what a reader sees: nodes, then cables. Readers that
// see each cable from both ends (ibnetdiscover) may connect it twice; the
// second sighting is checked against the first and dropped.
class FabricBuilder {
 public:
  explicit FabricBuilder(HostNaming naming = HostNaming());

  NodeId add_switch(std::string id, std::string name, int ports = 0, uint64_t guid = 0);
  // The host is derived from the description through the naming pattern and
  // created on first sight; throws FabricError when the pattern does not match.
  NodeId add_hca(std::string id, std::string description, int ports = 1, uint64_t guid = 0);
  // A host with no HCA yet (topology.conf names hosts, not HCAs).
  NodeId add_host(std::string name);

  bool has(std::string_view id) const { return fabric_.find(id).has_value(); }

  // Cables node `a` port `port_a` to node `b` port `port_b`. Throws
  // FabricError for an unknown id or a port already cabled elsewhere.
  void connect(std::string_view a, int port_a, std::string_view b, int port_b, LinkRate rate,
               PortState state = PortState::Active);

  // The LID of a switch (its port 0) or an HCA port, as the source printed it.
  void set_lid(std::string_view id, uint32_t lid);

  // Classifies, indexes and hands over the fabric. When no node was given a
  // LID, every switch and then every HCA port is numbered from 1 in the
  // order added (a subnet manager numbers in discovery order: the values
  // differ from a live subnet's, but only their order matters to the
  // emulated engines). Throws FabricError for a LID given twice.
  Fabric finish() &&;

 private:
  NodeId add_node(Node node);
  // LIDs and cable ids, then the FabricIndex, before classification.
  void index();
  Fabric fabric_;
  // (node, port) -> cable, to merge the two sightings of one cable.
  std::map<std::pair<NodeId, int>, LinkId> port_links_;
};

}  // namespace topo
