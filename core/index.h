/* index.h - the in-memory index of one namespace: vectors in time-ordered blocks
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Segments are appended in ingest order, which is time order (SPEC section 2), so
 * a position `pos` (0..n_rows-1) never moves while the index lives: block pos / BLOCK_ROWS,
 * row pos % BLOCK_ROWS. A hard delete leaves a hole flagged MEM_ROW_DELETED; holes vanish
 * at the next reload, or when storage/ swaps in a vacuumed copy (mem_index_vacuum: same
 * rows in the same order, new positions). Each block keeps its time range for pruning. Vectors are
 * L2-normalised, rows padded to `stride` floats and 64-byte aligned. Ids, sources and everything
 * not needed by a scan live apart from the vectors.
 *
 * Not thread-safe: storage/ guards each index with a lock (one writer, many scanners).
 * Rows at positions >= n_visible are written but not yet committed: scans ignore them.
 */
#ifndef MEM_CORE_INDEX_H
#define MEM_CORE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#define MEM_INDEX_BLOCK_ROWS 256

enum mem_row_flag {
    MEM_ROW_SUPERSEDED = 1,
    MEM_ROW_ARCHIVED = 2,
    MEM_ROW_DELETED = 4,
};

typedef struct mem_index_block {
    float *vecs;                                 /* BLOCK_ROWS * stride floats, 64-byte aligned */
    int64_t ts_ms[MEM_INDEX_BLOCK_ROWS];         /* observation time, Unix ms */
    int64_t seq[MEM_INDEX_BLOCK_ROWS];           /* per-namespace sequence */
    uint32_t degree[MEM_INDEX_BLOCK_ROWS];       /* coherence-graph degree (0 when inactive) */
    uint32_t access_count[MEM_INDEX_BLOCK_ROWS]; /* retrieves that returned the row */
    uint64_t tick[MEM_INDEX_BLOCK_ROWS];         /* logical clock at insert or last access */
    uint16_t source[MEM_INDEX_BLOCK_ROWS];       /* interned source, 0 = none */
    uint8_t flags[MEM_INDEX_BLOCK_ROWS];         /* enum mem_row_flag bits; 0 = active */
    uint32_t n_rows;                             /* rows used in this block */
    int64_t ts_min, ts_max;                      /* over every row of the block */
    /* int8 sketch of vecs (added by the engine, filled by mem_index_append): the scan's
     * pre-filter reads it to skip the exact f32 dot of rows that cannot enter the top K.
     * Row r's codes at q8 + r * stride, biased by 128 (byte = code + 128, code in
     * [-127, 127]; padding bytes are 0), vec ~= q8_scale[r] * code, and
     * q8_err[r] >= || vec - q8_scale[r] * code ||_2. Vectors must only be written through
     * mem_index_append, or the sketch goes stale. */
    uint8_t *q8; /* BLOCK_ROWS * stride bytes, 64-byte aligned */
    float q8_scale[MEM_INDEX_BLOCK_ROWS];
    float q8_err[MEM_INDEX_BLOCK_ROWS];
} mem_index_block_t;

typedef struct mem_index {
    size_t dim;    /* floats per vector */
    size_t stride; /* floats per row (dim rounded up to 16) */
    mem_index_block_t **blocks;
    size_t n_blocks, cap_blocks;
    size_t n_rows;    /* positions used, holes included */
    size_t n_visible; /* positions scans may read (committed) */
    size_t n_active, n_superseded, n_archived, n_deleted;
    uint64_t clock;       /* logical clock: +1 per insert and per access */
    uint64_t graph_edges; /* edges among active rows */
    uint32_t max_degree;  /* over active rows */
    /* private */
    char **_ids;      /* per position, NUL-terminated, NULL for deleted */
    uint32_t *_slots; /* open-addressing id map: pos + 1, 0 = empty, UINT32_MAX = tombstone */
    size_t _cap_slots, _used_slots;
    char **_sources; /* interned sources, index 1.. */
    size_t _n_sources, _cap_sources;
    uint32_t *_deg_hist;  /* active rows per degree (index >= 1), NULL when not built */
    size_t _deg_hist_cap; /* entries in _deg_hist */
} mem_index_t;

/* Create an empty index for vectors of dim floats (1..4096). MEM_OK or MEM_ENOMEM/EINVAL. */
int mem_index_new(size_t dim, mem_index_t **out);
void mem_index_free(mem_index_t *idx);

/* Append a row (vec already normalised, dim floats; id of id_len bytes, unique).
 * flags/degree/access/tick as stored. Writes the new position to *pos. Does not change
 * n_visible. MEM_OK, MEM_ENOMEM. */
int mem_index_append(mem_index_t *idx, const char *id, size_t id_len, int64_t ts_ms, int64_t seq,
                     const float *vec, uint16_t source, uint8_t flags, size_t *pos);
/* Position of id, or -1. */
long mem_index_find(const mem_index_t *idx, const char *id, size_t id_len);
/* Set a row's flags (counts follow). Deleting removes its id from the map. */
void mem_index_set_flags(mem_index_t *idx, size_t pos, uint8_t flags);
/* Intern a source string (>0), or 0 for NULL/empty. MEM_ENOMEM as negative return. */
int mem_index_source_intern(mem_index_t *idx, const char *source, size_t len);
/* Interned id of a source, 0 when unknown. */
int mem_index_source_find(const mem_index_t *idx, const char *source, size_t len);
const char *mem_index_source_name(const mem_index_t *idx, uint16_t source);
/* Recompute graph_edges and max_degree from the active rows' degrees (also rebuilds the
 * private degree histogram that lets core/graph.c keep max_degree without a recount). */
void mem_index_recount_graph(mem_index_t *idx);
/* Build *out: a copy of old holding only its non-deleted rows, in the same order, with
 * every per-row field (vector, int8 sketch, ts, seq, degree, access count, tick, source,
 * flags, id) and the index-level fields (clock, counts, graph_edges, max_degree, degree
 * histogram, source table) preserved; n_visible = n_rows. Only positions change: the k-th
 * non-deleted row of old is row k of *out. old must have no pending rows
 * (n_visible == n_rows), else MEM_EINVAL. Access statistics (access_count, tick, clock)
 * are read with relaxed atomics, so readers may keep bumping them meanwhile; copy the
 * final values with mem_index_vacuum_sync_access once they stop. MEM_OK, MEM_ENOMEM. */
int mem_index_vacuum(const mem_index_t *old, mem_index_t **out);
/* vac = mem_index_vacuum(old) and no row of old deleted since: copy old's current access
 * statistics (access_count, tick per row, clock) into vac. */
void mem_index_vacuum_sync_access(mem_index_t *vac, const mem_index_t *old);

static inline mem_index_block_t *mem_index_block_of(const mem_index_t *idx, size_t pos)
{
    return idx->blocks[pos / MEM_INDEX_BLOCK_ROWS];
}
static inline const float *mem_index_vec(const mem_index_t *idx, size_t pos)
{
    return idx->blocks[pos / MEM_INDEX_BLOCK_ROWS]->vecs +
           (pos % MEM_INDEX_BLOCK_ROWS) * idx->stride;
}
static inline const char *mem_index_id(const mem_index_t *idx, size_t pos)
{
    return idx->_ids[pos];
}
#define MEM_INDEX_ROW(idx, pos, field)                                                             \
    ((idx)->blocks[(pos) / MEM_INDEX_BLOCK_ROWS]->field[(pos) % MEM_INDEX_BLOCK_ROWS])

#endif
