/* test_core_graph.c - coherence-graph degrees: incremental == rebuild == naive
 * SPDX-License-Identifier: MIT
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off: cmocka needs the headers above first */
#include <cmocka.h>
/* clang-format on */

#include "core/err.h"
#include "core/graph.h"
#include "core/index.h"
#include "core/index_int.h"
#include "core/vec.h"

static uint64_t rng_state;
static uint64_t rng_next(void)
{
    uint64_t x = rng_state; /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 2685821657736338717ull;
}
static double rng_unit(void)
{
    return (double)(rng_next() >> 11) / 9007199254740992.0;
}
static uint64_t test_seed(void)
{
    const char *s = getenv("MEM_TEST_SEED");
    return s ? strtoull(s, NULL, 10) : 20260906ull;
}

static size_t append_row(mem_index_t *idx, const float *vec)
{
    char id[32];
    size_t pos = 0;
    int n = snprintf(id, sizeof(id), "m%zu", idx->n_rows);
    assert_int_equal(mem_index_append(idx, id, (size_t)n, (int64_t)idx->n_rows,
                                      (int64_t)idx->n_rows, vec, 0, 0, &pos),
                     MEM_OK);
    mem_index_publish(idx, mem_index_rows(idx));
    return pos;
}

/* A clustered unit vector: centre c plus noise, normalised in double, stored as float. */
static void random_vec(float *v, size_t dim, const float *centres, size_t n_centres, double noise)
{
    size_t c = (size_t)(rng_unit() * (double)n_centres);
    for (size_t d = 0; d < dim; d++)
        v[d] = centres[c * dim + d] + (float)(noise * (2.0 * rng_unit() - 1.0));
    assert_int_equal(mem_vec_normalize(v, dim), 0);
}

/* One row through ops->dot_rows: a kernel's f32 score of a pair. */
static float pair_dot(const mem_vec_ops_t *ops, const float *a, const float *b, size_t dim)
{
    float out = 0.0f;
    ops->dot_rows(a, b, 1, dim, dim, &out);
    return out;
}

/* The edge rule's reference, written out here on its own: the products in double, summed
 * left to right in double. */
static double ref_dot(const float *a, const float *b, size_t dim)
{
    double s = 0.0;
    for (size_t d = 0; d < dim; d++)
        s += (double)a[d] * (double)b[d];
    return s;
}

/* The largest float threshold at or below a pair's reference dot: that pair sits exactly
 * on the threshold and must be an edge on every kernel. */
static float thr_at(const float *a, const float *b, size_t dim)
{
    double r = ref_dot(a, b, dim);
    float t = (float)r;
    if ((double)t > r) t = nextafterf(t, -HUGE_VALF);
    return t;
}

typedef struct expect {
    uint32_t *deg;
    uint64_t edges;
    uint32_t max;
} expect_t;

/* Naive O(n^2) brute force: an edge when ref_dot >= thr, whatever the kernel. */
static void naive(const mem_index_t *idx, float thr, const mem_vec_ops_t *ops, expect_t *e)
{
    (void)ops;
    size_t n = idx->n_rows;
    e->deg = calloc(n + 1, sizeof(uint32_t));
    assert_non_null(e->deg);
    e->edges = 0;
    e->max = 0;
    for (size_t a = 0; a < n; a++) {
        if (MEM_INDEX_ROW(idx, a, flags) != 0) continue;
        for (size_t b = a + 1; b < n; b++) {
            if (MEM_INDEX_ROW(idx, b, flags) != 0) continue;
            const float *va = mem_index__vec(idx, a), *vb = mem_index__vec(idx, b);
            if (ref_dot(va, vb, idx->dim) >= (double)thr) {
                e->deg[a]++;
                e->deg[b]++;
                e->edges++;
            }
        }
    }
    for (size_t a = 0; a < n; a++)
        if (e->deg[a] > e->max) e->max = e->deg[a];
}

static void check_against(const mem_index_t *idx, const expect_t *e)
{
    for (size_t p = 0; p < idx->n_rows; p++) {
        uint32_t got = MEM_INDEX_ROW(idx, p, flags) == 0 ? MEM_INDEX_ROW(idx, p, degree) : 0;
        if (got != e->deg[p])
            fail_msg("pos %zu: degree %u, expected %u (seed %llu)", p, got, e->deg[p],
                     (unsigned long long)test_seed());
    }
    assert_int_equal(idx->graph_edges, e->edges);
    assert_int_equal(idx->max_degree, e->max);
}

static void check_naive(const mem_index_t *idx, float thr, const mem_vec_ops_t *ops)
{
    expect_t e;
    naive(idx, thr, ops, &e);
    check_against(idx, &e);
    free(e.deg);
}

/* touched: every reported row is recorded; the test checks they are exactly the changed ones */
typedef struct touch_log {
    uint8_t *seen;
    size_t n;
} touch_log_t;
static void on_touch(void *ud, size_t pos)
{
    touch_log_t *t = ud;
    assert_true(pos < t->n);
    t->seen[pos] = 1;
}

static void run_sequence(const mem_vec_ops_t *ops, size_t dim, float thr, size_t steps)
{
    enum { N_CENTRES = 6, MAX_ROWS = 700 };
    float centres[N_CENTRES * 64];
    for (size_t i = 0; i < N_CENTRES * dim; i++)
        centres[i] = (float)(2.0 * rng_unit() - 1.0);
    mem_index_t *idx = NULL;
    assert_int_equal(mem_index_new(dim, &idx), MEM_OK);
    float v[64];
    uint32_t *before = calloc(MAX_ROWS, sizeof(uint32_t));
    touch_log_t tl = {calloc(MAX_ROWS, 1), MAX_ROWS};
    assert_non_null(before);
    assert_non_null(tl.seen);

    for (size_t step = 0; step < steps && idx->n_rows < MAX_ROWS - 1; step++) {
        for (size_t p = 0; p < idx->n_rows; p++)
            before[p] = MEM_INDEX_ROW(idx, p, degree);
        memset(tl.seen, 0, MAX_ROWS);
        double u = rng_unit();
        size_t victim = idx->n_rows ? (size_t)(rng_unit() * (double)idx->n_rows) : 0;
        uint8_t vf = idx->n_rows ? MEM_INDEX_ROW(idx, victim, flags) : 0;
        size_t changed_limit = idx->n_rows;
        if (u < 0.55 || idx->n_rows < 4) { /* insert */
            random_vec(v, dim, centres, N_CENTRES, 0.9);
            size_t pos = append_row(idx, v);
            assert_int_equal(mem_graph_link(idx, pos, thr, ops, on_touch, &tl), MEM_OK);
            assert_true(tl.seen[pos]);
            changed_limit = idx->n_rows;
        } else if (u < 0.7 && vf == 0) { /* supersede: the old one leaves, a restatement joins */
            assert_int_equal(mem_graph_unlink(idx, victim, thr, ops, on_touch, &tl), MEM_OK);
            mem_index_set_flags(idx, victim, MEM_ROW_SUPERSEDED);
            const float *old = mem_index__vec(idx, victim);
            for (size_t d = 0; d < dim; d++)
                v[d] = old[d] + (float)(0.1 * (2.0 * rng_unit() - 1.0));
            assert_int_equal(mem_vec_normalize(v, dim), 0);
            size_t pos = append_row(idx, v);
            assert_int_equal(mem_graph_link(idx, pos, thr, ops, on_touch, &tl), MEM_OK);
            changed_limit = idx->n_rows;
        } else if (u < 0.8 && vf == 0) { /* delete */
            assert_int_equal(mem_graph_unlink(idx, victim, thr, ops, on_touch, &tl), MEM_OK);
            assert_int_equal(MEM_INDEX_ROW(idx, victim, degree), 0);
            mem_index_set_flags(idx, victim, MEM_ROW_DELETED);
        } else if (u < 0.92 && vf == 0) { /* archive (compaction) */
            assert_int_equal(mem_graph_unlink(idx, victim, thr, ops, on_touch, &tl), MEM_OK);
            mem_index_set_flags(idx, victim, MEM_ROW_ARCHIVED);
        } else if (vf == MEM_ROW_ARCHIVED) { /* restore */
            mem_index_set_flags(idx, victim, 0);
            assert_int_equal(mem_graph_link(idx, victim, thr, ops, on_touch, &tl), MEM_OK);
        } else {
            continue;
        }
        /* every row whose degree changed was reported */
        for (size_t p = 0; p < changed_limit; p++)
            if (MEM_INDEX_ROW(idx, p, degree) != before[p] && !tl.seen[p])
                fail_msg("step %zu: pos %zu changed but not reported", step, p);
        check_naive(idx, thr, ops);
        if (step % 25 == 24) { /* a rebuild from scratch lands on the same state */
            expect_t e;
            naive(idx, thr, ops, &e);
            assert_int_equal(mem_graph_rebuild(idx, thr, ops), MEM_OK);
            check_against(idx, &e);
            free(e.deg);
        }
    }
    free(before);
    free(tl.seen);
    mem_index_free(idx);
}

static void test_sequences(void **state)
{
    (void)state;
    rng_state = test_seed() | 1;
    for (int isa = 0; isa < MEM_VEC_ISA_COUNT; isa++) {
        const mem_vec_ops_t *ops = mem_vec_ops_for((mem_vec_isa_t)isa);
        if (!ops) continue;
        run_sequence(ops, 16, 0.55f, 400);
        run_sequence(ops, 37, 0.3f, 300);  /* odd dim: tails */
        run_sequence(ops, 5, 0.8f, 300);   /* dense graph, large degrees */
        run_sequence(ops, 64, -0.1f, 120); /* nearly complete graph */
    }
}

/* A threshold exactly at one pair's reference dot: `>=` must count that pair, everywhere. */
static void test_threshold_exactly_at_a_pair(void **state)
{
    (void)state;
    rng_state = (test_seed() ^ 0x9e3779b97f4a7c15ull) | 1;
    for (int isa = 0; isa < MEM_VEC_ISA_COUNT; isa++) {
        const mem_vec_ops_t *ops = mem_vec_ops_for((mem_vec_isa_t)isa);
        if (!ops) continue;
        const size_t dim = 24, n = 300; /* spans two blocks */
        mem_index_t *idx = NULL;
        assert_int_equal(mem_index_new(dim, &idx), MEM_OK);
        float v[24];
        for (size_t i = 0; i < n; i++) {
            for (size_t d = 0; d < dim; d++)
                v[d] = (float)(2.0 * rng_unit() - 1.0);
            assert_int_equal(mem_vec_normalize(v, dim), 0);
            append_row(idx, v);
        }
        float thr = thr_at(mem_index__vec(idx, 3), mem_index__vec(idx, 290), dim);
        assert_int_equal(mem_graph_rebuild(idx, thr, ops), MEM_OK);
        check_naive(idx, thr, ops);
        assert_true(MEM_INDEX_ROW(idx, 3, degree) >= 1);
        /* the same through incremental links, in another order */
        for (size_t p = 0; p < n; p++) {
            assert_int_equal(mem_graph_unlink(idx, p, thr, ops, NULL, NULL), MEM_OK);
            mem_index_set_flags(idx, p, MEM_ROW_ARCHIVED);
        }
        assert_int_equal(idx->graph_edges, 0);
        assert_int_equal(idx->max_degree, 0);
        for (size_t k = 0; k < n; k++) {
            size_t p = (k * 7) % n; /* 7 and 300 coprime: a permutation */
            mem_index_set_flags(idx, p, 0);
            assert_int_equal(mem_graph_link(idx, p, thr, ops, NULL, NULL), MEM_OK);
        }
        check_naive(idx, thr, ops);
        mem_index_free(idx);
    }
}

/* What the graph needs from every kernel table: a row's score does not depend on its place
 * in the batch or on the batch size, and dot(a, b) == dot(b, a) bit for bit. Without it a
 * rebuild (tiles, upper triangle) and link/unlink (one row against all) could disagree on
 * a pair at the threshold. */
static void test_kernel_contract(void **state)
{
    (void)state;
    rng_state = (test_seed() ^ 0x2545f4914f6cdd1dull) | 1;
    static const size_t dims[] = {1, 3, 5, 8, 15, 16, 17, 31, 32, 33, 37, 64, 100, 128, 129, 384};
    enum { ROWS = 67 };
    for (int isa = 0; isa < MEM_VEC_ISA_COUNT; isa++) {
        const mem_vec_ops_t *ops = mem_vec_ops_for((mem_vec_isa_t)isa);
        if (!ops) continue;
        for (size_t k = 0; k < sizeof(dims) / sizeof(dims[0]); k++) {
            size_t dim = dims[k], stride = (dim + 15) & ~(size_t)15;
            float *rows = calloc(ROWS * stride, sizeof(float));
            float q[384], all[ROWS], part[ROWS];
            assert_non_null(rows);
            for (size_t d = 0; d < dim; d++)
                q[d] = (float)(2.0 * rng_unit() - 1.0);
            for (size_t r = 0; r < ROWS; r++)
                for (size_t d = 0; d < dim; d++)
                    rows[r * stride + d] = (float)(2.0 * rng_unit() - 1.0);
            ops->dot_rows(q, rows, ROWS, dim, stride, all);
            for (size_t start = 0; start < ROWS; start += 5) {
                ops->dot_rows(q, rows + start * stride, ROWS - start, dim, stride, part);
                for (size_t r = start; r < ROWS; r++)
                    if (memcmp(&part[r - start], &all[r], sizeof(float)) != 0)
                        fail_msg("%s dim %zu: row %zu scores differently from offset %zu",
                                 ops->name, dim, r, start);
            }
            if (ops->dot_rows_at) { /* listed rows (any order, repeats) score as in a pass */
                uint32_t at_idx[ROWS];
                float at[ROWS];
                for (size_t n_at = 0; n_at <= ROWS; n_at += 11) {
                    for (size_t i = 0; i < n_at; i++)
                        at_idx[i] = (uint32_t)(rng_unit() * ROWS);
                    ops->dot_rows_at(q, rows, at_idx, n_at, dim, stride, at);
                    for (size_t i = 0; i < n_at; i++)
                        if (memcmp(&at[i], &all[at_idx[i]], sizeof(float)) != 0)
                            fail_msg("%s dim %zu: listed row %u scores differently", ops->name, dim,
                                     at_idx[i]);
                }
            }
            for (size_t r = 0; r < ROWS; r++) {
                float ab = pair_dot(ops, q, rows + r * stride, dim);
                float ba = pair_dot(ops, rows + r * stride, q, dim);
                assert_memory_equal(&ab, &all[r], sizeof(float));
                assert_memory_equal(&ab, &ba, sizeof(float));
            }
            free(rows);
        }
    }
}

static void test_empty_and_single(void **state)
{
    (void)state;
    const mem_vec_ops_t *ops = mem_vec_ops_for(MEM_VEC_SCALAR);
    mem_index_t *idx = NULL;
    assert_int_equal(mem_index_new(4, &idx), MEM_OK);
    assert_int_equal(mem_graph_rebuild(idx, 0.5f, ops), MEM_OK);
    assert_int_equal(idx->graph_edges, 0);
    assert_int_equal(idx->max_degree, 0);
    float v[4] = {1, 0, 0, 0};
    size_t p = append_row(idx, v);
    assert_int_equal(mem_graph_link(idx, p, 0.5f, ops, NULL, NULL), MEM_OK);
    assert_int_equal(idx->graph_edges, 0);
    p = append_row(idx, v);
    assert_int_equal(mem_graph_link(idx, p, 0.5f, ops, NULL, NULL), MEM_OK);
    assert_int_equal(idx->graph_edges, 1);
    assert_int_equal(idx->max_degree, 1);
    /* unlinking an inactive row is a no-op */
    assert_int_equal(mem_graph_unlink(idx, 0, 0.5f, ops, NULL, NULL), MEM_OK);
    mem_index_set_flags(idx, 0, MEM_ROW_ARCHIVED);
    assert_int_equal(mem_graph_unlink(idx, 0, 0.5f, ops, NULL, NULL), MEM_OK);
    assert_int_equal(idx->graph_edges, 0);
    assert_int_equal(idx->max_degree, 0);
    assert_int_equal(MEM_INDEX_ROW(idx, 1, degree), 0);
    mem_index_free(idx);
}

/* Without the degree histogram (it failed to allocate) link/unlink fall back to a recount
 * and stay exact; the next recount rebuilds it. */
static void test_without_histogram(void **state)
{
    (void)state;
    rng_state = (test_seed() ^ 0x5851f42d4c957f2dull) | 1;
    const mem_vec_ops_t *ops = mem_vec_ops_for(MEM_VEC_SCALAR);
    const size_t dim = 6;
    mem_index_t *idx = NULL;
    assert_int_equal(mem_index_new(dim, &idx), MEM_OK);
    float v[6];
    for (size_t i = 0; i < 120; i++) {
        for (size_t d = 0; d < dim; d++)
            v[d] = (float)(2.0 * rng_unit() - 1.0);
        assert_int_equal(mem_vec_normalize(v, dim), 0);
        size_t pos = append_row(idx, v);
        if (i == 60) { /* drop the histogram half way */
            free(idx->_deg_hist);
            idx->_deg_hist = NULL;
            idx->_deg_hist_cap = 0;
        }
        assert_int_equal(mem_graph_link(idx, pos, 0.4f, ops, NULL, NULL), MEM_OK);
        if (i % 7 == 3) {
            assert_int_equal(mem_graph_unlink(idx, i / 2, 0.4f, ops, NULL, NULL), MEM_OK);
            mem_index_set_flags(idx, i / 2, MEM_ROW_ARCHIVED);
        }
        check_naive(idx, 0.4f, ops);
    }
    assert_non_null(idx->_deg_hist); /* the fallback recount rebuilt it */
    mem_index_free(idx);
}

/* The published tcd figures: rows normalised in double, stored as float, edge at >= 0.55. */
static void test_tcd_figures(void **state)
{
    (void)state;
    FILE *f = fopen("bench/data/tcd/corpus.f32", "rb");
    if (!f) skip();
    const size_t n = 5000, dim = 128;
    float *buf = malloc(n * dim * sizeof(float));
    assert_non_null(buf);
    assert_int_equal(fread(buf, sizeof(float), n * dim, f), n * dim);
    fclose(f);
    for (int isa = 0; isa < MEM_VEC_ISA_COUNT; isa++) {
        const mem_vec_ops_t *ops = mem_vec_ops_for((mem_vec_isa_t)isa);
        if (!ops) continue;
        mem_index_t *idx = NULL;
        assert_int_equal(mem_index_new(dim, &idx), MEM_OK);
        for (size_t i = 0; i < n; i++) {
            float v[128];
            memcpy(v, buf + i * dim, sizeof(v));
            assert_int_equal(mem_vec_normalize(v, dim), 0);
            append_row(idx, v);
        }
        assert_int_equal(mem_graph_rebuild(idx, 0.55, ops), MEM_OK); /* the default, as given */
        assert_int_equal(idx->graph_edges, 590313);
        assert_int_equal(idx->max_degree, 249);
        double gate = 0.0;
        for (size_t p = 0; p < n; p++)
            gate += (double)MEM_INDEX_ROW(idx, p, degree) / (double)idx->max_degree;
        gate /= (double)n;
        assert_true(fabs(gate - 0.948) < 0.0005);
        mem_index_free(idx);
    }
    free(buf);
}

/* ---- batches ---- */

/* Every kernel table the host runs, plus the AVX-512 one without VNNI when dispatch hands
 * out the VNNI one (both int8 kernels). */
static const mem_vec_ops_t *table_at(int i)
{
    if (i < MEM_VEC_ISA_COUNT) return mem_vec_ops_for((mem_vec_isa_t)i);
#if defined(__x86_64__)
    const mem_vec_ops_t *avx512 = mem_vec_ops_for(MEM_VEC_AVX512);
    if (i == MEM_VEC_ISA_COUNT && avx512 && avx512 != &mem_vec_ops_avx512_table)
        return &mem_vec_ops_avx512_table;
#endif
    return NULL;
}

/* Same degrees (active rows), edges and max degree. */
static void check_same(const mem_index_t *a, const mem_index_t *b, const char *what)
{
    assert_int_equal(a->n_rows, b->n_rows);
    for (size_t p = 0; p < a->n_rows; p++) {
        uint32_t da = MEM_INDEX_ROW(a, p, flags) == 0 ? MEM_INDEX_ROW(a, p, degree) : 0;
        uint32_t db = MEM_INDEX_ROW(b, p, flags) == 0 ? MEM_INDEX_ROW(b, p, degree) : 0;
        if (da != db)
            fail_msg("%s: pos %zu: degree %u vs %u (seed %llu)", what, p, da, db,
                     (unsigned long long)test_seed());
    }
    assert_int_equal(a->graph_edges, b->graph_edges);
    assert_int_equal(a->max_degree, b->max_degree);
}

/* A corpus: clustered rows, about one in eight an exact copy of an earlier one; when scale
 * is set, rows are not unit vectors (norms in [0.3, 3]): the int8 bound must not assume
 * they are. */
static float *make_corpus(size_t n, size_t dim, bool scale)
{
    enum { N_CENTRES = 5 };
    float *centres = malloc(N_CENTRES * dim * sizeof(float));
    float *vecs = malloc(n * dim * sizeof(float));
    assert_non_null(centres);
    assert_non_null(vecs);
    for (size_t i = 0; i < N_CENTRES * dim; i++)
        centres[i] = (float)(2.0 * rng_unit() - 1.0);
    for (size_t i = 0; i < n; i++) {
        float *v = vecs + i * dim;
        if (i > 4 && rng_unit() < 0.125) {
            memcpy(v, vecs + (size_t)(rng_unit() * (double)i) * dim, dim * sizeof(float));
            continue;
        }
        random_vec(v, dim, centres, N_CENTRES, 0.8);
        if (scale) {
            float f = (float)(0.3 + 2.7 * rng_unit());
            for (size_t d = 0; d < dim; d++)
                v[d] *= f;
        }
    }
    free(centres);
    return vecs;
}

static void batch_case(const mem_vec_ops_t *ops, size_t dim, size_t n, float thr, bool scale,
                       bool tie)
{
    float *vecs = make_corpus(n, dim, scale);
    mem_index_t *seq = NULL, *bat = NULL, *reb = NULL;
    assert_int_equal(mem_index_new(dim, &seq), MEM_OK);
    assert_int_equal(mem_index_new(dim, &bat), MEM_OK);
    assert_int_equal(mem_index_new(dim, &reb), MEM_OK);
    if (tie) /* the threshold is one pair's reference dot: `>=` must count it everywhere */
        thr = thr_at(vecs + 3 * dim, vecs + (n - 2) * dim, dim);
    for (size_t i = 0; i < n; i++) {
        size_t pos = append_row(seq, vecs + i * dim);
        assert_int_equal(mem_graph_link(seq, pos, thr, ops, NULL, NULL), MEM_OK);
        append_row(reb, vecs + i * dim);
    }
    assert_int_equal(mem_graph_rebuild(reb, thr, ops), MEM_OK);
    check_same(seq, reb, "sequential vs rebuild");
    if (tie) assert_true(MEM_INDEX_ROW(seq, 3, degree) >= 1);

    /* batches of varied sizes: empty, one row, across block borders, a whole block... */
    static const size_t sizes[] = {0, 1, 7, 8, 300, 0, 33, 1, 256, 9, 100, 2, 513};
    uint32_t *before = calloc(n, sizeof(uint32_t));
    touch_log_t tl = {calloc(n, 1), n};
    assert_non_null(before);
    assert_non_null(tl.seen);
    size_t done = 0;
    for (size_t k = 0; done < n; k++) {
        size_t want = sizes[k % (sizeof(sizes) / sizeof(sizes[0]))];
        if (want > n - done) want = n - done;
        size_t first = bat->n_rows;
        for (size_t i = 0; i < want; i++)
            append_row(bat, vecs + (done + i) * dim);
        done += want;
        for (size_t p = 0; p < bat->n_rows; p++)
            before[p] = MEM_INDEX_ROW(bat, p, degree);
        memset(tl.seen, 0, n);
        /* find reads only: the index is unchanged until apply */
        mem_graph_delta_t d;
        uint64_t edges0 = bat->graph_edges;
        assert_int_equal(mem_graph_link_find(bat, first, want, thr, ops, &d), MEM_OK);
        assert_int_equal(d.n_set, want);
        assert_int_equal(bat->graph_edges, edges0);
        for (size_t p = 0; p < bat->n_rows; p++)
            assert_int_equal(MEM_INDEX_ROW(bat, p, degree), before[p]);
        assert_int_equal(mem_graph_apply(bat, &d, on_touch, &tl), MEM_OK);
        mem_graph_delta_free(&d);
        for (size_t p = 0; p < bat->n_rows; p++)
            if (MEM_INDEX_ROW(bat, p, degree) != before[p] && !tl.seen[p])
                fail_msg("%s: pos %zu changed but not reported", ops->name, p);
        for (size_t p = first; p < first + want; p++)
            assert_true(tl.seen[p]);
    }
    check_same(seq, bat, "sequential vs batch");
    if (!scale) check_naive(bat, thr, ops);

    /* unlinks: a random third (with duplicates and inactive rows in the list) at once in
     * one index, one by one in the other; then a batch of one and an empty batch */
    size_t *rows = malloc(n * sizeof(size_t)), m = 0;
    assert_non_null(rows);
    for (size_t p = 0; p < n; p++)
        if (rng_unit() < 0.33) rows[m++] = p;
    if (m > 2) rows[m - 1] = rows[0]; /* a duplicate */
    assert_int_equal(mem_graph_unlink(seq, n / 2, thr, ops, NULL, NULL), MEM_OK);
    mem_index_set_flags(seq, n / 2, MEM_ROW_ARCHIVED);
    assert_int_equal(mem_graph_unlink_batch(bat, (size_t[]){n / 2}, 1, thr, ops, NULL, NULL),
                     MEM_OK);
    mem_index_set_flags(bat, n / 2, MEM_ROW_ARCHIVED);
    /* n / 2 is archived in both by now: listed again, it is ignored */
    if (m) rows[m / 2] = n / 2;
    for (size_t p = 0; p < n; p++)
        before[p] = MEM_INDEX_ROW(bat, p, degree);
    memset(tl.seen, 0, n);
    for (size_t i = 0; i < m; i++)
        if (MEM_INDEX_ROW(seq, rows[i], flags) == 0) {
            assert_int_equal(mem_graph_unlink(seq, rows[i], thr, ops, NULL, NULL), MEM_OK);
            mem_index_set_flags(seq, rows[i], MEM_ROW_SUPERSEDED);
        }
    assert_int_equal(mem_graph_unlink_batch(bat, rows, m, thr, ops, on_touch, &tl), MEM_OK);
    for (size_t p = 0; p < n; p++)
        if (MEM_INDEX_ROW(bat, p, degree) != before[p] && !tl.seen[p])
            fail_msg("%s: unlink: pos %zu changed but not reported", ops->name, p);
    for (size_t i = 0; i < m; i++) {
        assert_int_equal(MEM_INDEX_ROW(bat, rows[i], degree), 0);
        if (MEM_INDEX_ROW(bat, rows[i], flags) == 0)
            mem_index_set_flags(bat, rows[i], MEM_ROW_SUPERSEDED);
    }
    assert_int_equal(mem_graph_unlink_batch(bat, rows, 0, thr, ops, NULL, NULL), MEM_OK);
    check_same(seq, bat, "sequential vs batch unlink");
    for (size_t i = 0; i < m; i++)
        mem_index_set_flags(reb, rows[i], MEM_ROW_SUPERSEDED);
    mem_index_set_flags(reb, n / 2, MEM_ROW_ARCHIVED);
    assert_int_equal(mem_graph_rebuild(reb, thr, ops), MEM_OK);
    check_same(reb, bat, "rebuild vs batch unlink");
    if (!scale) check_naive(bat, thr, ops);

    /* a batch appended after the unlinks links against the remaining active rows only */
    size_t first = bat->n_rows;
    for (size_t i = 0; i < 40; i++) {
        append_row(bat, vecs + ((i * 13) % n) * dim);
        size_t pos = append_row(seq, vecs + ((i * 13) % n) * dim);
        assert_int_equal(mem_graph_link(seq, pos, thr, ops, NULL, NULL), MEM_OK);
    }
    mem_index_set_flags(bat, first + 5, MEM_ROW_ARCHIVED); /* an inactive new row: skipped */
    assert_int_equal(mem_graph_unlink(seq, first + 5, thr, ops, NULL, NULL), MEM_OK);
    mem_index_set_flags(seq, first + 5, MEM_ROW_ARCHIVED);
    assert_int_equal(mem_graph_link_batch(bat, first, 40, thr, ops, NULL, NULL), MEM_OK);
    check_same(seq, bat, "batch after unlinks");

    free(rows);
    free(before);
    free(tl.seen);
    free(vecs);
    mem_index_free(seq);
    mem_index_free(bat);
    mem_index_free(reb);
}

/* ---- ties: every kernel builds the same edge set ---- */

/* The built-in embedder's kind of rows: small integer counts of a few terms out of dim,
 * normalised in double and stored as float, a quarter of them repeats of earlier rows.
 * Many pairs share a cosine (1/2, 2/3, 1/sqrt(2), ...), which the kernels' f32 dots put on
 * either side of a threshold at that value. */
static float *make_counts(size_t n, size_t dim)
{
    float *vecs = calloc(n * dim, sizeof(float));
    assert_non_null(vecs);
    for (size_t i = 0; i < n; i++) {
        float *v = vecs + i * dim;
        if (i > 3 && rng_unit() < 0.25) {
            memcpy(v, vecs + (size_t)(rng_unit() * (double)i) * dim, dim * sizeof(float));
            continue;
        }
        size_t terms = 2 + (size_t)(rng_unit() * 4.0);
        for (size_t t = 0; t < terms; t++)
            v[(size_t)(rng_unit() * (double)(dim / 3))] += (float)(1 + (int)(rng_unit() * 3.0));
        assert_int_equal(mem_vec_normalize(v, dim), 0);
    }
    return vecs;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The centres of the k largest clusters of pair cosines (values within 1e-6 of each
 * other, below 0.999): thresholds where ties are densest. */
static size_t tie_thresholds(const float *vecs, size_t n, size_t dim, float *thr, size_t k)
{
    double *all = malloc(n * (n - 1) / 2 * sizeof(double));
    assert_non_null(all);
    size_t m = 0, got = 0;
    for (size_t a = 0; a < n; a++)
        for (size_t b = a + 1; b < n; b++)
            all[m++] = ref_dot(vecs + a * dim, vecs + b * dim, dim);
    qsort(all, m, sizeof(double), cmp_double);
    size_t best_len[8] = {0};
    double best_at[8] = {0};
    for (size_t i = 0; i < m;) {
        size_t j = i;
        while (j < m && all[j] - all[i] < 1e-6)
            j++;
        double centre = all[i + (j - i) / 2];
        size_t len = j - i;
        for (size_t s = 0; s < k && centre < 0.999; s++)
            if (len > best_len[s]) {
                memmove(best_len + s + 1, best_len + s, (k - 1 - s) * sizeof(size_t));
                memmove(best_at + s + 1, best_at + s, (k - 1 - s) * sizeof(double));
                best_len[s] = len;
                best_at[s] = centre;
                break;
            }
        i = j;
    }
    for (size_t s = 0; s < k; s++)
        if (best_len[s] > 1) thr[got++] = (float)best_at[s];
    free(all);
    return got;
}

/* Brute force: adj[a * n + b] = 1 for an edge between active rows a != b. */
static uint8_t *brute_edges(const mem_index_t *idx, double thr)
{
    size_t n = idx->n_rows, dim = idx->dim;
    uint8_t *adj = calloc(n * n, 1);
    assert_non_null(adj);
    for (size_t a = 0; a < n; a++)
        for (size_t b = a + 1; b < n; b++)
            if (MEM_INDEX_ROW(idx, a, flags) == 0 && MEM_INDEX_ROW(idx, b, flags) == 0 &&
                ref_dot(mem_index__vec(idx, a), mem_index__vec(idx, b), dim) >= thr)
                adj[a * n + b] = adj[b * n + a] = 1;
    return adj;
}

/* Every linked row's degree and neighbours, read back through the graph's own search (the
 * edges an unlink of that row alone would take), against the brute force. */
static void check_edges(const mem_index_t *idx, const uint8_t *adj, double thr,
                        const mem_vec_ops_t *ops, const char *what)
{
    size_t n = idx->n_rows;
    uint8_t *row = malloc(n);
    assert_non_null(row);
    for (size_t p = 0; p < n; p++) {
        uint32_t want = 0;
        for (size_t q = 0; q < n; q++)
            want += adj[p * n + q];
        uint32_t deg = MEM_INDEX_ROW(idx, p, linked) ? MEM_INDEX_ROW(idx, p, degree) : 0;
        if (deg != want)
            fail_msg("%s %s thr %.9g: pos %zu degree %u, brute force %u (seed %llu)", ops->name,
                     what, (double)thr, p, deg, want, (unsigned long long)test_seed());
        if (!MEM_INDEX_ROW(idx, p, linked)) continue;
        mem_graph_delta_t d;
        assert_int_equal(mem_graph_unlink_find(idx, &p, 1, thr, ops, &d), MEM_OK);
        memset(row, 0, n);
        for (size_t i = d.n_set; i < d.n; i++)
            row[d.pos[i]] = 1;
        for (size_t q = 0; q < n; q++)
            if (row[q] != adj[p * n + q])
                fail_msg("%s %s thr %.9g: edge %zu-%zu is %d, brute force %d (seed %llu)",
                         ops->name, what, (double)thr, p, q, row[q], adj[p * n + q],
                         (unsigned long long)test_seed());
        mem_graph_delta_free(&d);
    }
    free(row);
}

/* One corpus and threshold through every kernel table (and each without its tile kernel
 * and without the int8 bound): rebuild, sequential links and batches all give the brute
 * force's degrees, and the table's rebuild its edge set. Returns how many pairs some kernel scored
 * within the rounding window (2 (dim + 4) FLT_EPSILON) of the threshold: the pairs the reference
 * decides. */
static size_t ties_case(const float *vecs, size_t n, size_t dim, double thr)
{
    mem_index_t *ref = NULL;
    assert_int_equal(mem_index_new(dim, &ref), MEM_OK);
    for (size_t i = 0; i < n; i++)
        append_row(ref, vecs + i * dim);
    for (size_t p = 5; p < n; p += 17) /* some rows are not active */
        mem_index_set_flags(ref, p, MEM_ROW_ARCHIVED);
    uint8_t *adj = brute_edges(ref, thr);
    size_t near = 0;
    double w = 2.0 * (double)(dim + 4) * (double)FLT_EPSILON;
    for (int t = 0; t <= MEM_VEC_ISA_COUNT; t++) {
        const mem_vec_ops_t *tab = table_at(t);
        if (!tab) continue;
        for (size_t a = 0; a < n; a++)
            for (size_t b = a + 1; b < n; b++)
                near += fabs((double)pair_dot(tab, vecs + a * dim, vecs + b * dim, dim) - thr) <= w;
        mem_vec_ops_t no_i8 = *tab, no_tile = *tab;
        no_i8.dot_rows_i8 = NULL;
        no_i8.tile_i8 = NULL;
        no_tile.tile_i8 = NULL;
        no_tile.dot_rows_at = NULL;
        const mem_vec_ops_t *variants[3] = {tab, &no_tile, &no_i8};
        for (int v = 0; v < 3; v++) {
            const mem_vec_ops_t *ops = variants[v];
            mem_index_t *reb = NULL, *seq = NULL, *bat = NULL;
            assert_int_equal(mem_index_new(dim, &reb), MEM_OK);
            assert_int_equal(mem_index_new(dim, &seq), MEM_OK);
            assert_int_equal(mem_index_new(dim, &bat), MEM_OK);
            for (size_t i = 0; i < n; i++) {
                uint8_t fl = MEM_INDEX_ROW(ref, i, flags);
                size_t pos = append_row(reb, vecs + i * dim);
                mem_index_set_flags(reb, pos, fl);
                pos = append_row(seq, vecs + i * dim);
                mem_index_set_flags(seq, pos, fl);
                assert_int_equal(mem_graph_link(seq, pos, thr, ops, NULL, NULL), MEM_OK);
                pos = append_row(bat, vecs + i * dim);
                mem_index_set_flags(bat, pos, fl);
            }
            assert_int_equal(mem_graph_rebuild(reb, thr, ops), MEM_OK);
            for (size_t first = 0; first < n; first += 97) /* batches past the int8 minimum */
                assert_int_equal(mem_graph_link_batch(bat, first, 97, thr, ops, NULL, NULL),
                                 MEM_OK);
            if (v == 0) check_edges(reb, adj, thr, ops, "rebuild");
            check_same(reb, seq, "rebuild vs sequential");
            check_same(reb, bat, "rebuild vs batches");
            mem_index_free(reb);
            mem_index_free(seq);
            mem_index_free(bat);
        }
    }
    free(adj);
    mem_index_free(ref);
    return near;
}

static void test_ties_every_kernel(void **state)
{
    (void)state;
    rng_state = (test_seed() ^ 0x7f4a7c159e3779b9ull) | 1;
    /* count vectors at the thresholds where their cosines pile up, at the default 0.55 and
     * at 1/2; dims with and without a SIMD tail */
    static const size_t dims[] = {24, 45, 133};
    size_t near = 0;
    for (size_t k = 0; k < sizeof(dims) / sizeof(dims[0]); k++) {
        size_t dim = dims[k], n = 300;
        float *vecs = make_counts(n, dim);
        float thr[4] = {0.55f, 0.5f};
        size_t n_thr = 2 + tie_thresholds(vecs, n, dim, thr + 2, 2);
        for (size_t i = 0; i < n_thr; i++)
            near += ties_case(vecs, n, dim, thr[i]);
        /* a pair exactly on the threshold is an edge */
        near += ties_case(vecs, n, dim, thr_at(vecs + 7 * dim, vecs + 11 * dim, dim));
        /* thresholds float cannot hold: a pair's own reference dot (an edge, above the float
         * below it) and the double just above it (no edge, below the float above it) */
        double r = ref_dot(vecs + 7 * dim, vecs + 11 * dim, dim);
        if ((double)(float)r == r) r = ref_dot(vecs + 3 * dim, vecs + 5 * dim, dim);
        near += ties_case(vecs, n, dim, r);
        near += ties_case(vecs, n, dim, nextafter(r, INFINITY));
        free(vecs);
    }
    assert_true(near > 0); /* the data does put pairs inside the window */

    /* dyadic rows (entries 0 or 1/2, not unit vectors): every dot is exact in float, so
     * pairs at exactly 0.75 are ties on every kernel, and `>=` counts them */
    const size_t dim = 19, n = 200;
    float *vecs = calloc(n * dim, sizeof(float));
    assert_non_null(vecs);
    for (size_t i = 0; i < n * dim; i++)
        vecs[i] = rng_unit() < 0.3 ? 0.5f : 0.0f;
    ties_case(vecs, n, dim, 0.75f);
    free(vecs);
}

/* batch link == sequential links == rebuild, then batch unlink == sequential unlinks, on
 * every kernel table, with the int8 skip (its tile kernel, or one query at a time) and
 * without. */
static void test_batches(void **state)
{
    (void)state;
    rng_state = (test_seed() ^ 0x1d8e4e27c47d124full) | 1;
    for (int t = 0; t <= MEM_VEC_ISA_COUNT; t++) {
        const mem_vec_ops_t *tab = table_at(t);
        if (!tab) continue;
        mem_vec_ops_t no_i8 = *tab, no_tile = *tab;
        no_i8.dot_rows_i8 = NULL;
        no_i8.tile_i8 = NULL;
        no_tile.tile_i8 = NULL; /* the int8 skip through dot_rows_i8, one query at a time */
        no_tile.dot_rows_at = NULL;
        const mem_vec_ops_t *variants[3] = {tab, &no_tile, &no_i8};
        for (int v = 0; v < 3; v++) {
            if (v == 1 && !tab->tile_i8 && !tab->dot_rows_at) continue; /* the table itself */
            const mem_vec_ops_t *ops = variants[v];
            batch_case(ops, 16, 700, 0.55f, false, false);
            batch_case(ops, 37, 600, 0.3f, false, true);   /* odd dim, a tie */
            batch_case(ops, 384, 520, 0.55f, false, true); /* the bench's dim, a tie */
            batch_case(ops, 768, 600, 0.5f, false, true);  /* 513 rows: two tiles (int8 too) */
            batch_case(ops, 5, 400, 0.8f, false, false);   /* dense: large degrees */
            batch_case(ops, 24, 500, 0.9f, true, false);   /* rows are not unit vectors */
            batch_case(ops, 64, 300, -0.1f, false, false); /* nearly complete */
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_contract),
        cmocka_unit_test(test_empty_and_single),
        cmocka_unit_test(test_threshold_exactly_at_a_pair),
        cmocka_unit_test(test_sequences),
        cmocka_unit_test(test_without_histogram),
        cmocka_unit_test(test_tcd_figures),
        cmocka_unit_test(test_batches),
        cmocka_unit_test(test_ties_every_kernel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
