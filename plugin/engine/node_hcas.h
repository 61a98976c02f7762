/*
 * The HCAs next to this host's GPUs, for NCCL_IB_HCA: what the SPANK
 * plugin reads of the node it runs on (plain C over the C++ hwloc reader
 * in discovery/hwloc_affinity.h).
 *
 *   topo_node_hcas_t *n;
 *   topo_node_hcas_read(NULL, &n, msg, sizeof msg);        the live host
 *   topo_node_hcas_read("/etc/topo/gpu017.xml", &n, ...);  an lstopo export
 *   char *v = topo_node_hcas_value(n, gpus, 2, 1);         "mlx5_1,mlx5_0"
 *
 * Each GPU's closest HCA is hwloc's (the deepest common PCI ancestor; see
 * hwloc_affinity.h), each HCA named once, in rail order; the HCA of
 * `first_gpu` leads, so a process that drives one GPU prefers its own
 * rail.  No C++ exception crosses this interface.
 */
#ifndef TOPO_PLUGIN_NODE_HCAS_H
#define TOPO_PLUGIN_NODE_HCAS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct topo_node_hcas topo_node_hcas_t;

/* Reads an lstopo XML export (xml_path) or, with NULL, the live machine.
 * Returns 0, or -1 with one line in msg (always terminated when
 * msg_size > 0) naming the file and what was wrong. */
int topo_node_hcas_read(const char* xml_path, topo_node_hcas_t** out, char* msg, size_t msg_size);
void topo_node_hcas_free(topo_node_hcas_t* hcas);
/* How many GPUs hwloc found. */
size_t topo_node_hcas_gpu_count(const topo_node_hcas_t* hcas);

/* NCCL_IB_HCA for the GPUs gpus[0..count) (indices as Slurm's GRES and
 * CUDA_DEVICE_ORDER=PCI_BUS_ID number them; count 0: every GPU of the
 * host), the HCA of first_gpu first (-1: none leads).  GPUs hwloc does
 * not know and GPUs without an HCA are skipped.  malloc'd (free() it);
 * NULL when none of the GPUs has an HCA. */
char* topo_node_hcas_value(const topo_node_hcas_t* hcas, const int* gpus, size_t count, int first_gpu);

#ifdef __cplusplus
}
#endif

#endif
