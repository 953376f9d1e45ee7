/* test_storage_textcache.c - the answers' texts cache: bounds, the patch guard, and answers
 * through the store that equal what SQLite holds after patch, delete, supersede, compaction
 * and restart, with the cache large, tiny and off
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "storage/store.h"
#include "storage/store_int.h"
#include "storage/textcache_int.h"

#define STORE_FIXTURE_TAG "txc"
#include "tests/unit/store_fixture.h"

#define DIM   8
#define N_SEG 200

/* ---- the module alone ---- */

static mem_store_result_t row(int64_t seq, const char *text, const char *source,
                              const char *metadata)
{
    mem_store_result_t r;
    memset(&r, 0, sizeof(r));
    r.hit.seq = seq;
    r.text = (char *)text;
    r.source = (char *)source;
    r.metadata = (char *)metadata;
    return r;
}

/* The copies get1 made (one answer at a time; free_cols releases them). */
static mem_arena_t got_arena;

/* get one seq: true with copies in *out (released by free_cols) when cached */
static bool get1(mem_store__txc_t *c, int64_t ns_id, int64_t seq, mem_store_result_t *out,
                 mem_store__txc_ticket_t *ticket)
{
    mem_arena_free(&got_arena); /* *out overwritten: what it pointed to goes */
    memset(out, 0, sizeof(*out));
    out->hit.seq = seq;
    bool found = false;
    size_t bytes = 0;
    mem_store__txc_ticket_t t;
    assert_int_equal(mem_store__txc_get(c, ns_id, &got_arena, out, 1, &found, &bytes, &t), MEM_OK);
    if (ticket) *ticket = t;
    return found;
}

static void put1(mem_store__txc_t *c, mem_store__txc_ticket_t t, int64_t ns_id,
                 const mem_store_result_t *r)
{
    bool found = false;
    mem_store__txc_put(c, t, ns_id, r, &found, 1);
}

static void free_cols(mem_store_result_t *r)
{
    mem_arena_free(&got_arena);
    memset(r, 0, sizeof(*r));
}

static void test_module_roundtrip_and_nulls(void **state)
{
    (void)state;
    mem_store__txc_t *c = NULL;
    assert_int_equal(mem_store__txc_new(1 << 20, &c), MEM_OK);
    mem_store_result_t got;
    mem_store__txc_ticket_t t;
    assert_false(get1(c, 1, 5, &got, &t));
    mem_store_result_t r = row(5, "hello", NULL, "{\"a\":1}");
    put1(c, t, 1, &r);
    assert_true(get1(c, 1, 5, &got, NULL));
    assert_string_equal(got.text, "hello");
    assert_null(got.source);
    assert_string_equal(got.metadata, "{\"a\":1}");
    free_cols(&got);
    /* the same seq of another namespace is another row */
    assert_false(get1(c, 2, 5, &got, NULL));
    /* empty strings stay empty strings, not NULL */
    assert_false(get1(c, 1, 6, &got, &t));
    r = row(6, "", "", NULL);
    put1(c, t, 1, &r);
    assert_true(get1(c, 1, 6, &got, NULL));
    assert_string_equal(got.text, "");
    assert_string_equal(got.source, "");
    assert_null(got.metadata);
    free_cols(&got);
    mem_store__txc_stats_t s;
    mem_store__txc_stats(c, &s);
    assert_int_equal(s.entries, 2);
    assert_int_equal(s.hits, 2);
    assert_int_equal(s.misses, 3);
    mem_store__txc_free(c);
    /* no cache: finds nothing, keeps nothing */
    assert_int_equal(mem_store__txc_new(0, &c), MEM_OK);
    assert_null(c);
    assert_false(get1(NULL, 1, 5, &got, &t));
    put1(NULL, t, 1, &r);
    mem_store__txc_forget(NULL, 1, 5);
    mem_store__txc_settled(NULL);
    mem_store__txc_free(NULL);
}

static void test_module_bound_and_recency(void **state)
{
    (void)state;
    const size_t max = 64 * 1024;
    mem_store__txc_t *c = NULL;
    assert_int_equal(mem_store__txc_new(max, &c), MEM_OK);
    char text[200];
    memset(text, 'x', sizeof(text) - 1);
    text[sizeof(text) - 1] = '\0';
    mem_store__txc_ticket_t t;
    mem_store_result_t got;
    for (int64_t seq = 1; seq <= 2000; seq++) {
        assert_false(get1(c, 1, seq, &got, &t));
        mem_store_result_t r = row(seq, text, "src", NULL);
        put1(c, t, 1, &r);
        if (seq > 1) { /* keep seq 1 the most recently answered */
            assert_true(get1(c, 1, 1, &got, NULL));
            free_cols(&got);
        }
        mem_store__txc_stats_t s;
        mem_store__txc_stats(c, &s);
        assert_true(s.bytes <= max);
    }
    mem_store__txc_stats_t s;
    mem_store__txc_stats(c, &s);
    size_t each = MEM_STORE__TXC_ENTRY_BYTES + sizeof(text) + 4;
    assert_int_equal(s.entries, max / each);
    assert_true(s.evictions > 0);
    assert_true(get1(c, 1, 1, &got, NULL)); /* answered again and again: kept */
    free_cols(&got);
    assert_true(get1(c, 1, 2000, &got, NULL)); /* the newest: kept */
    free_cols(&got);
    assert_false(get1(c, 1, 2, &got, NULL)); /* the oldest others: evicted */
    /* an entry over an eighth of the bound is not kept */
    char *huge = malloc(max / 8 + 1);
    memset(huge, 'y', max / 8);
    huge[max / 8] = '\0';
    assert_false(get1(c, 1, 9999, &got, &t));
    mem_store_result_t r = row(9999, huge, NULL, NULL);
    put1(c, t, 1, &r);
    assert_false(get1(c, 1, 9999, &got, NULL));
    free(huge);
    mem_store__txc_free(c);
}

static void test_module_patch_guard(void **state)
{
    (void)state;
    mem_store__txc_t *c = NULL;
    assert_int_equal(mem_store__txc_new(1 << 20, &c), MEM_OK);
    mem_store_result_t got, old = row(7, "t", "old", NULL);
    mem_store__txc_ticket_t t;
    /* a reader that looked before a patch began adds nothing after it began */
    assert_false(get1(c, 1, 7, &got, &t));
    mem_store__txc_forget(c, 1, 7);
    put1(c, t, 1, &old);
    assert_false(get1(c, 1, 7, &got, NULL));
    /* nor one that looked while it was in progress, even after it settled */
    assert_false(get1(c, 1, 7, &got, &t));
    mem_store__txc_settled(c);
    put1(c, t, 1, &old);
    assert_false(get1(c, 1, 7, &got, NULL));
    /* nor one that looked before a whole patch came and settled */
    assert_false(get1(c, 1, 7, &got, &t));
    mem_store__txc_forget(c, 1, 7);
    mem_store__txc_settled(c);
    put1(c, t, 1, &old);
    assert_false(get1(c, 1, 7, &got, NULL));
    /* one that looked after it settled does */
    assert_false(get1(c, 1, 7, &got, &t));
    mem_store_result_t fresh = row(7, "t", "new", NULL);
    put1(c, t, 1, &fresh);
    assert_true(get1(c, 1, 7, &got, NULL));
    assert_string_equal(got.source, "new");
    free_cols(&got);
    /* a patch drops the entry at once */
    mem_store__txc_forget(c, 1, 7);
    assert_false(get1(c, 1, 7, &got, NULL));
    mem_store__txc_settled(c);
    /* a reader that looked before a put of another seq came in still adds its own */
    assert_false(get1(c, 1, 8, &got, &t));
    mem_store_result_t r8 = row(8, "eight", NULL, NULL);
    put1(c, t, 1, &r8);
    assert_true(get1(c, 1, 8, &got, NULL));
    free_cols(&got);
    mem_store__txc_free(c);
}

/* ---- through the store, against SQLite ---- */

static float vecs[N_SEG][DIM];
static mem_store_seg_in_t segs[N_SEG];
static mem_store_seg_out_t outs[N_SEG];
/* every 9th text is long: an answer's strings then outgrow its arena's first blocks (and
 * one takes a block of its own), which the comparison with SQLite reads through */
static char ids[N_SEG][16], texts[N_SEG][3000], metas[N_SEG][48];
static const char *sup_of[N_SEG][2];

static void make_vec(float *v, uint64_t seed)
{
    double n = 0;
    for (int d = 0; d < DIM; d++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        v[d] = (float)((double)(seed >> 11) / 9007199254740992.0 - 0.5);
        n += (double)v[d] * v[d];
    }
    for (int d = 0; d < DIM; d++)
        v[d] = (float)(v[d] / sqrt(n));
}

static mem_store_t *open_cache(size_t bytes)
{
    mem_store_opts_t o = store_fixture_opts();
    o.text_cache_bytes = bytes;
    return store_fixture_open(&o);
}

static void load(mem_store_t *st)
{
    mem_store_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = MEM_STORE_OP_NS_CREATE;
    snprintf(op.ns, sizeof(op.ns), "t");
    op.dim = DIM;
    assert_int_equal(store_fixture_run(st, &op), MEM_OK);
    for (int i = 0; i < N_SEG; i++) {
        memset(&segs[i], 0, sizeof(segs[i]));
        snprintf(ids[i], sizeof(ids[i]), "s%03d", i);
        snprintf(segs[i].id, sizeof(segs[i].id), "%.15s", ids[i]);
        segs[i].ts_given = true;
        segs[i].ts_ms = 1000 * (int64_t)i;
        snprintf(texts[i], sizeof(texts[i]), "text number %d", i);
        if (i % 9 == 4) { /* 1200 to 2990 bytes */
            size_t len = 1200 + (size_t)i * 9;
            for (size_t j = strlen(texts[i]); j < len; j++)
                texts[i][j] = (char)('a' + (j * 7 + (size_t)i) % 26);
            texts[i][len] = '\0';
        }
        if (i % 5 != 1) {
            segs[i].text = texts[i];
            segs[i].text_len = strlen(texts[i]);
        }
        if (i % 3 == 0) {
            segs[i].source = i % 2 ? "mail" : "chat";
            segs[i].source_len = 4;
        }
        if (i % 4 == 2) {
            snprintf(metas[i], sizeof(metas[i]), "{\"n\":%d}", i);
            segs[i].metadata = metas[i];
            segs[i].metadata_len = strlen(metas[i]);
        }
        if (i >= 150 && i % 10 == 0) { /* supersedes an older one */
            sup_of[i][0] = ids[i - 100];
            segs[i].supersedes = sup_of[i];
            segs[i].n_supersedes = 1;
        }
        make_vec(vecs[i], (uint64_t)i % 17 + 1);
        segs[i].vec = vecs[i];
    }
    memset(&op, 0, sizeof(op));
    op.kind = MEM_STORE_OP_INSERT;
    snprintf(op.ns, sizeof(op.ns), "t");
    op.dim = DIM;
    op.now_ms = 1000000;
    op.segs = segs;
    op.outs = outs;
    op.n_segs = N_SEG;
    op.batch = true;
    assert_int_equal(store_fixture_run(st, &op), MEM_OK);
}

static int simple(mem_store_t *st, mem_store_op_kind_t kind, const char *id)
{
    mem_store_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = kind;
    snprintf(op.ns, sizeof(op.ns), "t");
    snprintf(op.id, sizeof(op.id), "%.15s", id);
    op.now_ms = 1000000;
    return store_fixture_run(st, &op);
}

static int patch(mem_store_t *st, const char *id, const char *metadata, bool set_source,
                 const char *source)
{
    mem_store_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = MEM_STORE_OP_PATCH;
    snprintf(op.ns, sizeof(op.ns), "t");
    snprintf(op.id, sizeof(op.id), "%.15s", id);
    op.now_ms = 1000000;
    op.patch_metadata = metadata != NULL;
    op.metadata = metadata;
    op.metadata_len = metadata ? strlen(metadata) : 0;
    op.patch_source = set_source;
    op.source = source;
    op.source_len = source ? strlen(source) : 0;
    return store_fixture_run(st, &op);
}

static bool same(const char *a, const unsigned char *b)
{
    if (!a || !b) return !a && !b;
    return strcmp(a, (const char *)b) == 0;
}

/* Every result's text, source and metadata equal the row's in SQLite, read behind the
 * store's back. */
static void check_against_sqlite(const mem_store_result_t *res, size_t n)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(fx_dbpath, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *s = NULL;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT s.text, s.source, s.metadata FROM segments s"
                                        " JOIN namespaces n ON n.id = s.ns_id"
                                        " WHERE n.name = 't' AND s.id = ?",
                                        -1, &s, NULL),
                     SQLITE_OK);
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_text(s, 1, res[i].id, -1, SQLITE_STATIC);
        assert_int_equal(sqlite3_step(s), SQLITE_ROW);
        if (!same(res[i].text, sqlite3_column_text(s, 0)) ||
            !same(res[i].source, sqlite3_column_text(s, 1)) ||
            !same(res[i].metadata, sqlite3_column_text(s, 2)))
            fail_msg("%s: answered (%s, %s, %s), stored (%s, %s, %s)", res[i].id,
                     res[i].text ? res[i].text : "NULL", res[i].source ? res[i].source : "NULL",
                     res[i].metadata ? res[i].metadata : "NULL",
                     sqlite3_column_text(s, 0) ? (const char *)sqlite3_column_text(s, 0) : "NULL",
                     sqlite3_column_text(s, 1) ? (const char *)sqlite3_column_text(s, 1) : "NULL",
                     sqlite3_column_text(s, 2) ? (const char *)sqlite3_column_text(s, 2) : "NULL");
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    sqlite3_close(db);
}

/* One retrieve of k hits (pool path, or the loop's try when try_path), checked; its ids
 * appended to seen (when not NULL). */
static size_t retrieve_checked(mem_store_t *st, int qseed, size_t k, bool try_path,
                               bool include_superseded)
{
    float qv[DIM];
    make_vec(qv, (uint64_t)qseed);
    mem_store_query_t q;
    memset(&q, 0, sizeof(q));
    q.q_dim = DIM;
    q.scan.query = qv;
    q.scan.k = k;
    q.scan.decay.kind = MEM_DECAY_NONE;
    q.scan.decay.recency_bias = 1.0;
    q.scan.since_ms = INT64_MIN;
    q.scan.until_ms = INT64_MAX;
    q.scan.include_superseded = include_superseded;
    mem_store_result_t *res = NULL;
    size_t n = 0;
    if (try_path) {
        mem_store_try_t why = MEM_STORE_TRY_DONE;
        int rc =
            mem_store_retrieve_try(st, "t", &q, (size_t)1 << 30, &why, &res, &n, NULL, NULL, NULL);
        assert_int_equal(rc, MEM_OK);
        if (why != MEM_STORE_TRY_DONE) return 0; /* gave up (the linker held the lock) */
    } else {
        assert_int_equal(mem_store_retrieve(st, "t", &q, &res, &n, NULL, NULL, NULL), MEM_OK);
    }
    check_against_sqlite(res, n);
    mem_store_results_free(res, n);
    return n;
}

static void sweep(mem_store_t *st, bool include_superseded)
{
    static const size_t ks[] = {1, 10, 40, 200};
    for (int r = 0; r < 2; r++) /* twice: the second answers from the cache */
        for (int qs = 1; qs <= 17; qs++)
            for (size_t j = 0; j < sizeof(ks) / sizeof(ks[0]); j++)
                retrieve_checked(st, qs, ks[j], (qs + r) % 2 == 0, include_superseded);
}

static void exact_through_writes(size_t cache_bytes)
{
    mem_store_t *st = open_cache(cache_bytes);
    load(st);
    store_fixture_settle(st);
    sweep(st, false);
    sweep(st, true);
    mem_store__txc_stats_t s0;
    mem_store__txc_stats(st->txc, &s0);
    if (cache_bytes) {
        assert_true(s0.hits > 0); /* the second rounds came from memory */
        assert_true(s0.bytes <= cache_bytes);
    } else {
        assert_int_equal(s0.hits + s0.misses, 0);
    }
    /* patch metadata and source of rows the cache holds: answers follow at once */
    for (int i = 0; i < N_SEG; i += 3) {
        char m[48];
        snprintf(m, sizeof(m), "{\"patched\":%d}", i);
        assert_int_equal(patch(st, ids[i], i % 2 ? m : NULL, i % 2 == 0, i % 4 ? "web" : NULL),
                         MEM_OK);
    }
    sweep(st, false);
    sweep(st, true);
    /* delete, compact, supersede */
    for (int i = 0; i < N_SEG; i += 7)
        assert_int_equal(simple(st, MEM_STORE_OP_DELETE, ids[i]), MEM_OK);
    const char *evict[] = {ids[11], ids[22], ids[33], ids[44]};
    mem_store_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = MEM_STORE_OP_COMPACT;
    snprintf(op.ns, sizeof(op.ns), "t");
    op.evict_ids = evict;
    op.n_evict = 4;
    op.purge = true;
    assert_int_equal(store_fixture_run(st, &op), MEM_OK);
    store_fixture_settle(st);
    sweep(st, false);
    sweep(st, true);
    /* patch again, then restart: the answers equal SQLite's with a cache built anew */
    assert_int_equal(patch(st, ids[3], "{\"after\":1}", true, "late"), MEM_OK);
    sweep(st, true);
    mem_store_close(st);
    st = open_cache(cache_bytes);
    store_fixture_settle(st);
    mem_store__txc_stats(st->txc, &s0);
    assert_int_equal(s0.entries, 0);
    sweep(st, false);
    sweep(st, true);
    mem_store_close(st);
}

static void test_exact_large_cache(void **state)
{
    (void)state;
    exact_through_writes((size_t)64 << 20);
}

static void test_exact_tiny_cache(void **state)
{
    (void)state;
    exact_through_writes(4 * 1024); /* a few dozen entries: evictions all the time */
}

static void test_exact_no_cache(void **state)
{
    (void)state;
    exact_through_writes(0);
}

/* Patches racing retrieves that fill the cache: once the patches are done, every answer
 * equals SQLite (no reader kept a text from before a patch). */
typedef struct race {
    mem_store_t *st;
    int stop;
} race_t;

static void *reader_main(void *arg)
{
    race_t *r = arg;
    float qv[DIM];
    for (int i = 0; !__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE); i++) {
        make_vec(qv, (uint64_t)(i % 17) + 1);
        mem_store_query_t q;
        memset(&q, 0, sizeof(q));
        q.q_dim = DIM;
        q.scan.query = qv;
        q.scan.k = 40;
        q.scan.decay.kind = MEM_DECAY_NONE;
        q.scan.decay.recency_bias = 1.0;
        q.scan.since_ms = INT64_MIN;
        q.scan.until_ms = INT64_MAX;
        q.scan.include_superseded = true;
        mem_store_result_t *res = NULL;
        size_t n = 0;
        if (mem_store_retrieve(r->st, "t", &q, &res, &n, NULL, NULL, NULL) == MEM_OK)
            mem_store_results_free(res, n);
    }
    return NULL;
}

static void test_patch_races_fills(void **state)
{
    (void)state;
    mem_store_t *st = open_cache((size_t)64 << 20);
    load(st);
    store_fixture_settle(st);
    race_t r = {.st = st};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, reader_main, &r), 0);
    for (int round = 0; round < 300; round++) {
        char m[48];
        snprintf(m, sizeof(m), "{\"round\":%d}", round);
        int i = (round * 37) % N_SEG;
        assert_int_equal(patch(st, ids[i], m, true, round % 2 ? "odd" : "even"), MEM_OK);
    }
    __atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    sweep(st, true);
    mem_store__txc_stats_t s;
    mem_store__txc_stats(st->txc, &s);
    assert_true(s.hits > 0);
    mem_store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_module_roundtrip_and_nulls),
        cmocka_unit_test(test_module_bound_and_recency),
        cmocka_unit_test(test_module_patch_guard),
        cmocka_unit_test_setup_teardown(test_exact_large_cache, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_exact_tiny_cache, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_exact_no_cache, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_patch_races_fills, store_fixture_setup,
                                        store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
