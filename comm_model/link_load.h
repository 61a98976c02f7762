// What is on the links: other jobs' traffic, the room left for a collective,
// and the bytes the collective itself puts on each directed cable.
//
// Cables are full duplex, so everything here is per direction. Hosts of an
// allocation are numbered by their position in it (0..N-1) and their ports
// as PathIndex::ports() lists them.
#pragma once

#include <map>
#include <span>
#include <vector>

#include "comm_model/paths.h"

namespace topo {

// Traffic that running jobs already put on cables, in Gb/s, as the scheduler
// or a monitoring source reports it.
class BackgroundLoad {
 public:
  // `gbps` in each direction of the cable. Throws std::invalid_argument for a
  // negative or non-finite rate.
  void add(LinkId cable, double gbps);
  // `gbps` in the direction leaving `from`, which must be one end of the cable.
  void add(const Fabric& fabric, LinkId cable, NodeId from, double gbps);

  struct Entry {
    double from_a_gbps = 0;  // leaving Link::end_a
    double from_b_gbps = 0;  // leaving Link::end_b
  };
  const std::map<LinkId, Entry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

 private:
  std::map<LinkId, Entry> entries_;
};

// Gb/s left for one collective on each directed cable an allocation can use:
// the line rate times the network efficiency (what a NIC delivers of it),
// less the background load. A trunk spreads evenly, so it takes as much as
// its cable count times its tightest cable.
class LinkCapacity {
 public:
  LinkCapacity(const PathIndex& index, std::span<const int> hosts, const BackgroundLoad& background,
               double efficiency);

  double trunk_gbps(int trunk) const { return trunk_gbps_[trunk]; }
  // The cable of the trunk with the least room, by position in Trunk::cables.
  int tightest_cable(int trunk) const { return tightest_[trunk]; }
  // Port `port` of allocation host `host`, towards the leaf and from it.
  double port_up_gbps(int host, int port) const { return port_up_[offset_[host] + port]; }
  double port_down_gbps(int host, int port) const { return port_down_[offset_[host] + port]; }

 private:
  std::vector<double> trunk_gbps_;
  std::vector<int> tightest_;
  std::vector<int> offset_;
  std::vector<double> port_up_, port_down_;
};

// The bytes one traffic pattern of a collective puts on each directed cable.
// Flows between hosts are added port to port; those between leaves are
// gathered and spread over the switches once per leaf pair, when first read.
class LinkLoad {
 public:
  LinkLoad(const PathIndex& index, std::span<const int> hosts);

  // `bytes` from port `from_port` of allocation host `from` to port
  // `to_port` of allocation host `to` (different hosts).
  void add(int from, int from_port, int to, int to_port, double bytes);

  // The two halves of add(), for patterns that sum many flows in closed
  // form (AllToAll): bytes on a host's own cable, and bytes from leaf to leaf
  // (indices into PathIndex::leaves()). Throws FabricError when b cannot be
  // reached from a.
  void add_port(int host, int port, double up_bytes, double down_bytes);
  void add_between_leaves(int leaf_a, int leaf_b, double bytes);

  // The most switches any added flow passes; 0 before any.
  int max_switches() const { return max_switches_; }

  // Bytes on a cable in the direction leaving `from`; 0 for cables outside
  // the allocation's reach.
  double bytes_on(LinkId cable, NodeId from) const;

  // Bytes on each trunk, indexed like PathIndex::trunks(), in total over
  // its cables.
  std::span<const double> trunk_bytes() const {
    settle();
    return trunk_bytes_;
  }
  // The directed cable that takes longest to carry its bytes at `capacity`.
  // With `ports_only`, switch-to-switch cables are left out: the ideal
  // fabric, where only the hosts' own cables limit.
  struct Peak {
    bool found = false;
    double seconds = 0;  // +inf when a loaded cable has no room left
    LinkId cable;
    NodeId from = 0;     // traffic leaves this end
    double bytes = 0;    // on that one cable
    double gbps = 0;     // room on that one cable
  };
  Peak peak(const LinkCapacity& capacity, bool ports_only = false) const;

 private:
  void settle() const;

  const PathIndex* index_;
  std::vector<int> hosts_;
  std::vector<int> offset_;
  std::vector<double> port_up_, port_down_;
  int max_switches_ = 0;
  struct Pending {
    int leaf_a, leaf_b;
    double bytes;
  };
  // Filled by add(), spread lazily: a ring of 1,024 hosts has few leaf pairs.
  mutable std::vector<Pending> pending_;
  mutable std::vector<double> trunk_bytes_;
};

}  // namespace topo
