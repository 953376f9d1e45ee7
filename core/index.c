/* index.c - time-ordered blocks, id map and source interning for one namespace
 * SPDX-License-Identifier: MIT
 */
#include "core/index.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include "core/err.h"
#include "core/index_int.h"
#include "core/vec.h"

#define ROW_ID(idx, pos) MEM_INDEX_ROW(idx, pos, ids)

#define SLOT_EMPTY 0u
#define SLOT_TOMB  UINT32_MAX

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

int mem_index_new(size_t dim, mem_index_t **out)
{
    if (dim == 0 || dim > MEM_INDEX_DIM_MAX) return MEM_EINVAL;
    mem_index_t *idx = calloc(1, sizeof(*idx));
    if (!idx) return MEM_ENOMEM;
    idx->dim = dim;
    idx->stride = (dim + 15) & ~(size_t)15;
    *out = idx;
    return MEM_OK;
}

void mem_index_free(mem_index_t *idx)
{
    if (!idx) return;
    for (size_t b = 0; b < idx->n_blocks; b++) {
        for (size_t r = 0; r < idx->blocks[b]->n_rows; r++)
            free(idx->blocks[b]->ids[r]);
        if (b < idx->_n_plain) { /* the later ones live in slabs */
            free(idx->blocks[b]->vecs);
            free(idx->blocks[b]->q8);
            free(idx->blocks[b]);
        }
    }
    for (size_t i = 0; i < idx->_n_slabs; i++)
        free(idx->_slabs[i]);
    free(idx->_slabs);
    free(idx->blocks);
    for (size_t i = 0; i < idx->_n_retired; i++)
        free(idx->_retired[i]);
    free(idx->_retired);
    free(idx->_slots);
    for (size_t s = 1; s <= idx->_n_sources; s++)
        free(idx->_sources[s]);
    free(idx->_sources);
    free(idx->_deg_hist);
    free(idx);
}

static int map_grow(mem_index_t *idx)
{
    size_t cap = idx->_cap_slots ? idx->_cap_slots * 2 : 1024;
    uint32_t *slots = calloc(cap, sizeof(*slots));
    if (!slots) return MEM_ENOMEM;
    for (size_t p = 0; p < idx->n_rows; p++) {
        const char *id = ROW_ID(idx, p);
        if (!id) continue;
        size_t i = hash_bytes(id, strlen(id)) & (cap - 1);
        while (slots[i] != SLOT_EMPTY)
            i = (i + 1) & (cap - 1);
        slots[i] = (uint32_t)p + 1;
    }
    free(idx->_slots);
    idx->_slots = slots;
    idx->_cap_slots = cap;
    idx->_used_slots = idx->n_rows - idx->n_deleted;
    return MEM_OK;
}

long mem_index_find(const mem_index_t *idx, const char *id, size_t id_len)
{
    if (!idx->_cap_slots) return -1;
    size_t mask = idx->_cap_slots - 1;
    for (size_t i = hash_bytes(id, id_len) & mask;; i = (i + 1) & mask) {
        uint32_t s = idx->_slots[i];
        if (s == SLOT_EMPTY) return -1;
        if (s == SLOT_TOMB) continue;
        const char *cand = ROW_ID(idx, s - 1);
        if (cand && strlen(cand) == id_len && memcmp(cand, id, id_len) == 0) return (long)(s - 1);
    }
}

static void map_remove(mem_index_t *idx, size_t pos)
{
    const char *id = ROW_ID(idx, pos);
    size_t mask = idx->_cap_slots - 1;
    for (size_t i = hash_bytes(id, strlen(id)) & mask;; i = (i + 1) & mask) {
        if (idx->_slots[i] == SLOT_EMPTY) return;
        if (idx->_slots[i] == pos + 1) {
            idx->_slots[i] = SLOT_TOMB;
            return;
        }
    }
}

/* Huge-page slabs. A scan reads, per block it visits, the block's columns, its sketch
 * (256 rows x stride bytes) and its candidates' f32 rows: on 4 KiB pages that is a TLB
 * entry per 4 KiB touched, and a read that comes back to the namespace after other work
 * (a server's request) finds most of them evicted, paying a page walk per page. So once an
 * index's blocks take MEM_INDEX_SLAB_FROM bytes, each further block (its struct, vectors and
 * sketch as one piece) is cut from a slab: 2 MiB aligned memory in whole 2 MiB pages,
 * advised for transparent huge pages (MADV_HUGEPAGE, where the kernel offers it; elsewhere,
 * or with huge pages off, it is ordinary memory). Smaller indexes stay on their own
 * allocations: a huge page is taken whole on its first touch, so a namespace of a few
 * blocks would hold 2 MiB. A slab holds as many pieces as keep its unused tail within an
 * eighth of it; slabs are freed with the index (blocks are never freed one by one). */
#define SLAB_PAGE ((size_t)2 << 20)

static size_t piece_head(void) /* the block struct, rounded up to the vectors' alignment */
{
    return (sizeof(mem_index_block_t) + 63) & ~(size_t)63;
}

static size_t piece_bytes(const mem_index_t *idx)
{
    return piece_head() + MEM_INDEX_BLOCK_ROWS * idx->stride * (sizeof(float) + 1);
}

/* Bytes of a new slab: n pieces in whole pages, the first n whose tail is <= 1/8. */
static size_t slab_bytes(size_t piece)
{
    size_t bytes = 0;
    for (size_t n = 1; n <= 16; n++) {
        bytes = (piece * n + SLAB_PAGE - 1) / SLAB_PAGE * SLAB_PAGE;
        if ((bytes - piece * n) * 8 <= bytes) break;
    }
    return bytes;
}

/* A zeroed block from the current slab, or a new one; NULL on ENOMEM. */
static mem_index_block_t *slab_block(mem_index_t *idx)
{
    size_t piece = piece_bytes(idx);
    if (idx->_slab_left < piece) {
        if (idx->_n_slabs == idx->_cap_slabs) {
            size_t cap = idx->_cap_slabs ? idx->_cap_slabs * 2 : 8;
            void **s = realloc(idx->_slabs, cap * sizeof(*s));
            if (!s) return NULL;
            idx->_slabs = s;
            idx->_cap_slabs = cap;
        }
        size_t bytes = slab_bytes(piece);
        char *slab = aligned_alloc(SLAB_PAGE, bytes);
        if (!slab) return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        (void)madvise(slab, bytes, MADV_HUGEPAGE); /* a hint: refused, the pages stay small */
#endif
        idx->_slabs[idx->_n_slabs++] = slab;
        idx->_slab_at = slab;
        idx->_slab_left = bytes;
    }
    char *at = idx->_slab_at;
    idx->_slab_at += piece;
    idx->_slab_left -= piece;
    memset(at, 0, piece);
    mem_index_block_t *blk = (mem_index_block_t *)(void *)at;
    blk->vecs = (float *)(void *)(at + piece_head());
    blk->q8 = (uint8_t *)(blk->vecs + MEM_INDEX_BLOCK_ROWS * idx->stride);
    return blk;
}

/* A zeroed block on its own allocations; NULL on ENOMEM. */
static mem_index_block_t *plain_block(const mem_index_t *idx)
{
    mem_index_block_t *blk = calloc(1, sizeof(*blk));
    if (!blk) return NULL;
    size_t bytes = MEM_INDEX_BLOCK_ROWS * idx->stride * sizeof(float);
    blk->vecs = aligned_alloc(64, bytes);
    if (!blk->vecs) {
        free(blk);
        return NULL;
    }
    memset(blk->vecs, 0, bytes);
    blk->q8 = aligned_alloc(64, MEM_INDEX_BLOCK_ROWS * idx->stride);
    if (!blk->q8) {
        free(blk->vecs);
        free(blk);
        return NULL;
    }
    memset(blk->q8, 0, MEM_INDEX_BLOCK_ROWS * idx->stride);
    return blk;
}

static int add_block(mem_index_t *idx)
{
    if (idx->n_blocks == idx->cap_blocks) {
        /* A new table, not a realloc: the graph owner may still read the old one (it stays,
         * retired, until the index is freed). */
        size_t cap = idx->cap_blocks ? idx->cap_blocks * 2 : 16;
        mem_index_block_t ***retired = NULL;
        if (idx->blocks) {
            retired = realloc(idx->_retired, (idx->_n_retired + 1) * sizeof(*retired));
            if (!retired) return MEM_ENOMEM;
            idx->_retired = retired;
        }
        mem_index_block_t **blocks = malloc(cap * sizeof(*blocks));
        if (!blocks) return MEM_ENOMEM;
        if (idx->n_blocks) memcpy(blocks, idx->blocks, idx->n_blocks * sizeof(*blocks));
        if (idx->blocks) idx->_retired[idx->_n_retired++] = idx->blocks;
        __atomic_store_n(&idx->blocks, blocks, __ATOMIC_RELEASE);
        idx->cap_blocks = cap;
    }
    /* every block so far plain: the first slab comes once they take MEM_INDEX_SLAB_FROM */
    bool slab =
        idx->_n_plain < idx->n_blocks || idx->n_blocks * piece_bytes(idx) >= MEM_INDEX_SLAB_FROM;
    mem_index_block_t *blk = slab ? slab_block(idx) : plain_block(idx);
    if (!blk) return MEM_ENOMEM;
    if (!slab) idx->_n_plain++;
    idx->blocks[idx->n_blocks] = blk;
    /* published with the release below: a reader that loads n_blocks sees the block */
    __atomic_store_n(&idx->n_blocks, idx->n_blocks + 1, __ATOMIC_RELEASE);
    return MEM_OK;
}

static void count_flags(mem_index_t *idx, uint8_t flags, long delta)
{
    if (flags & MEM_ROW_DELETED)
        idx->n_deleted += (size_t)delta;
    else if (flags & MEM_ROW_ARCHIVED)
        idx->n_archived += (size_t)delta;
    else if (flags & MEM_ROW_SUPERSEDED)
        idx->n_superseded += (size_t)delta;
    else
        idx->n_active += (size_t)delta;
}

/* q8 NULL: the codes are made here, straight into the block. */
static int append(mem_index_t *idx, const char *id, size_t id_len, int64_t ts_ms, int64_t seq,
                  const float *vec, const uint8_t *q8, float q8_scale, float q8_err,
                  uint16_t source, uint8_t flags, size_t *pos)
{
    int rc;
    if (idx->n_rows >= UINT32_MAX - 1) return MEM_ENOMEM;
    if (idx->n_rows == idx->n_blocks * MEM_INDEX_BLOCK_ROWS && (rc = add_block(idx)) != MEM_OK)
        return rc;
    if ((idx->_used_slots + 1) * 2 > idx->_cap_slots && (rc = map_grow(idx)) != MEM_OK) return rc;
    char *copy = malloc(id_len + 1);
    if (!copy) return MEM_ENOMEM;
    memcpy(copy, id, id_len);
    copy[id_len] = '\0';

    size_t p = idx->n_rows;
    mem_index_block_t *blk = idx->blocks[p / MEM_INDEX_BLOCK_ROWS];
    size_t r = p % MEM_INDEX_BLOCK_ROWS;
    memcpy(blk->vecs + r * idx->stride, vec, idx->dim * sizeof(float));
    if (q8) {
        memcpy(blk->q8 + r * idx->stride, q8, idx->dim);
        blk->q8_scale[r] = q8_scale;
        blk->q8_err[r] = q8_err;
    } else {
        mem_vec_quantize_u8(vec, idx->dim, blk->q8 + r * idx->stride, &blk->q8_scale[r],
                            &blk->q8_err[r]);
    }
    blk->norm[r] = mem_vec_norm_ub(vec, idx->dim);
    blk->ts_ms[r] = ts_ms;
    blk->seq[r] = seq;
    blk->degree[r] = 0;
    blk->linked[r] = 0;
    blk->access_count[r] = 0;
    blk->tick[r] = ++idx->clock;
    blk->source[r] = source;
    blk->flags[r] = flags & (uint8_t)~MEM_ROW_DELETED;
    if (blk->n_rows == 0 || ts_ms < blk->ts_min) blk->ts_min = ts_ms;
    if (blk->n_rows == 0 || ts_ms > blk->ts_max) blk->ts_max = ts_ms;
    blk->ids[r] = copy;
    blk->n_rows++;
    idx->n_rows++;
    count_flags(idx, blk->flags[r], 1);

    size_t mask = idx->_cap_slots - 1;
    size_t i = hash_bytes(copy, id_len) & mask;
    while (idx->_slots[i] != SLOT_EMPTY && idx->_slots[i] != SLOT_TOMB)
        i = (i + 1) & mask;
    if (idx->_slots[i] == SLOT_EMPTY) idx->_used_slots++;
    idx->_slots[i] = (uint32_t)p + 1;
    *pos = p;
    return MEM_OK;
}

int mem_index_append(mem_index_t *idx, const char *id, size_t id_len, int64_t ts_ms, int64_t seq,
                     const float *vec, uint16_t source, uint8_t flags, size_t *pos)
{
    return append(idx, id, id_len, ts_ms, seq, vec, NULL, 0.0f, 0.0f, source, flags, pos);
}

int mem_index_append_coded(mem_index_t *idx, const char *id, size_t id_len, int64_t ts_ms,
                           int64_t seq, const float *vec, const uint8_t *q8, float q8_scale,
                           float q8_err, uint16_t source, uint8_t flags, size_t *pos)
{
    return append(idx, id, id_len, ts_ms, seq, vec, q8, q8_scale, q8_err, source, flags, pos);
}

void mem_index_set_flags(mem_index_t *idx, size_t pos, uint8_t flags)
{
    uint8_t *f = &MEM_INDEX_ROW(idx, pos, flags);
    if (*f & MEM_ROW_DELETED) return; /* a hole stays a hole */
    /* The graph fields are left alone: the graph owner sees the change (storage/ tells it)
     * and unlinks or links the row; until then a row that is not active has gate 0. */
    count_flags(idx, *f, -1);
    count_flags(idx, flags, 1);
    *f = flags;
    if (flags & MEM_ROW_DELETED) {
        map_remove(idx, pos);
        free(ROW_ID(idx, pos));
        ROW_ID(idx, pos) = NULL;
    }
}

int mem_index_append_hole(mem_index_t *idx, int64_t ts_ms, int64_t seq, const float *vec,
                          size_t *pos)
{
    /* a transient id, removed with the flag at once: the map never keeps it */
    char id[32];
    int len = snprintf(id, sizeof(id), "\x01hole %lld", (long long)seq);
    int rc = mem_index_append(idx, id, (size_t)len, ts_ms, seq, vec, 0, 0, pos);
    if (rc == MEM_OK) mem_index_set_flags(idx, *pos, MEM_ROW_DELETED);
    return rc;
}

int mem_index_source_find(const mem_index_t *idx, const char *source, size_t len)
{
    if (!source || len == 0) return 0;
    for (size_t s = 1; s <= idx->_n_sources; s++)
        if (strlen(idx->_sources[s]) == len && memcmp(idx->_sources[s], source, len) == 0)
            return (int)s;
    return 0;
}

int mem_index_source_intern(mem_index_t *idx, const char *source, size_t len)
{
    int found = mem_index_source_find(idx, source, len);
    if (found || !source || len == 0) return found;
    if (idx->_n_sources >= UINT16_MAX) return MEM_ELIMIT;
    if (idx->_n_sources + 2 > idx->_cap_sources) {
        size_t cap = idx->_cap_sources ? idx->_cap_sources * 2 : 8;
        char **s = realloc(idx->_sources, cap * sizeof(*s));
        if (!s) return MEM_ENOMEM;
        idx->_sources = s;
        idx->_cap_sources = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) return MEM_ENOMEM;
    memcpy(copy, source, len);
    copy[len] = '\0';
    idx->_sources[++idx->_n_sources] = copy;
    return (int)idx->_n_sources;
}

void mem_index_set_source(mem_index_t *idx, size_t pos, uint16_t source)
{
    if (source <= idx->_n_sources) MEM_INDEX_ROW(idx, pos, source) = source;
}

const char *mem_index_source_name(const mem_index_t *idx, uint16_t source)
{
    return source && source <= idx->_n_sources ? idx->_sources[source] : NULL;
}

void mem_index_recount_graph(mem_index_t *idx)
{
    uint64_t sum = 0;
    uint32_t max = 0;
    size_t n_linked = 0;
    for (size_t p = 0; p < idx->n_rows; p++) {
        if (!MEM_INDEX_ROW(idx, p, linked)) continue;
        uint32_t d = MEM_INDEX_ROW(idx, p, degree);
        sum += d;
        n_linked++;
        if (d > max) max = d;
    }
    idx->graph_edges = sum / 2;
    idx->max_degree = max;
    idx->n_linked = n_linked;

    /* The histogram: room for one more than the largest degree, so a link that raises the
     * maximum by one rarely needs to grow it. On ENOMEM it is dropped (NULL) and
     * core/graph.c falls back to recounting. */
    size_t cap = (size_t)max + 2;
    if (cap < 64) cap = 64;
    if (cap > idx->_deg_hist_cap) {
        free(idx->_deg_hist);
        idx->_deg_hist = malloc(cap * sizeof(*idx->_deg_hist));
        idx->_deg_hist_cap = idx->_deg_hist ? cap : 0;
    }
    if (!idx->_deg_hist) return;
    memset(idx->_deg_hist, 0, idx->_deg_hist_cap * sizeof(*idx->_deg_hist));
    for (size_t p = 0; p < idx->n_rows; p++)
        if (MEM_INDEX_ROW(idx, p, linked) && MEM_INDEX_ROW(idx, p, degree) != 0)
            idx->_deg_hist[MEM_INDEX_ROW(idx, p, degree)]++;
}

int mem_index__hist_reserve(mem_index_t *idx, size_t max_deg)
{
    if (!idx->_deg_hist) return MEM_OK; /* no histogram: callers recount */
    if (max_deg < idx->_deg_hist_cap) return MEM_OK;
    size_t cap = idx->_deg_hist_cap;
    while (cap <= max_deg)
        cap *= 2;
    uint32_t *h = realloc(idx->_deg_hist, cap * sizeof(*h));
    if (!h) return MEM_ENOMEM;
    memset(h + idx->_deg_hist_cap, 0, (cap - idx->_deg_hist_cap) * sizeof(*h));
    idx->_deg_hist = h;
    idx->_deg_hist_cap = cap;
    return MEM_OK;
}

void mem_index__deg_set(mem_index_t *idx, size_t pos, uint32_t deg)
{
    uint32_t *d = &MEM_INDEX_ROW(idx, pos, degree);
    if (idx->_deg_hist && MEM_INDEX_ROW(idx, pos, linked)) {
        if (*d) idx->_deg_hist[*d]--;
        if (deg) idx->_deg_hist[deg]++;
        if (deg > idx->max_degree) idx->max_degree = deg;
        while (idx->max_degree > 0 && idx->_deg_hist[idx->max_degree] == 0)
            idx->max_degree--;
    }
    *d = deg;
}

int mem_index_vacuum(const mem_index_t *old, mem_index_t **out)
{
    *out = NULL;
    if (old->n_visible != old->n_rows) return MEM_EINVAL;
    mem_index_t *idx = NULL;
    int rc = mem_index_new(old->dim, &idx);
    if (rc != MEM_OK) return rc;
    for (size_t s = 1; s <= old->_n_sources && rc == MEM_OK; s++) {
        const char *name = old->_sources[s];
        if (mem_index_source_intern(idx, name, strlen(name)) != (int)s) rc = MEM_ENOMEM;
    }
    for (size_t p = 0; p < old->n_rows && rc == MEM_OK; p++) {
        const mem_index_block_t *ob = old->blocks[p / MEM_INDEX_BLOCK_ROWS];
        size_t r = p % MEM_INDEX_BLOCK_ROWS;
        uint8_t flags = ob->flags[r];
        if (flags & MEM_ROW_DELETED) continue;
        const char *id = ob->ids[r];
        size_t np;
        rc = mem_index_append(idx, id, strlen(id), ob->ts_ms[r], ob->seq[r],
                              ob->vecs + r * old->stride, ob->source[r], flags, &np);
        if (rc != MEM_OK) break;
        mem_index_block_t *nb = idx->blocks[np / MEM_INDEX_BLOCK_ROWS];
        size_t nr = np % MEM_INDEX_BLOCK_ROWS;
        /* the sketch is a deterministic function of the vector; copy it anyway, exactly */
        memcpy(nb->q8 + nr * idx->stride, ob->q8 + r * old->stride, old->stride);
        nb->q8_scale[nr] = ob->q8_scale[r];
        nb->q8_err[nr] = ob->q8_err[r];
        nb->degree[nr] = ob->degree[r];
        nb->linked[nr] = ob->linked[r];
        nb->access_count[nr] = __atomic_load_n(&ob->access_count[r], __ATOMIC_RELAXED);
        nb->tick[nr] = __atomic_load_n(&ob->tick[r], __ATOMIC_RELAXED);
    }
    if (rc == MEM_OK && old->_deg_hist) {
        idx->_deg_hist = malloc(old->_deg_hist_cap * sizeof(*idx->_deg_hist));
        if (!idx->_deg_hist) {
            rc = MEM_ENOMEM;
        } else {
            memcpy(idx->_deg_hist, old->_deg_hist, old->_deg_hist_cap * sizeof(*idx->_deg_hist));
            idx->_deg_hist_cap = old->_deg_hist_cap;
        }
    }
    if (rc != MEM_OK) {
        mem_index_free(idx);
        return rc;
    }
    idx->clock = __atomic_load_n(&old->clock, __ATOMIC_RELAXED);
    idx->graph_edges = old->graph_edges;
    idx->max_degree = old->max_degree;
    idx->n_linked = old->n_linked;
    idx->n_visible = idx->n_rows;
    *out = idx;
    return MEM_OK;
}

void mem_index_vacuum_sync_access(mem_index_t *vac, const mem_index_t *old)
{
    size_t np = 0;
    for (size_t p = 0; p < old->n_rows && np < vac->n_rows; p++) {
        if (MEM_INDEX_ROW(old, p, flags) & MEM_ROW_DELETED) continue;
        MEM_INDEX_ROW(vac, np, access_count) =
            __atomic_load_n(&MEM_INDEX_ROW(old, p, access_count), __ATOMIC_RELAXED);
        MEM_INDEX_ROW(vac, np, tick) =
            __atomic_load_n(&MEM_INDEX_ROW(old, p, tick), __ATOMIC_RELAXED);
        np++;
    }
    vac->clock = __atomic_load_n(&old->clock, __ATOMIC_RELAXED);
}

void mem_index_vacuum_remap(const mem_index_t *old, size_t *remap)
{
    size_t np = 0;
    for (size_t p = 0; p < old->n_rows; p++)
        remap[p] = (MEM_INDEX_ROW(old, p, flags) & MEM_ROW_DELETED) ? SIZE_MAX : np++;
}

/* ---- read view ---- */

size_t mem_index_dim(const mem_index_t *idx)
{
    return idx->dim;
}

size_t mem_index_rows(const mem_index_t *idx)
{
    return idx->n_rows;
}

size_t mem_index_visible(const mem_index_t *idx)
{
    return idx->n_visible;
}

void mem_index_counts(const mem_index_t *idx, mem_index_counts_t *out)
{
    out->n_rows = idx->n_rows;
    out->n_visible = idx->n_visible;
    out->n_active = idx->n_active;
    out->n_superseded = idx->n_superseded;
    out->n_archived = idx->n_archived;
    out->n_deleted = idx->n_deleted;
    out->n_linked = idx->n_linked;
    out->graph_edges = idx->graph_edges;
    out->max_degree = idx->max_degree;
}

size_t mem_index_lower_seq(const mem_index_t *idx, int64_t seq, size_t n)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (MEM_INDEX_ROW(idx, mid, seq) < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

long mem_index_find_seq(const mem_index_t *idx, int64_t seq)
{
    size_t lo = mem_index_lower_seq(idx, seq, idx->n_rows);
    return lo < idx->n_rows && MEM_INDEX_ROW(idx, lo, seq) == seq ? (long)lo : -1;
}

const char *mem_index_id(const mem_index_t *idx, size_t pos)
{
    return ROW_ID(idx, pos);
}

const float *mem_index_vec(const mem_index_t *idx, size_t pos)
{
    return mem_index__vec(idx, pos);
}

int64_t mem_index_ts(const mem_index_t *idx, size_t pos)
{
    return MEM_INDEX_ROW(idx, pos, ts_ms);
}

int64_t mem_index_seq(const mem_index_t *idx, size_t pos)
{
    return MEM_INDEX_ROW(idx, pos, seq);
}

uint8_t mem_index_flags(const mem_index_t *idx, size_t pos)
{
    return MEM_INDEX_ROW(idx, pos, flags);
}

uint32_t mem_index_degree(const mem_index_t *idx, size_t pos)
{
    return MEM_INDEX_ROW(idx, pos, degree);
}

uint16_t mem_index_source(const mem_index_t *idx, size_t pos)
{
    return MEM_INDEX_ROW(idx, pos, source);
}

uint32_t mem_index_access_count(const mem_index_t *idx, size_t pos)
{
    return __atomic_load_n(&MEM_INDEX_ROW(idx, pos, access_count), __ATOMIC_RELAXED);
}

uint64_t mem_index_access_tick(const mem_index_t *idx, size_t pos)
{
    return __atomic_load_n(&MEM_INDEX_ROW(idx, pos, tick), __ATOMIC_RELAXED);
}

uint64_t mem_index_access_clock(const mem_index_t *idx)
{
    return __atomic_load_n(&idx->clock, __ATOMIC_RELAXED);
}

void mem_index_record_access(const mem_index_t *idx, size_t pos)
{
    /* The access statistics are atomics that readers own together (index.h): the object
     * itself was never defined const, so writing them through a view is well defined. */
    mem_index_t *w = (mem_index_t *)idx;
    uint64_t tick = __atomic_add_fetch(&w->clock, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&MEM_INDEX_ROW(w, pos, access_count), 1, __ATOMIC_RELAXED);
    __atomic_store_n(&MEM_INDEX_ROW(w, pos, tick), tick, __ATOMIC_RELAXED);
}

/* ---- mutable handle ---- */

void mem_index_publish(mem_index_t *idx, size_t n_visible)
{
    idx->n_visible = n_visible < idx->n_rows ? n_visible : idx->n_rows;
}

void mem_index_restore_row(mem_index_t *idx, size_t pos, uint32_t access_count, uint64_t tick)
{
    MEM_INDEX_ROW(idx, pos, access_count) = access_count;
    MEM_INDEX_ROW(idx, pos, tick) = tick;
}

void mem_index_restore_link(mem_index_t *idx, size_t pos, uint32_t degree)
{
    MEM_INDEX_ROW(idx, pos, linked) = 1;
    MEM_INDEX_ROW(idx, pos, degree) = degree;
}

bool mem_index_linked(const mem_index_t *idx, size_t pos)
{
    return MEM_INDEX_ROW(idx, pos, linked) != 0;
}

void mem_index_restore_clock(mem_index_t *idx, uint64_t clock)
{
    idx->clock = clock;
}
