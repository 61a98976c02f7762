#include "plugin/slurm/common/slurm_compat.h"

#include <stdio.h>

#include "plugin/slurm/common/shim_common.h"
#include "plugin/slurm/topology_topo_aware/candidates.h"
#include "plugin/slurm/topology_topo_aware/eval.h"
#include "plugin/slurm/topology_topo_aware/pending.h"
#include "plugin/slurm/topology_topo_aware/ring_rank.h"
#include "plugin/slurm/topology_topo_aware/site_plugin.h"
#include "plugin/slurm/topology_topo_aware/writer.h"

/* Slurm's own choice in the ring order its record will have; no ring
 * without an engine (as 22.05's shim). */
static void set_fallback_ring(topo_engine_t *e, job_record_t *job_ptr, bitstr_t *nodes)
{
  char msg[512];
  char *ring = NULL;
  size_t count = 0;
  size_t *idx;
  if (!e) {
    topo_shim_set_ring(job_ptr, NULL, 0, false);
    topo_shim_set_hints(job_ptr, NULL, NULL, 0);
    return;
  }
  idx = xcalloc(bit_set_count(nodes) + 1, sizeof(size_t));
  for (int i = 0; next_node_bitmap(nodes, &i); i++)
    idx[count++] = (size_t)i;
  if (topo_engine_ring(e, idx, count, &ring, msg, sizeof(msg)) == TOPO_ENGINE_OK) {
    topo_shim_set_ring(job_ptr, ring, count, true);
    remember_ring(ring);
    topo_shim_set_hints(job_ptr, e, idx, count);
  } else {
    topo_shim_set_ring(job_ptr, NULL, 0, false);
    topo_shim_set_hints(job_ptr, NULL, NULL, 0);
  }
  free(ring);
  xfree(idx);
}

/* A ring of one host is that host: no engine call (its lock, the map, a
 * string built) for the most common jobs.  False when Slurm chose more. */
static bool set_one_host_ring(topo_engine_t *e, job_record_t *job_ptr, bitstr_t *nodes)
{
  int only = bit_ffs(nodes);
  if (!e || only < 0 || bit_fls(nodes) != only)
    return false;
  topo_shim_set_ring(job_ptr, node_record_table_ptr[only]->name, 1, true);
  return true;
}

/* Ranks host sets for the job among the offered nodes, with the GPUs
 * cons_tres counted free for this job on each.  Too few offered nodes
 * that could take it: said without asking the engine. */
static int rank(topo_engine_t *e, topology_eval_t *ev, struct pending *entry,
                struct topo_shim_timing *spent)
{
  char msg[512];
  int rc;
  uint32_t need = entry->job.gpus_per_node, usable = 0;
  int *free_gpus = topo_shim_free_gpus_take();
  for (int i = 0; i < node_record_count; i++)
    free_gpus[i] = -1;
  for (int i = 0; next_node_bitmap(ev->node_map, &i); i++) {
    if (!can_take_job(ev, i))
      continue;
    free_gpus[i] = ev->avail_res_array[i]->avail_gpus;
    if (!need || free_gpus[i] >= (int)need)
      usable++;
  }
  if (usable < entry->job.nodes) {
    topo_shim_free_gpus_give_back();
    snprintf(entry->why, sizeof(entry->why),
             "job %u: %u offered nodes with %u free GPUs, %u needed", entry->job_id, usable, need,
             entry->job.nodes);
    return TOPO_ENGINE_NO_PLACEMENT;
  }
  topo_shim_engine_nodes(e);
  bool timed = topo_shim_time_engine_cpu();
  uint64_t t0 = topo_shim_now_us(), c0 = timed ? topo_shim_cpu_now_us() : 0;
  rc = topo_engine_rank(e, &entry->job, free_gpus, node_record_count, &entry->ranking, msg,
                        sizeof(msg));
  spent->engine_us += topo_shim_now_us() - t0;
  if (timed) {
    spent->engine_cpu_us += topo_shim_cpu_now_us() - c0;
    spent->engine_cpu_timed++;
  }
  topo_shim_free_gpus_give_back();
  spent->ranked++;
  if (entry->ranking.answered_before)
    spent->reused++;
  if (rc != TOPO_ENGINE_OK)
    snprintf(entry->why, sizeof(entry->why), "%.390s", msg);
  return rc;
}

/* Whether this evaluation may start the job now.  eval_nodes serves
 * test-only (at submission) and backfill's will-run plans too and says
 * not which; those offer nodes with GPUs that are not free now (the idle
 * cluster, the planned future), a start offers none.  Only a start may be
 * deferred (DeferAbove=): a test-only evaluation that failed would refuse
 * the job for good.  A job without GPUs cannot tell them apart: never. */
/* Whether the evaluation counts GPUs on node i that are not free now: a
 * plan of the future (an idle cluster, backfill's will-run). */
static bool counts_busy_gpus(const topology_eval_t *ev, int i)
{
  return can_take_job(ev, i) &&
         ev->avail_res_array[i]->avail_gpus > topo_shim_node_free_gpus(node_record_table_ptr[i]);
}

static bool starts_now(const topology_eval_t *ev, uint32_t gpus_per_node)
{
  if (!gpus_per_node)
    return false;
  for (int i = 0; next_node_bitmap(ev->node_map, &i); i++)
    if (counts_busy_gpus(ev, i))
      return false;
  return true;
}

/* The engine's best candidate first, which Slurm nearly always takes;
 * only when Slurm refuses it are the others ranked (their estimates cost
 * most of a search) and tried. */
static long choose_candidate(topo_engine_t *e, topology_eval_t *ev, struct pending *entry,
                             struct topo_shim_timing *spent)
{
  long chosen = try_candidates(ev, &entry->ranking, spent);
  if (chosen >= 0 || !entry->ranking.more)
    return chosen;
  topo_engine_ranking_free(&entry->ranking);
  entry->job.all_candidates = true;
  if (rank(e, ev, entry, spent) != TOPO_ENGINE_OK)
    return -1;
  return try_candidates(ev, &entry->ranking, spent);
}

/* A new entry for this evaluation of the job. */
static struct pending *new_entry(topology_eval_t *ev, const struct topo_network_request *request,
                                 topo_engine_t *e)
{
  job_record_t *job_ptr = ev->job_ptr;
  struct pending *entry = xmalloc(sizeof(*entry));
  entry->job_id = job_ptr->job_id;
  entry->restarts = job_ptr->restart_cnt;
  entry->chosen = -1;
  entry->job = topo_shim_engine_job(job_ptr, request, ev->min_nodes, ev->max_nodes, ev->req_nodes);
  /* Asked only when deferring is on: it reads every offered node's GPUs. */
  if (!topo_engine_defers(e) || !starts_now(ev, entry->job.gpus_per_node))
    entry->job.time_limit_s = 0; /* never deferred */
  return entry;
}

/* Whether the job could start on the candidate now: an evaluation that
 * counts busy GPUs on one of its nodes plans the future, and Slurm starts
 * no job from it (a start evaluates again).  A job without GPUs cannot
 * tell: always. */
static bool could_start_on(const topology_eval_t *ev, const struct topo_engine_candidate *c,
                           uint32_t gpus_per_node)
{
  if (!gpus_per_node)
    return true;
  for (size_t h = 0; h < c->count; h++) {
    int n = (int)c->nodes[h];
    if (bit_test(ev->node_map, n) && counts_busy_gpus(ev, n))
      return false;
  }
  return true;
}

/* The chosen candidate's ring and hints go to the job, unless the job
 * cannot start on it now (most evaluations of a pending job are
 * backfill's plans: writing the job's environment for each cost more
 * than the engine's answer); its entry waits for the job to start. */
static int take_candidate(topo_engine_t *e, topology_eval_t *ev, struct pending *entry)
{
  const struct topo_engine_candidate *c = &entry->ranking.candidates[entry->chosen];
  if (could_start_on(ev, c, entry->job.gpus_per_node)) {
    char *ring = ring_of(c);
    topo_shim_set_ring(ev->job_ptr, ring, c->count, false);
    remember_ring(ring);
    topo_shim_set_hints(ev->job_ptr, e, c->nodes, c->count);
    xfree(ring);
  }
  entry->nodes = bit_copy(ev->node_map);
  pending_put(entry, ev->job_ptr);
  return SLURM_SUCCESS;
}

/* The site's own choice over every offered node (entry->why says why),
 * with the ring its record will have. */
static int own_choice(topo_engine_t *e, topology_eval_t *ev, struct pending *entry,
                      struct topo_shim_timing *spent)
{
  topo_engine_ranking_free(&entry->ranking);
  uint64_t t0 = topo_shim_now_us();
  int rc = slurms_eval(ev);
  spent->trials++;
  spent->trial_us += topo_shim_now_us() - t0;
  if (rc != SLURM_SUCCESS) {
    pending_free(entry);
    return rc;
  }
  entry->nodes = bit_copy(ev->node_map);
  if (!set_one_host_ring(e, ev->job_ptr, entry->nodes))
    set_fallback_ring(e, ev->job_ptr, entry->nodes);
  pending_put(entry, ev->job_ptr);
  return SLURM_SUCCESS;
}

/* The job waits.  Slurm sets the pending reason itself after a failed
 * evaluation, so the why goes into the AdminComment. */
static int wait_for_better(job_record_t *job_ptr, struct pending *entry, const char *waiting)
{
  char note[500];
  snprintf(note, sizeof(note), "%s: %.400s", waiting, entry->why);
  topo_shim_note(job_ptr, note);
  pending_free(entry);
  return SLURM_ERROR;
}

/* The job waits because Strict= or its segments hold it (`holds` says
 * which). */
static int wait_held(job_record_t *job_ptr, struct pending *entry, const char *holds)
{
  char waiting[40];
  snprintf(waiting, sizeof(waiting), "waiting (%s)", holds);
  return wait_for_better(job_ptr, entry, waiting);
}

int eval_topo_aware(topology_eval_t *ev, const struct topo_network_request *request,
                    struct topo_shim_timing *spent)
{
  topo_engine_t *e = topo_shim_engine();
  struct pending *entry = new_entry(ev, request, e);
  writer_start();
  if (!e) {
    snprintf(entry->why, sizeof(entry->why), "topo_aware.conf could not be read");
    return own_choice(e, ev, entry, spent);
  }
  if (ev->max_nodes == 1) {
    snprintf(entry->why, sizeof(entry->why), "%s", TOPO_SHIM_ONE_HOST);
    return own_choice(e, ev, entry, spent);
  }
  int rc = rank(e, ev, entry, spent);
  /* DeferAbove= (or an NVLink domain to wait for) holds it back for a
   * better moment: it waits, as a job that does not fit.  A busy cluster
   * is no engine failure: under Strict=yes, or for a job with segments,
   * the job waits like any other (topo_engine_holds). */
  if (rc == TOPO_ENGINE_DEFERRED)
    return wait_for_better(ev->job_ptr, entry, "waiting");
  const char *holds = rc == TOPO_ENGINE_NO_PLACEMENT ? topo_engine_holds(e, &entry->job) : NULL;
  if (holds)
    return wait_held(ev->job_ptr, entry, holds);
  if (rc != TOPO_ENGINE_OK)
    return own_choice(e, ev, entry, spent);

  entry->chosen = choose_candidate(e, ev, entry, spent);
  if (entry->chosen >= 0)
    return take_candidate(e, ev, entry);
  snprintf(entry->why, sizeof(entry->why),
           "Slurm's evaluation accepted none of the %zu ranked candidates", entry->ranking.count);
  holds = topo_engine_holds(e, &entry->job);
  if (holds)
    return wait_held(ev->job_ptr, entry, holds);
  return own_choice(e, ev, entry, spent);
}

void record_one_node(topology_eval_t *ev, int node_inx, const struct topo_network_request *request)
{
  job_record_t *job_ptr = ev->job_ptr;
  struct pending *entry = xmalloc(sizeof(*entry));
  entry->job_id = job_ptr->job_id;
  entry->restarts = job_ptr->restart_cnt;
  entry->chosen = -1;
  entry->job = topo_shim_engine_job(job_ptr, request, 1, 1, 1);
  entry->job.time_limit_s = 0; /* never deferred */
  snprintf(entry->why, sizeof(entry->why), "%s", TOPO_SHIM_ONE_HOST);
  entry->nodes = bit_alloc(node_record_count);
  bit_set(entry->nodes, node_inx);
  writer_start();
  if (!set_one_host_ring(topo_shim_engine(), job_ptr, entry->nodes))
    set_fallback_ring(NULL, job_ptr, entry->nodes);
  pending_put(entry, job_ptr);
}
