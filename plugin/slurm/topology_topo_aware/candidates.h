/*
 * Trying the engine's candidates through the site plugin's own evaluation,
 * restricted to each, best first: Slurm's code decides whether a
 * candidate fits (cores, memory, GRES), the engine only in which order
 * they are asked.
 */
#ifndef TOPO_TOPOLOGY_CANDIDATES_H
#define TOPO_TOPOLOGY_CANDIDATES_H

#include <stdbool.h>

#include "plugin/engine/engine.h"
#include "plugin/slurm/common/shim_common.h"

/* Visible to this plugin's files only: a plugin's other globals would
 * otherwise be exported from the .so beside Slurm's entry points. */
#pragma GCC visibility push(hidden)

/* The candidate's hosts in ring order, comma-separated (xmalloc'd). */
char *ring_of(const struct topo_engine_candidate *c);
/* Whether node i can be part of any allocation (a CPU left for the job). */
bool can_take_job(const topology_eval_t *ev, int i);
/* The index of the first ranked candidate the site's evaluation accepts
 * (node_map then holds its nodes), or -1 with node_map and avail_core as
 * they were. */
long try_candidates(topology_eval_t *ev, const struct topo_engine_ranking *ranking,
                    struct topo_shim_timing *spent);

#pragma GCC visibility pop

#endif
