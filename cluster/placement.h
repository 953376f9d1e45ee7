/* placement.h - rendezvous hashing of namespaces onto nodes (pure; see placement.c)
 * SPDX-License-Identifier: MIT
 */
#ifndef MEM_CLUSTER_PLACEMENT_H
#define MEM_CLUSTER_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Most nodes one namespace is placed on (the replica group size is capped by it). */
#define MEM_CLUSTER_PLACE_MAX 7

/* The weight of node for ns: deterministic, the same on every host (little- or big-endian). */
uint64_t mem_cluster_place_weight(const char *ns, const char *node);
/* The replica group of ns among nodes[n_nodes] (NUL-terminated ids; duplicates count once):
 * the indexes of the min(r, distinct nodes) nodes of highest weight, highest first (ties by
 * id), written to out[]. Returns how many were written. out must hold r entries. */
size_t mem_cluster_place(const char *ns, const char *const *nodes, size_t n_nodes, size_t r,
                         size_t *out);

/* Load-aware placement: the min(r, distinct nodes) nodes holding the fewest namespaces
 * (loads[i] for nodes[i]), ties broken by highest weight, then id. Indexes into out[], in
 * that order (the first is the primary). Returns how many were written. */
size_t mem_cluster_place_least(const char *ns, const char *const *nodes, const size_t *loads,
                               size_t n_nodes, size_t r, size_t *out);

#endif
