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
 * The topology interface (topology/topo_aware; src/interfaces/topology.c
 * of each release) changed twice; topo_slurm_topology_ops_t below is the
 * forwarded plugin's table for the release being built, and the shim
 * writes every entry point once, with these macros for what moved:
 *
 *   24.05-24.11  one topology; no context argument; 14 symbols;
 *                topology_p_topology_{free,pack,print,unpack};
 *                flat placement is "topology/default"
 *   25.11        a context per topology (topology.yaml may define several,
 *                one per partition): topology_ctx_t * to build_config,
 *                destroy_config, add_rm_node, get_topology_str and
 *                generate_node_ranking, the plugin's own context (void *)
 *                to the others (TOPO_CTX_PARAM / TOPO_CTX_ARG, and
 *                TOPO_TCTX_PARAM / TOPO_TCTX_ARG for the topology_ctx_t
 *                ones); topology_p_topoinfo_* (TOPO_P_TOPOINFO); print
 *                takes a unit (TOPO_UNIT_PARAM); add_rm_node,
 *                destroy_config, jobinfo_{free,pack,unpack,get} and
 *                get_topology_str are new; supports_exclusive_topo is a
 *                symbol; "topology/flat" (TOPO_SLURM_FLAT_TOPOLOGY) -- 23
 *                symbols (TOPO_SLURM_TOPOLOGY_CTX)
 *   26.05        allow_one_node, eval_node (one-node jobs are placed node
 *                by node, not by eval_nodes) and get_rank (the node ranks
 *                that order a job's task ids, TOPO_RANK_ID_SHIFT); the
 *                evaluation carries eval_action -- 26 symbols
 *                (TOPO_SLURM_TOPOLOGY_RANK)
 * 25.05 sits between the two and is not supported (never built here).
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
/* 24.x added a list of the names it could not map. */
#define topo_node_name2bitmap(names, bitmap) node_name2bitmap(names, false, bitmap, NULL)
#else
typedef struct job_details topo_job_details_t;
#define topo_node_name2bitmap(names, bitmap) node_name2bitmap(names, false, bitmap)
#endif

#if TOPO_SLURM_AT_LEAST(25, 5) && !TOPO_SLURM_AT_LEAST(25, 11)
#error "topology/topo_aware supports Slurm 24.05-24.11 and 25.11 onwards, not 25.05"
#endif
#define TOPO_SLURM_TOPOLOGY_CTX TOPO_SLURM_AT_LEAST(25, 11)
#define TOPO_SLURM_TOPOLOGY_RANK TOPO_SLURM_AT_LEAST(26, 5)
/* Slurm's own --segment, in job_details_t.segment_size (topology/block's). */
#define TOPO_SLURM_SEGMENTS TOPO_SLURM_AT_LEAST(24, 11)

#if TOPO_SLURM_TOPOLOGY_EVAL
#define TOPO_JOB_MODIFY_PARAMS \
  job_desc_msg_t *job_desc, job_record_t *job_ptr, uint32_t submit_uid, char **err_msg
#define TOPO_JOB_MODIFY_ERR_MSG err_msg
#else
#define TOPO_JOB_MODIFY_PARAMS job_desc_msg_t *job_desc, job_record_t *job_ptr, uint32_t submit_uid
#define TOPO_JOB_MODIFY_ERR_MSG ((char **)NULL)
#endif

#if TOPO_SLURM_TOPOLOGY_EVAL
#if TOPO_SLURM_TOPOLOGY_CTX
#define TOPO_CTX_PARAM , void *tctx
#define TOPO_CTX_ARG , tctx
#define TOPO_TCTX_PARAM topology_ctx_t *tctx
#define TOPO_TCTX_ARG tctx
#define TOPO_UNIT_PARAM , char *unit
#define TOPO_UNIT_ARG , unit
#define TOPO_P_TOPOINFO(op) topology_p_topoinfo_##op
#define TOPO_SLURM_FLAT_TOPOLOGY "topology/flat"
#else
#define TOPO_CTX_PARAM
#define TOPO_CTX_ARG
#define TOPO_TCTX_PARAM void
#define TOPO_TCTX_ARG
#define TOPO_UNIT_PARAM
#define TOPO_UNIT_ARG
#define TOPO_P_TOPOINFO(op) topology_p_topology_##op
#define TOPO_SLURM_FLAT_TOPOLOGY "topology/default"
#endif
#define TOPO_STR_(x) #x
#define TOPO_STR(x) TOPO_STR_(x)

/* The topology interface of this release, in src/interfaces/topology.c's
 * order (its slurm_topo_ops_t is private to the daemon): the table of the
 * site's own plugin, which topology/topo_aware forwards to.
 * TOPO_SLURM_TOPOLOGY_SYMBOLS names the same members in the same order. */
typedef struct {
  uint32_t *plugin_id;
#if TOPO_SLURM_TOPOLOGY_CTX
  char *plugin_type;
  bool *supports_exclusive_topo;
  int (*add_rm_node)(node_record_t *node_ptr, char *unit, topology_ctx_t *tctx);
#endif
#if TOPO_SLURM_TOPOLOGY_RANK
  bool (*allow_one_node)(void *tctx);
#endif
  int (*build_config)(TOPO_TCTX_PARAM);
#if TOPO_SLURM_TOPOLOGY_CTX
  int (*destroy_config)(topology_ctx_t *tctx);
#endif
#if TOPO_SLURM_TOPOLOGY_RANK
  int (*eval_node)(topology_eval_t *topo_eval, int node_inx);
#endif
  int (*eval_nodes)(topology_eval_t *topo_eval);
  int (*whole_topo)(bitstr_t *node_mask TOPO_CTX_PARAM);
  bitstr_t *(*get_bitmap)(char *name TOPO_CTX_PARAM);
  bool (*node_ranking)(TOPO_TCTX_PARAM);
  int (*get_node_addr)(char *node_name, char **addr, char **pattern TOPO_CTX_PARAM);
  int (*split_hostlist)(topo_hostlist_t *hl, topo_hostlist_t ***sp_hl, int *count,
                        uint16_t tree_width TOPO_CTX_PARAM);
#if TOPO_SLURM_TOPOLOGY_CTX
  int (*get)(topology_data_t type, void *data, void *tctx);
  int (*topoinfo_free)(void *topoinfo_ptr);
#else
  int (*topoinfo_free)(void *topoinfo_ptr);
  int (*get)(topology_data_t type, void *data);
#endif
  int (*topoinfo_pack)(void *topoinfo_ptr, buf_t *buffer, uint16_t protocol_version);
  int (*topoinfo_print)(void *topoinfo_ptr, char *nodes_list TOPO_UNIT_PARAM, char **out);
  int (*topoinfo_unpack)(void **topoinfo_pptr, buf_t *buffer, uint16_t protocol_version);
#if TOPO_SLURM_TOPOLOGY_CTX
  void (*jobinfo_free)(void *topo_jobinfo);
  void (*jobinfo_pack)(void *topo_jobinfo, buf_t *buffer, uint16_t protocol_version);
  int (*jobinfo_unpack)(void **topo_jobinfo, buf_t *buffer, uint16_t protocol_version);
  int (*jobinfo_get)(topology_jobinfo_type_t type, void *topo_jobinfo, void *data);
#endif
  uint32_t (*get_fragmentation)(bitstr_t *node_mask TOPO_CTX_PARAM);
#if TOPO_SLURM_TOPOLOGY_CTX
  void (*get_topology_str)(node_record_t *node_ptr, char **topology_str_ptr, topology_ctx_t *tctx);
#endif
#if TOPO_SLURM_TOPOLOGY_RANK
  int (*get_rank)(bitstr_t *node_bitmap, uint32_t **node_rank, uint32_t *size, void *tctx);
#endif
} topo_slurm_topology_ops_t;

#if TOPO_SLURM_TOPOLOGY_CTX
#define TOPO_SLURM_TOPOLOGY_SYMBOLS_CTX1 \
  "plugin_type", "supports_exclusive_topo", "topology_p_add_rm_node",
#define TOPO_SLURM_TOPOLOGY_SYMBOLS_CTX2 "topology_p_destroy_config",
#define TOPO_SLURM_TOPOLOGY_SYMBOLS_GET "topology_p_get", "topology_p_topoinfo_free",
#define TOPO_SLURM_TOPOLOGY_SYMBOLS_JOBINFO                                          \
  "topology_p_jobinfo_free", "topology_p_jobinfo_pack", "topology_p_jobinfo_unpack", \
      "topology_p_jobinfo_get",
#define TOPO_SLURM_TOPOLOGY_SYMBOLS_STR , "topology_p_get_topology_str"
#else
#define TOPO_SLURM_TOPOLOGY_SYMBOLS_CTX1
#define TOPO_SLURM_TOPOLOGY_SYMBOLS_CTX2
#define TOPO_SLURM_TOPOLOGY_SYMBOLS_GET "topology_p_topology_free", "topology_p_get",
#define TOPO_SLURM_TOPOLOGY_SYMBOLS_JOBINFO
#define TOPO_SLURM_TOPOLOGY_SYMBOLS_STR
#endif
#if TOPO_SLURM_TOPOLOGY_RANK
#define TOPO_SLURM_TOPOLOGY_SYMBOLS_ONE "topology_p_allow_one_node",
#define TOPO_SLURM_TOPOLOGY_SYMBOLS_NODE "topology_p_eval_node",
#define TOPO_SLURM_TOPOLOGY_SYMBOLS_RANK , "topology_p_get_rank"
#else
#define TOPO_SLURM_TOPOLOGY_SYMBOLS_ONE
#define TOPO_SLURM_TOPOLOGY_SYMBOLS_NODE
#define TOPO_SLURM_TOPOLOGY_SYMBOLS_RANK
#endif
#define TOPO_SLURM_TOPOLOGY_SYMBOLS                                                                \
  {                                                                                                \
    "plugin_id",                                                                                   \
        TOPO_SLURM_TOPOLOGY_SYMBOLS_CTX1 TOPO_SLURM_TOPOLOGY_SYMBOLS_ONE                           \
        "topology_p_build_config",                                                                 \
        TOPO_SLURM_TOPOLOGY_SYMBOLS_CTX2 TOPO_SLURM_TOPOLOGY_SYMBOLS_NODE "topology_p_eval_nodes", \
        "topology_p_whole_topo", "topology_p_get_bitmap", "topology_p_generate_node_ranking",      \
        "topology_p_get_node_addr", "topology_p_split_hostlist",                                   \
        TOPO_SLURM_TOPOLOGY_SYMBOLS_GET TOPO_STR(TOPO_P_TOPOINFO(pack)),                           \
        TOPO_STR(TOPO_P_TOPOINFO(print)), TOPO_STR(TOPO_P_TOPOINFO(unpack)),                       \
        TOPO_SLURM_TOPOLOGY_SYMBOLS_JOBINFO                                                        \
        "topology_p_get_fragmentation" TOPO_SLURM_TOPOLOGY_SYMBOLS_STR                             \
            TOPO_SLURM_TOPOLOGY_SYMBOLS_RANK                                                       \
  }
#endif

#endif
