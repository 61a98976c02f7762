#include "plugin/slurm/common/slurm_compat.h"

#include <pthread.h>
#include <time.h>

#include "plugin/slurm/topology_topo_aware/pending.h"

/* By job id, in buckets: a burst queues hundreds of topo-aware jobs, and
 * each evaluation replaces its job's entry (a list walk under the lock
 * would cost every evaluation a cache miss per queued job). */
#define PENDING_BUCKETS 1024
static struct pending *pending_jobs[PENDING_BUCKETS];
static size_t pending_count;
/* Entries of jobs that started and were requeued before the writer saw
 * them run: recorded on its next round. */
static struct pending *ran_jobs;
/* The jobs whose entries were put since the evaluations last looked
 * (pending_take_started): the ones that may have started since. */
static uint32_t *fresh_ids;
static size_t fresh_count, fresh_size;
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pending_cond = PTHREAD_COND_INITIALIZER;
static int writer_stop;

void pending_free(struct pending *p)
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
/* Under pending_lock. */
static void note_fresh(uint32_t job_id)
{
  if (fresh_count == fresh_size) {
    fresh_size = fresh_size ? 2 * fresh_size : 16;
    xrecalloc(fresh_ids, fresh_size, sizeof(*fresh_ids));
  }
  fresh_ids[fresh_count] = job_id;
  __atomic_store_n(&fresh_count, fresh_count + 1, __ATOMIC_RELAXED);
}

void pending_put(struct pending *entry, job_record_t *job_ptr)
{
  struct pending **bucket = &pending_jobs[entry->job_id % PENDING_BUCKETS];
  slurm_mutex_lock(&pending_lock);
  note_fresh(entry->job_id);
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

enum entry_state { WAITING, GONE, RUNNING, RAN };

/* What became of the entry's job.  Under the job lock. */
static enum entry_state state_of(job_record_t *job_ptr, const struct pending *entry)
{
  /* Slurm keeps an ended job's node list; a job cancelled while pending
   * never had one, though it gets a start time (its end's). */
  bool allocated = job_ptr && job_ptr->nodes && job_ptr->nodes[0];
  if (!job_ptr || (IS_JOB_FINISHED(job_ptr) && !allocated))
    return GONE;
  /* Started, whether still running or already ended between two rounds
   * of the writer (short jobs do). */
  if (!IS_JOB_PENDING(job_ptr) && job_ptr->start_time && allocated)
    return RUNNING;
  /* Started and already requeued: pending again, with one restart more. */
  return job_ptr->restart_cnt > entry->restarts ? RAN : WAITING;
}

/* The node indices the started job runs on, into its entry.  Nodes leave
 * a completing job's node_bitmap one by one; the completing copy keeps
 * them.  A job that ended before the writer saw it may keep neither: its
 * latest evaluation's nodes are the ones its run-now test chose, so they
 * are recorded. */
static void set_started(struct pending *entry, job_record_t *job_ptr, bool running)
{
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
}

/* Moves the bucket's entries of jobs that have started to *started, with
 * their node indices; drops those of jobs that are gone.  Under the job
 * lock and pending_lock. */
static void collect_bucket(const struct ctld_api *api, struct pending **p, struct pending **started)
{
  while (*p) {
    struct pending *entry = *p;
    job_record_t *job_ptr = api->find_job(entry->job_id);
    enum entry_state state = state_of(job_ptr, entry);
    if (state == WAITING) {
      p = &entry->next;
      continue;
    }
    *p = entry->next;
    pending_count--;
    if (state == GONE) {
      pending_free(entry);
      continue;
    }
    set_started(entry, job_ptr, state == RUNNING);
    entry->next = *started;
    *started = entry;
  }
}

/* The fresh job's entry, if it started, out of its bucket.  Under the
 * job lock and pending_lock. */
static struct pending *take_if_started(const struct ctld_api *api, uint32_t job_id)
{
  for (struct pending **p = &pending_jobs[job_id % PENDING_BUCKETS]; *p; p = &(*p)->next) {
    struct pending *entry = *p;
    if (entry->job_id != job_id)
      continue;
    job_record_t *job_ptr = api->find_job(job_id);
    if (state_of(job_ptr, entry) != RUNNING || !IS_JOB_RUNNING(job_ptr))
      return NULL;
    *p = entry->next;
    pending_count--;
    set_started(entry, job_ptr, true);
    return entry;
  }
  return NULL;
}

void pending_take_started(const struct ctld_api *api, struct pending **started)
{
  /* Asked before every evaluation (26.05: of every node for a one-node
   * job): nothing new, no lock. */
  if (!__atomic_load_n(&fresh_count, __ATOMIC_RELAXED))
    return;
  slurm_mutex_lock(&pending_lock);
  for (size_t i = 0; i < fresh_count; i++) {
    struct pending *entry = take_if_started(api, fresh_ids[i]);
    if (entry) {
      entry->next = *started;
      *started = entry;
    }
  }
  __atomic_store_n(&fresh_count, 0, __ATOMIC_RELAXED);
  slurm_mutex_unlock(&pending_lock);
}

void pending_give_started(struct pending *started)
{
  if (!started)
    return;
  slurm_mutex_lock(&pending_lock);
  while (started) {
    struct pending *entry = started;
    started = entry->next;
    entry->next = ran_jobs;
    ran_jobs = entry;
  }
  pthread_cond_signal(&pending_cond);
  slurm_mutex_unlock(&pending_lock);
}

void pending_collect_started(const struct ctld_api *api, struct pending **started)
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

bool pending_wait(bool *any)
{
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 1;
  slurm_mutex_lock(&pending_lock);
  if (!writer_stop)
    pthread_cond_timedwait(&pending_cond, &pending_lock, &until);
  bool go_on = !writer_stop;
  *any = pending_count || ran_jobs;
  slurm_mutex_unlock(&pending_lock);
  return go_on;
}

void pending_stop(void)
{
  slurm_mutex_lock(&pending_lock);
  writer_stop = 1;
  pthread_cond_broadcast(&pending_cond);
  slurm_mutex_unlock(&pending_lock);
}

bool pending_stopping(void)
{
  slurm_mutex_lock(&pending_lock);
  bool stopping = writer_stop;
  slurm_mutex_unlock(&pending_lock);
  return stopping;
}

void pending_clear(void)
{
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
  fresh_count = 0;
  writer_stop = 0;
  slurm_mutex_unlock(&pending_lock);
}
