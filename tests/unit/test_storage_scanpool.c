/* test_storage_scanpool.c - retrieval split across the store's scan helpers equals the
 * whole scan (ids, order, scores), alone and under concurrent retrieves and inserts; the
 * pool starts and stops cleanly; 0 disables splitting.
 * SPDX-License-Identifier: MIT
 */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// clang-format off
#include <cmocka.h>
// clang-format on

#include "core/scan.h"
#include "storage/store.h"
#include "storage/store_int.h"
#include "tests/unit/test_util.h"

#ifdef MEM_FAULT_BUILD
#include "tests/fault/fault.h"
#endif

#define STORE_FIXTURE_TAG "scanpool"
#include "tests/unit/store_fixture.h"

#define DAY_MS (86400ll * 1000ll)

static uint64_t seed;

static mem_store_t *open_store_cold(size_t helpers, size_t split_min, size_t cold)
{
    mem_store_opts_t o = store_fixture_opts();
    o.coherence_threshold = 0.6f;
    o.scan_helpers = helpers;
    o.scan_split_min = split_min;
    o.scan_split_min_cold = cold;
    return store_fixture_open(&o);
}

static mem_store_t *open_store(size_t helpers, size_t split_min)
{
    return open_store_cold(helpers, split_min, split_min); /* asleep or not: deterministic */
}

static uint64_t splits(mem_store_t *st)
{
    mem_store_metrics_t m;
    mem_store_get_metrics(st, &m);
    assert_true(m.scan_parts_helped <= m.scans_split * MEM_STORE_SCAN_HELPERS_MAX);
    return m.scans_split;
}

/* Random scan parameters over [t0, t1]: origins now / past / future, every decay family,
 * coherence, since/until, min_score, flags. */
static mem_scan_params_t random_params(const float *q, int64_t t0, int64_t t1, uint64_t *s)
{
    mem_scan_params_t p = {
        .query = q,
        .k = 1 + rng_below(s, 40),
        .origin_ms = t1,
        .decay = {.kind = MEM_DECAY_EXPONENTIAL, .shape = 1, .recency_bias = 1.0},
        .since_ms = INT64_MIN,
        .until_ms = INT64_MAX,
        .source = -1,
    };
    if (rng_below(s, 8) == 0) p.k = 1 + rng_below(s, MEM_SCAN_MAX_K);
    int64_t span = t1 - t0 + 1;
    switch (rng_below(s, 3)) {
    case 0:
        break;
    case 1:
        p.origin_ms = t0 + (int64_t)(rng_unit(s) * (double)span);
        break;
    default:
        p.origin_ms = t0 - (int64_t)rng_below(s, 100) * DAY_MS;
    }
    p.decay.kind = (mem_decay_kind_t)rng_below(s, 5);
    double hl[] = {0, 0.5, 3, 30, 365};
    p.decay.half_life_s = hl[rng_below(s, 5)] * 86400.0;
    p.decay.shape = 0.3 + rng_unit(s) * 3.0;
    double rb[] = {0, 1, 1, 0.5, rng_unit(s)};
    p.decay.recency_bias = rb[rng_below(s, 5)];
    double w[] = {0, 0, 0.3, 1};
    p.coherence_weight = w[rng_below(s, 4)];
    if (rng_below(s, 4) == 0) p.since_ms = t0 + (int64_t)(rng_unit(s) * (double)span);
    if (rng_below(s, 4) == 0) p.until_ms = t0 + (int64_t)(rng_unit(s) * (double)span);
    if (rng_below(s, 4) == 0) {
        p.has_min_score = true;
        p.min_score = rng_unit(s) * 1.2 - 0.4;
    }
    p.include_superseded = rng_below(s, 2);
    p.include_archived = rng_below(s, 2);
    return p;
}

/* got equals want exactly: same positions, bit-equal scores, same order. */
static void assert_same_hits(const mem_scan_hit_t *want, size_t n_want, const mem_scan_hit_t *got,
                             size_t n_got, const char *what, unsigned c, unsigned q)
{
    if (n_want != n_got) {
        print_error("%s case %u query %u (MEM_TEST_SEED=%llu): %zu hits, want %zu\n", what, c, q,
                    (unsigned long long)seed, n_got, n_want);
        fail();
    }
    for (size_t i = 0; i < n_want; i++)
        if (want[i].pos != got[i].pos || want[i].score != got[i].score ||
            want[i].seq != got[i].seq) {
            print_error("%s case %u query %u (MEM_TEST_SEED=%llu) rank %zu: pos %zu score %.17g, "
                        "want pos %zu score %.17g\n",
                        what, c, q, (unsigned long long)seed, i, got[i].pos, got[i].score,
                        want[i].pos, want[i].score);
            fail();
        }
}

/* Within 1e-5 of the scalar reference; near-ties (1e-6) may trade places. */
static void assert_close_to_ref(const mem_scan_hit_t *ref, size_t n_ref, const mem_scan_hit_t *got,
                                size_t n_got, unsigned c, unsigned q)
{
    assert_int_equal(n_got, n_ref);
    for (size_t i = 0; i < n_ref; i++) {
        if (fabs(ref[i].score - got[i].score) > 1e-5 ||
            (ref[i].pos != got[i].pos && fabs(ref[i].score - got[i].score) > 1e-6)) {
            print_error("reference case %u query %u (MEM_TEST_SEED=%llu) rank %zu: pos %zu %.9g, "
                        "want pos %zu %.9g\n",
                        c, q, (unsigned long long)seed, i, got[i].pos, got[i].score, ref[i].pos,
                        ref[i].score);
            fail();
        }
    }
}

/* ---- mem_store__scan on random in-memory indexes (rows past n_visible included) ---- */

static void test_split_scan_random_indexes(void **state)
{
    (void)state;
    mem_scan_hit_t *want = malloc(MEM_SCAN_MAX_K * sizeof(*want));
    mem_scan_hit_t *got = malloc(MEM_SCAN_MAX_K * sizeof(*got));
    mem_scan_hit_t *ref = malloc(MEM_SCAN_MAX_K * sizeof(*ref));
    assert_non_null(want);
    assert_non_null(got);
    assert_non_null(ref);
    static const size_t dims[] = {1, 3, 8, 17, 33, 64, 128};
    uint64_t n_split_expected = 0;
    for (size_t helpers = 1; helpers <= 3; helpers++) {
        mem_store_t *st = open_store(helpers, 1);
        uint64_t split0 = splits(st);
        n_split_expected = 0;
        for (unsigned c = 0; c < 40; c++) {
            uint64_t s = seed * 7919ull + helpers * 1000ull + c;
            size_t dim = dims[rng_below(&s, sizeof(dims) / sizeof(dims[0]))];
            size_t n = rng_below(&s, 6) == 0 ? rng_below(&s, 300) : 200 + rng_below(&s, 3000);
            mem_index_t *idx;
            assert_int_equal(mem_index_new(dim, &idx), MEM_OK);
            float *v = malloc(dim * sizeof(float)), *qv = malloc(dim * sizeof(float));
            assert_non_null(v);
            assert_non_null(qv);
            int64_t ts = (int64_t)rng_below(&s, 1000) * DAY_MS, t0 = ts;
            for (size_t i = 0; i < n; i++) {
                if (rng_below(&s, 4)) ts += (int64_t)rng_below(&s, DAY_MS / 2);
                if (i > 0 && rng_below(&s, 10) == 0) /* duplicates: ties by similarity */
                    memcpy(v, mem_index_vec(idx, rng_below(&s, i)), dim * sizeof(float));
                else
                    random_unit(v, dim, &s);
                unsigned fr = (unsigned)rng_below(&s, 12);
                uint8_t flags = fr == 0 ? MEM_ROW_SUPERSEDED : fr == 1 ? MEM_ROW_ARCHIVED : 0;
                char id[32];
                int len = snprintf(id, sizeof id, "m%zu", i);
                size_t pos;
                assert_int_equal(mem_index_append(idx, id, (size_t)len, ts, (int64_t)i + 1, v,
                                                  (uint16_t)rng_below(&s, 3), flags, &pos),
                                 MEM_OK);
                uint32_t deg = rng_below(&s, 3) ? (uint32_t)rng_below(&s, 40) : 0;
                if (flags == 0) mem_index_restore_link(idx, pos, deg); /* the active rows */
            }
            for (size_t i = 0; i < n; i++)
                if (rng_below(&s, 25) == 0) mem_index_set_flags(idx, i, MEM_ROW_DELETED);
            mem_index_recount_graph(idx);
            /* rows past n_visible: written, not committed; no part may read them */
            mem_index_publish(idx, rng_below(&s, 3) == 0 ? rng_below(&s, n + 1) : n);
            size_t nb = (mem_index_visible(idx) + MEM_INDEX_BLOCK_ROWS - 1) / MEM_INDEX_BLOCK_ROWS;
            for (unsigned q = 0; q < 10; q++) {
                random_unit(qv, dim, &s);
                if (rng_below(&s, 4) == 0) /* opposite: mostly negative similarities */
                    for (size_t d = 0; d < dim; d++)
                        qv[d] = -qv[d];
                mem_scan_params_t p = random_params(qv, t0, ts, &s);
                p.source = rng_below(&s, 5) == 0 ? (int)rng_below(&s, 3) : -1;
                size_t n_want, sc_want, n_got, sc_got, n_ref, sc_ref;
                mem_scan_run(idx, mem_vec_ops(), &p, want, &n_want, &sc_want);
                mem_store__scan(st, idx, &p, got, &n_got, &sc_got);
                mem_scan_reference(idx, &p, ref, &n_ref, &sc_ref);
                assert_same_hits(want, n_want, got, n_got, "split vs run", c, q);
                assert_close_to_ref(ref, n_ref, got, n_got, c, q);
                assert_true(sc_got <= sc_ref);
                if (nb >= 2) n_split_expected++;
            }
            mem_index_free(idx);
            free(v);
            free(qv);
        }
        /* one caller at a time: an idle helper is always there, so every scan of 2+
         * blocks was split (and a single block never is) */
        assert_int_equal(splits(st) - split0, n_split_expected);
        assert_true(n_split_expected > 100);
        mem_store_close(st);
    }
    free(want);
    free(got);
    free(ref);
}

/* ---- through mem_store_retrieve on stored namespaces ---- */

/* Insert n random segments (ts t0 + i * step, some with a source, some superseding an
 * earlier one) into ns; *last_ts is the last timestamp. MEM_OK or the first failed insert's
 * code (its message printed). No cmocka: the concurrent test's inserting thread calls it,
 * and an assertion must fail on the test's own thread. */
static int fill_ns_try(mem_store_t *st, const char *ns, size_t dim, size_t n, int64_t t0,
                       size_t first, uint64_t *s, int64_t *last_ts)
{
    enum { BATCH = 400 };
    static mem_store_seg_in_t segs[BATCH];
    static mem_store_seg_out_t outs[BATCH];
    static char sup_ids[BATCH][32];
    static const char *sup_ptr[BATCH];
    float *vecs = malloc(BATCH * dim * sizeof(float));
    if (!vecs) return MEM_ENOMEM;
    static const char *sources[] = {"alpha", "beta"};
    int64_t ts = t0;
    for (size_t done = 0; done < n;) {
        size_t b = n - done < BATCH ? n - done : BATCH;
        for (size_t i = 0; i < b; i++) {
            size_t g = first + done + i;
            mem_store_seg_in_t *in = &segs[i];
            memset(in, 0, sizeof(*in));
            snprintf(in->id, sizeof(in->id), "s%zu", g);
            in->ts_given = true;
            ts = t0 + (int64_t)(done + i) * (DAY_MS / 8);
            in->ts_ms = ts;
            random_unit(vecs + i * dim, dim, s);
            in->vec = vecs + i * dim;
            unsigned r = (unsigned)rng_below(s, 6);
            if (r < 2) {
                in->source = sources[r];
                in->source_len = strlen(sources[r]);
            }
            if (g > 0 && rng_below(s, 15) == 0) {
                snprintf(sup_ids[i], sizeof(sup_ids[i]), "s%zu", (size_t)rng_below(s, g));
                sup_ptr[i] = sup_ids[i];
                in->supersedes = &sup_ptr[i];
                in->n_supersedes = 1;
            }
        }
        mem_store_op_t op;
        memset(&op, 0, sizeof(op));
        op.kind = MEM_STORE_OP_INSERT;
        snprintf(op.ns, sizeof(op.ns), "%s", ns);
        op.dim = dim;
        op.now_ms = ts + DAY_MS;
        op.segs = segs;
        op.outs = outs;
        op.n_segs = b;
        op.batch = true;
        if (store_fixture_run(st, &op) != MEM_OK) {
            print_error("insert: %s\n", op.err.msg);
            free(vecs);
            return op.rc;
        }
        done += b;
    }
    free(vecs);
    *last_ts = ts;
    return MEM_OK;
}

/* fill_ns_try, which must succeed; returns the last timestamp. */
static int64_t fill_ns(mem_store_t *st, const char *ns, size_t dim, size_t n, int64_t t0,
                       size_t first, uint64_t *s)
{
    int64_t ts = t0;
    assert_int_equal(fill_ns_try(st, ns, dim, n, t0, first, s, &ts), MEM_OK);
    return ts;
}

static void test_retrieve_split_equals_whole(void **state)
{
    (void)state;
    mem_store_t *st = open_store(2, 1);
    uint64_t s = seed ^ 0x5ca9f00dull;
    static const size_t dims[] = {3, 16, 33, 128};
    mem_scan_hit_t *want = malloc(MEM_SCAN_MAX_K * sizeof(*want));
    mem_scan_hit_t *ref = malloc(MEM_SCAN_MAX_K * sizeof(*ref));
    mem_scan_hit_t *got = malloc(MEM_SCAN_MAX_K * sizeof(*got));
    assert_non_null(want);
    assert_non_null(ref);
    assert_non_null(got);
    uint64_t split0 = splits(st), n_expected = 0;
    for (unsigned c = 0; c < 6; c++) {
        char ns[16];
        snprintf(ns, sizeof(ns), "n%u", c);
        size_t dim = dims[c % 4];
        size_t n = 300 + rng_below(&s, 1500);
        int64_t t0 = (int64_t)rng_below(&s, 1000) * DAY_MS;
        int64_t t1 = fill_ns(st, ns, dim, n, t0, 0, &s);
        mem_store_ns_t *nsp = mem_store__ns_acquire(st, ns);
        assert_non_null(nsp);
        float *qv = malloc(dim * sizeof(float));
        assert_non_null(qv);
        for (unsigned q = 0; q < 25; q++) {
            random_unit(qv, dim, &s);
            mem_store_query_t mq = {.q_dim = dim};
            mq.scan = random_params(qv, t0, t1, &s);
            unsigned sr = (unsigned)rng_below(&s, 5);
            mq.source = sr == 0 ? "alpha" : sr == 1 ? "beta" : NULL;
            mq.source_len = mq.source ? strlen(mq.source) : 0;
            mq.record_access = rng_below(&s, 2);
            mem_store_result_t *res = NULL;
            size_t n_res = 0, scanned = 0;
            assert_int_equal(mem_store_retrieve(st, ns, &mq, &res, &n_res, &scanned, NULL, NULL),
                             MEM_OK);
            mem_scan_params_t p = mq.scan;
            const mem_index_t *view = mem_store__read_lock(nsp);
            p.source = mq.source ? mem_index_source_find(view, mq.source, mq.source_len) : -1;
            size_t n_want, sc_want, n_ref, sc_ref;
            mem_scan_run(view, mem_vec_ops(), &p, want, &n_want, &sc_want);
            mem_scan_reference(view, &p, ref, &n_ref, &sc_ref);
            assert_true(p.source != 0);
            for (size_t i = 0; i < n_res; i++)
                got[i] = res[i].hit;
            assert_same_hits(want, n_want, got, n_res, "retrieve vs run", c, q);
            assert_close_to_ref(ref, n_ref, got, n_res, c, q);
            for (size_t i = 0; i < n_res; i++)
                assert_string_equal(res[i].id, mem_index_id(view, got[i].pos));
            mem_store__read_unlock(nsp);
            assert_true(scanned <= sc_ref);
            mem_store_results_free(res, n_res);
            n_expected++;
        }
        free(qv);
        mem_store__ns_release(nsp);
    }
    assert_int_equal(splits(st) - split0, n_expected);
    mem_store_close(st);
    free(want);
    free(ref);
    free(got);
}

/* ---- concurrent retrieves while inserts happen ---- */

#define READERS 3
#define FROZEN  2000 /* segments inserted before the readers start */

typedef struct reader_ctx {
    mem_store_t *st;
    size_t dim;
    int64_t t0, t_frozen;
    const float *queries;            /* NQ * dim */
    const mem_scan_params_t *params; /* NQ, until_ms <= t_frozen, coherence_weight 0 */
    const mem_scan_hit_t *expect;    /* NQ * MEM_SCAN_MAX_K */
    const size_t *n_expect;
    const char *const *expect_ids; /* NQ * MEM_SCAN_MAX_K */
    uint64_t rs;
    int failed;
    int *stop;
} reader_ctx_t;

#define NQ 24

static void *reader_main(void *arg)
{
    reader_ctx_t *r = arg;
    unsigned rounds = 0;
    while (!__atomic_load_n(r->stop, __ATOMIC_ACQUIRE) || rounds < 30) {
        rounds++;
        size_t qi = rng_below(&r->rs, NQ);
        mem_store_query_t mq = {.q_dim = r->dim, .scan = r->params[qi]};
        bool open_ended = rng_below(&r->rs, 3) == 0;
        if (open_ended) mq.scan.until_ms = INT64_MAX; /* sees the rows being inserted */
        mem_store_result_t *res = NULL;
        size_t n = 0, scanned = 0;
        int rc = mem_store_retrieve(r->st, "c", &mq, &res, &n, &scanned, NULL, NULL);
        if (rc != MEM_OK) {
            r->failed = rc; /* a MEM_E* code; the checks below use 2..5 */
            break;
        }
        if (open_ended) { /* a moving target: result order and size only */
            if (n > mq.scan.k) r->failed = 2;
            for (size_t i = 1; i < n; i++)
                if (!mem_scan_hit_before(&res[i - 1].hit, &res[i].hit)) r->failed = 3;
        } else { /* rows up to t_frozen never change (no coherence): the answer is fixed */
            if (n != r->n_expect[qi]) r->failed = 4;
            for (size_t i = 0; i < n && !r->failed; i++) {
                const mem_scan_hit_t *e = &r->expect[qi * MEM_SCAN_MAX_K + i];
                if (res[i].hit.pos != e->pos || res[i].hit.score != e->score ||
                    strcmp(res[i].id, r->expect_ids[qi * MEM_SCAN_MAX_K + i]) != 0)
                    r->failed = 5;
            }
        }
        mem_store_results_free(res, n);
        if (r->failed) break;
    }
    return NULL;
}

typedef struct writer_ctx {
    mem_store_t *st;
    size_t dim;
    int64_t t_next;
    uint64_t ws;
    int rc; /* the first failed insert's code: the test's thread asserts it after the join */
} writer_ctx_t;

static void *writer_main(void *arg)
{
    writer_ctx_t *w = arg;
    for (unsigned b = 0; b < 12 && w->rc == MEM_OK; b++) {
        int64_t last = w->t_next;
        w->rc = fill_ns_try(w->st, "c", w->dim, 150, w->t_next, FROZEN + b * 150, &w->ws, &last);
        w->t_next = last + DAY_MS / 8;
    }
    return NULL;
}

static void test_concurrent_retrieve_with_inserts(void **state)
{
    (void)state;
    const size_t dim = 32;
    mem_store_t *st = open_store(2, 1);
    uint64_t s = seed ^ 0xc0ffeeull;
    int64_t t0 = 100 * DAY_MS;
    int64_t t_frozen = fill_ns(st, "c", dim, FROZEN, t0, 0, &s);
    float *queries = malloc(NQ * dim * sizeof(float));
    mem_scan_params_t params[NQ];
    mem_scan_hit_t *expect = malloc(NQ * MEM_SCAN_MAX_K * sizeof(*expect));
    mem_scan_hit_t *ref = malloc(MEM_SCAN_MAX_K * sizeof(*ref));
    const char **expect_ids = calloc(NQ * MEM_SCAN_MAX_K, sizeof(*expect_ids));
    size_t n_expect[NQ];
    assert_non_null(queries);
    assert_non_null(expect);
    assert_non_null(ref);
    assert_non_null(expect_ids);
    mem_store_ns_t *nsp = mem_store__ns_acquire(st, "c");
    const mem_index_t *view = mem_store__read_lock(nsp);
    for (size_t qi = 0; qi < NQ; qi++) {
        random_unit(queries + qi * dim, dim, &s);
        params[qi] = random_params(queries + qi * dim, t0, t_frozen, &s);
        params[qi].coherence_weight = 0; /* new rows change degrees, not similarities */
        if (params[qi].until_ms > t_frozen) params[qi].until_ms = t_frozen;
        params[qi].include_superseded = true; /* new rows supersede nothing old: flags fixed */
        size_t sc;
        mem_scan_run(view, mem_vec_ops(), &params[qi], expect + qi * MEM_SCAN_MAX_K, &n_expect[qi],
                     &sc);
        size_t n_ref, sc_ref;
        mem_scan_reference(view, &params[qi], ref, &n_ref, &sc_ref);
        assert_close_to_ref(ref, n_ref, expect + qi * MEM_SCAN_MAX_K, n_expect[qi], 0,
                            (unsigned)qi);
        for (size_t i = 0; i < n_expect[qi]; i++)
            expect_ids[qi * MEM_SCAN_MAX_K + i] =
                mem_index_id(view, expect[qi * MEM_SCAN_MAX_K + i].pos);
    }
    mem_store__read_unlock(nsp);
    int stop = 0;
    reader_ctx_t rc[READERS];
    pthread_t rt[READERS], wt;
    for (int i = 0; i < READERS; i++) {
        rc[i] = (reader_ctx_t){.st = st,
                               .dim = dim,
                               .t0 = t0,
                               .t_frozen = t_frozen,
                               .queries = queries,
                               .params = params,
                               .expect = expect,
                               .n_expect = n_expect,
                               .expect_ids = expect_ids,
                               .rs = seed * 31 + (uint64_t)i,
                               .stop = &stop};
        assert_int_equal(pthread_create(&rt[i], NULL, reader_main, &rc[i]), 0);
    }
    writer_ctx_t w = {.st = st, .dim = dim, .t_next = t_frozen + DAY_MS / 8, .ws = seed + 99};
    assert_int_equal(pthread_create(&wt, NULL, writer_main, &w), 0);
    pthread_join(wt, NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < READERS; i++)
        pthread_join(rt[i], NULL);
    assert_int_equal(w.rc, MEM_OK);
    for (int i = 0; i < READERS; i++) {
        if (rc[i].failed) print_error("reader %d failed: %d\n", i, rc[i].failed);
        assert_int_equal(rc[i].failed, 0);
    }
    /* alone again: the next retrieve is split */
    uint64_t before = splits(st);
    mem_store_query_t mq = {.q_dim = dim, .scan = params[0]};
    mem_store_result_t *res = NULL;
    size_t n = 0;
    assert_int_equal(mem_store_retrieve(st, "c", &mq, &res, &n, NULL, NULL, NULL), MEM_OK);
    mem_store_results_free(res, n);
    assert_int_equal(splits(st), before + 1);
    mem_store__ns_release(nsp);
    mem_store_close(st);
    free(queries);
    free(expect);
    free(ref);
    free(expect_ids);
}

/* ---- settings and lifecycle ---- */

static size_t count_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

/* The count once it reaches want, or the last count after 5 s: a joined thread (the
 * linker's priority probe, a stopped helper) leaves /proc/self/task a moment after
 * pthread_join returns, because the kernel wakes the joiner before it reaps the task. */
static size_t settled_threads(size_t want)
{
    size_t n = count_threads();
    for (int i = 0; i < 5000 && n != want; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        n = count_threads();
    }
    return n;
}

static void one_retrieve(mem_store_t *st, size_t dim, uint64_t *s, mem_scan_hit_t *hits,
                         size_t *n_hits)
{
    float qv[16];
    random_unit(qv, dim, s);
    mem_store_query_t mq = {.q_dim = dim};
    mq.scan = (mem_scan_params_t){.query = qv,
                                  .k = 20,
                                  .origin_ms = 0,
                                  .source = -1,
                                  .since_ms = INT64_MIN,
                                  .until_ms = INT64_MAX,
                                  .decay = {.kind = MEM_DECAY_NONE, .shape = 1}};
    mem_store_result_t *res = NULL;
    size_t n = 0;
    assert_int_equal(mem_store_retrieve(st, "d", &mq, &res, &n, NULL, NULL, NULL), MEM_OK);
    for (size_t i = 0; i < n; i++)
        hits[i] = res[i].hit;
    *n_hits = n;
    mem_store_results_free(res, n);
}

static void test_disabled_and_threshold(void **state)
{
    (void)state;
    const size_t dim = 16;
    uint64_t s = seed ^ 0xd15ab1edull;
    {
        mem_store_t *st = open_store(0, 0);
        fill_ns(st, "d", dim, 1000, DAY_MS, 0, &s);
        mem_store_close(st);
    }
    /* (helpers, split_min) -> splits expected for 1000 rows x 16 = 16000 */
    struct {
        size_t helpers, split_min;
        bool split;
    } cases[] = {
        {2, 0, false},                                                 /* 0 disables splitting */
        {0, 1, false},                                                 /* no helpers */
        {2, 16001, false},                                             /* below the threshold */
        {2, 16000, true},                                              /* at it */
        {1, 1, true},      {MEM_STORE_SCAN_HELPERS_MAX + 10, 1, true}, /* capped, still works */
    };
    mem_scan_hit_t base[20][20], hits[20];
    size_t n_base[20] = {0}, n_hits = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mem_store_t *st = open_store(cases[i].helpers, cases[i].split_min);
        uint64_t qs = seed; /* the same queries in every configuration */
        uint64_t before = splits(st);
        for (int q = 0; q < 20; q++) {
            one_retrieve(st, dim, &qs, hits, &n_hits);
            if (i == 0) {
                memcpy(base[q], hits, sizeof(hits));
                n_base[q] = n_hits;
            }
            assert_int_equal(n_hits, 20);
            assert_same_hits(base[q], n_base[q], hits, n_hits, "config", (unsigned)i, (unsigned)q);
        }
        assert_int_equal(splits(st) - before, cases[i].split ? 20 : 0);
        mem_store_close(st);
    }
}

/* A helper that has not run a task yet is asleep: it is woken only from
 * scan_split_min_cold (default 64 x scan_split_min). 1000 rows x 16 = 16000. */
static void test_cold_helper(void **state)
{
    (void)state;
    const size_t dim = 16;
    uint64_t s = seed ^ 0xc01dull;
    {
        mem_store_t *st = open_store(0, 0);
        fill_ns(st, "d", dim, 1000, DAY_MS, 0, &s);
        mem_store_close(st);
    }
    struct {
        size_t min, cold;
        bool split;
    } cases[] = {
        {250, 0, true},       /* default cold threshold 64 x 250 = 16000: met */
        {251, 0, false},      /* 16064 */
        {1000, 16000, true},  /* met */
        {1000, 16001, false}, /* not met: the asleep helper stays asleep */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mem_store_t *st = open_store_cold(1, cases[i].min, cases[i].cold);
        mem_scan_hit_t hits[20];
        size_t n;
        uint64_t qs = seed;
        one_retrieve(st, dim, &qs, hits, &n); /* the first: the helper has run nothing yet */
        assert_int_equal(n, 20);
        assert_int_equal(splits(st), cases[i].split ? 1 : 0);
        mem_store_close(st);
    }
}

/* Did an allocation fail on purpose (the fault build's driver, `make fault`)? */
static bool faults_injected(void)
{
#ifdef MEM_FAULT_BUILD
    return mem_fault_failed() > 0;
#else
    return false;
#endif
}

static void test_pool_stops(void **state)
{
    (void)state;
    const size_t dim = 8;
    uint64_t s = seed ^ 0x57095ull;
    size_t threads0 = count_threads();
    assert_true(threads0 >= 1);
    for (size_t helpers = 0; helpers <= 4; helpers++) {
        mem_store_t *st = open_store(helpers, 1);
        /* a helper whose buffer could not be allocated is not started (its scans stay
         * whole), nor a checkpointer whose connection could not be opened (the writer
         * checkpoints in place): only an injected failure may do that */
        size_t started = mem_store__scanpool_size(st->scanpool) + (st->ck_started ? 1 : 0);
        if (started != helpers + 1 && !faults_injected())
            fail_msg("%zu threads of %zu started", started, helpers + 1);
        /* the writer, the graph's linker, the WAL checkpointer and the helpers */
        assert_int_equal(settled_threads(threads0 + 2 + started), threads0 + 2 + started);
        if (helpers == 0) fill_ns(st, "d", dim, 700, DAY_MS, 0, &s);
        mem_scan_hit_t hits[20];
        size_t n;
        for (int q = 0; q < 5; q++)
            one_retrieve(st, dim, &s, hits, &n);
        mem_store_close(st); /* joins every helper */
        assert_int_equal(settled_threads(threads0), threads0);
    }
}

int main(void)
{
    const char *env = getenv("MEM_TEST_SEED");
    seed = env ? strtoull(env, NULL, 10) : 20261130ull;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_split_scan_random_indexes, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_retrieve_split_equals_whole, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_retrieve_with_inserts, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_disabled_and_threshold, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_cold_helper, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_pool_stops, store_fixture_setup,
                                        store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
