#include "plugin/slurm/common/slurm_compat.h"

#include <string.h>

#include "plugin/slurm/topology_topo_aware/ring_rank.h"

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

void remember_ring(const char *ring)
{
#if TOPO_SLURM_TOPOLOGY_RANK
  xfree(last_ring);
  if (ring)
    last_ring = xstrdup(ring);
#else
  (void)ring;
#endif
}

#if TOPO_SLURM_TOPOLOGY_RANK
/* Ring position of each of the job's nodes, by node index (-1: not one of
 * them); how many of its nodes the ring names. */
static uint32_t ring_positions(char *ring, bitstr_t *node_bitmap, int *position)
{
  uint32_t placed = 0;
  char *save = NULL;
  for (int i = 0; i < node_record_count; i++)
    position[i] = -1;
  for (char *name = strtok_r(ring, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    node_record_t *node_ptr = find_node_record(name);
    if (node_ptr && bit_test(node_bitmap, node_ptr->index) && position[node_ptr->index] < 0)
      position[node_ptr->index] = (int)placed++;
  }
  return placed;
}

/* The ranks in ring order, replacing the site's (*node_rank, whose upper
 * bits give each node's unit). */
static void rank_by_ring(bitstr_t *node_bitmap, const int *position, uint32_t count,
                         uint32_t **node_rank, uint32_t *size)
{
  /* by_position[p]: the job-node ordinal (node_bitmap's order) at ring
   * position p; its site unit from the site's ranks. */
  uint32_t *by_position = xcalloc(count, sizeof(uint32_t));
  uint32_t j = 0;
  for (int i = 0; next_node_bitmap(node_bitmap, &i); i++)
    by_position[position[i]] = j++;
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
}

void rank_in_ring_order(bitstr_t *node_bitmap, uint32_t **node_rank, uint32_t *size)
{
  char *ring = last_ring;
  last_ring = NULL;
  if (!ring || !node_bitmap) {
    xfree(ring);
    return;
  }
  uint32_t count = bit_set_count(node_bitmap);
  int *position = xcalloc(node_record_count, sizeof(int));
  uint32_t placed = ring_positions(ring, node_bitmap, position);
  xfree(ring);
  if (placed == count && count < (1u << TOPO_RANK_ID_SHIFT))
    rank_by_ring(node_bitmap, position, count, node_rank, size);
  else
    debug("%s: the ring names %u of the job's %u nodes; Slurm's own task order", plugin_type,
          placed, count);
  xfree(position);
}
#endif
