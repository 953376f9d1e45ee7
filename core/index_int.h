/* index_int.h - index internals shared with core/graph.c (not a public contract)
 * SPDX-License-Identifier: MIT
 *
 * The degree histogram: _deg_hist[d] = active rows whose degree is d (d >= 1;
 * degree 0 is not counted, so a freshly appended row needs no update). It lets a link or
 * unlink keep max_degree exact in O(change) instead of a recount over every row.
 */
#ifndef MEM_CORE_INDEX_INT_H
#define MEM_CORE_INDEX_INT_H

#include <stddef.h>
#include <stdint.h>

#include "core/index.h"

/* Make room for degrees up to max_deg. MEM_OK (also when there is no histogram), MEM_ENOMEM. */
int mem_index__hist_reserve(mem_index_t *idx, size_t max_deg);
/* Set the degree of row pos; for an active row the histogram and max_degree follow (the
 * new degree must have been reserved). graph_edges is the caller's. */
void mem_index__deg_set(mem_index_t *idx, size_t pos, uint32_t deg);

#endif
