/*
 * update_network JOBID NETWORK: changes a pending job's --network through
 * Slurm's update RPC, as an API client (pyslurm, slurmrestd) would; the
 * scontrol of 22.05 refuses "update network=" before sending anything, so
 * smoke.sh needs this to reach job_submit/topo_aware's job_modify().
 * Prints "ok" or Slurm's error, and exits 0 only on success.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s JOBID NETWORK\n", argv[0]);
    return 2;
  }
  char* end = NULL;
  unsigned long job_id = strtoul(argv[1], &end, 10);
  if (!*argv[1] || *end || job_id == 0 || job_id > 0xfffffffful) {
    fprintf(stderr, "%s: bad job id '%s'\n", argv[0], argv[1]);
    return 2;
  }
  slurm_init(NULL);
  job_desc_msg_t update;
  slurm_init_job_desc_msg(&update);
  /* slurmctld's update reads the id as a string (job_id_str) on every
   * release; 25.11 dropped the numeric job_id from job_desc_msg_t. */
  update.job_id_str = argv[1];
  update.network = argv[2];
  /* slurm_update_job2: the id is a string, which may name array tasks,
   * each with its own error code. */
  job_array_resp_msg_t *resp = NULL;
  int rc = slurm_update_job2(&update, &resp);
  int err = rc == SLURM_SUCCESS ? 0 : errno ? errno : SLURM_ERROR;
  for (uint32_t i = 0; !err && resp && i < resp->job_array_count; i++)
    if (resp->error_code[i])
      err = (int)resp->error_code[i];
  if (resp)
    slurm_free_job_array_resp(resp);
  if (err) {
    printf("%s\n", slurm_strerror(err));
    slurm_fini();
    return 1;
  }
  printf("ok\n");
  slurm_fini();
  return 0;
}
