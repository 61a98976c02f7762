/*
 * A Slurm plugin that one of ours wraps: select/cons_tres under 22.05's
 * select/topo_cons_tres, the site's own topology plugin under
 * topology/topo_aware.  It is loaded through Slurm's plugin context on the
 * first call and every call of the interface is forwarded to it, so its
 * code is Slurm's, not a copy.  Loading waits for the first call because
 * every Slurm daemon and command loads our plugin, and most never call it.
 *
 * Include slurm_compat.h first.
 */
#ifndef TOPO_PLUGIN_WRAPPED_PLUGIN_H
#define TOPO_PLUGIN_WRAPPED_PLUGIN_H

#include <pthread.h>
#include <stddef.h>

struct topo_wrapped_plugin {
  const char *kind;          /* Slurm's name for the interface: "select", "topo" */
  const char **symbols;      /* the entry points' names, in the order of `ops` */
  size_t symbols_size;       /* sizeof the symbols array */
  void *ops;                 /* the interface's ops struct, filled on load */
  plugin_context_t *context; /* NULL until loaded */
  int loaded;                /* set once loaded; read without the lock */
  pthread_mutex_t lock;      /* serialises loading and unloading */
};

#define TOPO_WRAPPED_PLUGIN(kind, symbols, ops)                                   \
  {                                                                               \
    (kind), (symbols), sizeof(symbols), (ops), NULL, 0, PTHREAD_MUTEX_INITIALIZER \
  }

/* The plugin's ops, loading `type` (e.g. "select/cons_tres") on the first
 * call.  A plugin that cannot be loaded is fatal, with `role` saying why
 * it is needed: without it no job or node could be handled, and a
 * half-working controller would corrupt its state. */
const void *topo_wrapped_plugin_ops(struct topo_wrapped_plugin *w, const char *type,
                                    const char *role);

/* Unloads it (fini); loading again later is allowed.  Slurm's return code. */
int topo_wrapped_plugin_unload(struct topo_wrapped_plugin *w);

#endif
