/* export.c - every stored segment of a namespace, in seq order, from one snapshot
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. An export holds a read-only connection of its own (taken from the pool) with one
 * read transaction open for its whole life: WAL gives that transaction one snapshot, so
 * writes committed meanwhile are not in it, and nothing is buffered (rows are stepped one at
 * a time). The connection is used by one thread at a time, but not always the same one
 * (each chunk of an export may run on another pool thread): SQLite allows that for a
 * connection opened without a mutex as long as calls never overlap.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "storage/store_int.h"

struct mem_store_export {
    mem_store_t *st;
    mem_store_rconn_t *c;
    sqlite3_stmt *s;
    size_t dim;
    bool done;
    bool has_embedder;
    char embedder[MEM_STORE_EMBEDDER_MAX + 1]; /* recorded in the same snapshot */
};

/* The snapshot starts at this first read, so the embedder and the rows agree. */
static int read_embedder(mem_store_export_t *x, int64_t ns_id, mem_err_t *err)
{
    sqlite3_stmt *s = NULL;
    int src =
        sqlite3_prepare_v2(x->c->db, "SELECT embedder FROM namespaces WHERE id = ?", -1, &s, NULL);
    if (src == SQLITE_OK) {
        sqlite3_bind_int64(s, 1, ns_id);
        src = sqlite3_step(s);
        const char *e = src == SQLITE_ROW ? (const char *)sqlite3_column_text(s, 0) : NULL;
        if (e && e[0] && strlen(e) <= MEM_STORE_EMBEDDER_MAX) {
            memcpy(x->embedder, e, strlen(e) + 1);
            x->has_embedder = true;
        }
        if (src == SQLITE_ROW || src == SQLITE_DONE) src = SQLITE_OK;
    }
    int rc = src == SQLITE_OK ? MEM_OK : mem_store__err_sqlite(err, x->c->db, src, "export");
    sqlite3_finalize(s);
    return rc;
}

int mem_store_export_open(mem_store_t *st, const char *ns_name, mem_store_export_t **out,
                          mem_err_t *err)
{
    mem_store_ns_t *ns = mem_store__ns_acquire(st, ns_name);
    if (!ns) return mem_store__ns_missing(st, ns_name, err);
    int64_t ns_id = ns->ns_id;
    size_t dim = ns->dim;
    mem_store__ns_release(ns);
    mem_store_export_t *x = calloc(1, sizeof(*x));
    if (!x) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    x->st = st;
    x->dim = dim;
    int rc = mem_store__rconn_acquire(st, &x->c, err);
    if (rc != MEM_OK) {
        free(x);
        return rc;
    }
    int src = sqlite3_exec(x->c->db, "BEGIN", NULL, NULL, NULL);
    if (src == SQLITE_OK && (rc = read_embedder(x, ns_id, err)) != MEM_OK) {
        mem_store_export_close(x);
        return rc;
    }
    if (src == SQLITE_OK)
        src = sqlite3_prepare_v2(x->c->db,
                                 "SELECT " MEM_STORE__SEGMENT_COLS
                                 " FROM segments WHERE ns_id = ? ORDER BY seq",
                                 -1, &x->s, NULL);
    if (src != SQLITE_OK) {
        rc = mem_store__err_sqlite(err, x->c->db, src, "export");
        mem_store_export_close(x);
        return rc;
    }
    sqlite3_bind_int64(x->s, 1, ns_id);
    *out = x;
    return MEM_OK;
}

int mem_store_export_next(mem_store_export_t *x, mem_store_segment_t **seg, mem_err_t *err)
{
    if (x->done) return 0;
    int src = sqlite3_step(x->s);
    if (src == SQLITE_DONE) {
        x->done = true;
        return 0;
    }
    if (src != SQLITE_ROW) return mem_store__err_sqlite(err, x->c->db, src, "export");
    int rc = mem_store__segment_read(x->s, x->dim, true, seg, err);
    return rc == MEM_OK ? 1 : rc;
}

size_t mem_store_export_dim(const mem_store_export_t *x)
{
    return x->dim;
}

const char *mem_store_export_embedder(const mem_store_export_t *x)
{
    return x->has_embedder ? x->embedder : NULL;
}

void mem_store_export_close(mem_store_export_t *x)
{
    if (!x) return;
    sqlite3_finalize(x->s);
    if (x->c) {
        sqlite3_exec(x->c->db, "ROLLBACK", NULL, NULL, NULL); /* read only: ends the snapshot */
        mem_store__rconn_release(x->st, x->c);
    }
    free(x);
}
