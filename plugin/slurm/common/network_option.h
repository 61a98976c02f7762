/*
 * The job's `--network` option, as far as topology-aware placement reads it:
 *
 *   --network=topo-aware[,profile=allreduce|alltoall|mixed][,maxleaves=K][,pod][,segment=N]
 *
 * segment=N: every N consecutive hosts of the job's ring inside one NVLink
 * domain (placement/domain_fit.h), as Slurm's own --segment asks of
 * topology/block's blocks; the shims read Slurm's --segment too where the
 * release has it (topo_shim_engine_job).
 *
 * Slurm stores the option verbatim as the job's network string and hands it
 * to every plugin, so a string without a `topo-aware` token belongs to some
 * other plugin (or to nobody) and is not ours to judge.  Once `topo-aware`
 * is present every other token must be one of ours: a misspelt key would
 * otherwise be ignored silently and the job placed in a way its owner did
 * not ask for.
 *
 * Plain C with no Slurm dependency: both Slurm plugins (select and
 * job_submit) parse with it, and so do the tests.
 */
#ifndef TOPO_PLUGIN_NETWORK_OPTION_H
#define TOPO_PLUGIN_NETWORK_OPTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a user may write, quoted in every error message. */
#define TOPO_NETWORK_USAGE \
  "topo-aware[,profile=allreduce|alltoall|mixed][,maxleaves=K][,pod][,segment=N]"

/* The largest maxleaves accepted; far above any real fabric's leaf count. */
#define TOPO_NETWORK_MAX_LEAVES 65535u
/* The largest segment accepted: Slurm's own --segment is 16 bits too. */
#define TOPO_NETWORK_MAX_SEGMENT 65535u

/* The traffic pattern the job asks placement to optimise for. */
enum topo_profile {
  TOPO_PROFILE_DEFAULT = 0, /* not given: topo_aware.conf's default applies */
  TOPO_PROFILE_ALLREDUCE,
  TOPO_PROFILE_ALLTOALL,
  TOPO_PROFILE_MIXED,
};

/* A parsed request.  All zero means the job did not ask for topo-aware. */
struct topo_network_request {
  bool topo_aware; /* the `topo-aware` token is present */
  enum topo_profile profile;
  uint32_t max_leaves; /* 0: no limit */
  bool pod;            /* keep the job inside one pod */
  uint32_t segment;    /* hosts per segment inside one NVLink domain; 0: none */
};

/*
 * Parses a job's network string (NULL or "" is a job without the option).
 * Returns 0 and fills *request, or -1 and writes a one-line message naming
 * the bad token and the allowed syntax into error (truncated to
 * error_size, always terminated when error_size > 0); *request is then
 * zeroed.
 */
int topo_network_parse(const char *network, struct topo_network_request *request, char *error,
                       size_t error_size);

/* "allreduce", "alltoall", "mixed", or "default". */
const char *topo_profile_name(enum topo_profile profile);

#ifdef __cplusplus
}
#endif

#endif
