/*
 * spank/topo_aware: the ring hints on every node of a topo-aware job.
 *
 * select/topo_cons_tres puts the job's hosts in ring order into its
 * environment (TOPO_RING_HOSTS, an order-keeping Slurm hostlist such as
 * "gpu[001-008,017-024]", TOPO_RING_ORDER for jobs of up to 512 hosts,
 * and TOPO_NNODES, through the job's
 * supplemental environment, which Slurm merges into the batch, salloc and
 * srun allocation environments; srun steps inherit it from there).  This
 * plugin turns that into what each node and task needs:
 *
 *   TOPO_NODE_RANK   this host's place in the ring order
 *   TOPO_NNODES      the number of hosts in the ring
 *   TOPO_RING_ORDER  the hosts in ring order, comma-separated (up to 512)
 *   TOPO_HOSTFILE    a file on this node with the hosts in ring order,
 *                    one a line: $TMPDIR (or /tmp)/topo-aware-<jobid>.hosts
 *
 * and per task (slurm_spank_task_init), for launchers that start one
 * process per GPU with the same task count on every node:
 *
 *   TOPO_LOCAL_RANK  the task's index on this node
 *   TOPO_RANK        TOPO_NODE_RANK * tasks on this node + TOPO_LOCAL_RANK:
 *                    the task's place in a ring that follows the hosts
 *
 * slurm_spank_user_init runs once per step on each node (in slurmstepd,
 * before the tasks start); what it sets there every task of the step
 * inherits.  A job without TOPO_RING_ORDER is left alone.
 *
 * Enabled with a line in plugstack.conf:
 *   optional /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_topo_aware.so
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

SPANK_PLUGIN(topo_aware, 1)

/* TOPO_RING_ORDER of the largest jobs: 64k hosts of up to 63 characters. */
#define RING_MAX (64 * 1024 * 64)
#define RING_ORDER_MAX_HOSTS 512

/* The ring, comma-separated, from TOPO_RING_HOSTS (Slurm's hostlist keeps
 * the order it was written in) or else TOPO_RING_ORDER; NULL when the job
 * has neither.  malloc'd. */
static char *job_ring(spank_t sp)
{
  char *buf = malloc(RING_MAX);
  if (!buf)
    return NULL;
  if (spank_getenv(sp, "TOPO_RING_HOSTS", buf, RING_MAX) == ESPANK_SUCCESS && buf[0]) {
    hostlist_t hl = slurm_hostlist_create(buf);
    char *host;
    size_t used = 0;
    int ok = hl != NULL;
    buf[0] = '\0';
    while (ok && (host = slurm_hostlist_shift(hl))) {
      size_t len = strlen(host);
      if (used + len + 2 > RING_MAX)
        ok = 0;
      else {
        if (used)
          buf[used++] = ',';
        memcpy(buf + used, host, len + 1);
        used += len;
      }
      free(host);
    }
    if (hl)
      slurm_hostlist_destroy(hl);
    if (ok && used)
      return buf;
  }
  if (spank_getenv(sp, "TOPO_RING_ORDER", buf, RING_MAX) == ESPANK_SUCCESS && buf[0])
    return buf;
  free(buf);
  return NULL;
}

/* The ring position of `host` in the comma-separated `ring`, or -1;
 * *count receives the number of hosts in the ring. */
static int ring_position(const char *ring, const char *host, int *count)
{
  int index = 0, found = -1;
  size_t host_len = strlen(host);
  const char *p = ring;
  *count = 0;
  while (*p) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == host_len && strncmp(p, host, len) == 0 && found < 0)
      found = index;
    if (len > 0)
      index++;
    if (!end)
      break;
    p = end + 1;
  }
  *count = index;
  return found;
}

/* Writes the hosts, one a line, to `path` atomically (a temporary file
 * renamed over it): steps of the same job on this node may race. */
static int write_hostfile(const char *path, const char *ring)
{
  char tmp[4096];
  if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
    return -1;
  int fd = mkstemp(tmp);
  if (fd < 0)
    return -1;
  FILE *f = fdopen(fd, "w");
  if (!f) {
    close(fd);
    unlink(tmp);
    return -1;
  }
  for (const char *p = ring; *p; p++)
    fputc(*p == ',' ? '\n' : *p, f);
  fputc('\n', f);
  if (fchmod(fd, 0644) != 0 || fclose(f) != 0) {
    unlink(tmp);
    return -1;
  }
  if (rename(tmp, path) != 0) {
    unlink(tmp);
    return -1;
  }
  return 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
  (void)ac;
  (void)av;
  if (spank_remote(sp) != 1)
    return ESPANK_SUCCESS;

  char *ring = job_ring(sp);
  if (!ring)
    return ESPANK_SUCCESS; /* not a topo-aware job */

  uint32_t job_id = 0;
  spank_get_item(sp, S_JOB_ID, &job_id);
  /* slurmstepd sets SLURMD_NODENAME in its own environment: the Slurm
   * NodeName, which is what the ring holds (hostname would not do where
   * several nodes share a host, or NodeHostname differs). */
  const char *node = getenv("SLURMD_NODENAME");
  if (!node || !*node) {
    slurm_error("topo_aware: job %u: SLURMD_NODENAME is not set; no ring hints", job_id);
    free(ring);
    return ESPANK_SUCCESS;
  }

  int count = 0;
  int rank = ring_position(ring, node, &count);
  char value[64];
  snprintf(value, sizeof(value), "%d", count);
  spank_setenv(sp, "TOPO_NNODES", value, 1);
  if (count <= RING_ORDER_MAX_HOSTS)
    spank_setenv(sp, "TOPO_RING_ORDER", ring, 1);
  if (rank >= 0) {
    snprintf(value, sizeof(value), "%d", rank);
    spank_setenv(sp, "TOPO_NODE_RANK", value, 1);
  } else {
    slurm_error("topo_aware: job %u: node %s is not in TOPO_RING_ORDER", job_id, node);
  }

  char tmpdir[1024], path[1200];
  if (spank_getenv(sp, "TMPDIR", tmpdir, sizeof(tmpdir)) != ESPANK_SUCCESS || tmpdir[0] != '/')
    strcpy(tmpdir, "/tmp");
  snprintf(path, sizeof(path), "%s/topo-aware-%u.hosts", tmpdir, job_id);
  if (write_hostfile(path, ring) == 0)
    spank_setenv(sp, "TOPO_HOSTFILE", path, 1);
  else
    slurm_error("topo_aware: job %u: cannot write %s: %s", job_id, path, strerror(errno));
  free(ring);
  return ESPANK_SUCCESS;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
  (void)ac;
  (void)av;
  char node_rank[32];
  if (spank_getenv(sp, "TOPO_NODE_RANK", node_rank, sizeof(node_rank)) != ESPANK_SUCCESS)
    return ESPANK_SUCCESS; /* not a topo-aware job, or this node is not in its ring */
  int local_id = 0;
  uint32_t local_count = 0;
  if (spank_get_item(sp, S_TASK_ID, &local_id) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local_count) != ESPANK_SUCCESS)
    return ESPANK_SUCCESS;
  char value[32];
  snprintf(value, sizeof(value), "%d", local_id);
  spank_setenv(sp, "TOPO_LOCAL_RANK", value, 1);
  snprintf(value, sizeof(value), "%ld", atol(node_rank) * (long)local_count + local_id);
  spank_setenv(sp, "TOPO_RANK", value, 1);
  return ESPANK_SUCCESS;
}
