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
  int rc = slurm_update_job(&update);
  if (rc != SLURM_SUCCESS) {
    printf("%s\n", slurm_strerror(errno));
    slurm_fini();
    return 1;
  }
  printf("ok\n");
  slurm_fini();
  return 0;
}
