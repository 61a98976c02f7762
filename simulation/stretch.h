// How a slow placement lengthens a job's run in the replay: the trace's run
// time is the job's run on an ideal placement; the part of each step spent
// waiting on communication (its profile's share) runs `slowdown` times
// longer, the rest (computation, and communication hidden behind it) does
// not:
//   run = trace_run * ((1 - share) + share * slowdown).
// The replay applies it piece by piece as a job's slowdown changes with its
// neighbours (simulation/replay.h), so a job that runs longer holds its
// hosts longer and the jobs queued behind it wait longer.
//
// The share is the exposed (not overlapped) communication of a step, not
// the duty (ScheduledJob::duty, --comm-duty): a job loads its cables for
// longer than it waits on them, because frameworks overlap collectives with
// computation.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "placement/request.h"

namespace topo {

// Each profile's default share; see stretch.cc for the published step-time
// breakdowns behind each one.
double default_comm_share(Profile p);

struct Stretch {
  bool on = false;                                   // off: every job runs as long as the trace says
  std::array<double, std::size(kProfiles)> share{};  // by Profile's value

  double share_of(Profile p) const { return share[static_cast<size_t>(p)]; }
  // What a run lasts over the trace's, at this slowdown; 1 when off, and
  // when the slowdown is not finite (a full cable: no pace to stretch by).
  double factor(Profile p, double slowdown) const;
};

// Every profile at its default share.
Stretch default_stretch();

// --comm-share: "0.3" (every profile) or "allreduce=0.3,alltoall=0.5"
// (those profiles; the others keep `base`'s), each share in [0, 1]. A share
// of 0 for every profile turns the stretch off. Throws
// std::invalid_argument naming the bad item.
Stretch parse_comm_shares(std::string_view text, Stretch base = default_stretch());

// "allreduce=0.30,alltoall=0.50,...", or "off": for reports.
std::string stretch_text(const Stretch& s);

}  // namespace topo
