/*
 * After a slurmctld restart: the records the dead slurmctld did not write.
 */
#ifndef TOPO_TOPOLOGY_RECOVER_H
#define TOPO_TOPOLOGY_RECOVER_H

#include "plugin/slurm/topology_topo_aware/ctld_api.h"

/* Visible to this plugin's files only: a plugin's other globals would
 * otherwise be exported from the .so beside Slurm's entry points. */
#pragma GCC visibility push(hidden)

/* Once, on the writer's first round after slurmctld started (its job
 * state is loaded by then).  Every started topo-aware job with ring hints
 * is handed to the engine, which records those whose run has no record;
 * the running ones are watched for their end again. */
void recover_started(const struct ctld_api *api);

#pragma GCC visibility pop

#endif
