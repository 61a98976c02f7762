#include "plugin/slurm/common/slurm_compat.h"

#include <string.h>

#include "plugin/slurm/topology_topo_aware/candidates.h"
#include "plugin/slurm/topology_topo_aware/site_plugin.h"

/* The candidate's hosts in ring order, comma-separated (xmalloc'd): one
 * allocation, sized first (a formatted append per host costs more than
 * the rest of a successful evaluation's bookkeeping). */
char *ring_of(const struct topo_engine_candidate *c)
{
  size_t size = 1;
  for (size_t h = 0; h < c->count; h++)
    size += strlen(node_record_table_ptr[c->nodes[h]]->name) + 1;
  char *ring = xmalloc(size), *end = ring;
  for (size_t h = 0; h < c->count; h++) {
    const char *name = node_record_table_ptr[c->nodes[h]]->name;
    size_t len = strlen(name);
    if (h)
      *end++ = ',';
    memcpy(end, name, len);
    end += len;
  }
  *end = '\0';
  return ring;
}

/* Whether node i can be part of any allocation: Slurm's own evaluation
 * drops a node without a CPU left for the job before it looks further
 * (common_topo_choose_nodes), so the engine is never offered one. */
bool can_take_job(const topology_eval_t *ev, int i)
{
  const avail_res_t *res = ev->avail_res_array ? ev->avail_res_array[i] : NULL;
  return res && res->avail_cpus >= 1;
}

/* Restricts node_map to the candidate's offered nodes that can take the
 * job; false (node_map untouched) when fewer remain than the job needs,
 * so Slurm's evaluation, which would refuse it, is not called. */
static bool restrict_to(topology_eval_t *ev, bitstr_t *offered,
                        const struct topo_engine_candidate *cand)
{
  uint32_t usable = 0;
  for (size_t h = 0; h < cand->count; h++) {
    bitoff_t n = (bitoff_t)cand->nodes[h];
    if (bit_test(offered, n) && can_take_job(ev, (int)n))
      usable++;
  }
  if (usable < ev->min_nodes)
    return false;
  bit_clear_all(ev->node_map);
  for (size_t h = 0; h < cand->count; h++) {
    bitoff_t n = (bitoff_t)cand->nodes[h];
    if (bit_test(offered, n) && can_take_job(ev, (int)n))
      bit_set(ev->node_map, n);
  }
  return true;
}

/* The candidate's rows of the core map, copied before Slurm's evaluation
 * (restricted to those nodes, it touches no other row), and put back
 * after a refusal as Slurm's own retries put them back
 * (common_topo_choose_nodes: an evaluation only clears bits). */
static bitstr_t **save_rows(const topology_eval_t *ev, const struct topo_engine_candidate *cand)
{
  bitstr_t **rows = xcalloc(cand->count + 1, sizeof(bitstr_t *));
  for (size_t h = 0; h < cand->count; h++)
    if (ev->avail_core[cand->nodes[h]])
      rows[h] = bit_copy(ev->avail_core[cand->nodes[h]]);
  return rows;
}

static void restore_rows(topology_eval_t *ev, const struct topo_engine_candidate *cand,
                         bitstr_t **rows)
{
  for (size_t h = 0; h < cand->count; h++)
    if (rows[h]) {
      bit_or(ev->avail_core[cand->nodes[h]], rows[h]);
      FREE_NULL_BITMAP(rows[h]);
    }
  xfree(rows);
}

/* Tries the ranked candidates, best first, through Slurm's own evaluation
 * restricted to each; returns the index of the first that fits, or -1
 * with node_map and avail_core as they were.  A candidate that cannot fit
 * by count (a node Slurm would drop) is passed over without asking Slurm:
 * a refused evaluation costs two of Slurm's passes. */
long try_candidates(topology_eval_t *ev, const struct topo_engine_ranking *ranking,
                    struct topo_shim_timing *spent)
{
  bitstr_t *offered = bit_copy(ev->node_map);
  uint32_t max_nodes = ev->max_nodes;
  long chosen = -1;
  for (size_t c = 0; c < ranking->count && chosen < 0; c++) {
    const struct topo_engine_candidate *cand = &ranking->candidates[c];
    if (!restrict_to(ev, offered, cand))
      continue;
    bitstr_t **rows = save_rows(ev, cand);
    uint64_t t0 = topo_shim_now_us();
    int rc = slurms_eval(ev);
    spent->trials++;
    spent->trial_us += topo_shim_now_us() - t0;
    if (rc == SLURM_SUCCESS) {
      chosen = (long)c;
      for (size_t h = 0; h < cand->count; h++)
        FREE_NULL_BITMAP(rows[h]);
      xfree(rows);
      break;
    }
    restore_rows(ev, cand, rows);
    drop_jobinfo(ev->job_ptr);
    ev->max_nodes = max_nodes;
  }
  if (chosen < 0)
    bit_copybits(ev->node_map, offered);
  FREE_NULL_BITMAP(offered);
  return chosen;
}
