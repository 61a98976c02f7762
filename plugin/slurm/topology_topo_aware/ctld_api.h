/*
 * slurmctld's functions that the writer thread needs, looked up at run
 * time: every Slurm daemon and command loads this plugin, and only
 * slurmctld has them, so linking against them would stop the others
 * from loading it.
 */
#ifndef TOPO_TOPOLOGY_CTLD_API_H
#define TOPO_TOPOLOGY_CTLD_API_H

#include "src/slurmctld/locks.h"

/* This plugin's identity (topology_topo_aware.c). */
extern const char plugin_type[];
extern const uint32_t plugin_id;
/* Visible to this plugin's files only: a plugin's other globals would
 * otherwise be exported from the .so beside Slurm's entry points. */
#pragma GCC visibility push(hidden)

struct ctld_api {
  void (*lock)(slurmctld_lock_t);
  void (*unlock)(slurmctld_lock_t);
  job_record_t *(*find_job)(uint32_t);
  topo_list_t **job_list;
};

/* NULL outside slurmctld (or if it lacks them, which is logged). */
const struct ctld_api *ctld(void);

#pragma GCC visibility pop

#endif
