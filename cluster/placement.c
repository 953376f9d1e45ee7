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

/* Whether node a (weight wa) ranks before node b (weight wb): fewer namespaces first when
 * loads is given, then higher weight, then lower id. */
typedef bool place_before_fn(const char *const *nodes, const size_t *loads, size_t a, uint64_t wa,
                             size_t b, uint64_t wb);

static bool before_by_weight(const char *const *nodes, const size_t *loads, size_t a, uint64_t wa,
                             size_t b, uint64_t wb)
{
    (void)loads;
    return wa > wb || (wa == wb && strcmp(nodes[a], nodes[b]) < 0);
}

static bool before_by_load(const char *const *nodes, const size_t *loads, size_t a, uint64_t wa,
                           size_t b, uint64_t wb)
{
    return loads[a] < loads[b] ||
           (loads[a] == loads[b] && before_by_weight(nodes, loads, a, wa, b, wb));
}

/* The first min(r, distinct nodes) nodes in before's order, by insertion into a top-r list:
 * n_nodes is small (a cluster's node list), so no heap. */
static size_t place_top(const char *ns, const char *const *nodes, const size_t *loads,
                        size_t n_nodes, size_t r, place_before_fn *before, size_t *out)
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
        while (at > 0 && before(nodes, loads, i, wi, out[at - 1], w[at - 1]))
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

size_t mem_cluster_place(const char *ns, const char *const *nodes, size_t n_nodes, size_t r,
                         size_t *out)
{
    return place_top(ns, nodes, NULL, n_nodes, r, before_by_weight, out);
}

size_t mem_cluster_place_least(const char *ns, const char *const *nodes, const size_t *loads,
                               size_t n_nodes, size_t r, size_t *out)
{
    return place_top(ns, nodes, loads, n_nodes, r, before_by_load, out);
}
