#include "simulation/live_judge.h"

#include <algorithm>
#include <set>
#include <span>

#include "comm_model/domain_flows.h"
#include "comm_model/neighbours.h"
#include "comm_model/ring_steps.h"
#include "placement/ring_order.h"
#include "placement/traffic.h"
#include "simulation/domain_judge.h"

namespace topo {
namespace {

// The judge runs NCCL's ring (Simple protocol) for every collective a ring
// carries, as the placement's seams assume; AllToAll as NCCL does.
// Under ECMP, `qps` (when above 0) is the job's own queue pairs per
// connection.
ModelOptions judged(const Request& r, int qps) {
  ModelOptions o;
  if (r.collective != Collective::AllToAll) o.algorithm = Algorithm::Ring;
  o.protocol = Protocol::Simple;
  o.ecmp_qps = qps;
  return o;
}

// The queue pairs per connection a job runs with under ECMP: the hint's
// when its ring crosses leaves (the hint only ever raises them), else 0
// (the fabric's).
int job_qps(const Routing& routing, const JobOutcome& o, const OutcomeOptions& options) {
  if (!routing.is_ecmp() || options.ecmp_qps_hint <= 0 || o.spine_ring_edges == 0) return 0;
  return std::max(options.ecmp_qps_hint, routing.qps);
}

// The switches above the leaves that a job's directed cables touch.
int spines_touched(const Fabric& fabric, std::span<const int> cables) {
  std::set<NodeId> above_leaves;
  for (int c : cables) {
    const Link& l = fabric.link(fabric.cables()[c / 2]);
    for (NodeId sw : {static_cast<NodeId>(l.end_a), static_cast<NodeId>(l.end_b)})
      if (fabric.node(sw).kind == NodeKind::Switch && fabric.node(sw).level != Level::Leaf) above_leaves.insert(sw);
  }
  return static_cast<int>(above_leaves.size());
}

// The jobs running on each directed cable, by index into the running jobs.
using CableUsers = std::vector<std::vector<int>>;

// Judges job `self` again beside every running job with a flow on one of
// its cables: per-flow max-min among them (their own neighbours beyond are
// left out). Its slowdown so far is first weighted up to `now`.
void rejudge(std::vector<JudgedJob>& running, int self, double now, const CableUsers& users, const PathIndex& paths,
             const OutcomeOptions& options) {
  JudgedJob& r = running[self];
  r.weighted += r.slowdown * (now - r.since);
  r.since = now;
  std::vector<int> sharing;
  for (int c : r.cables)
    for (int j : users[c])
      if (j != self) sharing.push_back(j);
  std::sort(sharing.begin(), sharing.end());
  sharing.erase(std::unique(sharing.begin(), sharing.end()), sharing.end());
  if (sharing == r.sharing) return;
  r.sharing = sharing;
  if (sharing.empty()) {
    r.slowdown = r.alone_slowdown;
    return;
  }
  double time_s = 0;
  if (options.sharing == Sharing::Steps) {
    std::vector<NeighbourJob> near;
    for (int j : sharing) near.insert(near.end(), running[j].as_neighbour.begin(), running[j].as_neighbour.end());
    for (const Request& q : r.requests)
      time_s += estimate_by_steps(paths, r.job->ring, q, near, judged(q, r.qps)).time_s;
  } else {
    Neighbours others(paths);
    for (int j : sharing)
      for (const NeighbourJob& n : running[j].as_neighbour) others.add(n);
    for (const Request& q : r.requests) time_s += estimate(paths, r.job->ring, q, others, judged(q, r.qps)).time_s;
  }
  r.slowdown = (time_s + r.segments_s) / r.ideal_s;
}

// Every running job joined to `seed` through cables they share, however
// far: what the per-flow sharing of one of them depends on. Marks them
// with `moment` in `stamp`.
std::vector<int> component_of(int seed, const std::vector<JudgedJob>& running, const CableUsers& users,
                              std::vector<int>& stamp, int moment) {
  std::vector<int> members{seed};
  stamp[seed] = moment;
  for (size_t i = 0; i < members.size(); ++i)
    for (int c : running[members[i]].cables)
      for (int j : users[c])
        if (stamp[j] != moment) {
          stamp[j] = moment;
          members.push_back(j);
        }
  return members;
}

// Judges the jobs of one component again, all at once, sharing per flow
// (comm_model/ring_steps.h). Their slowdowns so far are first weighted up
// to `now`.
void rejudge_flows(std::vector<JudgedJob>& running, const std::vector<int>& members, double now, const PathIndex& paths,
                   const OutcomeOptions& options) {
  for (int j : members) {
    JudgedJob& r = running[j];
    r.weighted += r.slowdown * (now - r.since);
    r.since = now;
    r.slowdown = r.alone_slowdown;
  }
  if (members.size() < 2) return;
  std::vector<const FlowJob*> all;
  for (int j : members)
    for (const FlowJob& f : running[j].flow_jobs) all.push_back(&f);
  const std::vector<Estimate> shared =
      share_by_flows_with_domains(paths, all, judged({}, 0).network_efficiency, options.step_rings);
  size_t at = 0;
  for (int j : members) {
    JudgedJob& r = running[j];
    double time_s = 0;
    for (size_t k = 0; k < r.flow_jobs.size(); ++k) time_s += shared[at++].time_s;
    r.slowdown = time_s / r.ideal_s;
  }
}

}  // namespace

JobOutcome shape_of(const SwitchTree& tree, const ScheduledJob& job) {
  JobOutcome o;
  o.id = job.id;
  o.gpus = job.gpus;
  o.hosts = static_cast<int>(job.ring.size());
  for (NodeId h : job.ring) o.ring.push_back(tree.fabric().node(h).name);
  o.wait_s = job.start_s - job.submit_s;
  o.free_hosts_at_start = job.free_hosts_at_start;
  std::set<int> leaves, pods;
  for (NodeId h : job.ring) {
    int leaf = tree.home_leaf(h);
    if (leaf < 0) continue;
    leaves.insert(leaf);
    pods.insert(tree.leaves()[leaf].pod);
  }
  o.leaves = static_cast<int>(leaves.size());
  o.pods = static_cast<int>(pods.size());
  if (job.ring.size() > 1) {
    RingCrossings c = ring_crossings(tree, job.ring);
    o.spine_ring_edges = c.spine_edges;
    o.pod_ring_edges = c.pod_edges;
  }
  return o;
}

bool has_collectives(const ScheduledJob& job, const OutcomeOptions& options) {
  return job.ring.size() > 1 && !profile_requests(job.profile, options.message_bytes, 1).empty();
}

void route_collectives(const PathIndex& paths, JudgedJob& r, const OutcomeOptions& options) {
  if (!paths.fabric().domains().empty()) return route_on_domains(paths, r, options);
  r.ideal_s = 0;
  r.flow_jobs.clear();
  r.cables.clear();
  double alone_s = 0;
  Neighbours self(paths);
  for (size_t k = 0; k < r.requests.size(); ++k) {
    const Request& q = r.requests[k];
    Estimate alone = estimate(paths, r.job->ring, q, {}, judged(q, r.qps));
    r.ideal_s += alone.ideal_time_s;
    alone_s += alone.time_s;
    self.add(r.as_neighbour[k], judged(q, r.qps));
    if (options.sharing == Sharing::Flows) r.flow_jobs.push_back(flow_job(paths, r.as_neighbour[k], judged(q, r.qps)));
  }
  for (const Neighbours::Job& j : self.jobs())
    for (auto [key, flows] : j.flows) paths.for_each_cable(key, [&r](int c) { r.cables.push_back(c); });
  std::sort(r.cables.begin(), r.cables.end());
  r.cables.erase(std::unique(r.cables.begin(), r.cables.end()), r.cables.end());
  r.alone_slowdown = r.ideal_s > 0 ? alone_s / r.ideal_s : 1;
}

JudgedJob measure_alone(const PathIndex& paths, const ScheduledJob& job, JobOutcome& o, size_t outcome,
                        const OutcomeOptions& options) {
  JudgedJob r;
  r.job = &job;
  r.outcome = outcome;
  r.qps = job_qps(paths.fabric().routing(), o, options);
  int per_host = job.host_gpus.empty() ? 1 : *std::min_element(job.host_gpus.begin(), job.host_gpus.end());
  per_host = std::max(per_host, 1);
  r.requests = profile_requests(o.profile, options.message_bytes, per_host);
  for (const Request& q : r.requests)
    r.as_neighbour.push_back(NeighbourJob{
        job.ring, q, std::clamp(job.duty, 1e-6, 1.0) / static_cast<double>(r.requests.size()), judged(q, r.qps)});
  route_collectives(paths, r, options);
  r.slowdown = o.allreduce_alone_slowdown = r.alone_slowdown;
  o.spines = spines_touched(paths.fabric(), r.cables);

  Request a2a{Collective::AllToAll, options.message_bytes, Dtype::Bf16, per_host};
  ModelOptions a2a_options;
  a2a_options.ecmp_qps = r.qps;
  if (!paths.fabric().domains().empty()) {
    o.alltoall_slowdown = alltoall_slowdown_on_domains(paths, job, a2a, a2a_options);
    return r;
  }
  Estimate all = estimate(paths, job.ring, a2a, BackgroundLoad(), a2a_options);
  o.alltoall_slowdown = all.time_s / all.ideal_time_s;
  return r;
}

ModelOptions judged_options(const Request& request, int qps) { return judged(request, qps); }

LiveJudge::LiveJudge(const PathIndex& paths, const OutcomeOptions& options)
    : paths_(paths), options_(options), users_(2 * paths.fabric().cables().size()) {}

int LiveJudge::add(JudgedJob job) {
  job.tables = tables_;  // measured on the tables in force
  jobs_.push_back(std::move(job));
  stamp_.push_back(-1);
  return static_cast<int>(jobs_.size()) - 1;
}

void LiveJudge::start(int j, double now) {
  JudgedJob& r = jobs_[j];
  if (r.tables != tables_) {
    route_collectives(paths_, r, options_);
    r.tables = tables_;
  }
  r.since = now;
  r.slowdown = r.alone_slowdown;
  r.sharing.clear();
  r.running = true;
  for (int c : r.cables) {
    users_[c].push_back(j);
    touched_.push_back(c);
  }
}

void LiveJudge::end(int j, double now) {
  JudgedJob& r = jobs_[j];
  r.weighted += r.slowdown * (now - r.since);
  r.since = now;
  r.running = false;
  for (int c : r.cables) {
    std::erase(users_[c], j);
    touched_.push_back(c);
  }
}

// Its run so far at the old routes, then a fresh start on the new ones.
void LiveJudge::reroute(int j, double now) {
  end(j, now);
  start(j, now);
}

std::vector<int> LiveJudge::settle(double now) {
  std::sort(touched_.begin(), touched_.end());
  touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
  std::vector<int> judged;
  for (int c : touched_)
    for (size_t u = 0; u < users_[c].size(); ++u) {
      const int j = users_[c][u];
      if (stamp_[j] == moment_) continue;
      if (options_.sharing == Sharing::Flows) {
        std::vector<int> members = component_of(j, jobs_, users_, stamp_, moment_);
        rejudge_flows(jobs_, members, now, paths_, options_);
        judged.insert(judged.end(), members.begin(), members.end());
        continue;
      }
      stamp_[j] = moment_;
      rejudge(jobs_, j, now, users_, paths_, options_);
      judged.push_back(j);
    }
  touched_.clear();
  ++moment_;
  return judged;
}

}  // namespace topo
