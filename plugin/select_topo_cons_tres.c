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
 * The placement engine (plugin/engine.h, C++ linked into this module)
 * is opened on the first job that needs it, never in init().
 *
 * Every Slurm command (sinfo, squeue, scontrol, srun, ...) dlopen()s every
 * select_*.so in PluginDir, so this file references no data symbol that
 * only slurmctld defines (dlopen resolves data at load time and would fail
 * in those commands), and init() does nothing: cons_tres is loaded on the
 * first call that needs it, which only happens where this plugin is the
 * configured SelectType.
 */
#include "config.h"

#include <pthread.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/slurm_xlator.h" /* must precede the other src/common headers */
#include "src/common/log.h"
#include "src/common/plugin.h"
#include "src/common/gres.h"
#include "src/common/hostlist.h"
#include "src/common/list.h"
#include "src/common/read_config.h"
#include "src/common/select.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "engine.h"
#include "network_option.h"

/* TOPO_RING_ORDER, comma-separated, is set for jobs of up to this many hosts. */
#define TOPO_RING_ORDER_MAX_HOSTS 512

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

/* The placement engine, opened on the first job that needs it (only
 * slurmctld calls job_test) from topo_aware.conf beside slurm.conf. */
static topo_engine_t *engine;
static int engine_tried;
static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;

static slurm_select_ops_t cons_tres;
static plugin_context_t *cons_tres_context;
static int cons_tres_loaded; /* read without the lock once set */
static pthread_mutex_t cons_tres_lock = PTHREAD_MUTEX_INITIALIZER;

/* cons_tres's entry points, loaded on first use. */
static const slurm_select_ops_t *wrapped(void)
{
  if (__atomic_load_n(&cons_tres_loaded, __ATOMIC_ACQUIRE))
    return &cons_tres;
  slurm_mutex_lock(&cons_tres_lock);
  if (!cons_tres_context) {
    cons_tres_context = plugin_context_create("select", "select/cons_tres", (void **)&cons_tres,
                                              cons_tres_symbols, sizeof(cons_tres_symbols));
    /* Without cons_tres no job, node or step record can be handled: a
     * half-working controller would corrupt state. */
    if (!cons_tres_context)
      fatal("%s: cannot load select/cons_tres, which it wraps", plugin_type);
    __atomic_store_n(&cons_tres_loaded, 1, __ATOMIC_RELEASE);
  }
  slurm_mutex_unlock(&cons_tres_lock);
  return &cons_tres;
}

/*
 * What run-now tests cost, so an admin (and tests/slurm/replay.sh) can see
 * the plugin's price: per path (topo-aware jobs, and jobs left to cons_tres
 * alone), the tests, their mean and longest time, and for topo-aware jobs
 * the engine's ranking, the cons_tres trials and the placement record.
 * One summary line every TIMING_EVERY tests of a path, and for both on
 * `scontrol reconfigure`.
 */
enum { TIMING_CONS_TRES, TIMING_TOPO_AWARE };
#define TIMING_EVERY 100
struct job_test_timing {
  uint64_t tests, total_us, max_us, cpu_us;
  uint64_t engine_us, trials, trial_us, record_us;
};
static struct job_test_timing timing[2];
static pthread_mutex_t timing_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now_us(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

/* This thread's CPU time: on a busy machine wall time also counts the
 * turns of other processes, which this plugin does not cost. */
static uint64_t cpu_now_us(void)
{
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

static void log_timing(const struct job_test_timing *t, int path)
{
  if (!t->tests)
    return;
  if (path == TIMING_CONS_TRES)
    info("job_test timing: cons_tres alone tests=%" PRIu64 " mean_us=%" PRIu64 " cpu_mean_us=%" PRIu64
         " max_us=%" PRIu64,
         t->tests, t->total_us / t->tests, t->cpu_us / t->tests, t->max_us);
  else
    info("job_test timing: topo-aware tests=%" PRIu64 " mean_us=%" PRIu64 " cpu_mean_us=%" PRIu64
         " max_us=%" PRIu64 " engine_mean_us=%" PRIu64 " trials=%" PRIu64 " trial_mean_us=%" PRIu64
         " record_mean_us=%" PRIu64,
         t->tests, t->total_us / t->tests, t->cpu_us / t->tests, t->max_us, t->engine_us / t->tests,
         t->trials, t->trials ? t->trial_us / t->trials : 0, t->record_us / t->tests);
}

/* Both paths' figures so far: on `scontrol reconfigure` and at unload
 * (slurmctld unloads plugins only in its leak-checking builds). */
static void log_all_timing(void)
{
  struct job_test_timing copy[2];
  slurm_mutex_lock(&timing_lock);
  memcpy(copy, timing, sizeof(copy));
  slurm_mutex_unlock(&timing_lock);
  log_timing(&copy[TIMING_CONS_TRES], TIMING_CONS_TRES);
  log_timing(&copy[TIMING_TOPO_AWARE], TIMING_TOPO_AWARE);
}

/* Adds one run-now test to its path's figures. */
static void count_test(int path, uint64_t us, uint64_t cpu_us, uint64_t engine_us, uint64_t trials,
                       uint64_t trial_us, uint64_t record_us)
{
  struct job_test_timing snapshot;
  int report;
  slurm_mutex_lock(&timing_lock);
  struct job_test_timing *t = &timing[path];
  t->tests++;
  t->total_us += us;
  t->cpu_us += cpu_us;
  if (us > t->max_us)
    t->max_us = us;
  t->engine_us += engine_us;
  t->trials += trials;
  t->trial_us += trial_us;
  t->record_us += record_us;
  report = t->tests % TIMING_EVERY == 0;
  snapshot = *t;
  slurm_mutex_unlock(&timing_lock);
  if (report)
    log_timing(&snapshot, path);
}

extern int init(void)
{
  return SLURM_SUCCESS;
}

extern int fini(void)
{
  int rc = SLURM_SUCCESS;
  log_all_timing();
  slurm_mutex_lock(&engine_lock);
  topo_engine_close(engine);
  engine = NULL;
  engine_tried = 0;
  slurm_mutex_unlock(&engine_lock);
  slurm_mutex_lock(&cons_tres_lock);
  if (cons_tres_context) {
    __atomic_store_n(&cons_tres_loaded, 0, __ATOMIC_RELEASE);
    rc = plugin_context_destroy(cons_tres_context);
    cons_tres_context = NULL;
  }
  slurm_mutex_unlock(&cons_tres_lock);
  return rc;
}


static topo_engine_t *get_engine(void)
{
  char msg[512];
  slurm_mutex_lock(&engine_lock);
  if (!engine && !engine_tried) {
    char *path = get_extra_conf_path("topo_aware.conf");
    int rc = topo_engine_open(path, &engine, msg, sizeof(msg));
    if (rc != TOPO_ENGINE_OK)
      error("%s; topo-aware jobs get cons_tres's placement until scontrol reconfigure", msg);
    else if (msg[0])
      info("%s", msg);
    else
      info("read %s", path);
    engine_tried = 1;
    xfree(path);
  }
  slurm_mutex_unlock(&engine_lock);
  return engine;
}

/* The node table size last given to the engine: node indices are what the
 * engine speaks, so it learns the names once, here, and again when Slurm's
 * table changes (start-up, reconfigure, dynamic nodes: both call
 * node_init or reconfigure; the size check in job_test is a safety net). */
static int nodes_given = -1;

static void give_node_table(topo_engine_t *e)
{
  char msg[512];
  const char **names = xcalloc(node_record_count + 1, sizeof(char *));
  for (int i = 0; i < node_record_count; i++)
    if (node_record_table_ptr[i])
      names[i] = node_record_table_ptr[i]->name;
  if (topo_engine_set_nodes(e, names, node_record_count, msg, sizeof(msg)) != TOPO_ENGINE_OK)
    error("%s", msg);
  else
    nodes_given = node_record_count;
  xfree(names);
}

/* The request in the job's --network (or, with Partitions=, the implied
 * one), or none when the string is not ours or is malformed.
 * job_submit/topo_aware rejects malformed strings at submission; one that
 * got in anyway (plugin not configured, or a job from before it was) is
 * placed as a plain job. */
static struct topo_network_request job_request(job_record_t *job_ptr, uint16_t mode)
{
  struct topo_network_request request;
  char why[256];
  if (topo_network_parse(job_ptr->network, &request, why, sizeof(why)) != 0) {
    /* Test-only runs once at submission, the others every scheduling pass. */
    if (mode == SELECT_MODE_TEST_ONLY)
      error("JobId=%u: %s; placed as a plain cons_tres job", job_ptr->job_id, why);
    else
      debug("JobId=%u: %s; placed as a plain cons_tres job", job_ptr->job_id, why);
    return request;
  }
  if (!request.topo_aware && mode == SELECT_MODE_RUN_NOW && job_ptr->part_ptr &&
      job_ptr->part_ptr->name) {
    topo_engine_t *e = get_engine();
    if (e && topo_engine_partition_selected(e, job_ptr->part_ptr->name))
      request.topo_aware = true;
  }
  return request;
}

/* GPUs per node in a TRES string such as "gres:gpu:8", "gres/gpu:a100:4",
 * "gpu:2" or "gres:gpu" (1); 0 when it names no GPU. */
static uint32_t gpus_in_tres(const char *tres)
{
  uint32_t total = 0;
  char *copy, *save = NULL, *item;
  if (!tres || !*tres)
    return 0;
  copy = xstrdup(tres);
  for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    char *p = item, *last;
    if (!strncmp(p, "gres:", 5) || !strncmp(p, "gres/", 5))
      p += 5;
    if (strncmp(p, "gpu", 3) || (p[3] && p[3] != ':'))
      continue;
    last = strrchr(p, ':');
    if (!last) {
      total += 1;
    } else {
      char *end = NULL;
      unsigned long n = strtoul(last + 1, &end, 10);
      total += (end && *end == '\0' && end != last + 1) ? (uint32_t)n : 1;
    }
  }
  xfree(copy);
  return total;
}

/* Free GPUs of a node as slurmctld counts them. */
static int free_gpus(node_record_t *node_ptr)
{
  int free = 0;
  gres_state_t *gres_state;
  ListIterator it;
  if (!node_ptr->gres_list)
    return 0;
  it = list_iterator_create(node_ptr->gres_list);
  while ((gres_state = list_next(it))) {
    gres_node_state_t *ns = gres_state->gres_data;
    if (!gres_state->gres_name || xstrcmp(gres_state->gres_name, "gpu") || !ns)
      continue;
    if (ns->gres_cnt_avail > ns->gres_cnt_alloc)
      free += (int)(ns->gres_cnt_avail - ns->gres_cnt_alloc);
  }
  list_iterator_destroy(it);
  return free;
}

/* Sets NAME=value in the job's supplemental environment, replacing an
 * earlier entry (a requeued job is placed again); a NULL value removes it. */
static void set_job_env(job_record_t *job_ptr, const char *name, const char *value)
{
  struct job_details *d = job_ptr->details;
  size_t len = strlen(name);
  if (!d)
    return;
  for (uint16_t i = 0; i < d->env_cnt; i++) {
    if (d->env_sup[i] && !strncmp(d->env_sup[i], name, len) && d->env_sup[i][len] == '=') {
      xfree(d->env_sup[i]);
      if (value) {
        d->env_sup[i] = xstrdup_printf("%s=%s", name, value);
      } else {
        d->env_sup[i] = d->env_sup[d->env_cnt - 1];
        d->env_sup[--d->env_cnt] = NULL;
      }
      return;
    }
  }
  if (!value)
    return;
  xrecalloc(d->env_sup, d->env_cnt + 2, sizeof(char *));
  d->env_sup[d->env_cnt++] = xstrdup_printf("%s=%s", name, value);
}

/* The short form in the admin comment, replacing our earlier one and
 * keeping whatever an admin wrote before it. */
static void set_admin_note(job_record_t *job_ptr, const char *note)
{
  char *ours = job_ptr->admin_comment ? strstr(job_ptr->admin_comment, "topo-aware:") : NULL;
  char *text;
  if (ours) {
    *ours = '\0';
    text = xstrdup_printf("%stopo-aware: %s", job_ptr->admin_comment, note);
  } else if (job_ptr->admin_comment && job_ptr->admin_comment[0]) {
    text = xstrdup_printf("%s; topo-aware: %s", job_ptr->admin_comment, note);
  } else {
    text = xstrdup_printf("topo-aware: %s", note);
  }
  xfree(job_ptr->admin_comment);
  job_ptr->admin_comment = text;
}

/* Records the placement and hands the ring order to the job. */
static void record(topo_engine_t *e, const struct topo_engine_job *job, job_record_t *job_ptr,
                   const struct topo_engine_ranking *ranking, long chosen, bitstr_t *allocated,
                   const char *fallback_why)
{
  char msg[512], note[256], nnodes[16];
  char *ring = NULL, *hcas = NULL;
  size_t *nodes = xcalloc(bit_set_count(allocated) + 1, sizeof(size_t));
  size_t count = 0;
  int last = bit_fls(allocated);
  for (int i = bit_ffs(allocated); i >= 0 && i <= last; i++)
    if (bit_test(allocated, i))
      nodes[count++] = (size_t)i;
  int rc = topo_engine_record(e, job, ranking, chosen, nodes, count, fallback_why, &ring, &hcas,
                              msg, sizeof(msg));
  if (rc != TOPO_ENGINE_OK)
    error("JobId=%u: %s", job_ptr->job_id, msg);
  if (ring) {
    /* The ring as a Slurm hostlist, which keeps the order it is given in
     * ("gpu[001-008,017-024]"): compact for any job size, and what the
     * SPANK plugin reads.  The plain list only where it fits an
     * environment comfortably. */
    hostlist_t hl = hostlist_create(ring);
    char *compact = hl ? hostlist_ranged_string_xmalloc(hl) : NULL;
    snprintf(nnodes, sizeof(nnodes), "%zu", count);
    set_job_env(job_ptr, "TOPO_RING_HOSTS", compact ? compact : ring);
    set_job_env(job_ptr, "TOPO_RING_ORDER", count <= TOPO_RING_ORDER_MAX_HOSTS ? ring : NULL);
    set_job_env(job_ptr, "TOPO_NNODES", nnodes);
    xfree(compact);
    FREE_NULL_HOSTLIST(hl);
  }
  /* Set only where hwloc data exists; a requeued job placed where there
   * is none keeps no stale value. */
  set_job_env(job_ptr, "NCCL_IB_HCA", hcas);
  if (chosen >= 0) {
    const struct topo_engine_candidate *c = &ranking->candidates[chosen];
    snprintf(note, sizeof(note), "placed, candidate %ld of %zu, estimate/ideal %.2f",
             chosen + 1, ranking->count, c->ideal_s > 0 ? c->estimate_s / c->ideal_s : 1.0);
    info("JobId=%u placed on candidate %ld of %zu, ring %s", job_ptr->job_id,
         chosen + 1, ranking->count, ring ? ring : "-");
  } else {
    snprintf(note, sizeof(note), "fallback to cons_tres: %.200s", fallback_why);
  }
  set_admin_note(job_ptr, note);
  free(ring);
  free(hcas);
  xfree(nodes);
}

/*
 * Placement of a job that asked for topo-aware, in run-now mode: the
 * engine ranks candidate host sets out of `bitmap` (the nodes Slurm
 * offers); each is tried through cons_tres's job_test restricted to that
 * set, best first (a failed run-now test changes no state); the first
 * that cons_tres accepts wins.  None accepted falls back to cons_tres on
 * the whole bitmap (Strict=yes: the job stays pending instead).
 */
static int place_topo_aware(const struct topo_network_request *request, job_record_t *job_ptr,
                            bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
                            uint32_t req_nodes, uint16_t mode, List preemptee_candidates,
                            List *preemptee_job_list, bitstr_t *exc_core_bitmap,
                            struct job_test_timing *spent)
{
  uint64_t t0;
  char msg[512], why[600];
  struct topo_engine_ranking ranking = { 0 };
  struct topo_engine_job job = { 0 };
  topo_engine_t *e;
  int rc;
  long chosen = -1;

  /* Test-only (at submission: can this job ever run?) must see every
   * node, or a job that fits the cluster only off our candidates is
   * refused for good.  Will-run (backfill planning) must see every node,
   * or start-time estimates turn pessimistic; the job is placed for real
   * when backfill starts it, which is a run-now test. */
  if (mode != SELECT_MODE_RUN_NOW)
    return wrapped()->job_test(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode,
                               preemptee_candidates, preemptee_job_list, exc_core_bitmap);

  e = get_engine();
  if (!e) {
    snprintf(why, sizeof(why), "topo_aware.conf could not be read");
    goto fallback;
  }

  job.job_id = job_ptr->job_id;
  job.nodes = (req_nodes >= min_nodes && req_nodes <= max_nodes) ? req_nodes : min_nodes;
  job.gpus_per_node = gpus_in_tres(job_ptr->tres_per_node);
  if (!job.gpus_per_node && job.nodes)
    job.gpus_per_node = (gpus_in_tres(job_ptr->tres_per_job) + job.nodes - 1) / job.nodes;
  job.request = *request;

  {
    /* Free GPUs by node index; -1: not offered. */
    int *free = xcalloc(node_record_count + 1, sizeof(int));
    if (nodes_given != node_record_count)
      give_node_table(e);
    for (int i = 0; i < node_record_count; i++)
      free[i] = (i < bit_size(bitmap) && bit_test(bitmap, i) && node_record_table_ptr[i])
                    ? free_gpus(node_record_table_ptr[i]) : -1;
    t0 = now_us();
    rc = topo_engine_rank(e, &job, free, node_record_count, &ranking, msg, sizeof(msg));
    spent->engine_us += now_us() - t0;
    xfree(free);
  }
  if (rc != TOPO_ENGINE_OK) {
    snprintf(why, sizeof(why), "%s", msg);
    /* A busy cluster is no engine failure: the job waits like any other. */
    if (rc == TOPO_ENGINE_NO_PLACEMENT && topo_engine_strict(e))
      goto wait;
    goto fallback;
  }

  for (size_t c = 0; c < ranking.count; c++) {
    bitstr_t *trial = bit_alloc(bit_size(bitmap));
    for (size_t h = 0; h < ranking.candidates[c].count; h++)
      bit_set(trial, (bitoff_t)ranking.candidates[c].nodes[h]);
    t0 = now_us();
    rc = wrapped()->job_test(job_ptr, trial, min_nodes, max_nodes, req_nodes, mode,
                             preemptee_candidates, preemptee_job_list, exc_core_bitmap);
    spent->trials++;
    spent->trial_us += now_us() - t0;
    if (rc == SLURM_SUCCESS) {
      bit_copybits(bitmap, trial);
      FREE_NULL_BITMAP(trial);
      chosen = (long)c;
      break;
    }
    FREE_NULL_BITMAP(trial);
    if (preemptee_job_list)
      FREE_NULL_LIST(*preemptee_job_list);
  }
  if (chosen >= 0) {
    t0 = now_us();
    record(e, &job, job_ptr, &ranking, chosen, bitmap, NULL);
    spent->record_us += now_us() - t0;
    topo_engine_ranking_free(&ranking);
    return SLURM_SUCCESS;
  }
  snprintf(why, sizeof(why), "cons_tres accepted none of the %zu ranked candidates",
           ranking.count);
  topo_engine_ranking_free(&ranking);
  if (topo_engine_strict(e))
    goto wait;
  goto fallback;

wait:
  /* Slurm sets the pending reason itself (Resources) after a failed test
   * and clears state_desc, so the why goes into the admin comment. */
  {
    char note[300];
    debug("JobId=%u waits (Strict=yes): %s", job_ptr->job_id, why);
    snprintf(note, sizeof(note), "waiting (Strict=yes): %.200s", why);
    set_admin_note(job_ptr, note);
  }
  return SLURM_ERROR;

fallback:
  t0 = now_us();
  rc = wrapped()->job_test(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode,
                           preemptee_candidates, preemptee_job_list, exc_core_bitmap);
  spent->trials++;
  spent->trial_us += now_us() - t0;
  if (rc == SLURM_SUCCESS) {
    info("JobId=%u gets cons_tres's placement: %s", job_ptr->job_id, why);
    t0 = now_us();
    if (e)
      record(e, &job, job_ptr, NULL, -1, bitmap, why);
    else
      set_admin_note(job_ptr, "fallback to cons_tres: topo_aware.conf could not be read");
    spent->record_us += now_us() - t0;
  }
  return rc;
}

extern int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes,
                             uint32_t max_nodes, uint32_t req_nodes, uint16_t mode,
                             List preemptee_candidates, List *preemptee_job_list,
                             bitstr_t *exc_core_bitmap)
{
  struct job_test_timing spent = { 0 };
  uint64_t start = now_us(), cpu_start = cpu_now_us();
  int rc;
  struct topo_network_request request = job_request(job_ptr, mode);
  if (request.topo_aware)
    rc = place_topo_aware(&request, job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode,
                          preemptee_candidates, preemptee_job_list, exc_core_bitmap, &spent);
  else
    rc = wrapped()->job_test(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode,
                             preemptee_candidates, preemptee_job_list, exc_core_bitmap);
  if (mode == SELECT_MODE_RUN_NOW)
    count_test(request.topo_aware ? TIMING_TOPO_AWARE : TIMING_CONS_TRES, now_us() - start,
               cpu_now_us() - cpu_start, spent.engine_us, spent.trials, spent.trial_us,
               spent.record_us);
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
 * ones are the engine's running set, whose traffic new jobs are judged on. */
extern int select_p_job_init(List job_list)
{
  int rc = wrapped()->job_init(job_list);
  topo_engine_t *e = get_engine();
  struct topo_engine_job *jobs;
  job_record_t *job_ptr;
  ListIterator it;
  size_t count = 0;
  char msg[512];
  if (!e || !job_list)
    return rc;
  if (nodes_given != node_record_count)
    give_node_table(e);
  jobs = xcalloc(list_count(job_list) + 1, sizeof(*jobs));
  it = list_iterator_create(job_list);
  while ((job_ptr = list_next(it))) {
    struct topo_network_request request;
    if (!IS_JOB_RUNNING(job_ptr))
      continue;
    request = job_request(job_ptr, SELECT_MODE_RUN_NOW);
    if (!request.topo_aware)
      continue;
    jobs[count].job_id = job_ptr->job_id;
    jobs[count].nodes = job_ptr->node_cnt;
    jobs[count].gpus_per_node = gpus_in_tres(job_ptr->tres_per_node);
    jobs[count].request = request;
    count++;
  }
  list_iterator_destroy(it);
  if (topo_engine_set_running(e, jobs, count, msg, sizeof(msg)) != TOPO_ENGINE_OK)
    error("%s (running jobs' traffic left out of placement)", msg);
  xfree(jobs);
  return rc;
}

/* Node records are ready (start-up, reconfigure): load the fabric now, so
 * the first topo-aware job does not pay for it inside job_test. */
extern int select_p_node_init(void)
{
  int rc = wrapped()->node_init();
  topo_engine_t *e = get_engine();
  char msg[512];
  if (!e)
    return rc;
  give_node_table(e);
  if (topo_engine_prepare(e, msg, sizeof(msg)) != TOPO_ENGINE_OK)
    info("%s (topo-aware jobs get cons_tres's placement until a snapshot is there)", msg);
  else if (msg[0])
    info("%s", msg);
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
  char msg[512];
  /* Only an engine already open knows running jobs: never open it here. */
  if (__atomic_load_n(&engine, __ATOMIC_ACQUIRE) && job_ptr)
    (void)topo_engine_job_ended(engine, job_ptr->job_id, msg, sizeof(msg));
  return wrapped()->job_fini(job_ptr);
}

extern int select_p_job_suspend(job_record_t *job_ptr, bool indf_susp)
{
  return wrapped()->job_suspend(job_ptr, indf_susp);
}

extern int select_p_job_resume(job_record_t *job_ptr, bool indf_susp)
{
  return wrapped()->job_resume(job_ptr, indf_susp);
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

extern int select_p_get_info_from_plugin(enum select_plugindata_info dinfo,
                                         job_record_t *job_ptr, void *data)
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
  char msg[512];
  log_all_timing();
  slurm_mutex_lock(&engine_lock);
  if (engine) {
    char *path = get_extra_conf_path("topo_aware.conf");
    if (topo_engine_reconfigure(engine, path, msg, sizeof(msg)) != TOPO_ENGINE_OK)
      error("%s; keeping the previous configuration", msg);
    else
      info("%s", msg[0] ? msg : "re-read topo_aware.conf");
    give_node_table(engine);
    if (topo_engine_prepare(engine, msg, sizeof(msg)) != TOPO_ENGINE_OK || msg[0])
      info("%s", msg);
    xfree(path);
  } else {
    engine_tried = 0; /* the next job that needs it opens it afresh */
  }
  slurm_mutex_unlock(&engine_lock);
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
