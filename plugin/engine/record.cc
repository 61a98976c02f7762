// topo_engine_record: a job starts, on the engine's candidate or on
// Slurm's own choice; its ring order and NCCL settings, its record for the
// database, and its traffic from then on. And the ring and hints the
// shims ask for a job placed without a ranking.
#include <algorithm>
#include <memory>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "plugin/engine/deferral.h"
#include "plugin/engine/engine_calls.h"
#include "plugin/engine/engine_error.h"
#include "plugin/engine/nccl_hints.h"

namespace topo::engine {

namespace {

// The ranking's detail, when `chosen` is one of its candidates (or -1: none).
const RankingDetail* detail_of(const topo_engine_ranking* ranking, long chosen) {
  const RankingDetail* detail = ranking ? static_cast<const RankingDetail*>(ranking->detail) : nullptr;
  if (chosen >= 0 && (!detail || static_cast<size_t>(chosen) >= detail->answer->placements.size()))
    throw EngineError(TOPO_ENGINE_INVALID, fmt::format("topo_engine_record: no candidate {}", chosen));
  return detail;
}

// The chosen candidate's ring (node indices fixed at rank time, whatever
// snapshot is current now), then any node Slurm added outside it; the
// record gets what the search said of it (its reasons in words later, on
// the writer's thread: wording them costs more than the decision).
std::vector<size_t> chosen_ring(const topo_engine_candidate& c, const RankingDetail& detail, long chosen,
                                const size_t* allocated, size_t allocated_count, PlacementRecord& r) {
  std::vector<size_t> ring;
  std::set<size_t> in_job(allocated, allocated + allocated_count);
  for (size_t i = 0; i < c.count; ++i)
    if (in_job.erase(c.nodes[i])) ring.push_back(c.nodes[i]);
  for (size_t i = 0; i < allocated_count; ++i)
    if (in_job.erase(allocated[i])) ring.push_back(allocated[i]);
  const Placement& p = detail.answer->placements[static_cast<size_t>(chosen)];
  r.snapshot_id = detail.snapshot_id;
  r.estimate_s = p.score.estimate_s;
  r.ideal_s = p.score.ideal_s;
  return ring;
}

// NCCL_IB_HCA for the allocated nodes, malloc'd, or nullptr.
char* hcas_text(const Engine& e, const NodeMap& map, const size_t* allocated, size_t allocated_count) {
  std::vector<std::optional<NodeId>> hosts;
  for (size_t i = 0; i < allocated_count; ++i) hosts.push_back(map.host_of(allocated[i]));
  std::string hcas = job_hcas(*e.fabric, hosts);
  return hcas.empty() ? nullptr : copy_out(hcas);
}

// The record to the writer, which words the chosen placement's reasons
// (when there is one), journals and stores it later, off the caller's
// thread. A database that refuses them is said once per new reason, not
// for every record while it lasts.
void submit(Engine& e, PlacementRecord r, std::shared_ptr<const Answer> answer, long chosen) {
  if (!e.writer) e.open_database();
  e.writer->submit_later(std::move(r), [answer = std::move(answer), chosen](PlacementRecord& later) {
    if (answer) later.reasons = reasons_of(*answer, answer->placements[static_cast<size_t>(chosen)]);
    for (std::string& reason : later.reasons)
      for (char& c : reason)
        if (c == '\n') c = ' ';
  });
  std::optional<std::string> why = e.writer->last_error();
  if (why != e.reported_writer_error) {
    e.reported_writer_error = why;
    if (why)
      throw EngineError(TOPO_ENGINE_DATABASE,
                        fmt::format("placement queued; storing it in the database waits: {}", *why));
  }
}

// The ring the job runs on and its running entry: the chosen candidate's
// ring, or for Slurm's own choice the best ring over its nodes.
RunningEntry running_entry(Engine& e, const NodeMap* map, const topo_engine_job& job, const RankingDetail* detail,
                           const topo_engine_ranking* ranking, long chosen, const size_t* allocated,
                           size_t allocated_count, PlacementRecord& r) {
  RunningEntry entry;
  if (chosen >= 0)
    entry.ring = chosen_ring(ranking->candidates[chosen], *detail, chosen, allocated, allocated_count, r);
  else
    entry.ring = ring_of_nodes(e.tree.get(), map, allocated, allocated_count);
  entry.profile = detail ? detail->profile : profile_of(e.config, job.request);
  entry.gpus_per_host = static_cast<int>(std::max<uint32_t>(job.gpus_per_node, 1));
  return entry;
}

}  // namespace

void record(Engine& e, const topo_engine_job& job, const topo_engine_ranking* ranking, long chosen,
            const size_t* allocated, size_t allocated_count, const char* fallback_why, char** ring_order,
            char** nccl_ib_hca) {
  std::string held_back = starts(e, job.job_id);
  const RankingDetail* detail = detail_of(ranking, chosen);
  PlacementRecord r;
  r.job_id = job.job_id;
  r.deferred_why = std::move(held_back);
  r.hosts = e.nodes.names_of(allocated, allocated_count);
  r.profile = std::string(name(detail ? detail->profile : profile_of(e.config, job.request)));
  const NodeMap* map = e.map_if_any();
  RunningEntry entry = running_entry(e, map, job, detail, ranking, chosen, allocated, allocated_count, r);
  if (chosen < 0) {
    r.fallback = true;
    r.fallback_why = fallback_why ? fallback_why : "";
    if (map) r.snapshot_id = e.snapshot_id;
  }
  r.ring_order = e.nodes.names_of(entry.ring.data(), entry.ring.size());
  e.start_running(job.job_id, std::move(entry), map);

  *ring_order = copy_out(fmt::format("{}", fmt::join(r.ring_order, ",")));
  if (nccl_ib_hca && map) *nccl_ib_hca = hcas_text(e, *map, allocated, allocated_count);
  submit(e, std::move(r), chosen >= 0 ? detail->answer : nullptr, chosen);
}

void job_started(Engine& e, const topo_engine_job& job, const topo_engine_ranking* ranking, long chosen,
                 const size_t* allocated, size_t allocated_count) {
  const RankingDetail* detail = detail_of(ranking, chosen);
  PlacementRecord unused;
  const NodeMap* map = e.map_if_any();
  e.start_running(job.job_id, running_entry(e, map, job, detail, ranking, chosen, allocated, allocated_count, unused),
                  map);
}

char* ring_text(Engine& e, const size_t* nodes, size_t count) {
  const NodeMap* map = e.map_if_any();
  std::vector<size_t> ring = ring_of_nodes(e.tree.get(), map, nodes, count);
  return copy_out(fmt::format("{}", fmt::join(e.nodes.names_of(ring.data(), ring.size()), ",")));
}

char* hints_text(Engine& e, const size_t* nodes, size_t count) {
  // The leaves of the hosts the fabric knows: two or more, and the ring
  // crosses leaves whatever the others are. Only ECMP routing's QP hint
  // reads them (every successful evaluation asks: the others skip it).
  std::set<int> leaves;
  Routing adaptive;
  const NodeMap* map = e.map_if_any();
  const Routing& routing = map ? e.fabric->routing() : adaptive;
  for (size_t i = 0; map && routing.is_ecmp() && i < count; ++i)
    if (nodes[i] < map->host.size() && map->host[nodes[i]])
      if (int leaf = e.tree->home_leaf(*map->host[nodes[i]]); leaf >= 0) leaves.insert(leaf);
  NcclHints h = nccl_hints(e.config.nccl, routing, static_cast<int>(leaves.size()));
  if (h.empty()) return nullptr;
  std::string text;
  for (const auto& [name, value] : h) text += (text.empty() ? "" : "\n") + name + "=" + value;
  return copy_out(text);
}

}  // namespace topo::engine
