#include "plugin/slurm/common/slurm_compat.h"

#include "plugin/slurm/common/shim_common.h"
#include "plugin/slurm/topology_topo_aware/recover.h"
#include "plugin/slurm/topology_topo_aware/writer.h"

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

/* The job as Slurm saved it, when it is a started topo-aware job with
 * ring hints; false otherwise (nothing allocated). */
static bool saved_job(job_record_t *job_ptr, struct started *s)
{
  bitstr_t *ran_on = job_ptr->node_bitmap;
  if (IS_JOB_PENDING(job_ptr) || !job_ptr->start_time)
    return false;
  /* Nodes leave a completing job's node_bitmap; the completing copy keeps them. */
  if (!ran_on || !bit_set_count(ran_on))
    ran_on = job_ptr->node_bitmap_cg;
  struct topo_network_request request = topo_shim_request(job_ptr, false, true);
  if (!ran_on || !bit_set_count(ran_on) || !request.topo_aware)
    return false;
  size_t *ring = NULL, ring_count = saved_ring(job_ptr, &ring);
  if (!ring_count) {
    xfree(ring);
    return false;
  }
  *s = (struct started){0};
  s->ring = ring;
  s->nodes = xcalloc(bit_set_count(ran_on) + 1, sizeof(size_t));
  for (int i = 0; next_node_bitmap(ran_on, &i); i++)
    s->nodes[s->job.allocated_count++] = (size_t)i;
  s->job.job = topo_shim_engine_job(job_ptr, &(struct topo_network_request){.topo_aware = true},
                                    job_ptr->node_cnt, job_ptr->node_cnt, job_ptr->node_cnt);
  s->job.job.request = request;
  s->job.ring = ring;
  s->job.ring_count = ring_count;
  s->job.allocated = s->nodes;
  s->job.started_at = (int64_t)job_ptr->start_time;
  s->job.fallback = topo_shim_env(job_ptr, "TOPO_FALLBACK") != NULL;
  s->running = IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr);
  return true;
}

/* Every started topo-aware job with ring hints, under the job lock. */
static size_t collect_saved(const struct ctld_api *api, topo_engine_t *e, struct started **jobs)
{
  size_t count = 0, room = 0;
  struct started s;
  job_record_t *job_ptr;
  slurmctld_lock_t read_jobs = {.job = READ_LOCK, .node = READ_LOCK, .part = READ_LOCK};
  api->lock(read_jobs);
  topo_shim_engine_nodes(e);
  topo_list_itr_t *it = *api->job_list ? list_iterator_create(*api->job_list) : NULL;
  while (it && (job_ptr = list_next(it))) {
    if (!saved_job(job_ptr, &s))
      continue;
    if (count == room) {
      room = room ? 2 * room : 64;
      xrecalloc(*jobs, room, sizeof(**jobs));
    }
    (*jobs)[count++] = s;
  }
  if (it)
    list_iterator_destroy(it);
  api->unlock(read_jobs);
  return count;
}

/* The running ones' traffic from their records (the engine starts with
 * none). */
static void restore_running(topo_engine_t *e, const struct started *jobs, size_t count)
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

/* The records missing, written by the engine; the running jobs watched. */
static void record_missing(topo_engine_t *e, struct started *jobs, size_t count)
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
    if (batch[i].recorded) {
      recovered++;
      info(
          "JobId=%u: recorded after slurmctld restarted, from the ring it was given (it started "
          "before; its record had not been written)",
          batch[i].job.job_id);
    }
    if (jobs[i].running)
      writer_watch(batch[i].job.job_id);
  }
  if (count)
    info("%s: %zu started topo-aware jobs checked after the restart, %zu recorded now", plugin_type,
         count, recovered);
  xfree(batch);
}

/* A job starts in the scheduler's pass and its record follows a moment
 * later, from the writer thread; a slurmctld that died in between saved
 * the job as started, with the ring hints its evaluation put into its
 * environment, but left no record.  slurmctld reads its job state under
 * the locks collect_saved waits for. */
void recover_started(const struct ctld_api *api)
{
  topo_engine_t *e = topo_shim_engine();
  struct started *jobs = NULL;
  if (!e)
    return;
  size_t count = collect_saved(api, e, &jobs);
  restore_running(e, jobs, count);
  record_missing(e, jobs, count);
  for (size_t i = 0; i < count; i++) {
    xfree(jobs[i].ring);
    xfree(jobs[i].nodes);
  }
  xfree(jobs);
}
