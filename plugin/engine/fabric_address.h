/*
 * A node's place in the fabric as Slurm's SLURM_TOPOLOGY_ADDR and
 * SLURM_TOPOLOGY_ADDR_PATTERN spell it: "pod1.leaf03.gpu017" with
 * "pod.leaf.node", or "leaf03.gpu017" with "leaf.node" on a fabric
 * without pods.  The leaf is the one the host's first HCA (rail 0) is
 * cabled to, so on a rail-optimised fabric it is rail 0's leaf.
 *
 * Read from the newest snapshot of the database topo_aware.conf names
 * (its HostPattern maps the Slurm NodeName), read-only: a node where the
 * database is absent gets an error, never an empty database.  slurmd
 * asks once at start-up.  No C++ exception crosses this interface.
 */
#ifndef TOPO_PLUGIN_FABRIC_ADDRESS_H
#define TOPO_PLUGIN_FABRIC_ADDRESS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Returns 0 with *addr and *pattern malloc'd (free() them), or -1 with
 * one line in msg (always terminated when msg_size > 0). */
int topo_fabric_address(const char* conf_path, const char* node_name, char** addr, char** pattern, char* msg,
                        size_t msg_size);

#ifdef __cplusplus
}
#endif

#endif
