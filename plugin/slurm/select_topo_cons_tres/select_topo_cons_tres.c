/*
 * select/topo_cons_tres: topology-aware placement layered on select/cons_tres.
 *
 * cons_tres keeps every decision it makes today (cores, memory, GRES,
 * reservations, preemption, backfill bookkeeping): this plugin loads it
 * through Slurm's own plugin context, as select/cray_aries loads its
 * "other" plugin, and forwards every select_p_* call.  Only
 * select_p_job_test looks at the job first: a job whose --network asks for
 * topo-aware is where the placement engine's host ranking goes.
 *
 * Why the name contains "cons_tres": Slurm 22.05 decides some features by
 * searching SelectType for that substring (MaxNodeCount in read_config.c,
 * heterogeneous GRES in job_scheduler.c and gres_ctld.c, dynamic nodes in
 * node_mgr.c and slurmd.c), and they must stay on.
 *
 * The placement engine (plugin/engine/engine.h, C++ linked into this module)
 * is opened on the first job that needs it, never in init().
 *
 * Every Slurm command (sinfo, squeue, scontrol, srun, ...) dlopen()s every
 * select_*.so in PluginDir, so this file references no data symbol that
 * only slurmctld defines (dlopen resolves data at load time and would fail
 * in those commands), and init() does nothing: cons_tres is loaded on the
 * first call that needs it, which only happens where this plugin is the
 * configured SelectType.
 */
#include "plugin/slurm/common/slurm_compat.h"

#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "plugin/engine/engine.h"
#include "plugin/slurm/common/network_option.h"
#include "plugin/slurm/common/shim_common.h"
#include "plugin/slurm/common/wrapped_plugin.h"

/* Slurm's select plugin ids below 200 are its own (slurm.h); this one is ours. */
#define SELECT_PLUGIN_TOPO_CONS_TRES 4207

const char plugin_name[] = "Topology-aware placement over consumable TRES";
const char plugin_type[] = "select/topo_cons_tres";
const uint32_t plugin_id = SELECT_PLUGIN_TOPO_CONS_TRES;
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* The wrapped plugin's entry points, in slurm_select_ops_t's order
 * (src/common/select.c keeps the daemon's copy of this list; a plugin may
 * not reference that data symbol, see above). */
static const char *cons_tres_symbols[] = {
    "plugin_id",
    "select_p_state_save",
    "select_p_state_restore",
    "select_p_job_init",
    "select_p_node_init",
    "select_p_job_test",
    "select_p_job_begin",
    "select_p_job_ready",
    "select_p_job_expand",
    "select_p_job_resized",
    "select_p_job_signal",
    "select_p_job_fini",
    "select_p_job_suspend",
    "select_p_job_resume",
    "select_p_step_pick_nodes",
    "select_p_step_start",
    "select_p_step_finish",
    "select_p_select_nodeinfo_pack",
    "select_p_select_nodeinfo_unpack",
    "select_p_select_nodeinfo_alloc",
    "select_p_select_nodeinfo_free",
    "select_p_select_nodeinfo_set_all",
    "select_p_select_nodeinfo_set",
    "select_p_select_nodeinfo_get",
    "select_p_select_jobinfo_alloc",
    "select_p_select_jobinfo_free",
    "select_p_select_jobinfo_set",
    "select_p_select_jobinfo_get",
    "select_p_select_jobinfo_copy",
    "select_p_select_jobinfo_pack",
    "select_p_select_jobinfo_unpack",
    "select_p_select_jobinfo_sprint",
    "select_p_select_jobinfo_xstrdup",
    "select_p_get_info_from_plugin",
    "select_p_update_node_config",
    "select_p_reconfigure",
    "select_p_resv_test",
};
_Static_assert(sizeof(cons_tres_symbols) == sizeof(slurm_select_ops_t),
               "cons_tres_symbols must list every member of slurm_select_ops_t");

static slurm_select_ops_t cons_tres;
static struct topo_wrapped_plugin wrapped_cons_tres =
    TOPO_WRAPPED_PLUGIN("select", cons_tres_symbols, &cons_tres);

/* cons_tres's entry points, loaded on first use. */
static const slurm_select_ops_t *wrapped(void)
{
  return topo_wrapped_plugin_ops(&wrapped_cons_tres, "select/cons_tres", "which it wraps");
}

extern int init(void)
{
  return SLURM_SUCCESS;
}

extern int fini(void)
{
  topo_shim_log_timing("job_test");
  topo_shim_engine_close();
  return topo_wrapped_plugin_unload(&wrapped_cons_tres);
}

/* Records the placement and hands the ring order to the job. */
static void record(topo_engine_t *e, const struct topo_engine_job *job, job_record_t *job_ptr,
                   const struct topo_engine_ranking *ranking, long chosen, bitstr_t *allocated,
                   const char *fallback_why)
{
  char msg[512], note[256];
  char *ring = NULL;
  size_t *nodes = xcalloc(bit_set_count(allocated) + 1, sizeof(size_t));
  size_t count = 0;
  int last = bit_fls(allocated);
  for (int i = bit_ffs(allocated); i >= 0 && i <= last; i++)
    if (bit_test(allocated, i))
      nodes[count++] = (size_t)i;
  /* No NCCL_IB_HCA asked for: spank/topo_aware sets it per node. */
  int rc = topo_engine_record(e, job, ranking, chosen, nodes, count, fallback_why, &ring, NULL, msg,
                              sizeof(msg));
  if (rc != TOPO_ENGINE_OK)
    error("JobId=%u: %s", job_ptr->job_id, msg);
  if (ring)
    topo_shim_set_ring(job_ptr, ring, count, chosen < 0);
  topo_shim_set_hints(job_ptr, ring ? e : NULL, nodes, count);
  /* NCCL_IB_HCA is set per node (spank/topo_aware, from that host's
   * hwloc data); a job-wide value from an older version goes. */
  topo_shim_set_env(job_ptr, "NCCL_IB_HCA", NULL);
  if (chosen >= 0) {
    const struct topo_engine_candidate *c = &ranking->candidates[chosen];
    snprintf(note, sizeof(note), "placed, candidate %ld of %zu, estimate/ideal %.2f", chosen + 1,
             ranking->count, c->ideal_s > 0 ? c->estimate_s / c->ideal_s : 1.0);
    info("JobId=%u placed on candidate %ld of %zu, ring %s", job_ptr->job_id, chosen + 1,
         ranking->count, ring ? ring : "-");
  } else {
    snprintf(note, sizeof(note), "fallback to cons_tres: %.200s", fallback_why);
  }
  topo_shim_note(job_ptr, note);
  free(ring);
  xfree(nodes);
}

/* One job_test call's arguments, as Slurm passed them; every trial and
 * the fallback ask cons_tres with these, over a different node set. */
struct job_test_args {
  job_record_t *job_ptr;
  bitstr_t *bitmap; /* the nodes Slurm offers; the chosen ones on success */
  uint32_t min_nodes, max_nodes, req_nodes;
  uint16_t mode;
  topo_list_t *preemptee_candidates;
  topo_list_t **preemptee_job_list;
  bitstr_t *exc_core_bitmap;
};

/* cons_tres's own test of the job on `nodes`, counted as a trial. */
static int cons_tres_test(const struct job_test_args *a, bitstr_t *nodes,
                          struct topo_shim_timing *spent)
{
  uint64_t t0 = topo_shim_now_us();
  int rc = wrapped()->job_test(a->job_ptr, nodes, a->min_nodes, a->max_nodes, a->req_nodes, a->mode,
                               a->preemptee_candidates, a->preemptee_job_list, a->exc_core_bitmap);
  spent->trials++;
  spent->trial_us += topo_shim_now_us() - t0;
  return rc;
}

/* Tries the ranked candidates, best first, with cons_tres's own test
 * restricted to each; the index of the first it accepts (a->bitmap then
 * holds its nodes), or -1. */
static long try_ranked(const struct topo_engine_ranking *ranking, const struct job_test_args *a,
                       struct topo_shim_timing *spent)
{
  for (size_t c = 0; c < ranking->count; c++) {
    bitstr_t *trial = bit_alloc(bit_size(a->bitmap));
    for (size_t h = 0; h < ranking->candidates[c].count; h++)
      bit_set(trial, (bitoff_t)ranking->candidates[c].nodes[h]);
    if (cons_tres_test(a, trial, spent) == SLURM_SUCCESS) {
      bit_copybits(a->bitmap, trial);
      FREE_NULL_BITMAP(trial);
      return (long)c;
    }
    FREE_NULL_BITMAP(trial);
    if (a->preemptee_job_list)
      FREE_NULL_LIST(*a->preemptee_job_list);
  }
  return -1;
}

/* Ranks host sets for the job among the offered nodes, with their free
 * GPUs.  Too few offered nodes that could take the job: said in `msg`
 * without asking the engine. */
static int rank_offered(topo_engine_t *e, const struct topo_engine_job *job, bitstr_t *bitmap,
                        struct topo_engine_ranking *ranking, char *msg, size_t msg_size,
                        struct topo_shim_timing *spent)
{
  /* Free GPUs by node index; -1: not offered. */
  int *free = topo_shim_free_gpus_take();
  uint32_t usable = 0;
  for (int i = 0; i < node_record_count; i++) {
    free[i] = (i < bit_size(bitmap) && bit_test(bitmap, i) && node_record_table_ptr[i])
                  ? topo_shim_node_free_gpus(node_record_table_ptr[i])
                  : -1;
    if (free[i] >= 0 && (!job->gpus_per_node || free[i] >= (int)job->gpus_per_node))
      usable++;
  }
  if (usable < job->nodes) {
    topo_shim_free_gpus_give_back();
    snprintf(msg, msg_size, "job %u: %u offered nodes with %u free GPUs, %u needed", job->job_id,
             usable, job->gpus_per_node, job->nodes);
    return TOPO_ENGINE_NO_PLACEMENT;
  }
  topo_shim_engine_nodes(e);
  bool timed = topo_shim_time_engine_cpu();
  uint64_t c0 = timed ? topo_shim_cpu_now_us() : 0, t0 = topo_shim_now_us();
  int rc = topo_engine_rank(e, job, free, node_record_count, ranking, msg, msg_size);
  spent->engine_us += topo_shim_now_us() - t0;
  if (timed) {
    spent->engine_cpu_us += topo_shim_cpu_now_us() - c0;
    spent->engine_cpu_timed++;
  }
  spent->ranked++;
  if (ranking->answered_before)
    spent->reused++;
  topo_shim_free_gpus_give_back();
  return rc;
}

/* The engine's best candidate first, which cons_tres nearly always takes;
 * only when it is refused are the others ranked (their estimates cost
 * most of a search) and tried.  The chosen index, or -1. */
static long choose_candidate(topo_engine_t *e, struct topo_engine_job *job,
                             struct topo_engine_ranking *ranking, const struct job_test_args *a,
                             struct topo_shim_timing *spent)
{
  char msg[512];
  long chosen = try_ranked(ranking, a, spent);
  if (chosen >= 0 || !ranking->more)
    return chosen;
  topo_engine_ranking_free(ranking);
  job->all_candidates = true;
  if (rank_offered(e, job, a->bitmap, ranking, msg, sizeof(msg), spent) != TOPO_ENGINE_OK) {
    debug("JobId=%u: %s", job->job_id, msg);
    return -1;
  }
  return try_ranked(ranking, a, spent);
}

/* The job stays pending.  Slurm sets the pending reason itself
 * (Resources) after a failed test and clears state_desc, so the why goes
 * into the admin comment. */
static int wait_for_better(job_record_t *job_ptr, const char *waiting, const char *why)
{
  char note[400];
  debug("JobId=%u %s: %s", job_ptr->job_id, waiting, why);
  snprintf(note, sizeof(note), "%s: %.300s", waiting, why);
  topo_shim_note(job_ptr, note);
  return SLURM_ERROR;
}

/* cons_tres's own choice over every offered node, recorded with why. */
static int fall_back(topo_engine_t *e, const struct topo_engine_job *job,
                     const struct job_test_args *a, const char *why, struct topo_shim_timing *spent)
{
  int rc = cons_tres_test(a, a->bitmap, spent);
  if (rc != SLURM_SUCCESS)
    return rc;
  info("JobId=%u gets cons_tres's placement: %s", a->job_ptr->job_id, why);
  uint64_t t0 = topo_shim_now_us();
  if (e)
    record(e, job, a->job_ptr, NULL, -1, a->bitmap, why);
  else
    topo_shim_note(a->job_ptr, "fallback to cons_tres: topo_aware.conf could not be read");
  spent->record_us += topo_shim_now_us() - t0;
  return rc;
}

/* The job waits for the reason topo_engine_holds gives ("Strict=yes",
 * "segments"). */
static int hold(topo_engine_t *e, const struct topo_engine_job *job, job_record_t *job_ptr,
                const char *why)
{
  char waiting[40];
  snprintf(waiting, sizeof(waiting), "waiting (%s)", topo_engine_holds(e, job));
  return wait_for_better(job_ptr, waiting, why);
}

/* What a failed rank call means: DeferAbove= (or an NVLink domain to wait
 * for) holds the job back for a better moment (it waits, as a job that
 * does not fit); a busy cluster under Strict=yes, or for a job with
 * segments, is no engine failure (it waits like any other job); anything
 * else gets cons_tres's choice. */
static int after_rank_failure(topo_engine_t *e, const struct topo_engine_job *job,
                              const struct job_test_args *a, int rc, const char *why,
                              struct topo_shim_timing *spent)
{
  if (rc == TOPO_ENGINE_DEFERRED)
    return wait_for_better(a->job_ptr, "waiting", why);
  if (rc == TOPO_ENGINE_NO_PLACEMENT && topo_engine_holds(e, job))
    return hold(e, job, a->job_ptr, why);
  return fall_back(e, job, a, why, spent);
}

/*
 * Placement of a job that asked for topo-aware, in run-now mode: the
 * engine ranks candidate host sets out of the nodes Slurm offers; each is
 * tried through cons_tres's job_test restricted to that set, best first
 * (a failed run-now test changes no state); the first that cons_tres
 * accepts wins.  None accepted falls back to cons_tres on every offered
 * node (Strict=yes: the job stays pending instead).
 *
 * Test-only (at submission: can this job ever run?) must see every node,
 * or a job that fits the cluster only off our candidates is refused for
 * good.  Will-run (backfill planning) must see every node, or start-time
 * estimates turn pessimistic; the job is placed for real when backfill
 * starts it, which is a run-now test.
 */
static int place_topo_aware(const struct topo_network_request *request,
                            const struct job_test_args *a, struct topo_shim_timing *spent)
{
  if (a->mode != SELECT_MODE_RUN_NOW)
    return cons_tres_test(a, a->bitmap, spent);
  topo_engine_t *e = topo_shim_engine();
  struct topo_engine_job job = {0};
  if (!e)
    return fall_back(NULL, &job, a, "topo_aware.conf could not be read", spent);
  job = topo_shim_engine_job(a->job_ptr, request, a->min_nodes, a->max_nodes, a->req_nodes);
  if (a->max_nodes == 1)
    return fall_back(e, &job, a, TOPO_SHIM_ONE_HOST, spent);

  char msg[512];
  struct topo_engine_ranking ranking = {0};
  int rc = rank_offered(e, &job, a->bitmap, &ranking, msg, sizeof(msg), spent);
  if (rc != TOPO_ENGINE_OK)
    return after_rank_failure(e, &job, a, rc, msg, spent);
  long chosen = choose_candidate(e, &job, &ranking, a, spent);
  if (chosen >= 0) {
    uint64_t t0 = topo_shim_now_us();
    record(e, &job, a->job_ptr, &ranking, chosen, a->bitmap, NULL);
    spent->record_us += topo_shim_now_us() - t0;
    topo_engine_ranking_free(&ranking);
    return SLURM_SUCCESS;
  }
  snprintf(msg, sizeof(msg), "cons_tres accepted none of the %zu ranked candidates", ranking.count);
  topo_engine_ranking_free(&ranking);
  if (topo_engine_holds(e, &job))
    return hold(e, &job, a->job_ptr, msg);
  return fall_back(e, &job, a, msg, spent);
}

extern int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes,
                             uint32_t max_nodes, uint32_t req_nodes, uint16_t mode,
                             topo_list_t *preemptee_candidates, topo_list_t **preemptee_job_list,
                             bitstr_t *exc_core_bitmap)
{
  struct topo_shim_timing spent = {0};
  uint64_t start = topo_shim_now_us(), cpu_start = topo_shim_cpu_now_us();
  int rc;
  /* Test-only runs once at submission, the others every scheduling pass;
   * Partitions= applies where the job is really placed. */
  struct topo_network_request request =
      topo_shim_request(job_ptr, mode == SELECT_MODE_TEST_ONLY, mode == SELECT_MODE_RUN_NOW);
  if (request.topo_aware)
    rc = place_topo_aware(
        &request,
        &(struct job_test_args){job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode,
                                preemptee_candidates, preemptee_job_list, exc_core_bitmap},
        &spent);
  else
    rc = wrapped()->job_test(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode,
                             preemptee_candidates, preemptee_job_list, exc_core_bitmap);
  if (mode == SELECT_MODE_RUN_NOW) {
    spent.cpu_us = topo_shim_cpu_now_us() - cpu_start;
    topo_shim_count("job_test", request.topo_aware ? TOPO_PATH_TOPO_AWARE : TOPO_PATH_PLAIN,
                    topo_shim_now_us() - start, &spent);
  }
  return rc;
}

/* Everything below is cons_tres's, unchanged. */

extern int select_p_state_save(char *dir_name)
{
  return wrapped()->state_save(dir_name);
}

extern int select_p_state_restore(char *dir_name)
{
  return wrapped()->state_restore(dir_name);
}

/* The jobs slurmctld knows (start-up, reconfigure): the running topo-aware
 * ones are the engine's running set, whose traffic new jobs are judged on.
 * A record is journaled by the engine's writer a moment after job_test
 * placed the job (engine.h): a slurmctld killed in between saved the job
 * as started with its ring hints but left no record, which is written now
 * from those (topo_shim_recover). */
extern int select_p_job_init(topo_list_t *job_list)
{
  int rc = wrapped()->job_init(job_list);
  topo_engine_t *e = topo_shim_engine();
  struct topo_shim_started *jobs;
  job_record_t *job_ptr;
  topo_list_itr_t *it;
  size_t count = 0;
  char msg[512];
  if (!e || !job_list)
    return rc;
  topo_shim_engine_nodes(e);
  jobs = xcalloc(list_count(job_list) + 1, sizeof(*jobs));
  it = list_iterator_create(job_list);
  while ((job_ptr = list_next(it)))
    if (topo_shim_started_job(job_ptr, &jobs[count]))
      count++;
  list_iterator_destroy(it);
  topo_shim_recover(e, jobs, count);
  for (size_t i = 0; i < count; i++) {
    uint32_t id = jobs[i].job.job.job_id;
    /* Recovery counts every job it recorded as running: those that ended
     * meanwhile leave, those suspended send nothing (job_fini and
     * job_suspend, which say so, came before the restart). */
    if (jobs[i].job.recorded && !jobs[i].running)
      (void)topo_engine_job_ended(e, id, msg, sizeof(msg));
    else if (jobs[i].suspended)
      (void)topo_engine_job_suspended(e, id, true, msg, sizeof(msg));
    topo_shim_started_free(&jobs[i]);
  }
  xfree(jobs);
  return rc;
}

/* Node records are ready (start-up, reconfigure): load the fabric now, so
 * the first topo-aware job does not pay for it inside job_test. */
extern int select_p_node_init(void)
{
  int rc = wrapped()->node_init();
  topo_shim_engine_prepare();
  return rc;
}

extern int select_p_job_begin(job_record_t *job_ptr)
{
  return wrapped()->job_begin(job_ptr);
}

extern int select_p_job_ready(job_record_t *job_ptr)
{
  return wrapped()->job_ready(job_ptr);
}

extern int select_p_job_expand(job_record_t *from_job_ptr, job_record_t *to_job_ptr)
{
  return wrapped()->job_expand(from_job_ptr, to_job_ptr);
}

extern int select_p_job_resized(job_record_t *job_ptr, node_record_t *node_ptr)
{
  return wrapped()->job_resized(job_ptr, node_ptr);
}

extern int select_p_job_signal(job_record_t *job_ptr, int signal)
{
  return wrapped()->job_signal(job_ptr, signal);
}

extern int select_p_job_fini(job_record_t *job_ptr)
{
  topo_shim_job_ended(job_ptr);
  return wrapped()->job_fini(job_ptr);
}

/* A suspended job sends nothing: its traffic leaves the fabric model the
 * engine places new jobs on, and comes back when it resumes. */
static void suspended(job_record_t *job_ptr, bool now_suspended)
{
  char msg[512];
  topo_engine_t *e = topo_shim_engine();
  if (!e || !job_ptr)
    return;
  if (topo_engine_job_suspended(e, job_ptr->job_id, now_suspended, msg, sizeof(msg)) !=
          TOPO_ENGINE_OK ||
      msg[0])
    info("JobId=%u: %s", job_ptr->job_id, msg);
}

extern int select_p_job_suspend(job_record_t *job_ptr, bool indf_susp)
{
  int rc = wrapped()->job_suspend(job_ptr, indf_susp);
  if (rc == SLURM_SUCCESS)
    suspended(job_ptr, true);
  return rc;
}

extern int select_p_job_resume(job_record_t *job_ptr, bool indf_susp)
{
  int rc = wrapped()->job_resume(job_ptr, indf_susp);
  if (rc == SLURM_SUCCESS)
    suspended(job_ptr, false);
  return rc;
}

extern bitstr_t *select_p_step_pick_nodes(job_record_t *job_ptr, select_jobinfo_t *jobinfo,
                                          uint32_t node_count, bitstr_t **avail_nodes)
{
  return wrapped()->step_pick_nodes(job_ptr, jobinfo, node_count, avail_nodes);
}

extern int select_p_step_start(step_record_t *step_ptr)
{
  return wrapped()->step_start(step_ptr);
}

extern int select_p_step_finish(step_record_t *step_ptr, bool killing_step)
{
  return wrapped()->step_finish(step_ptr, killing_step);
}

extern int select_p_select_nodeinfo_pack(select_nodeinfo_t *nodeinfo, buf_t *buffer,
                                         uint16_t protocol_version)
{
  return wrapped()->nodeinfo_pack(nodeinfo, buffer, protocol_version);
}

extern int select_p_select_nodeinfo_unpack(select_nodeinfo_t **nodeinfo, buf_t *buffer,
                                           uint16_t protocol_version)
{
  return wrapped()->nodeinfo_unpack(nodeinfo, buffer, protocol_version);
}

extern select_nodeinfo_t *select_p_select_nodeinfo_alloc(void)
{
  return wrapped()->nodeinfo_alloc();
}

extern int select_p_select_nodeinfo_free(select_nodeinfo_t *nodeinfo)
{
  return wrapped()->nodeinfo_free(nodeinfo);
}

extern int select_p_select_nodeinfo_set_all(void)
{
  return wrapped()->nodeinfo_set_all();
}

extern int select_p_select_nodeinfo_set(job_record_t *job_ptr)
{
  return wrapped()->nodeinfo_set(job_ptr);
}

extern int select_p_select_nodeinfo_get(select_nodeinfo_t *nodeinfo,
                                        enum select_nodedata_type dinfo, enum node_states state,
                                        void *data)
{
  return wrapped()->nodeinfo_get(nodeinfo, dinfo, state, data);
}

extern select_jobinfo_t *select_p_select_jobinfo_alloc(void)
{
  return wrapped()->jobinfo_alloc();
}

extern int select_p_select_jobinfo_free(select_jobinfo_t *jobinfo)
{
  return wrapped()->jobinfo_free(jobinfo);
}

extern int select_p_select_jobinfo_set(select_jobinfo_t *jobinfo,
                                       enum select_jobdata_type data_type, void *data)
{
  return wrapped()->jobinfo_set(jobinfo, data_type, data);
}

extern int select_p_select_jobinfo_get(select_jobinfo_t *jobinfo,
                                       enum select_jobdata_type data_type, void *data)
{
  return wrapped()->jobinfo_get(jobinfo, data_type, data);
}

extern select_jobinfo_t *select_p_select_jobinfo_copy(select_jobinfo_t *jobinfo)
{
  return wrapped()->jobinfo_copy(jobinfo);
}

extern int select_p_select_jobinfo_pack(select_jobinfo_t *jobinfo, buf_t *buffer,
                                        uint16_t protocol_version)
{
  return wrapped()->jobinfo_pack(jobinfo, buffer, protocol_version);
}

extern int select_p_select_jobinfo_unpack(select_jobinfo_t **jobinfo_pptr, buf_t *buffer,
                                          uint16_t protocol_version)
{
  return wrapped()->jobinfo_unpack(jobinfo_pptr, buffer, protocol_version);
}

extern char *select_p_select_jobinfo_sprint(select_jobinfo_t *jobinfo, char *buf, size_t size,
                                            int mode)
{
  return wrapped()->jobinfo_sprint(jobinfo, buf, size, mode);
}

extern char *select_p_select_jobinfo_xstrdup(select_jobinfo_t *jobinfo, int mode)
{
  return wrapped()->jobinfo_xstrdup(jobinfo, mode);
}

extern int select_p_get_info_from_plugin(enum select_plugindata_info dinfo, job_record_t *job_ptr,
                                         void *data)
{
  return wrapped()->get_info_from_plugin(dinfo, job_ptr, data);
}

extern int select_p_update_node_config(int index)
{
  return wrapped()->update_node_config(index);
}

/* scontrol reconfigure: re-read topo_aware.conf (a bad file keeps the
 * running config, and says so), then cons_tres's own. */
extern int select_p_reconfigure(void)
{
  topo_shim_log_timing("job_test");
  topo_shim_engine_reconfigure();
  return wrapped()->reconfigure();
}

extern bitstr_t *select_p_resv_test(resv_desc_msg_t *resv_desc_ptr, uint32_t node_cnt,
                                    bitstr_t *avail_bitmap, bitstr_t **core_bitmap)
{
  return wrapped()->resv_test(resv_desc_ptr, node_cnt, avail_bitmap, core_bitmap);
}

/* Never used: its initialiser makes the compiler check that every entry
 * point above has exactly the type slurm_select_ops_t gives it, in the
 * order of cons_tres_symbols. */
static const slurm_select_ops_t own_entry_points __attribute__((unused)) = {
    (uint32_t *)&plugin_id,
    select_p_state_save,
    select_p_state_restore,
    select_p_job_init,
    select_p_node_init,
    select_p_job_test,
    select_p_job_begin,
    select_p_job_ready,
    select_p_job_expand,
    select_p_job_resized,
    select_p_job_signal,
    select_p_job_fini,
    select_p_job_suspend,
    select_p_job_resume,
    select_p_step_pick_nodes,
    select_p_step_start,
    select_p_step_finish,
    select_p_select_nodeinfo_pack,
    select_p_select_nodeinfo_unpack,
    select_p_select_nodeinfo_alloc,
    select_p_select_nodeinfo_free,
    select_p_select_nodeinfo_set_all,
    select_p_select_nodeinfo_set,
    select_p_select_nodeinfo_get,
    select_p_select_jobinfo_alloc,
    select_p_select_jobinfo_free,
    select_p_select_jobinfo_set,
    select_p_select_jobinfo_get,
    select_p_select_jobinfo_copy,
    select_p_select_jobinfo_pack,
    select_p_select_jobinfo_unpack,
    select_p_select_jobinfo_sprint,
    select_p_select_jobinfo_xstrdup,
    select_p_get_info_from_plugin,
    select_p_update_node_config,
    select_p_reconfigure,
    select_p_resv_test,
};
