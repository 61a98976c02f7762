// What is on the links: other jobs' traffic, and the bytes a collective
// itself puts on each directed cable (the room left for it: sharing.h).
//
// Cables are full duplex, so everything here is per direction. Hosts of an
// allocation are numbered by their position in it (0..N-1) and their ports
// as PathIndex::ports() lists them.
#pragma once

#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "comm_model/paths.h"
#include "comm_model/routes.h"

namespace topo {

// Traffic that running jobs already put on cables, in Gb/s, as the scheduler
// or a monitoring source reports it. Cables are named by their dense id
// (Link::id), so entries come in the fabric's cable order.
class BackgroundLoad {
 public:
  // `gbps` in each direction of cable `cable` (Link::id). Throws
  // std::invalid_argument for a negative or non-finite rate.
  void add(int cable, double gbps);
  // `gbps` in the direction leaving `from`, which must be one end of the cable.
  void add(const Fabric& fabric, LinkId cable, NodeId from, double gbps);

  struct Entry {
    double from_a_gbps = 0;  // leaving Link::end_a
    double from_b_gbps = 0;  // leaving Link::end_b
  };
  // (cable id, entry), ordered by cable id. Kept flat: a scheduler walks
  // all of them once a decision (hundreds on a busy 512-host fabric), and
  // its writer adds them in cable order, each an append.
  std::span<const std::pair<int, Entry>> entries() const { return entries_; }
  // The entry of cable `cable` (Link::id); nullptr when nothing loads it.
  const Entry* find(int cable) const;
  bool empty() const { return entries_.empty(); }

 private:
  Entry& at(int cable);  // found or inserted in order
  std::vector<std::pair<int, Entry>> entries_;
};

// The bytes a traffic pattern puts on each directed cable, routed as the
// fabric routes (routes.h): along the forwarding tables under static
// routing, spread evenly over the equal up/down paths under adaptive. What
// a scheduler reads to know which cables a job loads, and how heavily.
class LinkLoad {
 public:
  // Nothing yet on the allocation `hosts` (host indices, PathIndex::host_index).
  LinkLoad(const PathIndex& index, std::span<const int> hosts);
  // A whole traffic pattern (traffic.h) of allocation `al`.
  LinkLoad(const PathIndex& index, const Allocation& al, Traffic traffic);

  // `bytes` from port `from_port` of allocation host `from` to port
  // `to_port` of allocation host `to` (different hosts). Throws FabricError,
  // naming both hosts, when the fabric cannot carry it: no up/down path, or
  // tables that lead nowhere.
  void add(int from, int from_port, int to, int to_port, double bytes);

  // The most switches any added flow passes; 0 before any.
  int max_switches() const { return routed().max_switches; }

  // Bytes on a cable in the direction leaving `from`; 0 for a cable no flow
  // takes.
  double bytes_on(LinkId cable, NodeId from) const;
  // (directed cable, bytes) for every directed cable that carries some,
  // ordered by cable (routing/route.h directed_cable).
  std::span<const std::pair<int, double>> cables() const { return routed().bytes; }

 private:
  const CableLoad& routed() const;

  const PathIndex* index_;
  Allocation al_;
  Traffic traffic_;
  // Routed when first read after an add(): a pattern's flows are routed
  // together, a leaf and receiving port once.
  mutable std::optional<CableLoad> load_;
};

}  // namespace topo
