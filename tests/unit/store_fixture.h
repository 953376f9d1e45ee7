/* store_fixture.h - the temporary database every storage unit test starts from
 * SPDX-License-Identifier: MIT
 *
 * Include after <cmocka.h>. Each test runs in a fresh directory /tmp/mnemod-<tag>-XXXXXX
 * (STORE_FIXTURE_TAG, defined before the include) holding fx_dbpath; store_fixture_setup
 * and store_fixture_teardown are the cmocka setup/teardown pair. The teardown removes the
 * database files (and those of any path registered with store_fixture_extra) and then the
 * directory, which fails silently only when a test left a stray file behind.
 * store_fixture_run submits an op and waits for it, store_fixture_fill_log applies a few
 * inserts as cluster log records; store_fixture_sql and
 * store_fixture_sql_int reach a database file with SQLite itself, behind the store's back
 * (to make an old or a damaged file, or to read what was written).
 * store_fixture_kill_after_acks is the parent's side of a crash test: it reads a forked
 * writer's acknowledgements and SIGKILLs it after a given number.
 */
#ifndef MEM_TESTS_UNIT_STORE_FIXTURE_H
#define MEM_TESTS_UNIT_STORE_FIXTURE_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "core/graph.h"
#include "core/vec.h"
#include "storage/store.h"
#include "storage/store_int.h"

#ifndef STORE_FIXTURE_TAG
#define STORE_FIXTURE_TAG "store"
#endif

static char fx_tmpdir[64];
static char fx_dbpath[128];
static char fx_extra[4][128]; /* other databases a test makes in fx_tmpdir */
static size_t fx_n_extra;

/* Remove a database and its companions (WAL, shared memory, rollback journal). */
static inline void store_fixture_rm_db(const char *path)
{
    char p[200];
    const char *suffix[] = {"", "-wal", "-shm", "-journal"};
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof(p), "%.180s%s", path, suffix[i]);
        unlink(p);
    }
}

/* The path of another database file name in the test's directory, removed at teardown. */
static inline const char *store_fixture_extra(const char *name)
{
    if (fx_n_extra == sizeof(fx_extra) / sizeof(fx_extra[0])) abort();
    char *p = fx_extra[fx_n_extra++];
    snprintf(p, sizeof(fx_extra[0]), "%s/%s", fx_tmpdir, name);
    return p;
}

static inline int store_fixture_setup(void **state)
{
    (void)state;
    snprintf(fx_tmpdir, sizeof(fx_tmpdir), "/tmp/mnemod-%s-XXXXXX", STORE_FIXTURE_TAG);
    if (!mkdtemp(fx_tmpdir)) return -1;
    snprintf(fx_dbpath, sizeof(fx_dbpath), "%s/test.db", fx_tmpdir);
    fx_n_extra = 0;
    return 0;
}

static inline int store_fixture_teardown(void **state)
{
    (void)state;
    store_fixture_rm_db(fx_dbpath);
    for (size_t i = 0; i < fx_n_extra; i++)
        store_fixture_rm_db(fx_extra[i]);
    fx_n_extra = 0;
    rmdir(fx_tmpdir);
    return 0;
}

/* The options most tests open with: fx_dbpath, no fsync, threshold 0.55, room to spare. */
static inline mem_store_opts_t store_fixture_opts(void)
{
    mem_store_opts_t o = {
        .path = fx_dbpath,
        .sync_full = false,
        .coherence_threshold = 0.55f,
        .max_namespaces = 100,
        .max_queue = 100000,
        .ops = mem_vec_ops(),
        .graph_wait_ms = 60000, /* reads that need the graph wait for it (tests: long) */
    };
    return o;
}

/* Open with o, which must succeed (the error is printed when it does not). */
static inline mem_store_t *store_fixture_open(const mem_store_opts_t *o)
{
    mem_store_t *st = NULL;
    mem_err_t err;
    mem_err_clear(&err);
    int rc = mem_store_open(o, &st, &err);
    if (rc != MEM_OK) fprintf(stderr, "open %s: %s\n", o->path, err.msg);
    assert_int_equal(rc, MEM_OK);
    return st;
}

/* Submit op and wait until the writer is done with it: op->rc (which holds the submit's own
 * refusal, MEM_EBUSY, when the op was not queued). No cmocka assert: threads and forked
 * children of a test may call it. */
static inline int store_fixture_run(mem_store_t *st, mem_store_op_t *op)
{
    if (mem_store_submit(st, op, NULL, NULL) == MEM_OK) mem_store_sync(st);
    return op->rc;
}

/* n one-segment inserts into ns (dimension STORE_FIXTURE_LOG_DIM, ids "NS-I", text "some
 * text") applied as chain records of the cluster log stream from seq0 on, each with its
 * record's clock: what a node applying the log writes. */
#define STORE_FIXTURE_LOG_DIM 4
static inline void store_fixture_fill_log(mem_store_t *st, const char *ns, int n,
                                          const char *stream, uint64_t seq0)
{
    for (int i = 0; i < n; i++) {
        float v[STORE_FIXTURE_LOG_DIM] = {1.0f, (float)i / 10.0f, (float)(i % 3), 0.5f};
        float norm = 0;
        for (int k = 0; k < STORE_FIXTURE_LOG_DIM; k++)
            norm += v[k] * v[k];
        for (int k = 0; k < STORE_FIXTURE_LOG_DIM; k++)
            v[k] /= __builtin_sqrtf(norm);
        mem_store_seg_in_t seg;
        mem_store_seg_out_t out;
        memset(&seg, 0, sizeof(seg));
        snprintf(seg.id, sizeof(seg.id), "%s-%d", ns, i);
        seg.ts_given = true;
        seg.ts_ms = 1000 + i;
        seg.vec = v;
        seg.text = "some text";
        seg.text_len = 9;
        mem_store_op_t op;
        memset(&op, 0, sizeof(op));
        op.kind = MEM_STORE_OP_INSERT;
        snprintf(op.ns, sizeof(op.ns), "%s", ns);
        op.dim = STORE_FIXTURE_LOG_DIM;
        op.segs = &seg;
        op.outs = &out;
        op.n_segs = 1;
        op.log_stream = stream;
        op.log_seq = seq0 + (uint64_t)i;
        op.log_chain = true;
        op.log_prev = i ? seq0 + (uint64_t)i - 1 : 0;
        op.now_ms = INT64_C(1780000000000) + (int64_t)op.log_seq; /* the record's clock */
        if (store_fixture_run(st, &op) != MEM_OK) fail_msg("%s #%d: %s", ns, i, op.err.msg);
    }
}

/* Run sql on the database file at path with SQLite itself. */
static inline void store_fixture_sql(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 10000); /* an open store's writer may hold the lock a moment */
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

/* The integer of query's first row and column, read from the file at path with SQLite
 * itself; query must return a row. */
static inline int64_t store_fixture_sql_int(const char *path, const char *query)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, query, -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    return v;
}

/* mem_store_settle, which must succeed: every graph caught up and its checkpoint written
 * (a checkpoint that failed in its writer group is tried again by it). */
static inline void store_fixture_settle(mem_store_t *st)
{
    assert_int_equal(mem_store_settle(st, NULL), MEM_OK);
}

/* After store_fixture_settle: the namespace's graph equals a from-scratch rebuild of its active
 * rows (made on a copy: the live index is not the test's to change), and so do its stats. */
static inline void store_fixture_graph_exact(mem_store_t *st, const char *name, float threshold)
{
    mem_store_ns_t *ns = mem_store__ns_acquire(st, name);
    assert_non_null(ns);
    const mem_index_t *idx = mem_store__read_lock(ns);
    mem_index_t *copy = NULL;
    size_t n = mem_index_rows(idx);
    size_t *remap = malloc((n + 1) * sizeof(*remap));
    assert_non_null(remap);
    assert_int_equal(mem_index_vacuum(idx, &copy), MEM_OK);
    mem_index_vacuum_remap(idx, remap);
    assert_int_equal(mem_graph_rebuild(copy, threshold, mem_vec_ops()), MEM_OK);
    for (size_t p = 0; p < n; p++)
        if (remap[p] != SIZE_MAX) {
            assert_int_equal(mem_index_linked(idx, p), mem_index_flags(idx, p) == 0);
            assert_int_equal(mem_index_degree(idx, p), mem_index_degree(copy, remap[p]));
        }
    mem_index_counts_t live, fresh;
    mem_index_counts(idx, &live);
    mem_index_counts(copy, &fresh);
    assert_int_equal(live.graph_edges, fresh.graph_edges);
    assert_int_equal(live.max_degree, fresh.max_degree);
    mem_store__read_unlock(ns);
    mem_store_ns_stats_t s;
    assert_int_equal(mem_store_ns_stats(st, name, &s, NULL), MEM_OK);
    assert_int_equal(s.graph_edges, fresh.graph_edges);
    assert_int_equal(s.max_degree, fresh.max_degree);
    mem_index_free(copy);
    free(remap);
    mem_store__ns_release(ns);
}

/* Read the child's acknowledgements (one uint32_t batch number each) from fd until it
 * closes, SIGKILL the child once kill_after of them have arrived, close fd and reap the
 * child. Returns 1 + the highest batch acknowledged; *status is the child's wait status. */
static inline uint32_t store_fixture_kill_after_acks(pid_t pid, int fd, uint32_t kill_after,
                                                     int *status)
{
    uint32_t n_acks = 0, max_ack = 0, k;
    bool killed = false;
    while (read(fd, &k, sizeof(k)) == (ssize_t)sizeof(k)) {
        n_acks++;
        if (k + 1 > max_ack) max_ack = k + 1;
        if (!killed && n_acks >= kill_after) {
            kill(pid, SIGKILL);
            killed = true;
        }
    }
    close(fd);
    waitpid(pid, status, 0);
    return max_ack;
}

#endif
