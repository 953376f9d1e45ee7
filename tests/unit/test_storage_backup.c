/* test_storage_backup.c - online backup, restore and the integrity check (storage/backup.c)
 * SPDX-License-Identifier: MIT
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "storage/store.h"

#define STORE_FIXTURE_TAG "backup"
#include "tests/unit/store_fixture.h"

#define DIM 8

static const char *bakpath, *otherpath;

static int setup(void **state)
{
    int rc = store_fixture_setup(state);
    bakpath = store_fixture_extra("backup.db");
    otherpath = store_fixture_extra("other.db");
    return rc;
}

static int dir_entries(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", fx_tmpdir);
    FILE *f = popen(cmd, "r");
    int n = -1;
    if (f) {
        if (fscanf(f, "%d", &n) != 1) n = -1;
        pclose(f);
    }
    return n;
}

static mem_store_t *open_store(const char *path)
{
    mem_store_opts_t o = store_fixture_opts();
    o.path = path;
    return store_fixture_open(&o);
}

/* Insert one segment "<prefix><i>" (timestamp i) into namespace ns and wait for it. */
static int insert_one(mem_store_t *st, const char *ns, const char *prefix, int i)
{
    float v[DIM];
    for (int d = 0; d < DIM; d++)
        v[d] = (float)((i * 7 + d * 3) % 11) + 1.0f;
    assert_int_equal(mem_vec_normalize(v, DIM), 0);
    mem_store_seg_in_t seg;
    memset(&seg, 0, sizeof(seg));
    snprintf(seg.id, sizeof(seg.id), "%s%d", prefix, i);
    seg.ts_given = true;
    seg.ts_ms = 1000000 + i;
    seg.vec = v;
    seg.text = "remembered";
    seg.text_len = strlen(seg.text);
    mem_store_seg_out_t out;
    mem_store_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = MEM_STORE_OP_INSERT;
    snprintf(op.ns, sizeof(op.ns), "%s", ns);
    op.dim = DIM;
    op.now_ms = 2000000000;
    op.segs = &seg;
    op.outs = &out;
    op.n_segs = 1;
    return store_fixture_run(st, &op);
}

static int has_seg(mem_store_t *st, const char *ns, const char *prefix, int i)
{
    char id[64];
    snprintf(id, sizeof(id), "%s%d", prefix, i);
    mem_store_segment_t *seg = NULL;
    int rc = mem_store_get(st, ns, id, false, &seg, NULL);
    mem_store_segment_free(seg);
    return rc == MEM_OK;
}

static uint64_t ns_count(mem_store_t *st, const char *ns)
{
    mem_store_ns_stats_t s;
    if (mem_store_ns_stats(st, ns, &s, NULL) != MEM_OK) return 0;
    return s.count;
}

static int header_mode(const char *path)
{
    unsigned char b[20];
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fread(b, 1, sizeof(b), f), sizeof(b));
    fclose(f);
    assert_int_equal(b[18], b[19]);
    return b[18]; /* 1 rollback journal, 2 WAL */
}

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static void wipe_page_of(const char *path, const char *object)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *s = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char sql[200];
    snprintf(sql, sizeof(sql),
             "SELECT rootpage, (SELECT page_size FROM pragma_page_size()) "
             "FROM sqlite_master WHERE name='%s'",
             object);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    long page = sqlite3_column_int(s, 0), size = sqlite3_column_int(s, 1);
    sqlite3_finalize(s);
    sqlite3_close(db);
    assert_true(page > 1);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, (page - 1) * size, SEEK_SET), 0);
    for (long i = 0; i < size; i++)
        fputc(0xff, f);
    fclose(f);
}

typedef struct problems {
    int n;
    char first[256];
} problems_t;

static void on_problem(const char *p, void *ud)
{
    problems_t *pr = ud;
    if (pr->n++ == 0) snprintf(pr->first, sizeof(pr->first), "%s", p);
}

/* ---- backup under concurrent inserts ---- */

typedef struct loader {
    mem_store_t *st;
    int total;
    atomic_int acked;  /* inserts whose completion was reported */
    atomic_int failed; /* the code of the insert that failed, 0 if none */
} loader_t;

static void *load_thread(void *arg)
{
    loader_t *l = arg;
    for (int i = 0; i < l->total; i++) {
        int rc = insert_one(l->st, "agent", "w", i);
        if (rc != MEM_OK) {
            atomic_store(&l->failed, rc);
            break;
        }
        atomic_store(&l->acked, i + 1);
    }
    return NULL;
}

static void test_backup_while_writing(void **state)
{
    mem_store_t *st = open_store(fx_dbpath);
    loader_t l = {.st = st, .total = 600};
    atomic_init(&l.acked, 0);
    atomic_init(&l.failed, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, load_thread, &l), 0);
    while (atomic_load(&l.acked) < 100 && !atomic_load(&l.failed))
        sched_yield();
    int acked_before = atomic_load(&l.acked);
    mem_err_t err;
    mem_err_clear(&err);
    int rc = mem_store_backup(fx_dbpath, bakpath, &err);
    int acked_after = atomic_load(&l.acked);
    pthread_join(th, NULL);
    if (rc != MEM_OK) fprintf(stderr, "backup: %s\n", err.msg);
    assert_int_equal(rc, MEM_OK);
    assert_int_equal(atomic_load(&l.failed), 0);
    assert_int_equal(ns_count(st, "agent"), 600);
    mem_store_close(st);

    /* One self-contained file: rollback-journal mode, no WAL beside it, no temp file left. */
    assert_int_equal(header_mode(bakpath), 1);
    char side[200];
    snprintf(side, sizeof(side), "%s-wal", bakpath);
    assert_false(exists(side));
    assert_int_equal(dir_entries(), 2); /* the database and backup.db (the live WAL is gone) */

    size_t n = 99;
    assert_int_equal(mem_store_check(bakpath, NULL, NULL, &n, NULL), MEM_OK);
    assert_int_equal(n, 0);

    /* A snapshot: everything acknowledged before the backup started, then a prefix. */
    mem_store_t *b = open_store(bakpath);
    uint64_t c = ns_count(b, "agent");
    assert_true(c >= (uint64_t)acked_before);
    assert_true(c <= (uint64_t)acked_after + 1); /* at most the one in flight at the end */
    for (int i = 0; i < (int)c; i++)
        assert_true(has_seg(b, "agent", "w", i));
    assert_false(has_seg(b, "agent", "w", (int)c));
    mem_store_close(b);
}

static void test_backup_errors(void **state)
{
    mem_err_t err;
    mem_err_clear(&err);
    assert_int_equal(mem_store_backup(fx_dbpath, bakpath, &err), MEM_ENOTFOUND);
    assert_false(exists(bakpath));

    mem_store_t *st = open_store(fx_dbpath);
    assert_int_equal(insert_one(st, "a", "s", 1), MEM_OK);
    /* The database itself as the output: refused, the database untouched. */
    assert_int_equal(mem_store_backup(fx_dbpath, fx_dbpath, &err), MEM_EINVAL);
    assert_true(has_seg(st, "a", "s", 1));
    /* An output directory that does not exist: an error and no stray file. */
    char bad[200];
    snprintf(bad, sizeof(bad), "%s/no/such/dir/b.db", fx_tmpdir);
    assert_int_equal(mem_store_backup(fx_dbpath, bad, &err), MEM_ESTORAGE);
    assert_true(strstr(err.msg, "no/such/dir") != NULL);
    mem_store_close(st);
    assert_int_equal(dir_entries(), 1);

    /* An existing output file is replaced by the complete copy. */
    FILE *f = fopen(bakpath, "w");
    assert_non_null(f);
    fputs("old junk", f);
    fclose(f);
    assert_int_equal(mem_store_backup(fx_dbpath, bakpath, &err), MEM_OK);
    mem_store_t *b = open_store(bakpath);
    assert_true(has_seg(b, "a", "s", 1));
    mem_store_close(b);
}

/* ---- restore ---- */

static void test_restore_refuses_a_held_database(void **state)
{
    mem_store_t *st = open_store(fx_dbpath);
    assert_int_equal(insert_one(st, "a", "old", 1), MEM_OK);
    assert_int_equal(mem_store_backup(fx_dbpath, bakpath, NULL), MEM_OK);
    assert_int_equal(insert_one(st, "a", "new", 2), MEM_OK);

    mem_err_t err;
    mem_err_clear(&err);
    assert_int_equal(mem_store_restore(fx_dbpath, bakpath, &err), MEM_EBUSY);
    assert_true(strstr(err.msg, "in use") != NULL);
    /* Nothing was touched: the server still has both and keeps writing. */
    assert_true(has_seg(st, "a", "new", 2));
    assert_int_equal(insert_one(st, "a", "new", 3), MEM_OK);
    mem_store_close(st);

    st = open_store(fx_dbpath);
    assert_int_equal(ns_count(st, "a"), 3);
    mem_store_close(st);

    /* Stopped: the restore goes through and the later writes are gone. */
    assert_int_equal(mem_store_restore(fx_dbpath, bakpath, &err), MEM_OK);
    st = open_store(fx_dbpath);
    assert_int_equal(ns_count(st, "a"), 1);
    assert_true(has_seg(st, "a", "old", 1));
    assert_false(has_seg(st, "a", "new", 2));
    /* and the restored store takes writes as usual (the clock came back with it) */
    assert_int_equal(insert_one(st, "a", "after", 5), MEM_OK);
    mem_store_close(st);
}

/* A server killed without closing leaves a WAL with commits in it; a restore must not let
 * them be replayed over the restored content. */
static void test_restore_over_a_crashed_wal(void **state)
{
    mem_store_t *st = open_store(fx_dbpath);
    assert_int_equal(insert_one(st, "a", "kept", 1), MEM_OK);
    mem_store_close(st);
    assert_int_equal(mem_store_backup(fx_dbpath, bakpath, NULL), MEM_OK);

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        mem_store_t *c = NULL;
        mem_store_opts_t o = {.path = fx_dbpath,
                              .coherence_threshold = 0.55f,
                              .max_namespaces = 10,
                              .max_queue = 100,
                              .ops = mem_vec_ops()};
        if (mem_store_open(&o, &c, NULL) != MEM_OK) _exit(2);
        for (int i = 10; i < 20; i++)
            if (insert_one(c, "a", "lost", i) != MEM_OK) _exit(3);
        _exit(0); /* no close: the WAL stays */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char wal[200];
    snprintf(wal, sizeof(wal), "%s-wal", fx_dbpath);
    struct stat sb;
    assert_int_equal(stat(wal, &sb), 0);
    assert_true(sb.st_size > 0);

    assert_int_equal(mem_store_restore(fx_dbpath, bakpath, NULL), MEM_OK);
    assert_false(exists(wal) && stat(wal, &sb) == 0 && sb.st_size > 0);
    st = open_store(fx_dbpath);
    assert_int_equal(ns_count(st, "a"), 1);
    assert_true(has_seg(st, "a", "kept", 1));
    assert_false(has_seg(st, "a", "lost", 10));
    mem_store_close(st);
}

static void test_restore_validates_the_backup(void **state)
{
    mem_store_t *st = open_store(fx_dbpath);
    assert_int_equal(insert_one(st, "a", "live", 1), MEM_OK);
    mem_store_close(st);
    st = open_store(otherpath);
    for (int i = 0; i < 50; i++)
        assert_int_equal(insert_one(st, "b", "bak", i), MEM_OK);
    mem_store_close(st);
    assert_int_equal(mem_store_backup(otherpath, bakpath, NULL), MEM_OK);

    mem_err_t err;
    mem_err_clear(&err);
    /* Missing input. */
    store_fixture_rm_db(otherpath);
    assert_int_equal(mem_store_restore(fx_dbpath, otherpath, &err), MEM_ENOTFOUND);
    /* An SQLite file that is not a mnemod database. */
    store_fixture_sql(otherpath, "CREATE TABLE t(x); INSERT INTO t VALUES(1)");
    assert_int_equal(mem_store_restore(fx_dbpath, otherpath, &err), MEM_EINVAL);
    assert_true(strstr(err.msg, "not a mnemod database") != NULL);
    /* The database as its own backup. */
    assert_int_equal(mem_store_restore(fx_dbpath, fx_dbpath, &err), MEM_EINVAL);
    /* A corrupt backup: refused after the integrity check, the target untouched. */
    wipe_page_of(bakpath, "sqlite_autoindex_segments_1");
    assert_int_equal(mem_store_restore(fx_dbpath, bakpath, &err), MEM_ECORRUPT);
    assert_true(strstr(err.msg, "integrity check") != NULL);
    st = open_store(fx_dbpath);
    assert_true(has_seg(st, "a", "live", 1));
    assert_int_equal(ns_count(st, "b"), 0);
    mem_store_close(st);
}

static void test_restore_replaces_an_unreadable_file(void **state)
{
    mem_store_t *st = open_store(otherpath);
    assert_int_equal(insert_one(st, "a", "good", 1), MEM_OK);
    mem_store_close(st);
    assert_int_equal(mem_store_backup(otherpath, bakpath, NULL), MEM_OK);

    FILE *f = fopen(fx_dbpath, "wb");
    assert_non_null(f);
    for (int i = 0; i < 9000; i++)
        fputc((i * 131) & 0xff, f);
    fclose(f);
    size_t n = 0;
    assert_int_equal(mem_store_check(fx_dbpath, NULL, NULL, &n, NULL), MEM_OK);
    assert_true(n >= 1);
    assert_int_equal(mem_store_restore(fx_dbpath, bakpath, NULL), MEM_OK);
    assert_int_equal(mem_store_check(fx_dbpath, NULL, NULL, &n, NULL), MEM_OK);
    assert_int_equal(n, 0);
    st = open_store(fx_dbpath);
    assert_true(has_seg(st, "a", "good", 1));
    mem_store_close(st);
}

/* ---- check ---- */

static void test_check(void **state)
{
    size_t n = 77;
    mem_err_t err;
    mem_err_clear(&err);
    assert_int_equal(mem_store_check(fx_dbpath, NULL, NULL, &n, &err), MEM_ENOTFOUND);
    assert_int_equal(n, 77); /* untouched on failure */

    mem_store_t *st = open_store(fx_dbpath);
    for (int i = 0; i < 200; i++)
        assert_int_equal(insert_one(st, "a", "s", i), MEM_OK);
    /* While the server holds it. */
    problems_t pr = {0};
    assert_int_equal(mem_store_check(fx_dbpath, on_problem, &pr, &n, &err), MEM_OK);
    assert_int_equal(n, 0);
    assert_int_equal(pr.n, 0);
    mem_store_close(st);

    assert_int_equal(mem_store_backup(fx_dbpath, bakpath, NULL), MEM_OK);
    wipe_page_of(bakpath, "sqlite_autoindex_segments_1");
    assert_int_equal(mem_store_check(bakpath, on_problem, &pr, &n, &err), MEM_OK);
    assert_true(n >= 1);
    assert_int_equal(pr.n, (int)n);
    assert_true(strstr(pr.first, "Page") != NULL);

    /* Not a database at all: one problem naming it. */
    FILE *f = fopen(otherpath, "wb");
    assert_non_null(f);
    fputs("this is not an sqlite file, just text that is long enough to have a header......", f);
    fclose(f);
    pr.n = 0;
    assert_int_equal(mem_store_check(otherpath, on_problem, &pr, &n, &err), MEM_OK);
    assert_int_equal(n, 1);
    assert_true(strstr(pr.first, "not a database") != NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_backup_while_writing, setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_backup_errors, setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_restore_refuses_a_held_database, setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_restore_over_a_crashed_wal, setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_restore_validates_the_backup, setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_restore_replaces_an_unreadable_file, setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_check, setup, store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
