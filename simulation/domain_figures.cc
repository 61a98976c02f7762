#include "simulation/domain_figures.h"

#include <algorithm>
#include <vector>

namespace topo {
namespace {

int domain_of(const Fabric& f, NodeId host) { return f.domains().domain_of(f.index().host_id(host)); }

struct Change {
  double at;
  bool start;
  size_t job;
};

// Every start and end in time order, ends first at equal times, starts in
// schedule order (the order the scheduler made them).
std::vector<Change> changes_of(const Schedule& schedule) {
  std::vector<Change> out;
  out.reserve(schedule.jobs.size() * 2);
  for (size_t i = 0; i < schedule.jobs.size(); ++i) {
    out.push_back({schedule.jobs[i].start_s, true, i});
    out.push_back({schedule.jobs[i].end_s, false, i});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Change& a, const Change& b) { return a.at != b.at ? a.at < b.at : a.start < b.start; });
  return out;
}

// Busy hosts per domain as jobs start and end, and the figures after each start.
class DomainOccupancy {
 public:
  explicit DomainOccupancy(const Fabric& f) : f_(f), jobs_on_(f.node_count(), 0) {
    const NvlinkDomains& d = f.domains();
    for (size_t i = 0; i < d.count(); ++i) size_.push_back(static_cast<int>(d.hosts(static_cast<int>(i)).size()));
    busy_.assign(size_.size(), 0);
    free_whole_ = static_cast<int>(size_.size());
  }

  void apply(const ScheduledJob& job, bool start) {
    for (NodeId h : job.ring) {
      int& n = jobs_on_[h];
      const bool was_free = n == 0;
      n += start ? 1 : -1;
      if (was_free == (n == 0)) continue;
      if (int d = domain_of(f_, h); d >= 0) {
        if (busy_[d] == 0) --free_whole_;
        busy_[d] += start ? 1 : -1;
        if (busy_[d] == 0) ++free_whole_;
      }
    }
  }

  int free_whole() const { return free_whole_; }
  int largest_free_block() const {
    int most = 0;
    for (size_t d = 0; d < size_.size(); ++d) most = std::max(most, size_[d] - busy_[d]);
    return most;
  }

 private:
  const Fabric& f_;
  std::vector<int> jobs_on_;  // by NodeId
  std::vector<int> size_, busy_;
  int free_whole_ = 0;
};

void count_decisions(const Fabric& f, const Schedule& schedule, DomainFigures& out) {
  DomainOccupancy occupancy(f);
  double free_sum = 0, block_sum = 0;
  out.min_free_whole_domains = out.domains;
  for (const Change& c : changes_of(schedule)) {
    occupancy.apply(schedule.jobs[c.job], c.start);
    if (!c.start) continue;
    ++out.decisions;
    free_sum += occupancy.free_whole();
    block_sum += occupancy.largest_free_block();
    out.min_free_whole_domains = std::min(out.min_free_whole_domains, occupancy.free_whole());
  }
  if (out.decisions > 0) {
    out.mean_free_whole_domains = free_sum / out.decisions;
    out.mean_largest_free_block = block_sum / out.decisions;
  }
}

}  // namespace

int segments_split(const Fabric& f, const ScheduledJob& job) {
  if (job.segment <= 0) return 0;
  int split = 0;
  for (size_t first = 0; first < job.ring.size(); first += job.segment) {
    size_t last = std::min(job.ring.size(), first + job.segment);
    int d = domain_of(f, job.ring[first]);
    bool whole = d >= 0;
    for (size_t i = first + 1; i < last && whole; ++i) whole = domain_of(f, job.ring[i]) == d;
    split += !whole;
  }
  return split;
}

DomainFigures domain_figures(const Fabric& f, const Schedule& schedule) {
  DomainFigures out;
  out.domains = static_cast<int>(f.domains().count());
  if (out.domains == 0) return out;
  count_decisions(f, schedule, out);
  for (const ScheduledJob& job : schedule.jobs) {
    if (job.segment > 0) {
      ++out.segmented_jobs;
      out.segments += (static_cast<long>(job.ring.size()) + job.segment - 1) / job.segment;
      out.segments_split += segments_split(f, job);
    }
    if (job.cpu_only) {
      ++out.cpu_only_jobs;
      out.cpu_only_jobs_in_domains +=
          std::any_of(job.ring.begin(), job.ring.end(), [&](NodeId h) { return domain_of(f, h) >= 0; });
    }
  }
  return out;
}

}  // namespace topo
