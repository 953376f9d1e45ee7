/* writer.c - the single writer: validate, write, group-commit, publish
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. One thread owns the read-write connection. It takes every queued op at once and
 * runs them inside one transaction (a SAVEPOINT per op), so concurrent inserts share one
 * fsync. Each op is validated completely against the in-memory state before anything is
 * changed, so a client error (bad timestamp, duplicate id...) leaves nothing to undo and
 * fails only that op. Memory is changed under the namespace's exclusive lock as the op
 * runs; new rows stay invisible to scans (n_visible) until COMMIT succeeds.
 *
 * The coherence graph is maintained in batches (core/graph.h), and its scoring pass, the
 * expensive part (one read of the whole namespace), runs WITHOUT the namespace lock: this
 * thread is the only one that changes an index, so it may read it while scanners do; only
 * the apply step (degrees, edges, max degree) takes the exclusive lock, briefly. An insert
 * op appends all its new rows, then links them in one batch (every block read once for
 * all of them); its supersede targets leave in one unlink batch, and so do a compaction's
 * evictions. Small insert ops (fewer than MEM_GRAPH_I8_MIN new rows, no supersedes) are not
 * linked at once: the rows a group appends to a namespace stay pending and are linked
 * together, by the next op of the group that needs that graph (a big insert, a supersede,
 * a delete, a compaction) or at the group's end, before the degrees are written - so 32
 * concurrent single inserts cost one pass over the namespace, not 32. Final degrees only
 * depend on the final active set, so this equals maintaining them row by row. Rows whose
 * coherence degree moved are collected per namespace and written once at the end of the
 * group, so SQLite always holds the degrees that match its rows. A storage error (disk
 * full, I/O) rolls the whole group back, reloads the touched namespaces from SQLite and
 * fails every op that had not already failed on its own.
 *
 * Access statistics (count, tick, clock) are bumped by readers with atomics and written
 * here in the background, at most MEM_STORE__FLUSH_MS late: a crash may lose the last
 * second of counters, never a segment.
 *
 * Vacuum. A hard delete leaves a hole in the index (core/index.h). After a group has
 * committed and been published, a namespace whose holes exceed max(VACUUM_MIN_HOLES,
 * n_rows / 4) is rebuilt without them (mem_index_vacuum) WITHOUT its lock - this thread is
 * the only mutator, readers only bump access statistics (atomics) - then swapped in under
 * the exclusive lock, where the access statistics bumped meanwhile are copied over and the
 * dirty access list (the only row positions kept across groups) is remapped to the new
 * positions; the old index is freed after the unlock. Per-group position lists (the
 * group's pending rows, the touched rows) are empty by then. Scans give the same answers:
 * same rows, same order, same fields.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "core/graph.h"
#include "storage/store_int.h"

static const char *const stmt_sql[STMT_COUNT] = {
    [STMT_SEG_INSERT] = "INSERT INTO segments(ns_id, seq, id, ts_ms, text, source, metadata,"
                        " embedding, supersedes, degree, tick) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
    [STMT_SEG_BY_SEQ] = "SELECT ts_ms, text, source, metadata, embedding, supersedes"
                        " FROM segments WHERE ns_id = ? AND seq = ?",
    [STMT_SEG_SUPERSEDE] = "UPDATE segments SET superseded_by = ? WHERE ns_id = ? AND seq = ?",
    [STMT_SEG_DELETE] = "DELETE FROM segments WHERE ns_id = ? AND seq = ?",
    [STMT_SEG_ARCHIVE] = "UPDATE segments SET archived = 1 WHERE ns_id = ? AND seq = ?",
    [STMT_SEG_DEGREE] = "UPDATE segments SET degree = ? WHERE ns_id = ? AND seq = ?",
    [STMT_SEG_ACCESS] =
        "UPDATE segments SET access_count = ?, tick = ? WHERE ns_id = ? AND seq = ?",
    [STMT_NS_INSERT] = "INSERT INTO namespaces(name, dim, created_ms) VALUES(?, ?, ?)",
    [STMT_NS_UPDATE] = "UPDATE namespaces SET last_seq = ?, last_ts_ms = ?, clock = ? WHERE id = ?",
    [STMT_NS_CLOCK] = "UPDATE namespaces SET clock = max(clock, ?) WHERE id = ?",
    [STMT_NS_DELETE] = "DELETE FROM namespaces WHERE id = ?",
    [STMT_NS_DELETE_SEGS] = "DELETE FROM segments WHERE ns_id = ?",
    [STMT_META_LSN] = "UPDATE meta SET value = ? WHERE key = 'lsn'",
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

/* Step a write statement to completion, then reset it for the next use. */
static int step_done(mem_store_t *st, sqlite3_stmt *s, const char *what, mem_err_t *err)
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

typedef struct group {
    mem_store_ns_t **ns; /* one reference each */
    size_t *pend;        /* per namespace: first row appended and not linked yet, or SIZE_MAX */
    size_t n, cap;
    int64_t lsn0;
    bool lsn_dirty;
} group_t;

static int group_touch(group_t *g, mem_store_ns_t *ns)
{
    if (ns->in_group) return MEM_OK;
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 8;
        mem_store_ns_t **a = realloc(g->ns, cap * sizeof(*a));
        if (!a) return MEM_ENOMEM;
        g->ns = a;
        size_t *p = realloc(g->pend, cap * sizeof(*p));
        if (!p) return MEM_ENOMEM;
        g->pend = p;
        g->cap = cap;
    }
    __atomic_add_fetch(&ns->refs, 1, __ATOMIC_ACQ_REL);
    ns->in_group = true;
    g->pend[g->n] = SIZE_MAX;
    g->ns[g->n++] = ns;
    return MEM_OK;
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

static int write_degree(mem_store_t *st, mem_store_ns_t *ns, size_t pos, mem_err_t *err)
{
    mem_index_t *idx = ns->idx;
    if (MEM_INDEX_ROW(idx, pos, flags) & MEM_ROW_DELETED) return MEM_OK;
    sqlite3_stmt *s = st->stmts[STMT_SEG_DEGREE];
    sqlite3_bind_int64(s, 1, MEM_INDEX_ROW(idx, pos, degree));
    sqlite3_bind_int64(s, 2, ns->ns_id);
    sqlite3_bind_int64(s, 3, MEM_INDEX_ROW(idx, pos, seq));
    return step_done(st, s, "write degree", err);
}

/* Each row whose degree changed in this group is written once. */
static int flush_degrees(mem_store_t *st, mem_store_ns_t *ns, mem_err_t *err)
{
    int rc = MEM_OK;
    if (ns->cap_touched == SIZE_MAX) { /* the list overflowed: write every row */
        for (size_t pos = 0; pos < ns->idx->n_rows && rc == MEM_OK; pos++)
            rc = write_degree(st, ns, pos, err);
        return rc;
    }
    if (ns->n_touched) qsort(ns->touched, ns->n_touched, sizeof(size_t), cmp_size);
    for (size_t i = 0; i < ns->n_touched && rc == MEM_OK; i++)
        if (i == 0 || ns->touched[i] != ns->touched[i - 1])
            rc = write_degree(st, ns, ns->touched[i], err);
    return rc;
}

static void group_reset_ns(mem_store_ns_t *ns)
{
    ns->in_group = false;
    ns->meta_dirty = false;
    ns->n_touched = 0;
    if (ns->cap_touched == SIZE_MAX) {
        free(ns->touched);
        ns->touched = NULL;
        ns->cap_touched = 0;
    }
}

/* ---- namespaces ---- */

static int ns_create(mem_store_t *st, group_t *g, const char *name, size_t dim, int64_t now_ms,
                     mem_store_ns_t **out, mem_err_t *err)
{
    if (st->opts.max_namespaces && st->n_nss >= st->opts.max_namespaces)
        return mem_err_set(err, MEM_ELIMIT, "namespaces: the limit of %zu is reached",
                           st->opts.max_namespaces);
    sqlite3_stmt *s = st->stmts[STMT_NS_INSERT];
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, (int64_t)dim);
    sqlite3_bind_int64(s, 3, now_ms);
    int rc = step_done(st, s, "create namespace", err);
    if (rc != MEM_OK) return rc;
    mem_store_ns_t *ns;
    if ((rc = mem_store__ns_new(name, sqlite3_last_insert_rowid(st->db), dim, &ns)) != MEM_OK)
        return mem_err_set(err, rc, "out of memory");
    ns->idx->n_visible = 0;
    if ((rc = mem_store__reg_add(st, ns)) != MEM_OK) {
        mem_store__ns_release(ns);
        return mem_err_set(err, rc, "out of memory");
    }
    if ((rc = group_touch(g, ns)) != MEM_OK) return mem_err_set(err, rc, "out of memory");
    ns->meta_dirty = true;
    *out = ns;
    return MEM_OK;
}

static bool name_ok(const char *name)
{
    size_t len = strlen(name);
    return len >= 1 && len <= MEM_STORE_NS_MAX;
}

static int op_ns_create(mem_store_t *st, group_t *g, mem_store_op_t *op)
{
    if (!name_ok(op->ns))
        return mem_err_field(&op->err, MEM_EINVAL, "namespace", "namespace: invalid name");
    if (op->dim < 1 || op->dim > 4096)
        return mem_err_field(&op->err, MEM_EINVAL, "dim", "dim: must be in 1..4096, got %zu",
                             op->dim);
    mem_store_ns_t *ns = mem_store__reg_find(st, op->ns);
    if (ns) {
        if (ns->dim != op->dim)
            return mem_err_field(&op->err, MEM_EEXISTS, "dim", "namespace %s exists with dim %zu",
                                 op->ns, ns->dim);
        op->created = false;
        return MEM_OK;
    }
    int rc = ns_create(st, g, op->ns, op->dim, op->now_ms, &ns, &op->err);
    if (rc == MEM_OK) {
        op->created = true;
        st->lsn++;
        g->lsn_dirty = true;
    }
    return rc;
}

static int op_ns_drop(mem_store_t *st, group_t *g, mem_store_op_t *op)
{
    mem_store_ns_t *ns = mem_store__reg_find(st, op->ns);
    if (!ns) return mem_err_set(&op->err, MEM_ENOTFOUND, "namespace not found: %s", op->ns);
    int rc;
    if ((rc = group_touch(g, ns)) != MEM_OK) return mem_err_set(&op->err, rc, "out of memory");
    sqlite3_stmt *s = st->stmts[STMT_NS_DELETE_SEGS];
    sqlite3_bind_int64(s, 1, ns->ns_id);
    if ((rc = step_done(st, s, "drop namespace", &op->err)) != MEM_OK) return rc;
    s = st->stmts[STMT_NS_DELETE];
    sqlite3_bind_int64(s, 1, ns->ns_id);
    if ((rc = step_done(st, s, "drop namespace", &op->err)) != MEM_OK) return rc;
    ns->dropped = true;
    mem_store__reg_remove(st, ns);
    st->lsn++;
    g->lsn_dirty = true;
    return MEM_OK;
}

/* Cluster placement (nssnap.c): replace the namespace with an exported copy. */
static int op_ns_import(mem_store_t *st, group_t *g, mem_store_op_t *op)
{
    if (!name_ok(op->ns) || !op->import_path)
        return mem_err_set(&op->err, MEM_EINVAL, "import: namespace and file required");
    int rc;
    mem_store_ns_t *old = mem_store__reg_find(st, op->ns);
    if (old) {
        if ((rc = group_touch(g, old)) != MEM_OK) return mem_err_set(&op->err, rc, "out of memory");
        if ((rc = mem_store__nssnap_delete(st, old->ns_id, &op->err)) != MEM_OK) return rc;
        old->dropped = true;
        mem_store__reg_remove(st, old);
    }
    if ((rc = mem_store__nssnap_copy_in(st, op->import_path, op->ns, &op->err)) != MEM_OK)
        return rc;
    mem_store_ns_t *ns = NULL;
    if ((rc = mem_store__load_ns(st, st->db, op->ns, &ns, &op->err)) != MEM_OK) return rc;
    if (!ns)
        return mem_err_set(&op->err, MEM_EINVAL, "import: no namespace %s in the copy", op->ns);
    if ((rc = mem_store__reg_add(st, ns)) != MEM_OK) {
        mem_store__ns_release(ns);
        return mem_err_set(&op->err, rc, "out of memory");
    }
    if ((rc = group_touch(g, ns)) != MEM_OK) return mem_err_set(&op->err, rc, "out of memory");
    if ((rc = mem_store__log_ns_set(st, op->ns, op->log_seq, &op->err)) != MEM_OK) return rc;
    op->created = true;
    st->lsn++;
    g->lsn_dirty = true;
    return MEM_OK;
}

/* Cluster placement: the namespace moved away; drop it here with its chain position. */
static int op_ns_forget(mem_store_t *st, group_t *g, mem_store_op_t *op)
{
    int rc;
    mem_store_ns_t *ns = mem_store__reg_find(st, op->ns);
    if (ns) {
        if ((rc = group_touch(g, ns)) != MEM_OK) return mem_err_set(&op->err, rc, "out of memory");
        if ((rc = mem_store__nssnap_delete(st, ns->ns_id, &op->err)) != MEM_OK) return rc;
        ns->dropped = true;
        mem_store__reg_remove(st, ns);
    }
    if ((rc = mem_store__log_ns_forget(st, op->ns, &op->err)) != MEM_OK) return rc;
    st->lsn++;
    g->lsn_dirty = true;
    return MEM_OK;
}

/* ---- insert ---- */

typedef enum { SEG_NEW, SEG_STORED, SEG_IN_BATCH } seg_kind_t;

static bool bytes_eq(const char *a, size_t alen, const char *b, size_t blen)
{
    if (!a || !b) return !a && !b;
    return alen == blen && memcmp(a, b, alen) == 0;
}

static bool ids_eq(const char *const *a, size_t na, const char *const *b, size_t nb)
{
    if (na != nb) return false;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i], b[i]) != 0) return false;
    return true;
}

static bool same_given(const mem_store_seg_in_t *a, const mem_store_seg_in_t *b, size_t dim)
{
    return bytes_eq(a->text, a->text_len, b->text, b->text_len) &&
           bytes_eq(a->source, a->source_len, b->source, b->source_len) &&
           bytes_eq(a->metadata, a->metadata_len, b->metadata, b->metadata_len) &&
           memcmp(a->vec, b->vec, dim * sizeof(float)) == 0 &&
           ids_eq(a->supersedes, a->n_supersedes, b->supersedes, b->n_supersedes);
}

/* Compare a given segment with the stored row at seq. *same set on success. */
static int same_as_stored(mem_store_t *st, mem_store_ns_t *ns, int64_t seq,
                          const mem_store_seg_in_t *in, bool *same, mem_err_t *err)
{
    sqlite3_stmt *s = st->stmts[STMT_SEG_BY_SEQ];
    sqlite3_bind_int64(s, 1, ns->ns_id);
    sqlite3_bind_int64(s, 2, seq);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        rc = mem_store__err_sqlite(err, st->db, rc == SQLITE_DONE ? SQLITE_CORRUPT : rc,
                                   "read segment");
        sqlite3_reset(s);
        return rc;
    }
#define COL_TEXT(c)                                                                                \
    (sqlite3_column_type(s, c) == SQLITE_NULL  ? NULL                                              \
     : (const char *)sqlite3_column_blob(s, c) ? (const char *)sqlite3_column_blob(s, c)           \
                                               : "")
    bool eq = true;
    if (in->ts_given && sqlite3_column_int64(s, 0) != in->ts_ms) eq = false;
    if (eq && !bytes_eq(in->text, in->text_len, COL_TEXT(1), (size_t)sqlite3_column_bytes(s, 1)))
        eq = false;
    if (eq &&
        !bytes_eq(in->source, in->source_len, COL_TEXT(2), (size_t)sqlite3_column_bytes(s, 2)))
        eq = false;
    if (eq &&
        !bytes_eq(in->metadata, in->metadata_len, COL_TEXT(3), (size_t)sqlite3_column_bytes(s, 3)))
        eq = false;
#undef COL_TEXT
    if (eq) {
        size_t bytes = (size_t)sqlite3_column_bytes(s, 4);
        const void *blob = sqlite3_column_blob(s, 4);
        eq = bytes == ns->dim * sizeof(float) && blob && memcmp(blob, in->vec, bytes) == 0;
    }
    if (eq) {
        const char *blob = sqlite3_column_blob(s, 5);
        size_t len = blob ? (size_t)sqlite3_column_bytes(s, 5) : 0;
        size_t off = 0, k = 0;
        for (; off < len && k < in->n_supersedes; k++) {
            size_t l = strnlen(blob + off, len - off);
            if (strlen(in->supersedes[k]) != l || memcmp(blob + off, in->supersedes[k], l) != 0) {
                eq = false;
                break;
            }
            off += l + 1;
        }
        if (eq && (off < len || k < in->n_supersedes)) eq = false;
    }
    sqlite3_reset(s);
    *same = eq;
    return MEM_OK;
}

static void seg_field(char *buf, size_t len, const mem_store_op_t *op, size_t i, const char *name)
{
    if (op->batch || op->n_segs > 1)
        snprintf(buf, len, "segments[%zu].%s", i, name);
    else
        snprintf(buf, len, "%s", name);
}

/* Check every member; fills kind[], ref[] (SEG_IN_BATCH: the earlier member; SEG_STORED: the
 * position) and ts[] (resolved timestamps of new members). Changes nothing. */
static int insert_validate(mem_store_t *st, mem_store_ns_t *ns, mem_store_op_t *op,
                           seg_kind_t *kind, size_t *ref, int64_t *ts)
{
    char field[64];
    mem_index_t *idx = ns ? ns->idx : NULL;
    int64_t newest = ns ? ns->last_ts_ms : INT64_MIN;
    for (size_t i = 0; i < op->n_segs; i++) {
        const mem_store_seg_in_t *in = &op->segs[i];
        size_t id_len = strnlen(in->id, sizeof(in->id));
        if (id_len == 0 || id_len > MEM_STORE_ID_MAX) {
            seg_field(field, sizeof(field), op, i, "id");
            return mem_err_field(&op->err, MEM_EINVAL, field, "%s: must be 1..%d bytes", field,
                                 MEM_STORE_ID_MAX);
        }
        if (!in->vec) {
            seg_field(field, sizeof(field), op, i, "embedding");
            return mem_err_field(&op->err, MEM_EINVAL, field, "%s: missing", field);
        }
        /* the same id earlier in this batch */
        size_t j = i;
        for (size_t k = 0; k < i; k++)
            if (strcmp(op->segs[k].id, in->id) == 0) {
                j = k;
                break;
            }
        if (j < i) {
            size_t first = kind[j] == SEG_IN_BATCH ? ref[j] : j;
            bool same = same_given(in, &op->segs[j], op->dim) &&
                        (!in->ts_given || kind[first] == SEG_STORED || in->ts_ms == ts[first]);
            if (same && kind[first] == SEG_STORED && in->ts_given) {
                int rc = same_as_stored(st, ns, MEM_INDEX_ROW(idx, ref[first], seq), in, &same,
                                        &op->err);
                if (rc != MEM_OK) return rc;
            }
            if (!same) {
                seg_field(field, sizeof(field), op, i, "id");
                return mem_err_field(&op->err, MEM_EDUPID, field,
                                     "%s: %s already exists with different content", field, in->id);
            }
            kind[i] = SEG_IN_BATCH;
            ref[i] = first;
            continue;
        }
        long pos = idx ? mem_index_find(idx, in->id, id_len) : -1;
        if (pos >= 0) {
            bool same = false;
            int rc =
                same_as_stored(st, ns, MEM_INDEX_ROW(idx, (size_t)pos, seq), in, &same, &op->err);
            if (rc != MEM_OK) return rc;
            if (!same) {
                seg_field(field, sizeof(field), op, i, "id");
                return mem_err_field(&op->err, MEM_EDUPID, field,
                                     "%s: %s already exists with different content", field, in->id);
            }
            kind[i] = SEG_STORED;
            ref[i] = (size_t)pos;
            continue;
        }
        int64_t t;
        if (in->ts_given) {
            if (in->ts_ms < newest) {
                seg_field(field, sizeof(field), op, i, "timestamp");
                mem_err_field(&op->err, MEM_ENONMONO, field,
                              "%s: %lld ms is older than the namespace's newest %lld ms", field,
                              (long long)in->ts_ms, (long long)newest);
                op->err.last_ms = newest;
                op->err.given_ms = in->ts_ms;
                return MEM_ENONMONO;
            }
            t = in->ts_ms;
        } else {
            t = op->now_ms > newest ? op->now_ms : newest;
        }
        newest = t;
        for (size_t s = 0; s < in->n_supersedes; s++) {
            const char *target = in->supersedes[s];
            bool known = idx && mem_index_find(idx, target, strlen(target)) >= 0;
            for (size_t k = 0; !known && k < i; k++)
                known = strcmp(op->segs[k].id, target) == 0;
            if (!known) {
                seg_field(field, sizeof(field), op, i, "supersedes");
                return mem_err_field(&op->err, MEM_EUNKNOWNID, field, "%s: unknown id %s", field,
                                     target);
            }
        }
        kind[i] = SEG_NEW;
        ts[i] = t;
    }
    return MEM_OK;
}

/* The supersedes ids as one blob, each NUL-terminated. */
static char *ids_blob(const char *const *ids, size_t n, size_t *len)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += strlen(ids[i]) + 1;
    char *b = malloc(total ? total : 1);
    if (!b) return NULL;
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(ids[i]) + 1;
        memcpy(b + off, ids[i], l);
        off += l;
    }
    *len = total;
    return b;
}

static void bind_opt_text(sqlite3_stmt *s, int col, const char *p, size_t len)
{
    if (p)
        sqlite3_bind_text(s, col, p, (int)len, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, col);
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

/* Link the rows appended to ns in this group and not linked yet, in one batch: edges found
 * without the lock, applied under it. Rows >= skip_from get their degree in their INSERT,
 * which follows, so they are not reported for the degree flush. */
static int link_pending(mem_store_t *st, group_t *g, mem_store_ns_t *ns, size_t skip_from,
                        mem_err_t *err)
{
    size_t *pend = NULL;
    for (size_t i = 0; i < g->n && !pend; i++)
        if (g->ns[i] == ns) pend = &g->pend[i];
    if (!pend || *pend == SIZE_MAX) return MEM_OK;
    mem_index_t *idx = ns->idx;
    mem_graph_delta_t d;
    touch_older_t to = {ns, skip_from};
    int rc = mem_graph_link_find(idx, *pend, idx->n_rows - *pend, st->opts.coherence_threshold,
                                 st->opts.ops, &d);
    if (rc == MEM_OK) {
        pthread_rwlock_wrlock(&ns->lock);
        rc = mem_graph_apply(idx, &d, touched_older_row, &to);
        pthread_rwlock_unlock(&ns->lock);
    }
    mem_graph_delta_free(&d);
    if (rc != MEM_OK) return mem_err_set(err, rc, "out of memory");
    *pend = SIZE_MAX;
    return MEM_OK;
}

static int insert_row_sql(mem_store_t *st, mem_store_ns_t *ns, const mem_store_seg_in_t *in,
                          size_t pos, mem_err_t *err)
{
    mem_index_t *idx = ns->idx;
    size_t blob_len = 0;
    char *blob = NULL;
    if (in->n_supersedes && !(blob = ids_blob(in->supersedes, in->n_supersedes, &blob_len)))
        return mem_err_set(err, MEM_ENOMEM, "out of memory");
    sqlite3_stmt *s = st->stmts[STMT_SEG_INSERT];
    sqlite3_bind_int64(s, 1, ns->ns_id);
    sqlite3_bind_int64(s, 2, MEM_INDEX_ROW(idx, pos, seq));
    sqlite3_bind_text(s, 3, in->id, (int)strlen(in->id), SQLITE_STATIC);
    sqlite3_bind_int64(s, 4, MEM_INDEX_ROW(idx, pos, ts_ms));
    bind_opt_text(s, 5, in->text, in->text_len);
    bind_opt_text(s, 6, in->source, in->source_len);
    bind_opt_text(s, 7, in->metadata, in->metadata_len);
    sqlite3_bind_blob(s, 8, in->vec, (int)(ns->dim * sizeof(float)), SQLITE_STATIC);
    if (blob)
        sqlite3_bind_blob(s, 9, blob, (int)blob_len, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, 9);
    sqlite3_bind_int64(s, 10, MEM_INDEX_ROW(idx, pos, degree));
    sqlite3_bind_int64(s, 11, (int64_t)MEM_INDEX_ROW(idx, pos, tick));
    int rc = step_done(st, s, "insert segment", err);
    free(blob);
    return rc;
}

/* The new members of an insert op (kind SEG_NEW), all at once:
 * 1. append every row under the lock (invisible to scans until COMMIT);
 * 2. find their edges WITHOUT the lock (this thread is the only one that changes an index,
 *    so it may read it while scanners do), then apply the degrees under the lock;
 * 3. write the rows (each with its degree);
 * 4. unlink every superseded target at once (find unlocked, apply + flags locked), then
 *    write the supersede links.
 * Final degrees depend only on the final active set, so this equals linking and
 * superseding member by member. */
static int insert_new(mem_store_t *st, group_t *g, mem_store_ns_t *ns, mem_store_op_t *op,
                      const seg_kind_t *kind, const int64_t *ts, size_t *n_inserted)
{
    mem_index_t *idx = ns->idx;
    const float thr = st->opts.coherence_threshold;
    const mem_vec_ops_t *ops = st->opts.ops;
    mem_err_t *err = &op->err;
    size_t first = idx->n_rows, n_new = 0, n_targets = 0;
    int rc = MEM_OK;
    *n_inserted = 0;

    pthread_rwlock_wrlock(&ns->lock);
    for (size_t i = 0; i < op->n_segs && rc == MEM_OK; i++) {
        if (kind[i] != SEG_NEW) continue;
        const mem_store_seg_in_t *in = &op->segs[i];
        size_t pos;
        int src = mem_index_source_intern(idx, in->source, in->source_len);
        if (src < 0)
            rc = src;
        else
            rc = mem_index_append(idx, in->id, strlen(in->id), ts[i], ns->last_seq + 1, in->vec,
                                  (uint16_t)src, 0, &pos);
        if (rc == MEM_OK) {
            ns->last_seq++;
            ns->last_ts_ms = ts[i];
            ns->meta_dirty = true;
            n_new++;
            n_targets += in->n_supersedes;
        }
    }
    pthread_rwlock_unlock(&ns->lock);
    if (rc != MEM_OK)
        return mem_err_set(err, rc == MEM_ELIMIT ? MEM_ENOMEM : rc,
                           rc == MEM_ELIMIT ? "source: too many distinct sources"
                                            : "out of memory");

    /* A small op without supersedes waits for the group's end (or the next op that needs
     * the graph of this namespace): then one pass links every row the group added. */
    for (size_t i = 0; i < g->n; i++)
        if (g->ns[i] == ns && g->pend[i] == SIZE_MAX) g->pend[i] = first;
    if ((n_targets || n_new >= MEM_GRAPH_I8_MIN) &&
        (rc = link_pending(st, g, ns, first, err)) != MEM_OK)
        return rc;

    size_t pos = first;
    for (size_t i = 0; i < op->n_segs; i++) {
        if (kind[i] != SEG_NEW) continue;
        if ((rc = insert_row_sql(st, ns, &op->segs[i], pos, err)) != MEM_OK) return rc;
        mem_store_seg_out_t *o = &op->outs[i];
        o->seq = MEM_INDEX_ROW(idx, pos, seq);
        o->ts_ms = MEM_INDEX_ROW(idx, pos, ts_ms);
        o->existed = false;
        pos++;
        (*n_inserted)++;
    }
    if (!n_targets) return MEM_OK;

    size_t *tpos = malloc(n_targets * sizeof(*tpos)), k = 0;
    if (!tpos) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    for (size_t i = 0; i < op->n_segs && rc == MEM_OK; i++) {
        if (kind[i] != SEG_NEW) continue;
        for (size_t t = 0; t < op->segs[i].n_supersedes; t++) {
            const char *target = op->segs[i].supersedes[t];
            long p = mem_index_find(idx, target, strlen(target));
            if (p < 0) {
                rc = mem_err_set(err, MEM_ESTORAGE, "supersedes: %s vanished", target);
                break;
            }
            tpos[k++] = (size_t)p;
        }
    }
    mem_graph_delta_t d;
    if (rc == MEM_OK && (rc = mem_graph_unlink_find(idx, tpos, k, thr, ops, &d)) != MEM_OK)
        rc = mem_err_set(err, rc, "out of memory");
    if (rc == MEM_OK) {
        pthread_rwlock_wrlock(&ns->lock);
        rc = mem_graph_apply(idx, &d, touched_row, ns);
        if (rc == MEM_OK)
            for (size_t j = 0; j < k; j++) {
                uint8_t f = MEM_INDEX_ROW(idx, tpos[j], flags);
                mem_index_set_flags(idx, tpos[j], f | MEM_ROW_SUPERSEDED);
            }
        pthread_rwlock_unlock(&ns->lock);
        mem_graph_delta_free(&d);
        if (rc != MEM_OK) rc = mem_err_set(err, rc, "out of memory");
    }
    k = 0;
    for (size_t i = 0; i < op->n_segs && rc == MEM_OK; i++) {
        if (kind[i] != SEG_NEW) continue;
        const mem_store_seg_in_t *in = &op->segs[i];
        for (size_t t = 0; t < in->n_supersedes && rc == MEM_OK; t++) {
            sqlite3_stmt *s = st->stmts[STMT_SEG_SUPERSEDE];
            sqlite3_bind_text(s, 1, in->id, (int)strlen(in->id), SQLITE_STATIC);
            sqlite3_bind_int64(s, 2, ns->ns_id);
            size_t tp = tpos[k++];
            sqlite3_bind_int64(s, 3, MEM_INDEX_ROW(idx, tp, seq));
            rc = step_done(st, s, "supersede", err);
        }
    }
    free(tpos);
    return rc;
}

static int op_insert(mem_store_t *st, group_t *g, mem_store_op_t *op)
{
    if (!name_ok(op->ns))
        return mem_err_field(&op->err, MEM_EINVAL, "namespace", "namespace: invalid name");
    if (op->n_segs == 0 || !op->segs || !op->outs)
        return mem_err_field(&op->err, MEM_EINVAL, "segments", "segments: empty batch");
    mem_store_ns_t *ns = mem_store__reg_find(st, op->ns);
    char field[64];
    if (ns && op->dim != ns->dim) {
        seg_field(field, sizeof(field), op, 0, "embedding");
        return mem_err_field(&op->err, MEM_EDIM, field, "embedding: expected %zu floats, got %zu",
                             ns->dim, op->dim);
    }
    if (!ns && (op->dim < 1 || op->dim > 4096)) {
        seg_field(field, sizeof(field), op, 0, "embedding");
        return mem_err_field(&op->err, MEM_EINVAL, field,
                             "embedding: must have 1..4096 floats, got %zu", op->dim);
    }
    seg_kind_t *kind = malloc(op->n_segs * sizeof(*kind));
    size_t *ref = malloc(op->n_segs * sizeof(*ref));
    int64_t *ts = malloc(op->n_segs * sizeof(*ts));
    int rc = MEM_OK;
    if (!kind || !ref || !ts) {
        rc = mem_err_set(&op->err, MEM_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = insert_validate(st, ns, op, kind, ref, ts)) != MEM_OK) goto out;
    bool any_new = false;
    for (size_t i = 0; i < op->n_segs; i++)
        any_new |= kind[i] == SEG_NEW;
    if (any_new) {
        if (!ns && (rc = ns_create(st, g, op->ns, op->dim, op->now_ms, &ns, &op->err)) != MEM_OK)
            goto out;
        if ((rc = group_touch(g, ns)) != MEM_OK) {
            rc = mem_err_set(&op->err, rc, "out of memory");
            goto out;
        }
    }
    op->created = false;
    if (any_new) {
        size_t n_ins = 0;
        rc = insert_new(st, g, ns, op, kind, ts, &n_ins);
        if (n_ins) {
            op->created = true;
            st->lsn += (int64_t)n_ins;
            g->lsn_dirty = true;
        }
        if (rc != MEM_OK) goto out;
    }
    for (size_t i = 0; i < op->n_segs; i++) {
        mem_store_seg_out_t *o = &op->outs[i];
        if (kind[i] == SEG_STORED) {
            o->seq = MEM_INDEX_ROW(ns->idx, ref[i], seq);
            o->ts_ms = MEM_INDEX_ROW(ns->idx, ref[i], ts_ms);
            o->existed = true;
        } else if (kind[i] == SEG_IN_BATCH) {
            *o = op->outs[ref[i]];
            o->existed = true;
        }
    }
out:
    free(kind);
    free(ref);
    free(ts);
    return rc;
}

/* ---- delete and compact ---- */

/* Take an active or inactive row out: unlink, flag, write. */
static int remove_row(mem_store_t *st, mem_store_ns_t *ns, size_t pos, bool purge, mem_err_t *err)
{
    mem_index_t *idx = ns->idx;
    int64_t seq = MEM_INDEX_ROW(idx, pos, seq);
    int rc = MEM_OK;
    pthread_rwlock_wrlock(&ns->lock);
    uint8_t f = MEM_INDEX_ROW(idx, pos, flags);
    if (f == 0)
        rc =
            mem_graph_unlink(idx, pos, st->opts.coherence_threshold, st->opts.ops, touched_row, ns);
    if (rc == MEM_OK)
        mem_index_set_flags(idx, pos, purge ? MEM_ROW_DELETED : (uint8_t)(f | MEM_ROW_ARCHIVED));
    pthread_rwlock_unlock(&ns->lock);
    if (rc != MEM_OK) return mem_err_set(err, rc, "out of memory");
    sqlite3_stmt *s = st->stmts[purge ? STMT_SEG_DELETE : STMT_SEG_ARCHIVE];
    sqlite3_bind_int64(s, 1, ns->ns_id);
    sqlite3_bind_int64(s, 2, seq);
    return step_done(st, s, purge ? "delete segment" : "archive segment", err);
}

static int op_delete(mem_store_t *st, group_t *g, mem_store_op_t *op)
{
    mem_store_ns_t *ns = mem_store__reg_find(st, op->ns);
    if (!ns) return mem_err_set(&op->err, MEM_ENOTFOUND, "namespace not found: %s", op->ns);
    long pos = mem_index_find(ns->idx, op->id, strlen(op->id));
    if (pos < 0) return mem_err_set(&op->err, MEM_ENOTFOUND, "segment not found: %s", op->id);
    int rc = group_touch(g, ns);
    if (rc != MEM_OK) return mem_err_set(&op->err, rc, "out of memory");
    if ((rc = link_pending(st, g, ns, SIZE_MAX, &op->err)) != MEM_OK) return rc;
    if ((rc = remove_row(st, ns, (size_t)pos, true, &op->err)) != MEM_OK) return rc;
    st->lsn++;
    g->lsn_dirty = true;
    return MEM_OK;
}

static int op_compact(mem_store_t *st, group_t *g, mem_store_op_t *op)
{
    mem_store_ns_t *ns = mem_store__reg_find(st, op->ns);
    if (!ns) return mem_err_set(&op->err, MEM_ENOTFOUND, "namespace not found: %s", op->ns);
    int rc = group_touch(g, ns);
    if (rc != MEM_OK) return mem_err_set(&op->err, rc, "out of memory");
    if ((rc = link_pending(st, g, ns, SIZE_MAX, &op->err)) != MEM_OK) return rc;
    op->n_applied = 0;
    /* every evicted row leaves at once: edges found without the lock, applied with it */
    mem_index_t *idx = ns->idx;
    size_t cap = op->n_evict ? op->n_evict : 1, n = 0, m = 0;
    size_t *rows = malloc(cap * sizeof(*rows));
    int64_t *seqs = malloc(cap * sizeof(*seqs));
    if (!rows || !seqs) {
        free(rows);
        free(seqs);
        return mem_err_set(&op->err, MEM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < op->n_evict; i++) {
        const char *id = op->evict_ids[i];
        long pos = mem_index_find(idx, id, strlen(id));
        if (pos < 0 || MEM_INDEX_ROW(idx, (size_t)pos, flags) != 0)
            continue; /* gone or no longer active since the plan */
        rows[n++] = (size_t)pos;
    }
    mem_graph_delta_t d;
    rc = mem_graph_unlink_find(idx, rows, n, st->opts.coherence_threshold, st->opts.ops, &d);
    if (rc == MEM_OK) {
        pthread_rwlock_wrlock(&ns->lock);
        rc = mem_graph_apply(idx, &d, touched_row, ns);
        for (size_t i = 0; rc == MEM_OK && i < n; i++) {
            uint8_t f = MEM_INDEX_ROW(idx, rows[i], flags);
            if (f != 0) continue; /* listed twice */
            seqs[m++] = MEM_INDEX_ROW(idx, rows[i], seq);
            mem_index_set_flags(idx, rows[i],
                                op->purge ? MEM_ROW_DELETED : (uint8_t)(f | MEM_ROW_ARCHIVED));
        }
        pthread_rwlock_unlock(&ns->lock);
        mem_graph_delta_free(&d);
    }
    free(rows);
    if (rc != MEM_OK) {
        free(seqs);
        return mem_err_set(&op->err, rc, "out of memory");
    }
    for (size_t i = 0; i < m && rc == MEM_OK; i++) {
        sqlite3_stmt *s = st->stmts[op->purge ? STMT_SEG_DELETE : STMT_SEG_ARCHIVE];
        sqlite3_bind_int64(s, 1, ns->ns_id);
        sqlite3_bind_int64(s, 2, seqs[i]);
        rc = step_done(st, s, op->purge ? "delete segment" : "archive segment", &op->err);
    }
    free(seqs);
    if (rc != MEM_OK) return rc;
    op->n_applied = m;
    if (op->n_applied) {
        st->lsn++;
        g->lsn_dirty = true;
    }
    return MEM_OK;
}

static int exec_op(mem_store_t *st, group_t *g, mem_store_op_t *op)
{
    switch (op->kind) {
    case MEM_STORE_OP_NS_CREATE:
        return op_ns_create(st, g, op);
    case MEM_STORE_OP_NS_DROP:
        return op_ns_drop(st, g, op);
    case MEM_STORE_OP_INSERT:
        return op_insert(st, g, op);
    case MEM_STORE_OP_DELETE:
        return op_delete(st, g, op);
    case MEM_STORE_OP_COMPACT:
        return op_compact(st, g, op);
    case MEM_STORE_OP_NS_IMPORT:
        return op_ns_import(st, g, op);
    case MEM_STORE_OP_NS_FORGET:
        return op_ns_forget(st, g, op);
    }
    return mem_err_set(&op->err, MEM_EINVAL, "unknown op kind %d", (int)op->kind);
}

/* ---- the group commit ---- */

static int group_finish_sql(mem_store_t *st, group_t *g, mem_err_t *err)
{
    int rc = MEM_OK;
    for (size_t i = 0; i < g->n && rc == MEM_OK; i++) {
        mem_store_ns_t *ns = g->ns[i];
        if (ns->dropped) continue;
        if ((rc = link_pending(st, g, ns, SIZE_MAX, err)) != MEM_OK) break;
        if ((rc = flush_degrees(st, ns, err)) != MEM_OK) break;
        if (ns->meta_dirty) {
            sqlite3_stmt *s = st->stmts[STMT_NS_UPDATE];
            sqlite3_bind_int64(s, 1, ns->last_seq);
            if (ns->last_ts_ms == INT64_MIN)
                sqlite3_bind_null(s, 2);
            else
                sqlite3_bind_int64(s, 2, ns->last_ts_ms);
            sqlite3_bind_int64(s, 3, (int64_t)__atomic_load_n(&ns->idx->clock, __ATOMIC_RELAXED));
            sqlite3_bind_int64(s, 4, ns->ns_id);
            rc = step_done(st, s, "update namespace", err);
        }
    }
    if (rc == MEM_OK && g->lsn_dirty) {
        sqlite3_stmt *s = st->stmts[STMT_META_LSN];
        sqlite3_bind_int64(s, 1, st->lsn);
        rc = step_done(st, s, "update lsn", err);
    }
    return rc;
}

/* After a failed group: make memory equal SQLite again for every touched namespace. */
static void reload_touched(mem_store_t *st, group_t *g)
{
    for (size_t i = 0; i < g->n; i++) {
        const char *name = g->ns[i]->name;
        bool again = false;
        for (size_t k = 0; k < i && !again; k++)
            again = strcmp(g->ns[k]->name, name) == 0;
        if (again) continue;
        mem_store_ns_t *fresh = NULL;
        mem_err_t e;
        if (mem_store__load_ns(st, st->db, name, &fresh, &e) != MEM_OK) {
            fprintf(stderr, "level=error msg=\"reload after rollback failed\" ns=%s err=\"%s\"\n",
                    name, e.msg);
            continue;
        }
        mem_store_ns_t *cur = mem_store__reg_find(st, name);
        if (cur) {
            cur->dropped = true;
            pthread_mutex_lock(&cur->acc_mu);
            cur->n_dirty = 0;
            pthread_mutex_unlock(&cur->acc_mu);
            mem_store__reg_remove(st, cur);
        }
        if (fresh && mem_store__reg_add(st, fresh) != MEM_OK) mem_store__ns_release(fresh);
    }
}

#define VACUUM_MIN_HOLES 1024

/* After publish, outside any group: drop the namespace's holes when there are many. */
static void maybe_vacuum(mem_store_ns_t *ns)
{
    mem_index_t *old = ns->idx; /* only this thread changes its structure */
    size_t limit = old->n_rows / 4 > VACUUM_MIN_HOLES ? old->n_rows / 4 : VACUUM_MIN_HOLES;
    if (old->n_deleted <= limit || old->n_visible != old->n_rows || ns->n_touched || ns->in_group)
        return;
    mem_index_t *vac = NULL;
    if (mem_index_vacuum(old, &vac) != MEM_OK) return; /* ENOMEM: try after a later group */
    pthread_rwlock_wrlock(&ns->lock);
    pthread_mutex_lock(&ns->acc_mu);
    mem_index_vacuum_sync_access(vac, old);
    size_t k = 0;
    for (size_t i = 0; i < ns->n_dirty; i++) {
        size_t pos = ns->dirty[i];
        const char *id = pos < old->n_rows ? mem_index_id(old, pos) : NULL;
        long np = id ? mem_index_find(vac, id, strlen(id)) : -1;
        if (np >= 0) ns->dirty[k++] = (size_t)np;
    }
    ns->n_dirty = k;
    ns->idx = vac;
    pthread_mutex_unlock(&ns->acc_mu);
    pthread_rwlock_unlock(&ns->lock);
    mem_index_free(old);
}

static void run_group(mem_store_t *st, mem_store_op_t *head, size_t n_ops)
{
    group_t g = {.lsn0 = st->lsn};
    mem_err_t fatal;
    int fatal_rc = MEM_OK;
    mem_err_clear(&fatal);
    int rc = mem_store__exec(st->db, "BEGIN IMMEDIATE", &fatal);
    if (rc != MEM_OK) fatal_rc = rc;
    mem_store_op_t *op;
    for (op = head; op && fatal_rc == MEM_OK; op = op->_next) {
        if ((rc = step_done(st, st->stmts[STMT_SAVEPOINT], "savepoint", &op->err)) == MEM_OK) {
            /* cluster log record (applied.c): skip when applied, refuse a gap */
            int lg = op->log_stream ? mem_store__log_check(st, op) : 0;
            rc = lg == 0 ? exec_op(st, &g, op) : (lg == 1 ? MEM_OK : lg);
            op->rc = rc;
            if (rc == MEM_OK || !is_storage_error(rc)) {
                if (rc != MEM_OK) /* validation writes nothing; this is belt and braces */
                    step_done(st, st->stmts[STMT_ROLLBACK_TO], "rollback to", NULL);
                int rc2 = lg == 0 && op->log_stream ? mem_store__log_write(st, op, &fatal) : MEM_OK;
                if (rc2 == MEM_OK) rc2 = step_done(st, st->stmts[STMT_RELEASE], "release", &fatal);
                if (rc2 != MEM_OK)
                    rc = rc2;
                else
                    continue;
            }
        }
        fatal_rc = rc;
        if (op->err.code == rc) fatal = op->err;
    }
    if (fatal_rc == MEM_OK && (rc = group_finish_sql(st, &g, &fatal)) != MEM_OK) fatal_rc = rc;
    if (fatal_rc == MEM_OK) {
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
            st->m.commit_seconds_sum += dt;
            for (int b = 0; b < 8; b++)
                if (dt <= bounds[b]) st->m.commit_buckets[b]++;
            pthread_mutex_unlock(&st->q_mu);
        }
    }
    if (fatal_rc != MEM_OK) {
        if (!sqlite3_get_autocommit(st->db)) sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        st->lsn = g.lsn0;
        for (size_t i = 0; i < g.n; i++)
            group_reset_ns(g.ns[i]);
        reload_touched(st, &g);
        mem_store__log_reload(st); /* cluster log positions as committed */
        for (op = head; op; op = op->_next)
            if (op->rc == MEM_OK || is_storage_error(op->rc) || op->err.code == 0) {
                op->rc = fatal_rc;
                op->err = fatal;
                op->created = false;
                op->n_applied = 0;
            }
    } else {
        for (size_t i = 0; i < g.n; i++) {
            mem_store_ns_t *ns = g.ns[i];
            if (!ns->dropped) {
                pthread_rwlock_wrlock(&ns->lock);
                mem_store__ns_publish(ns);
                pthread_rwlock_unlock(&ns->lock);
            }
            group_reset_ns(ns);
            if (!ns->dropped) maybe_vacuum(ns);
        }
    }
    for (size_t i = 0; i < g.n; i++)
        mem_store__ns_release(g.ns[i]);
    free(g.ns);
    free(g.pend);
    pthread_mutex_lock(&st->q_mu);
    st->m.ops += n_ops;
    pthread_mutex_unlock(&st->q_mu);
    for (op = head; op;) {
        mem_store_op_t *next = op->_next; /* op may be reused by its callback */
        if (op->_done) op->_done(op, op->_ud);
        op = next;
    }
}

/* ---- access statistics ---- */

static int flush_ns_access(mem_store_t *st, mem_store_ns_t *ns, mem_err_t *err)
{
    pthread_mutex_lock(&ns->acc_mu);
    size_t *dirty = ns->dirty, n = ns->n_dirty;
    ns->dirty = NULL;
    ns->n_dirty = ns->cap_dirty = 0;
    pthread_mutex_unlock(&ns->acc_mu);
    if (!n) {
        free(dirty);
        return MEM_OK;
    }
    int rc = MEM_OK;
    mem_index_t *idx = ns->idx; /* only this thread changes its structure */
    qsort(dirty, n, sizeof(size_t), cmp_size);
    for (size_t i = 0; i < n && rc == MEM_OK; i++) {
        size_t pos = dirty[i];
        if ((i && pos == dirty[i - 1]) || pos >= idx->n_rows ||
            (MEM_INDEX_ROW(idx, pos, flags) & MEM_ROW_DELETED))
            continue;
        sqlite3_stmt *s = st->stmts[STMT_SEG_ACCESS];
        sqlite3_bind_int64(
            s, 1, __atomic_load_n(&MEM_INDEX_ROW(idx, pos, access_count), __ATOMIC_RELAXED));
        sqlite3_bind_int64(
            s, 2, (int64_t)__atomic_load_n(&MEM_INDEX_ROW(idx, pos, tick), __ATOMIC_RELAXED));
        sqlite3_bind_int64(s, 3, ns->ns_id);
        sqlite3_bind_int64(s, 4, MEM_INDEX_ROW(idx, pos, seq));
        rc = step_done(st, s, "write access statistics", err);
    }
    free(dirty);
    if (rc == MEM_OK) { /* read after the ticks, so clock >= every tick written */
        sqlite3_stmt *s = st->stmts[STMT_NS_CLOCK];
        sqlite3_bind_int64(s, 1, (int64_t)__atomic_load_n(&idx->clock, __ATOMIC_RELAXED));
        sqlite3_bind_int64(s, 2, ns->ns_id);
        rc = step_done(st, s, "write clock", err);
    }
    return rc;
}

static void flush_access(mem_store_t *st)
{
    pthread_rwlock_rdlock(&st->reg_lock);
    size_t n = st->n_nss, k = 0;
    mem_store_ns_t **held = malloc((n ? n : 1) * sizeof(*held));
    for (size_t i = 0; held && i < n; i++) {
        mem_store_ns_t *ns = st->nss[i];
        pthread_mutex_lock(&ns->acc_mu);
        bool dirty = ns->n_dirty > 0;
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
        rc = flush_ns_access(st, held[i], &err);
    if (rc == MEM_OK) rc = mem_store__exec(st->db, "COMMIT", &err);
    if (rc != MEM_OK) {
        /* Counters stay exact in memory; only their persistence is delayed or lost. */
        if (!sqlite3_get_autocommit(st->db)) sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    }
    for (size_t i = 0; i < k; i++)
        mem_store__ns_release(held[i]);
    free(held);
}

/* ---- the thread ---- */

static void apply_page_limit(mem_store_t *st)
{
    uint32_t want = __atomic_load_n(&st->max_page_count, __ATOMIC_ACQUIRE);
    if (want == st->applied_page_count) return;
    char sql[64];
    snprintf(sql, sizeof(sql), "PRAGMA max_page_count=%lu",
             want ? (unsigned long)want : 4294967294ul);
    sqlite3_exec(st->db, sql, NULL, NULL, NULL);
    st->applied_page_count = want;
}

static void *writer_main(void *arg)
{
    mem_store_t *st = arg;
    double last_flush = mono_s();
    for (;;) {
        pthread_mutex_lock(&st->q_mu);
        while (!st->q_head && !st->stop && st->sync_req == st->sync_done &&
               __atomic_load_n(&st->max_page_count, __ATOMIC_RELAXED) == st->applied_page_count) {
            struct timespec dl;
            clock_gettime(CLOCK_REALTIME, &dl);
            dl.tv_sec += MEM_STORE__FLUSH_MS / 1000;
            if (pthread_cond_timedwait(&st->q_cv, &st->q_mu, &dl) == ETIMEDOUT) break;
        }
        mem_store_op_t *head = st->q_head;
        size_t n_ops = st->q_len;
        st->q_head = st->q_tail = NULL;
        st->q_len = 0;
        bool stopping = st->stop;
        uint64_t want_sync = st->sync_req;
        pthread_mutex_unlock(&st->q_mu);

        apply_page_limit(st);
        if (head) run_group(st, head, n_ops);
        double now = mono_s();
        if (stopping || want_sync != st->sync_done ||
            now - last_flush >= MEM_STORE__FLUSH_MS / 1e3) {
            flush_access(st);
            last_flush = now;
        }
        pthread_mutex_lock(&st->q_mu);
        st->n_completed += n_ops;
        st->sync_done = want_sync;
        pthread_cond_broadcast(&st->done_cv);
        bool done = stopping && !st->q_head;
        pthread_mutex_unlock(&st->q_mu);
        if (done) break;
    }
    return NULL;
}

int mem_store__writer_start(mem_store_t *st, mem_err_t *err)
{
    st->applied_page_count = 0;
    apply_page_limit(st);
    if (pthread_create(&st->writer, NULL, writer_main, st) != 0)
        return mem_err_set(err, MEM_ESTORAGE, "cannot start the writer thread");
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
    pthread_cond_signal(&st->q_cv);
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
