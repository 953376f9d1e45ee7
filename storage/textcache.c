/* textcache.c - the answer texts cache (textcache_int.h says what it owns and why it is exact)
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. A chained hash table on (namespace id, seq) with an intrusive list in the order
 * entries were last answered; each entry is one allocation holding its three strings. The
 * charge of an entry is its strings plus MEM_STORE__TXC_ENTRY_BYTES; adding one past the
 * bound evicts from the cold end, and an entry over an eighth of the bound is not kept (a
 * few huge texts would otherwise flush everything else). The patch guard is two fields under
 * the mutex: `changing` (a forget came, its group has not settled) and `epoch` (bumped at
 * each settle); a ticket is the epoch, or TICKET_NONE while changing.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "storage/textcache_int.h"

#define TICKET_NONE  UINT64_MAX
#define LEN_NULL     UINT32_MAX /* the column is NULL */
#define BUCKETS_MIN  1024u
#define COL_TEXT     0
#define COL_SOURCE   1
#define COL_METADATA 2

typedef struct txc_ent {
    struct txc_ent *hnext;       /* bucket chain */
    struct txc_ent *prev, *next; /* recency: c->hot first */
    int64_t ns_id, seq;
    uint32_t len[3]; /* LEN_NULL for a NULL column */
    char data[];     /* the three strings, each NUL-terminated (none for a NULL column) */
} txc_ent_t;

struct mem_store__txc {
    pthread_mutex_t mu; /* a leaf: guards everything below but w_forgot */
    size_t max_bytes, bytes, n;
    txc_ent_t **buckets;
    size_t n_buckets; /* a power of two */
    txc_ent_t *hot, *cold;
    uint64_t epoch;
    bool changing;
    uint64_t hits, misses, evictions;
    bool w_forgot; /* writer thread only: a forget since the last settle */
};

static size_t bucket_of(const mem_store__txc_t *c, int64_t ns_id, int64_t seq)
{
    uint64_t h = (uint64_t)seq * 0x9E3779B97F4A7C15ull ^ (uint64_t)ns_id * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    return (size_t)h & (c->n_buckets - 1);
}

static size_t data_bytes(const uint32_t len[3])
{
    size_t b = 0;
    for (int i = 0; i < 3; i++)
        if (len[i] != LEN_NULL) b += (size_t)len[i] + 1;
    return b;
}

static size_t charge(const txc_ent_t *e)
{
    return MEM_STORE__TXC_ENTRY_BYTES + data_bytes(e->len);
}

int mem_store__txc_new(size_t max_bytes, mem_store__txc_t **out)
{
    *out = NULL;
    if (max_bytes == 0) return MEM_OK;
    mem_store__txc_t *c = calloc(1, sizeof(*c));
    if (!c) return MEM_ENOMEM;
    c->n_buckets = BUCKETS_MIN;
    if (!(c->buckets = calloc(c->n_buckets, sizeof(*c->buckets)))) {
        free(c);
        return MEM_ENOMEM;
    }
    c->max_bytes = max_bytes;
    pthread_mutex_init(&c->mu, NULL);
    *out = c;
    return MEM_OK;
}

void mem_store__txc_free(mem_store__txc_t *c)
{
    if (!c) return;
    for (txc_ent_t *e = c->hot; e;) {
        txc_ent_t *next = e->next;
        free(e);
        e = next;
    }
    free(c->buckets);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static txc_ent_t **slot_of(mem_store__txc_t *c, int64_t ns_id, int64_t seq)
{
    txc_ent_t **p = &c->buckets[bucket_of(c, ns_id, seq)];
    while (*p && ((*p)->seq != seq || (*p)->ns_id != ns_id))
        p = &(*p)->hnext;
    return p;
}

static void list_unlink(mem_store__txc_t *c, txc_ent_t *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        c->hot = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->cold = e->prev;
    e->prev = e->next = NULL;
}

static void list_push_hot(mem_store__txc_t *c, txc_ent_t *e)
{
    e->prev = NULL;
    e->next = c->hot;
    if (c->hot)
        c->hot->prev = e;
    else
        c->cold = e;
    c->hot = e;
}

/* Unlink e (found at *slot) from both structures and free it. */
static void drop(mem_store__txc_t *c, txc_ent_t **slot, txc_ent_t *e)
{
    *slot = e->hnext;
    list_unlink(c, e);
    c->bytes -= charge(e);
    c->n--;
    free(e);
}

static char *copy_col(const txc_ent_t *e, int col, mem_arena_t *a, bool *oom)
{
    if (e->len[col] == LEN_NULL) return NULL;
    const char *p = e->data;
    for (int i = 0; i < col; i++)
        if (e->len[i] != LEN_NULL) p += e->len[i] + 1;
    char *s = mem_arena_strndup(a, p, e->len[col]);
    if (!s) *oom = true;
    return s;
}

int mem_store__txc_get(mem_store__txc_t *c, int64_t ns_id, mem_arena_t *a, mem_store_result_t *res,
                       size_t n, bool *found, size_t *bytes, mem_store__txc_ticket_t *ticket)
{
    *bytes = 0;
    for (size_t i = 0; i < n; i++)
        found[i] = false;
    if (!c) {
        *ticket = TICKET_NONE;
        return MEM_OK;
    }
    int rc = MEM_OK;
    pthread_mutex_lock(&c->mu);
    *ticket = c->changing ? TICKET_NONE : c->epoch;
    for (size_t i = 0; i < n && rc == MEM_OK; i++) {
        txc_ent_t *e = *slot_of(c, ns_id, res[i].hit.seq);
        if (!e) {
            c->misses++;
            continue;
        }
        bool oom = false;
        char *t = copy_col(e, COL_TEXT, a, &oom), *s = copy_col(e, COL_SOURCE, a, &oom),
             *m = copy_col(e, COL_METADATA, a, &oom);
        if (oom) { /* what was copied goes with the arena */
            rc = MEM_ENOMEM;
            break;
        }
        res[i].text = t;
        res[i].source = s;
        res[i].metadata = m;
        found[i] = true;
        for (int k = 0; k < 3; k++)
            if (e->len[k] != LEN_NULL) *bytes += e->len[k];
        c->hits++;
        if (e != c->hot) {
            list_unlink(c, e);
            list_push_hot(c, e);
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

static void grow(mem_store__txc_t *c)
{
    size_t nb = c->n_buckets * 2;
    txc_ent_t **b = calloc(nb, sizeof(*b));
    if (!b) return; /* longer chains, still correct */
    txc_ent_t **old = c->buckets;
    size_t n_old = c->n_buckets;
    c->buckets = b;
    c->n_buckets = nb;
    for (size_t i = 0; i < n_old; i++)
        for (txc_ent_t *e = old[i]; e;) {
            txc_ent_t *next = e->hnext;
            size_t k = bucket_of(c, e->ns_id, e->seq);
            e->hnext = b[k];
            b[k] = e;
            e = next;
        }
    free(old);
}

static uint32_t len_of(const char *s)
{
    if (!s) return LEN_NULL;
    size_t l = strlen(s);
    return l >= LEN_NULL ? LEN_NULL : (uint32_t)l; /* LEN_NULL here: too big, not kept */
}

void mem_store__txc_put(mem_store__txc_t *c, mem_store__txc_ticket_t ticket, int64_t ns_id,
                        const mem_store_result_t *res, const bool *found, size_t n)
{
    if (!c || ticket == TICKET_NONE) return;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < n; i++) {
        if (found[i]) continue;
        if (c->changing || c->epoch != ticket) break; /* a patch began or settled since */
        const char *col[3] = {res[i].text, res[i].source, res[i].metadata};
        uint32_t len[3];
        bool skip = false;
        for (int k = 0; k < 3; k++) {
            len[k] = len_of(col[k]);
            skip |= col[k] && len[k] == LEN_NULL;
        }
        size_t want = MEM_STORE__TXC_ENTRY_BYTES + data_bytes(len);
        if (skip || want > c->max_bytes / 8) continue;
        txc_ent_t **slot = slot_of(c, ns_id, res[i].hit.seq);
        if (*slot) continue; /* another reader added it: the same committed row */
        txc_ent_t *e = malloc(sizeof(*e) + data_bytes(len));
        if (!e) continue;
        e->ns_id = ns_id;
        e->seq = res[i].hit.seq;
        char *p = e->data;
        for (int k = 0; k < 3; k++) {
            e->len[k] = len[k];
            if (len[k] == LEN_NULL) continue;
            memcpy(p, col[k], (size_t)len[k] + 1);
            p += len[k] + 1;
        }
        while (c->cold && c->bytes + want > c->max_bytes) {
            txc_ent_t *v = c->cold;
            drop(c, slot_of(c, v->ns_id, v->seq), v);
            c->evictions++;
        }
        if (c->n + 1 > c->n_buckets) grow(c);
        slot = &c->buckets[bucket_of(c, ns_id, e->seq)];
        e->hnext = *slot;
        *slot = e;
        list_push_hot(c, e);
        c->bytes += want;
        c->n++;
    }
    pthread_mutex_unlock(&c->mu);
}

void mem_store__txc_forget(mem_store__txc_t *c, int64_t ns_id, int64_t seq)
{
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    c->changing = true;
    txc_ent_t **slot = slot_of(c, ns_id, seq);
    if (*slot) drop(c, slot, *slot);
    pthread_mutex_unlock(&c->mu);
    c->w_forgot = true;
}

void mem_store__txc_settled(mem_store__txc_t *c)
{
    if (!c || !c->w_forgot) return;
    c->w_forgot = false;
    pthread_mutex_lock(&c->mu);
    c->epoch++;
    c->changing = false;
    pthread_mutex_unlock(&c->mu);
}

void mem_store__txc_stats(mem_store__txc_t *c, mem_store__txc_stats_t *out)
{
    memset(out, 0, sizeof(*out));
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    out->entries = c->n;
    out->bytes = c->bytes;
    out->max_bytes = c->max_bytes;
    out->hits = c->hits;
    out->misses = c->misses;
    out->evictions = c->evictions;
    pthread_mutex_unlock(&c->mu);
}
