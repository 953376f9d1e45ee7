/* schema.c - schema versions, migrations and the start-up check
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. meta(schema_version) names the version the file is at; migrations[v] takes a file
 * from version v to v + 1 inside one transaction, so adding v2 is one function and one line
 * in the table. A file newer than this binary is refused rather than guessed at.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "storage/store_int.h"

int mem_store__err_sqlite(mem_err_t *err, sqlite3 *db, int rc, const char *what)
{
    int prim = rc & 0xff;
    int code = MEM_ESTORAGE;
    if (prim == SQLITE_FULL)
        code = MEM_EFULL;
    else if (prim == SQLITE_NOMEM)
        code = MEM_ENOMEM;
    else if (prim == SQLITE_CORRUPT || prim == SQLITE_NOTADB)
        code = MEM_ECORRUPT;
    if (code == MEM_EFULL) return mem_err_set(err, code, "storage: disk full (%s)", what);
    return mem_err_set(err, code, "storage: %s: %s", what,
                       db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
}

int mem_store__exec(sqlite3 *db, const char *sql, mem_err_t *err)
{
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK) return mem_store__err_sqlite(err, db, rc, sql);
    return MEM_OK;
}

/* A file SQLite cannot read or make sense of: stop start-up with one clear line. */
static bool unreadable(int rc)
{
    int prim = rc & 0xff;
    return prim == SQLITE_NOTADB || prim == SQLITE_CORRUPT || prim == SQLITE_CANTOPEN ||
           prim == SQLITE_IOERR;
}

/* quick_check: any answer but a single "ok" row means the file cannot be trusted. */
int mem_store__check(sqlite3 *db, mem_err_t *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &st, NULL);
    if (rc != SQLITE_OK) {
        if (unreadable(rc))
            return mem_err_set(err, MEM_ECORRUPT, "database file is unreadable or corrupt: %s",
                               sqlite3_errmsg(db));
        return mem_store__err_sqlite(err, db, rc, "quick_check");
    }
    rc = sqlite3_step(st);
    int out = MEM_OK;
    if (rc == SQLITE_ROW) {
        const char *msg = (const char *)sqlite3_column_text(st, 0);
        if (!msg || strcmp(msg, "ok") != 0) {
            out = mem_err_set(err, MEM_ECORRUPT, "database file failed quick_check: %s",
                              msg ? msg : "(null)");
            /* quick_check lists one problem per line: start-up reports one line */
            for (char *c = err ? err->msg : NULL; c && *c; c++)
                if (*c == '\n' || *c == '\r') *c = ';';
        }
    } else {
        if (unreadable(rc))
            out = mem_err_set(err, MEM_ECORRUPT, "database file is unreadable or corrupt: %s",
                              sqlite3_errmsg(db));
        else
            out = mem_store__err_sqlite(err, db, rc, "quick_check");
    }
    sqlite3_finalize(st);
    return out;
}

static int migrate_v0_v1(sqlite3 *db, mem_err_t *err)
{
    static const char sql[] =
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value);"
        "CREATE TABLE namespaces("
        " id INTEGER PRIMARY KEY AUTOINCREMENT," /* never reused: a reader of a dropped namespace
                                                    never sees its successor */
        " name TEXT NOT NULL UNIQUE,"
        " dim INTEGER NOT NULL,"
        " last_seq INTEGER NOT NULL DEFAULT 0,"
        " last_ts_ms INTEGER," /* NULL until the first insert; never moves back */
        " clock INTEGER NOT NULL DEFAULT 0,"
        " created_ms INTEGER);"
        "CREATE TABLE segments("
        " ns_id INTEGER NOT NULL,"
        " seq INTEGER NOT NULL,"
        " id TEXT NOT NULL,"
        " ts_ms INTEGER NOT NULL,"
        " text TEXT,"
        " source TEXT,"
        " metadata TEXT,"
        " embedding BLOB NOT NULL," /* dim float32, L2-normalised, host order */
        " supersedes BLOB,"         /* the ids, each NUL-terminated; NULL when none */
        " superseded_by TEXT,"
        " archived INTEGER NOT NULL DEFAULT 0,"
        " degree INTEGER NOT NULL DEFAULT 0," /* coherence-graph degree, 0 when inactive */
        " access_count INTEGER NOT NULL DEFAULT 0,"
        " tick INTEGER NOT NULL DEFAULT 0,"
        " PRIMARY KEY(ns_id, seq),"
        " UNIQUE(ns_id, id));"
        "INSERT INTO meta(key, value) VALUES('lsn', 0);";
    return mem_store__exec(db, sql, err);
}

/* v2: the embedder that made a namespace's vectors from text ("builtin", "openai:MODEL");
 * NULL until its first such insert. Namespaces of older files start with none recorded. */
static int migrate_v1_v2(sqlite3 *db, mem_err_t *err)
{
    return mem_store__exec(db, "ALTER TABLE namespaces ADD COLUMN embedder TEXT", err);
}

typedef int (*migrate_fn)(sqlite3 *db, mem_err_t *err);
/* migrations[v] moves a file from version v to v + 1. */
static const migrate_fn migrations[MEM_STORE__SCHEMA_VERSION] = {migrate_v0_v1, migrate_v1_v2};

static int read_version(sqlite3 *db, int64_t *out, mem_err_t *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE name='meta'", -1, &st,
                                NULL);
    if (rc != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
        rc = mem_store__err_sqlite(err, db, rc, "read schema");
        sqlite3_finalize(st);
        return rc;
    }
    int64_t has_meta = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (!has_meta) {
        *out = 0;
        return MEM_OK;
    }
    rc = sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='schema_version'", -1, &st, NULL);
    if (rc != SQLITE_OK) return mem_store__err_sqlite(err, db, rc, "read schema_version");
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER)
        *out = sqlite3_column_int64(st, 0);
    else
        rc = mem_err_set(err, MEM_ECORRUPT, "database has a meta table without schema_version");
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? MEM_OK : rc;
}

int mem_store__migrate(sqlite3 *db, mem_err_t *err)
{
    int rc;
    if ((rc = mem_store__exec(db, "BEGIN IMMEDIATE", err)) != MEM_OK) return rc;
    int64_t v = 0;
    if ((rc = read_version(db, &v, err)) != MEM_OK) goto out;
    if (v < 0 || v > MEM_STORE__SCHEMA_VERSION) {
        rc = mem_err_set(err, MEM_ECORRUPT,
                         "database schema version %lld is not supported (this mnemod knows 0..%d)",
                         (long long)v, MEM_STORE__SCHEMA_VERSION);
        goto out;
    }
    for (; v < MEM_STORE__SCHEMA_VERSION; v++) {
        if ((rc = migrations[v](db, err)) != MEM_OK) goto out;
        char sql[96];
        snprintf(sql, sizeof(sql),
                 "INSERT OR REPLACE INTO meta(key, value) "
                 "VALUES('schema_version', %lld)",
                 (long long)v + 1);
        if ((rc = mem_store__exec(db, sql, err)) != MEM_OK) goto out;
    }
    rc = mem_store__exec(db, "COMMIT", err);
out:
    if (rc != MEM_OK) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}
