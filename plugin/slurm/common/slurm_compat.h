/*
 * The one place where the Slurm releases the shims build against differ.
 *
 * Supported: 22.05 (select/topo_cons_tres) and 24.05 onwards
 * (topology/topo_aware, whose interface appeared in 24.05).  What moved
 * between them, and how the shims see it:
 *
 *   headers      gres.h and select.h left src/common for src/interfaces
 *                (23.02): included here, nowhere else
 *   lists        `List` / `ListIterator` (pointer typedefs) became
 *                `list_t *` / `list_itr_t *`: the shims write
 *                topo_list_t * and topo_list_itr_t *, the structs both name
 *   hostlists    `hostlist_t` was a pointer and became the struct
 *                (`hostlist_t *`): the shims write topo_hostlist_t *
 *   job details  `struct job_details` became the anonymous `job_details_t`:
 *                the shims write topo_job_details_t
 *   job_modify   gained `char **err_msg` (a message for the user):
 *                TOPO_JOB_MODIFY_PARAMS declares it, TOPO_JOB_MODIFY_ERR_MSG
 *                is the channel or NULL where there is none
 *
 * Include this first in a shim that uses Slurm's internal headers
 * (config.h and slurm_xlator.h must come before the others).
 */
#ifndef TOPO_PLUGIN_SLURM_COMPAT_H
#define TOPO_PLUGIN_SLURM_COMPAT_H

#include "config.h"

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/slurm_xlator.h" /* must precede the other src/common headers */
#include "src/common/bitstring.h"
#include "src/common/hostlist.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/plugin.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#define TOPO_SLURM_AT_LEAST(a, b) (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(a, b, 0))

#if TOPO_SLURM_AT_LEAST(24, 5)
#define TOPO_SLURM_TOPOLOGY_EVAL 1 /* node choice happens in the topology plugin */
#include "src/interfaces/gres.h"
#include "src/interfaces/select.h"
#include "src/interfaces/topology.h"
#elif TOPO_SLURM_AT_LEAST(22, 5) && !TOPO_SLURM_AT_LEAST(22, 6)
#define TOPO_SLURM_TOPOLOGY_EVAL 0
#include "src/common/gres.h"
#include "src/common/select.h"
#else
#error "topo-aware's Slurm plugins support Slurm 22.05 and 24.05 onwards"
#endif

#include "src/slurmctld/slurmctld.h"

typedef struct xlist topo_list_t;
typedef struct listIterator topo_list_itr_t;
typedef struct hostlist topo_hostlist_t;

#if TOPO_SLURM_TOPOLOGY_EVAL
typedef job_details_t topo_job_details_t;
#else
typedef struct job_details topo_job_details_t;
#endif

#if TOPO_SLURM_TOPOLOGY_EVAL
#define TOPO_JOB_MODIFY_PARAMS \
  job_desc_msg_t *job_desc, job_record_t *job_ptr, uint32_t submit_uid, char **err_msg
#define TOPO_JOB_MODIFY_ERR_MSG err_msg
#else
#define TOPO_JOB_MODIFY_PARAMS job_desc_msg_t *job_desc, job_record_t *job_ptr, uint32_t submit_uid
#define TOPO_JOB_MODIFY_ERR_MSG ((char **)NULL)
#endif

#endif
