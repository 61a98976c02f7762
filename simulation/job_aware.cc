#include "simulation/job_aware.h"

#include <limits>
#include <vector>

#include "common/error.h"
#include "placement/switch_tree.h"
#include "routing/job_routes.h"
#include "routing/ring_floor.h"
#include "simulation/percentile.h"

namespace topo {
namespace {

// Table entries for HCA LIDs that differ between two table sets.
long entries_between(const Fabric& f, const Routing& a, const Routing& b) {
  long n = 0;
  for (size_t s = 0; s < f.switches().size(); ++s)
    for (NodeId hca : f.hcas()) n += a.out_port(s, f.node(hca).lid) != b.out_port(s, f.node(hca).lid);
  return n;
}

// Whether some switch forwards a LID of the job's hosts differently under
// the two table sets: under destination routing, only then do its ring
// flows take other cables.
bool routes_moved(const Fabric& f, const ScheduledJob& job, const Routing& a, const Routing& b) {
  for (NodeId host : job.ring)
    for (NodeId hca : f.hcas_of(host))
      for (size_t s = 0; s < f.switches().size(); ++s)
        if (a.out_port(s, f.node(hca).lid) != b.out_port(s, f.node(hca).lid)) return true;
  return false;
}

// Whether the job's HCAs sit under more than one leaf: the planner changes
// entries for such jobs' LIDs only, and routes no other job's flows.
bool multi_leaf(const PathIndex& paths, const ScheduledJob& job) {
  int leaf = -1;
  for (NodeId h : job.ring) {
    const int host = paths.host_index(h);
    if (host < 0) continue;
    for (const PathIndex::Port& p : paths.ports(host)) {
      if (leaf >= 0 && p.leaf != leaf) return true;
      leaf = p.leaf;
    }
  }
  return false;
}

// The AllReduce jobs slower than figures.slow_above, how many of them a
// leaf's uplinks kept from one flow a cable, and the p95 were the others'
// tables perfect.
void floor_figures(const PolicyOutcome& out, const std::map<std::string, double>& floors, RerouteFigures& figures) {
  std::vector<double> at_floor;
  for (const JobOutcome& j : out.jobs) {
    if (j.profile != Profile::AllReduce || j.cpu_only) continue;
    auto it = floors.find(j.id);
    const bool floored = it != floors.end() && it->second > 1.0 + 1e-9;
    const bool slow = j.allreduce_slowdown > figures.slow_above;
    figures.slow_jobs += slow;
    figures.slow_jobs_floored += slow && floored;
    at_floor.push_back(floored ? j.allreduce_slowdown : 1.0);
  }
  figures.p95_at_floor = nearest_rank(at_floor, 0.95, 1.0);
}

}  // namespace

JobAwareTables::JobAwareTables(const Fabric& fabric, const JobAwareOptions& options)
    : fabric_(std::make_unique<Fabric>(fabric)),
      paths_(std::make_unique<PathIndex>(*fabric_)),
      base_(fabric.routing()),
      options_(options),
      last_plan_(fabric.routing()) {
  if (!base_.is_static())
    throw FabricError("job-aware routing re-plans static tables; the fabric routes " + topo::routing_name(base_));
}

std::string JobAwareTables::routing_name() const {
  return "job-aware:" + (base_.engine.empty() ? std::string("static") : base_.engine);
}

void JobAwareTables::plan(double now, const LiveJudge& live) {
  if (first_event_s_ < 0) first_event_s_ = now;
  figures_.span_s = now - first_event_s_;
  // The plan depends on the running multi-leaf jobs alone: while they are
  // the same, so is the plan (most starts and ends are of jobs within a leaf).
  std::vector<int> jobs;
  for (size_t j = 0; j < live.jobs().size(); ++j)
    if (live.jobs()[j].running && multi_leaf(*paths_, *live.jobs()[j].job)) jobs.push_back(static_cast<int>(j));
  if (jobs == planned_for_) return;
  planned_for_ = jobs;
  std::vector<RingJob> rings;
  for (int j : jobs) rings.push_back(RingJob{live.jobs()[j].job->id, live.jobs()[j].job->ring});
  note_floors(rings);
  Routing planned = planned_tables(rings);
  const long changed = entries_between(*fabric_, last_plan_, planned);
  if (changed == 0) return;  // the tables due already are these
  ++figures_.reroutes;
  figures_.entries_changed += changed;
  last_plan_ = planned;
  due_.emplace_back(now + options_.delay_s, std::move(planned));
}

Routing JobAwareTables::planned_tables(const std::vector<RingJob>& rings) const {
  auto plan = [&] { return plan_job_routes(*fabric_, base_, rings, RoutePlanOptions{options_.max_changes}).routing; };
  return options_.memo ? options_.memo->tables(rings, plan) : plan();
}

void JobAwareTables::note_floors(const std::vector<RingJob>& rings) {
  const std::vector<double> floors = ring_floors(*fabric_, rings);
  for (size_t i = 0; i < rings.size(); ++i) floors_[rings[i].id] = std::max(floors_[rings[i].id], floors[i]);
}

double JobAwareTables::next_hold() const {
  return due_.empty() ? std::numeric_limits<double>::infinity() : due_.front().first;
}

void JobAwareTables::hold(double now, LiveJudge& live) {
  if (due_.empty() || due_.front().first > now) return;
  while (due_.size() > 1 && due_[1].first <= now) due_.pop_front();
  Routing before = fabric_->routing();
  fabric_->set_routing(std::move(due_.front().second));
  due_.pop_front();
  live.retable();
  for (size_t j = 0; j < live.jobs().size(); ++j)
    if (const JudgedJob& r = live.jobs()[j]; r.running && routes_moved(*fabric_, *r.job, before, fabric_->routing()))
      live.reroute(static_cast<int>(j), now);
}

PolicyOutcome judge_job_aware(const Fabric& fabric, const Schedule& schedule, const OutcomeOptions& options,
                              const JobAwareOptions& job_aware, RerouteFigures* figures) {
  JobAwareTables tables(fabric, job_aware);
  PolicyOutcome out = judge(SwitchTree(fabric), schedule, options, &tables);
  out.routing = tables.routing_name();
  if (figures) {
    *figures = tables.figures();
    floor_figures(out, tables.floors(), *figures);
  }
  return out;
}

}  // namespace topo
