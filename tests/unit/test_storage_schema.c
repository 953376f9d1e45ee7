/* test_storage_schema.c - what a database file must be before the store touches it
 * SPDX-License-Identifier: MIT
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* cmocka needs stdarg, stddef and setjmp first */
// clang-format off
#include <cmocka.h>
// clang-format on
#include <sqlite3.h>

#include "storage/store.h"

#define STORE_FIXTURE_TAG "schema"
#include "tests/unit/store_fixture.h"

/* The whole file, malloc'd; *len its size. */
static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* Open must fail with code and leave the file byte for byte as it was, with no WAL. */
static void assert_refused_unchanged(int code, const char *needle)
{
    size_t len0, len1;
    unsigned char *before = slurp(fx_dbpath, &len0);
    mem_store_opts_t o = store_fixture_opts();
    mem_store_t *st = NULL;
    mem_err_t err;
    mem_err_clear(&err);
    int rc = mem_store_open(&o, &st, &err);
    if (rc != code) fprintf(stderr, "open: %d %s\n", rc, err.msg);
    assert_int_equal(rc, code);
    assert_null(st);
    if (!strstr(err.msg, needle)) fprintf(stderr, "message: %s\n", err.msg);
    assert_non_null(strstr(err.msg, needle));
    assert_null(strchr(err.msg, '\n')); /* one line */
    unsigned char *after = slurp(fx_dbpath, &len1);
    assert_int_equal(len0, len1);
    assert_memory_equal(before, after, len0);
    char wal[200];
    snprintf(wal, sizeof(wal), "%s-wal", fx_dbpath);
    assert_int_not_equal(access(wal, F_OK), 0);
    free(before);
    free(after);
}

/* Another program's database given as --data is refused, not taken over. */
static void test_foreign_database_refused(void **state)
{
    store_fixture_sql(fx_dbpath, "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);"
                                 "INSERT INTO notes(body) VALUES('keep me');");
    assert_refused_unchanged(MEM_EINVAL, "another program's tables");
    store_fixture_rm_db(fx_dbpath);
    /* a table named meta is not enough to pass for mnemod's */
    store_fixture_sql(fx_dbpath,
                      "CREATE TABLE meta(k, v); INSERT INTO meta VALUES('owner', 'someone else');");
    assert_refused_unchanged(MEM_EINVAL, "another program's tables");
    store_fixture_rm_db(fx_dbpath);
    /* nor is a schema_version without mnemod's tables */
    store_fixture_sql(fx_dbpath, "CREATE TABLE meta(key TEXT PRIMARY KEY, value);"
                                 "INSERT INTO meta VALUES('schema_version', 1);"
                                 "CREATE VIEW v AS SELECT 1;");
    assert_refused_unchanged(MEM_EINVAL, "another program's tables");
    store_fixture_rm_db(fx_dbpath);
    /* an empty file is a new database */
    FILE *f = fopen(fx_dbpath, "wb");
    assert_non_null(f);
    fclose(f);
    mem_store_opts_t o = store_fixture_opts();
    mem_store_close(store_fixture_open(&o));
    /* and a mnemod database opens again */
    mem_store_close(store_fixture_open(&o));
}

/* The tables of a schema 1 file, as the first mnemod created them. */
#define V1_TABLES                                                                                  \
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value);"                                              \
    "CREATE TABLE namespaces(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL"             \
    " UNIQUE, dim INTEGER NOT NULL, last_seq INTEGER NOT NULL DEFAULT 0, last_ts_ms"               \
    " INTEGER, clock INTEGER NOT NULL DEFAULT 0, created_ms INTEGER);"                             \
    "CREATE TABLE segments(ns_id INTEGER NOT NULL, seq INTEGER NOT NULL, id TEXT NOT"              \
    " NULL, ts_ms INTEGER NOT NULL, text TEXT, source TEXT, metadata TEXT, embedding"              \
    " BLOB NOT NULL, supersedes BLOB, superseded_by TEXT, archived INTEGER NOT NULL"               \
    " DEFAULT 0, degree INTEGER NOT NULL DEFAULT 0, access_count INTEGER NOT NULL"                 \
    " DEFAULT 0, tick INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(ns_id, seq), UNIQUE(ns_id,"          \
    " id));"

/* A schema 1 file as the previous mnemod wrote it: B names a superseder D that was
 * deleted (the old bug), C is superseded by E, A is close to B. */
static void make_v1_file(void)
{
    store_fixture_sql(
        fx_dbpath, V1_TABLES
        "INSERT INTO meta VALUES('lsn', 6), ('schema_version', 1);"
        "INSERT INTO namespaces(name, dim, last_seq, last_ts_ms, clock) VALUES('m', 4, 5, 5,"
        " 5);");
    sqlite3 *db;
    assert_int_equal(sqlite3_open(fx_dbpath, &db), SQLITE_OK);
    sqlite3_stmt *s;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "INSERT INTO segments(ns_id, seq, id, ts_ms, embedding,"
                                        " supersedes, superseded_by, tick) VALUES(1, ?, ?, ?, ?,"
                                        " ?, ?, ?)",
                                        -1, &s, NULL),
                     SQLITE_OK);
    static const struct {
        const char *id, *sup, *by;
        float v[4];
    } rows[] = {
        {"B", NULL, "D", {1, 0, 0, 0}},
        {"C", NULL, "E", {0, 1, 0, 0}},
        {"E", "C", NULL, {0, 0, 1, 0}},
        {"A", NULL, NULL, {0.8f, 0, 0, 0.6f}},
    };
    for (int i = 0; i < 4; i++) {
        sqlite3_bind_int(s, 1, i + 1);
        sqlite3_bind_text(s, 2, rows[i].id, -1, SQLITE_STATIC);
        sqlite3_bind_int(s, 3, i + 1);
        sqlite3_bind_blob(s, 4, rows[i].v, sizeof(rows[i].v), SQLITE_STATIC);
        if (rows[i].sup)
            sqlite3_bind_blob(s, 5, rows[i].sup, (int)strlen(rows[i].sup) + 1, SQLITE_STATIC);
        else
            sqlite3_bind_null(s, 5);
        if (rows[i].by)
            sqlite3_bind_text(s, 6, rows[i].by, -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(s, 6);
        sqlite3_bind_int(s, 7, i + 1);
        assert_int_equal(sqlite3_step(s), SQLITE_DONE);
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    sqlite3_close(db);
}

static const char *superseded_by(mem_store_t *st, const char *id)
{
    static char by[MEM_STORE_ID_MAX + 1];
    mem_store_segment_t *seg = NULL;
    assert_int_equal(mem_store_get(st, "m", id, false, &seg, NULL), MEM_OK);
    snprintf(by, sizeof(by), "%s", seg->superseded_by ? seg->superseded_by : "");
    mem_store_segment_free(seg);
    return by;
}

static mem_store_ns_stats_t stats(mem_store_t *st)
{
    mem_store_ns_stats_t s;
    assert_int_equal(mem_store_ns_stats_exact(st, "m", &s, NULL), MEM_OK); /* graph caught up */
    return s;
}

/* A schema 1 file opens and migrates: the supersessions are read from the rows, a dangling
 * one is released and its row linked into the graph, once. */
static void test_migrate_from_v1(void **state)
{
    make_v1_file();
    mem_store_opts_t o = store_fixture_opts();
    mem_store_t *st = store_fixture_open(&o);
    mem_store_ns_stats_t s = stats(st);
    assert_int_equal(s.count, 4);
    assert_int_equal(s.superseded, 1); /* C; B is free again */
    assert_string_equal(superseded_by(st, "B"), "");
    assert_string_equal(superseded_by(st, "C"), "E");
    assert_int_equal(s.graph_edges, 1); /* B - A (cos 0.8) */
    assert_int_equal(s.max_degree, 1);
    mem_store_close(st);
    /* the link made at the first start is stored: the next start does not count it again */
    st = store_fixture_open(&o);
    s = stats(st);
    assert_int_equal(s.graph_edges, 1);
    assert_int_equal(s.max_degree, 1);
    /* the pair read from E's supersedes list works: deleting E releases C */
    mem_store_op_t op = {.kind = MEM_STORE_OP_DELETE, .ns = "m", .id = "E"};
    assert_int_equal(store_fixture_run(st, &op), MEM_OK);
    assert_string_equal(superseded_by(st, "C"), "");
    assert_int_equal(stats(st).superseded, 0);
    mem_store_close(st);
    assert_true(store_fixture_sql_int(fx_dbpath,
                                      "SELECT value FROM meta WHERE key = 'schema_version'") >= 2);
}

/* The supersedes list of segment id of "m", as "X,Y" ("" when none). */
static const char *supersedes_of(mem_store_t *st, const char *id)
{
    static char out[256];
    mem_store_segment_t *seg = NULL;
    assert_int_equal(mem_store_get(st, "m", id, false, &seg, NULL), MEM_OK);
    out[0] = '\0';
    for (size_t i = 0; i < seg->n_supersedes; i++)
        snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", i ? "," : "",
                 seg->supersedes[i]);
    mem_store_segment_free(seg);
    return out;
}

/* Every segment of "m" exported, in seq order, each as "id>sup1,sup2;": what an import of
 * the export would be checked against (a supersedes id must be on an earlier line). */
static void assert_export_imports(mem_store_t *st)
{
    mem_store_export_t *x = NULL;
    assert_int_equal(mem_store_export_open(st, "m", &x, NULL), MEM_OK);
    char seen[32][MEM_STORE_ID_MAX + 1];
    size_t n_seen = 0;
    mem_store_segment_t *seg = NULL;
    int rc;
    while ((rc = mem_store_export_next(x, &seg, NULL)) == 1) {
        for (size_t i = 0; i < seg->n_supersedes; i++) {
            bool earlier = false;
            for (size_t j = 0; j < n_seen; j++)
                earlier |= strcmp(seen[j], seg->supersedes[i]) == 0;
            if (!earlier) fprintf(stderr, "%s names %s\n", seg->id, seg->supersedes[i]);
            assert_true(earlier);
        }
        assert_true(n_seen < 32);
        snprintf(seen[n_seen++], sizeof(seen[0]), "%s", seg->id);
        mem_store_segment_free(seg);
    }
    assert_int_equal(rc, 0);
    mem_store_export_close(x);
}

static void insert_plain(mem_store_t *st, const char *id, const char *const *sup, size_t n_sup,
                         const float *v)
{
    mem_store_seg_in_t seg = {.vec = v, .supersedes = sup, .n_supersedes = n_sup};
    snprintf(seg.id, sizeof(seg.id), "%s", id);
    mem_store_seg_out_t out;
    mem_store_op_t op = {.kind = MEM_STORE_OP_INSERT,
                         .ns = "m",
                         .dim = 4,
                         .now_ms = 1000,
                         .segs = &seg,
                         .outs = &out,
                         .n_segs = 1};
    assert_int_equal(store_fixture_run(st, &op), MEM_OK);
}

/* A schema 5 file as mnemod left it before deleting a superseded segment dropped its id from
 * its superseders' lists: S superseded A and B; A was deleted, its row and pair went, but S's
 * list kept "A"; a later A re-used the id and showed S as its superseder. The migration to
 * schema 6 makes the lists and superseded_by agree with the pairs, once. */
static void test_migrate_stale_supersedes(void **state)
{
    static const float va[4] = {1, 0, 0, 0}, vb[4] = {0, 1, 0, 0}, vs[4] = {0, 0, 1, 0},
                       va2[4] = {0.8f, 0, 0.6f, 0};
    static const char *const sup[] = {"A", "B"};
    mem_store_opts_t o = store_fixture_opts();
    mem_store_t *st = store_fixture_open(&o);
    mem_store_op_t ns = {.kind = MEM_STORE_OP_NS_CREATE, .ns = "m", .dim = 4, .now_ms = 1000};
    assert_int_equal(store_fixture_run(st, &ns), MEM_OK);
    insert_plain(st, "A", NULL, 0, va);
    insert_plain(st, "B", NULL, 0, vb);
    insert_plain(st, "S", sup, 2, vs);
    mem_store_op_t del = {.kind = MEM_STORE_OP_DELETE, .ns = "m", .id = "A"};
    assert_int_equal(store_fixture_run(st, &del), MEM_OK);
    insert_plain(st, "A", NULL, 0, va2);
    store_fixture_settle(st);
    mem_store_close(st);
    /* what the older mnemod had written: S still names A, and the new A looks superseded */
    store_fixture_sql(fx_dbpath, "UPDATE segments SET supersedes = X'41004200' WHERE id = 'S';"
                                 "UPDATE segments SET superseded_by = 'S' WHERE id = 'A';"
                                 "ALTER TABLE namespaces DROP COLUMN incarnation;"
                                 "UPDATE meta SET value = 5 WHERE key = 'schema_version';");
    st = store_fixture_open(&o);
    assert_string_equal(supersedes_of(st, "S"), "B");
    assert_string_equal(superseded_by(st, "B"), "S");
    assert_string_equal(superseded_by(st, "A"), "");
    mem_store_ns_stats_t s = stats(st);
    assert_int_equal(s.count, 3);
    assert_int_equal(s.superseded, 1);  /* B */
    assert_int_equal(s.graph_edges, 1); /* the new A, active again, and S (cos 0.6) */
    assert_export_imports(st);
    store_fixture_settle(st);
    mem_store_close(st);
    assert_true(store_fixture_sql_int(fx_dbpath,
                                      "SELECT value FROM meta WHERE key = 'schema_version'") >= 6);
    assert_int_equal(store_fixture_sql_int(fx_dbpath, "SELECT count(*) FROM supersessions"), 1);
    /* a sound file is left as it is: the next start finds the same */
    st = store_fixture_open(&o);
    assert_string_equal(supersedes_of(st, "S"), "B");
    s = stats(st);
    assert_int_equal(s.superseded, 1);
    assert_int_equal(s.graph_edges, 1);
    mem_store_close(st);
}

/* A schema 1 file whose list names ids by the old rule (any row of that name): C names A (an
 * older row: a supersession), Z (held only by a later row) and Q (no row at all). After the
 * migrations C names A alone, and the later Z is not superseded. */
static void test_migrate_v1_unbacked_supersedes(void **state)
{
    store_fixture_sql(
        fx_dbpath, V1_TABLES
        "INSERT INTO meta VALUES('lsn', 3), ('schema_version', 1);"
        "INSERT INTO namespaces(name, dim, last_seq, last_ts_ms, clock) VALUES('m', 4, 3, 3,"
        " 3);"
        "INSERT INTO segments(ns_id, seq, id, ts_ms, embedding, supersedes, superseded_by,"
        " tick) VALUES"
        " (1, 1, 'A', 1, X'0000803f000000000000000000000000', NULL, 'C', 1),"
        " (1, 2, 'C', 2, X'000000000000803f0000000000000000', X'41005a005100', NULL, 2),"
        " (1, 3, 'Z', 3, X'00000000000000000000803f00000000', NULL, NULL, 3);");
    mem_store_opts_t o = store_fixture_opts();
    mem_store_t *st = store_fixture_open(&o);
    assert_string_equal(supersedes_of(st, "C"), "A");
    assert_string_equal(superseded_by(st, "A"), "C");
    assert_string_equal(superseded_by(st, "Z"), "");
    assert_int_equal(stats(st).superseded, 1);
    assert_export_imports(st);
    mem_store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_migrate_stale_supersedes, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_migrate_v1_unbacked_supersedes, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_migrate_from_v1, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_foreign_database_refused, store_fixture_setup,
                                        store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
