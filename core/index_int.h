/* index_int.h - the fields of the index, for core/ only (scan, graph, index)
 * SPDX-License-Identifier: MIT
 *
 * Included by core/ files and by the core tests and benches that measure these internals;
 * never by storage/ or anything above (scripts/check-deps.sh refuses it). The rules of
 * core/index.h hold per field: everything is written only through a mutable handle
 * (`mem_index_t *`, the caller excludes every reader), except the access statistics marked
 * "atomic", which any view holder bumps with relaxed atomics. Two owners share the
 * mutations (core/index.h): [rows] fields are the row owner's (append, flags, ids,
 * sources), [graph] fields the graph owner's (core/graph.c: degrees, links, edge counts).
 *
 * Growing while the graph owner reads. The graph owner reads rows (vectors, sketches,
 * seqs) WITHOUT the lock while the row owner appends: it reads only positions it was told
 * are visible, through `blocks` loaded atomically. So the row owner never frees a block
 * table it replaced: the old one stays readable (it points at the same blocks) until the
 * index is freed; the tables grow by doubling, so the retired ones together are smaller
 * than the live one.
 *
 * The degree histogram: _deg_hist[d] = linked rows whose degree is d (d >= 1; degree 0 is
 * not counted, so a freshly linked row with no edge needs no update). It lets a link or unlink keep
 * max_degree exact in O(change) instead of a recount over every row.
 */
#ifndef MEM_CORE_INDEX_INT_H
#define MEM_CORE_INDEX_INT_H

#include <stddef.h>
#include <stdint.h>

#include "core/index.h"

typedef struct mem_index_block {
    float *vecs;                                 /* BLOCK_ROWS * stride floats, 64-byte aligned */
    int64_t ts_ms[MEM_INDEX_BLOCK_ROWS];         /* observation time, Unix ms */
    int64_t seq[MEM_INDEX_BLOCK_ROWS];           /* per-namespace sequence */
    uint32_t degree[MEM_INDEX_BLOCK_ROWS];       /* [graph] degree, 0 unless linked */
    uint32_t access_count[MEM_INDEX_BLOCK_ROWS]; /* atomic: retrieves that returned the row */
    uint64_t tick[MEM_INDEX_BLOCK_ROWS];         /* atomic: clock at insert or last access */
    uint16_t source[MEM_INDEX_BLOCK_ROWS];       /* interned source, 0 = none */
    uint8_t flags[MEM_INDEX_BLOCK_ROWS];         /* enum mem_row_flag bits; 0 = active */
    uint32_t n_rows;                             /* rows used in this block */
    int64_t ts_min, ts_max;                      /* over every row of the block */
    char *ids[MEM_INDEX_BLOCK_ROWS];             /* NUL-terminated, NULL for a hole */
    uint8_t linked[MEM_INDEX_BLOCK_ROWS];        /* [graph] 1: a member of the graph */
    /* int8 sketch of vecs (filled by mem_index_append): the scan's pre-filter reads it to
     * skip the exact f32 dot of rows that cannot enter the top K.
     * Row r's codes at q8 + r * stride, biased by 128 (byte = code + 128, code in
     * [-127, 127]; padding bytes are 0), vec ~= q8_scale[r] * code, and
     * q8_err[r] >= || vec - q8_scale[r] * code ||_2. Vectors must only be written through
     * mem_index_append, or the sketch goes stale. */
    uint8_t *q8; /* BLOCK_ROWS * stride bytes, 64-byte aligned */
    float q8_scale[MEM_INDEX_BLOCK_ROWS];
    float q8_err[MEM_INDEX_BLOCK_ROWS];
    /* norm[r] >= ||vec of row r||_2 (mem_vec_norm_ub, set by mem_index_append and never
     * changed): the coherence graph's rounding window and its int8 bound read it instead
     * of a pass over the vectors (core/graph.c). */
    float norm[MEM_INDEX_BLOCK_ROWS];
} mem_index_block_t;

struct mem_index {
    size_t dim;                 /* floats per vector */
    size_t stride;              /* floats per row (dim rounded up to 16) */
    mem_index_block_t **blocks; /* [rows] read with __atomic_load_n by the graph owner */
    size_t n_blocks, cap_blocks;
    mem_index_block_t ***_retired; /* [rows] replaced block tables, freed with the index */
    size_t _n_retired;
    size_t n_rows;    /* [rows] positions used, holes included */
    size_t n_visible; /* [rows] positions scans may read (committed) */
    size_t n_active, n_superseded, n_archived, n_deleted; /* [rows] */
    uint64_t clock;                                       /* atomic: +1 per insert and per access */
    size_t n_linked;                                      /* [graph] rows in the graph */
    uint64_t graph_edges;                                 /* [graph] edges among linked rows */
    uint32_t max_degree;                                  /* [graph] over linked rows */
    uint32_t *_slots; /* open-addressing id map: pos + 1, 0 = empty, UINT32_MAX = tomb */
    size_t _cap_slots, _used_slots;
    char **_sources; /* interned sources, index 1.. */
    size_t _n_sources, _cap_sources;
    uint32_t *_deg_hist;  /* [graph] linked rows per degree (index >= 1), NULL when not built */
    size_t _deg_hist_cap; /* entries in _deg_hist */
    size_t _n_plain;      /* [rows] blocks 0.._n_plain-1 are own allocations, the rest in slabs */
    void **_slabs;        /* [rows] huge-page slabs (index.c), freed with the index */
    size_t _n_slabs, _cap_slabs;
    char *_slab_at; /* [rows] the current slab's free tail, _slab_left bytes */
    size_t _slab_left;
};

static inline mem_index_block_t *mem_index__block_of(const mem_index_t *idx, size_t pos)
{
    return __atomic_load_n(&idx->blocks, __ATOMIC_ACQUIRE)[pos / MEM_INDEX_BLOCK_ROWS];
}
static inline const float *mem_index__vec(const mem_index_t *idx, size_t pos)
{
    return mem_index__block_of(idx, pos)->vecs + (pos % MEM_INDEX_BLOCK_ROWS) * idx->stride;
}
#define MEM_INDEX_ROW(idx, pos, field)                                                             \
    (__atomic_load_n(&(idx)->blocks, __ATOMIC_ACQUIRE)[(pos) / MEM_INDEX_BLOCK_ROWS]               \
         ->field[(pos) % MEM_INDEX_BLOCK_ROWS])
/* The block table as the graph owner reads it while rows are appended. */
static inline mem_index_block_t *const *mem_index__blocks(const mem_index_t *idx)
{
    return __atomic_load_n(&idx->blocks, __ATOMIC_ACQUIRE);
}

/* Make room for degrees up to max_deg. MEM_OK (also when there is no histogram), MEM_ENOMEM. */
int mem_index__hist_reserve(mem_index_t *idx, size_t max_deg);
/* Set the degree of row pos; for a linked row the histogram and max_degree follow (the new
 * degree must have been reserved). graph_edges is the caller's. */
void mem_index__deg_set(mem_index_t *idx, size_t pos, uint32_t deg);

#endif
