/*
 * The writer thread of slurmctld's: records each topo-aware job's
 * placement when the job really starts (an evaluation may be a test or a
 * backfill plan, and writes nothing), writes the AdminComment's short
 * form, and tells the engine when recorded jobs end or are suspended and
 * resumed (a topology plugin is not told).  Its first round, after a
 * restart, records the jobs the dead slurmctld started but did not record
 * (recover.h).  Off the scheduler's path: the database may take a while.
 */
#ifndef TOPO_TOPOLOGY_WRITER_H
#define TOPO_TOPOLOGY_WRITER_H

#include <stdint.h>

/* Visible to this plugin's files only: a plugin's other globals would
 * otherwise be exported from the .so beside Slurm's entry points. */
#pragma GCC visibility push(hidden)

/* Started on the first evaluation or at start-up (only slurmctld
 * evaluates); a no-op once running. */
void writer_start(void);
/* fini: stops it and drops every waiting placement. */
void writer_finish(void);
/* On an evaluation's thread, before it evaluates: the jobs evaluated
 * since the last call that Slurm started since count as running traffic
 * in the engine now; the writer records them a moment later. */
void writer_hand_over_started(void);
/* Watches a recorded job for its end, suspension and resumption; the
 * writer thread only. */
void writer_watch(uint32_t job_id);

#pragma GCC visibility pop

#endif
