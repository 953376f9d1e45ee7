/* record.c - a write op as a replicated log record
 * SPDX-License-Identifier: MIT
 *
 * Layout: "MNR1", u8 wire kind (below; stable across versions, unlike the op enum), u8 flags
 * (1 batch, 2 purge, 4 embedder, 8 no graph), str msgid, str ns, u64 dim, i64 now_ms, str
 * embedder (only with flag 4), then per kind: INSERT u32 n, n x (str id, u8 ts_given, i64
 * ts_ms, opt text, opt source, opt metadata, u32 n_sup, n_sup x str, dim x f32); DELETE str id;
 * COMPACT u32 n, n x str; PATCH str id, u8 (1 metadata given, 2 source given), opt metadata,
 * opt source (absent with its bit set: clear it); IMPORT u32 n, n x (the INSERT segment, then
 * u8 archived, u64 line): the whole import in one record, so its holders apply it all or
 * nothing like a single node. str = u32 length, bytes, NUL; opt = u8 present, then str. Host
 * byte order (every supported target is little-endian).
 */
#include "cluster/record.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Kinds as written in the log: numbers never change meaning (a log outlives binaries). */
enum wire_kind {
    W_NS_CREATE = 0,
    W_NS_DROP = 1,
    W_INSERT = 2,
    W_DELETE = 3,
    W_COMPACT = 4,
    W_PATCH = 5,
    W_IMPORT = 6,
    W_KINDS
};

static int wire_of(mem_store_op_kind_t k)
{
    switch (k) {
    case MEM_STORE_OP_NS_CREATE:
        return W_NS_CREATE;
    case MEM_STORE_OP_NS_DROP:
        return W_NS_DROP;
    case MEM_STORE_OP_INSERT:
        return W_INSERT;
    case MEM_STORE_OP_DELETE:
        return W_DELETE;
    case MEM_STORE_OP_COMPACT:
        return W_COMPACT;
    case MEM_STORE_OP_PATCH:
        return W_PATCH;
    case MEM_STORE_OP_IMPORT:
        return W_IMPORT;
    default:
        return -1; /* NS_IMPORT and NS_FORGET are local */
    }
}

static mem_store_op_kind_t op_of(int w)
{
    static const mem_store_op_kind_t map[W_KINDS] = {
        [W_NS_CREATE] = MEM_STORE_OP_NS_CREATE, [W_NS_DROP] = MEM_STORE_OP_NS_DROP,
        [W_INSERT] = MEM_STORE_OP_INSERT,       [W_DELETE] = MEM_STORE_OP_DELETE,
        [W_COMPACT] = MEM_STORE_OP_COMPACT,     [W_PATCH] = MEM_STORE_OP_PATCH,
        [W_IMPORT] = MEM_STORE_OP_IMPORT,
    };
    return map[w];
}

static size_t seg_size(const mem_store_seg_in_t *s, size_t dim)
{
    size_t n = 4 + strlen(s->id) + 1 + 1 + 8;
    n += 1 + (s->text ? 4 + s->text_len + 1 : 0);
    n += 1 + (s->source ? 4 + s->source_len + 1 : 0);
    n += 1 + (s->metadata ? 4 + s->metadata_len + 1 : 0);
    n += 4;
    for (size_t k = 0; k < s->n_supersedes; k++)
        n += 4 + strlen(s->supersedes[k]) + 1;
    return n + dim * sizeof(float);
}

size_t mem_cluster_rec_size(const mem_store_op_t *op, size_t msgid_len)
{
    size_t n = 4 + 1 + 1 + (4 + msgid_len + 1) + (4 + strlen(op->ns) + 1) + 8 + 8;
    if (op->embedder) n += 4 + strlen(op->embedder) + 1;
    switch (op->kind) {
    case MEM_STORE_OP_INSERT:
        n += 4;
        for (size_t i = 0; i < op->n_segs; i++)
            n += seg_size(&op->segs[i], op->dim);
        break;
    case MEM_STORE_OP_IMPORT: {
        n += 4;
        const mem_store_import_src_t *src = op->import;
        if (!src || src->rewind(src->ud) != MEM_OK) break;
        mem_store_seg_in_t seg;
        bool archived;
        uint64_t line;
        while (src->next(src->ud, &seg, &archived, &line) == 1)
            n += seg_size(&seg, src->dim) + 1 + 8;
        break;
    }
    case MEM_STORE_OP_DELETE:
        n += 4 + strlen(op->id) + 1;
        break;
    case MEM_STORE_OP_COMPACT:
        n += 4;
        for (size_t i = 0; i < op->n_evict; i++)
            n += 4 + strlen(op->evict_ids[i]) + 1;
        break;
    case MEM_STORE_OP_PATCH:
        n += 4 + strlen(op->id) + 1 + 1;
        n += 1 + (op->metadata ? 4 + op->metadata_len + 1 : 0);
        n += 1 + (op->source ? 4 + op->source_len + 1 : 0);
        break;
    default:
        break;
    }
    return n;
}

typedef struct wbuf {
    unsigned char *p;
    size_t len, cap;
    int fail;
} wbuf_t;

static void put(wbuf_t *w, const void *src, size_t n)
{
    if (w->fail) return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + n)
            cap *= 2;
        unsigned char *p = realloc(w->p, cap);
        if (!p) {
            w->fail = 1;
            return;
        }
        w->p = p;
        w->cap = cap;
    }
    memcpy(w->p + w->len, src, n);
    w->len += n;
}

static void put_u8(wbuf_t *w, uint8_t v)
{
    put(w, &v, 1);
}
static void put_u32(wbuf_t *w, uint32_t v)
{
    put(w, &v, 4);
}
static void put_u64(wbuf_t *w, uint64_t v)
{
    put(w, &v, 8);
}

static void put_str(wbuf_t *w, const char *s, size_t n)
{
    put_u32(w, (uint32_t)n);
    put(w, s, n);
    put_u8(w, 0);
}

static void put_opt(wbuf_t *w, const char *s, size_t n)
{
    put_u8(w, s != NULL);
    if (s) put_str(w, s, n);
}

static void put_seg(wbuf_t *w, const mem_store_seg_in_t *s, size_t dim)
{
    put_str(w, s->id, strlen(s->id));
    put_u8(w, s->ts_given);
    put_u64(w, (uint64_t)s->ts_ms);
    put_opt(w, s->text, s->text_len);
    put_opt(w, s->source, s->source_len);
    put_opt(w, s->metadata, s->metadata_len);
    put_u32(w, (uint32_t)s->n_supersedes);
    for (size_t k = 0; k < s->n_supersedes; k++)
        put_str(w, s->supersedes[k], strlen(s->supersedes[k]));
    put(w, s->vec, dim * sizeof(float));
}

unsigned char *mem_cluster_rec_encode(const mem_store_op_t *op, const char *msgid, size_t *len)
{
    int wk = wire_of(op->kind);
    if (wk < 0) return NULL;
    wbuf_t w = {0};
    put(&w, "MNR1", 4);
    put_u8(&w, (uint8_t)wk);
    put_u8(&w, (uint8_t)((op->batch ? 1 : 0) | (op->purge ? 2 : 0) | (op->embedder ? 4 : 0) |
                         (op->no_graph ? 8 : 0)));
    put_str(&w, msgid, strlen(msgid));
    put_str(&w, op->ns, strlen(op->ns));
    put_u64(&w, (uint64_t)op->dim);
    put_u64(&w, (uint64_t)op->now_ms);
    if (op->embedder) put_str(&w, op->embedder, strlen(op->embedder));
    switch (op->kind) {
    case MEM_STORE_OP_INSERT:
        put_u32(&w, (uint32_t)op->n_segs);
        for (size_t i = 0; i < op->n_segs; i++)
            put_seg(&w, &op->segs[i], op->dim);
        break;
    case MEM_STORE_OP_IMPORT: {
        const mem_store_import_src_t *src = op->import;
        if (!src || src->dim != op->dim || src->rewind(src->ud) != MEM_OK) {
            w.fail = 1;
            break;
        }
        size_t at = w.len, n = 0;
        put_u32(&w, 0); /* the count, known at the end */
        mem_store_seg_in_t seg;
        bool archived;
        uint64_t line;
        int rc;
        while ((rc = src->next(src->ud, &seg, &archived, &line)) == 1 && !w.fail) {
            put_seg(&w, &seg, op->dim);
            put_u8(&w, archived);
            put_u64(&w, line);
            n++;
        }
        if (rc < 0 || n > UINT32_MAX) w.fail = 1;
        if (!w.fail) {
            uint32_t n32 = (uint32_t)n;
            memcpy(w.p + at, &n32, 4);
        }
        break;
    }
    case MEM_STORE_OP_DELETE:
        put_str(&w, op->id, strlen(op->id));
        break;
    case MEM_STORE_OP_COMPACT:
        put_u32(&w, (uint32_t)op->n_evict);
        for (size_t i = 0; i < op->n_evict; i++)
            put_str(&w, op->evict_ids[i], strlen(op->evict_ids[i]));
        break;
    case MEM_STORE_OP_PATCH:
        put_str(&w, op->id, strlen(op->id));
        put_u8(&w, (uint8_t)((op->patch_metadata ? 1 : 0) | (op->patch_source ? 2 : 0)));
        put_opt(&w, op->metadata, op->metadata_len);
        put_opt(&w, op->source, op->source_len);
        break;
    default:
        break;
    }
    if (w.fail) {
        free(w.p);
        return NULL;
    }
    *len = w.len;
    return w.p;
}

typedef struct rbuf {
    const unsigned char *p;
    size_t len, off;
    int fail;
} rbuf_t;

static const unsigned char *get(rbuf_t *r, size_t n)
{
    if (r->fail || n > r->len - r->off) {
        r->fail = 1;
        return NULL;
    }
    const unsigned char *p = r->p + r->off;
    r->off += n;
    return p;
}

static uint8_t get_u8(rbuf_t *r)
{
    const unsigned char *p = get(r, 1);
    return p ? *p : 0;
}

static uint32_t get_u32(rbuf_t *r)
{
    uint32_t v = 0;
    const unsigned char *p = get(r, 4);
    if (p) memcpy(&v, p, 4);
    return v;
}

static uint64_t get_u64(rbuf_t *r)
{
    uint64_t v = 0;
    const unsigned char *p = get(r, 8);
    if (p) memcpy(&v, p, 8);
    return v;
}

/* A NUL-terminated string inside the buffer. */
static const char *get_str(rbuf_t *r, size_t *n)
{
    uint32_t l = get_u32(r);
    const unsigned char *p = get(r, (size_t)l + 1);
    if (!p || p[l] != 0) {
        r->fail = 1;
        return NULL;
    }
    if (n) *n = l;
    return (const char *)p;
}

static int copy_str(rbuf_t *r, char *dst, size_t cap)
{
    size_t n = 0;
    const char *s = get_str(r, &n);
    if (!s || n >= cap || strlen(s) != n) return -1;
    memcpy(dst, s, n + 1);
    return 0;
}

void mem_cluster_rec_free(mem_cluster_rec_t *r)
{
    if (!r) return;
    free(r->buf);
    free(r->segs);
    free(r->outs);
    free(r->vecs);
    free(r->ptrs);
    free(r->archived);
    free(r->lines);
    free(r->id_slots);
    free(r);
}

/* Count the string pointers an insert or import needs (first pass); extra: bytes after
 * each segment (an import's archived flag and line). */
static int count_insert(rbuf_t r, size_t n, size_t dim, size_t extra, size_t *n_ptrs)
{
    size_t total = 0;
    for (size_t i = 0; i < n && !r.fail; i++) {
        get_str(&r, NULL);
        get(&r, 9);
        for (int f = 0; f < 3; f++)
            if (get_u8(&r)) get_str(&r, NULL);
        uint32_t ns = get_u32(&r);
        for (uint32_t k = 0; k < ns && !r.fail; k++)
            get_str(&r, NULL);
        total += ns;
        get(&r, dim * sizeof(float));
        get(&r, extra);
    }
    *n_ptrs = total;
    return r.fail ? -1 : 0;
}

/* Decode n segments (second pass) into rec->segs/vecs/ptrs (allocated here); an import's
 * archived flags and lines too. 0, -1 when malformed, -2 when out of memory. */
static int decode_segs(rbuf_t *r, mem_cluster_rec_t *rec, uint32_t n, bool import)
{
    size_t dim = rec->op.dim, n_ptrs = 0;
    if (r->fail || n == 0 || n > 1000000 || count_insert(*r, n, dim, import ? 9 : 0, &n_ptrs))
        return -1;
    rec->segs = calloc(n, sizeof(*rec->segs));
    rec->outs = calloc(n, sizeof(*rec->outs));
    rec->vecs = malloc((size_t)n * (dim ? dim : 1) * sizeof(float));
    rec->ptrs = calloc(n_ptrs ? n_ptrs : 1, sizeof(char *));
    if (import) {
        rec->archived = calloc(n, sizeof(*rec->archived));
        rec->lines = calloc(n, sizeof(*rec->lines));
        if (!rec->archived || !rec->lines) return -2;
    }
    if (!rec->segs || !rec->outs || !rec->vecs || !rec->ptrs) return -2;
    size_t used = 0;
    for (uint32_t i = 0; i < n; i++) {
        mem_store_seg_in_t *s = &rec->segs[i];
        if (copy_str(r, s->id, sizeof(s->id))) return -1;
        s->ts_given = get_u8(r) != 0;
        s->ts_ms = (int64_t)get_u64(r);
        if (get_u8(r)) s->text = get_str(r, &s->text_len);
        if (get_u8(r)) s->source = get_str(r, &s->source_len);
        if (get_u8(r)) s->metadata = get_str(r, &s->metadata_len);
        uint32_t ns = get_u32(r);
        if (r->fail || used + ns > n_ptrs) return -1;
        s->supersedes = rec->ptrs + used;
        s->n_supersedes = ns;
        for (uint32_t k = 0; k < ns; k++)
            rec->ptrs[used++] = get_str(r, NULL);
        const unsigned char *v = get(r, dim * sizeof(float));
        if (!v) return -1;
        float *dst = rec->vecs + (size_t)i * dim;
        memcpy(dst, v, dim * sizeof(float));
        s->vec = dst;
        if (import) {
            rec->archived[i] = get_u8(r) != 0;
            rec->lines[i] = get_u64(r);
        }
    }
    return r->fail ? -1 : 0;
}

/* ---- an import record read back as the writer's import source ---- */

static uint64_t id_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int imp_rewind(void *ud)
{
    ((mem_cluster_rec_t *)ud)->cursor = 0;
    return MEM_OK;
}

static int imp_next(void *ud, mem_store_seg_in_t *seg, bool *archived, uint64_t *line)
{
    mem_cluster_rec_t *rec = ud;
    if (rec->cursor >= rec->n_import) return 0;
    size_t i = rec->cursor++;
    *seg = rec->segs[i];
    *archived = rec->archived[i];
    *line = rec->lines[i];
    return 1;
}

static bool imp_has_id_before(void *ud, const char *id, uint64_t line)
{
    mem_cluster_rec_t *rec = ud;
    size_t mask = rec->cap_slots - 1;
    for (size_t j = id_hash(id) & mask; rec->id_slots[j]; j = (j + 1) & mask) {
        size_t i = rec->id_slots[j] - 1;
        if (strcmp(rec->segs[i].id, id) == 0 && rec->lines[i] < line) return true;
    }
    return false;
}

/* Index the segments by id (every one, duplicates too: the lookup wants any earlier one). */
static int imp_index(mem_cluster_rec_t *rec)
{
    size_t n = rec->n_import, cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    rec->id_slots = calloc(cap, sizeof(*rec->id_slots));
    if (!rec->id_slots) return -2; /* out of memory */
    rec->cap_slots = cap;
    for (size_t i = 0; i < n; i++) {
        size_t j = id_hash(rec->segs[i].id) & (cap - 1);
        while (rec->id_slots[j])
            j = (j + 1) & (cap - 1);
        rec->id_slots[j] = i + 1;
    }
    rec->import = (mem_store_import_src_t){.ud = rec,
                                           .dim = rec->op.dim,
                                           .rewind = imp_rewind,
                                           .next = imp_next,
                                           .has_id_before = imp_has_id_before};
    rec->op.import = &rec->import;
    return 0;
}

int mem_cluster_rec_read(const void *data, size_t len, mem_cluster_rec_t **out)
{
    *out = NULL;
    int why = MEM_EINVAL, d = 0;
    mem_cluster_rec_t *rec = calloc(1, sizeof(*rec));
    if (!rec) return MEM_ENOMEM;
    rec->buf = malloc(len ? len : 1);
    if (!rec->buf) goto oom;
    memcpy(rec->buf, data, len);
    rbuf_t r = {.p = rec->buf, .len = len};
    const unsigned char *magic = get(&r, 4);
    if (!magic || memcmp(magic, "MNR1", 4) != 0) goto bad;
    mem_store_op_t *op = &rec->op;
    uint8_t kind = get_u8(&r), flags = get_u8(&r);
    if (kind >= W_KINDS) goto bad;
    op->kind = op_of(kind);
    op->batch = (flags & 1) != 0;
    op->purge = (flags & 2) != 0;
    op->no_graph = (flags & 8) != 0;
    if (copy_str(&r, rec->msgid, sizeof(rec->msgid)) || copy_str(&r, op->ns, sizeof(op->ns)))
        goto bad;
    op->dim = (size_t)get_u64(&r);
    op->now_ms = (int64_t)get_u64(&r);
    if (flags & 4) {
        size_t n = 0;
        op->embedder = get_str(&r, &n);
        if (!op->embedder || n == 0 || n > MEM_STORE_EMBEDDER_MAX || strlen(op->embedder) != n)
            goto bad;
    }
    if (r.fail || op->dim > 4096) goto bad;
    if (op->kind == MEM_STORE_OP_INSERT) {
        uint32_t n = get_u32(&r);
        if ((d = decode_segs(&r, rec, n, false)) != 0) goto fail;
        op->segs = rec->segs;
        op->outs = rec->outs;
        op->n_segs = n;
    } else if (op->kind == MEM_STORE_OP_IMPORT) {
        uint32_t n = get_u32(&r);
        if ((d = decode_segs(&r, rec, n, true)) != 0) goto fail;
        rec->n_import = n; /* read through op->import, never as op->segs */
        if ((d = imp_index(rec)) != 0) goto fail;
    } else if (op->kind == MEM_STORE_OP_DELETE) {
        if (copy_str(&r, op->id, sizeof(op->id))) goto bad;
    } else if (op->kind == MEM_STORE_OP_PATCH) {
        if (copy_str(&r, op->id, sizeof(op->id))) goto bad;
        uint8_t pf = get_u8(&r);
        if (pf & ~3u) goto bad;
        op->patch_metadata = (pf & 1) != 0;
        op->patch_source = (pf & 2) != 0;
        if (get_u8(&r)) op->metadata = get_str(&r, &op->metadata_len);
        if (get_u8(&r)) op->source = get_str(&r, &op->source_len);
    } else if (op->kind == MEM_STORE_OP_COMPACT) {
        uint32_t n = get_u32(&r);
        if (r.fail || n > len) goto bad;
        rec->ptrs = calloc(n ? n : 1, sizeof(char *));
        if (!rec->ptrs) goto oom;
        for (uint32_t i = 0; i < n; i++)
            rec->ptrs[i] = get_str(&r, NULL);
        op->evict_ids = rec->ptrs;
        op->n_evict = n;
    }
    if (r.fail || r.off != r.len) goto bad;
    *out = rec;
    return MEM_OK;
fail: /* d: -1 malformed, -2 out of memory */
    if (d == -2) why = MEM_ENOMEM;
    goto bad;
oom:
    why = MEM_ENOMEM;
bad:
    mem_cluster_rec_free(rec);
    return why;
}

mem_cluster_rec_t *mem_cluster_rec_decode(const void *data, size_t len)
{
    mem_cluster_rec_t *rec = NULL;
    mem_cluster_rec_read(data, len, &rec);
    return rec;
}
