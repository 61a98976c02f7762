#include "plugin/slurm/common/slurm_compat.h"

#include <dlfcn.h>

#include "plugin/slurm/topology_topo_aware/ctld_api.h"

const struct ctld_api *ctld(void)
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
