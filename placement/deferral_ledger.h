// What a scheduler keeps between passes to apply a DeferRule
// (placement/defer.h): when each job it held back was first held back, and
// each request's best slowdown on the idle fabric. The trace replay keys
// jobs by trace job, the Slurm engine by job id; both key the idle
// slowdowns on the whole request.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <map>
#include <unordered_map>

#include "placement/request.h"
#include "placement/search.h"

namespace topo {

// When each deferred job was first deferred: a job's share of its time
// limit counts from then (placement/defer.h says why). When to forget a
// job (it started, it was cancelled) is the caller's to say.
template <class Key>
class DeferralLedger {
 public:
  // Whether `key` was deferred and not forgotten since.
  bool deferred(const Key& key) const { return first_.count(key) > 0; }

  // How long `key` has been deferred at `now_s`: 0 when it never was.
  double deferred_s(const Key& key, double now_s) const {
    auto it = first_.find(key);
    return it == first_.end() ? 0 : std::max(0.0, now_s - it->second);
  }

  // `key` was deferred at `now_s`; kept only if it is its first deferral.
  void note(const Key& key, double now_s) { first_.try_emplace(key, now_s); }

  void forget(const Key& key) { first_.erase(key); }

  // Forgets the jobs first deferred more than `age_s` before `now_s`.
  void forget_older_than(double now_s, double age_s) {
    std::erase_if(first_, [&](const auto& entry) { return now_s - entry.second > age_s; });
  }

  // How many jobs it holds: the jobs deferred at least once, until forgotten.
  size_t size() const { return first_.size(); }

 private:
  std::unordered_map<Key, double> first_;  // when each was first deferred
};

// Each request's best estimated slowdown on the idle fabric, what no wait
// can beat (placement/defer.h): a search, run once per distinct request.
// The caller clears it when what that search reads changes (the fabric,
// its hosts, the objective's weights).
class IdleSlowdowns {
 public:
  // The slowdown of `best_on_idle()`, searched the first time `request`
  // is asked; 1 when it is infeasible or has no estimate.
  double of(const PlacementRequest& request, const std::function<Placement()>& best_on_idle);
  void clear() { of_.clear(); }

 private:
  std::map<PlacementRequest, double> of_;
};

}  // namespace topo
