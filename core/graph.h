/* graph.h - the coherence graph: degrees of the linked rows (SPEC section 5)
 * SPDX-License-Identifier: MIT
 *
 * An edge joins two rows of the graph (linked rows) when cos >= threshold (a double: the
 * configured value itself, which float may not hold, 0.55 for one). The graph's
 * members are meant to be the active rows (flags == 0); the graph owner (core/index.h)
 * makes them so, link by link: a row that becomes active is linked, one that stops being
 * active is unlinked. Only degrees are kept (in the index); graph_edges and max_degree
 * follow every change. The touched callback reports each row whose degree changed, so
 * storage/ can persist it.
 *
 * The edge rule does not depend on the kernel: a pair is an edge when its reference dot
 * (mem_vec_dot_f64_scalar: double, left to right) is >= threshold. ops->dot_rows scores
 * every pair; one whose f32 score lies within a rigorous rounding window of the threshold
 * is decided by the reference (core/graph.c), so every ISA builds the same graph. Link and
 * unlink keep graph_edges and max_degree exact in O(degree) besides the one scoring pass
 * (a degree histogram in the index); after loading persisted degrees, call
 * mem_index_recount_graph once.
 */
#ifndef MEM_CORE_GRAPH_H
#define MEM_CORE_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "core/index.h"
#include "core/vec.h"

/* The edge rule's version: 2 = reference double dot >= threshold (1: the kernel's f32 dot,
 * which could differ between ISAs at a tie). */
#define MEM_GRAPH_RULE 2

typedef void (*mem_graph_touch_fn)(void *ud, size_t pos);

/* Row pos is active and not linked: link it to every linked row. A no-op otherwise. On
 * MEM_ENOMEM nothing has changed. */
int mem_graph_link(mem_index_t *idx, size_t pos, double threshold, const mem_vec_ops_t *ops,
                   mem_graph_touch_fn touched, void *ud);
/* Row pos is linked: drop it and its edges (a no-op otherwise). On MEM_ENOMEM nothing has
 * changed. */
int mem_graph_unlink(mem_index_t *idx, size_t pos, double threshold, const mem_vec_ops_t *ops,
                     mem_graph_touch_fn touched, void *ud);
/* Make the graph that of the active rows, from scratch (bulk, blocked). MEM_OK, MEM_ENOMEM. */
int mem_graph_rebuild(mem_index_t *idx, double threshold, const mem_vec_ops_t *ops);

/* ---- batches: many rows at once, scored in one pass over the index ----
 * * A batch is split in two so that storage/ can score without the namespace lock: find
 * only READS the index - vectors, sketches and the graph fields, never flags - so the graph
 * owner may run it unlocked while scanners read and rows are appended, and fills a delta;
 * apply writes degrees, links, graph_edges and max_degree (under the exclusive lock), with
 * no failure point once the histogram is reserved. Between find and apply the graph fields
 * must not change.
 * The edge decisions are exactly mem_graph_link's (the same edge rule): every
 * block is read once per tile of batch rows (a blocked matrix product: ops->tile_i8 scores a
 * tile against a chunk of block rows); with an int8 kernel (ops->dot_rows_i8) and a batch of
 * MEM_GRAPH_I8_MIN rows or more, a pair whose rigorous int8 upper bound is below the threshold is
 * skipped without its f32 dot, and (with ops->tile_i8) one whose lower bound reaches it is an edge
 * without it (the bounds cover the sketches' errors and the f32 kernel's rounding, see graph.c),
 * so the result does not depend on the path. */
#define MEM_GRAPH_I8_MIN 8

typedef struct mem_graph_delta {
    size_t *pos;     /* rows whose degree changes */
    uint32_t *count; /* edges each gains (link) or loses (unlink) */
    size_t n, cap;   /* entries [0, n_set) are the batch's own rows, [n_set, n) others */
    size_t n_set;
    uint64_t edges;     /* edges added (link) or removed (unlink) */
    uint32_t max_other; /* largest count among the other rows */
    uint32_t max_set;   /* largest count among the batch's own rows */
    int unlink;
} mem_graph_delta_t; /* zero-initialise; free with mem_graph_delta_free */

/* The active rows among first_pos .. first_pos + n_new - 1 that are not linked: finds their
 * edges with every linked row, and among themselves (once). Reads flags: for a caller
 * that owns rows and graph alike (tests, benches). MEM_OK or MEM_ENOMEM (*out then empty). */
int mem_graph_link_find(const mem_index_t *idx, size_t first_pos, size_t n_new, double threshold,
                        const mem_vec_ops_t *ops, mem_graph_delta_t *out);
/* rows[0..n) (any order; duplicates and linked rows ignored) join the graph: finds their
 * edges with the linked rows and among themselves. MEM_OK, MEM_ENOMEM. */
int mem_graph_link_set_find(const mem_index_t *idx, const size_t *rows, size_t n, double threshold,
                            const mem_vec_ops_t *ops, mem_graph_delta_t *out);
/* rows[0..n) (any order; duplicates and rows not linked ignored) leave the graph: finds
 * the edges they take with them. MEM_OK, MEM_ENOMEM. */
int mem_graph_unlink_find(const mem_index_t *idx, const size_t *rows, size_t n, double threshold,
                          const mem_vec_ops_t *ops, mem_graph_delta_t *out);
/* Both at once, for the graph owner: ch->unlink rows leave and ch->link rows join, among
 * positions below ch->n_rows only (rows above may be being appended). d_unlink holds the
 * edges the leaving rows take; d_link the joining rows' edges with the members that stay
 * and among themselves. Apply d_unlink, then d_link. MEM_OK, MEM_ENOMEM (both empty). */
typedef struct mem_graph_change {
    const size_t *link, *unlink;
    size_t n_link, n_unlink;
    size_t n_rows;
} mem_graph_change_t;
int mem_graph_change_find(const mem_index_t *idx, const mem_graph_change_t *ch, double threshold,
                          const mem_vec_ops_t *ops, mem_graph_delta_t *d_unlink,
                          mem_graph_delta_t *d_link);
/* Apply a delta found on this same index state; touched reports every row whose degree
 * changed (and every row of the batch). On MEM_ENOMEM nothing has changed. After an
 * unlink apply the batch's rows are out of the graph (degree 0); after a link apply they
 * are in it. */
int mem_graph_apply(mem_index_t *idx, const mem_graph_delta_t *d, mem_graph_touch_fn touched,
                    void *ud);
void mem_graph_delta_free(mem_graph_delta_t *d);
/* find + apply. */
int mem_graph_link_batch(mem_index_t *idx, size_t first_pos, size_t n_new, double threshold,
                         const mem_vec_ops_t *ops, mem_graph_touch_fn touched, void *ud);
int mem_graph_unlink_batch(mem_index_t *idx, const size_t *rows, size_t n, double threshold,
                           const mem_vec_ops_t *ops, mem_graph_touch_fn touched, void *ud);

#endif
