/* writer.c - the single writer: the queue, the thread, the group commit, namespaces
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. One thread owns the read-write connection. It takes every queued op at once and
 * runs them inside one transaction (a SAVEPOINT per op), so concurrent inserts share one
 * fsync. Each op validates against the in-memory state before it changes anything
 * (insert.c, remove.c), so a client error fails that op only. Memory is changed under the
 * namespace's exclusive lock as the op runs, through the writer's mutable handle
 * (store_int.h); new rows stay invisible to scans until COMMIT succeeds and the group is
 * published. The coherence graph follows in the background (linker.c), whose checkpoints
 * of it the writer writes in its next group. The WAL is checkpointed by a thread of its own
 * (store.c), woken between groups after their ops are answered, never inside a commit: the
 * copy and its fsync overlap the next groups instead of delaying them.
 * A storage error (disk full, I/O) rolls the whole group back, reloads the touched
 * namespaces from SQLite and fails every op that had not already failed on its own.
 *
 * After a group, holes are vacuumed (vacuum.c) and, at most MEM_STORE__FLUSH_MS apart,
 * the access statistics gathered by readers are written (access.c).
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <sqlite3.h>

#include "core/graph.h"
#include "storage/textcache_int.h"
#include "storage/writer_int.h"

static const char *const stmt_sql[STMT_COUNT] = {
    [STMT_SEG_INSERT] = "INSERT INTO segments(ns_id, seq, id, ts_ms, text, source, metadata,"
                        " embedding, supersedes, tick) VALUES(?,?,?,?,?,?,?,?,?,?)",
    [STMT_SEG_BY_SEQ] = "SELECT ts_ms, text, source, metadata, embedding, supersedes"
                        " FROM segments WHERE ns_id = ? AND seq = ?",
    [STMT_SEG_SUPERSEDE] = "UPDATE segments SET superseded_by = ? WHERE ns_id = ? AND seq = ?",
    [STMT_SEG_DELETE] = "DELETE FROM segments WHERE ns_id = ? AND seq = ?",
    [STMT_SEG_ARCHIVE] = "UPDATE segments SET archived = 1 WHERE ns_id = ? AND seq = ?",
    [STMT_SEG_ACCESS] =
        "UPDATE segments SET access_count = ?, tick = ? WHERE ns_id = ? AND seq = ?",
    [STMT_SEG_PATCH] =
        "UPDATE segments SET metadata = CASE WHEN ?1 THEN ?2 ELSE metadata END,"
        " source = CASE WHEN ?3 THEN ?4 ELSE source END WHERE ns_id = ?5 AND seq = ?6",
    [STMT_META_TREE] = "SELECT fullkey, type, atom FROM json_tree(?1)",
    [STMT_NS_INSERT] =
        "INSERT INTO namespaces(name, dim, created_ms, coherence, graph_rule, graph_threshold,"
        " incarnation) VALUES(?, ?, ?, ?, ?, ?, ?)",
    [STMT_NS_UPDATE] = "UPDATE namespaces SET last_seq = ?, last_ts_ms = ?, clock = ? WHERE id = ?",
    [STMT_NS_CLOCK] = "UPDATE namespaces SET clock = max(clock, ?) WHERE id = ?",
    [STMT_NS_DELETE] = "DELETE FROM namespaces WHERE id = ?",
    [STMT_NS_DELETE_SEGS] = "DELETE FROM segments WHERE ns_id = ?",
    [STMT_NS_EMBEDDER] = "UPDATE namespaces SET embedder = ? WHERE id = ?",
    [STMT_META_LSN] = "UPDATE meta SET value = ? WHERE key = 'lsn'",
    [STMT_SUP_INSERT] = "INSERT OR IGNORE INTO supersessions(ns_id, target_seq, by_seq)"
                        " VALUES(?, ?, ?)",
    [STMT_SUP_TARGETS] = "SELECT target_seq FROM supersessions WHERE ns_id = ? AND by_seq = ?",
    [STMT_SUP_DEL_BY] = "DELETE FROM supersessions WHERE ns_id = ? AND by_seq = ?",
    [STMT_SUP_DEL_TARGET] = "DELETE FROM supersessions WHERE ns_id = ? AND target_seq = ?",
    [STMT_SUP_LATEST] = "SELECT s.id FROM supersessions x JOIN segments s"
                        " ON s.ns_id = x.ns_id AND s.seq = x.by_seq"
                        " WHERE x.ns_id = ? AND x.target_seq = ? ORDER BY x.by_seq DESC LIMIT 1",
    [STMT_SUP_BY] = "SELECT by_seq FROM supersessions WHERE ns_id = ? AND target_seq = ?",
    [STMT_SEG_SUPS_GET] = "SELECT supersedes FROM segments WHERE ns_id = ? AND seq = ?",
    [STMT_SEG_SUPS_SET] = "UPDATE segments SET supersedes = ? WHERE ns_id = ? AND seq = ?",
    [STMT_SUP_DEL_NS] = "DELETE FROM supersessions WHERE ns_id = ?",
    [STMT_NS_RECENT] = "UPDATE namespaces SET recent = ? WHERE id = ?",
    [STMT_GONE_SAVE] =
        "INSERT OR REPLACE INTO graph_gone(ns_id, seq, ts_ms, embedding)"
        " SELECT ns_id, seq, ts_ms, embedding FROM segments WHERE ns_id = ? AND seq = ?",
    [STMT_GONE_DROP] = "DELETE FROM graph_gone WHERE ns_id = ? AND seq = ?",
    [STMT_GONE_DEL_NS] = "DELETE FROM graph_gone WHERE ns_id = ?",
    [STMT_GBLK_PUT] = "INSERT OR REPLACE INTO graph_blocks(ns_id, first_seq, data) VALUES(?, ?, ?)",
    [STMT_GBLK_DEL] = "DELETE FROM graph_blocks WHERE ns_id = ? AND first_seq = ?",
    [STMT_GBLK_DEL_NS] = "DELETE FROM graph_blocks WHERE ns_id = ?",
    [STMT_NS_GRAPH_STAMP] =
        "UPDATE namespaces SET graph_rule = ?, graph_threshold = ? WHERE id = ?",
    [STMT_SAVEPOINT] = "SAVEPOINT op",
    [STMT_RELEASE] = "RELEASE op",
    [STMT_ROLLBACK_TO] = "ROLLBACK TO op",
};

int mem_store__prepare_writer(mem_store_t *st, mem_err_t *err)
{
    for (int i = 0; i < STMT_COUNT; i++) {
        int rc = sqlite3_prepare_v3(st->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
                                    &st->stmts[i], NULL);
        if (rc != SQLITE_OK) return mem_store__err_sqlite(err, st->db, rc, "prepare");
    }
    return mem_store__log_prepare(st, err); /* cluster log positions (applied.c) */
}

static bool is_storage_error(int rc)
{
    return rc == MEM_ESTORAGE || rc == MEM_EFULL || rc == MEM_ENOMEM || rc == MEM_ECORRUPT;
}

int mem_store__step_done(mem_store_t *st, sqlite3_stmt *s, const char *what, mem_err_t *err)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return rc == SQLITE_DONE ? MEM_OK : mem_store__err_sqlite(err, st->db, rc, what);
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the group: namespaces touched by the ops of one transaction ---- */

int mem_store__group_touch(mem_store__writer_t *w, mem_store_ns_t *ns)
{
    if (ns->in_group) return MEM_OK;
    if (w->g_n == w->g_cap) {
        size_t cap = w->g_cap ? w->g_cap * 2 : 8;
        mem_store_ns_t **a = realloc(w->g_ns, cap * sizeof(*a));
        if (!a) return MEM_ENOMEM;
        w->g_ns = a;
        w->g_cap = cap;
    }
    __atomic_add_fetch(&ns->refs, 1, __ATOMIC_ACQ_REL);
    ns->in_group = true;
    w->g_ns[w->g_n++] = ns;
    return MEM_OK;
}

void mem_store__lsn_advance(mem_store__writer_t *w, int64_t n)
{
    w->st->lsn += n;
    w->lsn_dirty = true;
}

static void group_reset_ns(mem_store_ns_t *ns)
{
    ns->in_group = false;
    ns->meta_dirty = false;
    ns->g.n_w_flagged = 0;
    ns->g.n_w_later = 0;
    mem_store__graph_patches_free(&ns->g);
    ns->g.w_changed = false;
    __atomic_store_n(&ns->patch_unpublished, false, __ATOMIC_RELEASE);
}

/* ---- flag changes, noted for the linker ---- */

void mem_store__note_append(mem_store__writer_t *w, mem_store_ns_t *ns)
{
    (void)w;
    ns->g.w_changed = true;
}

static int note_flagged(mem_store_ns_t *ns, size_t pos)
{
    mem_store_graph_t *g = &ns->g;
    g->w_changed = true;
    if (!ns->coherence) return MEM_OK;
    if (g->n_w_flagged == g->cap_w_flagged) {
        size_t cap = g->cap_w_flagged ? g->cap_w_flagged * 2 : 16;
        size_t *a = realloc(g->w_flagged, cap * sizeof(*a));
        if (!a) return MEM_ENOMEM;
        g->w_flagged = a;
        g->cap_w_flagged = cap;
    }
    g->w_flagged[g->n_w_flagged++] = pos;
    return MEM_OK;
}

int mem_store__leave(mem_store__writer_t *w, mem_store_ns_t *ns, const size_t *rows, size_t n,
                     uint8_t add, int64_t *seqs, size_t *n_left, mem_err_t *err)
{
    size_t m = 0;
    int rc = MEM_OK;
    mem_index_t *idx = mem_store__write_lock(w, ns);
    for (size_t i = 0; i < n && rc == MEM_OK; i++) {
        uint8_t f = mem_index_flags(idx, rows[i]);
        uint8_t to = add == MEM_ROW_DELETED ? MEM_ROW_DELETED : (uint8_t)(f | add);
        if ((f & MEM_ROW_DELETED) || to == f) continue; /* gone, or listed twice */
        if ((rc = note_flagged(ns, rows[i])) != MEM_OK) break;
        if (seqs) seqs[m] = mem_index_seq(idx, rows[i]);
        m++;
        mem_index_set_flags(idx, rows[i], to);
        mem_store__lex_flags(ns, rows[i], to);
        if (to == MEM_ROW_DELETED) mem_meta_clear(ns->meta, mem_index_seq(idx, rows[i]));
    }
    mem_store__write_unlock(w, ns);
    if (rc != MEM_OK) return mem_err_set(err, rc, "out of memory");
    if (n_left) *n_left = m;
    return MEM_OK;
}

int mem_store__supersede_later(mem_store__writer_t *w, mem_store_ns_t *ns, const size_t *rows,
                               size_t n, mem_err_t *err)
{
    (void)w;
    mem_store_graph_t *g = &ns->g;
    if (g->cap_w_later - g->n_w_later < n) {
        size_t cap = g->cap_w_later ? g->cap_w_later : 16;
        while (cap - g->n_w_later < n)
            cap *= 2;
        size_t *a = realloc(g->w_later, cap * sizeof(*a));
        if (!a) return mem_err_set(err, MEM_ENOMEM, "out of memory");
        g->w_later = a;
        g->cap_w_later = cap;
    }
    /* noted for the linker now, so that flagging them later cannot fail: the linker reads
     * the flags only once the group is published, after they are set */
    for (size_t i = 0; i < n; i++)
        if (note_flagged(ns, rows[i]) != MEM_OK)
            return mem_err_set(err, MEM_ENOMEM, "out of memory");
    memcpy(g->w_later + g->n_w_later, rows, n * sizeof(*rows));
    g->n_w_later += n;
    return MEM_OK;
}

/* The superseded targets waiting in ns leave the active set; idx is the mutable handle,
 * under the exclusive lock. Allocates nothing, so it cannot fail. */
static void supersede_now(mem_store_ns_t *ns, mem_index_t *idx)
{
    for (size_t i = 0; i < ns->g.n_w_later; i++) {
        size_t pos = ns->g.w_later[i];
        uint8_t f = mem_index_flags(idx, pos);
        if (f & (MEM_ROW_DELETED | MEM_ROW_SUPERSEDED)) continue; /* gone, or listed twice */
        mem_index_set_flags(idx, pos, (uint8_t)(f | MEM_ROW_SUPERSEDED));
        mem_store__lex_flags(ns, pos, (uint8_t)(f | MEM_ROW_SUPERSEDED));
    }
    ns->g.n_w_later = 0;
}

int mem_store__patch_later(mem_store__writer_t *w, mem_store_ns_t *ns, mem_store__patch_later_t *p,
                           mem_err_t *err)
{
    (void)w;
    mem_store_graph_t *g = &ns->g;
    if (g->n_w_patches == g->cap_w_patches) {
        size_t cap = g->cap_w_patches ? g->cap_w_patches * 2 : 8;
        mem_store__patch_later_t *a = realloc(g->w_patches, cap * sizeof(*a));
        if (!a) {
            free(p->pairs);
            free(p->text);
            return mem_err_set(err, MEM_ENOMEM, "out of memory");
        }
        g->w_patches = a;
        g->cap_w_patches = cap;
    }
    g->w_patches[g->n_w_patches++] = *p;
    return MEM_OK;
}

/* The patches waiting in ns, in their order, under the exclusive lock (idx: the mutable
 * handle); a row deleted since is skipped. MEM_OK, or MEM_ENOMEM when a row's metadata values
 * could not be set (that row then holds none: the caller reloads the namespace). */
static int patches_now(mem_store_ns_t *ns, mem_index_t *idx)
{
    int rc = MEM_OK;
    for (size_t i = 0; i < ns->g.n_w_patches; i++) {
        const mem_store__patch_later_t *p = &ns->g.w_patches[i];
        if (mem_index_flags(idx, p->pos) & MEM_ROW_DELETED) continue;
        if (p->source >= 0) mem_index_set_source(idx, p->pos, (uint16_t)p->source);
        if (p->meta && mem_meta_set(ns->meta, p->seq, p->pairs, p->n_pairs) != MEM_OK)
            rc = MEM_ENOMEM;
    }
    mem_store__graph_patches_free(&ns->g);
    return rc;
}

/* Before an op that reads or changes flags other than by appending (a delete releasing its
 * targets or clearing a row's values, a compaction skipping rows that are no longer active):
 * the group's waiting targets are flagged and its patches applied first, so that op sees
 * them as a serial order would. MEM_OK, MEM_ENOMEM (the group then fails). */
static int pending_now(mem_store__writer_t *w, mem_err_t *err)
{
    int rc = MEM_OK;
    for (size_t i = 0; i < w->g_n; i++) {
        mem_store_ns_t *ns = w->g_ns[i];
        if (ns->dropped || (ns->g.n_w_later == 0 && ns->g.n_w_patches == 0)) continue;
        mem_index_t *idx = mem_store__write_lock(w, ns);
        supersede_now(ns, idx);
        if (patches_now(ns, idx) != MEM_OK) rc = MEM_ENOMEM;
        mem_store__write_unlock(w, ns);
    }
    return rc == MEM_OK ? MEM_OK : mem_err_set(err, rc, "out of memory");
}

int mem_store__rejoin(mem_store__writer_t *w, mem_store_ns_t *ns, const size_t *rows, size_t n,
                      uint8_t drop, mem_err_t *err)
{
    int rc = MEM_OK;
    mem_index_t *idx = mem_store__write_lock(w, ns);
    for (size_t i = 0; i < n && rc == MEM_OK; i++) {
        uint8_t f = mem_index_flags(idx, rows[i]);
        if ((f & MEM_ROW_DELETED) || !(f & drop)) continue;
        if ((rc = note_flagged(ns, rows[i])) == MEM_OK) {
            mem_index_set_flags(idx, rows[i], (uint8_t)(f & ~drop));
            mem_store__lex_flags(ns, rows[i], (uint8_t)(f & ~drop));
        }
    }
    mem_store__write_unlock(w, ns);
    return rc == MEM_OK ? MEM_OK : mem_err_set(err, rc, "out of memory");
}

/* ---- namespaces ---- */

/* 64 bits well mixed (splitmix64's finaliser). */
static uint64_t mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t mem_store__incarnation(const mem_store_op_t *op)
{
    uint64_t h;
    if (op->log_stream && op->log_seq) {
        /* the creating record's place in the log: the same on every node that applies it,
         * and never another record's */
        h = 14695981039346656037ull;
        for (const char *p = op->log_stream; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
        h = mix64(h ^ mix64(op->log_seq));
    } else if (getrandom(&h, sizeof(h), GRND_NONBLOCK) != (ssize_t)sizeof(h)) {
        struct timespec ts; /* no entropy yet: the clock and a counter still tell apart */
        static uint64_t ctr;
        clock_gettime(CLOCK_REALTIME, &ts);
        h = mix64((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) ^
            mix64(__atomic_add_fetch(&ctr, 1, __ATOMIC_RELAXED) + (uint64_t)op->now_ms);
    }
    return h ? h : 1; /* 0 is the namespaces of files from before incarnations */
}

int mem_store__ns_create(mem_store__writer_t *w, const char *name, size_t dim, bool coherence,
                         int64_t now_ms, uint64_t incarnation, mem_store_ns_t **out, mem_err_t *err)
{
    mem_store_t *st = w->st;
    if (st->opts.max_namespaces && st->n_nss >= st->opts.max_namespaces)
        return mem_err_set(err, MEM_ELIMIT, "namespaces: the limit of %zu is reached",
                           st->opts.max_namespaces);
    sqlite3_stmt *s = st->stmts[STMT_NS_INSERT];
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, (int64_t)dim);
    sqlite3_bind_int64(s, 3, now_ms);
    sqlite3_bind_int(s, 4, coherence ? 1 : 0);
    sqlite3_bind_int(s, 5, MEM_GRAPH_RULE); /* an empty graph, made under the current rule */
    sqlite3_bind_double(s, 6, (double)st->opts.coherence_threshold);
    sqlite3_bind_int64(s, 7, (int64_t)incarnation);
    int rc = mem_store__step_done(st, s, "create namespace", err);
    if (rc != MEM_OK) return rc;
    mem_store_ns_t *ns;
    if ((rc = mem_store__ns_new(name, sqlite3_last_insert_rowid(st->db), dim, NULL, NULL,
                                st->opts.text_grams, &ns)) != MEM_OK)
        return mem_err_set(err, rc, "out of memory");
    ns->coherence = coherence;
    ns->incarnation = incarnation;
    ns->created_ms = now_ms;
    if ((rc = mem_store__reg_add(st, ns)) != MEM_OK) {
        mem_store__ns_release(ns);
        return mem_err_set(err, rc, "out of memory");
    }
    if ((rc = mem_store__group_touch(w, ns)) != MEM_OK)
        return mem_err_set(err, rc, "out of memory");
    ns->meta_dirty = true;
    *out = ns;
    return MEM_OK;
}

bool mem_store__name_ok(const char *name)
{
    size_t len = strlen(name);
    return len >= 1 && len <= MEM_STORE_NS_MAX;
}

static int op_ns_create(mem_store__writer_t *w, mem_store_op_t *op)
{
    mem_store_t *st = w->st;
    if (!mem_store__name_ok(op->ns))
        return mem_err_field(&op->err, MEM_EINVAL, "namespace", "namespace: invalid name");
    if (op->dim < 1 || op->dim > 4096)
        return mem_err_field(&op->err, MEM_EINVAL, "dim", "dim: must be in 1..4096, got %zu",
                             op->dim);
    mem_store_ns_t *ns = mem_store__reg_find(st, op->ns);
    if (ns) {
        if (ns->dim != op->dim)
            return mem_err_field(&op->err, MEM_EEXISTS, "dim", "namespace %s exists with dim %zu",
                                 op->ns, ns->dim);
        if (ns->coherence == op->no_graph)
            return mem_err_field(&op->err, MEM_EEXISTS, "coherence",
                                 "namespace %s exists with coherence %s", op->ns,
                                 ns->coherence ? "true" : "false");
        op->created = false;
        return MEM_OK;
    }
    int rc = mem_store__ns_create(w, op->ns, op->dim, !op->no_graph, op->now_ms,
                                  mem_store__incarnation(op), &ns, &op->err);
    if (rc == MEM_OK) {
        op->created = true;
        mem_store__lsn_advance(w, 1);
    }
    return rc;
}

static int op_ns_drop(mem_store__writer_t *w, mem_store_op_t *op)
{
    mem_store_t *st = w->st;
    mem_store_ns_t *ns = mem_store__reg_find(st, op->ns);
    if (!ns) return mem_err_set(&op->err, MEM_ENOTFOUND, "namespace not found: %s", op->ns);
    int rc;
    if ((rc = mem_store__group_touch(w, ns)) != MEM_OK)
        return mem_err_set(&op->err, rc, "out of memory");
    sqlite3_stmt *s = st->stmts[STMT_NS_DELETE_SEGS];
    sqlite3_bind_int64(s, 1, ns->ns_id);
    if ((rc = mem_store__step_done(st, s, "drop namespace", &op->err)) != MEM_OK) return rc;
    static const int also[] = {STMT_SUP_DEL_NS, STMT_GONE_DEL_NS, STMT_GBLK_DEL_NS, STMT_NS_DELETE};
    for (size_t i = 0; i < sizeof(also) / sizeof(also[0]); i++) {
        s = st->stmts[also[i]];
        sqlite3_bind_int64(s, 1, ns->ns_id);
        if ((rc = mem_store__step_done(st, s, "drop namespace", &op->err)) != MEM_OK) return rc;
    }
    __atomic_store_n(&ns->dropped, true, __ATOMIC_RELEASE);
    mem_store__reg_remove(st, ns);
    mem_store__lsn_advance(w, 1);
    return MEM_OK;
}

static int exec_op(mem_store__writer_t *w, mem_store_op_t *op)
{
    if (op->kind != MEM_STORE_OP_INSERT && op->kind != MEM_STORE_OP_IMPORT &&
        op->kind != MEM_STORE_OP_PATCH) {
        int rc = pending_now(w, &op->err);
        if (rc != MEM_OK) return rc;
    }
    switch (op->kind) {
    case MEM_STORE_OP_NS_CREATE:
        return op_ns_create(w, op);
    case MEM_STORE_OP_NS_DROP:
        return op_ns_drop(w, op);
    case MEM_STORE_OP_INSERT:
        return mem_store__op_insert(w, op);
    case MEM_STORE_OP_DELETE:
        return mem_store__op_delete(w, op);
    case MEM_STORE_OP_COMPACT:
        return mem_store__op_compact(w, op);
    case MEM_STORE_OP_PATCH:
        return mem_store__op_patch(w, op);
    case MEM_STORE_OP_IMPORT:
        return mem_store__op_import(w, op);
    case MEM_STORE_OP_NS_IMPORT: /* cluster placement: nssnap.c */
        return mem_store__op_ns_import(w, op);
    case MEM_STORE_OP_NS_FORGET:
        return mem_store__op_ns_forget(w, op);
    }
    return mem_err_set(&op->err, MEM_EINVAL, "unknown op kind %d", (int)op->kind);
}

/* ---- the group commit ---- */

static int group_finish_sql(mem_store__writer_t *w, mem_err_t *err)
{
    mem_store_t *st = w->st;
    int rc = MEM_OK;
    for (size_t i = 0; i < w->g_n && rc == MEM_OK; i++) {
        mem_store_ns_t *ns = w->g_ns[i];
        if (ns->dropped) continue;
        if (ns->meta_dirty) {
            sqlite3_stmt *s = st->stmts[STMT_NS_UPDATE];
            sqlite3_bind_int64(s, 1, ns->last_seq);
            if (ns->last_ts_ms == INT64_MIN)
                sqlite3_bind_null(s, 2);
            else
                sqlite3_bind_int64(s, 2, ns->last_ts_ms);
            sqlite3_bind_int64(s, 3,
                               (int64_t)mem_index_access_clock(mem_store__writer_view(w, ns)));
            sqlite3_bind_int64(s, 4, ns->ns_id);
            rc = mem_store__step_done(st, s, "update namespace", err);
        }
    }
    if (rc == MEM_OK && w->lsn_dirty) {
        sqlite3_stmt *s = st->stmts[STMT_META_LSN];
        sqlite3_bind_int64(s, 1, st->lsn);
        rc = mem_store__step_done(st, s, "update lsn", err);
    }
    return rc;
}

/* Make the memory of namespace `name` equal SQLite again: a fresh load replaces `cur` (the
 * registered one, NULL when there is none) or, when `gone` is given, brings back the one a
 * failed drop took out of the registry. When the load fails (out of memory), what memory
 * holds is stale: it is kept registered but marked, so readers are refused with the load's
 * error (mem_store__ns_missing) and groups are refused until a later try succeeds
 * (reload_stale, before each group). Never leaves undone writes visible. */
static int reload_ns(mem_store__writer_t *w, mem_store_ns_t *cur, mem_store_ns_t *gone,
                     const char *name)
{
    mem_store_t *st = w->st;
    mem_store_ns_t *fresh = NULL;
    mem_err_t e;
    int rc = mem_store__load_ns(st, st->db, name, &fresh, &e);
    if (rc != MEM_OK) {
        mem_store_ns_t *mark = cur;
        if (!mark && gone && mem_store__reg_add(st, gone) == MEM_OK) {
            __atomic_add_fetch(&gone->refs, 1, __ATOMIC_ACQ_REL); /* the registry's */
            mark = gone;
        }
        if (mark && !__atomic_load_n(&mark->stale, __ATOMIC_ACQUIRE)) {
            mem_log(st->opts.log, MEM_LOG_ERROR, "store_reload_failed",
                    "what=rollback ns=%s err=%s", name, e.msg);
            __atomic_store_n(&mark->stale_rc, rc, __ATOMIC_RELAXED); /* published by stale */
            __atomic_store_n(&mark->stale, true, __ATOMIC_RELEASE);
            st->n_stale++;
        } else if (mark) { /* readers are told the reason of the last try */
            __atomic_store_n(&mark->stale_rc, rc, __ATOMIC_RELEASE);
        } else {
            mem_log(st->opts.log, MEM_LOG_ERROR, "store_reload_failed",
                    "what=rollback ns=%s err=%s lost=memory", name, e.msg);
        }
        return rc;
    }
    if (cur) {
        if (__atomic_load_n(&cur->stale, __ATOMIC_ACQUIRE)) {
            st->n_stale--;
            mem_log(st->opts.log, MEM_LOG_INFO, "store_reloaded", "ns=%s", name);
        }
        __atomic_store_n(&cur->dropped, true, __ATOMIC_RELEASE);
        pthread_mutex_lock(&cur->acc_mu);
        bool unwritten = cur->n_dirty || cur->recent_dirty; /* the flush before failed too */
        cur->n_dirty = 0;
        pthread_mutex_unlock(&cur->acc_mu);
        if (unwritten)
            mem_log(st->opts.log, MEM_LOG_WARN, "access_flush_failed", "what=reload ns=%s", name);
        mem_store__reg_remove(st, cur);
    }
    if (fresh &&
        mem_store__reg_add(st, fresh) != MEM_OK) { /* reload_touched's order rules it out */
        mem_log(st->opts.log, MEM_LOG_ERROR, "store_reload_failed",
                "what=register ns=%s lost=memory", name);
        mem_store__ns_release(fresh);
    } else if (fresh)
        mem_store__graph_adopt(st, fresh);
    return MEM_OK;
}

static void wake_graph_waiters(mem_store_t *st)
{
    pthread_mutex_lock(&st->g_mu); /* reads waiting on a replaced namespace stop waiting */
    pthread_cond_broadcast(&st->g_done_cv);
    pthread_mutex_unlock(&st->g_mu);
}

/* After a failed group: make memory equal SQLite again for every touched namespace. The
 * registered ones first (a namespace the group created leaves, one it wrote is replaced in
 * place), then those a drop took out come back: the registry then holds no more than
 * before the group, so putting them back needs no allocation that could fail and leave a
 * namespace SQLite holds missing from memory until a restart. */
static void reload_touched(mem_store__writer_t *w)
{
    mem_store_t *st = w->st;
    for (size_t i = 0; i < w->g_n; i++) {
        mem_store_ns_t *ns = w->g_ns[i];
        bool again = false;
        for (size_t k = 0; k < i && !again; k++)
            again = strcmp(w->g_ns[k]->name, ns->name) == 0;
        if (again) continue;
        mem_store_ns_t *cur = mem_store__reg_find(st, ns->name);
        if (cur)
            reload_ns(w, cur, NULL, ns->name);
        else
            ns->comes_back = true;
    }
    for (size_t i = 0; i < w->g_n; i++) {
        mem_store_ns_t *ns = w->g_ns[i];
        if (!ns->comes_back) continue;
        ns->comes_back = false;
        reload_ns(w, NULL, ns, ns->name);
    }
    wake_graph_waiters(st);
}

/* Before a group: try again the namespaces whose reload failed. MEM_OK when none is left
 * stale; otherwise the error (err) every op of the group is refused with. */
static int reload_stale(mem_store__writer_t *w, mem_err_t *err)
{
    mem_store_t *st = w->st;
    const char *left = NULL;
    int rc = MEM_OK;
    for (size_t i = 0; i < st->n_nss && st->n_stale;) {
        mem_store_ns_t *ns = st->nss[i];
        if (!__atomic_load_n(&ns->stale, __ATOMIC_ACQUIRE)) {
            i++;
            continue;
        }
        char name[MEM_STORE_NS_MAX + 1];
        memcpy(name, ns->name, sizeof(name)); /* ns goes away when it is replaced */
        if (reload_ns(w, ns, NULL, name) == MEM_OK) {
            wake_graph_waiters(st);
            i = 0; /* the registry changed under the index */
        } else {
            left = ns->name;
            rc = ns->stale_rc;
            i++;
        }
    }
    if (rc == MEM_OK) return MEM_OK;
    int code = mem_err_set(err, rc,
                           "namespace %s could not be reloaded after a failed write; "
                           "writes wait for it: retry later",
                           left);
    err->retry_after_s = 1;
    return code;
}

/* Answer every op of a group that cannot run (reload_stale failed) with err. */
static void refuse_ops(mem_store_op_t *head, const mem_err_t *err)
{
    for (mem_store_op_t *op = head; op;) {
        mem_store_op_t *next = op->_next; /* op may be reused by its callback */
        op->rc = err->code;
        op->err = *err;
        op->created = false;
        op->n_applied = 0;
        if (op->_done) op->_done(op, op->_ud);
        op = next;
    }
}

/* ---- graph checkpoints (linker.c makes them) ---- */

void mem_store__ckpt_submit(mem_store_t *st, mem_store__ckpt_t *list)
{
    mem_store__ckpt_t *tail = list;
    while (tail->next)
        tail = tail->next;
    pthread_mutex_lock(&st->q_mu);
    tail->next = st->ckpt_head;
    st->ckpt_head = list;
    pthread_cond_signal(&st->q_cv);
    pthread_mutex_unlock(&st->q_mu);
}

/* Write one checkpoint in the group; a namespace dropped or reloaded since is skipped (its
 * successor was loaded from what SQLite holds). A failure reloads the namespace with the
 * rest of the group, so memory and the checkpoint never drift apart. */
static int exec_ckpt(mem_store__writer_t *w, mem_store__ckpt_t *c, mem_err_t *err)
{
    mem_store_t *st = w->st;
    mem_store_ns_t *ns = c->ns;
    if (__atomic_load_n(&ns->dropped, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&ns->stale, __ATOMIC_ACQUIRE) || mem_store__reg_find(st, ns->name) != ns)
        return MEM_OK;
    int rc = mem_store__group_touch(w, ns);
    if (rc != MEM_OK) return mem_err_set(err, rc, "out of memory");
    if (c->restamp) { /* the buckets below are the whole graph, made under the current rule */
        sqlite3_stmt *s = st->stmts[STMT_GBLK_DEL_NS];
        sqlite3_bind_int64(s, 1, ns->ns_id);
        rc = mem_store__step_done(st, s, "write the graph", err);
        s = st->stmts[STMT_NS_GRAPH_STAMP];
        sqlite3_bind_int(s, 1, MEM_GRAPH_RULE);
        sqlite3_bind_double(s, 2, (double)st->opts.coherence_threshold);
        sqlite3_bind_int64(s, 3, ns->ns_id);
        if (rc == MEM_OK) rc = mem_store__step_done(st, s, "write the graph", err);
    }
    for (size_t i = 0; i < c->n_buckets && rc == MEM_OK; i++) {
        sqlite3_stmt *s = st->stmts[c->blob[i] ? STMT_GBLK_PUT : STMT_GBLK_DEL];
        sqlite3_bind_int64(s, 1, ns->ns_id);
        sqlite3_bind_int64(s, 2, (int64_t)(c->bucket[i] * MEM_STORE__GRAPH_BUCKET));
        if (c->blob[i]) sqlite3_bind_blob(s, 3, c->blob[i], (int)c->blob_len[i], SQLITE_STATIC);
        rc = mem_store__step_done(st, s, "write the graph", err);
    }
    for (size_t i = 0; i < c->n_gone && rc == MEM_OK; i++) {
        sqlite3_stmt *s = st->stmts[STMT_GONE_DROP];
        sqlite3_bind_int64(s, 1, ns->ns_id);
        sqlite3_bind_int64(s, 2, c->gone[i]);
        rc = mem_store__step_done(st, s, "write the graph", err);
    }
    return rc;
}

/* failed: why the group cannot run (its ops get that error, its checkpoints are dropped, as
 * when BEGIN fails), or NULL */
static void run_group(mem_store__writer_t *w, mem_store_op_t *head, size_t n_ops,
                      mem_store__ckpt_t *ckpts, const mem_err_t *failed)
{
    mem_store_t *st = w->st;
    w->g_n = 0;
    w->lsn0 = st->lsn;
    w->lsn_dirty = false;
    mem_err_t fatal;
    int fatal_rc = MEM_OK;
    mem_err_clear(&fatal);
    int rc = failed ? failed->code : mem_store__exec(st->db, "BEGIN IMMEDIATE", &fatal);
    if (failed) fatal = *failed;
    if (rc != MEM_OK) fatal_rc = rc;
    mem_store_op_t *op;
    for (op = head; op && fatal_rc == MEM_OK; op = op->_next) {
        if ((rc = mem_store__step_done(st, st->stmts[STMT_SAVEPOINT], "savepoint", &op->err)) ==
            MEM_OK) {
            /* cluster log record (applied.c): skip when applied, refuse a gap */
            int lg = op->log_stream ? mem_store__log_check(st, op) : 0;
            rc = lg == 0 ? exec_op(w, op) : (lg == 1 ? MEM_OK : lg);
            op->rc = rc;
            if (rc == MEM_OK || !is_storage_error(rc)) {
                if (rc != MEM_OK) /* validation writes nothing; this is belt and braces */
                    mem_store__step_done(st, st->stmts[STMT_ROLLBACK_TO], "rollback to", NULL);
                int rc2 = lg == 0 && op->log_stream ? mem_store__log_write(st, op, &fatal) : MEM_OK;
                if (rc2 == MEM_OK)
                    rc2 = mem_store__step_done(st, st->stmts[STMT_RELEASE], "release", &fatal);
                if (rc2 != MEM_OK)
                    rc = rc2;
                else
                    continue;
            }
        }
        fatal_rc = rc;
        if (op->err.code == rc) fatal = op->err;
    }
    for (mem_store__ckpt_t *c = ckpts; c && fatal_rc == MEM_OK; c = c->next)
        if ((rc = exec_ckpt(w, c, &fatal)) != MEM_OK) fatal_rc = rc;
    if (fatal_rc == MEM_OK && (rc = group_finish_sql(w, &fatal)) != MEM_OK) fatal_rc = rc;
    if (fatal_rc == MEM_OK) {
        for (size_t i = 0; i < w->g_n; i++) /* retrieve() reads no texts past these (store.c) */
            if (w->g_ns[i]->g.n_w_patches && !w->g_ns[i]->dropped)
                __atomic_store_n(&w->g_ns[i]->patch_unpublished, true, __ATOMIC_SEQ_CST);
        double t0 = mono_s();
        rc = sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
        double dt = mono_s() - t0;
        if (rc != SQLITE_OK) {
            fatal_rc = mem_store__err_sqlite(&fatal, st->db, rc, "commit");
        } else {
            static const double bounds[8] = {0.0005, 0.001, 0.002, 0.005,
                                             0.010,  0.025, 0.050, 0.100};
            pthread_mutex_lock(&st->q_mu);
            st->m.commits++;
            if (head) st->m.op_commits++;
            st->m.commit_seconds_sum += dt;
            for (int b = 0; b < 8; b++)
                if (dt <= bounds[b]) st->m.commit_buckets[b]++;
            pthread_mutex_unlock(&st->q_mu);
        }
    }
    if (fatal_rc != MEM_OK) {
        if (!sqlite3_get_autocommit(st->db)) sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        st->lsn = w->lsn0;
        for (size_t i = 0; i < w->g_n; i++)
            group_reset_ns(w->g_ns[i]);
        mem_store__flush_access(w, false); /* the reload reads back what readers counted */
        reload_touched(w);
        mem_store__log_reload(st); /* cluster log positions as committed */
        for (op = head; op; op = op->_next)
            if (op->rc == MEM_OK || is_storage_error(op->rc) || op->err.code == 0) {
                op->rc = fatal_rc;
                op->err = fatal;
                op->created = false;
                op->n_applied = 0;
            }
    } else {
        for (size_t i = 0; i < w->g_n; i++) {
            mem_store_ns_t *ns = w->g_ns[i];
            if (!ns->dropped) {
                /* the superseded targets leave as their superseders appear: a scan sees
                 * both versions' change at once, never neither */
                mem_index_t *idx = mem_store__write_lock(w, ns);
                supersede_now(ns, idx);
                bool lost = patches_now(ns, idx) != MEM_OK;
                mem_store__ns_publish(ns, idx);
                mem_store__write_unlock(w, ns);
                if (lost) { /* a patch's values could not be kept: memory as SQLite has it */
                    reload_ns(w, ns, NULL, ns->name);
                    wake_graph_waiters(st);
                } else {
                    mem_store__graph_publish(st, ns);
                }
            }
            group_reset_ns(ns);
            if (!ns->dropped) mem_store__maybe_vacuum(w, ns);
        }
    }
    mem_store__txc_settled(st->txc); /* a patch's row is committed or rolled back now */
    for (size_t i = 0; i < w->g_n; i++)
        mem_store__ns_release(w->g_ns[i]);
    w->g_n = 0;
    while (ckpts) {
        mem_store__ckpt_t *next = ckpts->next;
        mem_store__ckpt_free(ckpts);
        ckpts = next;
    }
    pthread_mutex_lock(&st->q_mu);
    st->m.ops += n_ops;
    pthread_mutex_unlock(&st->q_mu);
    for (op = head; op;) {
        mem_store_op_t *next = op->_next; /* op may be reused by its callback */
        if (op->_done) op->_done(op, op->_ud);
        op = next;
    }
}

/* ---- the thread ---- */

/* The test hook's PRAGMA max_page_count, when it changed. A failure (out of memory) is the
 * next group's: it fails whole with that error rather than run without the limit, and the
 * PRAGMA is tried again with the group after it. */
static int apply_page_limit(mem_store_t *st, mem_err_t *err)
{
    uint32_t want = __atomic_load_n(&st->max_page_count, __ATOMIC_ACQUIRE);
    if (want == st->applied_page_count) return MEM_OK;
    st->tried_page_count = want;
    char sql[64];
    snprintf(sql, sizeof(sql), "PRAGMA max_page_count=%lu",
             want ? (unsigned long)want : 4294967294ul);
    int rc = mem_store__exec(st->db, sql, err);
    if (rc == MEM_OK) st->applied_page_count = want;
    return rc;
}

/* Under q_mu, with work queued: while ops keep coming in groups (the last one held
 * MEM_STORE__GATHER_MIN or more) and fewer than last time are queued, wait up to
 * opts.group_wait_us for as many. A group's commit (its fdatasync above all) costs the
 * writer about as much CPU as ten single inserts, so at high concurrency, where the request
 * path is bound by CPU, larger groups leave more of it to the rest; a lone client (groups of
 * one) never waits, and neither does a sync or a close. Submitters wake the writer only
 * when the count is reached (mem_store_submit), so gathering costs no wake-up per op. */
static void gather(mem_store_t *st, size_t last_group)
{
    uint32_t wait_us = st->opts.group_wait_us;
    if (!wait_us || last_group < MEM_STORE__GATHER_MIN || st->q_len >= last_group || !st->q_head ||
        st->stop || st->sync_req != st->sync_done)
        return;
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    long ns = dl.tv_nsec + (long)wait_us * 1000L;
    dl.tv_sec += ns / 1000000000L;
    dl.tv_nsec = ns % 1000000000L;
    st->q_gather = last_group;
    st->m.group_waits++;
    while (st->q_len < st->q_gather && !st->stop && st->sync_req == st->sync_done) {
        if (pthread_cond_timedwait(&st->q_cv, &st->q_mu, &dl) == ETIMEDOUT) {
            st->m.group_wait_timeouts++;
            break;
        }
    }
    st->q_gather = 0;
}

static void *writer_main(void *arg)
{
    mem_store_t *st = arg;
    mem_store__mark_writer_thread();
    mem_store__writer_t w = {.st = st}; /* the token: lives on this thread's stack only */
    double last_flush = mono_s();
    size_t last_group = 0;
    for (;;) {
        pthread_mutex_lock(&st->q_mu);
        while (!st->q_head && !st->ckpt_head && !st->stop && st->sync_req == st->sync_done &&
               __atomic_load_n(&st->max_page_count, __ATOMIC_RELAXED) == st->tried_page_count) {
            struct timespec dl;
            clock_gettime(CLOCK_REALTIME, &dl);
            dl.tv_sec += MEM_STORE__FLUSH_MS / 1000;
            if (pthread_cond_timedwait(&st->q_cv, &st->q_mu, &dl) == ETIMEDOUT) break;
        }
        gather(st, last_group);
        mem_store_op_t *head = st->q_head;
        size_t n_ops = st->q_len;
        mem_store__ckpt_t *ckpts = st->ckpt_head;
        st->q_head = st->q_tail = NULL;
        st->q_len = 0;
        st->ckpt_head = NULL;
        bool stopping = st->stop;
        uint64_t want_sync = st->sync_req;
        pthread_mutex_unlock(&st->q_mu);

        mem_err_t limit_err;
        bool limit_ok = apply_page_limit(st, &limit_err) == MEM_OK;
        mem_err_t stale_err;
        if (st->n_stale && reload_stale(&w, &stale_err) != MEM_OK) {
            refuse_ops(head, &stale_err); /* the checkpoints still go (not a stale one's) */
            head = NULL;
        }
        if (head || ckpts) /* answers its ops */
            run_group(&w, head, n_ops, ckpts, limit_ok ? NULL : &limit_err);
        last_group = n_ops;
        mem_store__wal_checkpoint(st);
        double now = mono_s();
        if (stopping || want_sync != st->sync_done ||
            now - last_flush >= MEM_STORE__FLUSH_MS / 1e3) {
            mem_store__flush_access(&w, stopping);
            if (w.vacuum_again) mem_store__vacuum_again(&w); /* a sync (settle) sees it done */
            last_flush = now;
        }
        pthread_mutex_lock(&st->q_mu);
        st->n_completed += n_ops;
        st->sync_done = want_sync;
        pthread_cond_broadcast(&st->done_cv);
        bool done = stopping && !st->q_head && !st->ckpt_head;
        pthread_mutex_unlock(&st->q_mu);
        if (done) break;
    }
    free(w.g_ns);
    for (size_t i = 0; i < w.cap_docs; i++)
        mem_lexdoc_deinit(&w.docs[i]);
    free(w.docs);
    mem_lextok_free(w.tk);
    return NULL;
}

int mem_store__writer_start(mem_store_t *st, mem_err_t *err)
{
    st->applied_page_count = st->tried_page_count = 0;
    int rc = apply_page_limit(st, err);
    if (rc != MEM_OK) return rc;
    if (pthread_create(&st->writer, NULL, writer_main, st) != 0)
        return mem_err_set(err, MEM_ESTORAGE, "cannot start the writer thread");
    pthread_setname_np(st->writer, "mnemod-writer"); /* ps, top, perf -t */
    st->writer_started = true;
    return MEM_OK;
}

void mem_store__writer_stop(mem_store_t *st)
{
    if (!st->writer_started) return;
    pthread_mutex_lock(&st->q_mu);
    st->stop = true;
    pthread_cond_signal(&st->q_cv);
    pthread_mutex_unlock(&st->q_mu);
    pthread_join(st->writer, NULL);
    st->writer_started = false;
}

int mem_store_submit(mem_store_t *st, mem_store_op_t *op, mem_store_done_fn done, void *ud)
{
    op->rc = MEM_OK;
    mem_err_clear(&op->err);
    op->created = false;
    op->n_applied = 0;
    op->_done = done;
    op->_ud = ud;
    op->_next = NULL;
    pthread_mutex_lock(&st->q_mu);
    if (st->stop || (st->opts.max_queue && st->q_len >= st->opts.max_queue)) {
        pthread_mutex_unlock(&st->q_mu);
        int rc = mem_err_set(&op->err, MEM_EBUSY, "the write queue is full");
        op->err.retry_after_s = 1;
        op->rc = rc;
        return rc;
    }
    if (st->q_tail)
        st->q_tail->_next = op;
    else
        st->q_head = op;
    st->q_tail = op;
    st->q_len++;
    st->n_submitted++;
    /* a gathering writer wakes at its count (or its deadline): one wake-up, not one an op */
    if (!st->q_gather || st->q_len >= st->q_gather) pthread_cond_signal(&st->q_cv);
    pthread_mutex_unlock(&st->q_mu);
    return MEM_OK;
}

void mem_store_sync(mem_store_t *st)
{
    pthread_mutex_lock(&st->q_mu);
    uint64_t target = st->n_submitted;
    uint64_t mine = ++st->sync_req;
    pthread_cond_signal(&st->q_cv);
    while ((st->n_completed < target || st->sync_done < mine) && st->writer_started)
        pthread_cond_wait(&st->done_cv, &st->q_mu);
    pthread_mutex_unlock(&st->q_mu);
}
