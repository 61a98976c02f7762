// Other jobs on the fabric: their flows as traffic that competes with a
// collective for the cables it crosses.
//
// Every job, the estimated one and each neighbour, runs its collective as
// a set of flows (its ring edges, its tree edges, its point-to-point pairs),
// routed as the fabric routes (paths.h): one path per flow under static
// tables, an even spread under adaptive routing. A cable that several flows
// cross is shared per FLOW, max-min fair, as InfiniBand switches arbitrate
// per input port and not per job: a job with four flows on a trunk gets four
// shares of it, a job with one flow one share. A job's flows advance
// together (a ring step waits for its slowest edge), so a job runs at the
// pace its most squeezed flow allows, and what its other flows would have
// taken beyond that pace is left to the others.
//
// A neighbour flow asks at most its demand: the bytes it moves in one run of
// its collective over the time that run takes alone, times its duty (the
// share of its time the job spends in collectives; a job that computes half
// of the time loads its cables half as much on average). The estimated job
// asks as much as it can get.
//
// Sharing is solved by progressive filling: all jobs' flow rates rise
// together; a cable saturates when its flows fill its room (line rate times
// network efficiency, less any BackgroundLoad); every job with a flow on a
// saturated cable stops there, a neighbour also stops at its demand.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "comm_model/estimate.h"

namespace topo {

struct NeighbourJob {
  std::vector<NodeId> ring;  // its hosts, in ring order
  Request request;           // its collective and size; it runs the algorithm an estimate alone picks
  double duty = 1;           // share of its time in collectives, in (0, 1]
  // How it is estimated when its own way differs from the job judged
  // beside it (a ring AllReduce judged beside an AllToAll); none: the
  // options the caller passes for all.
  std::optional<ModelOptions> options = std::nullopt;
};

class Neighbours {
 public:
  explicit Neighbours(const PathIndex& index);

  // Routes the job's flows once, and estimates it alone for its demand.
  // Throws like estimate() for a bad ring or request, std::invalid_argument
  // for a duty outside (0, 1]. A job of fewer than two hosts loads nothing
  // and is kept only in size().
  void add(const NeighbourJob& job, const ModelOptions& options = {});

  size_t size() const { return jobs_.size(); }
  bool empty() const { return jobs_.empty(); }
  const PathIndex& index() const { return *index_; }

  // A neighbour as the sharing sees it: flows per directed cable (dense id,
  // routing/route.h directed_cable; fractional under adaptive spread) and
  // the rate one of its flows asks for, in Gb/s; and its estimate alone,
  // which that rate rests on.
  struct Job {
    std::vector<std::pair<int, double>> flows;  // (load key, flows), by key (routes.h)
    double demand_gbps = 0;
    Estimate alone;
  };
  std::span<const Job> jobs() const { return jobs_; }

 private:
  const PathIndex* index_;
  std::vector<Job> jobs_;
};

// The collective on `hosts` while the neighbours run theirs. With no
// neighbours, the same as estimate() alone. Throws like estimate().
Estimate estimate(const PathIndex& index, std::span<const NodeId> hosts, const Request& request,
                  const Neighbours& neighbours, const ModelOptions& options = {});

// Job `j` of `all` (added as `job`) with every other job of `all` as its
// neighbours. Throws like estimate().
Estimate estimate_among(const Neighbours& all, size_t j, const NeighbourJob& job, const ModelOptions& options = {});

// Every job judged with all the others as its neighbours (its own duty only
// matters to the others): what a judge of a busy fabric needs. Routes each
// job once. Throws like Neighbours::add().
std::vector<Estimate> estimate_each(const PathIndex& index, std::span<const NeighbourJob> jobs,
                                    const ModelOptions& options = {});

}  // namespace topo
