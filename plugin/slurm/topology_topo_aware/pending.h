/*
 * Placements waiting for their job to start: every evaluation of a
 * topo-aware job leaves its latest result here, and the writer thread
 * (writer.h) takes those of jobs that started, to record them off the
 * scheduler's path.  Thread-safe: evaluations put, the writer collects.
 */
#ifndef TOPO_TOPOLOGY_PENDING_H
#define TOPO_TOPOLOGY_PENDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plugin/engine/engine.h"
#include "plugin/slurm/topology_topo_aware/ctld_api.h"

/* Visible to this plugin's files only: a plugin's other globals would
 * otherwise be exported from the .so beside Slurm's entry points. */
#pragma GCC visibility push(hidden)

/* The latest evaluation of each topo-aware job, until the job starts (the
 * writer records it) or is gone. */
struct pending {
  uint32_t job_id;
  struct topo_engine_job job;
  struct topo_engine_ranking ranking; /* owned; empty for Slurm's own choice */
  long chosen;                        /* candidate index, -1: Slurm's own choice */
  bitstr_t *nodes;                    /* what the evaluation chose */
  char why[400];                      /* for Slurm's own choice */
  uint16_t restarts;                  /* the job's restart count then */
  size_t *allocated;                  /* at start: the job's node indices */
  size_t allocated_count;
  bool same_nodes; /* at start: Slurm allocated `nodes` */
  struct pending *next;
};

void pending_free(struct pending *p);
/* Replaces the job's entry (the latest evaluation is the one that counts).
 * An entry the job has run on since (it was requeued before the writer
 * saw it run) goes to the writer instead. */
void pending_put(struct pending *entry, job_record_t *job_ptr);
/* Moves the entries of jobs that have started to *started, with their
 * node indices, and drops those of jobs that are gone.  Takes the job
 * lock. */
void pending_collect_started(const struct ctld_api *api, struct pending **started);

/* The entries of jobs evaluated since the last call that Slurm has
 * started since, with their node indices, to *started (the evaluations'
 * thread, which holds the job lock: a job starts right after the
 * evaluation that chose its nodes, under the same lock).  Give them to
 * the writer afterwards with pending_give_started, which wakes it. */
void pending_take_started(const struct ctld_api *api, struct pending **started);
void pending_give_started(struct pending *started);

/* The writer's wait: up to a second, or until a new entry or a stop.
 * False once told to stop; *any says whether entries wait. */
bool pending_wait(bool *any);
/* Tells the writer to stop (fini). */
void pending_stop(void);
bool pending_stopping(void);
/* After the writer stopped: frees every entry and allows a new start. */
void pending_clear(void);

#pragma GCC visibility pop

#endif
