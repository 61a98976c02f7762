/*
 * What both placement shims do to Slurm's job records (shim_common.h).
 */
#include "plugin/slurm/common/slurm_compat.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugin/slurm/common/shim_common.h"

/* The plugin's own name (each plugin's main file), for log lines. */
extern const char plugin_type[];

/* --- the engine -------------------------------------------------------------- */

static topo_engine_t *engine;
static int engine_tried;
static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;

/* slurmctld's log says which fabric the engine places on, and when a newer
 * snapshot replaced it (tests wait for that line). */
static void say_snapshot(const char *line)
{
  info("topo-aware: %s", line);
}

/* RouteJobs=: each apply, and each new reason the tables stay as they were. */
static void say_routes(const char *line, bool failed)
{
  if (failed)
    error("topo-aware: %s", line);
  else
    info("topo-aware: %s", line);
}

static void open_locked(void)
{
  char msg[512];
  char *path = get_extra_conf_path("topo_aware.conf");
  int rc = topo_engine_open(path, &engine, msg, sizeof(msg));
  if (rc != TOPO_ENGINE_OK)
    error("%s; topo-aware jobs get Slurm's own placement until scontrol reconfigure", msg);
  else if (msg[0])
    info("%s", msg);
  else
    info("read %s", path);
  if (engine) {
    topo_engine_on_snapshot(engine, say_snapshot);
    topo_engine_on_routes(engine, say_routes);
  }
  engine_tried = 1;
  xfree(path);
}

void topo_shim_job_ended(job_record_t *job_ptr)
{
  char msg[512];
  /* Only an engine already open knows running jobs: never open it here. */
  slurm_mutex_lock(&engine_lock);
  if (engine && job_ptr)
    (void)topo_engine_job_ended(engine, job_ptr->job_id, msg, sizeof(msg));
  slurm_mutex_unlock(&engine_lock);
}

topo_engine_t *topo_shim_engine(void)
{
  topo_engine_t *e;
  slurm_mutex_lock(&engine_lock);
  if (!engine && !engine_tried)
    open_locked();
  e = engine;
  slurm_mutex_unlock(&engine_lock);
  return e;
}

/* The node table size last given to the engine; -1: none yet. */
static int nodes_given = -1;

static void give_nodes(topo_engine_t *e)
{
  char msg[512];
  const char **names = xcalloc(node_record_count + 1, sizeof(char *));
  for (int i = 0; i < node_record_count; i++)
    if (node_record_table_ptr[i])
      names[i] = node_record_table_ptr[i]->name;
  if (topo_engine_set_nodes(e, names, node_record_count, msg, sizeof(msg)) != TOPO_ENGINE_OK)
    error("%s", msg);
  else
    __atomic_store_n(&nodes_given, node_record_count, __ATOMIC_RELEASE);
  xfree(names);
}

void topo_shim_engine_nodes(topo_engine_t *e)
{
  if (e && __atomic_load_n(&nodes_given, __ATOMIC_ACQUIRE) != node_record_count)
    give_nodes(e);
}

void topo_shim_engine_prepare(void)
{
  char msg[512];
  topo_engine_t *e = topo_shim_engine();
  if (!e)
    return;
  give_nodes(e);
  if (topo_engine_prepare(e, msg, sizeof(msg)) != TOPO_ENGINE_OK)
    info("%s (topo-aware jobs get Slurm's own placement until a snapshot is there)", msg);
  else if (msg[0])
    info("%s", msg);
}

void topo_shim_engine_reconfigure(void)
{
  char msg[512];
  slurm_mutex_lock(&engine_lock);
  if (engine) {
    char *path = get_extra_conf_path("topo_aware.conf");
    if (topo_engine_reconfigure(engine, path, msg, sizeof(msg)) != TOPO_ENGINE_OK)
      error("%s; keeping the previous configuration", msg);
    else
      info("%s", msg[0] ? msg : "re-read topo_aware.conf");
    give_nodes(engine);
    if (topo_engine_prepare(engine, msg, sizeof(msg)) != TOPO_ENGINE_OK || msg[0])
      info("%s", msg);
    xfree(path);
  } else {
    engine_tried = 0; /* the next job that needs it opens it afresh */
  }
  slurm_mutex_unlock(&engine_lock);
}

void topo_shim_engine_close(void)
{
  slurm_mutex_lock(&engine_lock);
  topo_engine_close(engine);
  engine = NULL;
  engine_tried = 0;
  slurm_mutex_unlock(&engine_lock);
}

static int *free_gpus;
static int free_gpus_room;
static pthread_mutex_t free_gpus_lock = PTHREAD_MUTEX_INITIALIZER;

int *topo_shim_free_gpus_take(void)
{
  slurm_mutex_lock(&free_gpus_lock);
  if (free_gpus_room < node_record_count + 1) {
    free_gpus_room = node_record_count + 1;
    xrecalloc(free_gpus, free_gpus_room, sizeof(int));
  }
  return free_gpus;
}

void topo_shim_free_gpus_give_back(void)
{
  slurm_mutex_unlock(&free_gpus_lock);
}

/* --- the request --------------------------------------------------------------- */

struct topo_network_request topo_shim_request(job_record_t *job_ptr, bool log_bad,
                                              bool apply_partitions)
{
  struct topo_network_request request;
  char why[256];
  if (topo_network_parse(job_ptr->network, &request, why, sizeof(why)) != 0) {
    if (log_bad)
      error("JobId=%u: %s; placed as a plain job", job_ptr->job_id, why);
    else
      debug("JobId=%u: %s; placed as a plain job", job_ptr->job_id, why);
    return request;
  }
  if (!request.topo_aware && apply_partitions && job_ptr->part_ptr && job_ptr->part_ptr->name) {
    topo_engine_t *e = topo_shim_engine();
    if (e && topo_engine_partition_selected(e, job_ptr->part_ptr->name))
      request.topo_aware = true;
  }
  return request;
}

/* The GPUs of one TRES item ("gres:gpu:a100:4" is 4, "gpu" 1); 0 when
 * it names none. */
static uint32_t gpus_in_item(const char *item, size_t len)
{
  if (len >= 5 && (!strncmp(item, "gres:", 5) || !strncmp(item, "gres/", 5))) {
    item += 5;
    len -= 5;
  }
  if (len < 3 || strncmp(item, "gpu", 3) || (len > 3 && item[3] != ':'))
    return 0;
  const char *last = item + len;
  while (last > item && last[-1] != ':')
    last--;
  if (last == item)
    return 1;
  /* After the last ':': a count, or a type name (one GPU). */
  uint64_t n = 0;
  const char *p = last;
  for (; p < item + len && *p >= '0' && *p <= '9'; p++)
    if (n <= UINT32_MAX)
      n = n * 10 + (uint64_t)(*p - '0');
  return (p == item + len && p != last && n <= UINT32_MAX) ? (uint32_t)n : 1;
}

/* Every evaluation reads it: no copy of the string. */
uint32_t topo_shim_gpus_in_tres(const char *tres)
{
  uint32_t total = 0;
  if (!tres)
    return 0;
  for (const char *item = tres; *item;) {
    const char *comma = strchr(item, ',');
    size_t len = comma ? (size_t)(comma - item) : strlen(item);
    if (len)
      total += gpus_in_item(item, len);
    if (!comma)
      break;
    item = comma + 1;
  }
  return total;
}

struct topo_engine_job topo_shim_engine_job(job_record_t *job_ptr,
                                            const struct topo_network_request *request,
                                            uint32_t min_nodes, uint32_t max_nodes,
                                            uint32_t req_nodes)
{
  struct topo_engine_job job = {0};
  job.job_id = job_ptr->job_id;
  job.nodes = (req_nodes >= min_nodes && req_nodes <= max_nodes) ? req_nodes : min_nodes;
  job.gpus_per_node = topo_shim_gpus_in_tres(job_ptr->tres_per_node);
  if (!job.gpus_per_node && job.nodes)
    job.gpus_per_node = (topo_shim_gpus_in_tres(job_ptr->tres_per_job) + job.nodes - 1) / job.nodes;
  job.request = *request;
#if TOPO_SLURM_SEGMENTS
  /* Slurm's --segment, when --network names none (which then wins). */
  if (!job.request.segment && job_ptr->details && job_ptr->details->segment_size &&
      job_ptr->details->segment_size != NO_VAL16)
    job.request.segment = job_ptr->details->segment_size;
#endif
  job.now_s = (double)time(NULL);
  if (job_ptr->time_limit != NO_VAL && job_ptr->time_limit != INFINITE)
    job.time_limit_s = 60.0 * job_ptr->time_limit;
  return job;
}

/* Adds a GPU gres state's free count to *free (list_for_each: no iterator
 * to allocate per node and call). */
static int add_free_gpus(void *x, void *arg)
{
  gres_state_t *gres_state = x;
  gres_node_state_t *ns = gres_state->gres_data;
  int *free = arg;
  if (gres_state->gres_name && !xstrcmp(gres_state->gres_name, "gpu") && ns &&
      ns->gres_cnt_avail > ns->gres_cnt_alloc)
    *free += (int)(ns->gres_cnt_avail - ns->gres_cnt_alloc);
  return 0;
}

int topo_shim_node_free_gpus(node_record_t *node_ptr)
{
  int free = 0;
  if (node_ptr->gres_list)
    list_for_each(node_ptr->gres_list, add_free_gpus, &free);
  return free;
}

/* --- the job record ------------------------------------------------------------ */

void topo_shim_set_env(job_record_t *job_ptr, const char *name, const char *value)
{
  topo_job_details_t *d = job_ptr->details;
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

const char *topo_shim_env(job_record_t *job_ptr, const char *name)
{
  topo_job_details_t *d = job_ptr->details;
  size_t len = strlen(name);
  for (uint16_t i = 0; d && i < d->env_cnt; i++)
    if (d->env_sup[i] && !strncmp(d->env_sup[i], name, len) && d->env_sup[i][len] == '=')
      return d->env_sup[i] + len + 1;
  return NULL;
}

/* What nccl_hints.h may give; TOPO_HINT_ + each is ours to replace. */
static const char *const hint_names[] = {"NCCL_IB_GID_INDEX", "NCCL_IB_TC", "NCCL_SOCKET_IFNAME",
                                         "NCCL_IB_HCA", "NCCL_IB_QPS_PER_CONNECTION"};

/* Whether the job's supplemental environment holds any TOPO_HINT_ entry. */
static bool has_hints(job_record_t *job_ptr)
{
  topo_job_details_t *d = job_ptr->details;
  for (uint16_t i = 0; d && i < d->env_cnt; i++)
    if (d->env_sup[i] && !strncmp(d->env_sup[i], "TOPO_HINT_", 10))
      return true;
  return false;
}

void topo_shim_set_hints(job_record_t *job_ptr, topo_engine_t *e, const size_t *nodes, size_t count)
{
  char msg[512], name[64];
  char *hints = NULL;
  if (e && nodes && count &&
      topo_engine_nccl_hints(e, nodes, count, &hints, msg, sizeof(msg)) != TOPO_ENGINE_OK)
    debug("topo_aware: JobId=%u: no NCCL hints: %s", job_ptr->job_id, msg);
  /* No hint now and none before (a site without RoCE settings): every
   * successful evaluation comes here, so no name is looked up. */
  if (!hints && !has_hints(job_ptr))
    return;
  for (size_t i = 0; i < sizeof(hint_names) / sizeof(hint_names[0]); i++) {
    char found[1024];
    const char *value = NULL;
    size_t len = strlen(hint_names[i]);
    /* "NAME=value" lines: this name's value, or none. */
    for (const char *line = hints; line && *line;) {
      const char *end = strchr(line, '\n');
      size_t line_len = end ? (size_t)(end - line) : strlen(line);
      if (line_len > len && line_len - len - 1 < sizeof(found) &&
          !strncmp(line, hint_names[i], len) && line[len] == '=') {
        memcpy(found, line + len + 1, line_len - len - 1);
        found[line_len - len - 1] = '\0';
        value = found;
        break;
      }
      line = end ? end + 1 : NULL;
    }
    snprintf(name, sizeof(name), "TOPO_HINT_%s", hint_names[i]);
    const char *now = topo_shim_env(job_ptr, name);
    /* An evaluation that changes nothing writes nothing. */
    if ((!now && !value) || (now && value && !strcmp(now, value)))
      continue;
    topo_shim_set_env(job_ptr, name, value);
  }
  free(hints);
}

void topo_shim_set_ring(job_record_t *job_ptr, const char *ring, size_t count, bool fallback)
{
  char nnodes[24];
  /* A pending job is evaluated again every pass, mostly to the same ring:
   * then nothing changes. */
  if (ring && count <= TOPO_RING_ORDER_MAX_HOSTS) {
    const char *now = topo_shim_env(job_ptr, "TOPO_RING_ORDER");
    if (now && !strcmp(now, ring) && (topo_shim_env(job_ptr, "TOPO_FALLBACK") != NULL) == fallback)
      return;
  }
  topo_shim_set_env(job_ptr, "TOPO_FALLBACK", ring && fallback ? "1" : NULL);
  if (!ring) {
    topo_shim_set_env(job_ptr, "TOPO_RING_HOSTS", NULL);
    topo_shim_set_env(job_ptr, "TOPO_RING_ORDER", NULL);
    topo_shim_set_env(job_ptr, "TOPO_NNODES", NULL);
    return;
  }
  /* The ring as a Slurm hostlist, which keeps the order it is given in
   * ("gpu[001-008,017-024]"): compact for any job size, and what the
   * SPANK plugin reads.  The plain list only where it fits an
   * environment comfortably. */
  if (count == 1) {
    /* One name is its own hostlist. */
    topo_shim_set_env(job_ptr, "TOPO_RING_HOSTS", ring);
  } else {
    /* Written into a buffer of our own first: Slurm's allocating form
     * takes 8 KiB of heap for any ring, which in slurmctld's scheduling
     * threads costs more than the whole string. */
    char small[1024];
    topo_hostlist_t *hl = hostlist_create(ring);
    char *compact = NULL;
    if (hl && hostlist_ranged_string(hl, sizeof(small), small) < 0)
      compact = hostlist_ranged_string_xmalloc(hl);
    topo_shim_set_env(job_ptr, "TOPO_RING_HOSTS", compact ? compact : hl ? small : ring);
    xfree(compact);
    if (hl)
      hostlist_destroy(hl);
  }
  snprintf(nnodes, sizeof(nnodes), "%zu", count);
  topo_shim_set_env(job_ptr, "TOPO_RING_ORDER", count <= TOPO_RING_ORDER_MAX_HOSTS ? ring : NULL);
  topo_shim_set_env(job_ptr, "TOPO_NNODES", nnodes);
}

void topo_shim_note(job_record_t *job_ptr, const char *note)
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

/* --- after a restart ------------------------------------------------------------ */

/* The job's ring (TOPO_RING_HOSTS of its saved environment) as node
 * indices; 0 when it has none. */
static size_t saved_ring(job_record_t *job_ptr, size_t **ring)
{
  const char *hosts = topo_shim_env(job_ptr, "TOPO_RING_HOSTS");
  topo_hostlist_t *hl = hosts ? hostlist_create(hosts) : NULL;
  size_t count = 0;
  char *name;
  if (!hl)
    return 0;
  *ring = xcalloc(hostlist_count(hl) + 1, sizeof(size_t));
  while ((name = hostlist_shift(hl))) {
    node_record_t *node_ptr = find_node_record(name);
    if (node_ptr)
      (*ring)[count++] = (size_t)node_ptr->index;
    free(name);
  }
  hostlist_destroy(hl);
  return count;
}

bool topo_shim_started_job(job_record_t *job_ptr, struct topo_shim_started *s)
{
  bitstr_t *ran_on = job_ptr->node_bitmap, *from_names = NULL;
  if (IS_JOB_PENDING(job_ptr) || !job_ptr->start_time)
    return false;
  /* Nodes leave a completing job's node_bitmap; the completing copy keeps them. */
  if (!ran_on || !bit_set_count(ran_on))
    ran_on = job_ptr->node_bitmap_cg;
  /* 22.05 calls select_p_job_init before it builds a restored job's
   * bitmaps from its node names (_sync_jobs_to_conf): a running job's are
   * read from those. */
  if (!ran_on && (IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr)) && job_ptr->nodes &&
      job_ptr->nodes[0] && topo_node_name2bitmap(job_ptr->nodes, &from_names) == 0)
    ran_on = from_names;
  struct topo_network_request request = topo_shim_request(job_ptr, false, true);
  size_t *ring = NULL, ring_count = 0;
  if (ran_on && bit_set_count(ran_on) && request.topo_aware)
    ring_count = saved_ring(job_ptr, &ring);
  if (!ring_count) {
    xfree(ring);
    FREE_NULL_BITMAP(from_names);
    return false;
  }
  *s = (struct topo_shim_started){0};
  s->ring = ring;
  s->nodes = xcalloc(bit_set_count(ran_on) + 1, sizeof(size_t));
  int last = bit_fls(ran_on);
  for (int i = bit_ffs(ran_on); i >= 0 && i <= last; i++)
    if (bit_test(ran_on, i))
      s->nodes[s->job.allocated_count++] = (size_t)i;
  FREE_NULL_BITMAP(from_names);
  s->job.job = topo_shim_engine_job(job_ptr, &request, job_ptr->node_cnt, job_ptr->node_cnt,
                                    job_ptr->node_cnt);
  s->job.ring = ring;
  s->job.ring_count = ring_count;
  s->job.allocated = s->nodes;
  s->job.started_at = (int64_t)job_ptr->start_time;
  s->job.fallback = topo_shim_env(job_ptr, "TOPO_FALLBACK") != NULL;
  s->suspended = IS_JOB_SUSPENDED(job_ptr);
  s->running = IS_JOB_RUNNING(job_ptr) || s->suspended;
  return true;
}

void topo_shim_started_free(struct topo_shim_started *s)
{
  xfree(s->ring);
  xfree(s->nodes);
}

/* The running ones' traffic from their records (the engine starts with
 * none). */
static void restore_running(topo_engine_t *e, const struct topo_shim_started *jobs, size_t count)
{
  char msg[512];
  struct topo_engine_job *running = xcalloc(count + 1, sizeof(*running));
  size_t n_running = 0;
  for (size_t i = 0; i < count; i++)
    if (jobs[i].running)
      running[n_running++] = jobs[i].job.job;
  if (topo_engine_set_running(e, running, n_running, msg, sizeof(msg)) != TOPO_ENGINE_OK)
    error("%s (running jobs' traffic left out of placement)", msg);
  xfree(running);
}

/* The records missing, written by the engine. */
static void record_missing(topo_engine_t *e, struct topo_shim_started *jobs, size_t count)
{
  char msg[512];
  struct topo_engine_started *batch = xcalloc(count + 1, sizeof(*batch));
  for (size_t i = 0; i < count; i++)
    batch[i] = jobs[i].job;
  if (count && topo_engine_recover(e, batch, count, msg, sizeof(msg)) != TOPO_ENGINE_OK)
    error("%s: %s (records of jobs started before slurmctld restarted may be missing)", plugin_type,
          msg);
  size_t recovered = 0;
  for (size_t i = 0; i < count; i++) {
    jobs[i].job.recorded = batch[i].recorded;
    if (batch[i].recorded) {
      recovered++;
      info(
          "JobId=%u: recorded after slurmctld restarted, from the ring it was given (it started "
          "before; its record had not been written)",
          batch[i].job.job_id);
    }
  }
  if (count)
    info("%s: %zu started topo-aware jobs checked after the restart, %zu recorded now", plugin_type,
         count, recovered);
  xfree(batch);
}

void topo_shim_recover(topo_engine_t *e, struct topo_shim_started *jobs, size_t count)
{
  restore_running(e, jobs, count);
  record_missing(e, jobs, count);
}

/* --- timing ------------------------------------------------------------------- */

#define TIMING_EVERY 100
static struct topo_shim_timing timing[2];
static pthread_mutex_t timing_lock = PTHREAD_MUTEX_INITIALIZER;

uint64_t topo_shim_now_us(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

uint64_t topo_shim_cpu_now_us(void)
{
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

bool topo_shim_time_engine_cpu(void)
{
  static uint32_t calls;
  return __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED) % TOPO_SHIM_CPU_EVERY == 0;
}

/* The CPU means with a tenth: the two paths' ratio is the hot path's
 * figure, and means of 10-20 us in whole microseconds move it by 0.1. */
static void log_path(const char *what, const struct topo_shim_timing *t, enum topo_shim_path path)
{
  if (!t->tests)
    return;
  double cpu_mean = (double)t->cpu_us / (double)t->tests;
  if (path == TOPO_PATH_PLAIN)
    info("%s timing: cons_tres alone tests=%" PRIu64 " mean_us=%" PRIu64
         " cpu_mean_us=%.1f"
         " max_us=%" PRIu64,
         what, t->tests, t->total_us / t->tests, cpu_mean, t->max_us);
  else
    info("%s timing: topo-aware tests=%" PRIu64 " mean_us=%" PRIu64
         " cpu_mean_us=%.1f"
         " max_us=%" PRIu64 " engine_mean_us=%" PRIu64 " engine_cpu_mean_us=%" PRIu64
         " ranked=%" PRIu64 " reused=%" PRIu64 " trials=%" PRIu64 " trial_mean_us=%" PRIu64
         " record_mean_us=%" PRIu64,
         what, t->tests, t->total_us / t->tests, cpu_mean, t->max_us, t->engine_us / t->tests,
         t->engine_cpu_timed ? t->engine_cpu_us * t->ranked / t->engine_cpu_timed / t->tests : 0,
         t->ranked, t->reused, t->trials, t->trials ? t->trial_us / t->trials : 0,
         t->record_us / t->tests);
}

void topo_shim_count_extra(enum topo_shim_path path, uint64_t total_us, uint64_t cpu_us)
{
  slurm_mutex_lock(&timing_lock);
  timing[path].total_us += total_us;
  timing[path].record_us += total_us;
  timing[path].cpu_us += cpu_us;
  slurm_mutex_unlock(&timing_lock);
}

void topo_shim_log_timing(const char *what)
{
  struct topo_shim_timing copy[2];
  slurm_mutex_lock(&timing_lock);
  memcpy(copy, timing, sizeof(copy));
  slurm_mutex_unlock(&timing_lock);
  log_path(what, &copy[TOPO_PATH_PLAIN], TOPO_PATH_PLAIN);
  log_path(what, &copy[TOPO_PATH_TOPO_AWARE], TOPO_PATH_TOPO_AWARE);
}

void topo_shim_count(const char *what, enum topo_shim_path path, uint64_t total_us,
                     const struct topo_shim_timing *spent)
{
  struct topo_shim_timing snapshot;
  int report;
  slurm_mutex_lock(&timing_lock);
  struct topo_shim_timing *t = &timing[path];
  t->tests++;
  t->total_us += total_us;
  t->cpu_us += spent->cpu_us;
  if (total_us > t->max_us)
    t->max_us = total_us;
  t->engine_us += spent->engine_us;
  t->trials += spent->trials;
  t->trial_us += spent->trial_us;
  t->record_us += spent->record_us;
  t->engine_cpu_us += spent->engine_cpu_us;
  t->engine_cpu_timed += spent->engine_cpu_timed;
  t->ranked += spent->ranked;
  t->reused += spent->reused;
  report = t->tests % TIMING_EVERY == 0;
  snapshot = *t;
  slurm_mutex_unlock(&timing_lock);
  if (report)
    log_path(what, &snapshot, path);
}
