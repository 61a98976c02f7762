/*
 * topology/topo_aware: topology-aware placement for Slurm 24.05 onwards.
 *
 * From 24.05 Slurm chooses a job's nodes in the topology plugin: cons_tres
 * works out what every node could give the job (topology_eval_t's
 * node_map, avail_res_array and avail_core) and asks
 * topology_g_eval_nodes() to pick.  That is where this plugin sits.
 *
 * Plain jobs get Slurm's own behaviour: topology/tree's when the site has
 * a topology.conf (`topoctl export` writes one from the fabric: leaves and
 * the spines above them), topology/default's (flat) otherwise.  That
 * plugin is loaded through Slurm's plugin context and every call of the
 * interface is forwarded to it, so its code is Slurm's, not a copy.
 *
 * A topo-aware job (--network=topo-aware..., or its partition in
 * topo_aware.conf's Partitions=): the engine (engine.h) ranks host sets
 * among the nodes cons_tres offers, with the GPUs cons_tres counted free
 * for this job on each; each candidate is tried through Slurm's own
 * evaluation restricted to it, best first; the first that fits wins, and
 * its ring order goes into the job's environment.  None fits: Slurm's own
 * choice over every offered node, and one log line saying why.
 *
 * eval_nodes has no mode argument: the same call serves run-now (the job
 * starts), test-only (at submission: could it ever run?) and will-run
 * (backfill's start-time plans).  Ranking inside the node map cons_tres
 * offers, with its free-GPU counts, is right in all three: in test-only
 * the map is the idle cluster, in will-run the planned future.  So:
 *   - the ring hints (env_sup) are set at every successful evaluation; the
 *     last one before a job starts is the run-now one, which made its
 *     allocation (salloc and srun read env_sup when the job starts);
 *   - the placement record and the AdminComment's short form are written
 *     when the job really starts, by a writer thread of slurmctld's
 *     (below), off the scheduler's path; an evaluation writes nothing;
 *   - Strict=yes means a topo-aware job runs only on a ranked candidate:
 *     a request no candidate meets on the idle cluster is refused at
 *     submission (the test-only evaluation fails), one the busy cluster
 *     cannot meet now waits (run-now fails; its AdminComment says why),
 *     and backfill plans it on candidates only.
 *
 * get_node_addr gives SLURM_TOPOLOGY_ADDR / _PATTERN from the fabric
 * ("pod1.leaf03.gpu017" / "pod.leaf.node") where slurmd can read the
 * snapshot database, and the forwarded plugin's address otherwise.
 *
 * slurmd, slurmstepd and every client command load topology plugins too:
 * init() does nothing, Slurm's plugin is loaded on the first call, the
 * engine opens on the first topo-aware evaluation (only slurmctld
 * evaluates; it also opens at start-up, in build_config), and the
 * slurmctld functions the writer needs are looked up at run time, so no
 * symbol of slurmctld's is needed to load this plugin.
 *
 * This file holds the interface only; each part is its own file here:
 *   site_plugin  the site's own plugin, which plain jobs get
 *   eval         a topo-aware job's evaluation; candidates: their trials
 *   ring_rank    the ring as Slurm's task ranks (26.05's get_rank)
 *   pending      evaluations waiting for their job to start
 *   writer       the thread that records them; recover: after a restart
 *   ctld_api     slurmctld's functions, looked up at run time
 */
#include "plugin/slurm/common/slurm_compat.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/node_conf.h"
#include "src/common/run_in_daemon.h"

#include "plugin/engine/engine.h"
#include "plugin/engine/fabric_address.h"
#include "plugin/slurm/common/network_option.h"
#include "plugin/slurm/common/shim_common.h"
#include "plugin/slurm/topology_topo_aware/eval.h"
#include "plugin/slurm/topology_topo_aware/ring_rank.h"
#include "plugin/slurm/topology_topo_aware/site_plugin.h"
#include "plugin/slurm/topology_topo_aware/writer.h"

/* Slurm's topology plugin ids are 100-104 (slurm.h); this one is ours. */
#define TOPOLOGY_PLUGIN_TOPO_AWARE 4208

const char plugin_name[] = "Topology-aware placement from the fabric snapshot";
const char plugin_type[] = "topology/topo_aware";
const uint32_t plugin_id = TOPOLOGY_PLUGIN_TOPO_AWARE;
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* --- Slurm's own topology plugin, which plain jobs get ----------------------- */

extern int topology_p_eval_nodes(topology_eval_t *topo_eval)
{
  writer_hand_over_started();
  struct topo_shim_timing spent = {0};
  uint64_t start = topo_shim_now_us(), cpu_start = topo_shim_cpu_now_us();
  int rc;
  struct topo_network_request request = topo_shim_request(topo_eval->job_ptr, false, true);
  remember_ring(NULL);
  if (request.topo_aware)
    rc = eval_topo_aware(topo_eval, &request, &spent);
  else
    rc = slurms_own()->eval_nodes(topo_eval);
  if (rc == SLURM_SUCCESS)
    tag_jobinfo(topo_eval->job_ptr);
  spent.cpu_us = topo_shim_cpu_now_us() - cpu_start;
  topo_shim_count("eval_nodes", request.topo_aware ? TOPO_PATH_TOPO_AWARE : TOPO_PATH_PLAIN,
                  topo_shim_now_us() - start, &spent);
  return rc;
}

#if TOPO_SLURM_TOPOLOGY_RANK
/* 26.05 places a one-node job node by node (cons_tres' _get_one_res asks
 * eval_node of each offered node until one fits), not through eval_nodes
 * (unless allow_one_node says no, which tree, block and flat never do).
 * A topo-aware job placed so gets what it gets on 24.11, where eval_nodes
 * hands a one-node job to Slurm: Slurm's node, its ring of one and its
 * record. */
extern int topology_p_eval_node(topology_eval_t *topo_eval, int node_inx)
{
  writer_hand_over_started();
  remember_ring(NULL);
  int rc = slurms_own()->eval_node(topo_eval, node_inx);
  if (rc != SLURM_SUCCESS)
    return rc;
  tag_jobinfo(topo_eval->job_ptr);
  struct topo_network_request request = topo_shim_request(topo_eval->job_ptr, false, true);
  if (!request.topo_aware)
    return rc;
  record_one_node(topo_eval, node_inx, &request);
  return rc;
}

/* The ranks of the job's nodes (node_bitmap's order): the site's plugin's
 * (tree: by leaf switch; block: by block; flat: none unless asked), or,
 * when the latest evaluation in this thread gave a ring over exactly
 * these nodes, their ring positions.  A rank's upper bits
 * (TOPO_RANK_ID_SHIFT) name its topology unit, which stepmgr uses to start
 * a smaller step on a unit's first node: a unit is here a run of
 * consecutive ring hosts in one of the site plugin's units (a leaf), so
 * ranks still rise along the ring. */
extern int topology_p_get_rank(bitstr_t *node_bitmap, uint32_t **node_rank, uint32_t *size,
                               void *tctx)
{
  int rc = slurms_own()->get_rank(node_bitmap, node_rank, size, tctx);
  if (rc == SLURM_SUCCESS)
    rank_in_ring_order(node_bitmap, node_rank, size);
  else
    remember_ring(NULL);
  return rc;
}
#endif

/* --- the rest of the interface --------------------------------------------------- */

#if TOPO_SLURM_TOPOLOGY_CTX
/* Slurm reads it when it asks whether a topology can give whole units
 * (--exclusive=topo): the site's plugin's answer, set in init(). */
bool supports_exclusive_topo = false;
#endif

extern int init(void)
{
#if TOPO_SLURM_TOPOLOGY_CTX
  /* block's only (tree and flat give no whole units). */
  supports_exclusive_topo = !strcmp(slurms_own_type(), "topology/block");
#endif
  return SLURM_SUCCESS;
}

extern int fini(void)
{
  writer_finish();
  if (running_in_slurmctld())
    topo_shim_log_timing("eval_nodes");
  topo_shim_engine_close();
  return slurms_own_unload();
}

/* slurmctld calls this at start-up (and a reconfigure restarts it): the
 * engine loads its snapshot now, not in the first job's evaluation.  From
 * 25.11 the site's plugin keeps its state in the topology's context
 * (tctx->plugin_ctx), which Slurm hands back to every later call: this
 * plugin keeps none there, so each call passes it on as it came. */
extern int topology_p_build_config(TOPO_TCTX_PARAM)
{
  int rc = slurms_own()->build_config(TOPO_TCTX_ARG);
  if (running_in_slurmctld()) {
    topo_shim_engine_prepare();
    /* Its first round checks the jobs that started before a restart. */
    writer_start();
  }
  return rc;
}

#if TOPO_SLURM_TOPOLOGY_CTX
extern int topology_p_destroy_config(topology_ctx_t *tctx)
{
  return slurms_own()->destroy_config(tctx);
}

extern int topology_p_add_rm_node(node_record_t *node_ptr, char *unit, topology_ctx_t *tctx)
{
  return slurms_own()->add_rm_node(node_ptr, unit, tctx);
}

extern void topology_p_get_topology_str(node_record_t *node_ptr, char **topology_str_ptr,
                                        topology_ctx_t *tctx)
{
  slurms_own()->get_topology_str(node_ptr, topology_str_ptr, tctx);
}

/* A job's topology data (block's segments) is the site's plugin's, tagged
 * with this plugin's id after each evaluation (tag_jobinfo). */
extern void topology_p_jobinfo_free(void *topo_jobinfo)
{
  slurms_own()->jobinfo_free(topo_jobinfo);
}

extern void topology_p_jobinfo_pack(void *topo_jobinfo, buf_t *buffer, uint16_t protocol_version)
{
  slurms_own()->jobinfo_pack(topo_jobinfo, buffer, protocol_version);
}

extern int topology_p_jobinfo_unpack(void **topo_jobinfo, buf_t *buffer, uint16_t protocol_version)
{
  return slurms_own()->jobinfo_unpack(topo_jobinfo, buffer, protocol_version);
}

extern int topology_p_jobinfo_get(topology_jobinfo_type_t type, void *topo_jobinfo, void *data)
{
  return slurms_own()->jobinfo_get(type, topo_jobinfo, data);
}
#endif

#if TOPO_SLURM_TOPOLOGY_RANK
extern bool topology_p_allow_one_node(void *tctx)
{
  return slurms_own()->allow_one_node(tctx);
}
#endif

extern int topology_p_whole_topo(bitstr_t *node_mask TOPO_CTX_PARAM)
{
  return slurms_own()->whole_topo(node_mask TOPO_CTX_ARG);
}

extern bitstr_t *topology_p_get_bitmap(char *name TOPO_CTX_PARAM)
{
  return slurms_own()->get_bitmap(name TOPO_CTX_ARG);
}

extern bool topology_p_generate_node_ranking(TOPO_TCTX_PARAM)
{
  return slurms_own()->node_ranking(TOPO_TCTX_ARG);
}

/* slurmd asks once at start-up, for SLURM_TOPOLOGY_ADDR of its jobs. */
extern int topology_p_get_node_addr(char *node_name, char **addr, char **pattern TOPO_CTX_PARAM)
{
  char msg[512];
  char *conf = get_extra_conf_path("topo_aware.conf");
  char *a = NULL, *p = NULL;
  int rc = topo_fabric_address(conf, node_name, &a, &p, msg, sizeof(msg));
  xfree(conf);
  if (rc == 0) {
    *addr = xstrdup(a);
    *pattern = xstrdup(p);
    free(a);
    free(p);
    return SLURM_SUCCESS;
  }
  debug("%s: %s; %s's address instead", plugin_type, msg, slurms_own_type());
  return slurms_own()->get_node_addr(node_name, addr, pattern TOPO_CTX_ARG);
}

extern int topology_p_split_hostlist(topo_hostlist_t *hl, topo_hostlist_t ***sp_hl, int *count,
                                     uint16_t tree_width TOPO_CTX_PARAM)
{
  return slurms_own()->split_hostlist(hl, sp_hl, count, tree_width TOPO_CTX_ARG);
}

extern int TOPO_P_TOPOINFO(free)(void *topoinfo_ptr)
{
  return slurms_own()->topoinfo_free(topoinfo_ptr);
}

extern int topology_p_get(topology_data_t type, void *data TOPO_CTX_PARAM)
{
  int rc = slurms_own()->get(type, data TOPO_CTX_ARG);
  /* Slurm packs the active plugin's id before the data and refuses data
   * tagged with another: what the site's plugin hands out is ours to pass
   * on. */
  if (rc == SLURM_SUCCESS && type == TOPO_DATA_TOPOLOGY_PTR) {
    dynamic_plugin_data_t **info = data;
    if (*info)
      (*info)->plugin_id = plugin_id;
  }
  return rc;
}

extern int TOPO_P_TOPOINFO(pack)(void *topoinfo_ptr, buf_t *buffer, uint16_t protocol_version)
{
  return slurms_own()->topoinfo_pack(topoinfo_ptr, buffer, protocol_version);
}

extern int TOPO_P_TOPOINFO(print)(void *topoinfo_ptr, char *nodes_list TOPO_UNIT_PARAM, char **out)
{
  return slurms_own()->topoinfo_print(topoinfo_ptr, nodes_list TOPO_UNIT_ARG, out);
}

extern int TOPO_P_TOPOINFO(unpack)(void **topoinfo_pptr, buf_t *buffer, uint16_t protocol_version)
{
  return slurms_own()->topoinfo_unpack(topoinfo_pptr, buffer, protocol_version);
}

extern uint32_t topology_p_get_fragmentation(bitstr_t *node_mask TOPO_CTX_PARAM)
{
  return slurms_own()->get_fragmentation(node_mask TOPO_CTX_ARG);
}

/* Never used: its initialiser makes the compiler check that every entry
 * point above has exactly the type topo_ops_t gives it, in the order of
 * topo_symbols. */
static const topo_ops_t own_entry_points __attribute__((unused)) = {
    (uint32_t *)&plugin_id,
#if TOPO_SLURM_TOPOLOGY_CTX
    (char *)plugin_type,
    &supports_exclusive_topo,
    topology_p_add_rm_node,
#endif
#if TOPO_SLURM_TOPOLOGY_RANK
    topology_p_allow_one_node,
#endif
    topology_p_build_config,
#if TOPO_SLURM_TOPOLOGY_CTX
    topology_p_destroy_config,
#endif
#if TOPO_SLURM_TOPOLOGY_RANK
    topology_p_eval_node,
#endif
    topology_p_eval_nodes,
    topology_p_whole_topo,
    topology_p_get_bitmap,
    topology_p_generate_node_ranking,
    topology_p_get_node_addr,
    topology_p_split_hostlist,
#if TOPO_SLURM_TOPOLOGY_CTX
    topology_p_get,
    TOPO_P_TOPOINFO(free),
#else
    TOPO_P_TOPOINFO(free),        topology_p_get,
#endif
    TOPO_P_TOPOINFO(pack),
    TOPO_P_TOPOINFO(print),
    TOPO_P_TOPOINFO(unpack),
#if TOPO_SLURM_TOPOLOGY_CTX
    topology_p_jobinfo_free,
    topology_p_jobinfo_pack,
    topology_p_jobinfo_unpack,
    topology_p_jobinfo_get,
#endif
    topology_p_get_fragmentation,
#if TOPO_SLURM_TOPOLOGY_CTX
    topology_p_get_topology_str,
#endif
#if TOPO_SLURM_TOPOLOGY_RANK
    topology_p_get_rank,
#endif
};
