#include "plugin/slurm/common/slurm_compat.h"

#include "plugin/slurm/common/wrapped_plugin.h"

/* plugin_type of the plugin this file is linked into, for log lines. */
extern const char plugin_type[];

const void *topo_wrapped_plugin_ops(struct topo_wrapped_plugin *w, const char *type,
                                    const char *role)
{
  if (__atomic_load_n(&w->loaded, __ATOMIC_ACQUIRE))
    return w->ops;
  slurm_mutex_lock(&w->lock);
  if (!w->context) {
    w->context = plugin_context_create(w->kind, type, (void **)w->ops, w->symbols, w->symbols_size);
    if (!w->context)
      fatal("%s: cannot load %s, %s", plugin_type, type, role);
    debug("%s: loaded %s, %s", plugin_type, type, role);
    __atomic_store_n(&w->loaded, 1, __ATOMIC_RELEASE);
  }
  slurm_mutex_unlock(&w->lock);
  return w->ops;
}

int topo_wrapped_plugin_unload(struct topo_wrapped_plugin *w)
{
  int rc = SLURM_SUCCESS;
  slurm_mutex_lock(&w->lock);
  if (w->context) {
    __atomic_store_n(&w->loaded, 0, __ATOMIC_RELEASE);
    rc = plugin_context_destroy(w->context);
    w->context = NULL;
  }
  slurm_mutex_unlock(&w->lock);
  return rc;
}
