// The judge's state as jobs start and end: every running multi-host job's
// collectives, the directed cables they load, and its slowdown beside the
// jobs sharing them, judged again only when a job sharing one of its cables
// starts or ends. judge() (outcome.h) walks a finished schedule's starts and
// ends through it; the replay (replay.h) walks its own as it schedules, to
// stretch runs by their slowdowns while they run.
#pragma once

#include <vector>

#include "comm_model/estimate.h"
#include "simulation/outcome.h"

namespace topo {

// A multi-host job while it is judged.
struct JudgedJob {
  // The job: its ring, host GPUs and duty are read while it is judged, so
  // it must outlive this.
  const ScheduledJob* job = nullptr;
  size_t outcome = 0;                      // index into PolicyOutcome::jobs (or the caller's own)
  std::vector<Request> requests;           // its profile's collectives
  std::vector<NeighbourJob> as_neighbour;  // the same, as others see it (duty split evenly)
  std::vector<FlowJob> flow_jobs;          // the same, routed for the per-flow sharing (Sharing::Flows)
  std::vector<int> cables;                 // directed cables its flows cross, sorted
  int qps = 0;                             // under ECMP: its QPs per connection, 0 the fabric's
  double ideal_s = 0;                      // summed over its collectives
  double alone_slowdown = 1;
  double segments_s = 0;     // its segments' tensor-parallel time alone (domain_judge.h), 0 without
  std::vector<int> sharing;  // the neighbours it was last judged with
  double slowdown = 1;       // now
  double weighted = 0;       // slowdown x seconds, so far
  double since = 0;          // when `slowdown` took effect
  bool running = false;      // started and not yet ended
  int tables = 0;            // the LiveJudge::retable() count its routes were measured at
};

// The options the judge estimates a collective with: NCCL's ring (Simple
// protocol) for every collective a ring carries, AllToAll as NCCL runs it;
// under ECMP, `qps` (when above 0) is the job's own queue pairs per
// connection.
ModelOptions judged_options(const Request& request, int qps);

// The structure of one allocation: leaves, pods and ring edges.
JobOutcome shape_of(const SwitchTree& tree, const ScheduledJob& job);

// Whether a job is judged by its collectives: several hosts, and a profile
// that has some.
bool has_collectives(const ScheduledJob& job, const OutcomeOptions& options);

// A job with collectives, alone on the fabric: its collectives, the cables
// they load, what they cost it; `o`'s alone figures are set (`o` is
// shape_of's, with the job's profile).
JudgedJob measure_alone(const PathIndex& paths, const ScheduledJob& job, JobOutcome& o, size_t outcome,
                        const OutcomeOptions& options);

// The job's collectives routed as `paths`' fabric routes now: their flows,
// the cables they cross, their ideal and alone times. Its requests and
// as_neighbour stay as they are: they do not depend on the routes.
void route_collectives(const PathIndex& paths, JudgedJob& r, const OutcomeOptions& options);

class LiveJudge {
 public:
  LiveJudge(const PathIndex& paths, const OutcomeOptions& options);

  // A job to judge, not yet running; its index.
  int add(JudgedJob job);
  void start(int j, double now);
  void end(int j, double now);
  // Judges again every running job that shares a cable with one started or
  // ended since the last call (all of them at once, as of `now`); returns
  // them.
  std::vector<int> settle(double now);

  // The tables of the fabric the judge's PathIndex reads changed at `now`
  // (job-aware routing, simulation/job_aware.h): `reroute` the running
  // jobs whose routes they change; jobs added and not yet running are
  // routed again when they start. The next settle() judges them again.
  void retable() { ++tables_; }
  void reroute(int j, double now);

  const JudgedJob& job(int j) const { return jobs_[j]; }
  const std::vector<JudgedJob>& jobs() const { return jobs_; }

 private:
  const PathIndex& paths_;
  OutcomeOptions options_;
  std::vector<JudgedJob> jobs_;
  std::vector<std::vector<int>> users_;  // the running jobs on each directed cable
  std::vector<int> stamp_;               // the last moment each job was judged in
  std::vector<int> touched_;             // cables a job started or ended on since the last settle
  int moment_ = 0;
  int tables_ = 0;  // retable() calls so far
};

}  // namespace topo
