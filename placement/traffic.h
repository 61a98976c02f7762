// What running jobs put on the fabric, in the two forms placement reads:
// Gb/s per cable (what the comm_model subtracts from a cable's room, and
// tier 3 of the objective reads on a leaf's uplinks), and, under static
// routing, flows per directed switch-to-switch cable (what the seam search
// keeps a new job's cross-leaf flows off).
//
// A job's collectives follow its profile (profile_requests). Its load on a
// cable is each collective's ring demand (comm_model/ring_demand.h: the
// bytes one run puts there over the time that run takes alone, times the
// duty), the job's duty shared evenly between the profile's collectives.
// Its flows are its host-to-host flows routed through the tables, one per
// rail (each GPU's traffic leaves by the HCA of its rail and lands on the
// same rail), also times its duty: a ring edge is one flow, an AllToAll
// sends 1/(n-1) of a flow to each other host.
#pragma once

#include <span>
#include <utility>
#include <vector>

#include "comm_model/estimate.h"
#include "placement/request.h"
#include "placement/switch_tree.h"

namespace topo {

// The collectives a profile runs, in its ring order, at `bytes` each:
// AllReduce; AllGather and ReduceScatter (FSDP); AllToAll; Broadcast down
// the chain of stages (pipeline: each stage sends the whole buffer to the
// next, the same flows as point-to-point activations); AllReduce and
// AllToAll (Mixed); none for None.
std::vector<Request> profile_requests(Profile profile, double bytes, int gpus_per_host);

// Whether the profile's traffic runs around (or along) the ring order, so
// that where its seams fall matters: every profile but AllToAll and None.
bool follows_ring(Profile profile);

// The directed switch-to-switch cables (routing/route.h directed_cable) the
// flows from host `from` to host `to` cross under the fabric's static
// tables, one flow per rail both hosts have, appended to `out`. Hosts' own
// cables are left out: no other job shares them. A route the tables do not
// complete adds the cables it reached. Rails pair up as the hosts' ports
// do in the PathIndex (Active ports, by rail).
void switch_cables(const PathIndex& paths, NodeId from, NodeId to, std::vector<int>& out);

// One running job's traffic: (directed cable, Gb/s) and (directed cable,
// flows), each sorted by cable. Flows stay empty under adaptive routing.
// Throws like estimate() for a ring the fabric cannot carry.
struct JobTraffic {
  std::vector<std::pair<int, double>> gbps;
  std::vector<std::pair<int, double>> flows;
};
JobTraffic job_traffic(const SwitchTree& tree, const RunningJob& job, double bytes = kMessageBytes);

// Running jobs' traffic summed, kept as jobs start and end.
class TrafficMap {
 public:
  explicit TrafficMap(const Fabric& fabric);
  void add(const JobTraffic& job) { apply(job, +1); }
  void remove(const JobTraffic& job) { apply(job, -1); }
  // Writes the sums into free.load and free.cable_flows (free.running is
  // left to the caller).
  void write(const Fabric& fabric, FreeMap& free) const;

 private:
  void apply(const JobTraffic& job, double sign);
  std::vector<double> gbps_, flows_;
};

// Fills free.load and free.cable_flows from free.running: what `topoctl
// place --running` and the plugin need once per decision.
void fill_traffic(const SwitchTree& tree, FreeMap& free);

}  // namespace topo
