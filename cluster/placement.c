/* placement.c - which nodes a namespace lives on: least loaded, rendezvous hashing for ties
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Every (namespace, node) pair gets a 64-bit weight, a hash of both names
 * (rendezvous, or highest random weight, hashing): any node computes the same order of the
 * nodes for a namespace from the same node list, in any order. Pure hashing spreads
 * namespaces only statistically (with 60 namespaces on 6 nodes, the fullest node holds
 * about a third more than the mean), so a new namespace goes to the R eligible nodes that
 * hold the fewest namespaces, the weight deciding among equals (mem_cluster_place_least);
 * the rebalancer keeps counts within one of each other as nodes come and go. Pure: no I/O,
 * no clock, no state.
 */
#include "cluster/placement.h"

#include <string.h>

/* FNV-1a over a, a NUL, b, then a 64-bit finaliser (splitmix64): FNV alone mixes the last
 * bytes poorly, and node names often differ only there ("node-1", "node-2"). */
uint64_t mem_cluster_place_weight(const char *ns, const char *node)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *p = ns; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h = (h ^ 0u) * 1099511628211ull;
    for (const char *p = node; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return h;
}

size_t mem_cluster_place(const char *ns, const char *const *nodes, size_t n_nodes, size_t r,
                         size_t *out)
{
    size_t n = 0;
    uint64_t w[MEM_CLUSTER_PLACE_MAX];
    if (r > MEM_CLUSTER_PLACE_MAX) r = MEM_CLUSTER_PLACE_MAX;
    for (size_t i = 0; i < n_nodes; i++) {
        bool dup = false;
        for (size_t k = 0; k < i && !dup; k++)
            dup = strcmp(nodes[k], nodes[i]) == 0;
        if (dup) continue;
        uint64_t wi = mem_cluster_place_weight(ns, nodes[i]);
        /* insertion into the top r, by weight descending, ties by name */
        size_t at = n;
        while (at > 0 &&
               (w[at - 1] < wi || (w[at - 1] == wi && strcmp(nodes[out[at - 1]], nodes[i]) > 0)))
            at--;
        if (at >= r) continue;
        size_t last = n < r ? n : r - 1;
        for (size_t k = last; k > at; k--) {
            w[k] = w[k - 1];
            out[k] = out[k - 1];
        }
        w[at] = wi;
        out[at] = i;
        if (n < r) n++;
    }
    return n;
}

size_t mem_cluster_place_least(const char *ns, const char *const *nodes, const size_t *loads,
                               size_t n_nodes, size_t r, size_t *out)
{
    size_t n = 0;
    uint64_t w[MEM_CLUSTER_PLACE_MAX];
    if (r > MEM_CLUSTER_PLACE_MAX) r = MEM_CLUSTER_PLACE_MAX;
    for (size_t i = 0; i < n_nodes; i++) {
        bool dup = false;
        for (size_t k = 0; k < i && !dup; k++)
            dup = strcmp(nodes[k], nodes[i]) == 0;
        if (dup) continue;
        uint64_t wi = mem_cluster_place_weight(ns, nodes[i]);
        size_t at = n;
        while (at > 0) { /* before the previous one when it is worse: more load, or less weight */
            size_t p = out[at - 1];
            bool better = loads[i] < loads[p] ||
                          (loads[i] == loads[p] &&
                           (wi > w[at - 1] || (wi == w[at - 1] && strcmp(nodes[i], nodes[p]) < 0)));
            if (!better) break;
            at--;
        }
        if (at >= r) continue;
        size_t last = n < r ? n : r - 1;
        for (size_t k = last; k > at; k--) {
            w[k] = w[k - 1];
            out[k] = out[k - 1];
        }
        w[at] = wi;
        out[at] = i;
        if (n < r) n++;
    }
    return n;
}
