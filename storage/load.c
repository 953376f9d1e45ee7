/* load.c - start-up restore: every namespace from SQLite into a fresh in-memory index
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Rows come back ordered by seq, which is time order, so appending them rebuilds
 * the time-ordered blocks. The coherence graph comes back from its checkpoint (linker.c):
 * no O(n^2) pass at start; the rows written or deleted after the checkpoint are handed to
 * the linker, which catches up in the background while reads that need the graph wait.
 * Rows read back are untrusted: a wrong embedding size, a seq or timestamp out of order, a
 * graph that names a missing row or lies about degrees is MEM_ECORRUPT.
 */
#define _GNU_SOURCE /* pthread_rwlockattr_setkind_np: a writer must not starve behind scans */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "core/graph.h"
#include "storage/store_int.h"

int mem_store__ns_new(const char *name, int64_t ns_id, size_t dim, mem_index_t *idx,
                      mem_lexidx_t *lex, bool grams, mem_store_ns_t **out)
{
    mem_store_ns_t *ns = calloc(1, sizeof(*ns));
    int rc = ns ? MEM_OK : MEM_ENOMEM;
    if (ns && !(ns->recent = malloc(MEM_STORE__RECENT_QUERIES * dim * sizeof(float))))
        rc = MEM_ENOMEM;
    if (rc == MEM_OK && !idx) rc = mem_index_new(dim, &idx);
    if (rc == MEM_OK && !lex) rc = mem_lexidx_new(grams, &lex);
    if (rc == MEM_OK) rc = mem_meta_new(&ns->meta);
    if (rc != MEM_OK) {
        if (ns) free(ns->recent);
        free(ns);
        mem_index_free(idx);
        mem_lexidx_free(lex);
        return rc;
    }
    snprintf(ns->name, sizeof(ns->name), "%s", name);
    ns->ns_id = ns_id;
    ns->dim = dim;
    ns->refs = 1;
    ns->last_ts_ms = INT64_MIN;
    ns->_idx = idx;
    ns->_lex = lex;
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&ns->lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    pthread_mutex_init(&ns->acc_mu, NULL);
    *out = ns;
    return MEM_OK;
}

void mem_store__ns_publish(mem_store_ns_t *ns, mem_index_t *idx)
{
    mem_index_publish(idx, mem_index_rows(idx));
    mem_lexidx_publish(ns->_lex, mem_index_rows(idx));
    mem_index_counts_t c;
    mem_index_counts(idx, &c);
    ns->pub_active = c.n_active;
    ns->pub_superseded = c.n_superseded;
    ns->pub_archived = c.n_archived;
    ns->pub_edges = c.graph_edges;
    ns->pub_max_degree = c.max_degree;
    memcpy(ns->pub_embedder, ns->embedder, sizeof(ns->pub_embedder));
}

/* The header of a namespace being loaded (its row in namespaces). */
typedef struct ns_row {
    int64_t ns_id;
    const char *name;
    size_t dim;
    int64_t last_seq;
} ns_row_t;

static uint32_t clamp_u32(int64_t x)
{
    return x <= 0 ? 0 : x >= (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)x;
}

/* Stored degrees are untrusted (a lying one would size the degree histogram): each linked
 * row has at most one edge to every other linked row, and every edge counts twice. */
static int check_degrees(const ns_row_t *nr, const mem_index_t *idx, mem_err_t *err)
{
    size_t rows = mem_index_rows(idx), n_linked = 0;
    for (size_t pos = 0; pos < rows; pos++)
        n_linked += mem_index_linked(idx, pos);
    uint64_t sum = 0;
    for (size_t pos = 0; pos < rows; pos++) {
        uint32_t d = mem_index_linked(idx, pos) ? mem_index_degree(idx, pos) : 0;
        if (d && d >= n_linked)
            return mem_err_set(err, MEM_ECORRUPT,
                               "namespace %s: the segment at seq %lld has a stored coherence "
                               "degree of %lu with only %zu segments in the graph: the file is "
                               "damaged",
                               nr->name, (long long)mem_index_seq(idx, pos), (unsigned long)d,
                               n_linked);
        sum += d;
    }
    if (sum % 2)
        return mem_err_set(err, MEM_ECORRUPT,
                           "namespace %s: the stored coherence degrees add up to an odd number "
                           "(%llu): the file is damaged",
                           nr->name, (unsigned long long)sum);
    return MEM_OK;
}

/* The graph's checkpoint (graph_blocks, see linker.c): each (seq, degree) names a row of the
 * graph. A seq that no row has, or that falls outside its bucket, is a damaged file. */
static int load_graph(const ns_row_t *nr, mem_index_t *idx, sqlite3 *db, mem_err_t *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "SELECT first_seq, data FROM graph_blocks WHERE ns_id = ?"
                                " ORDER BY first_seq",
                                -1, &st, NULL);
    if (rc != SQLITE_OK) return mem_store__err_sqlite(err, db, rc, "load the graph");
    sqlite3_bind_int64(st, 1, nr->ns_id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t first = sqlite3_column_int64(st, 0);
        const unsigned char *b = sqlite3_column_blob(st, 1);
        size_t len = (size_t)sqlite3_column_bytes(st, 1);
        if (len % 12 || len / 12 > MEM_STORE__GRAPH_BUCKET) {
            rc = mem_err_set(err, MEM_ECORRUPT,
                             "namespace %s: a stored graph block of %zu bytes: the file is damaged",
                             nr->name, len);
            goto out;
        }
        for (size_t i = 0; i < len / 12; i++) {
            uint64_t seq = 0;
            uint32_t deg = 0;
            for (int k = 0; k < 8; k++)
                seq |= (uint64_t)b[i * 12 + (size_t)k] << (8 * k);
            for (int k = 0; k < 4; k++)
                deg |= (uint32_t)b[i * 12 + 8 + (size_t)k] << (8 * k);
            long pos = seq <= (uint64_t)INT64_MAX ? mem_index_find_seq(idx, (int64_t)seq) : -1;
            if (pos < 0 || (int64_t)seq < first ||
                (int64_t)seq >= first + MEM_STORE__GRAPH_BUCKET ||
                mem_index_linked(idx, (size_t)pos)) {
                rc = mem_err_set(err, MEM_ECORRUPT,
                                 "namespace %s: the stored graph names segment seq %llu, which "
                                 "it cannot hold: the file is damaged",
                                 nr->name, (unsigned long long)seq);
                goto out;
            }
            mem_index_restore_link(idx, (size_t)pos, deg);
        }
    }
    rc = rc == SQLITE_DONE ? MEM_OK : mem_store__err_sqlite(err, db, rc, "load the graph");
out:
    sqlite3_finalize(st);
    return rc;
}

/* What the linker still has to do: every row whose graph membership differs from its flags
 * (written or deleted after the last checkpoint), and every deleted row whose vector is kept
 * (graph_gone rows come back as holes). */
static int pending_of(mem_store_ns_t *ns, const mem_index_t *idx)
{
    mem_store_graph_t *g = &ns->g;
    size_t rows = mem_index_rows(idx);
    g->g_rows = rows;
    for (size_t p = 0; p < rows; p++) {
        uint8_t f = mem_index_flags(idx, p);
        bool want = f == 0, linked = mem_index_linked(idx, p);
        if (want == linked && !(f & MEM_ROW_DELETED)) continue;
        if (g->n_pend == g->cap_pend) {
            size_t cap = g->cap_pend ? g->cap_pend * 2 : 64;
            size_t *a = realloc(g->pend, cap * sizeof(*a));
            if (!a) return MEM_ENOMEM;
            g->pend = a;
            g->cap_pend = cap;
        }
        g->pend[g->n_pend++] = p;
    }
    g->w_gen = g->n_pend ? 1 : 0;
    g->g_gen = 0;
    return MEM_OK;
}

/* A namespace that takes longer than this to load says so (with the lexical index's share). */
#define MEM_STORE__LOAD_LOG_S 0.5

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* graph: the namespace keeps a graph (deleted rows' kept vectors come back as holes);
 * restore: its stored degrees are restored too (their rule and threshold are the current). */
static int load_rows(const ns_row_t *nr, bool graph, bool restore, mem_index_t *idx,
                     mem_lexidx_t *lex, sqlite3 *db, uint64_t clock, mem_err_t *err)
{
    double t_start = mono_s(), cpu_start = thread_cpu_s(), t_text = 0.0;
    size_t n_rows = 0;
    static const char sql[] =
        "SELECT seq, id, ts_ms, embedding, source, superseded_by IS NOT NULL, archived,"
        " access_count, tick, text, 0 FROM segments WHERE ns_id = ?1"
        " UNION ALL SELECT seq, NULL, ts_ms, embedding, NULL, 0, 0, 0, 0, NULL, 1 FROM graph_gone"
        " WHERE ns_id = ?1 ORDER BY seq";
    sqlite3_stmt *st = NULL;
    mem_lextok_t *tk = NULL;
    mem_lexdoc_t doc = {0};
    mem_lextok_opts_t to = MEM_LEXTOK_DEFAULTS;
    bool grams = mem_lexidx_has_grams(lex);
    if (mem_lextok_new(&to, &tk) != MEM_OK)
        return mem_err_set(err, MEM_ENOMEM, "out of memory loading %s", nr->name);
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) {
        mem_lextok_free(tk);
        return mem_store__err_sqlite(err, db, rc, "load segments");
    }
    sqlite3_bind_int64(st, 1, nr->ns_id);
    int64_t prev_seq = 0, prev_ts = INT64_MIN;
    uint64_t max_tick = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t seq = sqlite3_column_int64(st, 0);
        const char *id = (const char *)sqlite3_column_text(st, 1);
        size_t id_len = (size_t)sqlite3_column_bytes(st, 1);
        int64_t ts = sqlite3_column_int64(st, 2);
        const void *blob = sqlite3_column_blob(st, 3);
        size_t blob_len = (size_t)sqlite3_column_bytes(st, 3);
        bool gone = sqlite3_column_int(st, 10) != 0;
        if (seq <= prev_seq || ts < prev_ts || (!gone && (!id || id_len == 0)) ||
            id_len > MEM_STORE_ID_MAX || blob_len != nr->dim * sizeof(float) || !blob ||
            seq > nr->last_seq) {
            rc = mem_err_set(err, MEM_ECORRUPT, "namespace %s: corrupt segment row at seq %lld",
                             nr->name, (long long)seq);
            goto out;
        }
        prev_seq = seq;
        prev_ts = ts;
        if (gone && !graph) continue;
        int src = 0;
        if (sqlite3_column_type(st, 4) != SQLITE_NULL) {
            src = mem_index_source_intern(idx, (const char *)sqlite3_column_text(st, 4),
                                          (size_t)sqlite3_column_bytes(st, 4));
            if (src < 0) {
                rc = mem_err_set(err, src, "namespace %s: too many sources", nr->name);
                goto out;
            }
        }
        uint8_t flags = 0;
        if (sqlite3_column_int(st, 5)) flags |= MEM_ROW_SUPERSEDED;
        if (sqlite3_column_int(st, 6)) flags |= MEM_ROW_ARCHIVED;
        /* The vector is copied through a float buffer: the blob need not be aligned. */
        size_t pos;
        float vbuf[64];
        float *vec = nr->dim <= 64 ? vbuf : malloc(blob_len);
        if (!vec) {
            rc = mem_err_set(err, MEM_ENOMEM, "out of memory loading %s", nr->name);
            goto out;
        }
        memcpy(vec, blob, blob_len);
        if (gone)
            rc = mem_index_append_hole(idx, ts, seq, vec, &pos);
        else
            rc = mem_index_append(idx, id, id_len, ts, seq, vec, (uint16_t)src, flags, &pos);
        if (vec != vbuf) free(vec);
        if (rc != MEM_OK) {
            rc = mem_err_set(err, rc, "out of memory loading %s", nr->name);
            goto out;
        }
        const char *text = (const char *)sqlite3_column_text(st, 9);
        size_t lpos;
        double t0 = text ? mono_s() : 0.0;
        n_rows++;
        if ((text && mem_lexdoc_build(&doc, tk, text, (size_t)sqlite3_column_bytes(st, 9), grams) !=
                         MEM_OK) ||
            mem_lexidx_append(lex, text ? &doc : NULL, flags == 0 && !gone, &lpos) != MEM_OK) {
            rc = mem_err_set(err, MEM_ENOMEM, "out of memory loading %s", nr->name);
            goto out;
        }
        if (gone) mem_lexidx_remove(lex, lpos); /* the same hole, at the same position */
        if (text) t_text += mono_s() - t0;
        int64_t acc = sqlite3_column_int64(st, 7);
        int64_t tick = sqlite3_column_int64(st, 8);
        mem_index_restore_row(idx, pos, clamp_u32(acc), tick > 0 ? (uint64_t)tick : 0);
        if (tick > 0 && (uint64_t)tick > max_tick) max_tick = (uint64_t)tick;
    }
    if (rc != SQLITE_DONE) {
        rc = mem_store__err_sqlite(err, db, rc, "load segments");
        goto out;
    }
    rc = MEM_OK;
    /* mem_index_append advanced the clock once per row: put the stored one back. */
    mem_index_restore_clock(idx, clock > max_tick ? clock : max_tick);
    if (graph && restore &&
        ((rc = load_graph(nr, idx, db, err)) != MEM_OK ||
         (rc = check_degrees(nr, idx, err)) != MEM_OK))
        goto out;
    mem_index_recount_graph(idx);
    double took = mono_s() - t_start;
    /* seconds and text_seconds are wall clock; cpu_seconds is this thread's CPU time (on a
     * busy machine the text's CPU share is about text_seconds / seconds of it) */
    if (took >= MEM_STORE__LOAD_LOG_S)
        fprintf(stderr,
                "level=info msg=\"namespace loaded\" ns=%s segments=%zu seconds=%.2f "
                "cpu_seconds=%.2f text_seconds=%.2f\n",
                nr->name, n_rows, took, thread_cpu_s() - cpu_start, t_text);
out:
    sqlite3_finalize(st);
    mem_lexdoc_deinit(&doc);
    mem_lextok_free(tk);
    return rc;
}

static int ns_from_row(mem_store_t *st, sqlite3 *db, sqlite3_stmt *row, mem_store_ns_t **out,
                       mem_err_t *err)
{
    int64_t ns_id = sqlite3_column_int64(row, 0);
    const char *name = (const char *)sqlite3_column_text(row, 1);
    int64_t dim = sqlite3_column_int64(row, 2);
    if (!name || strlen(name) > MEM_STORE_NS_MAX || dim < 1 || dim > 4096)
        return mem_err_set(err, MEM_ECORRUPT, "corrupt namespace row %lld", (long long)ns_id);
    ns_row_t nr = {ns_id, name, (size_t)dim, sqlite3_column_int64(row, 3)};
    int64_t clock = sqlite3_column_int64(row, 5);
    const char *embedder = (const char *)sqlite3_column_text(row, 6);
    if (embedder && (strlen(embedder) == 0 || strlen(embedder) > MEM_STORE_EMBEDDER_MAX))
        return mem_err_set(err, MEM_ECORRUPT, "corrupt embedder of namespace row %lld",
                           (long long)ns_id);
    mem_index_t *idx = NULL;
    mem_lexidx_t *lex = NULL;
    mem_store_ns_t *ns;
    bool coherence = sqlite3_column_int(row, 8) != 0;
    /* the stored graph is restored only when it was made by this rule at this threshold */
    bool stamped = sqlite3_column_type(row, 9) == SQLITE_INTEGER &&
                   sqlite3_column_type(row, 10) == SQLITE_FLOAT;
    bool same = stamped && sqlite3_column_int64(row, 9) == MEM_GRAPH_RULE &&
                sqlite3_column_double(row, 10) == (double)st->opts.coherence_threshold;
    int rc = mem_index_new(nr.dim, &idx);
    if (rc == MEM_OK) rc = mem_lexidx_new(st->opts.text_grams, &lex);
    if (rc != MEM_OK) {
        mem_index_free(idx);
        return mem_err_set(err, rc, "out of memory loading %s", name);
    }
    if ((rc = load_rows(&nr, coherence, same, idx, lex, db, clock > 0 ? (uint64_t)clock : 0,
                        err)) != MEM_OK) {
        mem_index_free(idx);
        mem_lexidx_free(lex);
        return rc;
    }
    if ((rc = mem_store__ns_new(name, ns_id, nr.dim, idx, lex, st->opts.text_grams, &ns)) != MEM_OK)
        return mem_err_set(err, rc, "out of memory loading %s", name);
    ns->coherence = coherence;
    ns->incarnation = (uint64_t)sqlite3_column_int64(row, 11);
    ns->created_ms = sqlite3_column_int64(row, 12); /* NULL reads as 0 */
    if (coherence && !same) {
        /* every active row is pending (none is linked), so the linker builds the graph
         * again in the background while reads that need it wait; its first checkpoint
         * replaces the stored one whole and records the current rule and threshold */
        ns->g.restamp = true;
        ns->g.ckpt_all = true;
        if (stamped)
            mem_log(st->opts.log, MEM_LOG_INFO, "graph_rebuild",
                    "ns=%s stored_rule=%lld stored_threshold=%.9g rule=%d threshold=%.9g", name,
                    (long long)sqlite3_column_int64(row, 9), sqlite3_column_double(row, 10),
                    MEM_GRAPH_RULE, (double)st->opts.coherence_threshold);
        else
            mem_log(st->opts.log, MEM_LOG_INFO, "graph_rebuild",
                    "ns=%s stored_rule=none rule=%d threshold=%.9g", name, MEM_GRAPH_RULE,
                    (double)st->opts.coherence_threshold);
    }
    if (coherence && pending_of(ns, idx) != MEM_OK) {
        mem_store__ns_release(ns);
        return mem_err_set(err, MEM_ENOMEM, "out of memory loading %s", name);
    }
    if (embedder) memcpy(ns->embedder, embedder, strlen(embedder) + 1);
    if ((rc = mem_store__meta_load(ns, db, err)) != MEM_OK) {
        mem_store__ns_release(ns);
        return rc;
    }
    ns->last_seq = nr.last_seq;
    ns->last_ts_ms =
        sqlite3_column_type(row, 4) == SQLITE_NULL ? INT64_MIN : sqlite3_column_int64(row, 4);
    mem_store__ns_publish(ns, idx); /* not shared yet: idx is still only ours */
    const void *recent = sqlite3_column_blob(row, 7);
    size_t rlen = (size_t)sqlite3_column_bytes(row, 7), qlen = nr.dim * sizeof(float);
    if (recent && (rlen % qlen || rlen / qlen > MEM_STORE__RECENT_QUERIES)) {
        mem_store__ns_release(ns);
        return mem_err_set(err, MEM_ECORRUPT,
                           "namespace %s: the stored recent queries are %zu bytes, not a "
                           "whole number of %zu-float vectors (at most %d)",
                           name, rlen, nr.dim, MEM_STORE__RECENT_QUERIES);
    }
    if (recent && rlen) { /* oldest first: the ring restarts at 0 */
        memcpy(ns->recent, recent, rlen);
        ns->n_recent = rlen / qlen;
        ns->recent_head = ns->n_recent % MEM_STORE__RECENT_QUERIES;
    }
    *out = ns;
    return MEM_OK;
}

#define NS_COLS                                                                                    \
    "SELECT id, name, dim, last_seq, last_ts_ms, clock, embedder, recent, coherence,"              \
    " graph_rule, graph_threshold, incarnation, created_ms FROM namespaces"

int mem_store__load_ns(mem_store_t *st, sqlite3 *db, const char *name, mem_store_ns_t **out,
                       mem_err_t *err)
{
    sqlite3_stmt *row = NULL;
    int rc = sqlite3_prepare_v2(db, NS_COLS " WHERE name = ?", -1, &row, NULL);
    if (rc != SQLITE_OK) return mem_store__err_sqlite(err, db, rc, "load namespace");
    sqlite3_bind_text(row, 1, name, -1, SQLITE_STATIC);
    *out = NULL;
    rc = sqlite3_step(row);
    if (rc == SQLITE_ROW)
        rc = ns_from_row(st, db, row, out, err);
    else if (rc == SQLITE_DONE)
        rc = MEM_OK;
    else
        rc = mem_store__err_sqlite(err, db, rc, "load namespace");
    sqlite3_finalize(row);
    return rc;
}

int mem_store__load_all(mem_store_t *st, mem_err_t *err)
{
    sqlite3_stmt *row = NULL;
    int rc = sqlite3_prepare_v2(st->db, NS_COLS " ORDER BY name", -1, &row, NULL);
    if (rc != SQLITE_OK) return mem_store__err_sqlite(err, st->db, rc, "load namespaces");
    while ((rc = sqlite3_step(row)) == SQLITE_ROW) {
        mem_store_ns_t *ns;
        if ((rc = ns_from_row(st, st->db, row, &ns, err)) != MEM_OK) goto out;
        if ((rc = mem_store__reg_add(st, ns)) != MEM_OK) {
            mem_store__ns_release(ns);
            rc = mem_err_set(err, rc, "out of memory loading namespaces");
            goto out;
        }
        mem_store__graph_adopt(st, ns); /* the linker starts on it once it runs */
    }
    rc = rc == SQLITE_DONE ? MEM_OK : mem_store__err_sqlite(err, st->db, rc, "load namespaces");
out:
    sqlite3_finalize(row);
    return rc;
}
