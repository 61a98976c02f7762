/*
 * job_submit/topo_aware: rejects a malformed topo-aware --network at
 * submission, with a message that says what is allowed.
 *
 * The select plugin cannot do this itself.  At submission slurmctld runs
 * select_p_job_test only in test-only mode, only for jobs that pass every
 * earlier check (a held job, sbatch -H, returns ESLURM_JOB_HELD from
 * select_nodes() before the select plugin is asked), and a failure there
 * reaches the user as Slurm's generic "Requested node configuration is not
 * available".  job_submit plugins run for every submission before the job
 * exists, and their err_msg is printed by sbatch, salloc and srun.
 *
 * Enabled with JobSubmitPlugins=topo_aware in slurm.conf; loaded by
 * slurmctld only.
 */
#include "plugin/slurm/common/slurm_compat.h"

#include <stdint.h>

#include "plugin/slurm/common/network_option.h"

const char plugin_name[] = "Checks the topo-aware --network option";
const char plugin_type[] = "job_submit/topo_aware";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

extern int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg)
{
  struct topo_network_request request;
  char why[256];
  if (topo_network_parse(job_desc->network, &request, why, sizeof(why)) == 0)
    return SLURM_SUCCESS;
  info("rejected a job of uid %u: %s", submit_uid, why);
  if (err_msg)
    *err_msg = xstrdup_printf("invalid --network: %s", why);
  return SLURM_ERROR;
}

/* scontrol update can change a pending job's network.  The reason goes
 * to slurmctld's log, and to the user where the hook has a message
 * channel (24.x; 22.05 has none). */
extern int job_modify(TOPO_JOB_MODIFY_PARAMS)
{
  char **user_msg = TOPO_JOB_MODIFY_ERR_MSG;
  struct topo_network_request request;
  char why[256];
  if (!job_desc->network || topo_network_parse(job_desc->network, &request, why, sizeof(why)) == 0)
    return SLURM_SUCCESS;
  info("rejected an update of JobId=%u by uid %u: %s", job_ptr->job_id, submit_uid, why);
  if (user_msg)
    *user_msg = xstrdup_printf("invalid --network: %s", why);
  return SLURM_ERROR;
}
