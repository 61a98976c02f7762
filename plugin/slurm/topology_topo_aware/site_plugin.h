/*
 * The site's own topology plugin, which plain jobs get and which every
 * trial of a topo-aware job's candidates goes through: topology/block,
 * topology/tree or flat placement, chosen from topology.conf, loaded
 * through Slurm's plugin context and called, never copied.
 */
#ifndef TOPO_TOPOLOGY_SITE_PLUGIN_H
#define TOPO_TOPOLOGY_SITE_PLUGIN_H

/* This plugin's identity (topology_topo_aware.c). */
extern const char plugin_type[];
extern const uint32_t plugin_id;
/* Visible to this plugin's files only: a plugin's other globals would
 * otherwise be exported from the .so beside Slurm's entry points. */
#pragma GCC visibility push(hidden)

/* The interface of this release (slurm_compat.h). */
typedef topo_slurm_topology_ops_t topo_ops_t;

/* "topology/block", "topology/tree" or the release's flat plugin. */
const char *slurms_own_type(void);
/* Its entry points, loaded on the first call (fatal if it cannot be). */
const topo_ops_t *slurms_own(void);
/* fini: unloads it. */
int slurms_own_unload(void);

/* A successful evaluation's job data, tagged as this plugin's (whose
 * jobinfo functions forward to the site's). */
void tag_jobinfo(job_record_t *job_ptr);
/* A refused trial's job data, freed before the next trial. */
void drop_jobinfo(job_record_t *job_ptr);
/* The site's evaluation of the job on node_map as it stands. */
int slurms_eval(topology_eval_t *ev);

#pragma GCC visibility pop

#endif
