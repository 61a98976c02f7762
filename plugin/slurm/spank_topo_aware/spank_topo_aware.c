/*
 * spank/topo_aware: the ring hints on every node of a topo-aware job.
 *
 * The placement shim (select/topo_cons_tres on Slurm 22.05,
 * topology/topo_aware from 24.05) puts the job's hosts in ring order into its
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
 * and the NCCL hint of this host, from its own hwloc data (so hosts of
 * different builds in one job each get theirs):
 *
 *   NCCL_IB_HCA      per step and node: the HCAs closest to the job's GPUs
 *                    on this host, in rail order; per task: the same with
 *                    the HCA of the task's GPU first (task i of a node
 *                    drives the i-th of the node's GPUs, modulo their
 *                    count).  A value the job set itself is kept.
 *
 * and the site's RoCE settings and the fabric's QP hint, which the
 * placement shim puts in the job's environment as TOPO_HINT_<NAME>
 * (topo_aware.conf's RoceGidIndex, RoceTrafficClass, SocketIfname,
 * RoceHca, EcmpQpsPerConnection: plugin/engine/engine.h), per step and node:
 *
 *   NCCL_IB_GID_INDEX, NCCL_IB_TC, NCCL_SOCKET_IFNAME,
 *   NCCL_IB_QPS_PER_CONNECTION   each from its TOPO_HINT_, unless the job
 *                    set it itself
 *   NCCL_IB_HCA      the site's RoceHca on a node whose hwloc data names
 *                    no HCA near the job's GPUs
 *
 * slurm_spank_user_init runs once per step on each node (in slurmstepd,
 * before the tasks start); what it sets there every task of the step
 * inherits.  A job without TOPO_RING_ORDER is left alone.
 *
 * Enabled with a line in plugstack.conf:
 *   optional /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_topo_aware.so [hwloc_xml=PATTERN]
 * hwloc_xml: read the host's hwloc data from an `lstopo --of xml` export
 * instead of the live machine; %n in PATTERN is the Slurm NodeName
 * (/etc/topo-aware/hwloc/%n.xml).  Without it hwloc reads the machine.
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

#include "plugin/engine/node_hcas.h"

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
    struct hostlist *hl = slurm_hostlist_create(buf);
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

/* This host's GPUs and HCAs, read in user_init (slurmstepd) and
 * inherited by the tasks it forks; NULL when unread or unreadable. */
static topo_node_hcas_t *node_hcas;
/* Whether NCCL_IB_HCA is ours to set (the job did not set it). */
static int hca_ours;

/* The hwloc_xml=PATTERN argument with %n replaced by `node`, or NULL. */
static char *hwloc_xml_path(int ac, char **av, const char *node)
{
  for (int i = 0; i < ac; i++) {
    if (strncmp(av[i], "hwloc_xml=", 10) != 0)
      continue;
    const char *pattern = av[i] + 10;
    size_t size = strlen(pattern) + 64 * strlen(node) + 1, used = 0;
    char *path = malloc(size);
    if (!path)
      return NULL;
    for (const char *p = pattern; *p && used + 1 < size; p++) {
      if (p[0] == '%' && p[1] == 'n') {
        size_t len = strlen(node);
        if (used + len + 1 >= size)
          break;
        memcpy(path + used, node, len);
        used += len;
        p++;
      } else {
        path[used++] = *p;
      }
    }
    path[used] = '\0';
    return path;
  }
  return NULL;
}

/* The GPU indices in a list such as "0,1,4" (SLURM_STEP_GPUS or
 * SLURM_JOB_GPUS); returns their count, at most max. */
static size_t parse_gpus(const char *text, int *gpus, size_t max)
{
  size_t n = 0;
  const char *p = text;
  while (*p && n < max) {
    char *end = NULL;
    long v = strtol(p, &end, 10);
    if (end == p)
      break;
    gpus[n++] = (int)v;
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',')
      break;
  }
  return n;
}

/* The job's GPUs on this node, as the step's environment lists them. */
static size_t job_gpus(spank_t sp, int *gpus, size_t max)
{
  char text[1024];
  if (spank_getenv(sp, "SLURM_STEP_GPUS", text, sizeof(text)) == ESPANK_SUCCESS && text[0])
    return parse_gpus(text, gpus, max);
  if (spank_getenv(sp, "SLURM_JOB_GPUS", text, sizeof(text)) == ESPANK_SUCCESS && text[0])
    return parse_gpus(text, gpus, max);
  return 0;
}

/* NAME from TOPO_HINT_<NAME> when the job has no NAME of its own; whether
 * NAME was set. */
static int site_hint(spank_t sp, const char *name)
{
  char hint_name[64], value[1024];
  snprintf(hint_name, sizeof(hint_name), "TOPO_HINT_%s", name);
  if (spank_getenv(sp, hint_name, value, sizeof(value)) != ESPANK_SUCCESS || !value[0])
    return 0;
  return spank_setenv(sp, name, value, 0) == ESPANK_SUCCESS;
}

/* NCCL_IB_HCA for this node (per step), from its hwloc data. */
static void set_node_hcas(spank_t sp, int ac, char **av, const char *node, uint32_t job_id)
{
  char value[1024], ours[1024], msg[512];
  /* A value the job set itself is kept.  Ours (TOPO_NCCL_IB_HCA says
   * which) reaches a step from the batch script's environment, and is
   * replaced by this node's. */
  if (spank_getenv(sp, "NCCL_IB_HCA", value, sizeof(value)) == ESPANK_SUCCESS &&
      (spank_getenv(sp, "TOPO_NCCL_IB_HCA", ours, sizeof(ours)) != ESPANK_SUCCESS ||
       strcmp(value, ours) != 0))
    return;
  char *xml = hwloc_xml_path(ac, av, node);
  if (!node_hcas && topo_node_hcas_read(xml, &node_hcas, msg, sizeof(msg)) != 0) {
    if (site_hint(sp, "NCCL_IB_HCA"))
      slurm_info("topo_aware: job %u: the site's NCCL_IB_HCA on %s: %s", job_id, node, msg);
    else
      slurm_info("topo_aware: job %u: no NCCL_IB_HCA on %s: %s", job_id, node, msg);
    free(xml);
    return;
  }
  free(xml);
  int gpus[256];
  size_t n = job_gpus(sp, gpus, sizeof(gpus) / sizeof(gpus[0]));
  char *hcas = topo_node_hcas_value(node_hcas, gpus, n, -1);
  if (hcas) {
    spank_setenv(sp, "NCCL_IB_HCA", hcas, 1);
    spank_setenv(sp, "TOPO_NCCL_IB_HCA", hcas, 1);
    hca_ours = 1;
  } else {
    site_hint(sp, "NCCL_IB_HCA");
  }
  free(hcas);
}

/* The site's and the fabric's NCCL settings (TOPO_HINT_<NAME>) that the
 * job did not set itself. */
static void set_site_hints(spank_t sp)
{
  static const char *const names[] = {"NCCL_IB_GID_INDEX", "NCCL_IB_TC", "NCCL_SOCKET_IFNAME",
                                      "NCCL_IB_QPS_PER_CONNECTION"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    site_hint(sp, names[i]);
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
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
  set_node_hcas(sp, ac, av, node, job_id);
  set_site_hints(sp);
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

  /* The task's own GPU's rail first. */
  int gpus[256];
  size_t n = hca_ours ? job_gpus(sp, gpus, sizeof(gpus) / sizeof(gpus[0])) : 0;
  /* No GPU list in the environment: the host's GPUs, in order. */
  for (size_t i = 0; hca_ours && !n && i < topo_node_hcas_gpu_count(node_hcas) && i < 256; i++)
    gpus[i] = (int)i;
  if (hca_ours && !n)
    n = topo_node_hcas_gpu_count(node_hcas) < 256 ? topo_node_hcas_gpu_count(node_hcas) : 256;
  if (n) {
    char *hcas = topo_node_hcas_value(node_hcas, gpus, n, gpus[(size_t)local_id % n]);
    if (hcas) {
      spank_setenv(sp, "NCCL_IB_HCA", hcas, 1);
      spank_setenv(sp, "TOPO_NCCL_IB_HCA", hcas, 1);
    }
    free(hcas);
  }
  return ESPANK_SUCCESS;
}
