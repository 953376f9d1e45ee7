/* meta.c - the metadata value index and filter evaluation (see meta.h)
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Entries are distinct (path, value) pairs in one open-addressing table (FNV-1a of
 * path id, type and value); each entry has its postings (seqs, ascending, duplicates
 * allowed when an array repeats a value). Per seq, a list of entry ids lets a change or a
 * removal take the seq out of exactly the postings it is in. Per path, the list of its
 * entries serves range conditions and $exists. Strings (paths and values) live in one
 * append-only arena; entries are never removed (an entry whose postings empty out stays,
 * so a later insert of the same value reuses it).
 */
#include "core/meta.h"

#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/index.h"
#include "core/index_int.h"

typedef struct postings {
    int64_t *seq;
    uint32_t n, cap;
} postings_t;

typedef struct entry {
    uint32_t path;
    mem_meta_type_t type;
    bool b;
    double num;
    size_t str_off, len; /* STR: in the arena */
    postings_t post;
} entry_t;

typedef struct path {
    size_t off, len; /* in the arena */
    uint32_t *entries;
    uint32_t n_entries, cap_entries;
} path_t;

typedef struct fwd {
    uint32_t *ids; /* entry ids the seq is in (with repeats) */
    uint32_t n, cap;
} fwd_t;

struct mem_meta {
    char *arena;
    size_t arena_len, arena_cap;
    path_t *paths;
    uint32_t n_paths, cap_paths;
    uint32_t *path_slots; /* path id + 1, 0 empty */
    size_t cap_path_slots;
    entry_t *entries;
    uint32_t n_entries, cap_entries;
    uint32_t *slots; /* entry id + 1, 0 empty */
    size_t cap_slots;
    fwd_t *fwd; /* indexed by seq */
    size_t cap_fwd;
    size_t n_pairs;
};

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return MEM_OK;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q) return MEM_ENOMEM;
    *p = q;
    *cap = c;
    return MEM_OK;
}

static int grow32(void **p, uint32_t *cap, size_t need, size_t elem)
{
    size_t c = *cap;
    int rc = grow(p, &c, need, elem);
    if (rc == MEM_OK) {
        if (c > UINT32_MAX) return MEM_ENOMEM;
        *cap = (uint32_t)c;
    }
    return rc;
}

int mem_meta_new(mem_meta_t **out)
{
    mem_meta_t *m = calloc(1, sizeof(*m));
    if (!m) return MEM_ENOMEM;
    *out = m;
    return MEM_OK;
}

void mem_meta_free(mem_meta_t *m)
{
    if (!m) return;
    for (uint32_t i = 0; i < m->n_entries; i++)
        free(m->entries[i].post.seq);
    for (uint32_t i = 0; i < m->n_paths; i++)
        free(m->paths[i].entries);
    for (size_t i = 0; i < m->cap_fwd; i++)
        free(m->fwd[i].ids);
    free(m->fwd);
    free(m->entries);
    free(m->slots);
    free(m->paths);
    free(m->path_slots);
    free(m->arena);
    free(m);
}

size_t mem_meta_count(const mem_meta_t *m)
{
    return m->n_pairs;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

static int arena_put(mem_meta_t *m, const char *s, size_t len, size_t *off)
{
    if (grow((void **)&m->arena, &m->arena_cap, m->arena_len + len + 1, 1) != MEM_OK)
        return MEM_ENOMEM;
    if (len) memcpy(m->arena + m->arena_len, s, len);
    *off = m->arena_len;
    m->arena_len += len;
    return MEM_OK;
}

/* ---- paths ---- */

static long path_find(const mem_meta_t *m, const char *s, size_t len)
{
    if (!m->cap_path_slots) return -1;
    size_t mask = m->cap_path_slots - 1, i = fnv(1469598103934665603ull, s, len) & mask;
    for (;; i = (i + 1) & mask) {
        uint32_t v = m->path_slots[i];
        if (!v) return -1;
        const path_t *p = &m->paths[v - 1];
        if (p->len == len && memcmp(m->arena + p->off, s, len) == 0) return (long)(v - 1);
    }
}

static int path_rehash(mem_meta_t *m, size_t cap)
{
    uint32_t *s = calloc(cap, sizeof(*s));
    if (!s) return MEM_ENOMEM;
    for (uint32_t id = 0; id < m->n_paths; id++) {
        const path_t *p = &m->paths[id];
        size_t i = fnv(1469598103934665603ull, m->arena + p->off, p->len) & (cap - 1);
        while (s[i])
            i = (i + 1) & (cap - 1);
        s[i] = id + 1;
    }
    free(m->path_slots);
    m->path_slots = s;
    m->cap_path_slots = cap;
    return MEM_OK;
}

static long path_intern(mem_meta_t *m, const char *s, size_t len)
{
    long id = path_find(m, s, len);
    if (id >= 0) return id;
    if ((size_t)(m->n_paths + 1) * 2 > m->cap_path_slots &&
        path_rehash(m, m->cap_path_slots ? m->cap_path_slots * 2 : 16) != MEM_OK)
        return -1;
    if (grow32((void **)&m->paths, &m->cap_paths, (size_t)m->n_paths + 1, sizeof(path_t)) != MEM_OK)
        return -1;
    path_t *p = &m->paths[m->n_paths];
    memset(p, 0, sizeof(*p));
    p->len = len;
    if (arena_put(m, s, len, &p->off) != MEM_OK) return -1;
    id = (long)m->n_paths++;
    size_t mask = m->cap_path_slots - 1, i = fnv(1469598103934665603ull, s, len) & mask;
    while (m->path_slots[i])
        i = (i + 1) & mask;
    m->path_slots[i] = (uint32_t)id + 1;
    return id;
}

/* ---- entries ---- */

static double num_key(double x)
{
    return x == 0.0 ? 0.0 : x; /* -0 and 0 are one value */
}

static uint64_t entry_hash(const mem_meta_t *m, uint32_t path, mem_meta_type_t type, bool b,
                           double num, const char *str, size_t len)
{
    uint64_t h = fnv(1469598103934665603ull, &path, sizeof(path));
    unsigned char t = (unsigned char)type;
    h = fnv(h, &t, 1);
    if (type == MEM_META_BOOL) {
        unsigned char c = b;
        h = fnv(h, &c, 1);
    } else if (type == MEM_META_NUM) {
        double k = num_key(num);
        h = fnv(h, &k, sizeof(k));
    } else if (type == MEM_META_STR) {
        h = fnv(h, str, len);
    }
    return h;
}

static bool entry_is(const mem_meta_t *m, const entry_t *e, uint32_t path, const mem_meta_val_t *v)
{
    if (e->path != path || e->type != v->type) return false;
    switch (v->type) {
    case MEM_META_BOOL:
        return e->b == v->b;
    case MEM_META_NUM:
        return e->num == v->num;
    case MEM_META_STR:
        return e->len == v->len && memcmp(m->arena + e->str_off, v->str, v->len) == 0;
    default:
        return true;
    }
}

static long entry_find(const mem_meta_t *m, uint32_t path, const mem_meta_val_t *v)
{
    if (!m->cap_slots) return -1;
    size_t mask = m->cap_slots - 1;
    size_t i = entry_hash(m, path, v->type, v->b, v->num, v->str, v->len) & mask;
    for (;; i = (i + 1) & mask) {
        uint32_t id = m->slots[i];
        if (!id) return -1;
        if (entry_is(m, &m->entries[id - 1], path, v)) return (long)(id - 1);
    }
}

static int entry_rehash(mem_meta_t *m, size_t cap)
{
    uint32_t *s = calloc(cap, sizeof(*s));
    if (!s) return MEM_ENOMEM;
    for (uint32_t id = 0; id < m->n_entries; id++) {
        const entry_t *e = &m->entries[id];
        size_t i = entry_hash(m, e->path, e->type, e->b, e->num, m->arena + e->str_off, e->len) &
                   (cap - 1);
        while (s[i])
            i = (i + 1) & (cap - 1);
        s[i] = id + 1;
    }
    free(m->slots);
    m->slots = s;
    m->cap_slots = cap;
    return MEM_OK;
}

static long entry_intern(mem_meta_t *m, uint32_t path, const mem_meta_val_t *v)
{
    long id = entry_find(m, path, v);
    if (id >= 0) return id;
    if ((size_t)(m->n_entries + 1) * 2 > m->cap_slots &&
        entry_rehash(m, m->cap_slots ? m->cap_slots * 2 : 64) != MEM_OK)
        return -1;
    path_t *p = &m->paths[path];
    if (grow32((void **)&m->entries, &m->cap_entries, (size_t)m->n_entries + 1, sizeof(entry_t)) !=
            MEM_OK ||
        grow32((void **)&p->entries, &p->cap_entries, (size_t)p->n_entries + 1, sizeof(uint32_t)) !=
            MEM_OK)
        return -1;
    entry_t *e = &m->entries[m->n_entries];
    memset(e, 0, sizeof(*e));
    e->path = path;
    e->type = v->type;
    e->b = v->b;
    e->num = num_key(v->num);
    if (v->type == MEM_META_STR && arena_put(m, v->str, v->len, &e->str_off) != MEM_OK) return -1;
    e->len = v->type == MEM_META_STR ? v->len : 0;
    id = (long)m->n_entries++;
    p->entries[p->n_entries++] = (uint32_t)id;
    size_t mask = m->cap_slots - 1;
    size_t i = entry_hash(m, path, v->type, v->b, v->num, v->str, v->len) & mask;
    while (m->slots[i])
        i = (i + 1) & mask;
    m->slots[i] = (uint32_t)id + 1;
    return id;
}

/* ---- postings ---- */

static int post_add(postings_t *p, int64_t seq)
{
    if (grow32((void **)&p->seq, &p->cap, (size_t)p->n + 1, sizeof(int64_t)) != MEM_OK)
        return MEM_ENOMEM;
    uint32_t i = p->n++;
    while (i > 0 && p->seq[i - 1] > seq) { /* almost always appended in order */
        p->seq[i] = p->seq[i - 1];
        i--;
    }
    p->seq[i] = seq;
    return MEM_OK;
}

static void post_remove(postings_t *p, int64_t seq)
{
    uint32_t lo = 0, hi = p->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->seq[mid] < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t end = lo;
    while (end < p->n && p->seq[end] == seq)
        end++;
    memmove(p->seq + lo, p->seq + end, (p->n - end) * sizeof(int64_t));
    p->n -= end - lo;
}

void mem_meta_clear(mem_meta_t *m, int64_t seq)
{
    if (seq <= 0 || (size_t)seq >= m->cap_fwd) return;
    fwd_t *f = &m->fwd[seq];
    for (uint32_t i = 0; i < f->n; i++) {
        postings_t *p = &m->entries[f->ids[i]].post;
        if (p->n) post_remove(p, seq); /* removes every repeat at once */
    }
    m->n_pairs -= f->n;
    f->n = 0;
}

int mem_meta_set(mem_meta_t *m, int64_t seq, const mem_meta_pair_t *pairs, size_t n)
{
    if (seq <= 0) return MEM_EINVAL;
    mem_meta_clear(m, seq);
    if (n == 0) return MEM_OK;
    size_t need = (size_t)seq + 1;
    if (need > m->cap_fwd) {
        size_t cap = m->cap_fwd ? m->cap_fwd : 1024;
        while (cap < need)
            cap *= 2;
        fwd_t *f = realloc(m->fwd, cap * sizeof(*f));
        if (!f) return MEM_ENOMEM;
        memset(f + m->cap_fwd, 0, (cap - m->cap_fwd) * sizeof(*f));
        m->fwd = f;
        m->cap_fwd = cap;
    }
    fwd_t *f = &m->fwd[seq];
    if (grow32((void **)&f->ids, &f->cap, n, sizeof(uint32_t)) != MEM_OK) return MEM_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        long path = path_intern(m, pairs[i].path, pairs[i].path_len);
        long id = path < 0 ? -1 : entry_intern(m, (uint32_t)path, &pairs[i].val);
        if (id < 0 || post_add(&m->entries[id].post, seq) != MEM_OK) {
            m->n_pairs += f->n;
            mem_meta_clear(m, seq);
            return MEM_ENOMEM;
        }
        f->ids[f->n++] = (uint32_t)id;
    }
    m->n_pairs += f->n;
    return MEM_OK;
}

/* ---- evaluation ---- */

static bool val_eq(const mem_meta_val_t *a, const mem_meta_val_t *b)
{
    if (a->type != b->type || a->type == MEM_META_CONTAINER) return false;
    switch (a->type) {
    case MEM_META_BOOL:
        return a->b == b->b;
    case MEM_META_NUM:
        return a->num == b->num;
    case MEM_META_STR:
        return a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
    default:
        return true; /* null */
    }
}

/* x op v for a range operator: false when the kinds differ. */
static bool val_cmp(const mem_meta_val_t *x, mem_meta_op_t op, const mem_meta_val_t *v)
{
    int c;
    if (x->type == MEM_META_NUM && v->type == MEM_META_NUM) {
        c = x->num < v->num ? -1 : x->num > v->num;
    } else if (x->type == MEM_META_STR && v->type == MEM_META_STR) {
        size_t n = x->len < v->len ? x->len : v->len;
        c = n ? memcmp(x->str, v->str, n) : 0;
        if (c == 0) c = x->len < v->len ? -1 : x->len > v->len;
    } else {
        return false;
    }
    switch (op) {
    case MEM_META_GT:
        return c > 0;
    case MEM_META_GTE:
        return c >= 0;
    case MEM_META_LT:
        return c < 0;
    case MEM_META_LTE:
        return c <= 0;
    default:
        return false;
    }
}

/* The positive form of a condition on one value: EQ/IN/ranges/EXISTS. */
static bool val_pos(const mem_meta_val_t *x, const mem_meta_cond_t *c)
{
    switch (c->op) {
    case MEM_META_EQ:
    case MEM_META_NE:
        return val_eq(x, &c->vals[0]);
    case MEM_META_IN:
    case MEM_META_NIN:
        for (size_t i = 0; i < c->n_vals; i++)
            if (val_eq(x, &c->vals[i])) return true;
        return false;
    case MEM_META_EXISTS:
        return true;
    default:
        return val_cmp(x, c->op, &c->vals[0]);
    }
}

/* Whether the condition is the complement of its positive form. */
static bool negative(const mem_meta_cond_t *c)
{
    return c->op == MEM_META_NE || c->op == MEM_META_NIN ||
           (c->op == MEM_META_EXISTS && !c->vals[0].b);
}

bool mem_meta_match_pairs(const mem_meta_pair_t *pairs, size_t n, const mem_meta_filter_t *f)
{
    for (size_t k = 0; k < f->n_conds; k++) {
        const mem_meta_cond_t *c = &f->conds[k];
        bool any = false;
        for (size_t i = 0; i < n && !any; i++)
            any = pairs[i].path_len == c->path_len &&
                  memcmp(pairs[i].path, c->path, c->path_len) == 0 && val_pos(&pairs[i].val, c);
        if (any == negative(c)) return false;
    }
    return true;
}

static void or_postings(const postings_t *p, uint64_t *bits, int64_t max_seq)
{
    for (uint32_t i = 0; i < p->n; i++) {
        int64_t s = p->seq[i];
        if (s > 0 && s <= max_seq) bits[s >> 6] |= UINT64_C(1) << (s & 63);
    }
}

int mem_meta_eval(const mem_meta_t *m, const mem_meta_filter_t *f, int64_t max_seq, uint64_t **out,
                  size_t *n_match)
{
    size_t words = (size_t)(max_seq < 0 ? 0 : max_seq) / 64 + 1;
    uint64_t *acc = malloc(words * sizeof(uint64_t));
    uint64_t *one = malloc(words * sizeof(uint64_t));
    if (!acc || !one) {
        free(acc);
        free(one);
        return MEM_ENOMEM;
    }
    memset(acc, 0xff, words * sizeof(uint64_t));
    for (size_t k = 0; k < f->n_conds; k++) {
        const mem_meta_cond_t *c = &f->conds[k];
        memset(one, 0, words * sizeof(uint64_t));
        long path = path_find(m, c->path, c->path_len);
        if (path >= 0) {
            if (c->op == MEM_META_EQ || c->op == MEM_META_NE || c->op == MEM_META_IN ||
                c->op == MEM_META_NIN) {
                for (size_t i = 0; i < c->n_vals; i++) {
                    long e = entry_find(m, (uint32_t)path, &c->vals[i]);
                    if (e >= 0) or_postings(&m->entries[e].post, one, max_seq);
                }
            } else {
                const path_t *p = &m->paths[path];
                for (uint32_t i = 0; i < p->n_entries; i++) {
                    const entry_t *e = &m->entries[p->entries[i]];
                    mem_meta_val_t x = {.type = e->type,
                                        .b = e->b,
                                        .num = e->num,
                                        .str = m->arena + e->str_off,
                                        .len = e->len};
                    if (val_pos(&x, c)) or_postings(&e->post, one, max_seq);
                }
            }
        }
        bool neg = negative(c);
        for (size_t w = 0; w < words; w++)
            acc[w] &= neg ? ~one[w] : one[w];
    }
    acc[0] &= ~UINT64_C(1); /* seq 0 does not exist */
    size_t tail = (size_t)(max_seq < 0 ? 0 : max_seq) % 64;
    if (tail != 63) acc[words - 1] &= (UINT64_C(1) << (tail + 1)) - 1;
    size_t cnt = 0;
    for (size_t w = 0; w < words; w++)
        cnt += (size_t)__builtin_popcountll(acc[w]);
    free(one);
    *out = acc;
    *n_match = cnt;
    return MEM_OK;
}

/* Position of seq among the first n rows (seqs ascend with positions), or -1. */
static long pos_of_seq(const mem_index_t *idx, size_t n, int64_t seq)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (MEM_INDEX_ROW(idx, mid, seq) < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && MEM_INDEX_ROW(idx, lo, seq) == seq ? (long)lo : -1;
}

int mem_meta_plan(const mem_meta_t *meta, const mem_index_t *idx, const mem_meta_filter_t *f,
                  size_t selective_div, mem_scan_params_t *p, uint64_t **mask, size_t **cand,
                  size_t *n_cand)
{
    size_t n = mem_index_visible(idx);
    int64_t max_seq = n ? MEM_INDEX_ROW(idx, n - 1, seq) : 0;
    uint64_t *bits = NULL;
    size_t n_match = 0;
    *mask = NULL;
    *cand = NULL;
    *n_cand = 0;
    if (mem_meta_eval(meta, f, max_seq, &bits, &n_match) != MEM_OK) return MEM_ENOMEM;
    int mode;
    if (selective_div && n_match * selective_div <= n) {
        size_t *c = malloc((n_match ? n_match : 1) * sizeof(*c)), k = 0;
        if (!c) {
            free(bits);
            return MEM_ENOMEM;
        }
        size_t words = (size_t)max_seq / 64 + 1;
        for (size_t w = 0; w < words; w++)
            for (uint64_t x = bits[w]; x; x &= x - 1) {
                int64_t seq = (int64_t)(w * 64 + (size_t)__builtin_ctzll(x));
                long at = pos_of_seq(idx, n, seq);
                if (at >= 0) c[k++] = (size_t)at;
            }
        *cand = c;
        *n_cand = k;
        mode = 1;
    } else {
        uint64_t *m = calloc(n / 64 + 1, sizeof(*m));
        if (!m) {
            free(bits);
            return MEM_ENOMEM;
        }
        for (size_t b = 0; b * MEM_INDEX_BLOCK_ROWS < n; b++) {
            const int64_t *seqs = idx->blocks[b]->seq; /* one block at a time: no call per row */
            size_t base = b * MEM_INDEX_BLOCK_ROWS, end = n - base;
            if (end > MEM_INDEX_BLOCK_ROWS) end = MEM_INDEX_BLOCK_ROWS;
            for (size_t r = 0; r < end; r++) {
                int64_t seq = seqs[r];
                if (seq > 0 && seq <= max_seq && (bits[seq / 64] >> (seq % 64) & 1))
                    m[(base + r) / 64] |= UINT64_C(1) << ((base + r) % 64);
            }
        }
        *mask = m;
        p->row_mask = m;
        mode = 2;
    }
    free(bits);
    return mode;
}
