/* index.h - the in-memory index of one namespace: vectors in time-ordered blocks
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Segments are appended in ingest order, which is time order (SPEC section 2), so
 * a position `pos` (0..rows-1) never moves while the index lives: block pos / BLOCK_ROWS,
 * row pos % BLOCK_ROWS. A hard delete leaves a hole flagged MEM_ROW_DELETED; holes vanish
 * at the next reload, or when storage/ swaps in a vacuumed copy (mem_index_vacuum: same
 * rows in the same order, new positions given by mem_index_vacuum_remap). Each block keeps
 * its time range for pruning. Anything that lives beside the index at the same positions
 * (core/graph.c's degrees, a text index's postings) follows the same blocks and the same
 * remap.
 *
 * The type is opaque; its fields live in core/index_int.h, which only core/ (and the
 * core tests and benches) include. Ownership and locking, checked by the types:
 *   - `const mem_index_t *` is a READ VIEW. Every accessor below that takes one only
 *     reads, so many threads may hold views at once. The one exception is the access
 *     statistics (access count, tick, clock): relaxed atomics that any view holder bumps
 *     with mem_index_record_access and reads with the mem_index_access_* calls. *   - `mem_index_t
 * *` is the MUTABLE HANDLE. Every call that takes one changes the index and needs the caller to
 * exclude every view holder (storage/ hands it out only under the namespace's exclusive lock, or
 * for an index no one else sees yet). Two owners share the mutations, each of its own fields: the
 * ROW owner (append, publish, flags, sources: the calls below) and the GRAPH owner (degrees, links,
 * edge counts: core/graph.h's apply and mem_index_restore_link). Each may read its own fields, and
 * the rows' immutable ones (vectors, sketches, seqs, timestamps of visible rows), through a view
 * WITHOUT the lock while others hold views, because only it changes them; the row owner may append
 * while the graph owner reads (index_int.h says how).
 *
 * Rows at positions >= mem_index_visible() are written but not yet committed: scans and
 * stats ignore them.
 */
#ifndef MEM_CORE_INDEX_H
#define MEM_CORE_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MEM_INDEX_BLOCK_ROWS 256
#define MEM_INDEX_DIM_MAX    4096
/* An index whose blocks take this many bytes gets further blocks from huge-page slabs
 * (core/index.c): 1 MiB is 6 blocks at dim 128, 2 at dim 384. */
#define MEM_INDEX_SLAB_FROM ((size_t)1 << 20)

enum mem_row_flag {
    MEM_ROW_SUPERSEDED = 1,
    MEM_ROW_ARCHIVED = 2,
    MEM_ROW_DELETED = 4,
};

typedef struct mem_index mem_index_t;

/* The index-level counts of one moment (a copy). */
typedef struct mem_index_counts {
    size_t n_rows;                                        /* positions used, holes included */
    size_t n_visible;                                     /* positions scans may read (committed) */
    size_t n_active, n_superseded, n_archived, n_deleted; /* over all n_rows positions */
    size_t n_linked;      /* rows in the graph (the active ones, once the graph is current) */
    uint64_t graph_edges; /* edges among linked rows */
    uint32_t max_degree;  /* over linked rows */
} mem_index_counts_t;

/* Create an empty index for vectors of dim floats (1..MEM_INDEX_DIM_MAX).
 * MEM_OK or MEM_ENOMEM/EINVAL. */
int mem_index_new(size_t dim, mem_index_t **out);
void mem_index_free(mem_index_t *idx); /* NULL-safe */

/* ---- read view ---- */

size_t mem_index_dim(const mem_index_t *idx);
size_t mem_index_rows(const mem_index_t *idx);    /* positions used, holes included */
size_t mem_index_visible(const mem_index_t *idx); /* positions < this are committed */
void mem_index_counts(const mem_index_t *idx, mem_index_counts_t *out);
/* Position of id (id_len bytes), or -1 (deleted rows have no id). */
long mem_index_find(const mem_index_t *idx, const char *id, size_t id_len);
/* Position of the row with this seq (holes included: check its flags), or -1. Seqs grow
 * with positions, so this is a binary search. */
long mem_index_find_seq(const mem_index_t *idx, int64_t seq);
/* The first position below n (<= rows) whose seq is >= seq (n when none). */
size_t mem_index_lower_seq(const mem_index_t *idx, int64_t seq, size_t n);
/* Per row, pos < mem_index_rows(). */
const char *mem_index_id(const mem_index_t *idx, size_t pos);   /* NULL for a hole */
const float *mem_index_vec(const mem_index_t *idx, size_t pos); /* dim floats, normalised */
int64_t mem_index_ts(const mem_index_t *idx, size_t pos);       /* Unix ms */
int64_t mem_index_seq(const mem_index_t *idx, size_t pos);
uint8_t mem_index_flags(const mem_index_t *idx, size_t pos);   /* enum mem_row_flag; 0 = active */
uint32_t mem_index_degree(const mem_index_t *idx, size_t pos); /* 0 unless linked */
bool mem_index_linked(const mem_index_t *idx, size_t pos);     /* in the graph */
uint16_t mem_index_source(const mem_index_t *idx, size_t pos); /* interned, 0 = none */
/* Interned id of a source, 0 when unknown. */
int mem_index_source_find(const mem_index_t *idx, const char *source, size_t len);
/* The name of an interned source, NULL for 0 or unknown. */
const char *mem_index_source_name(const mem_index_t *idx, uint16_t source);

/* Access statistics: relaxed atomics, the one thing a view holder may change. The clock
 * goes up by one per insert and per access; a row's tick is the clock at its insert or
 * its last access. */
uint32_t mem_index_access_count(const mem_index_t *idx, size_t pos);
uint64_t mem_index_access_tick(const mem_index_t *idx, size_t pos);
uint64_t mem_index_access_clock(const mem_index_t *idx);
/* Count one access of row pos: clock + 1, the row's count + 1, its tick = the new clock. */
void mem_index_record_access(const mem_index_t *idx, size_t pos);

/* ---- mutable handle ---- */

/* Append a row (vec already normalised, dim floats; id of id_len bytes, unique among the
 * rows that are not deleted) with degree 0, access count 0, tick = ++clock. flags as stored
 * (MEM_ROW_DELETED is ignored). Writes the new position to *pos. Does not change
 * visibility. MEM_OK, MEM_ENOMEM (nothing changed). */
int mem_index_append(mem_index_t *idx, const char *id, size_t id_len, int64_t ts_ms, int64_t seq,
                     const float *vec, uint16_t source, uint8_t flags, size_t *pos);
/* The same, with vec's codes made beforehand (off the lock): q8 (dim bytes), q8_scale and
 * q8_err exactly as mem_vec_quantize_u8(vec, dim) gives them. */
int mem_index_append_coded(mem_index_t *idx, const char *id, size_t id_len, int64_t ts_ms,
                           int64_t seq, const float *vec, const uint8_t *q8, float q8_scale,
                           float q8_err, uint16_t source, uint8_t flags, size_t *pos);
/* A hole (a deleted row) that keeps its vector, for the graph owner to unlink it: storage/
 * restores deleted rows the graph has not let go yet this way. MEM_OK, MEM_ENOMEM. */
int mem_index_append_hole(mem_index_t *idx, int64_t ts_ms, int64_t seq, const float *vec,
                          size_t *pos);
/* Rows < n_visible (<= rows) become visible to scans and stats. */
void mem_index_publish(mem_index_t *idx, size_t n_visible);
/* Set a row's flags (counts follow; a hole stays a hole). Deleting removes its id from the
 * map (its vector stays until a vacuum). The graph fields do not change: the graph owner
 * unlinks a row that left the active set, links one that joined it; meanwhile a row that
 * is not active scores gate 0. */
void mem_index_set_flags(mem_index_t *idx, size_t pos, uint8_t flags);
/* Intern a source string: its id (> 0), 0 for NULL/empty, MEM_ENOMEM or MEM_ELIMIT. */
int mem_index_source_intern(mem_index_t *idx, const char *source, size_t len);
/* A row's source changes (an interned id, 0 = none): a segment's PATCH. */
void mem_index_set_source(mem_index_t *idx, size_t pos, uint16_t source);
/* Start-up restore of a row's stored access statistics, and of the clock. */
void mem_index_restore_row(mem_index_t *idx, size_t pos, uint32_t access_count, uint64_t tick);
void mem_index_restore_clock(mem_index_t *idx, uint64_t clock);
/* [graph] Start-up restore: row pos is in the graph with this stored degree. Call
 * mem_index_recount_graph once every row is in. */
void mem_index_restore_link(mem_index_t *idx, size_t pos, uint32_t degree);
/* [graph] Recompute graph_edges, max_degree and n_linked from the linked rows' degrees
 * (also rebuilds the private degree histogram that lets core/graph.c keep max_degree
 * without a recount). */
void mem_index_recount_graph(mem_index_t *idx);

/* ---- vacuum: a copy without the holes, to swap in ---- */

/* Build *out: a copy of old holding only its non-deleted rows, in the same order, with * every
 * per-row field (vector, int8 sketch, ts, seq, degree, link, access count, tick, source, flags, id)
 * and the index-level fields (clock, counts, graph_edges, max_degree, degree histogram, source
 * table) preserved; everything visible. Only positions change (mem_index_vacuum_remap). old must
 * have no pending rows (visible == rows), else MEM_EINVAL. Reads old through a view: access
 * statistics bumped meanwhile are copied with mem_index_vacuum_sync_access once they stop. MEM_OK,
 * MEM_ENOMEM. */
int mem_index_vacuum(const mem_index_t *old, mem_index_t **out);
/* remap[p] for every position p < rows(old): its position in mem_index_vacuum(old), or
 * SIZE_MAX for a hole. */
void mem_index_vacuum_remap(const mem_index_t *old, size_t *remap);
/* vac = mem_index_vacuum(old) and no row of old deleted since: copy old's current access
 * statistics (per row, and the clock) into vac. */
void mem_index_vacuum_sync_access(mem_index_t *vac, const mem_index_t *old);

#endif
