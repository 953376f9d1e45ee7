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

int mem_store__code_sqlite(int rc)
{
    int prim = rc & 0xff;
    if (prim == SQLITE_FULL) return MEM_EFULL;
    if (prim == SQLITE_NOMEM) return MEM_ENOMEM;
    if (prim == SQLITE_CORRUPT || prim == SQLITE_NOTADB) return MEM_ECORRUPT;
    return MEM_ESTORAGE;
}

int mem_store__err_sqlite(mem_err_t *err, sqlite3 *db, int rc, const char *what)
{
    int code = mem_store__code_sqlite(rc);
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

/* quick_check reports a page it could not read as a problem line naming SQLite's error code
 * ("unable to get the page. error code=7"): when that code is out of memory, the check
 * could not be made, which says nothing about the file. */
static bool out_of_memory_line(const char *msg)
{
    static const char tag[] = "error code=";
    for (const char *p = msg; (p = strstr(p, tag)) != NULL; p += sizeof(tag) - 1) {
        long code = strtol(p + sizeof(tag) - 1, NULL, 10);
        if (code == SQLITE_NOMEM || code == SQLITE_IOERR_NOMEM) return true;
    }
    return false;
}

/* quick_check: any answer but a single "ok" row means the file cannot be trusted, unless
 * memory ran out while checking (MEM_ENOMEM: the open fails, the file is not blamed). */
static int check_once(sqlite3 *db, mem_err_t *err)
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
        if ((!msg && sqlite3_errcode(db) == SQLITE_NOMEM) || (msg && out_of_memory_line(msg))) {
            out = mem_err_set(err, MEM_ENOMEM, "out of memory checking the database file");
        } else if (!msg || strcmp(msg, "ok") != 0) {
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

/* Some of quick_check's lines for a page it could not read name no error code ("failed to
 * get page 34" on an overflow chain): a failed allocation then reads like a damaged file.
 * Damage is there again on a second look, a passing shortage is not, so a file is refused
 * only when two checks in a row find it damaged. */
int mem_store__check(sqlite3 *db, mem_err_t *err)
{
    int rc = check_once(db, err);
    if (rc != MEM_ECORRUPT) return rc;
    mem_err_t again;
    mem_err_clear(&again);
    int rc2 = check_once(db, &again);
    if (rc2 == MEM_ECORRUPT) return rc; /* the first report */
    if (err) *err = again;
    return rc2;
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

/* How many schema objects of the main database match where (a condition on sqlite_master). */
static int count_objects(sqlite3 *db, const char *where, int64_t *n, mem_err_t *err)
{
    char sql[160];
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM sqlite_master WHERE %s", where);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        *n = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_OK ? MEM_OK : mem_store__err_sqlite(err, db, rc, "read schema");
}

static int read_version(sqlite3 *db, int64_t *out, mem_err_t *err);

int mem_store__check_ours(sqlite3 *db, mem_err_t *err)
{
    int64_t n_all = 0, n_ours = 0, v = 0;
    int rc = count_objects(db, "name NOT LIKE 'sqlite_%'", &n_all, err);
    if (rc != MEM_OK || n_all == 0) return rc; /* empty: a new database */
    if ((rc = count_objects(db, "type = 'table' AND name IN ('namespaces', 'segments')", &n_ours,
                            err)) != MEM_OK)
        return rc;
    mem_err_t verr;
    mem_err_clear(&verr);
    rc = read_version(db, &v, &verr); /* any other failure: not a meta table of ours */
    if (rc == MEM_ENOMEM) {           /* out of memory says nothing about the file */
        if (err) *err = verr;
        return rc;
    }
    if (rc == MEM_OK && v > MEM_STORE__SCHEMA_VERSION) /* ours, from a newer mnemod */
        return mem_err_set(err, MEM_ECORRUPT,
                           "database schema version %lld is not supported (this mnemod knows "
                           "0..%d)",
                           (long long)v, MEM_STORE__SCHEMA_VERSION);
    if (rc == MEM_OK && v >= 1 && n_ours == 2) return MEM_OK;
    return mem_err_set(err, MEM_EINVAL,
                       "the file holds another program's tables, not a mnemod database "
                       "(refusing to change it: give a new file or a mnemod database)");
}

/* v3: who supersedes whom (so that deleting a superseder can release its targets), and
 * the recent retrieve queries (the compaction's default context) persisted per namespace.
 * The pairs are taken from each row's supersedes list: a target is the row holding that id
 * with a smaller seq (an id re-used after its row was deleted never names the old one).
 * Rows left pointing at a superseder that no longer exists (deleted before this version)
 * become active again; their degree is set to -1, "not linked", for the graph to link
 * them (v4 leaves them out of its first checkpoint). */
static int migrate_v2_v3(sqlite3 *db, mem_err_t *err)
{
    static const char ddl[] =
        "ALTER TABLE namespaces ADD COLUMN recent BLOB;" /* float32 x dim per query, oldest
                                                            first */
        "CREATE TABLE supersessions("
        " ns_id INTEGER NOT NULL,"
        " target_seq INTEGER NOT NULL," /* the superseded row */
        " by_seq INTEGER NOT NULL,"     /* the row that supersedes it */
        " PRIMARY KEY(ns_id, target_seq, by_seq)) WITHOUT ROWID;"
        "CREATE INDEX supersessions_by ON supersessions(ns_id, by_seq);";
    int rc = mem_store__exec(db, ddl, err);
    if (rc != MEM_OK) return rc;
    sqlite3_stmt *rows = NULL, *find = NULL, *add = NULL;
    int src = sqlite3_prepare_v2(db,
                                 "SELECT ns_id, seq, supersedes FROM segments"
                                 " WHERE supersedes IS NOT NULL",
                                 -1, &rows, NULL);
    if (src == SQLITE_OK)
        src = sqlite3_prepare_v2(
            db, "SELECT seq FROM segments WHERE ns_id = ? AND id = ? AND seq < ?", -1, &find, NULL);
    if (src == SQLITE_OK)
        src = sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO supersessions VALUES(?, ?, ?)", -1,
                                 &add, NULL);
    while (src == SQLITE_OK || src == SQLITE_ROW) {
        if ((src = sqlite3_step(rows)) != SQLITE_ROW) break;
        int64_t ns_id = sqlite3_column_int64(rows, 0), seq = sqlite3_column_int64(rows, 1);
        const char *blob = sqlite3_column_blob(rows, 2);
        size_t len = (size_t)sqlite3_column_bytes(rows, 2);
        for (size_t off = 0; blob && off < len && src == SQLITE_ROW;) {
            size_t l = strnlen(blob + off, len - off);
            sqlite3_bind_int64(find, 1, ns_id);
            sqlite3_bind_text(find, 2, blob + off, (int)l, SQLITE_STATIC);
            sqlite3_bind_int64(find, 3, seq);
            int f = sqlite3_step(find);
            if (f == SQLITE_ROW) {
                sqlite3_bind_int64(add, 1, ns_id);
                sqlite3_bind_int64(add, 2, sqlite3_column_int64(find, 0));
                sqlite3_bind_int64(add, 3, seq);
                f = sqlite3_step(add);
                sqlite3_reset(add);
            }
            if (f != SQLITE_DONE) src = f;
            sqlite3_reset(find);
            off += l + 1;
        }
    }
    if (src != SQLITE_DONE) rc = mem_store__err_sqlite(err, db, src, "migrate to schema 3");
    sqlite3_finalize(rows);
    sqlite3_finalize(find);
    sqlite3_finalize(add);
    if (rc != MEM_OK) return rc;
    return mem_store__exec(
        db,
        "UPDATE segments SET superseded_by = NULL, degree = -1"
        " WHERE superseded_by IS NOT NULL AND NOT EXISTS (SELECT 1 FROM supersessions x"
        " WHERE x.ns_id = segments.ns_id AND x.target_seq = segments.seq);",
        err);
}

/* v4: the coherence graph leaves the segment rows. Its degrees live in graph_blocks, one row
 * per bucket of MEM_STORE__GRAPH_BUCKET seqs holding the (seq i64, degree u32) pairs,
 * little-endian, of its linked rows (written in batches by the linker, storage/linker.c);
 * graph_gone keeps the vector of a deleted row until the graph has let go of it; a
 * namespace may keep no graph at all (coherence 0). The stored degrees of the active rows
 * become the first checkpoint; a row of schema 3 marked "not linked" (degree -1) is left
 * out, for the linker to link. */
static int migrate_v3_v4(sqlite3 *db, mem_err_t *err)
{
    static const char ddl[] =
        "CREATE TABLE graph_blocks("
        " ns_id INTEGER NOT NULL,"
        " first_seq INTEGER NOT NULL," /* a multiple of the bucket size */
        " data BLOB NOT NULL,"
        " PRIMARY KEY(ns_id, first_seq)) WITHOUT ROWID;"
        "CREATE TABLE graph_gone("
        " ns_id INTEGER NOT NULL,"
        " seq INTEGER NOT NULL,"
        " ts_ms INTEGER NOT NULL,"
        " embedding BLOB NOT NULL,"
        " PRIMARY KEY(ns_id, seq)) WITHOUT ROWID;"
        "ALTER TABLE namespaces ADD COLUMN coherence INTEGER NOT NULL DEFAULT 1;";
    int rc = mem_store__exec(db, ddl, err);
    if (rc != MEM_OK) return rc;
    sqlite3_stmt *rows = NULL, *put = NULL;
    unsigned char blob[MEM_STORE__GRAPH_BUCKET * 12];
    size_t len = 0;
    int64_t cur_ns = 0, cur_b = -1;
    int src = sqlite3_prepare_v2(db,
                                 "SELECT ns_id, seq, degree FROM segments WHERE superseded_by IS"
                                 " NULL AND archived = 0 AND degree >= 0 ORDER BY ns_id, seq",
                                 -1, &rows, NULL);
    if (src == SQLITE_OK)
        src = sqlite3_prepare_v2(db, "INSERT INTO graph_blocks VALUES(?, ?, ?)", -1, &put, NULL);
    for (;;) {
        int step = src == SQLITE_OK ? sqlite3_step(rows) : src;
        int64_t ns_id = step == SQLITE_ROW ? sqlite3_column_int64(rows, 0) : 0;
        int64_t seq = step == SQLITE_ROW ? sqlite3_column_int64(rows, 1) : 0;
        int64_t b = step == SQLITE_ROW ? seq / MEM_STORE__GRAPH_BUCKET : -1;
        if (len && (step != SQLITE_ROW || ns_id != cur_ns || b != cur_b)) { /* a bucket ends */
            sqlite3_bind_int64(put, 1, cur_ns);
            sqlite3_bind_int64(put, 2, cur_b * MEM_STORE__GRAPH_BUCKET);
            sqlite3_bind_blob(put, 3, blob, (int)len, SQLITE_STATIC);
            int p = sqlite3_step(put);
            sqlite3_reset(put);
            len = 0;
            if (p != SQLITE_DONE) {
                src = p;
                break;
            }
        }
        if (step != SQLITE_ROW) {
            src = step;
            break;
        }
        int64_t deg = sqlite3_column_int64(rows, 2);
        uint32_t d = deg > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)deg; /* load checks */
        for (int k = 0; k < 8; k++)
            blob[len + (size_t)k] = (unsigned char)((uint64_t)seq >> (8 * k));
        for (int k = 0; k < 4; k++)
            blob[len + 8 + (size_t)k] = (unsigned char)(d >> (8 * k));
        len += 12;
        cur_ns = ns_id;
        cur_b = b;
    }
    if (src != SQLITE_DONE) rc = mem_store__err_sqlite(err, db, src, "migrate to schema 4");
    sqlite3_finalize(rows);
    sqlite3_finalize(put);
    if (rc != MEM_OK) return rc;
    return mem_store__exec(db, "ALTER TABLE segments DROP COLUMN degree", err);
}

/* v5: the stored graph records what it was made with: the edge rule's version
 * (MEM_GRAPH_RULE) and the threshold. A graph whose record differs from the running ones is
 * not restored but built again in the background (load.c), so a changed
 * --coherence-threshold never reuses stale degrees. The graphs of older files record
 * nothing (NULL): they were made by rule 1 (the kernel's own f32 dot) and are built again
 * once, at the first start. */
static int migrate_v4_v5(sqlite3 *db, mem_err_t *err)
{
    return mem_store__exec(db,
                           "ALTER TABLE namespaces ADD COLUMN graph_rule INTEGER;"
                           "ALTER TABLE namespaces ADD COLUMN graph_threshold REAL;",
                           err);
}

/* v6: the supersessions of older files made whole. Before deleting a superseded segment
 * dropped its id from its superseders' lists, a list could keep naming a row that was gone
 * (or, through the id, a later row that re-used it), and a file from before v3 could name an
 * id that only a later row held: an export of such a namespace failed to import (unknown id)
 * and a segment showed a supersession that does not hold. The state every later write keeps,
 * and that this makes of any file:
 * - every pair (target_seq, by_seq) joins two rows that exist, the target the older;
 * - a row's supersedes list names exactly the ids of its pairs' targets (in its order; an id
 *   no pair backs is dropped, an empty list is NULL);
 * - a row's superseded_by names its latest superseder, or is NULL when it has none.
 * A row whose superseded_by changes joins or leaves the coherence graph at load (its stored
 * membership then differs from its flags, load.c). Idempotent: a sound file is unchanged. */
static int migrate_v5_v6(sqlite3 *db, mem_err_t *err)
{
    int rc = mem_store__exec(
        db,
        "DELETE FROM supersessions WHERE target_seq >= by_seq"
        " OR NOT EXISTS (SELECT 1 FROM segments s WHERE s.ns_id = supersessions.ns_id"
        " AND s.seq = supersessions.target_seq)"
        " OR NOT EXISTS (SELECT 1 FROM segments s WHERE s.ns_id = supersessions.ns_id"
        " AND s.seq = supersessions.by_seq);",
        err);
    if (rc != MEM_OK) return rc;
    sqlite3_stmt *rows = NULL, *backed = NULL, *set = NULL;
    char *kept = NULL;
    size_t cap = 0;
    int src = sqlite3_prepare_v2(db,
                                 "SELECT ns_id, seq, supersedes FROM segments"
                                 " WHERE supersedes IS NOT NULL",
                                 -1, &rows, NULL);
    if (src == SQLITE_OK)
        src = sqlite3_prepare_v2(db,
                                 "SELECT 1 FROM supersessions x JOIN segments t"
                                 " ON t.ns_id = x.ns_id AND t.seq = x.target_seq"
                                 " WHERE x.ns_id = ?1 AND x.by_seq = ?2 AND t.id = ?3",
                                 -1, &backed, NULL);
    if (src == SQLITE_OK)
        src = sqlite3_prepare_v2(
            db, "UPDATE segments SET supersedes = ? WHERE ns_id = ? AND seq = ?", -1, &set, NULL);
    /* each row is rewritten while the scan stands on it, which SQLite allows (the update
     * changes no key, so the scan neither loses nor revisits a row) */
    while (src == SQLITE_OK || src == SQLITE_ROW) {
        if ((src = sqlite3_step(rows)) != SQLITE_ROW) break;
        int64_t ns_id = sqlite3_column_int64(rows, 0), seq = sqlite3_column_int64(rows, 1);
        const char *blob = sqlite3_column_blob(rows, 2);
        size_t len = (size_t)sqlite3_column_bytes(rows, 2), n = 0;
        if (len + 1 > cap) {
            char *k = realloc(kept, len + 1);
            if (!k) {
                rc = mem_err_set(err, MEM_ENOMEM, "out of memory");
                break;
            }
            kept = k;
            cap = len + 1;
        }
        for (size_t off = 0; blob && off < len && src == SQLITE_ROW;) {
            size_t l = strnlen(blob + off, len - off);
            sqlite3_bind_int64(backed, 1, ns_id);
            sqlite3_bind_int64(backed, 2, seq);
            sqlite3_bind_text(backed, 3, blob + off, (int)l, SQLITE_STATIC);
            int f = sqlite3_step(backed);
            if (f == SQLITE_ROW) { /* each id keeps its NUL, a last one without gets one */
                memcpy(kept + n, blob + off, l);
                kept[n + l] = '\0';
                n += l + 1;
            } else if (f != SQLITE_DONE) {
                src = f;
            }
            sqlite3_reset(backed);
            off += l + 1;
        }
        if (src != SQLITE_ROW) break;
        if (n == len && (!n || memcmp(kept, blob, n) == 0)) continue; /* sound already */
        if (n)
            sqlite3_bind_blob(set, 1, kept, (int)n, SQLITE_TRANSIENT);
        else
            sqlite3_bind_null(set, 1);
        sqlite3_bind_int64(set, 2, ns_id);
        sqlite3_bind_int64(set, 3, seq);
        int f = sqlite3_step(set);
        sqlite3_reset(set);
        if (f != SQLITE_DONE) src = f;
    }
    if (rc == MEM_OK && src != SQLITE_DONE)
        rc = mem_store__err_sqlite(err, db, src, "migrate to schema 6");
    sqlite3_finalize(rows);
    sqlite3_finalize(backed);
    sqlite3_finalize(set);
    free(kept);
    if (rc != MEM_OK) return rc;
    return mem_store__exec(
        db,
        "UPDATE segments SET superseded_by = (SELECT s.id FROM supersessions x JOIN segments s"
        " ON s.ns_id = x.ns_id AND s.seq = x.by_seq WHERE x.ns_id = segments.ns_id"
        " AND x.target_seq = segments.seq ORDER BY x.by_seq DESC LIMIT 1)"
        " WHERE superseded_by IS NOT (SELECT s.id FROM supersessions x JOIN segments s"
        " ON s.ns_id = x.ns_id AND s.seq = x.by_seq WHERE x.ns_id = segments.ns_id"
        " AND x.target_seq = segments.seq ORDER BY x.by_seq DESC LIMIT 1);",
        err);
}

/* v7: a namespace's incarnation, which of the namespaces ever named so it is (a listing
 * cursor names it, so a cursor of a namespace that was deleted and created again is refused
 * rather than paging through its successor). Chosen when the namespace is created: in a
 * cluster from the position of the record that created it, so every node holds the same;
 * travels with the row in a namespace copy. Namespaces of older files have 0. */
static int migrate_v6_v7(sqlite3 *db, mem_err_t *err)
{
    return mem_store__exec(
        db, "ALTER TABLE namespaces ADD COLUMN incarnation INTEGER NOT NULL DEFAULT 0", err);
}

typedef int (*migrate_fn)(sqlite3 *db, mem_err_t *err);
/* migrations[v] moves a file from version v to v + 1. */
static const migrate_fn migrations[MEM_STORE__SCHEMA_VERSION] = {
    migrate_v0_v1, migrate_v1_v2, migrate_v2_v3, migrate_v3_v4,
    migrate_v4_v5, migrate_v5_v6, migrate_v6_v7};

static int read_version(sqlite3 *db, int64_t *out, mem_err_t *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE name='meta'", -1, &st,
                                NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) { /* the step's own code: out of memory stays out of memory */
        rc = mem_store__err_sqlite(err, db, rc == SQLITE_OK ? SQLITE_ERROR : rc, "read schema");
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
    else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        rc = mem_store__err_sqlite(err, db, rc, "read schema_version");
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
