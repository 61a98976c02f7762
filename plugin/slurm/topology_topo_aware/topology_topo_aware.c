/*
 * topology/topo_aware: topology-aware placement for Slurm 24.05 onwards.
 *
 * From 24.05 Slurm chooses a job's nodes in the topology plugin: cons_tres
 * works out what every node could give the job (topology_eval_t's
 * node_map, avail_res_array and avail_core) and asks
 * topology_g_eval_nodes() to pick.  That is where this plugin sits.
 *
 * Plain jobs get Slurm's own behaviour: topology/tree's when the site has
 * a topology.conf (`topoctl export` writes one from the fabric: leaves and
 * the spines above them), topology/default's (flat) otherwise.  That
 * plugin is loaded through Slurm's plugin context and every call of the
 * interface is forwarded to it, so its code is Slurm's, not a copy.
 *
 * A topo-aware job (--network=topo-aware..., or its partition in
 * topo_aware.conf's Partitions=): the engine (engine.h) ranks host sets
 * among the nodes cons_tres offers, with the GPUs cons_tres counted free
 * for this job on each; each candidate is tried through Slurm's own
 * evaluation restricted to it, best first; the first that fits wins, and
 * its ring order goes into the job's environment.  None fits: Slurm's own
 * choice over every offered node, and one log line saying why.
 *
 * eval_nodes has no mode argument: the same call serves run-now (the job
 * starts), test-only (at submission: could it ever run?) and will-run
 * (backfill's start-time plans).  Ranking inside the node map cons_tres
 * offers, with its free-GPU counts, is right in all three: in test-only
 * the map is the idle cluster, in will-run the planned future.  So:
 *   - the ring hints (env_sup) are set at every successful evaluation; the
 *     last one before a job starts is the run-now one, which made its
 *     allocation (salloc and srun read env_sup when the job starts);
 *   - the placement record and the AdminComment's short form are written
 *     when the job really starts, by a writer thread of slurmctld's
 *     (below), off the scheduler's path; an evaluation writes nothing;
 *   - Strict=yes means a topo-aware job runs only on a ranked candidate:
 *     a request no candidate meets on the idle cluster is refused at
 *     submission (the test-only evaluation fails), one the busy cluster
 *     cannot meet now waits (run-now fails; its AdminComment says why),
 *     and backfill plans it on candidates only.
 *
 * get_node_addr gives SLURM_TOPOLOGY_ADDR / _PATTERN from the fabric
 * ("pod1.leaf03.gpu017" / "pod.leaf.node") where slurmd can read the
 * snapshot database, and the forwarded plugin's address otherwise.
 *
 * slurmd, slurmstepd and every client command load topology plugins too:
 * init() does nothing, Slurm's plugin is loaded on the first call, the
 * engine opens on the first topo-aware evaluation (only slurmctld
 * evaluates; it also opens at start-up, in build_config), and the
 * slurmctld functions the writer needs are looked up at run time, so no
 * symbol of slurmctld's is needed to load this plugin.
 */
#include "plugin/slurm/common/slurm_compat.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "src/common/core_array.h"
#include "src/common/node_conf.h"
#include "src/common/run_in_daemon.h"
#include "src/slurmctld/locks.h"

#include "plugin/engine/engine.h"
#include "plugin/engine/fabric_address.h"
#include "plugin/slurm/common/network_option.h"
#include "plugin/slurm/common/shim_common.h"

/* Slurm's topology plugin ids are 100-104 (slurm.h); this one is ours. */
#define TOPOLOGY_PLUGIN_TOPO_AWARE 4208

const char plugin_name[] = "Topology-aware placement from the fabric snapshot";
const char plugin_type[] = "topology/topo_aware";
const uint32_t plugin_id = TOPOLOGY_PLUGIN_TOPO_AWARE;
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* --- Slurm's own topology plugin, which plain jobs get ----------------------- */

/* The interface of this release (slurm_compat.h). */
typedef topo_slurm_topology_ops_t topo_ops_t;
static const char *topo_symbols[] = TOPO_SLURM_TOPOLOGY_SYMBOLS;
_Static_assert(sizeof(topo_symbols) == sizeof(topo_ops_t),
               "topo_symbols must list every member of topo_ops_t");

static topo_ops_t slurm_ops;
static plugin_context_t *slurm_context;
static int slurm_loaded; /* read without the lock once set */
static pthread_mutex_t slurm_lock = PTHREAD_MUTEX_INITIALIZER;

/* What topology.conf beside slurm.conf describes: topology/block where it
 * defines blocks (BlockName=), topology/tree where it defines switches,
 * flat placement where there is none. */
static const char *slurms_own_type(void)
{
  static const char *type;
  if (type)
    return type;
  char *path = get_extra_conf_path("topology.conf");
  FILE *f = fopen(path, "r");
  const char *found = TOPO_SLURM_FLAT_TOPOLOGY;
  xfree(path);
  if (f) {
    char line[1024];
    found = "topology/tree";
    while (fgets(line, sizeof(line), f)) {
      const char *p = line;
      while (*p == ' ' || *p == '\t')
        p++;
      if (!strncasecmp(p, "BlockName=", 10)) {
        found = "topology/block";
        break;
      }
    }
    fclose(f);
  }
  type = found;
  return type;
}

static const topo_ops_t *slurms_own(void)
{
  if (__atomic_load_n(&slurm_loaded, __ATOMIC_ACQUIRE))
    return &slurm_ops;
  slurm_mutex_lock(&slurm_lock);
  if (!slurm_context) {
    const char *type = slurms_own_type();
    slurm_context = plugin_context_create("topo", type, (void **)&slurm_ops, topo_symbols,
                                          sizeof(topo_symbols));
    /* Without it no node can be chosen or message routed. */
    if (!slurm_context)
      fatal("%s: cannot load %s, which plain jobs get", plugin_type, type);
    debug("%s: plain jobs get %s", plugin_type, type);
    __atomic_store_n(&slurm_loaded, 1, __ATOMIC_RELEASE);
  }
  slurm_mutex_unlock(&slurm_lock);
  return &slurm_ops;
}

/* --- slurmctld's functions, looked up at run time ------------------------------ */

struct ctld_api {
  void (*lock)(slurmctld_lock_t);
  void (*unlock)(slurmctld_lock_t);
  job_record_t *(*find_job)(uint32_t);
  topo_list_t **job_list;
};

/* NULL outside slurmctld (or if it lacks them, which is logged). */
static const struct ctld_api *ctld(void)
{
  static struct ctld_api api;
  static int state; /* 0 unknown, 1 found, -1 missing */
  if (state == 0) {
    /* POSIX's way to take a function from dlsym (dlsym(3)). */
    *(void **)&api.lock = dlsym(RTLD_DEFAULT, "lock_slurmctld");
    *(void **)&api.unlock = dlsym(RTLD_DEFAULT, "unlock_slurmctld");
    *(void **)&api.find_job = dlsym(RTLD_DEFAULT, "find_job_record");
    api.job_list = dlsym(RTLD_DEFAULT, "job_list");
    state = (api.lock && api.unlock && api.find_job && api.job_list) ? 1 : -1;
    if (state < 0)
      error("%s: slurmctld's lock_slurmctld/find_job_record not found; placements are not recorded",
            plugin_type);
  }
  return state > 0 ? &api : NULL;
}

/* --- placements waiting for their job to start --------------------------------- */

/* The latest evaluation of each topo-aware job, until the job starts (the
 * writer records it) or is gone. */
struct pending {
  uint32_t job_id;
  struct topo_engine_job job;
  struct topo_engine_ranking ranking; /* owned; empty for Slurm's own choice */
  long chosen;                        /* candidate index, -1: Slurm's own choice */
  bitstr_t *nodes;                    /* what the evaluation chose */
  char why[400];                      /* for Slurm's own choice */
  uint16_t restarts;                  /* the job's restart count then */
  size_t *allocated;                  /* at start: the job's node indices */
  size_t allocated_count;
  bool same_nodes; /* at start: Slurm allocated `nodes` */
  struct pending *next;
};

/* By job id, in buckets: a burst queues hundreds of topo-aware jobs, and
 * each evaluation replaces its job's entry (a list walk under the lock
 * would cost every evaluation a cache miss per queued job). */
#define PENDING_BUCKETS 1024
static struct pending *pending_jobs[PENDING_BUCKETS];
static size_t pending_count;
/* Entries of jobs that started and were requeued before the writer saw
 * them run: recorded on its next round. */
static struct pending *ran_jobs;
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pending_cond = PTHREAD_COND_INITIALIZER;
static pthread_t writer_thread;
static int writer_running, writer_stop;

static void pending_free(struct pending *p)
{
  if (!p)
    return;
  topo_engine_ranking_free(&p->ranking);
  FREE_NULL_BITMAP(p->nodes);
  xfree(p->allocated);
  xfree(p);
}

/* The nodes of a bitmap as indices, into the entry. */
static void set_allocated(struct pending *p, bitstr_t *nodes)
{
  p->allocated = xcalloc(bit_set_count(nodes) + 1, sizeof(size_t));
  p->allocated_count = 0;
  for (int i = 0; next_node_bitmap(nodes, &i); i++)
    p->allocated[p->allocated_count++] = (size_t)i;
}

/* Replaces the job's entry (the latest evaluation is the one that counts).
 * An entry the job has run on since (it was requeued before the writer
 * saw it run) goes to the writer instead. */
static void pending_put(struct pending *entry, job_record_t *job_ptr)
{
  struct pending **bucket = &pending_jobs[entry->job_id % PENDING_BUCKETS];
  slurm_mutex_lock(&pending_lock);
  for (struct pending **p = bucket; *p; p = &(*p)->next) {
    if ((*p)->job_id != entry->job_id)
      continue;
    struct pending *old = *p;
    entry->next = old->next;
    *p = entry;
    if (old->restarts < job_ptr->restart_cnt) {
      set_allocated(old, old->nodes);
      old->same_nodes = true;
      old->next = ran_jobs;
      ran_jobs = old;
    } else {
      pending_free(old);
    }
    slurm_mutex_unlock(&pending_lock);
    return;
  }
  entry->next = *bucket;
  *bucket = entry;
  pending_count++;
  slurm_mutex_unlock(&pending_lock);
}

/* Writes one record (no lock held: the database may take a while). */
static void write_record(topo_engine_t *e, struct pending *p)
{
  char msg[512], note[300];
  char *ring = NULL, *hcas = NULL;
  long chosen = p->same_nodes ? p->chosen : -1;
  const char *why = p->chosen >= 0 && !p->same_nodes
                        ? "Slurm allocated other nodes than the evaluation chose"
                        : p->why;
  int rc =
      e ? topo_engine_record(e, &p->job, chosen >= 0 ? &p->ranking : NULL, chosen, p->allocated,
                             p->allocated_count, why, &ring, &hcas, msg, sizeof(msg))
        : TOPO_ENGINE_OK; /* no engine: nothing to record into, the note still tells */
  if (rc != TOPO_ENGINE_OK)
    error("JobId=%u: %s", p->job_id, msg);
  free(hcas);

  /* The short form and the log line, now that they are true. */
  if (chosen >= 0) {
    const struct topo_engine_candidate *c = &p->ranking.candidates[chosen];
    snprintf(note, sizeof(note), "placed, candidate %ld of %zu, estimate/ideal %.2f", chosen + 1,
             p->ranking.count, c->ideal_s > 0 ? c->estimate_s / c->ideal_s : 1.0);
    info("JobId=%u placed on candidate %ld of %zu, ring %s", p->job_id, chosen + 1,
         p->ranking.count, ring ? ring : "-");
  } else {
    snprintf(note, sizeof(note), "fallback to Slurm's own choice: %.200s", why);
    info("JobId=%u gets Slurm's own placement: %s", p->job_id, why);
  }
  free(ring);
  const struct ctld_api *api = ctld();
  slurmctld_lock_t job_write = {.job = WRITE_LOCK};
  api->lock(job_write);
  job_record_t *job_ptr = api->find_job(p->job_id);
  if (job_ptr)
    topo_shim_note(job_ptr, note);
  api->unlock(job_write);
}

/* Moves the bucket's entries of jobs that have started to *started, with
 * their node indices; drops those of jobs that are gone.  Under the job
 * lock and pending_lock. */
static void collect_bucket(const struct ctld_api *api, struct pending **p, struct pending **started)
{
  while (*p) {
    struct pending *entry = *p;
    job_record_t *job_ptr = api->find_job(entry->job_id);
    /* Slurm keeps an ended job's node list; a job cancelled while pending
     * never had one, though it gets a start time (its end's). */
    bool allocated = job_ptr && job_ptr->nodes && job_ptr->nodes[0];
    bool gone = !job_ptr || (IS_JOB_FINISHED(job_ptr) && !allocated);
    /* Started, whether still running or already ended between two rounds
     * of the writer (short jobs do). */
    bool running = !gone && !IS_JOB_PENDING(job_ptr) && job_ptr->start_time && allocated;
    /* Started and already requeued: pending again, with one restart more. */
    bool ran = !gone && !running && job_ptr->restart_cnt > entry->restarts;
    if (!gone && !running && !ran) {
      p = &entry->next;
      continue;
    }
    *p = entry->next;
    pending_count--;
    if (gone) {
      pending_free(entry);
      continue;
    }
    /* Nodes leave a completing job's node_bitmap one by one; the
     * completing copy keeps them. A job that ended before the writer saw
     * it may keep neither: its latest evaluation's nodes are the ones its
     * run-now test chose, so they are recorded. */
    bitstr_t *ran_on = running ? job_ptr->node_bitmap : NULL;
    if (running && (!ran_on || !bit_set_count(ran_on)))
      ran_on = job_ptr->node_bitmap_cg;
    if (ran_on && bit_set_count(ran_on)) {
      set_allocated(entry, ran_on);
      entry->same_nodes = entry->nodes && bit_size(entry->nodes) == bit_size(ran_on) &&
                          bit_equal(entry->nodes, ran_on);
    } else {
      set_allocated(entry, entry->nodes);
      entry->same_nodes = true;
    }
    entry->next = *started;
    *started = entry;
  }
}

/* Moves the entries of jobs that have started to *started.  Under the job
 * lock. */
static void collect_started(const struct ctld_api *api, struct pending **started)
{
  slurmctld_lock_t job_read = {.job = READ_LOCK, .node = READ_LOCK};
  api->lock(job_read);
  slurm_mutex_lock(&pending_lock);
  while (ran_jobs) {
    struct pending *entry = ran_jobs;
    ran_jobs = entry->next;
    entry->next = *started;
    *started = entry;
  }
  for (size_t b = 0; b < PENDING_BUCKETS && pending_count; b++)
    collect_bucket(api, &pending_jobs[b], started);
  slurm_mutex_unlock(&pending_lock);
  api->unlock(job_read);
}

/* Jobs recorded and not yet seen to end: the writer thread's own list.
 * 24.x has no select job_fini, job_suspend or job_resume for a topology
 * plugin, so the writer looks each round for those that ended (their
 * traffic leaves the engine's running set) and those suspended or resumed
 * since (their traffic leaves and comes back). */
struct recorded {
  uint32_t job_id;
  bool suspended;
};
static struct recorded *recorded_jobs;
static size_t recorded_count, recorded_size;

static void recorded_add(uint32_t job_id)
{
  if (recorded_count == recorded_size) {
    recorded_size = recorded_size ? 2 * recorded_size : 64;
    xrecalloc(recorded_jobs, recorded_size, sizeof(*recorded_jobs));
  }
  recorded_jobs[recorded_count].job_id = job_id;
  recorded_jobs[recorded_count++].suspended = false;
}

static void forget_ended(const struct ctld_api *api)
{
  /* What changed, applied once the job lock is released. */
  enum change { ENDED, SUSPENDED, RESUMED };
  struct {
    uint32_t job_id;
    enum change what;
  } *changes = xcalloc(recorded_count + 1, sizeof(*changes));
  size_t n_changes = 0, kept = 0;
  slurmctld_lock_t job_read = {.job = READ_LOCK};
  api->lock(job_read);
  for (size_t i = 0; i < recorded_count; i++) {
    struct recorded r = recorded_jobs[i];
    job_record_t *job_ptr = api->find_job(r.job_id);
    bool suspended = job_ptr && IS_JOB_SUSPENDED(job_ptr);
    if (!job_ptr || (!suspended && !IS_JOB_RUNNING(job_ptr))) {
      changes[n_changes].job_id = r.job_id;
      changes[n_changes++].what = ENDED;
      continue;
    }
    if (suspended != r.suspended) {
      changes[n_changes].job_id = r.job_id;
      changes[n_changes++].what = suspended ? SUSPENDED : RESUMED;
      r.suspended = suspended;
    }
    recorded_jobs[kept++] = r;
  }
  recorded_count = kept;
  api->unlock(job_read);
  topo_engine_t *e = n_changes ? topo_shim_engine() : NULL;
  char msg[512];
  for (size_t i = 0; e && i < n_changes; i++) {
    if (changes[i].what == ENDED) {
      (void)topo_engine_job_ended(e, changes[i].job_id, msg, sizeof(msg));
    } else if (topo_engine_job_suspended(e, changes[i].job_id, changes[i].what == SUSPENDED, msg,
                                         sizeof(msg)) != TOPO_ENGINE_OK ||
               msg[0]) {
      info("JobId=%u: %s", changes[i].job_id, msg);
    }
  }
  xfree(changes);
}

/* --- after a restart: records the dead slurmctld did not write ------------------- */

/* A started topo-aware job as Slurm saved it, for topo_engine_recover. */
struct started {
  struct topo_engine_started job;
  size_t *ring, *nodes;
  bool running;
};

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

/* Once, on the writer's first round after slurmctld started (its job
 * state is loaded by then: slurmctld reads it under the locks this waits
 * for).  A job starts in the scheduler's pass and its record follows a
 * moment later, from this thread; a slurmctld that died in between
 * saved the job as started, with the ring hints its evaluation put into
 * its environment, but left no record.  Every started topo-aware job with
 * ring hints is handed to the engine, which records those whose run has
 * no record; the running ones are watched for their end again. */
static void recover_started(const struct ctld_api *api)
{
  struct started *jobs = NULL;
  size_t count = 0, room = 0;
  job_record_t *job_ptr;
  topo_list_itr_t *it;
  topo_engine_t *e = topo_shim_engine();
  slurmctld_lock_t read_jobs = {.job = READ_LOCK, .node = READ_LOCK, .part = READ_LOCK};
  char msg[512];
  if (!e)
    return;
  api->lock(read_jobs);
  topo_shim_engine_nodes(e);
  it = *api->job_list ? list_iterator_create(*api->job_list) : NULL;
  while (it && (job_ptr = list_next(it))) {
    bitstr_t *ran_on = job_ptr->node_bitmap;
    size_t *ring = NULL, ring_count;
    if (IS_JOB_PENDING(job_ptr) || !job_ptr->start_time)
      continue;
    if (!ran_on || !bit_set_count(ran_on))
      ran_on = job_ptr->node_bitmap_cg;
    if (!ran_on || !bit_set_count(ran_on) || !topo_shim_request(job_ptr, false, true).topo_aware)
      continue;
    if (!(ring_count = saved_ring(job_ptr, &ring))) {
      xfree(ring);
      continue;
    }
    if (count == room) {
      room = room ? 2 * room : 64;
      xrecalloc(jobs, room, sizeof(*jobs));
    }
    struct started *s = &jobs[count++];
    s->ring = ring;
    s->nodes = xcalloc(bit_set_count(ran_on) + 1, sizeof(size_t));
    for (int i = 0; next_node_bitmap(ran_on, &i); i++)
      s->nodes[s->job.allocated_count++] = (size_t)i;
    s->job.job = topo_shim_engine_job(job_ptr, &(struct topo_network_request){.topo_aware = true},
                                      job_ptr->node_cnt, job_ptr->node_cnt, job_ptr->node_cnt);
    s->job.job.request = topo_shim_request(job_ptr, false, true);
    s->job.ring = ring;
    s->job.ring_count = ring_count;
    s->job.allocated = s->nodes;
    s->job.started_at = (int64_t)job_ptr->start_time;
    s->job.fallback = topo_shim_env(job_ptr, "TOPO_FALLBACK") != NULL;
    s->running = IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr);
  }
  if (it)
    list_iterator_destroy(it);
  api->unlock(read_jobs);

  /* The running ones' traffic from their records (the engine starts with
   * none), then the records missing. */
  struct topo_engine_job *running = xcalloc(count + 1, sizeof(*running));
  size_t n_running = 0;
  for (size_t i = 0; i < count; i++)
    if (jobs[i].running)
      running[n_running++] = jobs[i].job.job;
  if (topo_engine_set_running(e, running, n_running, msg, sizeof(msg)) != TOPO_ENGINE_OK)
    error("%s (running jobs' traffic left out of placement)", msg);
  xfree(running);
  struct topo_engine_started *batch = xcalloc(count + 1, sizeof(*batch));
  for (size_t i = 0; i < count; i++)
    batch[i] = jobs[i].job;
  if (count && topo_engine_recover(e, batch, count, msg, sizeof(msg)) != TOPO_ENGINE_OK)
    error("%s: %s (records of jobs started before slurmctld restarted may be missing)", plugin_type,
          msg);
  size_t recovered = 0;
  for (size_t i = 0; i < count; i++) {
    if (batch[i].recorded) {
      recovered++;
      info(
          "JobId=%u: recorded after slurmctld restarted, from the ring it was given (it started "
          "before; its record had not been written)",
          batch[i].job.job_id);
    }
    if (jobs[i].running)
      recorded_add(batch[i].job.job_id);
    xfree(jobs[i].ring);
    xfree(jobs[i].nodes);
  }
  if (count)
    info("%s: %zu started topo-aware jobs checked after the restart, %zu recorded now", plugin_type,
         count, recovered);
  xfree(batch);
  xfree(jobs);
}

/* A test hook: while the file $TOPO_AWARE_HOLD_RECORDS names exists, the
 * writer records nothing, so tests/slurm/crash.sh can kill slurmctld
 * between jobs' start and their records, the window recover_started
 * closes.  Unset (as it is in production): never held. */
static bool records_held(void)
{
  static const char *path;
  static int looked;
  struct stat st;
  if (!looked) {
    path = getenv("TOPO_AWARE_HOLD_RECORDS");
    looked = 1;
  }
  return path && *path && stat(path, &st) == 0;
}

static void *writer_main(void *arg)
{
  (void)arg;
  const struct ctld_api *api = ctld();
  if (api)
    recover_started(api);
  for (;;) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 1;
    slurm_mutex_lock(&pending_lock);
    if (!writer_stop)
      pthread_cond_timedwait(&pending_cond, &pending_lock, &until);
    int stop = writer_stop, any = pending_count || ran_jobs;
    slurm_mutex_unlock(&pending_lock);
    if (stop)
      break;
    if (api && recorded_count)
      forget_ended(api);
    if (!any || !api || records_held())
      continue;
    struct pending *started = NULL;
    collect_started(api, &started);
    topo_engine_t *e = started ? topo_shim_engine() : NULL;
    while (started) {
      struct pending *p = started;
      started = p->next;
      write_record(e, p);
      /* Every record counts as running traffic until the job ends,
       * Slurm's own choices too. */
      recorded_add(p->job_id);
      pending_free(p);
    }
  }
  return NULL;
}

/* Started on the first evaluation (only slurmctld evaluates). */
static void writer_start(void)
{
  slurm_mutex_lock(&pending_lock);
  if (!writer_running && !writer_stop) {
    int rc = pthread_create(&writer_thread, NULL, writer_main, NULL);
    if (rc == 0)
      writer_running = 1;
    else
      error("%s: cannot start the placement writer: %s", plugin_type, strerror(rc));
  }
  slurm_mutex_unlock(&pending_lock);
}

static void writer_finish(void)
{
  slurm_mutex_lock(&pending_lock);
  writer_stop = 1;
  pthread_cond_broadcast(&pending_cond);
  int running = writer_running;
  slurm_mutex_unlock(&pending_lock);
  if (running)
    pthread_join(writer_thread, NULL);
  slurm_mutex_lock(&pending_lock);
  for (size_t b = 0; b <= PENDING_BUCKETS; b++) {
    struct pending **list = b < PENDING_BUCKETS ? &pending_jobs[b] : &ran_jobs;
    while (*list) {
      struct pending *p = *list;
      *list = p->next;
      pending_free(p);
    }
  }
  pending_count = 0;
  writer_running = 0;
  writer_stop = 0;
  slurm_mutex_unlock(&pending_lock);
}

/* --- evaluation ------------------------------------------------------------------ */

/* From 25.11 an evaluation may leave job data of the site's plugin
 * (block's segments) in job_ptr->topo_jobinfo, tagged with that plugin's
 * id: Slurm finds the functions that free and pack it by the id, among the
 * plugins it loaded, so it is tagged with this plugin's (whose jobinfo
 * functions forward).  A refused trial's is dropped before the next trial
 * (block expects none). */
static void tag_jobinfo(job_record_t *job_ptr)
{
#if TOPO_SLURM_TOPOLOGY_CTX
  if (job_ptr->topo_jobinfo)
    job_ptr->topo_jobinfo->plugin_id = plugin_id;
#else
  (void)job_ptr;
#endif
}

static void drop_jobinfo(job_record_t *job_ptr)
{
#if TOPO_SLURM_TOPOLOGY_CTX
  dynamic_plugin_data_t *info = job_ptr->topo_jobinfo;
  if (!info)
    return;
  if (info->data)
    slurms_own()->jobinfo_free(info->data);
  xfree(info);
  job_ptr->topo_jobinfo = NULL;
#else
  (void)job_ptr;
#endif
}

/* The site's evaluation (tree's, block's or flat's) of the job on
 * node_map as it stands. */
static int slurms_eval(topology_eval_t *ev)
{
  drop_jobinfo(ev->job_ptr);
  return slurms_own()->eval_nodes(ev);
}

/* --- the ring as Slurm's own task ranks (26.05) ----------------------------------- */

/* 26.05 lays a job's tasks out in the order of node ranks the topology
 * plugin gives (topology_p_get_rank, slurm_step_layout.c's
 * _task_layout_topo: tasks in blocks, nodes by rank), so SLURM_PROCID
 * follows that order.  cons_tres asks for the ranks with the job's nodes
 * only, right after the evaluation that chose them, in the same thread
 * (job_test.c: _job_test, when the job starts): the evaluation leaves the
 * ring it gave its job here, and get_rank ranks the nodes in that ring's
 * order when they are the ring's nodes.  Every evaluation replaces it, so
 * a plain job's nodes never get a topo-aware job's ring. */
#if TOPO_SLURM_TOPOLOGY_RANK
static __thread char *last_ring;
#endif

static void remember_ring(const char *ring)
{
#if TOPO_SLURM_TOPOLOGY_RANK
  xfree(last_ring);
  if (ring)
    last_ring = xstrdup(ring);
#else
  (void)ring;
#endif
}

/* The candidate's hosts in ring order, comma-separated (xmalloc'd). */
static char *ring_of(const struct topo_engine_candidate *c)
{
  char *ring = NULL;
  for (size_t h = 0; h < c->count; h++)
    xstrfmtcat(ring, "%s%s", h ? "," : "", node_record_table_ptr[c->nodes[h]]->name);
  return ring;
}

/* Whether node i can be part of any allocation: Slurm's own evaluation
 * drops a node without a CPU left for the job before it looks further
 * (common_topo_choose_nodes), so the engine is never offered one. */
static bool can_take_job(const topology_eval_t *ev, int i)
{
  const avail_res_t *res = ev->avail_res_array ? ev->avail_res_array[i] : NULL;
  return res && res->avail_cpus >= 1;
}

/* Restricts node_map to the candidate's offered nodes that can take the
 * job; false (node_map untouched) when fewer remain than the job needs,
 * so Slurm's evaluation, which would refuse it, is not called. */
static bool restrict_to(topology_eval_t *ev, bitstr_t *offered,
                        const struct topo_engine_candidate *cand)
{
  uint32_t usable = 0;
  for (size_t h = 0; h < cand->count; h++) {
    bitoff_t n = (bitoff_t)cand->nodes[h];
    if (bit_test(offered, n) && can_take_job(ev, (int)n))
      usable++;
  }
  if (usable < ev->min_nodes)
    return false;
  bit_clear_all(ev->node_map);
  for (size_t h = 0; h < cand->count; h++) {
    bitoff_t n = (bitoff_t)cand->nodes[h];
    if (bit_test(offered, n) && can_take_job(ev, (int)n))
      bit_set(ev->node_map, n);
  }
  return true;
}

/* The candidate's rows of the core map, copied before Slurm's evaluation
 * (restricted to those nodes, it touches no other row), and put back
 * after a refusal as Slurm's own retries put them back
 * (common_topo_choose_nodes: an evaluation only clears bits). */
static bitstr_t **save_rows(const topology_eval_t *ev, const struct topo_engine_candidate *cand)
{
  bitstr_t **rows = xcalloc(cand->count + 1, sizeof(bitstr_t *));
  for (size_t h = 0; h < cand->count; h++)
    if (ev->avail_core[cand->nodes[h]])
      rows[h] = bit_copy(ev->avail_core[cand->nodes[h]]);
  return rows;
}

static void restore_rows(topology_eval_t *ev, const struct topo_engine_candidate *cand,
                         bitstr_t **rows)
{
  for (size_t h = 0; h < cand->count; h++)
    if (rows[h]) {
      bit_or(ev->avail_core[cand->nodes[h]], rows[h]);
      FREE_NULL_BITMAP(rows[h]);
    }
  xfree(rows);
}

/* Tries the ranked candidates, best first, through Slurm's own evaluation
 * restricted to each; returns the index of the first that fits, or -1
 * with node_map and avail_core as they were.  A candidate that cannot fit
 * by count (a node Slurm would drop) is passed over without asking Slurm:
 * a refused evaluation costs two of Slurm's passes. */
static long try_candidates(topology_eval_t *ev, const struct topo_engine_ranking *ranking,
                           struct topo_shim_timing *spent)
{
  bitstr_t *offered = bit_copy(ev->node_map);
  uint32_t max_nodes = ev->max_nodes;
  long chosen = -1;
  for (size_t c = 0; c < ranking->count && chosen < 0; c++) {
    const struct topo_engine_candidate *cand = &ranking->candidates[c];
    if (!restrict_to(ev, offered, cand))
      continue;
    bitstr_t **rows = save_rows(ev, cand);
    uint64_t t0 = topo_shim_now_us();
    int rc = slurms_eval(ev);
    spent->trials++;
    spent->trial_us += topo_shim_now_us() - t0;
    if (rc == SLURM_SUCCESS) {
      chosen = (long)c;
      for (size_t h = 0; h < cand->count; h++)
        FREE_NULL_BITMAP(rows[h]);
      xfree(rows);
      break;
    }
    restore_rows(ev, cand, rows);
    drop_jobinfo(ev->job_ptr);
    ev->max_nodes = max_nodes;
  }
  if (chosen < 0)
    bit_copybits(ev->node_map, offered);
  FREE_NULL_BITMAP(offered);
  return chosen;
}

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
static bool starts_now(const topology_eval_t *ev, uint32_t gpus_per_node)
{
  if (!gpus_per_node)
    return false;
  for (int i = 0; next_node_bitmap(ev->node_map, &i); i++)
    if (can_take_job(ev, i) &&
        ev->avail_res_array[i]->avail_gpus > topo_shim_node_free_gpus(node_record_table_ptr[i]))
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

static int eval_topo_aware(topology_eval_t *ev, const struct topo_network_request *request,
                           struct topo_shim_timing *spent)
{
  job_record_t *job_ptr = ev->job_ptr;
  struct pending *entry = xmalloc(sizeof(*entry));
  int rc;
  topo_engine_t *e = topo_shim_engine();
  const char *waiting = "waiting (Strict=yes)";

  entry->job_id = job_ptr->job_id;
  entry->restarts = job_ptr->restart_cnt;
  entry->chosen = -1;
  entry->job = topo_shim_engine_job(job_ptr, request, ev->min_nodes, ev->max_nodes, ev->req_nodes);
  /* Asked only when deferring is on: it reads every offered node's GPUs. */
  if (!topo_engine_defers(e) || !starts_now(ev, entry->job.gpus_per_node))
    entry->job.time_limit_s = 0; /* never deferred */
  writer_start();
  if (!e) {
    snprintf(entry->why, sizeof(entry->why), "topo_aware.conf could not be read");
    goto own_choice;
  }
  if (ev->max_nodes == 1) {
    snprintf(entry->why, sizeof(entry->why), "%s", TOPO_SHIM_ONE_HOST);
    goto own_choice;
  }

  rc = rank(e, ev, entry, spent);
  if (rc != TOPO_ENGINE_OK) {
    /* DeferAbove= holds it back for a better moment: it waits, as a job
     * that does not fit. */
    if (rc == TOPO_ENGINE_DEFERRED) {
      waiting = "waiting";
      goto wait;
    }
    /* A busy cluster is no engine failure: the job waits like any other. */
    if (rc == TOPO_ENGINE_NO_PLACEMENT && topo_engine_strict(e))
      goto wait;
    goto own_choice;
  }

  entry->chosen = choose_candidate(e, ev, entry, spent);
  if (entry->chosen >= 0) {
    const struct topo_engine_candidate *c = &entry->ranking.candidates[entry->chosen];
    char *ring = ring_of(c);
    topo_shim_set_ring(job_ptr, ring, c->count, false);
    remember_ring(ring);
    topo_shim_set_hints(job_ptr, e, c->nodes, c->count);
    xfree(ring);
    entry->nodes = bit_copy(ev->node_map);
    pending_put(entry, job_ptr);
    return SLURM_SUCCESS;
  }
  snprintf(entry->why, sizeof(entry->why),
           "Slurm's evaluation accepted none of the %zu ranked candidates", entry->ranking.count);
  if (topo_engine_strict(e))
    goto wait;

own_choice:
  topo_engine_ranking_free(&entry->ranking);
  {
    uint64_t t0 = topo_shim_now_us();
    rc = slurms_eval(ev);
    spent->trials++;
    spent->trial_us += topo_shim_now_us() - t0;
  }
  if (rc != SLURM_SUCCESS) {
    pending_free(entry);
    return rc;
  }
  entry->nodes = bit_copy(ev->node_map);
  if (!set_one_host_ring(e, job_ptr, entry->nodes))
    set_fallback_ring(e, job_ptr, entry->nodes);
  pending_put(entry, job_ptr);
  return SLURM_SUCCESS;

wait:
  /* Slurm sets the pending reason itself after a failed evaluation, so
   * the why goes into the AdminComment. */
  {
    char note[500];
    snprintf(note, sizeof(note), "%s: %.400s", waiting, entry->why);
    topo_shim_note(job_ptr, note);
  }
  pending_free(entry);
  return SLURM_ERROR;
}

extern int topology_p_eval_nodes(topology_eval_t *topo_eval)
{
  struct topo_shim_timing spent = {0};
  uint64_t start = topo_shim_now_us(), cpu_start = topo_shim_cpu_now_us();
  int rc;
  struct topo_network_request request = topo_shim_request(topo_eval->job_ptr, false, true);
  remember_ring(NULL);
  if (request.topo_aware)
    rc = eval_topo_aware(topo_eval, &request, &spent);
  else
    rc = slurms_own()->eval_nodes(topo_eval);
  if (rc == SLURM_SUCCESS)
    tag_jobinfo(topo_eval->job_ptr);
  spent.cpu_us = topo_shim_cpu_now_us() - cpu_start;
  topo_shim_count("eval_nodes", request.topo_aware ? TOPO_PATH_TOPO_AWARE : TOPO_PATH_PLAIN,
                  topo_shim_now_us() - start, &spent);
  return rc;
}

#if TOPO_SLURM_TOPOLOGY_RANK
/* 26.05 places a one-node job node by node (cons_tres' _get_one_res asks
 * eval_node of each offered node until one fits), not through eval_nodes
 * (unless allow_one_node says no, which tree, block and flat never do).
 * A topo-aware job placed so gets what it gets on 24.11, where eval_nodes
 * hands a one-node job to Slurm: Slurm's node, its ring of one and its
 * record. */
extern int topology_p_eval_node(topology_eval_t *topo_eval, int node_inx)
{
  remember_ring(NULL);
  int rc = slurms_own()->eval_node(topo_eval, node_inx);
  if (rc != SLURM_SUCCESS)
    return rc;
  tag_jobinfo(topo_eval->job_ptr);
  struct topo_network_request request = topo_shim_request(topo_eval->job_ptr, false, true);
  if (!request.topo_aware)
    return rc;
  job_record_t *job_ptr = topo_eval->job_ptr;
  struct pending *entry = xmalloc(sizeof(*entry));
  entry->job_id = job_ptr->job_id;
  entry->restarts = job_ptr->restart_cnt;
  entry->chosen = -1;
  entry->job = topo_shim_engine_job(job_ptr, &request, 1, 1, 1);
  entry->job.time_limit_s = 0; /* never deferred */
  snprintf(entry->why, sizeof(entry->why), "%s", TOPO_SHIM_ONE_HOST);
  entry->nodes = bit_alloc(node_record_count);
  bit_set(entry->nodes, node_inx);
  writer_start();
  if (!set_one_host_ring(topo_shim_engine(), job_ptr, entry->nodes))
    set_fallback_ring(NULL, job_ptr, entry->nodes);
  pending_put(entry, job_ptr);
  return rc;
}

/* The ranks of the job's nodes (node_bitmap's order): the site's plugin's
 * (tree: by leaf switch; block: by block; flat: none unless asked), or,
 * when the latest evaluation in this thread gave a ring over exactly
 * these nodes, their ring positions.  A rank's upper bits
 * (TOPO_RANK_ID_SHIFT) name its topology unit, which stepmgr uses to start
 * a smaller step on a unit's first node: a unit is here a run of
 * consecutive ring hosts in one of the site plugin's units (a leaf), so
 * ranks still rise along the ring. */
extern int topology_p_get_rank(bitstr_t *node_bitmap, uint32_t **node_rank, uint32_t *size,
                               void *tctx)
{
  int rc = slurms_own()->get_rank(node_bitmap, node_rank, size, tctx);
  char *ring = last_ring;
  last_ring = NULL;
  if (rc != SLURM_SUCCESS || !ring || !node_bitmap) {
    xfree(ring);
    return rc;
  }
  uint32_t count = bit_set_count(node_bitmap);
  /* Ring position of each of the job's nodes, by node index. */
  int *position = xcalloc(node_record_count, sizeof(int));
  uint32_t placed = 0;
  char *save = NULL;
  for (int i = 0; i < node_record_count; i++)
    position[i] = -1;
  for (char *name = strtok_r(ring, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    node_record_t *node_ptr = find_node_record(name);
    if (node_ptr && bit_test(node_bitmap, node_ptr->index) && position[node_ptr->index] < 0)
      position[node_ptr->index] = (int)placed++;
  }
  xfree(ring);
  if (placed != count || count >= (1u << TOPO_RANK_ID_SHIFT)) {
    debug("%s: the ring names %u of the job's %u nodes; Slurm's own task order", plugin_type,
          placed, count);
    xfree(position);
    return rc;
  }
  /* by_position[p]: the job-node ordinal (node_bitmap's order) at ring
   * position p; its site unit from the site's ranks. */
  uint32_t *by_position = xcalloc(count, sizeof(uint32_t));
  uint32_t j = 0;
  for (int i = 0; next_node_bitmap(node_bitmap, &i); i++)
    by_position[position[i]] = j++;
  xfree(position);
  uint32_t *ranks = xcalloc(count, sizeof(uint32_t));
  bool units = *node_rank && *size == count;
  uint32_t segment = 0, unit = 0;
  for (uint32_t p = 0; p < count; p++) {
    uint32_t here = units ? (*node_rank)[by_position[p]] >> TOPO_RANK_ID_SHIFT : 0;
    if (p == 0 || here != unit)
      segment++;
    unit = here;
    ranks[by_position[p]] = (segment << TOPO_RANK_ID_SHIFT) | p;
  }
  xfree(by_position);
  xfree(*node_rank);
  *node_rank = ranks;
  *size = count;
  return rc;
}
#endif

/* --- the rest of the interface --------------------------------------------------- */

#if TOPO_SLURM_TOPOLOGY_CTX
/* Slurm reads it when it asks whether a topology can give whole units
 * (--exclusive=topo): the site's plugin's answer, set in init(). */
bool supports_exclusive_topo = false;
#endif

extern int init(void)
{
#if TOPO_SLURM_TOPOLOGY_CTX
  /* block's only (tree and flat give no whole units). */
  supports_exclusive_topo = !strcmp(slurms_own_type(), "topology/block");
#endif
  return SLURM_SUCCESS;
}

extern int fini(void)
{
  int rc = SLURM_SUCCESS;
  writer_finish();
  if (running_in_slurmctld())
    topo_shim_log_timing("eval_nodes");
  topo_shim_engine_close();
  slurm_mutex_lock(&slurm_lock);
  if (slurm_context) {
    __atomic_store_n(&slurm_loaded, 0, __ATOMIC_RELEASE);
    rc = plugin_context_destroy(slurm_context);
    slurm_context = NULL;
  }
  slurm_mutex_unlock(&slurm_lock);
  return rc;
}

/* slurmctld calls this at start-up (and a reconfigure restarts it): the
 * engine loads its snapshot now, not in the first job's evaluation.  From
 * 25.11 the site's plugin keeps its state in the topology's context
 * (tctx->plugin_ctx), which Slurm hands back to every later call: this
 * plugin keeps none there, so each call passes it on as it came. */
extern int topology_p_build_config(TOPO_TCTX_PARAM)
{
  int rc = slurms_own()->build_config(TOPO_TCTX_ARG);
  if (running_in_slurmctld()) {
    topo_shim_engine_prepare();
    /* Its first round checks the jobs that started before a restart. */
    writer_start();
  }
  return rc;
}

#if TOPO_SLURM_TOPOLOGY_CTX
extern int topology_p_destroy_config(topology_ctx_t *tctx)
{
  return slurms_own()->destroy_config(tctx);
}

extern int topology_p_add_rm_node(node_record_t *node_ptr, char *unit, topology_ctx_t *tctx)
{
  return slurms_own()->add_rm_node(node_ptr, unit, tctx);
}

extern void topology_p_get_topology_str(node_record_t *node_ptr, char **topology_str_ptr,
                                        topology_ctx_t *tctx)
{
  slurms_own()->get_topology_str(node_ptr, topology_str_ptr, tctx);
}

/* A job's topology data (block's segments) is the site's plugin's, tagged
 * with this plugin's id after each evaluation (tag_jobinfo). */
extern void topology_p_jobinfo_free(void *topo_jobinfo)
{
  slurms_own()->jobinfo_free(topo_jobinfo);
}

extern void topology_p_jobinfo_pack(void *topo_jobinfo, buf_t *buffer, uint16_t protocol_version)
{
  slurms_own()->jobinfo_pack(topo_jobinfo, buffer, protocol_version);
}

extern int topology_p_jobinfo_unpack(void **topo_jobinfo, buf_t *buffer, uint16_t protocol_version)
{
  return slurms_own()->jobinfo_unpack(topo_jobinfo, buffer, protocol_version);
}

extern int topology_p_jobinfo_get(topology_jobinfo_type_t type, void *topo_jobinfo, void *data)
{
  return slurms_own()->jobinfo_get(type, topo_jobinfo, data);
}
#endif

#if TOPO_SLURM_TOPOLOGY_RANK
extern bool topology_p_allow_one_node(void *tctx)
{
  return slurms_own()->allow_one_node(tctx);
}
#endif

extern int topology_p_whole_topo(bitstr_t *node_mask TOPO_CTX_PARAM)
{
  return slurms_own()->whole_topo(node_mask TOPO_CTX_ARG);
}

extern bitstr_t *topology_p_get_bitmap(char *name TOPO_CTX_PARAM)
{
  return slurms_own()->get_bitmap(name TOPO_CTX_ARG);
}

extern bool topology_p_generate_node_ranking(TOPO_TCTX_PARAM)
{
  return slurms_own()->node_ranking(TOPO_TCTX_ARG);
}

/* slurmd asks once at start-up, for SLURM_TOPOLOGY_ADDR of its jobs. */
extern int topology_p_get_node_addr(char *node_name, char **addr, char **pattern TOPO_CTX_PARAM)
{
  char msg[512];
  char *conf = get_extra_conf_path("topo_aware.conf");
  char *a = NULL, *p = NULL;
  int rc = topo_fabric_address(conf, node_name, &a, &p, msg, sizeof(msg));
  xfree(conf);
  if (rc == 0) {
    *addr = xstrdup(a);
    *pattern = xstrdup(p);
    free(a);
    free(p);
    return SLURM_SUCCESS;
  }
  debug("%s: %s; %s's address instead", plugin_type, msg, slurms_own_type());
  return slurms_own()->get_node_addr(node_name, addr, pattern TOPO_CTX_ARG);
}

extern int topology_p_split_hostlist(topo_hostlist_t *hl, topo_hostlist_t ***sp_hl, int *count,
                                     uint16_t tree_width TOPO_CTX_PARAM)
{
  return slurms_own()->split_hostlist(hl, sp_hl, count, tree_width TOPO_CTX_ARG);
}

extern int TOPO_P_TOPOINFO(free)(void *topoinfo_ptr)
{
  return slurms_own()->topoinfo_free(topoinfo_ptr);
}

extern int topology_p_get(topology_data_t type, void *data TOPO_CTX_PARAM)
{
  int rc = slurms_own()->get(type, data TOPO_CTX_ARG);
  /* Slurm packs the active plugin's id before the data and refuses data
   * tagged with another: what the site's plugin hands out is ours to pass
   * on. */
  if (rc == SLURM_SUCCESS && type == TOPO_DATA_TOPOLOGY_PTR) {
    dynamic_plugin_data_t **info = data;
    if (*info)
      (*info)->plugin_id = plugin_id;
  }
  return rc;
}

extern int TOPO_P_TOPOINFO(pack)(void *topoinfo_ptr, buf_t *buffer, uint16_t protocol_version)
{
  return slurms_own()->topoinfo_pack(topoinfo_ptr, buffer, protocol_version);
}

extern int TOPO_P_TOPOINFO(print)(void *topoinfo_ptr, char *nodes_list TOPO_UNIT_PARAM, char **out)
{
  return slurms_own()->topoinfo_print(topoinfo_ptr, nodes_list TOPO_UNIT_ARG, out);
}

extern int TOPO_P_TOPOINFO(unpack)(void **topoinfo_pptr, buf_t *buffer, uint16_t protocol_version)
{
  return slurms_own()->topoinfo_unpack(topoinfo_pptr, buffer, protocol_version);
}

extern uint32_t topology_p_get_fragmentation(bitstr_t *node_mask TOPO_CTX_PARAM)
{
  return slurms_own()->get_fragmentation(node_mask TOPO_CTX_ARG);
}

/* Never used: its initialiser makes the compiler check that every entry
 * point above has exactly the type topo_ops_t gives it, in the order of
 * topo_symbols. */
static const topo_ops_t own_entry_points __attribute__((unused)) = {
    (uint32_t *)&plugin_id,
#if TOPO_SLURM_TOPOLOGY_CTX
    (char *)plugin_type,
    &supports_exclusive_topo,
    topology_p_add_rm_node,
#endif
#if TOPO_SLURM_TOPOLOGY_RANK
    topology_p_allow_one_node,
#endif
    topology_p_build_config,
#if TOPO_SLURM_TOPOLOGY_CTX
    topology_p_destroy_config,
#endif
#if TOPO_SLURM_TOPOLOGY_RANK
    topology_p_eval_node,
#endif
    topology_p_eval_nodes,
    topology_p_whole_topo,
    topology_p_get_bitmap,
    topology_p_generate_node_ranking,
    topology_p_get_node_addr,
    topology_p_split_hostlist,
#if TOPO_SLURM_TOPOLOGY_CTX
    topology_p_get,
    TOPO_P_TOPOINFO(free),
#else
    TOPO_P_TOPOINFO(free),        topology_p_get,
#endif
    TOPO_P_TOPOINFO(pack),
    TOPO_P_TOPOINFO(print),
    TOPO_P_TOPOINFO(unpack),
#if TOPO_SLURM_TOPOLOGY_CTX
    topology_p_jobinfo_free,
    topology_p_jobinfo_pack,
    topology_p_jobinfo_unpack,
    topology_p_jobinfo_get,
#endif
    topology_p_get_fragmentation,
#if TOPO_SLURM_TOPOLOGY_CTX
    topology_p_get_topology_str,
#endif
#if TOPO_SLURM_TOPOLOGY_RANK
    topology_p_get_rank,
#endif
};
