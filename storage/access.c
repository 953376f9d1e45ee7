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

static int flush_ns_access(mem_store__writer_t *w, mem_store_ns_t *ns, mem_err_t *err)
{
    mem_store_t *st = w->st;
    pthread_mutex_lock(&ns->acc_mu);
    size_t *dirty = ns->dirty, n = ns->n_dirty;
    bool recent = ns->recent_dirty;
    ns->dirty = NULL;
    ns->n_dirty = ns->cap_dirty = 0;
    ns->recent_dirty = false;
    pthread_mutex_unlock(&ns->acc_mu);
    int rc = recent ? write_recent(st, ns, err) : MEM_OK;
    if (!n || rc != MEM_OK) {
        free(dirty);
        return rc;
    }
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

void mem_store__flush_access(mem_store__writer_t *w)
{
    mem_store_t *st = w->st;
    pthread_rwlock_rdlock(&st->reg_lock);
    size_t n = st->n_nss, k = 0;
    mem_store_ns_t **held = malloc((n ? n : 1) * sizeof(*held));
    for (size_t i = 0; held && i < n; i++) {
        mem_store_ns_t *ns = st->nss[i];
        pthread_mutex_lock(&ns->acc_mu);
        bool dirty = ns->n_dirty > 0 || ns->recent_dirty;
        pthread_mutex_unlock(&ns->acc_mu);
        if (dirty) {
            __atomic_add_fetch(&ns->refs, 1, __ATOMIC_ACQ_REL);
            held[k++] = ns;
        }
    }
    pthread_rwlock_unlock(&st->reg_lock);
    if (!held || !k) {
        free(held);
        return;
    }
    mem_err_t err;
    int rc = mem_store__exec(st->db, "BEGIN IMMEDIATE", &err);
    for (size_t i = 0; i < k && rc == MEM_OK; i++)
        rc = flush_ns_access(w, held[i], &err);
    if (rc == MEM_OK) rc = mem_store__exec(st->db, "COMMIT", &err);
    if (rc != MEM_OK) {
        /* Counters stay exact in memory; only their persistence is delayed or lost. */
        if (!sqlite3_get_autocommit(st->db)) sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    }
    for (size_t i = 0; i < k; i++)
        mem_store__ns_release(held[i]);
    free(held);
}
