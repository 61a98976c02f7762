/*
 * The placement engine as the Slurm plugins call it: a C ABI over the C++
 * libraries (placement, comm_model, topology, db).  Hosts are Slurm node
 * indices (node_record_table_ptr order) from end to end: the node table is
 * given once, and every later call speaks in indices.
 *
 *   topo_engine_t *e;
 *   topo_engine_open("/etc/slurm/topo_aware.conf", &e, msg, sizeof msg);
 *   topo_engine_set_nodes(e, names, node_record_count, msg, sizeof msg);
 *   topo_engine_prepare(e, msg, sizeof msg);             (start-up, reconfigure)
 *   ... per run-now test of a topo-aware job:
 *   topo_engine_rank(e, &job, free_gpus, node_record_count, &ranking, msg, sizeof msg);
 *   ... try ranking.candidates[i].nodes with cons_tres, best first; none
 *       taken and ranking.more: rank again with job.all_candidates ...
 *   topo_engine_record(e, &job, &ranking, chosen, allocated, n_alloc, why, &ring, &hca, msg, sizeof msg);
 *   topo_engine_ranking_free(&ranking);
 *
 * Every entry point catches everything: no C++ exception crosses into
 * Slurm.  A failure returns a topo_engine_status other than TOPO_ENGINE_OK
 * and one line in `msg` (always terminated when msg_size > 0) that the
 * caller logs before falling back to cons_tres.
 *
 * topo_aware.conf, beside slurm.conf; `Key=Value` a line, `#` comments,
 * keys case-insensitive:
 *   DbPath=/var/lib/topo-aware/topo.db   the snapshot database
 *   HostPattern=REGEX     maps a Slurm NodeName to the fabric's host name:
 *                         the first capture group of a full match (names
 *                         that do not match are used as they are); POSIX
 *                         extended syntax (common/host_naming.h)
 *   Weights=leaf=100,pressure=10,...   objective weights (placement/objective.h)
 *   DefaultProfile=allreduce|alltoall|mixed|none   for jobs that name none
 *   Strict=yes|no         no candidate accepted: keep the job pending (yes)
 *                         or give it cons_tres's choice (no, the default)
 *   Partitions=a,b        every job of these partitions is placed as if it
 *                         asked for --network=topo-aware
 *   Candidates=8          how many ranked host sets are tried
 *   DeferAbove=1.10       a job whose best placement now is estimated more
 *                         than this many times slower than its best on the
 *                         idle fabric waits for a later scheduling pass
 *                         (placement/defer.h); 0, the default, never
 *   DeferShare=1          for at most this share of its time limit, then
 *                         it takes the best it has; a job without a time
 *                         limit is never deferred
 *   HealthErrorsPerHour=10   a cable whose two ends' error counters
 *                         (SymbolErrorCounter, LinkErrorRecoveryCounter,
 *                         LinkDownedCounter, PortRcvErrors, PortXmitDiscards)
 *                         grow by this many per hour between the last two
 *                         `topoctl health --collect` counts as degraded
 *   HealthXmitWaitShare=0.10   likewise a cable that waited to transmit
 *                         (PortXmitWait) this share of the time, either way
 *   HealthPausesPerSecond=1000   a RoCE NIC that received or sent this
 *                         many PFC/pause frames per second between the last
 *                         two `topoctl health --ethtool` collections (a
 *                         pause storm) marks its cable degraded
 *   HealthEcnOverMedian=10   likewise a NIC receiving ECN-marked RoCE
 *                         packets (np_ecn_marked_roce_packets) more than
 *                         this many times the median of its tier's NICs,
 *   HealthEcnMarksPerSecond=1000   and at least this many per second
 * and the site's NCCL settings for RoCE, which every topo-aware job gets
 * (topo_engine_nccl_hints; each unset by default, NCCL then picks):
 *   RoceGidIndex=3        NCCL_IB_GID_INDEX: the GID table index of the
 *                         NICs' RoCEv2 address (`show_gids`), 0-255
 *   RoceTrafficClass=106  NCCL_IB_TC: the traffic class of the lossless
 *                         queue (DSCP x 4, e.g. DSCP 26 is 104, plus ECN
 *                         bits as the site's switches expect), 0-255
 *   SocketIfname=^docker,lo   NCCL_SOCKET_IFNAME: NCCL's bootstrap
 *                         interfaces, in NCCL's syntax
 *   RoceHca=^mlx5_bond_0  NCCL_IB_HCA on a node whose hwloc data names no
 *                         HCA near the job's GPUs (where it does, that
 *                         node's own HCAs win)
 *   EcmpQpsPerConnection=4   NCCL_IB_QPS_PER_CONNECTION for a job whose
 *                         ring crosses leaves when the snapshot routes
 *                         ecmp:QPS with fewer QPS (engine_config.h says
 *                         why 4); 0 never sets it
 * and the routes for the running jobs (plugin/engine/route_writer.h; off
 * unless RouteJobs=yes):
 *   RouteJobs=yes         a thread of the engine's plans forwarding tables
 *                         for the running multi-leaf jobs' rings from the
 *                         snapshot's static tables and writes them for
 *                         OpenSM's file engine when a job starts or ends
 *                         and when a newer snapshot is loaded
 *   RouteFile=/etc/opensm/job-routes.lfts   the file OpenSM's -U names
 *                         (absolute; required with RouteJobs=yes)
 *   RouteInterval=30      at most one apply per this many seconds
 *   RouteCommand=CMD      run by /bin/sh after each write, e.g.
 *                         kill -HUP $(pidof opensm) (a heavy sweep that
 *                         re-reads the file); non-zero: the file is put back
 *   RouteCommandTimeout=60  seconds a RouteCommand may run (1-3600);
 *                         longer: killed, the file is put back
 *   RouteMaxChanges=0     table entries a plan may change (0: no cap)
 * A value the job set in its own environment is kept: the shims put the
 * hints in as TOPO_HINT_<NAME>, and spank/topo_aware sets NAME from it on
 * each node only when the job did not.
 * A missing file means defaults (open says so in msg); a bad line is an
 * error naming file:line.
 *
 * The node map.  Slurm node index -> fabric host is built once per node
 * table, snapshot and config: HostPattern and the fabric's host names are
 * looked up then, never per call.  Once prepare has run, a thread of the
 * engine's asks the database for its newest snapshot id once a second
 * (prepare asks every time; before any prepare a rank call asks, at most
 * once a second), and the fabric view and the map are rebuilt only when it
 * changed, so a new `topoctl discover --db` is picked up within a second
 * without restarting slurmctld, and the database costs a placement nothing.
 *
 * Repeated questions.  Slurm evaluates a pending job again every pass and
 * queues jobs of one shape together: a rank call whose question (hosts,
 * GPUs per host, request, the free GPUs of every fabric host) was answered
 * since the running traffic, the snapshot, the config or the node table
 * last changed gets that answer again without a search
 * (ranking.answered_before).  When the usable offered hosts are exactly
 * as many as the job needs, that one set is ringed and scored.
 *
 * Placement records never touch the disk inside a call.  record() hands
 * the record to the engine's writer thread, which words the placement's
 * reasons, appends it to a journal beside the database (DbPath +
 * ".journal-0" and "-1", db/placement_journal.h: one line, one write(2) to
 * an O_APPEND file, at once when it wakes), syncs the journal, moves its
 * lines into the database, then empties it.  Appends never wait for that
 * sync (it works on the other file of the two).  A journal left by a crash
 * is replayed when the engine next opens the database (prepare, or the
 * first rank); a line already in the database (same job, time, hosts and
 * ring) is not added again.  A slurmctld killed between record() and the
 * writer's append loses that record, but Slurm saved the job as started
 * with the ring hints the shim put in its environment: after the restart
 * the shims rebuild it from those (topo_engine_recover).  A machine crash
 * may lose what the writer had not yet synced (milliseconds), as Slurm's
 * own state.
 *
 * Calls are serialised inside the engine; the writer thread takes no lock
 * a call waits on while it writes the database.
 */
#ifndef TOPO_PLUGIN_ENGINE_H
#define TOPO_PLUGIN_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plugin/slurm/common/network_option.h"

#ifdef __cplusplus
extern "C" {
#endif

enum topo_engine_status {
  TOPO_ENGINE_OK = 0,
  TOPO_ENGINE_CONFIG,       /* topo_aware.conf unreadable or a bad line */
  TOPO_ENGINE_DATABASE,     /* missing, corrupt, foreign or locked database */
  TOPO_ENGINE_NO_FABRIC,    /* no snapshot, or none of the offered hosts in it */
  TOPO_ENGINE_NO_PLACEMENT, /* the fabric has no room for the job */
  TOPO_ENGINE_INVALID,      /* a bad argument from the caller */
  TOPO_ENGINE_INTERNAL,     /* anything else (an exception, out of memory) */
  TOPO_ENGINE_DEFERRED,     /* no failure: the job should wait (DeferAbove=, or for an
                               NVLink domain; msg says why) */
};

typedef struct topo_engine topo_engine_t;

/* Reads the config (NULL path: defaults) and returns an engine that opens
 * the database on first use.  On success msg holds a notice (a missing
 * config file) or is empty. */
int topo_engine_open(const char* conf_path, topo_engine_t** engine, char* msg, size_t msg_size);
/* Re-reads the config (scontrol reconfigure); on error the engine keeps
 * the config it had.  The database is reopened if its path changed. */
int topo_engine_reconfigure(topo_engine_t* engine, const char* conf_path, char* msg, size_t msg_size);
/* Stores the records still waiting (what cannot be stored stays in the
 * journal for the next start), then frees the engine. */
void topo_engine_close(topo_engine_t* engine);
/* Opens the database, replays a journal a crash left, loads the latest
 * snapshot and maps the node table to it now, so the first job placed does
 * not wait for it (slurmctld calls it at start-up and on reconfigure).  No
 * database or no snapshot yet: an error status and why, as topo_engine_rank
 * gives them; nothing is created. */
int topo_engine_prepare(topo_engine_t* engine, char* msg, size_t msg_size);

/* Slurm's node table: names[i] is the NodeName of node index i (NULL: no
 * node there), `count` the table's size.  Give it before the first rank
 * and again whenever Slurm's table changes (start-up, reconfigure, a node
 * added or removed); the engine copies it.  Cheap: the map to the fabric
 * is built on the next prepare or rank. */
int topo_engine_set_nodes(topo_engine_t* engine, const char* const* names, size_t count, char* msg, size_t msg_size);

/* Who is told, in one line, each time the engine loads a fabric snapshot
 * other than the one it had (the first, or a newer one its watcher found):
 * "fabric snapshot 2 of /var/lib/topo-aware/topo.db loaded: 32 hosts";
 * and once per new reason when the watcher can no longer read it:
 * "fabric snapshot not readable: PATH: ...".
 * Called on the engine's threads with its lock held: it must not call the
 * engine.  NULL (the default): nobody. */
typedef void (*topo_engine_notice_fn)(const char* line);
void topo_engine_on_snapshot(topo_engine_t* engine, topo_engine_notice_fn notice);

/* Who is told, in one line, each time RouteJobs= applies routes ("routes
 * applied: ...", failed false) and each new reason it could not ("routes
 * not applied, the tables stay as they were: ...", failed true; the same
 * reason again is not told again).  Called on the engine's route thread,
 * no engine lock held: it must not call the engine.  Set it before
 * topo_engine_reconfigure or prepare turns RouteJobs on; NULL: nobody. */
typedef void (*topo_engine_route_fn)(const char* line, bool failed);
void topo_engine_on_routes(topo_engine_t* engine, topo_engine_route_fn notice);

bool topo_engine_strict(const topo_engine_t* engine);
/* Whether DeferAbove= may hold jobs back (it is set and not 0). */
bool topo_engine_defers(const topo_engine_t* engine);
/* Whether Partitions= names `partition`. */
bool topo_engine_partition_selected(const topo_engine_t* engine, const char* partition);
/* The profile a request stands for, with DefaultProfile applied: "allreduce", ... */
const char* topo_engine_profile(const topo_engine_t* engine, const struct topo_network_request* request);

struct topo_engine_job {
  uint32_t job_id;
  uint32_t nodes;                      /* hosts the job needs */
  uint32_t gpus_per_node;              /* 0: the job asks for no GPUs; any offered host will do,
                                          those outside the NVLink domains first */
  struct topo_network_request request; /* request.segment: --network's segment=N, or
                                          Slurm's --segment (topo_shim_engine_job) */
  /* false: the best candidate only, the search's own choice (as `topoctl
   * place` makes it), with the fewest estimates: Slurm nearly always
   * takes it, so the shims ask this first and ranking.more says whether
   * asking again with true may give others.  true: up to Candidates=. */
  bool all_candidates;
  /* For DeferAbove=: the time of this evaluation (seconds since the
   * epoch: a job's share is counted from the first evaluation that
   * deferred it), and the job's time limit in seconds.  A time limit of 0
   * (none, or an evaluation that does not start the job: test-only at
   * submission, backfill's plans) is never deferred. */
  double now_s, time_limit_s;
};

/* Why a job the engine could not place (no candidate, or none Slurm
 * accepted) waits instead of taking Slurm's own choice: "segments" for a
 * job with segments (Slurm's own choice could split one across NVLink
 * domains), else "Strict=yes" when set; NULL: it takes Slurm's choice. */
const char* topo_engine_holds(const topo_engine_t* engine, const struct topo_engine_job* job);

struct topo_engine_candidate {
  size_t count;
  size_t* nodes; /* Slurm node indices, in ring order */
  double score, estimate_s, ideal_s;
};

struct topo_engine_ranking {
  size_t count;                             /* 0 when nothing fits */
  struct topo_engine_candidate* candidates; /* best first */
  void* detail;                             /* the engine's own, for record() */
  bool answered_before;                     /* the same question was answered since the
                                               traffic last changed: no search ran */
  bool more;                                /* the best only was asked for and others may
                                               exist (job.all_candidates) */
};

/* Ranks host sets for `job` among the nodes Slurm offers: free_gpus[i] is
 * the free GPU count of node index i, negative for a node not offered;
 * `count` is the node table's size (as given to topo_engine_set_nodes).
 * The best candidate, or with job->all_candidates at most Candidates=;
 * free them with topo_engine_ranking_free.  TOPO_ENGINE_DEFERRED, with an
 * empty ranking: DeferAbove= holds the job back, or a GPU job one NVLink
 * domain could hold waits for one to free up rather than split over
 * several (placement/domain_fit.h; msg says why); the shims leave it
 * pending, as Slurm leaves a job that does not fit. */
int topo_engine_rank(topo_engine_t* engine, const struct topo_engine_job* job, const int* free_gpus, size_t count,
                     struct topo_engine_ranking* ranking, char* msg, size_t msg_size);
void topo_engine_ranking_free(struct topo_engine_ranking* ranking);

/* Records where the job went.  `chosen` is the index of the candidate
 * cons_tres accepted, or -1 when the job got cons_tres's own choice
 * (`fallback_why` says why; `ranking` may then be NULL).  `allocated`
 * are the job's node indices as Slurm allocated them.  On success
 * *ring_order (malloc'd, free() it) is the NodeNames in ring order,
 * comma-separated: the candidate's order, or for a fallback the best ring
 * over the nodes the fabric knows followed by the others in node order.
 * *nccl_ib_hca (malloc'd or NULL) is the value for NCCL_IB_HCA: the HCAs
 * closest to the hosts' GPUs (hwloc data in the snapshot), by rail, when
 * every host of the job has them and they are the same on all; NULL
 * otherwise (a NULL nccl_ib_hca: not computed).  The record goes to the
 * writer (see above), not the disk.  TOPO_ENGINE_DATABASE with the record
 * queued: the writer cannot journal or store records (said once per new
 * reason; they wait in memory and the journal). */
int topo_engine_record(topo_engine_t* engine, const struct topo_engine_job* job,
                       const struct topo_engine_ranking* ranking, long chosen, const size_t* allocated,
                       size_t allocated_count, const char* fallback_why, char** ring_order, char** nccl_ib_hca,
                       char* msg, size_t msg_size);

/* The job started on `allocated` (its run-now evaluation's ranking and
 * chosen candidate, or -1 and no ranking for Slurm's own choice, as
 * topo_engine_record takes them): its traffic counts as running from now
 * on, so the next evaluation sees it.  For a shim that records a started
 * job later, off the scheduler's path (24.05+: a writer thread): the
 * record that follows, with the same ring, changes nothing more.  Cheap:
 * the ring and its traffic on the fabric, no record, no I/O. */
int topo_engine_job_started(topo_engine_t* engine, const struct topo_engine_job* job,
                            const struct topo_engine_ranking* ranking, long chosen, const size_t* allocated,
                            size_t allocated_count, char* msg, size_t msg_size);

/* The NCCL hints for a job on `nodes` (Slurm node indices; any order):
 * "NAME=value" lines joined by '\n' (*hints malloc'd, free() it; NULL
 * when there is none), over NCCL_IB_GID_INDEX, NCCL_IB_TC,
 * NCCL_SOCKET_IFNAME, NCCL_IB_HCA (the site's, for nodes without their
 * own) and NCCL_IB_QPS_PER_CONNECTION, as topo_aware.conf sets them (see
 * above).  The QPs need the fabric: the snapshot's routing and the
 * hosts' leaves, from the node map topo_engine_ring uses (after a rank
 * call, the one it left): the ring crosses leaves when the hosts the
 * fabric knows sit on two or more; no map gives no QP hint.  Cheap: called at every successful evaluation. */
int topo_engine_nccl_hints(topo_engine_t* engine, const size_t* nodes, size_t count, char** hints, char* msg,
                           size_t msg_size);

/* Running jobs' traffic.  A job recorded by topo_engine_record counts as
 * running from then on, with its ring, profile and GPUs per node, until
 * topo_engine_job_ended; the rank calls judge candidates against what the
 * running jobs put on the fabric (placement/traffic.h: Gb/s per cable, and
 * under static routing flows per cable).  That traffic is built once per
 * change (a job recorded or ended, the running set given, a new snapshot,
 * config or node table), never per call.
 *
 * topo_engine_set_running gives the jobs running now (slurmctld start-up
 * and reconfigure): each job's ring and profile come from its newest
 * placement record (jobs without one, and plain jobs, carry no modelled
 * traffic); it replaces the engine's running set. */
int topo_engine_set_running(topo_engine_t* engine, const struct topo_engine_job* jobs, size_t count, char* msg,
                            size_t msg_size);
/* The job ended or left its nodes (requeue): its traffic goes.  An
 * unknown job id is no error. */
int topo_engine_job_ended(topo_engine_t* engine, uint32_t job_id, char* msg, size_t msg_size);
/* The job was suspended (its traffic leaves the fabric model, the job
 * stays known) or resumed (its traffic comes back).  A job the engine does
 * not know as running (or as suspended, on resume) is no error and leaves
 * msg empty; otherwise msg says what the running set is now. */
int topo_engine_job_suspended(topo_engine_t* engine, uint32_t job_id, bool suspended, char* msg, size_t msg_size);

/* Slurm's own choice in ring order (node indices, as Slurm allocated
 * them): the best ring over the hosts the fabric knows, the others after
 * them in node order; *ring_order (malloc'd, free() it) is NodeNames,
 * comma-separated, as topo_engine_record gives a fallback's.  Never asks
 * the database: without a loaded snapshot the ring is node order. */
int topo_engine_ring(topo_engine_t* engine, const size_t* nodes, size_t count, char** ring_order, char* msg,
                     size_t msg_size);

/* After a slurmctld restart: jobs that started before it, whose records
 * the dead slurmctld may not have written (24.x records a job a moment
 * after it started).  Each is rebuilt from what Slurm saved with the job:
 * `ring` the ring order it was given (its TOPO_RING_HOSTS), `allocated`
 * its nodes, `started_at` its start (seconds since the epoch), `fallback`
 * whether that ring was over Slurm's own choice (TOPO_FALLBACK).  A job
 * whose run has a record (placed at or after started_at) is left alone;
 * the others are recorded now, a placed job's estimate computed again, and
 * get `recorded` set; they count as running from then on.  Asks the
 * database: never in the scheduler's path. */
struct topo_engine_started {
  struct topo_engine_job job;
  const size_t* ring;
  size_t ring_count;
  const size_t* allocated;
  size_t allocated_count;
  int64_t started_at;
  bool fallback;
  bool recorded; /* out */
};
int topo_engine_recover(topo_engine_t* engine, struct topo_engine_started* jobs, size_t count, char* msg,
                        size_t msg_size);

/* Waits until every record so far is in the database (tests, tools; close
 * does it too).  An error when the writer cannot write it (the records stay
 * in the journal for the next try). */
int topo_engine_flush(topo_engine_t* engine, char* msg, size_t msg_size);

#ifdef __cplusplus
}
#endif

#endif
