/* graph.h - the coherence graph: degrees of the active rows (SPEC section 5)
 * SPDX-License-Identifier: MIT
 *
 * An edge joins two active rows (flags == 0) when cos >= threshold. Only degrees are
 * kept (in the index); graph_edges and max_degree follow every change. The touched
 * callback reports each row whose degree changed, so storage/ can persist it.
 *
 * Every cosine is ops->dot_rows of two stored rows; the kernel must score a row the same
 * wherever it sits in a batch (tests/unit/test_core_graph.c checks every ISA). Link and
 * unlink keep graph_edges and max_degree exact in O(degree) besides the one scoring pass
 * (a degree histogram in the index); after loading persisted degrees, call
 * mem_index_recount_graph once.
 */
#ifndef MEM_CORE_GRAPH_H
#define MEM_CORE_GRAPH_H

#include <stddef.h>

#include "core/index.h"
#include "core/vec.h"

typedef void (*mem_graph_touch_fn)(void *ud, size_t pos);

/* Row pos has just become active (inserted, or restored): link it to every other active
 * row among positions < idx->n_rows. A no-op for a row that is not active; link a row once
 * (twice would count its edges twice). On MEM_ENOMEM nothing has changed. */
int mem_graph_link(mem_index_t *idx, size_t pos, float threshold, const mem_vec_ops_t *ops,
                   mem_graph_touch_fn touched, void *ud);
/* Row pos is about to leave the active set (superseded, archived, deleted): drop its
 * edges. Call before changing its flags (a no-op once it is inactive). On MEM_ENOMEM
 * nothing has changed. */
int mem_graph_unlink(mem_index_t *idx, size_t pos, float threshold, const mem_vec_ops_t *ops,
                     mem_graph_touch_fn touched, void *ud);
/* Recompute every degree from scratch (bulk, blocked). MEM_OK or MEM_ENOMEM. */
int mem_graph_rebuild(mem_index_t *idx, float threshold, const mem_vec_ops_t *ops);

#endif
