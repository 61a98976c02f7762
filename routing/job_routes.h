// Routes for the jobs that run: new forwarding-table entries for the LIDs of
// the running multi-leaf jobs, so that their ring flows share as few cables
// as the fabric allows.
//
// Under static routing every flow of a ring goes to one destination LID and
// each rank has exactly one predecessor, so a destination-routed table can
// route every ring flow on its own: choosing, for the destination LIDs of a
// running multi-leaf job, the uplink each leaf (and the cable each spine)
// sends them on gives every flow its own cable wherever the leaf has uplinks
// enough (Domke and Hoefler, SC'16, scheduling-aware routing).
//
// The planner starts from base tables (OpenSM's, read or emulated) and
// changes entries only for the destination LIDs of running jobs whose hosts
// sit under more than one leaf; every other LID keeps its base entries, so a
// plan made after a job ended gives that job's LIDs back their base entries.
// It minimises the most flows on any directed cable, then the sum of the
// excess (flows beyond one per cable), a flow on a degraded cable counting
// as many flows as the cable is slower than its tier (a 1x cable of a 4x
// tier: four). Each flow takes one of the shortest up/down paths; a change
// that would leave a switch without a path to the LID, make a loop or a
// down-up turn (the turn that lets up/down routing deadlock) is never made.
// It is deterministic: the same inputs give the same plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabric/fabric.h"

namespace topo {

// A running job as the planner sees it: its hosts in ring order. Rank i
// sends to rank i+1 (and the last to the first), HCA of rail r to HCA of
// rail r.
struct RingJob {
  std::string id;
  std::vector<NodeId> ring;
};

struct RoutePlanOptions {
  // The most table entries a plan may change from the base tables (churn);
  // 0: no limit. Flows are taken in job order, and a flow whose new path
  // would pass the cap keeps its base path.
  int max_changes = 0;
};

// One table entry that differs from the base tables.
struct EntryChange {
  int switch_index = 0;  // position in Fabric::switches()
  uint32_t lid = 0;
  uint8_t base_port = kNoPort;
  uint8_t port = kNoPort;
};

// Flows per directed cable (routing/route.h directed_cable), each weighted
// by how much slower than its tier the cable is.
struct RingLoad {
  double most = 0;        // on the most loaded directed cable
  double excess = 0;      // summed over cables: flows beyond one
  int shared_cables = 0;  // inter-switch directed cables with more than one flow
  bool operator==(const RingLoad&) const = default;
};

struct RoutePlan {
  Routing routing;                   // the base tables with the changes applied
  std::vector<EntryChange> changes;  // by switch, then LID
  std::vector<uint32_t> lids;        // the LIDs planned for (running multi-leaf jobs' HCAs), ascending
  RingLoad before, after;            // the running rings' flows on the base and on the planned tables
  int capped_flows = 0;              // flows left on their base path by max_changes
};

// The plan for `jobs` over `base` (static tables of `fabric`). Throws
// FabricError when `base` is not static or a job names a host the fabric
// does not have.
RoutePlan plan_job_routes(const Fabric& fabric, const Routing& base, const std::vector<RingJob>& jobs,
                          const RoutePlanOptions& options = {});

// The running rings' flows on the tables `routing` (flows whose walk fails
// count nowhere).
RingLoad ring_load(const Fabric& fabric, const Routing& routing, const std::vector<RingJob>& jobs);

// What is wrong with the way `routing` reaches one destination LID.
struct TurnFault {
  enum class Kind : uint8_t { NoPath, Loop, DownUp } kind = Kind::NoPath;
  int switch_index = 0;  // the switch where the walk failed, or where the down-up turn is
  uint32_t lid = 0;
};
std::string describe(const Fabric& fabric, const TurnFault& fault);

// Every switch's walk to the HCA with `lid` reaches it without a loop, and
// no switch sends the LID up after receiving it from above (a down-up turn:
// a switch that some higher switch sends the LID down to, whose own entry
// sends it up again). Up and down go by switch height (Node::height). An
// empty result is a deadlock-free, complete route to the LID.
std::vector<TurnFault> check_destination(const Fabric& fabric, const Routing& routing, uint32_t lid);
// check_destination for every HCA LID of the fabric.
std::vector<TurnFault> check_up_down(const Fabric& fabric, const Routing& routing);

}  // namespace topo
