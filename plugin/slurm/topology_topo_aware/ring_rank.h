/*
 * The ring as Slurm's own task ranks (26.05): the evaluation that chose a
 * job's nodes leaves its ring here, and get_rank, called right after it
 * in the same thread, ranks the job's nodes in that order.
 */
#ifndef TOPO_TOPOLOGY_RING_RANK_H
#define TOPO_TOPOLOGY_RING_RANK_H

#include <stdint.h>

/* This plugin's identity (topology_topo_aware.c). */
extern const char plugin_type[];
extern const uint32_t plugin_id;
/* Visible to this plugin's files only: a plugin's other globals would
 * otherwise be exported from the .so beside Slurm's entry points. */
#pragma GCC visibility push(hidden)

/* Replaces this thread's ring (NULL: none, as for a plain job). */
void remember_ring(const char *ring);
#if TOPO_SLURM_TOPOLOGY_RANK
/* When this thread's latest evaluation gave a ring over exactly the
 * nodes of node_bitmap: their ranks in ring order, replacing the site
 * plugin's (a rank's upper bits, TOPO_RANK_ID_SHIFT, name its unit: a run
 * of consecutive ring hosts in one of the site plugin's units, so ranks
 * still rise along the ring).  Otherwise the site's ranks stay.  Takes
 * the ring either way. */
void rank_in_ring_order(bitstr_t *node_bitmap, uint32_t **node_rank, uint32_t *size);
#endif

#pragma GCC visibility pop

#endif
