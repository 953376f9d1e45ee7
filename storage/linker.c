/* linker.c - the writer's coherence-graph maintenance: link, unlink, persist degrees
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. The graph is maintained in batches (core/graph.h), and its scoring pass, the
 * expensive part (one read of the whole namespace), runs WITHOUT the namespace lock,
 * through the writer's view (this thread is the only one that changes an index, so it
 * may read it while scanners do); only the apply step (degrees, edges, max degree, and
 * the flags of rows that leave) takes the exclusive lock, briefly. Every kind of change
 * takes this one path: an insert op appends all its new rows, then links them in one
 * batch (every block read once for all of them); its supersede targets leave in one
 * unlink batch, and so do a delete and a compaction's evictions (mem_store__leave).
 *
 * Small insert ops (fewer than MEM_GRAPH_I8_MIN new rows, no supersedes) are not linked
 * at once: the rows a group appends to a namespace stay pending and are linked together,
 * by the next op of the group that needs that graph (a big insert, a supersede, a delete,
 * a compaction) or at the group's end, before the degrees are written - so 32 concurrent
 * single inserts cost one pass over the namespace, not 32. Final degrees only depend on
 * the final active set, so this equals maintaining them row by row. Rows whose degree
 * moved are collected per namespace and written once at the end of the group, so SQLite
 * always holds the degrees that match its rows.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "core/graph.h"
#include "storage/writer_int.h"

static size_t *pending_of(mem_store__writer_t *w, const mem_store_ns_t *ns)
{
    for (size_t i = 0; i < w->g_n; i++)
        if (w->g_ns[i] == ns) return &w->g_pend[i];
    return NULL;
}

void mem_store__link_later(mem_store__writer_t *w, mem_store_ns_t *ns, size_t first)
{
    size_t *pend = pending_of(w, ns);
    if (pend && *pend == SIZE_MAX) *pend = first;
}

/* mem_graph_touch_fn: remember a row whose degree moved (ud is the namespace). */
static void touched_row(void *ud, size_t pos)
{
    mem_store_ns_t *ns = ud;
    if (ns->n_touched == ns->cap_touched) {
        size_t cap = ns->cap_touched ? ns->cap_touched * 2 : 64;
        size_t *t = realloc(ns->touched, cap * sizeof(*t));
        if (!t) {
            ns->meta_dirty = true; /* see flush_degrees: an overflow forces a full pass */
            ns->cap_touched = SIZE_MAX;
            return;
        }
        ns->touched = t;
        ns->cap_touched = cap;
    }
    if (ns->cap_touched != SIZE_MAX) ns->touched[ns->n_touched++] = pos;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static int write_degree(mem_store__writer_t *w, mem_store_ns_t *ns, const mem_index_t *idx,
                        size_t pos, mem_err_t *err)
{
    if (mem_index_flags(idx, pos) & MEM_ROW_DELETED) return MEM_OK;
    sqlite3_stmt *s = w->st->stmts[STMT_SEG_DEGREE];
    sqlite3_bind_int64(s, 1, mem_index_degree(idx, pos));
    sqlite3_bind_int64(s, 2, ns->ns_id);
    sqlite3_bind_int64(s, 3, mem_index_seq(idx, pos));
    return mem_store__step_done(w->st, s, "write degree", err);
}

int mem_store__flush_degrees(mem_store__writer_t *w, mem_store_ns_t *ns, mem_err_t *err)
{
    const mem_index_t *idx = mem_store__writer_view(w, ns);
    int rc = MEM_OK;
    if (ns->cap_touched == SIZE_MAX) { /* the list overflowed: write every row */
        for (size_t pos = 0, n = mem_index_rows(idx); pos < n && rc == MEM_OK; pos++)
            rc = write_degree(w, ns, idx, pos, err);
        return rc;
    }
    if (ns->n_touched) qsort(ns->touched, ns->n_touched, sizeof(size_t), cmp_size);
    for (size_t i = 0; i < ns->n_touched && rc == MEM_OK; i++)
        if (i == 0 || ns->touched[i] != ns->touched[i - 1])
            rc = write_degree(w, ns, idx, ns->touched[i], err);
    return rc;
}

void mem_store__graph_reset(mem_store_ns_t *ns)
{
    ns->n_touched = 0;
    if (ns->cap_touched == SIZE_MAX) {
        free(ns->touched);
        ns->touched = NULL;
        ns->cap_touched = 0;
    }
}

/* mem_graph_touch_fn for a batch link: the batch's own rows (>= first) get their degree in
 * their INSERT, so only older rows go to the group's degree flush. */
typedef struct touch_older {
    mem_store_ns_t *ns;
    size_t first;
} touch_older_t;

static void touched_older_row(void *ud, size_t pos)
{
    touch_older_t *t = ud;
    if (pos < t->first) touched_row(t->ns, pos);
}

int mem_store__link_pending(mem_store__writer_t *w, mem_store_ns_t *ns, size_t skip_from,
                            mem_err_t *err)
{
    size_t *pend = pending_of(w, ns);
    if (!pend || *pend == SIZE_MAX) return MEM_OK;
    const mem_index_t *view = mem_store__writer_view(w, ns);
    mem_graph_delta_t d;
    touch_older_t to = {ns, skip_from};
    int rc = mem_graph_link_find(view, *pend, mem_index_rows(view) - *pend,
                                 w->st->opts.coherence_threshold, w->st->opts.ops, &d);
    if (rc == MEM_OK) {
        mem_index_t *idx = mem_store__write_lock(w, ns);
        rc = mem_graph_apply(idx, &d, touched_older_row, &to);
        mem_store__write_unlock(w, ns);
    }
    mem_graph_delta_free(&d);
    if (rc != MEM_OK) return mem_err_set(err, rc, "out of memory");
    *pend = SIZE_MAX;
    return MEM_OK;
}

int mem_store__leave(mem_store__writer_t *w, mem_store_ns_t *ns, const size_t *rows, size_t n,
                     uint8_t add, int64_t *seqs, size_t *n_left, mem_err_t *err)
{
    int rc = mem_store__link_pending(w, ns, SIZE_MAX, err);
    if (rc != MEM_OK) return rc;
    const mem_index_t *view = mem_store__writer_view(w, ns);
    mem_graph_delta_t d;
    if ((rc = mem_graph_unlink_find(view, rows, n, w->st->opts.coherence_threshold, w->st->opts.ops,
                                    &d)) != MEM_OK)
        return mem_err_set(err, rc, "out of memory");
    size_t m = 0;
    mem_index_t *idx = mem_store__write_lock(w, ns);
    rc = mem_graph_apply(idx, &d, touched_row, ns);
    for (size_t i = 0; rc == MEM_OK && i < n; i++) {
        uint8_t f = mem_index_flags(idx, rows[i]);
        uint8_t to = add == MEM_ROW_DELETED ? MEM_ROW_DELETED : (uint8_t)(f | add);
        if ((f & MEM_ROW_DELETED) || to == f) continue; /* gone, or listed twice */
        if (seqs) seqs[m] = mem_index_seq(idx, rows[i]);
        m++;
        mem_index_set_flags(idx, rows[i], to);
        mem_store__lex_flags(ns, rows[i], to);
        if (to == MEM_ROW_DELETED) mem_meta_clear(ns->meta, mem_index_seq(idx, rows[i]));
    }
    mem_store__write_unlock(w, ns);
    mem_graph_delta_free(&d);
    if (rc != MEM_OK) return mem_err_set(err, rc, "out of memory");
    if (n_left) *n_left = m;
    return MEM_OK;
}

int mem_store__rejoin(mem_store__writer_t *w, mem_store_ns_t *ns, const size_t *rows, size_t n,
                      uint8_t drop, mem_err_t *err)
{
    int rc = mem_store__link_pending(w, ns, SIZE_MAX, err);
    if (rc != MEM_OK) return rc;
    mem_index_t *idx = mem_store__write_lock(w, ns);
    for (size_t i = 0; i < n; i++) {
        uint8_t f = mem_index_flags(idx, rows[i]);
        if (f & MEM_ROW_DELETED) continue;
        mem_index_set_flags(idx, rows[i], (uint8_t)(f & ~drop));
        mem_store__lex_flags(ns, rows[i], (uint8_t)(f & ~drop));
    }
    mem_store__write_unlock(w, ns);
    const mem_index_t *view = mem_store__writer_view(w, ns);
    mem_graph_delta_t d;
    if ((rc = mem_graph_link_set_find(view, rows, n, w->st->opts.coherence_threshold,
                                      w->st->opts.ops, &d)) != MEM_OK)
        return mem_err_set(err, rc, "out of memory");
    idx = mem_store__write_lock(w, ns);
    rc = mem_graph_apply(idx, &d, touched_row, ns);
    mem_store__write_unlock(w, ns);
    mem_graph_delta_free(&d);
    return rc == MEM_OK ? MEM_OK : mem_err_set(err, rc, "out of memory");
}
