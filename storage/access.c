/* access.c - access statistics and recent queries: counted by readers, written by the writer
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Each retrieve that returns a segment counts one access of it (SPEC section 5):
 * readers bump the index's access statistics (relaxed atomics, core/index.h) under the
 * namespace's shared lock and list the row as dirty; the writer writes the dirty rows in
 * the background, at most MEM_STORE__FLUSH_MS late: a crash may lose the last second of
 * counters, never a segment. The last MEM_STORE__RECENT_QUERIES queries are kept in a ring
 * for the compaction's default context.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "storage/writer_int.h"

/* The flush at close is tried this many times before what it holds is given up (logged). */
#define MEM_STORE__CLOSE_FLUSH_TRIES 3

static void push_dirty(mem_store_ns_t *ns, size_t pos)
{
    if (ns->n_dirty == ns->cap_dirty) {
        size_t cap = ns->cap_dirty ? ns->cap_dirty * 2 : 64;
        size_t *d = realloc(ns->dirty, cap * sizeof(*d));
        if (!d) return; /* the count stays in memory; only its persistence is lost */
        ns->dirty = d;
        ns->cap_dirty = cap;
    }
    ns->dirty[ns->n_dirty++] = pos;
}

void mem_store__record_access(mem_store_ns_t *ns, const mem_index_t *view, const float *query,
                              const mem_scan_hit_t *hits, size_t n)
{
    pthread_mutex_lock(&ns->acc_mu);
    for (size_t i = 0; i < n; i++) {
        mem_index_record_access(view, hits[i].pos);
        push_dirty(ns, hits[i].pos);
    }
    if (query) { /* a text match has no vector to remember */
        memcpy(ns->recent + ns->recent_head * ns->dim, query, ns->dim * sizeof(float));
        ns->recent_head = (ns->recent_head + 1) % MEM_STORE__RECENT_QUERIES;
        if (ns->n_recent < MEM_STORE__RECENT_QUERIES) ns->n_recent++;
        ns->recent_dirty = true;
    }
    pthread_mutex_unlock(&ns->acc_mu);
}

int mem_store__recent_queries(mem_store_ns_t *ns, float **out, size_t *n)
{
    size_t dim = ns->dim;
    float *ctx = NULL;
    pthread_mutex_lock(&ns->acc_mu);
    size_t n_ctx = ns->n_recent;
    if (n_ctx && (ctx = malloc(n_ctx * dim * sizeof(float)))) {
        size_t start =
            (ns->recent_head + MEM_STORE__RECENT_QUERIES - n_ctx) % MEM_STORE__RECENT_QUERIES;
        for (size_t i = 0; i < n_ctx; i++)
            memcpy(ctx + i * dim, ns->recent + ((start + i) % MEM_STORE__RECENT_QUERIES) * dim,
                   dim * sizeof(float));
    }
    pthread_mutex_unlock(&ns->acc_mu);
    if (n_ctx && !ctx) return MEM_ENOMEM;
    *out = ctx;
    *n = n_ctx;
    return MEM_OK;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* The recent queries, oldest first, as namespaces.recent (read back by load.c). */
static int write_recent(mem_store_t *st, mem_store_ns_t *ns, mem_err_t *err)
{
    float *q = NULL;
    size_t n = 0;
    if (mem_store__recent_queries(ns, &q, &n) != MEM_OK)
        return mem_err_set(err, MEM_ENOMEM, "out of memory");
    sqlite3_stmt *s = st->stmts[STMT_NS_RECENT];
    if (n)
        sqlite3_bind_blob(s, 1, q, (int)(n * ns->dim * sizeof(float)), SQLITE_STATIC);
    else
        sqlite3_bind_null(s, 1);
    sqlite3_bind_int64(s, 2, ns->ns_id);
    int rc = mem_store__step_done(st, s, "write recent queries", err);
    free(q);
    return rc;
}

/* What one flush took from a namespace (under acc_mu): handed back when its transaction
 * does not commit, so the next flush writes it again. */
typedef struct taken {
    mem_store_ns_t *ns;
    size_t *dirty, n_dirty, cap_dirty;
    bool recent;
} taken_t;

static void take_ns_access(taken_t *t)
{
    mem_store_ns_t *ns = t->ns;
    pthread_mutex_lock(&ns->acc_mu);
    t->dirty = ns->dirty;
    t->n_dirty = ns->n_dirty;
    t->cap_dirty = ns->cap_dirty;
    t->recent = ns->recent_dirty;
    ns->dirty = NULL;
    ns->n_dirty = ns->cap_dirty = 0;
    ns->recent_dirty = false;
    pthread_mutex_unlock(&ns->acc_mu);
}

/* The flush did not commit: what it took is dirty again (with what readers added since). */
static void give_back_ns_access(taken_t *t)
{
    mem_store_ns_t *ns = t->ns;
    pthread_mutex_lock(&ns->acc_mu);
    if (t->recent) ns->recent_dirty = true;
    if (t->n_dirty && !ns->dirty) {
        ns->dirty = t->dirty;
        ns->n_dirty = t->n_dirty;
        ns->cap_dirty = t->cap_dirty;
        t->dirty = NULL;
    } else {
        for (size_t i = 0; i < t->n_dirty; i++)
            push_dirty(ns, t->dirty[i]); /* out of memory: counts stay exact in memory */
    }
    pthread_mutex_unlock(&ns->acc_mu);
    free(t->dirty);
    t->dirty = NULL;
}

static int flush_ns_access(mem_store__writer_t *w, taken_t *t, mem_err_t *err)
{
    mem_store_t *st = w->st;
    mem_store_ns_t *ns = t->ns;
    int rc = t->recent ? write_recent(st, ns, err) : MEM_OK;
    size_t n = t->n_dirty;
    if (!n || rc != MEM_OK) return rc;
    size_t *dirty = malloc(n * sizeof(*dirty)); /* sorted apart: t's list may be handed back */
    if (!dirty) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    memcpy(dirty, t->dirty, n * sizeof(*dirty));
    const mem_index_t *idx = mem_store__writer_view(w, ns);
    qsort(dirty, n, sizeof(size_t), cmp_size);
    for (size_t i = 0; i < n && rc == MEM_OK; i++) {
        size_t pos = dirty[i];
        if ((i && pos == dirty[i - 1]) || pos >= mem_index_rows(idx) ||
            (mem_index_flags(idx, pos) & MEM_ROW_DELETED))
            continue;
        sqlite3_stmt *s = st->stmts[STMT_SEG_ACCESS];
        sqlite3_bind_int64(s, 1, mem_index_access_count(idx, pos));
        sqlite3_bind_int64(s, 2, (int64_t)mem_index_access_tick(idx, pos));
        sqlite3_bind_int64(s, 3, ns->ns_id);
        sqlite3_bind_int64(s, 4, mem_index_seq(idx, pos));
        rc = mem_store__step_done(st, s, "write access statistics", err);
    }
    free(dirty);
    if (rc == MEM_OK) { /* read after the ticks, so clock >= every tick written */
        sqlite3_stmt *s = st->stmts[STMT_NS_CLOCK];
        sqlite3_bind_int64(s, 1, (int64_t)mem_index_access_clock(idx));
        sqlite3_bind_int64(s, 2, ns->ns_id);
        rc = mem_store__step_done(st, s, "write clock", err);
    }
    return rc;
}

/* One transaction over every namespace with something to write. A failure (out of memory,
 * a full disk) rolls it back and leaves everything dirty for the next flush. */
static int flush_access_once(mem_store__writer_t *w, size_t *n_left, mem_err_t *err)
{
    mem_store_t *st = w->st;
    *n_left = 0;
    pthread_rwlock_rdlock(&st->reg_lock);
    size_t n = st->n_nss, k = 0;
    taken_t *held = calloc(n ? n : 1, sizeof(*held));
    for (size_t i = 0; held && i < n; i++) {
        mem_store_ns_t *ns = st->nss[i];
        pthread_mutex_lock(&ns->acc_mu);
        bool dirty = ns->n_dirty > 0 || ns->recent_dirty;
        pthread_mutex_unlock(&ns->acc_mu);
        if (dirty) {
            __atomic_add_fetch(&ns->refs, 1, __ATOMIC_ACQ_REL);
            held[k++].ns = ns;
        }
    }
    pthread_rwlock_unlock(&st->reg_lock);
    if (!held) {
        *n_left = n; /* at most */
        return mem_err_set(err, MEM_ENOMEM, "out of memory");
    }
    int rc = MEM_OK;
    if (k) rc = mem_store__exec(st->db, "BEGIN IMMEDIATE", err);
    size_t n_taken = 0;
    for (; n_taken < k && rc == MEM_OK; n_taken++) {
        take_ns_access(&held[n_taken]);
        rc = flush_ns_access(w, &held[n_taken], err);
    }
    if (k && rc == MEM_OK) rc = mem_store__exec(st->db, "COMMIT", err);
    if (rc != MEM_OK && !sqlite3_get_autocommit(st->db))
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    for (size_t i = 0; i < k; i++) {
        if (rc != MEM_OK) {
            if (i < n_taken) give_back_ns_access(&held[i]);
            (*n_left)++;
        } else {
            free(held[i].dirty);
        }
        mem_store__ns_release(held[i].ns);
    }
    free(held);
    return rc;
}

void mem_store__flush_access(mem_store__writer_t *w, bool closing)
{
    mem_err_t err;
    size_t n_left = 0;
    int rc = flush_access_once(w, &n_left, &err);
    /* At close there is no next flush: try again (a failed allocation or a busy moment
     * passes), then say what is lost rather than dropping it silently. */
    for (int i = 1; closing && rc != MEM_OK && i < MEM_STORE__CLOSE_FLUSH_TRIES; i++)
        rc = flush_access_once(w, &n_left, &err);
    if (closing && rc != MEM_OK)
        mem_log(w->st->opts.log, MEM_LOG_ERROR, "access_flush_failed",
                "what=close namespaces=%zu tries=%d err=%s", n_left, MEM_STORE__CLOSE_FLUSH_TRIES,
                err.msg);
}
