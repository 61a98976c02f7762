// Plans kept by the rings they were made for, so that one replay's plans
// serve twice. Under job-aware routing with runs stretched, the replay
// plans the tables at every start and end of a multi-leaf job to know how
// fast the running jobs go; the judge then walks the same starts and ends
// of the finished schedule and needs the same plans for the same running
// rings. Planning is most of a job-aware run's time, so the judge takes
// the replay's plans from here instead of planning again.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fabric/fabric.h"
#include "routing/job_routes.h"

namespace topo {

class PlanMemo {
 public:
  // The tables planned for `rings`, from `plan` the first time these rings
  // (job ids and hosts in ring order) are asked for.
  const Routing& tables(const std::vector<RingJob>& rings, const std::function<Routing()>& plan);

  int plans_made() const { return made_; }
  int plans_reused() const { return reused_; }

 private:
  std::map<std::string, Routing> kept_;
  int made_ = 0, reused_ = 0;
};

}  // namespace topo
