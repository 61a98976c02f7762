#include "plugin/slurm/common/slurm_compat.h"

#include "plugin/slurm/common/shim_common.h"
#include "plugin/slurm/topology_topo_aware/recover.h"
#include "plugin/slurm/topology_topo_aware/writer.h"

/* Every started topo-aware job with ring hints, under the job lock. */
static size_t collect_saved(const struct ctld_api *api, topo_engine_t *e,
                            struct topo_shim_started **jobs)
{
  size_t count = 0, room = 0;
  struct topo_shim_started s;
  job_record_t *job_ptr;
  slurmctld_lock_t read_jobs = {.job = READ_LOCK, .node = READ_LOCK, .part = READ_LOCK};
  api->lock(read_jobs);
  topo_shim_engine_nodes(e);
  topo_list_itr_t *it = *api->job_list ? list_iterator_create(*api->job_list) : NULL;
  while (it && (job_ptr = list_next(it))) {
    if (!topo_shim_started_job(job_ptr, &s))
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

/* A job starts in the scheduler's pass and its record follows a moment
 * later, from the writer thread; a slurmctld that died in between saved
 * the job as started, with the ring hints its evaluation put into its
 * environment, but left no record.  slurmctld reads its job state under
 * the locks collect_saved waits for. */
void recover_started(const struct ctld_api *api)
{
  topo_engine_t *e = topo_shim_engine();
  struct topo_shim_started *jobs = NULL;
  if (!e)
    return;
  size_t count = collect_saved(api, e, &jobs);
  topo_shim_recover(e, jobs, count);
  for (size_t i = 0; i < count; i++)
    if (jobs[i].running)
      writer_watch(jobs[i].job.job.job_id);
  for (size_t i = 0; i < count; i++)
    topo_shim_started_free(&jobs[i]);
  xfree(jobs);
}
