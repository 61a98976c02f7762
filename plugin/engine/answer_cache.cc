#include "plugin/engine/answer_cache.h"

#include <utility>

#include <fmt/format.h>

namespace topo::engine {

PlacementRequest request_of(const Question& q) {
  PlacementRequest request;
  request.hosts = static_cast<int>(q.hosts);
  request.gpus_per_host = static_cast<int>(q.gpus_per_host);
  request.profile = q.profile;
  if (q.max_leaves) request.max_leaves = static_cast<int>(q.max_leaves);
  request.one_pod = q.one_pod;
  request.segment = static_cast<int>(q.segment);
  request.nvlink = q.nvlink;
  return request;
}

std::vector<std::string> reasons_of(const Answer& a, const Placement& p) {
  if (a.only_choice) return {};
  FreeMap free;  // the search read no more of it than the free GPUs
  free.free_gpus = a.question.free_gpus;
  return placement_reasons(*a.tree, free, request_of(a.question), p);
}

namespace {

// The hosts that can take the job, when they are exactly as many as it
// needs; else none. A job with segments is always searched: exactly
// enough hosts may still split a segment across NVLink domains.
std::vector<NodeId> only_choice(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request,
                                const Question& q, size_t usable) {
  std::vector<NodeId> only;
  if (usable == q.hosts && q.segment == 0)
    for (NodeId h = 0; h < free.free_gpus.size(); ++h)
      if (free.free_gpus[h] >= request.gpus_per_host && eligible(tree, free, request, h)) only.push_back(h);
  if (only.size() != q.hosts) only.clear();
  return only;
}

void search(const SearchGround& g, const PlacementRequest& request, const Question& q, Answer& answer) {
  SearchOptions options;
  options.weights = g.weights;
  options.with_reasons = false;  // worded for the one recorded (reasons_of); an infeasible one still says why
  std::string why;
  for (Placement& p : rank_placements(*g.tree, g.free, request, q.candidates, options, g.routes)) {
    if (p.feasible)
      answer.placements.push_back(std::move(p));
    else if (why.empty() && !p.reasons.empty())
      why = p.reasons.front();
  }
  if (answer.placements.empty())
    answer.no_placement =
        fmt::format("no placement of {} hosts fits the fabric's limits{}{}", q.hosts, why.empty() ? "" : ": ", why);
}

}  // namespace

std::shared_ptr<const Answer> answer_question(const SearchGround& g, const Question& q, size_t usable) {
  const PlacementRequest request = request_of(q);
  auto answer = std::make_shared<Answer>();
  answer->question = q;
  answer->fabric = g.fabric;
  answer->tree = g.tree;
  std::vector<NodeId> only = only_choice(*g.tree, g.free, request, q, usable);
  if (only.empty()) {
    search(g, request, q, *answer);
    return answer;
  }
  answer->only_choice = true;
  Placement p = make_placement(*g.tree, g.free, request, std::move(only), g.weights);
  if (within_limits(p, request))
    answer->placements.push_back(std::move(p));
  else
    answer->no_placement = fmt::format("the only {} hosts that fit break the request's limits", q.hosts);
  return answer;
}

}  // namespace topo::engine
