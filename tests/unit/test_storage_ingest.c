/* test_storage_ingest.c - the ingest path's own machinery: the WAL checkpointer beside the
 * writer, and what a durable batch keeps across SIGKILL while checkpoints run
 * SPDX-License-Identifier: MIT
 */
/* cmocka.h needs stdarg.h, stddef.h and setjmp.h first */
/* clang-format off */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
/* clang-format on */

#include <sqlite3.h>

#include "core/index_int.h"
#include "core/lexidx.h"
#include "core/scan.h"
#include "storage/store.h"
#include "storage/store_int.h"

#define STORE_FIXTURE_TAG "ingest"
#include "tests/unit/store_fixture.h"

#define DIM   384
#define BATCH 200

typedef struct big_batch {
    mem_store_op_t op;
    mem_store_seg_in_t segs[BATCH];
    mem_store_seg_out_t outs[BATCH];
    float v[BATCH][DIM];
    uint32_t k;
} big_batch_t;

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Batch k of namespace ns: ids "k-j", random unit-ish vectors, timestamps in order. */
static void fill_batch(big_batch_t *b, const char *ns, uint32_t k)
{
    memset(&b->op, 0, sizeof(b->op));
    uint64_t s = 1000003u * k + 17;
    for (int j = 0; j < BATCH; j++) {
        mem_store_seg_in_t *g = &b->segs[j];
        memset(g, 0, sizeof(*g));
        snprintf(g->id, sizeof(g->id), "%u-%d", k, j);
        double n2 = 0;
        for (int d = 0; d < DIM; d++) {
            b->v[j][d] = (float)((double)(splitmix(&s) >> 11) / 9007199254740992.0 - 0.5);
            n2 += (double)b->v[j][d] * b->v[j][d];
        }
        for (int d = 0; d < DIM; d++)
            b->v[j][d] = (float)(b->v[j][d] / sqrt(n2));
        g->vec = b->v[j];
        g->text = "a memory written in a big batch";
        g->text_len = strlen(g->text);
        g->ts_given = true;
        g->ts_ms = 1000 + (int64_t)k * BATCH + j;
    }
    b->k = k;
    b->op.kind = MEM_STORE_OP_INSERT;
    snprintf(b->op.ns, sizeof(b->op.ns), "%s", ns);
    b->op.dim = DIM;
    b->op.now_ms = 1000;
    b->op.segs = b->segs;
    b->op.outs = b->outs;
    b->op.n_segs = BATCH;
    b->op.batch = true;
}

static off_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? sb.st_size : -1;
}

/* The WAL reaches the main file while the store is open and the writer goes on: a passive
 * checkpoint runs on its own connection once the WAL holds enough pages. */
static void test_wal_checkpointed_while_open(void **state)
{
    (void)state;
    mem_store_opts_t o = store_fixture_opts();
    mem_store_t *st = store_fixture_open(&o);
    assert_true(st->ck_started);
    big_batch_t *b = malloc(sizeof(*b));
    assert_non_null(b);
    off_t before = file_size(fx_dbpath);
    /* 15 batches of 200 x 384 floats: about 4.8 MB of rows, well past the 1000 pages */
    for (uint32_t k = 0; k < 15; k++) {
        fill_batch(b, "ck", k);
        assert_int_equal(store_fixture_run(st, &b->op), MEM_OK);
    }
    off_t after = before;
    for (int i = 0; i < 200 && after < before + (off_t)3 * 1024 * 1024; i++) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        after = file_size(fx_dbpath);
    }
    if (after < before + (off_t)3 * 1024 * 1024)
        fail_msg("main file %lld -> %lld bytes: the WAL was not checkpointed", (long long)before,
                 (long long)after);
    /* and the rows read back whole */
    mem_store_ns_stats_t s;
    mem_err_t err;
    assert_int_equal(mem_store_ns_stats(st, "ck", &s, &err), MEM_OK);
    assert_int_equal(s.count, 15 * BATCH);
    mem_store_close(st);
    free(b);
}

/* ---- SIGKILL while big durable batches are written and checkpointed ---- */

static int ack_fd;
static void on_ack(mem_store_op_t *op, void *ud)
{
    big_batch_t *b = ud;
    if (op->rc != MEM_OK) _exit(3);
    if (write(ack_fd, &b->k, sizeof(b->k)) != (ssize_t)sizeof(b->k)) _exit(4);
}

static void writer_child(int fd)
{
    ack_fd = fd;
    mem_store_opts_t o = store_fixture_opts();
    o.sync_full = true;
    mem_store_t *st = NULL;
    if (mem_store_open(&o, &st, NULL) != MEM_OK) _exit(2);
    enum { SLOTS = 4 };
    big_batch_t *b = calloc(SLOTS, sizeof(*b));
    if (!b) _exit(6);
    for (uint32_t k = 0;; k++) {
        if (k >= SLOTS) mem_store_sync(st); /* the slot's previous batch is done */
        fill_batch(&b[k % SLOTS], "kill", k);
        if (mem_store_submit(st, &b[k % SLOTS].op, on_ack, &b[k % SLOTS]) != MEM_OK) _exit(5);
    }
}

/* Every acknowledged batch is there after SIGKILL, whole, and the batches form a prefix;
 * the kill lands after 12 to 27 batches, when checkpoints have begun (about 80 WAL pages a
 * batch, one every 1000). */
static void test_kill_during_checkpoints_loses_no_ack(void **state)
{
    (void)state;
    uint64_t seed = (uint64_t)time(NULL);
    const char *env = getenv("MNEMOD_TEST_SEED");
    if (env) seed = strtoull(env, NULL, 10);
    for (int cycle = 0; cycle < 2; cycle++) {
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            writer_child(fds[1]);
        }
        close(fds[1]);
        uint32_t kill_after = 12 + (uint32_t)(splitmix(&seed) % 16);
        int status;
        uint32_t max_ack = store_fixture_kill_after_acks(pid, fds[0], kill_after, &status);
        if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
            fail_msg("seed %llu: child ended with status %d", (unsigned long long)seed, status);
        mem_store_opts_t o = store_fixture_opts();
        mem_store_t *st = store_fixture_open(&o);
        mem_store_ns_stats_t s;
        mem_err_t err;
        assert_int_equal(mem_store_ns_stats(st, "kill", &s, &err), MEM_OK);
        if (s.count % BATCH || s.count / BATCH < max_ack)
            fail_msg("seed %llu cycle %d: %zu rows after %u acknowledged batches",
                     (unsigned long long)seed, cycle, (size_t)s.count, max_ack);
        for (uint32_t b = 0; b < s.count / BATCH; b++) { /* a prefix of whole batches */
            char id[32];
            snprintf(id, sizeof(id), "%u-%d", b, BATCH - 1);
            mem_store_segment_t *seg = NULL;
            int rc = mem_store_get(st, "kill", id, false, &seg, &err);
            if (rc != MEM_OK)
                fail_msg("seed %llu cycle %d: %s missing", (unsigned long long)seed, cycle, id);
            mem_store_segment_free(seg);
        }
        mem_store_close(st);
        store_fixture_rm_db(fx_dbpath);
    }
}

/* ---- the writer's WAL writes gathered (walbuf.c) ---- */

/* With synchronous=FULL the writer's connection writes its WAL through the gathering VFS;
 * every commit's frames are on file before another connection can see them: after each
 * single insert and each batch (300 KB of frames, past the buffer and its 64 KiB pieces),
 * a connection of its own reads every row back whole, the database passes SQLite's
 * integrity check through the WAL, and all of it is there after a reopen. */
static void test_walbuf_commits_read_by_others(void **state)
{
    (void)state;
    mem_store_opts_t o = store_fixture_opts();
    o.sync_full = true;
    mem_store_t *st = store_fixture_open(&o);
    sqlite3_vfs *vfs = NULL;
    assert_int_equal(sqlite3_file_control(st->db, "main", SQLITE_FCNTL_VFS_POINTER, &vfs),
                     SQLITE_OK);
    assert_non_null(vfs);
    assert_string_equal(vfs->zName, mem_store__walbuf_vfs());
    sqlite3 *other = NULL;
    assert_int_equal(sqlite3_open_v2(fx_dbpath, &other, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_busy_timeout(other, 10000);
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_prepare_v2(other,
                                        "SELECT count(*), sum(length(embedding) = ?1),"
                                        " sum(text = 'a memory written in a big batch')"
                                        " FROM segments",
                                        -1, &q, NULL),
                     SQLITE_OK);
    big_batch_t *b = malloc(sizeof(*b));
    assert_non_null(b);
    int64_t want = 0;
    for (uint32_t k = 0; k < 12; k++) {
        fill_batch(b, "wb", k);
        if (k % 3 != 2) b->op.n_segs = 1; /* single inserts, and every third a batch */
        b->op.batch = b->op.n_segs > 1;
        assert_int_equal(store_fixture_run(st, &b->op), MEM_OK);
        want += (int64_t)b->op.n_segs;
        sqlite3_bind_int(q, 1, DIM * (int)sizeof(float));
        assert_int_equal(sqlite3_step(q), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int64(q, 0), want);
        assert_int_equal(sqlite3_column_int64(q, 1), want);
        assert_int_equal(sqlite3_column_int64(q, 2), want);
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    assert_int_equal(sqlite3_prepare_v2(other, "PRAGMA integrity_check", -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0), "ok");
    sqlite3_finalize(q);
    sqlite3_close(other);
    mem_store_close(st);
    free(b);
    st = store_fixture_open(&o);
    mem_store_ns_stats_t s;
    mem_err_t err;
    assert_int_equal(mem_store_ns_stats(st, "wb", &s, &err), MEM_OK);
    assert_int_equal(s.count, (size_t)want);
    mem_store_close(st);
}

/* ---- segments prepared on the request's thread (mem_store_prepare) ---- */

static const char *const TEXTS[] = {
    "The quick brown fox jumps over the lazy dog",
    "quick quick QUICK: foxes, dogs; and the Über-café naïve résumé",
    "I'm meeting Anna at 10:30 at the café on Rue de l'Église",
    "deploy failed: error code 0x1F at src/storage/writer.c line 512",
    "fox",
    "",
    "日本語のテキストと English mixed 123 456",
    "a memory written in a big batch about foxes and dogs",
};
#define N_TEXTS (sizeof(TEXTS) / sizeof(TEXTS[0]))

static void text_query(mem_store_t *st, const char *ns, const char *q, mem_scan_match_t match,
                       const float *qv, mem_store_result_t **res, size_t *n)
{
    mem_store_query_t qq;
    memset(&qq, 0, sizeof(qq));
    qq.scan.query = qv;
    qq.scan.k = 10;
    qq.scan.origin_ms = 100000;
    qq.scan.since_ms = INT64_MIN;
    qq.scan.until_ms = INT64_MAX;
    qq.scan.source = -1;
    qq.scan.match = match;
    qq.scan.text_weight = 0.5;
    qq.q_dim = DIM;
    qq.text = q;
    qq.text_len = strlen(q);
    qq.lex = MEM_LEXPARAMS_DEFAULTS;
    qq.lex.gram_weight = 0.3; /* the trigram field counts too */
    size_t scanned;
    const char *kernel;
    mem_err_t err;
    assert_int_equal(mem_store_retrieve(st, ns, &qq, res, n, &scanned, &kernel, &err), MEM_OK);
}

/* Terms and codes made by mem_store_prepare are the writer's own: a namespace filled with
 * prepared segments has the same int8 codes, scales and error bounds row for row, and
 * answers text and hybrid queries with the same hits and the same scores, as one the
 * writer filled itself; with the trigram field on. A prep of another dimension is not
 * used. */
static void test_prepared_equals_writer_made(void **state)
{
    (void)state;
    mem_store_opts_t o = store_fixture_opts();
    o.text_grams = true;
    mem_store_t *st = store_fixture_open(&o);
    big_batch_t *b = malloc(sizeof(*b));
    assert_non_null(b);
    const char *names[2] = {"made", "prep"};
    for (int v = 0; v < 2; v++) {
        fill_batch(b, names[v], 0);
        for (int j = 0; j < BATCH; j++) {
            b->segs[j].text = j % 9 == 8 ? NULL : TEXTS[j % N_TEXTS];
            b->segs[j].text_len = b->segs[j].text ? strlen(b->segs[j].text) : 0;
        }
        mem_store_prep_t *prep = NULL;
        if (v == 1) {
            assert_int_equal(mem_store_prepare(st, b->segs, BATCH, DIM, &prep), MEM_OK);
            assert_non_null(prep);
            for (int j = 0; j < BATCH; j++)
                assert_non_null(b->segs[j].prep);
        }
        assert_int_equal(store_fixture_run(st, &b->op), MEM_OK);
        mem_store_prep_free(prep);
    }
    mem_store_ns_t *a = mem_store__reg_find(st, "made"), *p = mem_store__reg_find(st, "prep");
    assert_non_null(a);
    assert_non_null(p);
    const mem_index_t *ia = mem_store__read_lock(a), *ip = mem_store__read_lock(p);
    assert_int_equal(mem_index_rows(ia), BATCH);
    assert_int_equal(mem_index_rows(ip), BATCH);
    for (size_t r = 0; r < BATCH; r++) {
        const mem_index_block_t *ba = ia->blocks[r / MEM_INDEX_BLOCK_ROWS];
        const mem_index_block_t *bp = ip->blocks[r / MEM_INDEX_BLOCK_ROWS];
        size_t k = r % MEM_INDEX_BLOCK_ROWS;
        assert_memory_equal(ba->q8 + k * ia->stride, bp->q8 + k * ip->stride, DIM);
        assert_true(ba->q8_scale[k] == bp->q8_scale[k] && ba->q8_err[k] == bp->q8_err[k]);
    }
    mem_store__read_unlock(p);
    mem_store__read_unlock(a);
    static const char *const QS[] = {"quick fox", "café résumé",    "error writer.c",
                                     "日本語",    "dogs and foxes", "Église 10:30",
                                     "qui"};
    for (size_t q = 0; q < sizeof(QS) / sizeof(QS[0]); q++)
        for (int m = 0; m < 2; m++) {
            mem_scan_match_t match = m ? MEM_SCAN_MATCH_HYBRID : MEM_SCAN_MATCH_TEXT;
            mem_store_result_t *ra, *rp;
            size_t na, np;
            text_query(st, "made", QS[q], match, b->v[3], &ra, &na);
            text_query(st, "prep", QS[q], match, b->v[3], &rp, &np);
            assert_int_equal(na, np);
            for (size_t i = 0; i < na; i++) {
                assert_string_equal(ra[i].id, rp[i].id);
                assert_true(ra[i].hit.score == rp[i].hit.score);
            }
            if (m == 0 && q < 2) assert_true(na > 0); /* the queries do find something */
            mem_store_results_free(ra, na);
            mem_store_results_free(rp, np);
        }
    /* a prep of another dimension is ignored: the writer quantises itself */
    fill_batch(b, "other", 0);
    mem_store_prep_t *prep = NULL;
    assert_int_equal(mem_store_prepare(st, b->segs, BATCH, DIM - 1, &prep), MEM_OK);
    assert_int_equal(store_fixture_run(st, &b->op), MEM_OK);
    mem_store_prep_free(prep);
    mem_store_ns_t *x = mem_store__reg_find(st, "other");
    const mem_index_t *ix = mem_store__read_lock(x);
    uint8_t codes[DIM];
    float sc, er;
    mem_vec_quantize_u8(b->v[5], DIM, codes, &sc, &er);
    assert_memory_equal(ix->blocks[0]->q8 + 5 * ix->stride, codes, DIM);
    assert_true(ix->blocks[0]->q8_scale[5] == sc && ix->blocks[0]->q8_err[5] == er);
    mem_store__read_unlock(x);
    mem_store_close(st);
    free(b);
}

/* A prepared batch the writer refuses (one member's timestamp goes back) writes nothing and
 * leaves nothing behind: no row, no term, no count; the same batch corrected, prepared
 * again, goes in whole. */
static void test_refused_prepared_batch_writes_nothing(void **state)
{
    (void)state;
    mem_store_opts_t o = store_fixture_opts();
    mem_store_t *st = store_fixture_open(&o);
    big_batch_t *b = malloc(sizeof(*b));
    assert_non_null(b);
    fill_batch(b, "r", 0);
    assert_int_equal(store_fixture_run(st, &b->op), MEM_OK); /* newest: 1000 + BATCH - 1 */
    fill_batch(b, "r", 1);
    for (int j = 0; j < BATCH; j++) {
        b->segs[j].text = "zebra crossing";
        b->segs[j].text_len = strlen(b->segs[j].text);
    }
    b->segs[150].ts_ms = 5; /* older than what is stored */
    mem_store_prep_t *prep = NULL;
    assert_int_equal(mem_store_prepare(st, b->segs, BATCH, DIM, &prep), MEM_OK);
    assert_int_equal(store_fixture_run(st, &b->op), MEM_ENONMONO);
    assert_string_equal(b->op.err.field, "segments[150].timestamp");
    mem_store_prep_free(prep);
    mem_store_ns_stats_t s;
    mem_err_t err;
    assert_int_equal(mem_store_ns_stats(st, "r", &s, &err), MEM_OK);
    assert_int_equal(s.count, BATCH);
    mem_store_result_t *res;
    size_t n;
    text_query(st, "r", "zebra", MEM_SCAN_MATCH_TEXT, b->v[0], &res, &n);
    assert_int_equal(n, 0);
    mem_store_results_free(res, n);
    mem_store_segment_t *seg = NULL;
    assert_int_equal(mem_store_get(st, "r", "1-0", false, &seg, &err), MEM_ENOTFOUND);

    b->segs[150].ts_ms = 1000 + BATCH + 150;
    assert_int_equal(mem_store_prepare(st, b->segs, BATCH, DIM, &prep), MEM_OK);
    assert_int_equal(store_fixture_run(st, &b->op), MEM_OK);
    mem_store_prep_free(prep);
    assert_int_equal(mem_store_ns_stats(st, "r", &s, &err), MEM_OK);
    assert_int_equal(s.count, 2 * BATCH);
    text_query(st, "r", "zebra", MEM_SCAN_MATCH_TEXT, b->v[0], &res, &n);
    assert_int_equal(n, 10); /* k */
    mem_store_results_free(res, n);
    mem_store_close(st);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_wal_checkpointed_while_open, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_kill_during_checkpoints_loses_no_ack,
                                        store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_walbuf_commits_read_by_others, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_prepared_equals_writer_made, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_refused_prepared_batch_writes_nothing,
                                        store_fixture_setup, store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
