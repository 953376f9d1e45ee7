/* supersede.c - who supersedes whom: recorded at insert, released when a superseder goes
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Each supersession is a row (target_seq, by_seq) of the table supersessions, written
 * with the superseding insert. A target's superseded_by names its latest superseder. When a
 * superseder is deleted (DELETE, or a compaction's purge), its pairs go with it and each of
 * its targets takes the latest superseder it has left; one that has none is superseded no
 * more: superseded_by is cleared and the row is retrievable again (and rejoins the coherence
 * graph when it is active). So a target never names a row that no longer exists, nor a later
 * row that happens to re-use the deleted one's id. When a target is deleted, its superseders
 * forget its id (their supersedes lists drop it), so a stored list names only rows that exist
 * and were superseded by it: an export of them imports again.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "storage/writer_int.h"

int mem_store__supersede_record(mem_store__writer_t *w, mem_store_ns_t *ns, const char *by_id,
                                int64_t by_seq, int64_t target_seq, mem_err_t *err)
{
    mem_store_t *st = w->st;
    sqlite3_stmt *s = st->stmts[STMT_SEG_SUPERSEDE];
    sqlite3_bind_text(s, 1, by_id, (int)strlen(by_id), SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, ns->ns_id);
    sqlite3_bind_int64(s, 3, target_seq);
    int rc = mem_store__step_done(st, s, "supersede", err);
    if (rc != MEM_OK) return rc;
    s = st->stmts[STMT_SUP_INSERT];
    sqlite3_bind_int64(s, 1, ns->ns_id);
    sqlite3_bind_int64(s, 2, target_seq);
    sqlite3_bind_int64(s, 3, by_seq);
    return mem_store__step_done(st, s, "supersede", err);
}

/* Bind (ns_id, seq) to s and run it to completion. */
static int run2(mem_store_t *st, int stmt, int64_t ns_id, int64_t seq, mem_err_t *err)
{
    sqlite3_stmt *s = st->stmts[stmt];
    sqlite3_bind_int64(s, 1, ns_id);
    sqlite3_bind_int64(s, 2, seq);
    return mem_store__step_done(st, s, "release supersession", err);
}

/* Append to *t (grown as needed) the seqs the pairs statement stmt (STMT_SUP_TARGETS: the
 * targets of a superseder; STMT_SUP_BY: the superseders of a target) gives for seq. */
static int pairs_of(mem_store_t *st, int stmt, int64_t ns_id, int64_t seq, int64_t **t, size_t *n,
                    size_t *cap, mem_err_t *err)
{
    sqlite3_stmt *s = st->stmts[stmt];
    sqlite3_bind_int64(s, 1, ns_id);
    sqlite3_bind_int64(s, 2, seq);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (*n == *cap) {
            size_t c = *cap ? *cap * 2 : 16;
            int64_t *a = realloc(*t, c * sizeof(*a));
            if (!a) {
                sqlite3_reset(s);
                return mem_err_set(err, MEM_ENOMEM, "out of memory");
            }
            *t = a;
            *cap = c;
        }
        (*t)[(*n)++] = sqlite3_column_int64(s, 0);
    }
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? MEM_OK
                             : mem_store__err_sqlite(err, st->db, rc, "read supersessions");
}

/* The supersedes blob of row seq without the id (every copy of it): rewritten when it named
 * it. */
static int drop_from_blob(mem_store_t *st, int64_t ns_id, int64_t seq, const char *id,
                          mem_err_t *err)
{
    sqlite3_stmt *q = st->stmts[STMT_SEG_SUPS_GET];
    sqlite3_bind_int64(q, 1, ns_id);
    sqlite3_bind_int64(q, 2, seq);
    int rc = sqlite3_step(q);
    if (rc != SQLITE_ROW) {
        sqlite3_reset(q);
        return rc == SQLITE_DONE ? MEM_OK
                                 : mem_store__err_sqlite(err, st->db, rc, "read supersedes");
    }
    const char *blob = sqlite3_column_blob(q, 0);
    size_t len = (size_t)sqlite3_column_bytes(q, 0), id_len = strlen(id) + 1, n = 0;
    char *kept = malloc(len ? len : 1);
    if (!kept) {
        sqlite3_reset(q);
        return mem_err_set(err, MEM_ENOMEM, "out of memory");
    }
    for (size_t off = 0; off < len;) {
        const char *e = memchr(blob + off, '\0', len - off);
        size_t l = e ? (size_t)(e - (blob + off)) + 1 : len - off; /* a last id without its NUL */
        if (l != id_len || memcmp(blob + off, id, l) != 0) {
            memcpy(kept + n, blob + off, l);
            n += l;
        }
        off += l;
    }
    sqlite3_reset(q);
    rc = MEM_OK;
    if (n != len) {
        sqlite3_stmt *s = st->stmts[STMT_SEG_SUPS_SET];
        if (n)
            sqlite3_bind_blob(s, 1, kept, (int)n, SQLITE_STATIC);
        else
            sqlite3_bind_null(s, 1);
        sqlite3_bind_int64(s, 2, ns_id);
        sqlite3_bind_int64(s, 3, seq);
        rc = mem_store__step_done(st, s, "forget superseded id", err);
    }
    free(kept);
    return rc;
}

int mem_store__supersede_forget(mem_store__writer_t *w, mem_store_ns_t *ns, int64_t target_seq,
                                const char *id, mem_err_t *err)
{
    mem_store_t *st = w->st;
    int64_t *by = NULL;
    size_t n = 0, cap = 0;
    int rc = pairs_of(st, STMT_SUP_BY, ns->ns_id, target_seq, &by, &n, &cap, err);
    for (size_t i = 0; i < n && rc == MEM_OK; i++)
        rc = drop_from_blob(st, ns->ns_id, by[i], id, err);
    free(by);
    return rc;
}

/* Name the target's latest remaining superseder, or none: *released tells which. */
static int rename_target(mem_store_t *st, int64_t ns_id, int64_t target, bool *released,
                         mem_err_t *err)
{
    sqlite3_stmt *q = st->stmts[STMT_SUP_LATEST];
    sqlite3_bind_int64(q, 1, ns_id);
    sqlite3_bind_int64(q, 2, target);
    int rc = sqlite3_step(q);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        sqlite3_reset(q);
        return mem_store__err_sqlite(err, st->db, rc, "read supersessions");
    }
    sqlite3_stmt *s = st->stmts[STMT_SEG_SUPERSEDE];
    if (rc == SQLITE_ROW)
        sqlite3_bind_text(s, 1, (const char *)sqlite3_column_text(q, 0), sqlite3_column_bytes(q, 0),
                          SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, 1);
    *released = rc == SQLITE_DONE;
    sqlite3_reset(q);
    sqlite3_bind_int64(s, 2, ns_id);
    sqlite3_bind_int64(s, 3, target);
    return mem_store__step_done(st, s, "release supersession", err);
}

int mem_store__supersede_release(mem_store__writer_t *w, mem_store_ns_t *ns, const int64_t *gone,
                                 size_t n_gone, mem_err_t *err)
{
    mem_store_t *st = w->st;
    int64_t *targets = NULL;
    size_t n_t = 0, cap = 0;
    int rc = MEM_OK;
    for (size_t i = 0; i < n_gone && rc == MEM_OK; i++) {
        if ((rc = run2(st, STMT_SUP_DEL_TARGET, ns->ns_id, gone[i], err)) == MEM_OK &&
            (rc = pairs_of(st, STMT_SUP_TARGETS, ns->ns_id, gone[i], &targets, &n_t, &cap, err)) ==
                MEM_OK)
            rc = run2(st, STMT_SUP_DEL_BY, ns->ns_id, gone[i], err);
    }
    /* The targets that have no superseder left rejoin (their rows, by position). */
    const mem_index_t *view = mem_store__writer_view(w, ns);
    size_t *rows = n_t ? malloc(n_t * sizeof(*rows)) : NULL, n_rows = 0;
    if (n_t && !rows && rc == MEM_OK) rc = mem_err_set(err, MEM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n_t && rc == MEM_OK; i++) {
        long pos = mem_index_find_seq(view, targets[i]);
        if (pos < 0 || (mem_index_flags(view, (size_t)pos) & MEM_ROW_DELETED))
            continue; /* gone too (the same purge) */
        bool released = false;
        if ((rc = rename_target(st, ns->ns_id, targets[i], &released, err)) == MEM_OK && released)
            rows[n_rows++] = (size_t)pos;
    }
    if (rc == MEM_OK && n_rows)
        rc = mem_store__rejoin(w, ns, rows, n_rows, MEM_ROW_SUPERSEDED, err);
    free(rows);
    free(targets);
    return rc;
}
