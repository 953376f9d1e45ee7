/* nssnap.c - one namespace as a file of its own: export on a reader, import on the writer
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Cluster placement moves namespaces between nodes and trims the log below
 * per-namespace snapshots, so a namespace must travel alone. An export is a small SQLite
 * file holding the namespace's row, every row of every table that has an ns_id column
 * (segments today; whatever later tables key on ns_id come along without a change here),
 * and table export(ns, pos): the namespace's chain position (applied.c), read in the same
 * transaction as the rows, so the file is exactly the state after that record. It is built
 * on a connection of its own with the file ATTACHed: the writer is never held.
 *
 * Import runs on the writer inside its group transaction (MEM_STORE_OP_NS_IMPORT,
 * writer.c): the namespace's local rows are deleted, the file's rows inserted with a fresh
 * namespace id (ids are never reused locally), then the namespace is loaded into memory
 * from those rows like at start-up. Columns are copied by name, so a file from a node with
 * another schema fails with a clear error instead of landing in the wrong columns.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "storage/writer_int.h"

#define EXPORT_FORMAT 1

static int fail_sqlite(mem_err_t *err, sqlite3 *db, int rc, const char *what)
{
    return mem_store__err_sqlite(err, db, rc, what);
}

/* Does table t of schema (main/snap) have a column named col? 1 yes, 0 no, or a negative
 * MEM_E* code (out of memory, say: never read as "no", which would skip or refuse a table). */
static int has_column(sqlite3 *db, const char *schema, const char *t, const char *col,
                      mem_err_t *err)
{
    sqlite3_stmt *s = NULL;
    char *sql =
        sqlite3_mprintf("SELECT 1 FROM pragma_table_info(%Q, %Q) WHERE name = %Q", t, schema, col);
    int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &s, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    int yes = rc == SQLITE_ROW    ? 1
              : rc == SQLITE_DONE ? 0
                                  : fail_sqlite(err, db, rc, "read a table's columns");
    sqlite3_finalize(s);
    return yes;
}

/* The names of schema's tables that carry namespace rows: namespaces, then those with an
 * ns_id column. *out: malloc'd array of sqlite3_mprintf'd names. */
static int ns_tables(sqlite3 *db, const char *schema, char ***out, size_t *n, mem_err_t *err)
{
    sqlite3_stmt *s = NULL;
    char *sql = sqlite3_mprintf("SELECT name FROM %w.sqlite_master WHERE type = 'table' AND name"
                                " NOT LIKE 'sqlite_%%' ORDER BY name",
                                schema);
    int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &s, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    if (rc != SQLITE_OK) return fail_sqlite(err, db, rc, "list tables");
    char **names = NULL;
    size_t cnt = 0;
    int out_rc = MEM_OK;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(s, 0);
        int has = t ? 1 : mem_err_set(err, MEM_ENOMEM, "out of memory"); /* names are text */
        if (has > 0 && strcmp(t, "namespaces") != 0) has = has_column(db, schema, t, "ns_id", err);
        if (has < 0) {
            out_rc = has;
            break;
        }
        if (!has) continue;
        char **a = realloc(names, (cnt + 1) * sizeof(*a));
        char *copy = a ? sqlite3_mprintf("%s", t) : NULL;
        if (!a || !copy) {
            if (a) names = a;
            out_rc = mem_err_set(err, MEM_ENOMEM, "out of memory");
            break;
        }
        names = a;
        names[cnt++] = copy;
    }
    if (out_rc == MEM_OK && rc != SQLITE_DONE) out_rc = fail_sqlite(err, db, rc, "list tables");
    sqlite3_finalize(s);
    if (out_rc != MEM_OK) {
        for (size_t i = 0; i < cnt; i++)
            sqlite3_free(names[i]);
        free(names);
        return out_rc;
    }
    *out = names;
    *n = cnt;
    return MEM_OK;
}

static void free_tables(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        sqlite3_free(names[i]);
    free(names);
}

static int exec_fmt(sqlite3 *db, mem_err_t *err, const char *what, char *sql)
{
    if (!sql) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_free(sql);
    return rc == SQLITE_OK ? MEM_OK : fail_sqlite(err, db, rc, what);
}

/* The export file and what SQLite may have left beside it (a failed export leaves none). */
static void remove_export(const char *path)
{
    char p[PATH_MAX + 16];
    const char *suffix[] = {"", "-journal", "-wal", "-shm"};
    for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
        snprintf(p, sizeof(p), "%s%s", path, suffix[i]);
        unlink(p);
    }
}

int mem_store_ns_export(mem_store_t *st, const char *ns, const char *dest_path, uint64_t *pos,
                        uint64_t *bytes, mem_err_t *err)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *s = NULL;
    char **tables = NULL;
    size_t n_tables = 0;
    bool attached = false, in_txn = false, created = false;
    int64_t ns_id = 0;
    uint64_t at = 0;
    int rc;
    if (strlen(dest_path) >= PATH_MAX) {
        rc = mem_err_set(err, MEM_EINVAL, "export: path too long");
        goto out;
    }
    /* the file is ours from here (a failure removes it): never one that was there before */
    int fd = open(dest_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = mem_err_set(err, errno == ENOSPC ? MEM_EFULL : MEM_ESTORAGE,
                         "export: cannot create %s: %s", dest_path, strerror(errno));
        goto out;
    }
    close(fd);
    created = true;
    rc = sqlite3_open_v2(st->path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc != SQLITE_OK) {
        rc = mem_err_set(err, mem_store__code_sqlite(rc), "export: cannot open %s: %s", st->path,
                         db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        goto out;
    }
    sqlite3_busy_timeout(db, 5000);
    if ((rc = exec_fmt(db, err, "attach the export file",
                       sqlite3_mprintf("ATTACH %Q AS snap", dest_path))) != MEM_OK)
        goto out;
    attached = true;
    if ((rc = mem_store__exec(db, "BEGIN", err)) != MEM_OK) goto out;
    in_txn = true;
    /* the first read fixes the snapshot every later read of main sees */
    rc = sqlite3_prepare_v2(db, "SELECT id FROM main.namespaces WHERE name = ?", -1, &s, NULL);
    if (rc != SQLITE_OK) {
        rc = fail_sqlite(err, db, rc, "export");
        goto out;
    }
    sqlite3_bind_text(s, 1, ns, -1, SQLITE_STATIC);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) ns_id = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    s = NULL;
    if (rc != SQLITE_ROW) {
        rc = rc == SQLITE_DONE ? mem_err_set(err, MEM_ENOTFOUND, "namespace not found: %s", ns)
                               : fail_sqlite(err, db, rc, "export");
        goto out;
    }
    rc = sqlite3_prepare_v2(db, "SELECT seq FROM main.applied_ns WHERE ns = ?", -1, &s, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(s, 1, ns, -1, SQLITE_STATIC);
        rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) at = (uint64_t)sqlite3_column_int64(s, 0);
    }
    sqlite3_finalize(s);
    s = NULL;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) { /* a position read as 0 would be wrong */
        rc = fail_sqlite(err, db, rc, "export: read the chain position");
        goto out;
    }
    if ((rc = ns_tables(db, "main", &tables, &n_tables, err)) != MEM_OK) goto out;
    for (size_t i = 0; i < n_tables; i++) {
        const char *key = strcmp(tables[i], "namespaces") == 0 ? "id" : "ns_id";
        if ((rc = exec_fmt(db, err, "export",
                           sqlite3_mprintf("CREATE TABLE snap.%w AS SELECT * FROM main.%w WHERE 0",
                                           tables[i], tables[i]))) != MEM_OK ||
            (rc = exec_fmt(db, err, "export",
                           sqlite3_mprintf("INSERT INTO snap.%w SELECT * FROM main.%w WHERE %w = "
                                           "%lld",
                                           tables[i], tables[i], key, (long long)ns_id))) != MEM_OK)
            goto out;
    }
    if ((rc = exec_fmt(db, err, "export",
                       sqlite3_mprintf("CREATE TABLE snap.export(ns TEXT, pos INTEGER, format "
                                       "INTEGER); INSERT INTO snap.export VALUES(%Q, %lld, %d)",
                                       ns, (long long)at, EXPORT_FORMAT))) != MEM_OK)
        goto out;
    if ((rc = mem_store__exec(db, "COMMIT", err)) != MEM_OK) goto out;
    in_txn = false;
    rc = MEM_OK;
out:
    if (in_txn) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    if (attached) sqlite3_exec(db, "DETACH snap", NULL, NULL, NULL);
    free_tables(tables, n_tables);
    sqlite3_close(db);
    if (rc == MEM_OK) {
        struct stat sb;
        if (stat(dest_path, &sb) == 0) {
            *pos = at;
            *bytes = (uint64_t)sb.st_size;
        } else {
            rc = mem_err_set(err, MEM_ESTORAGE, "export: %s: %s", dest_path, strerror(errno));
        }
    }
    if (rc != MEM_OK && created) remove_export(dest_path);
    return rc;
}

/* Writer, in the group's transaction: every row of namespace id ns_id (each table with an
 * ns_id column, and its namespaces row). */
static int delete_rows(mem_store_t *st, int64_t ns_id, mem_err_t *err)
{
    char **tables = NULL;
    size_t n = 0;
    int rc = ns_tables(st->db, "main", &tables, &n, err);
    for (size_t i = 0; rc == MEM_OK && i < n; i++) {
        const char *key = strcmp(tables[i], "namespaces") == 0 ? "id" : "ns_id";
        rc = exec_fmt(st->db, err, "delete namespace rows",
                      sqlite3_mprintf("DELETE FROM main.%w WHERE %w = %lld", tables[i], key,
                                      (long long)ns_id));
    }
    free_tables(tables, n);
    return rc;
}

/* Copy every row of src's table t into the writer's table t by column name; ns_id (or, for
 * namespaces, nothing: id is left out so a fresh one is assigned) is set to new_id. */
static int copy_table(mem_store_t *st, sqlite3 *src, const char *t, int64_t new_id,
                      int64_t *assigned, mem_err_t *err)
{
    bool is_ns = strcmp(t, "namespaces") == 0;
    sqlite3_stmt *sel = NULL, *ins = NULL;
    char *sql = sqlite3_mprintf("SELECT * FROM main.%w", t);
    int rc = sql ? sqlite3_prepare_v2(src, sql, -1, &sel, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    if (rc != SQLITE_OK) {
        rc = fail_sqlite(err, src, rc, "read the namespace copy");
        goto out;
    }
    int n = sqlite3_column_count(sel);
    char *cols = sqlite3_mprintf(""), *qs = sqlite3_mprintf("");
    int id_col = -1, bound = 0;
    int map[256];
    for (int i = 0; i < n && i < 256 && cols && qs; i++) {
        const char *c = sqlite3_column_name(sel, i);
        if (!c) { /* its name could not be allocated */
            sqlite3_free(cols);
            cols = NULL;
            break;
        }
        if (is_ns && strcmp(c, "id") == 0) continue;
        int has = has_column(st->db, "main", t, c, err);
        if (has <= 0) {
            sqlite3_free(cols);
            sqlite3_free(qs);
            rc = has < 0
                     ? has
                     : mem_err_set(err, MEM_EINVAL,
                                   "namespace copy: column %s.%s is unknown here (another mnemod "
                                   "version?)",
                                   t, c);
            goto out;
        }
        if (strcmp(c, "ns_id") == 0) id_col = i;
        char *c2 = sqlite3_mprintf("%s%s\"%w\"", cols, bound ? "," : "", c);
        char *q2 = sqlite3_mprintf("%s%s?", qs, bound ? "," : "");
        sqlite3_free(cols);
        sqlite3_free(qs);
        cols = c2;
        qs = q2;
        map[bound++] = i;
    }
    if (!cols || !qs || n > 256) {
        sqlite3_free(cols);
        sqlite3_free(qs);
        rc = mem_err_set(err, n > 256 ? MEM_EINVAL : MEM_ENOMEM, "namespace copy: %s",
                         n > 256 ? "too many columns" : "out of memory");
        goto out;
    }
    sql = sqlite3_mprintf("INSERT INTO main.%w(%s) VALUES(%s)", t, cols, qs);
    sqlite3_free(cols);
    sqlite3_free(qs);
    rc = sql ? sqlite3_prepare_v2(st->db, sql, -1, &ins, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    if (rc != SQLITE_OK) {
        rc = fail_sqlite(err, st->db, rc, "prepare the namespace copy");
        goto out;
    }
    size_t rows = 0;
    while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
        if (is_ns && ++rows > 1) {
            rc = mem_err_set(err, MEM_EINVAL, "namespace copy: more than one namespace");
            goto out;
        }
        /* a value that could not be bound (its copy is an allocation) would go in as NULL */
        rc = SQLITE_OK;
        for (int b = 0; b < bound && rc == SQLITE_OK; b++)
            rc = map[b] == id_col
                     ? sqlite3_bind_int64(ins, b + 1, new_id)
                     : sqlite3_bind_value(ins, b + 1, sqlite3_column_value(sel, map[b]));
        if (rc == SQLITE_OK) rc = sqlite3_step(ins);
        sqlite3_reset(ins);
        sqlite3_clear_bindings(ins);
        if (rc != SQLITE_DONE) {
            rc = fail_sqlite(err, st->db, rc, "write the namespace copy");
            goto out;
        }
        if (is_ns && assigned) *assigned = sqlite3_last_insert_rowid(st->db);
    }
    rc = rc == SQLITE_DONE ? MEM_OK : fail_sqlite(err, src, rc, "read the namespace copy");
    if (rc == MEM_OK && is_ns && rows != 1)
        rc = mem_err_set(err, MEM_EINVAL, "namespace copy: no namespace row");
out:
    sqlite3_finalize(sel);
    sqlite3_finalize(ins);
    return rc;
}

/* Why a read of the file at path failed: out of memory (it says nothing about the file, so
 * the import is refused with a 503 to try again), or the file is not what it should be. */
static int not_export(int rc, const char *path, const char *ns, mem_err_t *err)
{
    if ((rc & 0xff) == SQLITE_NOMEM)
        return mem_err_set(err, MEM_ENOMEM, "namespace copy %s: out of memory", path);
    return mem_err_set(err, MEM_EINVAL, "namespace copy %s: not an export of %s", path, ns);
}

/* Is path an export of namespace ns this binary can read? MEM_OK, MEM_EINVAL (nothing is
 * touched: the import is refused as a whole) or MEM_ENOMEM (the file could not be read). */
static int check_export(const char *path, const char *ns, mem_err_t *err)
{
    sqlite3 *src = NULL;
    sqlite3_stmt *s = NULL;
    bool ok = false;
    int rc = sqlite3_open_v2(path, &src, SQLITE_OPEN_READONLY, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(src, "SELECT ns, format FROM export", -1, &s, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(s, 0);
        if (!name && sqlite3_errcode(src) == SQLITE_NOMEM) rc = SQLITE_NOMEM;
        ok = name && sqlite3_column_int(s, 1) == EXPORT_FORMAT && strcmp(name, ns) == 0;
    }
    sqlite3_finalize(s);
    s = NULL;
    if (ok) { /* exactly one namespace row, of that name */
        ok = false;
        rc = sqlite3_prepare_v2(src, "SELECT count(*), min(name) FROM namespaces", -1, &s, NULL);
        if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
            const char *name = (const char *)sqlite3_column_text(s, 1);
            if (!name && sqlite3_errcode(src) == SQLITE_NOMEM) rc = SQLITE_NOMEM;
            ok = name && sqlite3_column_int(s, 0) == 1 && strcmp(name, ns) == 0;
        }
        sqlite3_finalize(s);
    }
    int out = ok ? MEM_OK : not_export(rc, path, ns, err);
    sqlite3_close(src);
    return out;
}

/* Writer, in the group's transaction: the export file's namespace as new rows (a fresh
 * namespace id), table by table, column by column. */
static int copy_in(mem_store_t *st, const char *path, const char *ns, mem_err_t *err)
{
    sqlite3 *src = NULL;
    char **tables = NULL;
    size_t n = 0;
    int rc = sqlite3_open_v2(path, &src, SQLITE_OPEN_READONLY, NULL);
    if (rc != SQLITE_OK) {
        rc = mem_err_set(err, (rc & 0xff) == SQLITE_NOMEM ? MEM_ENOMEM : MEM_EINVAL,
                         "namespace copy %s: %s", path,
                         src ? sqlite3_errmsg(src) : sqlite3_errstr(rc));
        goto out;
    }
    if ((rc = ns_tables(src, "main", &tables, &n, err)) != MEM_OK) goto out;
    int64_t new_id = 0;
    /* namespaces first: the other tables need the new id */
    if ((rc = copy_table(st, src, "namespaces", 0, &new_id, err)) != MEM_OK) goto out;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(tables[i], "namespaces") == 0 || strcmp(tables[i], "export") == 0) continue;
        int has = has_column(st->db, "main", tables[i], "ns_id", err);
        if (has <= 0) {
            rc = has < 0 ? has
                         : mem_err_set(err, MEM_EINVAL, "namespace copy: table %s is unknown here",
                                       tables[i]);
            goto out;
        }
        if ((rc = copy_table(st, src, tables[i], new_id, NULL, err)) != MEM_OK) goto out;
    }
    rc = MEM_OK;
out:
    free_tables(tables, n);
    sqlite3_close(src);
    return rc;
}

int mem_store__op_ns_import(mem_store__writer_t *w, mem_store_op_t *op)
{
    mem_store_t *st = w->st;
    if (!mem_store__name_ok(op->ns) || !op->import_path)
        return mem_err_set(&op->err, MEM_EINVAL, "import: namespace and file required");
    /* Refused as a whole before anything changes (a client error rolls back SQL only). */
    int rc = check_export(op->import_path, op->ns, &op->err);
    if (rc != MEM_OK) return rc;
    /* From here a failure is a storage error: the group rolls back and the writer reloads
     * the touched namespaces (the old copy included) from SQLite. */
    mem_store_ns_t *old = mem_store__reg_find(st, op->ns);
    if (old) {
        if ((rc = mem_store__group_touch(w, old)) != MEM_OK)
            return mem_err_set(&op->err, rc, "out of memory");
        __atomic_store_n(&old->dropped, true, __ATOMIC_RELEASE); /* the linker reads it */
        mem_store__reg_remove(st, old);
        if ((rc = delete_rows(st, old->ns_id, &op->err)) != MEM_OK) return rc;
    }
    mem_store_ns_t *ns = NULL;
    if ((rc = copy_in(st, op->import_path, op->ns, &op->err)) != MEM_OK ||
        (rc = mem_store__load_ns(st, st->db, op->ns, &ns, &op->err)) != MEM_OK || !ns) {
        char why[sizeof(op->err.msg)];
        snprintf(why, sizeof(why), "%s", op->err.msg[0] ? op->err.msg : "no namespace in the copy");
        if (rc == MEM_OK || rc == MEM_EINVAL) rc = MEM_ESTORAGE;
        return mem_err_set(&op->err, rc, "import of %s failed: %s", op->ns, why);
    }
    if ((rc = mem_store__reg_add(st, ns)) != MEM_OK) {
        mem_store__ns_release(ns);
        return mem_err_set(&op->err, MEM_ENOMEM, "out of memory");
    }
    /* the graph work its load found (rows the copy's checkpoint does not cover) goes to the
     * linker, as at start-up: reads that need the graph would wait for it forever otherwise */
    mem_store__graph_adopt(st, ns);
    if ((rc = mem_store__group_touch(w, ns)) != MEM_OK)
        return mem_err_set(&op->err, rc, "out of memory");
    if ((rc = mem_store__log_ns_set(st, op->ns, op->log_seq, &op->err)) != MEM_OK) return rc;
    op->created = true;
    mem_store__lsn_advance(w, 1);
    return MEM_OK;
}

int mem_store__op_ns_forget(mem_store__writer_t *w, mem_store_op_t *op)
{
    mem_store_t *st = w->st;
    int rc;
    mem_store_ns_t *ns = mem_store__reg_find(st, op->ns);
    if (ns) {
        if ((rc = mem_store__group_touch(w, ns)) != MEM_OK)
            return mem_err_set(&op->err, rc, "out of memory");
        if ((rc = delete_rows(st, ns->ns_id, &op->err)) != MEM_OK) return rc;
        __atomic_store_n(&ns->dropped, true, __ATOMIC_RELEASE); /* the linker reads it */
        mem_store__reg_remove(st, ns);
    }
    if ((rc = mem_store__log_ns_forget(st, op->ns, &op->err)) != MEM_OK) return rc;
    mem_store__lsn_advance(w, 1);
    return MEM_OK;
}
