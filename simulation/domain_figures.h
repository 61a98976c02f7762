// What a schedule did to a fabric's NVLink domains (fabric/nvlink_domain.h):
// how many stayed entirely free for large jobs, how many segments were
// split across domains, where CPU-only jobs went. Pure functions of the
// schedule, so the simulator's replays and a real cluster's schedules
// (`topoctl score`) are counted alike.
#pragma once

#include "fabric/fabric.h"
#include "simulation/schedule.h"

namespace topo {

struct DomainFigures {
  int domains = 0;  // 0: the fabric has none, and nothing below is counted
  // After each job's start (a placement decision; jobs that start at the
  // same moment each count, in start order, after the jobs ending then have
  // ended): the domains none of whose hosts runs a job, and the most free
  // hosts in one domain.
  int decisions = 0;
  double mean_free_whole_domains = 0;
  int min_free_whole_domains = 0;
  double mean_largest_free_block = 0;
  // Jobs that asked for segments, their segments, and those split: a
  // segment whose hosts are not all in one domain.
  int segmented_jobs = 0;
  long segments = 0;
  long segments_split = 0;
  // CPU-only jobs, and those holding hosts of a domain.
  int cpu_only_jobs = 0;
  int cpu_only_jobs_in_domains = 0;
};

// The job's segments (every `segment` consecutive hosts of its ring; a
// shorter rest counts as one) that are not all in one domain; 0 for a job
// without segments.
int segments_split(const Fabric& fabric, const ScheduledJob& job);

DomainFigures domain_figures(const Fabric& fabric, const Schedule& schedule);

}  // namespace topo
