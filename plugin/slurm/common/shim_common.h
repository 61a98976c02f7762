/*
 * What both placement shims (select/topo_cons_tres on 22.05,
 * topology/topo_aware on 24.05+) do to Slurm's job records, so that each
 * shim holds only the calls of its own interface:
 *
 *   the engine      opened on first use from topo_aware.conf beside
 *                   slurm.conf, re-read on reconfigure, never in init()
 *   the request     the job's --network, or the one Partitions= implies
 *   the ring hints  TOPO_RING_HOSTS / TOPO_RING_ORDER / TOPO_NNODES in the
 *                   job's supplemental environment (env_sup), which Slurm
 *                   merges into batch, salloc and srun allocations; the
 *                   SPANK plugin turns them into per-node and per-task ranks
 *   the short form  "topo-aware: ..." in the job's AdminComment
 *   the timing      per path (topo-aware, plain), logged every 100 tests
 *                   and on reconfigure
 *
 * Every function here runs in slurmctld only, under the scheduler's job
 * lock where it touches a job record.  Include slurm_compat.h first.
 */
#ifndef TOPO_PLUGIN_SHIM_COMMON_H
#define TOPO_PLUGIN_SHIM_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plugin/engine/engine.h"
#include "plugin/slurm/common/network_option.h"

/* Why a one-host job gets Slurm's own choice without asking the engine:
 * its ring is that host, and its traffic stays inside it, so there is
 * nothing for the engine to order or to keep off the fabric (26.05 skips
 * the topology evaluation for such jobs altogether).  The job is still
 * recorded, with its ring of one. */
#define TOPO_SHIM_ONE_HOST "one host: no ring to order and no cable to cross"

/* TOPO_RING_ORDER, comma-separated, is set for jobs of up to this many hosts. */
#define TOPO_RING_ORDER_MAX_HOSTS 512

/* The engine, opened on the first call (only slurmctld places jobs);
 * NULL when topo_aware.conf cannot be read (logged once; the next
 * reconfigure tries again). */
topo_engine_t *topo_shim_engine(void);
/* The engine speaks Slurm node indices: it learns the node table's names
 * here, at start-up and reconfigure, and again whenever the table's size
 * changed since (dynamic nodes); cheap when it did not. */
void topo_shim_engine_nodes(topo_engine_t *e);
/* Opens the engine if need be, gives it the node table and loads its
 * snapshot now (start-up). */
void topo_shim_engine_prepare(void);
/* scontrol reconfigure: re-reads topo_aware.conf (a bad file keeps the
 * running config, and says so) and reloads the snapshot. */
void topo_shim_engine_reconfigure(void);
void topo_shim_engine_close(void);
/* The job ended or left its nodes: its traffic no longer loads the fabric
 * the engine places new jobs on. A no-op while no engine is open. */
void topo_shim_job_ended(job_record_t *job_ptr);

/* The free GPU counts by node index that a rank call reads (-1: not
 * offered), in an array kept from call to call: evaluations allocate
 * nothing for it.  Slurm evaluates one job at a time (every caller holds
 * the node write lock); the array's own lock makes that sure.  Fill
 * node_record_count entries, rank, then give it back. */
int *topo_shim_free_gpus_take(void);
void topo_shim_free_gpus_give_back(void);

/* The job's request from its --network, or with Partitions= the implied
 * one; all zero when the string is not ours or is malformed (logged at
 * `error` when log_bad is set, else at debug: job_submit/topo_aware
 * refuses malformed strings, so one seen here predates it). */
struct topo_network_request topo_shim_request(job_record_t *job_ptr, bool log_bad,
                                              bool apply_partitions);

/* The engine's view of the job: host count and GPUs per host, its
 * segment (--network's segment=N, else Slurm's --segment), how long
 * it has waited since its submission and its time limit (none: 0, never
 * deferred). */
struct topo_engine_job topo_shim_engine_job(job_record_t *job_ptr,
                                            const struct topo_network_request *request,
                                            uint32_t min_nodes, uint32_t max_nodes,
                                            uint32_t req_nodes);

/* Free GPUs of a node as slurmctld counts them now. */
int topo_shim_node_free_gpus(node_record_t *node_ptr);

/* GPUs per node in a TRES string such as "gres:gpu:8", "gres/gpu:a100:4",
 * "gpu:2" or "gres:gpu" (1); 0 when it names no GPU. */
uint32_t topo_shim_gpus_in_tres(const char *tres);

/* Sets NAME=value in the job's supplemental environment, replacing an
 * earlier entry (a requeued job is placed again); NULL removes it. */
void topo_shim_set_env(job_record_t *job_ptr, const char *name, const char *value);
/* The ring hints for `count` hosts in ring order, comma-separated, and
 * TOPO_FALLBACK=1 when that ring is over Slurm's own choice of nodes
 * rather than the engine's; NULL ring removes them all. */
void topo_shim_set_ring(job_record_t *job_ptr, const char *ring, size_t count, bool fallback);
/* The job's NCCL hints (topo_engine_nccl_hints) for its hosts `nodes`
 * (node indices) as TOPO_HINT_<NAME> in its supplemental environment, for
 * spank/topo_aware to turn into NAME on each node where the job did not
 * set NAME itself (Slurm merges env_sup over the job's own environment, so
 * NAME itself would override the job's value).  Hints no longer given are
 * removed; no engine or no nodes removes them all. */
void topo_shim_set_hints(job_record_t *job_ptr, topo_engine_t *e, const size_t *nodes,
                         size_t count);
/* A job's supplemental environment value of NAME (NULL: not set). */
const char *topo_shim_env(job_record_t *job_ptr, const char *name);
/* "topo-aware: note" in the AdminComment, replacing our earlier one and
 * keeping whatever an admin wrote before it. */
void topo_shim_note(job_record_t *job_ptr, const char *note);

/* A started topo-aware job as Slurm saved it, for topo_engine_recover
 * after a restart: a job starts in the scheduler's pass and its record is
 * journaled a moment later by the engine's writer (24.x: by the shim's
 * writer thread), so a slurmctld that died in between saved the job as
 * started, with the ring hints its evaluation put into its environment,
 * but left no record. */
struct topo_shim_started {
  struct topo_engine_started job; /* ring and allocated point into the two below */
  size_t *ring, *nodes;
  bool running;   /* running or suspended: its traffic counts (but for a suspension) */
  bool suspended; /* suspended now */
};
/* The job as Slurm saved it, when it is a started topo-aware job with
 * ring hints; false otherwise (nothing allocated).  Free with
 * topo_shim_started_free. */
bool topo_shim_started_job(job_record_t *job_ptr, struct topo_shim_started *s);
void topo_shim_started_free(struct topo_shim_started *s);
/* The running ones' traffic (running set to them: the engine starts with
 * none), then the records missing, rebuilt by the engine (each
 * job.recorded set, and logged).  Asks the database: start-up only. */
void topo_shim_recover(topo_engine_t *e, struct topo_shim_started *jobs, size_t count);

/* Timing of placement tests, per path. */
enum topo_shim_path { TOPO_PATH_PLAIN, TOPO_PATH_TOPO_AWARE };
struct topo_shim_timing {
  uint64_t tests, total_us, max_us, cpu_us;
  uint64_t engine_us, trials, trial_us, record_us;
  uint64_t engine_cpu_us;    /* this thread's CPU in the rank calls timed for it */
  uint64_t engine_cpu_timed; /* how many rank calls that is (one in TOPO_SHIM_CPU_EVERY) */
  uint64_t ranked;           /* engine rank calls; the others were settled before it */
  uint64_t reused;           /* rank calls the engine answered from an earlier search */
};
uint64_t topo_shim_now_us(void);
/* This thread's CPU time: on a busy machine wall time also counts the
 * turns of other processes, which the plugin does not cost. */
uint64_t topo_shim_cpu_now_us(void);
/* Reading it is a system call (about 2 us on a virtual machine): a test
 * reads it at its start and end, and the engine's share is read around
 * one rank call in TOPO_SHIM_CPU_EVERY, so that the timing does not
 * weigh on the path it times.  Whether to time this rank call. */
#define TOPO_SHIM_CPU_EVERY 8
bool topo_shim_time_engine_cpu(void);
/* Adds one test to its path (`what` names the test in the log lines,
 * "job_test" or "eval_nodes"); spent->cpu_us is the test's CPU time. */
void topo_shim_count(const char *what, enum topo_shim_path path, uint64_t total_us,
                     const struct topo_shim_timing *spent);
/* Work of the path's done outside its tests (24.05+: handing a started
 * job's ring to the engine at the next evaluation, whichever job that
 * is): its time counts as the path's record time, and its CPU as the
 * path's, without a test more. */
void topo_shim_count_extra(enum topo_shim_path path, uint64_t total_us, uint64_t cpu_us);
/* Both paths' figures so far, one line each. */
void topo_shim_log_timing(const char *what);

#endif
