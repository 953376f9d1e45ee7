/* writer.c - the single writer: validate, write, group-commit, publish
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. One thread owns the read-write connection. It takes every queued op at once and
 * runs them inside one transaction (a SAVEPOINT per op), so concurrent inserts share one
 * fsync. Each op is validated completely against the in-memory state before anything is
 * changed, so a client error (bad timestamp, duplicate id...) leaves nothing to undo and
 * fails only that op. Memory is changed under the namespace's exclusive lock as the op
 * runs; new rows stay invisible to scans (n_visible) until COMMIT succeeds. Rows whose
 * coherence degree moved are collected per namespace and written once at the end of the
 * group, so SQLite always holds the degrees that match its rows. A storage error (disk
 * full, I/O) rolls the whole group back, reloads the touched namespaces from SQLite and
 * fails every op that had not already failed on its own.
 *
 * Access statistics (count, tick, clock) are bumped by readers with atomics and written
 * here in the background, at most MEM_STORE__FLUSH_MS late: a crash may lose the last
 * second of counters, never a segment.
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
    return MEM_OK;
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
        g->cap = cap;
    }
    __atomic_add_fetch(&ns->refs, 1, __ATOMIC_ACQ_REL);
    ns->in_group = true;
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

static int insert_one(mem_store_t *st, mem_store_ns_t *ns, const mem_store_seg_in_t *in, int64_t ts,
                      mem_store_seg_out_t *out, mem_err_t *err)
{
    mem_index_t *idx = ns->idx;
    size_t id_len = strlen(in->id), pos;
    int64_t seq = ns->last_seq + 1;
    int rc = MEM_OK;

    pthread_rwlock_wrlock(&ns->lock);
    int src = mem_index_source_intern(idx, in->source, in->source_len);
    if (src < 0)
        rc = src;
    else
        rc = mem_index_append(idx, in->id, id_len, ts, seq, in->vec, (uint16_t)src, 0, &pos);
    if (rc == MEM_OK)
        rc = mem_graph_link(idx, pos, st->opts.coherence_threshold, st->opts.ops, touched_row, ns);
    pthread_rwlock_unlock(&ns->lock);
    if (rc != MEM_OK)
        return mem_err_set(err, rc == MEM_ELIMIT ? MEM_ENOMEM : rc,
                           rc == MEM_ELIMIT ? "source: too many distinct sources"
                                            : "out of memory");
    ns->last_seq = seq;
    ns->last_ts_ms = ts;
    ns->meta_dirty = true;

    size_t blob_len = 0;
    char *blob = NULL;
    if (in->n_supersedes && !(blob = ids_blob(in->supersedes, in->n_supersedes, &blob_len)))
        return mem_err_set(err, MEM_ENOMEM, "out of memory");
    sqlite3_stmt *s = st->stmts[STMT_SEG_INSERT];
    sqlite3_bind_int64(s, 1, ns->ns_id);
    sqlite3_bind_int64(s, 2, seq);
    sqlite3_bind_text(s, 3, in->id, (int)id_len, SQLITE_STATIC);
    sqlite3_bind_int64(s, 4, ts);
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
    rc = step_done(st, s, "insert segment", err);
    free(blob);
    if (rc != MEM_OK) return rc;

    for (size_t k = 0; k < in->n_supersedes; k++) {
        const char *target = in->supersedes[k];
        long tpos = mem_index_find(idx, target, strlen(target));
        if (tpos < 0) return mem_err_set(err, MEM_ESTORAGE, "supersedes: %s vanished", target);
        pthread_rwlock_wrlock(&ns->lock);
        uint8_t f = MEM_INDEX_ROW(idx, (size_t)tpos, flags);
        if (f == 0)
            rc = mem_graph_unlink(idx, (size_t)tpos, st->opts.coherence_threshold, st->opts.ops,
                                  touched_row, ns);
        if (rc == MEM_OK) mem_index_set_flags(idx, (size_t)tpos, f | MEM_ROW_SUPERSEDED);
        pthread_rwlock_unlock(&ns->lock);
        if (rc != MEM_OK) return mem_err_set(err, rc, "out of memory");
        s = st->stmts[STMT_SEG_SUPERSEDE];
        sqlite3_bind_text(s, 1, in->id, (int)id_len, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, ns->ns_id);
        sqlite3_bind_int64(s, 3, MEM_INDEX_ROW(idx, (size_t)tpos, seq));
        if ((rc = step_done(st, s, "supersede", err)) != MEM_OK) return rc;
    }
    out->seq = seq;
    out->ts_ms = ts;
    out->existed = false;
    return MEM_OK;
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
    for (size_t i = 0; i < op->n_segs; i++) {
        mem_store_seg_out_t *o = &op->outs[i];
        if (kind[i] == SEG_STORED) {
            o->seq = MEM_INDEX_ROW(ns->idx, ref[i], seq);
            o->ts_ms = MEM_INDEX_ROW(ns->idx, ref[i], ts_ms);
            o->existed = true;
        } else if (kind[i] == SEG_IN_BATCH) {
            *o = op->outs[ref[i]];
            o->existed = true;
        } else {
            if ((rc = insert_one(st, ns, &op->segs[i], ts[i], o, &op->err)) != MEM_OK) goto out;
            op->created = true;
            st->lsn++;
            g->lsn_dirty = true;
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
    op->n_applied = 0;
    for (size_t i = 0; i < op->n_evict; i++) {
        const char *id = op->evict_ids[i];
        long pos = mem_index_find(ns->idx, id, strlen(id));
        if (pos < 0 || MEM_INDEX_ROW(ns->idx, (size_t)pos, flags) != 0)
            continue; /* gone or no longer active since the plan */
        if ((rc = remove_row(st, ns, (size_t)pos, op->purge, &op->err)) != MEM_OK) return rc;
        op->n_applied++;
    }
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
            rc = exec_op(st, &g, op);
            op->rc = rc;
            if (rc == MEM_OK || !is_storage_error(rc)) {
                if (rc != MEM_OK) /* validation writes nothing; this is belt and braces */
                    step_done(st, st->stmts[STMT_ROLLBACK_TO], "rollback to", NULL);
                int rc2 = step_done(st, st->stmts[STMT_RELEASE], "release", &fatal);
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
        }
    }
    for (size_t i = 0; i < g.n; i++)
        mem_store__ns_release(g.ns[i]);
    free(g.ns);
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
