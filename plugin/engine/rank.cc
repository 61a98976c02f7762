// topo_engine_rank: the candidates for a job on the nodes Slurm offers,
// from the answers to recent questions or a search, unless DeferAbove=
// holds the job back.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <new>

#include <fmt/format.h>

#include "plugin/engine/deferral.h"
#include "plugin/engine/engine_calls.h"
#include "plugin/engine/engine_error.h"

namespace topo::engine {

namespace {

// What Slurm offered: nodes with free GPUs given, those the fabric knows,
// and those of them with enough free GPUs for the job.
struct Offer {
  size_t offered = 0, known = 0, usable = 0;
};

const NodeMap& map_for_offer(Engine& e, size_t count) {
  const NodeMap& map = e.current_node_map();
  if (count > map.host.size())
    throw EngineError(TOPO_ENGINE_INVALID,
                      fmt::format("topo_engine_rank: {} nodes offered, the node table has {} (call "
                                  "topo_engine_set_nodes when it changes)",
                                  count, map.host.size()));
  return map;
}

// What the search reads of a host's free GPUs for a job of `need` GPUs a
// host: how many, when the host can take the job (best fit orders such
// hosts by them); else only whether it has any (a leaf's free hosts, the
// fragmentation tier). A question keeps no more, so that a job starting or
// ending on hosts that stay partly free elsewhere leaves the answers good.
// On a fabric with NVLink domains the exact count stays: domain_fit counts
// hosts free by their own GPU count, which may be below the job's.
int as_the_search_reads(int gpus, int need, bool domains) {
  if (domains || gpus >= need) return gpus;
  return gpus > 0 ? 1 : 0;
}

// The job's question, in e.question (its vector's room is kept from call
// to call), and what the offer holds for it.
Offer ask(Engine& e, const NodeMap& map, const topo_engine_job& job, const int* free_gpus, size_t count) {
  const int need_gpus = static_cast<int>(std::max<uint32_t>(job.gpus_per_node, 1));
  Question& question = e.question;
  question.hosts = job.nodes;
  question.gpus_per_host = static_cast<uint32_t>(need_gpus);
  question.max_leaves = job.request.max_leaves;
  question.one_pod = job.request.pod;
  question.segment = job.request.segment;
  question.nvlink = job.gpus_per_node > 0;
  question.profile = profile_of(e.config, job.request);
  question.candidates = job.all_candidates ? std::max(1, e.config.candidates) : 1;
  question.free_gpus.assign(e.fabric->node_count(), 0);
  const bool domains = !e.fabric->domains().empty();
  Offer offer;
  for (size_t i = 0; i < count; ++i) {
    if (free_gpus[i] < 0) continue;
    ++offer.offered;
    if (!map.host[i]) continue;
    ++offer.known;
    // A job without GPUs fits any offered host: cons_tres checks cores.
    int gpus = job.gpus_per_node ? free_gpus[i] : 1;
    question.free_gpus[*map.host[i]] = as_the_search_reads(gpus, need_gpus, domains);
    if (gpus >= need_gpus) ++offer.usable;
  }
  return offer;
}

// The answer to e.question: a recent one, or a new search kept for next time.
std::shared_ptr<const Answer> answer(Engine& e, const RunningTraffic& traffic, size_t usable,
                                     topo_engine_ranking& ranking) {
  std::shared_ptr<const Answer> a = e.answers.find(e.question);
  ranking.answered_before = a != nullptr;
  if (!a) {
    SearchGround ground{e.fabric, e.tree, e.free_map_for(traffic, e.question.free_gpus), e.config.weights,
                        e.seam_routes.get()};
    a = answer_question(ground, e.question, usable);
    e.answers.add(a);
  }
  return a;
}

// The answer's placements as Slurm node indices, into `ranking`, which
// owns `detail` from then on.
void write_candidates(const NodeMap& map, std::unique_ptr<RankingDetail> detail, topo_engine_ranking& ranking) {
  const size_t n = detail->answer->placements.size();
  auto* candidates = static_cast<topo_engine_candidate*>(std::calloc(n, sizeof(topo_engine_candidate)));
  if (!candidates) throw std::bad_alloc();
  ranking.candidates = candidates;
  ranking.count = n;
  ranking.detail = detail.release();
  for (size_t c = 0; c < n; ++c) {
    const Placement& p = static_cast<RankingDetail*>(ranking.detail)->answer->placements[c];
    candidates[c].nodes = static_cast<size_t*>(std::calloc(std::max<size_t>(p.hosts.size(), 1), sizeof(size_t)));
    if (!candidates[c].nodes) {
      topo_engine_ranking_free(&ranking);
      throw std::bad_alloc();
    }
    candidates[c].count = p.hosts.size();
    for (size_t h = 0; h < p.hosts.size(); ++h) candidates[c].nodes[h] = map.node[p.hosts[h]];
    candidates[c].score = p.score.total;
    candidates[c].estimate_s = p.score.estimate_s;
    candidates[c].ideal_s = p.score.ideal_s;
  }
}

// Whether a GPU job the search placed nowhere waits for an NVLink domain
// (placement/domain_fit.h): one domain could hold it, none has room now,
// and Slurm's own choice would split it over several.
bool waits_for_domain(const Fabric& fabric, const Question& q) {
  const NvlinkDomains& d = fabric.domains();
  return q.nvlink && q.segment == 0 && !d.empty() && static_cast<int>(q.hosts) <= d.largest();
}

}  // namespace

int rank(Engine& e, const topo_engine_job& job, const int* free_gpus, size_t count, topo_engine_ranking& ranking,
         char* msg, size_t msg_size) {
  const NodeMap& map = map_for_offer(e, count);
  const RunningTraffic& traffic = e.current_traffic(map);
  const Offer offer = ask(e, map, job, free_gpus, count);
  if (offer.known == 0)
    throw EngineError(
        TOPO_ENGINE_NO_FABRIC,
        fmt::format("none of the {} offered nodes is in fabric snapshot {}{}", offer.offered, *e.snapshot_id,
                    map.unknown ? fmt::format(" (first unknown: '{}')", map.first_unknown) : ""));
  if (offer.usable < job.nodes) {
    write_message(msg, msg_size,
                  fmt::format("job {}: {} hosts with {} free GPUs known to the fabric, {} needed", job.job_id,
                              offer.usable, e.question.gpus_per_host, job.nodes));
    return TOPO_ENGINE_NO_PLACEMENT;
  }
  std::shared_ptr<const Answer> a = answer(e, traffic, offer.usable, ranking);
  ranking.more = e.question.candidates < e.config.candidates && !a->only_choice;
  if (a->placements.empty()) {
    write_message(msg, msg_size, fmt::format("job {}: {}", job.job_id, a->no_placement));
    if (!waits_for_domain(*e.fabric, e.question)) return TOPO_ENGINE_NO_PLACEMENT;
    note_held_back(e, job, a->no_placement);
    return TOPO_ENGINE_DEFERRED;
  }
  if (std::string why = deferral(e, map, e.question, job, a->placements.front()); !why.empty()) {
    ranking.more = false;
    write_message(msg, msg_size, fmt::format("job {}: {}", job.job_id, why));
    note_held_back(e, job, std::move(why));
    return TOPO_ENGINE_DEFERRED;
  }
  auto detail = std::make_unique<RankingDetail>();
  detail->snapshot_id = e.snapshot_id;
  detail->profile = e.question.profile;
  detail->answer = std::move(a);
  write_candidates(map, std::move(detail), ranking);
  return TOPO_ENGINE_OK;
}

}  // namespace topo::engine
