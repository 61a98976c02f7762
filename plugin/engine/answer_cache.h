// The answers to the last few distinct rank questions. Slurm asks the same
// question many times: every scheduling pass evaluates each pending job
// again, backfill plans it again, and jobs of one shape queue together, so
// while neither the offered nodes nor the running jobs' traffic change the
// search would give the same candidates again. A question is the job's
// shape and request and the free GPUs per fabric host; the answers are
// dropped whenever the map, the config or the running traffic changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "placement/search.h"

namespace topo::engine {

struct Question {
  uint32_t hosts = 0, gpus_per_host = 0, max_leaves = 0;
  int candidates = 1;  // how many the search keeps
  bool one_pod = false;
  uint32_t segment = 0;  // hosts per segment inside one NVLink domain; 0: none
  bool nvlink = true;    // false for a job without GPUs: outside the domains first
  Profile profile = Profile::AllReduce;
  std::vector<int> free_gpus;  // by fabric NodeId
  bool operator==(const Question&) const = default;
};

// The request a question asks the search.
PlacementRequest request_of(const Question& q);

// The search runs without its reasons in words (most answers are never
// recorded); a recorded placement's are worded then, from the question and
// the tree the search ran on, which the answer keeps alive.
struct Answer {
  Question question;
  std::vector<Placement> placements;     // feasible ones, best first, without reasons
  std::string no_placement;              // why, when there are none
  bool only_choice = false;              // the offered hosts were exactly the job's: no other candidate exists
  std::shared_ptr<const Fabric> fabric;  // what `tree` reads
  std::shared_ptr<const SwitchTree> tree;
};

// The reasons in words of one of a searched answer's placements (none for
// an only choice: nothing was searched).
std::vector<std::string> reasons_of(const Answer& a, const Placement& p);

class Answers {
 public:
  static constexpr size_t kKept = 16;
  std::shared_ptr<const Answer> find(const Question& q) const {
    for (const auto& a : kept_)
      if (a->question == q) return a;
    return nullptr;
  }
  void add(std::shared_ptr<const Answer> a) {
    if (kept_.size() == kKept) kept_.erase(kept_.begin());
    kept_.push_back(std::move(a));
  }
  void clear() { kept_.clear(); }

 private:
  std::vector<std::shared_ptr<const Answer>> kept_;  // oldest first
};

// What a rank call keeps for record(): the answer it gave (shared with the
// engine's answers to recent questions).
struct RankingDetail {
  std::shared_ptr<const Answer> answer;
  std::optional<int64_t> snapshot_id;
  Profile profile = Profile::AllReduce;  // the question's; worded only when recorded
};

// What a question is searched on: the tree (and the fabric it reads) of
// the current snapshot, the running traffic's FreeMap with the question's
// free GPUs, the config's weights and the tree's seam routes.
struct SearchGround {
  std::shared_ptr<const Fabric> fabric;
  std::shared_ptr<const SwitchTree> tree;
  const FreeMap& free;
  const Weights& weights;
  SeamRoutes* routes;
};

// The candidates for a question not asked since the traffic last changed
// (`usable`: the offered hosts that can take the job). When they are
// exactly as many as it needs there is one choice: it is scored and
// ringed, not searched for.
std::shared_ptr<const Answer> answer_question(const SearchGround& ground, const Question& q, size_t usable);

}  // namespace topo::engine
