/*
 * The evaluation of a topo-aware job: the engine ranks host sets among
 * the nodes cons_tres offers, with the GPUs cons_tres counted free for
 * this job on each; each candidate is tried through the site's own
 * evaluation restricted to it, best first; the first that fits wins and
 * its ring goes into the job's environment.  None fits, or the engine
 * fails: the site's own choice and one log line why (Strict=yes and
 * DeferAbove=: the job waits instead, its AdminComment says why).
 */
#ifndef TOPO_TOPOLOGY_EVAL_H
#define TOPO_TOPOLOGY_EVAL_H

#include "plugin/slurm/common/network_option.h"
#include "plugin/slurm/common/shim_common.h"

/* Visible to this plugin's files only: a plugin's other globals would
 * otherwise be exported from the .so beside Slurm's entry points. */
#pragma GCC visibility push(hidden)

/* topology_p_eval_nodes for a topo-aware job; Slurm's return code. */
int eval_topo_aware(topology_eval_t *ev, const struct topo_network_request *request,
                    struct topo_shim_timing *spent);
/* A one-node topo-aware job the site's eval_node placed on node_inx
 * (26.05): its ring of one and its record, as on 24.11. */
void record_one_node(topology_eval_t *ev, int node_inx, const struct topo_network_request *request);

#pragma GCC visibility pop

#endif
