#include "plugin/slurm/common/slurm_compat.h"

#include <stdio.h>
#include <strings.h>

#include "plugin/slurm/common/wrapped_plugin.h"
#include "plugin/slurm/topology_topo_aware/site_plugin.h"

static const char *topo_symbols[] = TOPO_SLURM_TOPOLOGY_SYMBOLS;
_Static_assert(sizeof(topo_symbols) == sizeof(topo_ops_t),
               "topo_symbols must list every member of topo_ops_t");

static topo_ops_t slurm_ops;
static struct topo_wrapped_plugin site_plugin =
    TOPO_WRAPPED_PLUGIN("topo", topo_symbols, &slurm_ops);

/* What topology.conf beside slurm.conf describes: topology/block where it
 * defines blocks (BlockName=), topology/tree where it defines switches,
 * flat placement where there is none. */
const char *slurms_own_type(void)
{
  static const char *type;
  if (type)
    return type;
  char *path = get_extra_conf_path("topology.conf");
  FILE *f = fopen(path, "r");
  const char *found = TOPO_SLURM_FLAT_TOPOLOGY;
  xfree(path);
  if (f) {
    char line[1024];
    found = "topology/tree";
    while (fgets(line, sizeof(line), f)) {
      const char *p = line;
      while (*p == ' ' || *p == '\t')
        p++;
      if (!strncasecmp(p, "BlockName=", 10)) {
        found = "topology/block";
        break;
      }
    }
    fclose(f);
  }
  type = found;
  return type;
}

const topo_ops_t *slurms_own(void)
{
  /* Without it no node can be chosen or message routed. */
  return topo_wrapped_plugin_ops(&site_plugin, slurms_own_type(), "which plain jobs get");
}

int slurms_own_unload(void)
{
  return topo_wrapped_plugin_unload(&site_plugin);
}

/* From 25.11 an evaluation may leave job data of the site's plugin
 * (block's segments) in job_ptr->topo_jobinfo, tagged with that plugin's
 * id: Slurm finds the functions that free and pack it by the id, among the
 * plugins it loaded, so it is tagged with this plugin's (whose jobinfo
 * functions forward).  A refused trial's is dropped before the next trial
 * (block expects none). */
void tag_jobinfo(job_record_t *job_ptr)
{
#if TOPO_SLURM_TOPOLOGY_CTX
  if (job_ptr->topo_jobinfo)
    job_ptr->topo_jobinfo->plugin_id = plugin_id;
#else
  (void)job_ptr;
#endif
}

void drop_jobinfo(job_record_t *job_ptr)
{
#if TOPO_SLURM_TOPOLOGY_CTX
  dynamic_plugin_data_t *info = job_ptr->topo_jobinfo;
  if (!info)
    return;
  if (info->data)
    slurms_own()->jobinfo_free(info->data);
  xfree(info);
  job_ptr->topo_jobinfo = NULL;
#else
  (void)job_ptr;
#endif
}

/* The site's evaluation (tree's, block's or flat's) of the job on
 * node_map as it stands. */
int slurms_eval(topology_eval_t *ev)
{
  drop_jobinfo(ev->job_ptr);
  return slurms_own()->eval_nodes(ev);
}
