/* test_core_scan.c - the fast scan (every ISA, pruned, split and merged) equals the reference
 * SPDX-License-Identifier: MIT
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/err.h"
#include "core/index_int.h"
#include "core/lexidx.h"
#include "core/lextok.h"
#include "core/scan.h"
#include "tests/unit/test_util.h"

#define DAY_MS (86400ll * 1000ll)

static uint64_t seed;

static void append(mem_index_t *idx, size_t i, int64_t ts, const float *v, uint16_t source,
                   uint8_t flags)
{
    char id[32];
    int len = snprintf(id, sizeof id, "m%zu", i);
    size_t pos;
    assert_int_equal(
        mem_index_append(idx, id, (size_t)len, ts, (int64_t)i + 1, v, source, flags, &pos), MEM_OK);
    assert_int_equal(pos, i);
}

static mem_scan_params_t default_params(const float *q, size_t k, int64_t origin)
{
    mem_scan_params_t p = {
        .query = q,
        .k = k,
        .origin_ms = origin,
        .decay = {.kind = MEM_DECAY_EXPONENTIAL,
                  .half_life_s = 0,
                  .shape = 1,
                  .offset_s = 0,
                  .recency_bias = 1.0},
        .coherence_weight = 0,
        .since_ms = INT64_MIN,
        .until_ms = INT64_MAX,
        .source = -1,
    };
    return p;
}

/* Compare a result list with the reference. exact: same pos and bit-equal score at every
 * rank (scalar kernel, same sums). Otherwise same pos and score within 1e-5, except that
 * two rows whose reference scores are within 1e-6 (a near-tie the kernel's last-bit
 * rounding may order either way) may trade places. */
static int same_result(const mem_scan_hit_t *ref, size_t n_ref, const mem_scan_hit_t *got,
                       size_t n_got, bool exact, char *why, size_t why_len)
{
    if (n_ref != n_got) {
        snprintf(why, why_len, "n_hits %zu != %zu", n_got, n_ref);
        return 0;
    }
    for (size_t i = 0; i < n_ref; i++) {
        if (exact) {
            if (ref[i].pos != got[i].pos || ref[i].score != got[i].score) {
                snprintf(why, why_len, "rank %zu: pos %zu score %.17g, want pos %zu score %.17g", i,
                         got[i].pos, got[i].score, ref[i].pos, ref[i].score);
                return 0;
            }
            continue;
        }
        if (fabs(ref[i].score - got[i].score) > 1e-5) {
            snprintf(why, why_len, "rank %zu: score %.9g want %.9g", i, got[i].score, ref[i].score);
            return 0;
        }
        if (ref[i].pos != got[i].pos && fabs(ref[i].score - got[i].score) > 1e-6) {
            snprintf(why, why_len, "rank %zu: pos %zu want %zu (scores %.9g %.9g)", i, got[i].pos,
                     ref[i].pos, got[i].score, ref[i].score);
            return 0;
        }
    }
    return 1;
}

typedef struct corpus {
    mem_index_t *idx;
    float *query;
    int64_t t0, t1; /* first and last timestamp */
} corpus_t;

static void build_random_corpus(corpus_t *c, uint64_t *s)
{
    static const size_t dims[] = {1, 3, 8, 16, 17, 33, 64, 128};
    size_t dim = dims[rng_below(s, sizeof(dims) / sizeof(dims[0]))];
    size_t n = rng_below(s, 8) == 0 ? rng_below(s, 20) : rng_below(s, 2000);
    assert_int_equal(mem_index_new(dim, &c->idx), MEM_OK);
    float *v = malloc(dim * sizeof(float));
    float *centers = malloc(4 * dim * sizeof(float));
    assert_non_null(v);
    assert_non_null(centers);
    for (int k = 0; k < 4; k++)
        random_unit(centers + k * dim, dim, s);
    int64_t ts = (int64_t)rng_below(s, 1000) * DAY_MS;
    int64_t step_max = (int64_t)(1 + rng_below(s, 3)) * DAY_MS / 4;
    c->t0 = ts;
    int n_sources = (int)rng_below(s, 4);
    for (size_t i = 0; i < n; i++) {
        if (rng_below(s, 4)) ts += (int64_t)rng_below(s, (size_t)step_max); /* ties allowed */
        unsigned kind = (unsigned)rng_below(s, 10);
        if (kind == 0 && i > 0) { /* exact duplicate of an earlier row: a tie by sim */
            memcpy(v, mem_index__vec(c->idx, rng_below(s, i)), dim * sizeof(float));
        } else if (kind < 5) { /* near a cluster center */
            const float *ctr = centers + rng_below(s, 4) * dim;
            for (size_t d = 0; d < dim; d++)
                v[d] = ctr[d] + (float)((rng_unit(s) - 0.5) * 0.6);
            if (mem_vec_normalize(v, dim) != 0) random_unit(v, dim, s);
        } else {
            random_unit(v, dim, s);
        }
        uint8_t flags = 0;
        unsigned fr = (unsigned)rng_below(s, 12);
        if (fr == 0)
            flags = MEM_ROW_SUPERSEDED;
        else if (fr == 1)
            flags = MEM_ROW_ARCHIVED;
        else if (fr == 2)
            flags = MEM_ROW_ARCHIVED | MEM_ROW_SUPERSEDED;
        uint16_t src = n_sources ? (uint16_t)rng_below(s, (size_t)n_sources + 1) : 0;
        append(c->idx, i, ts, v, src, flags);
        MEM_INDEX_ROW(c->idx, i, degree) = rng_below(s, 3) ? (uint32_t)rng_below(s, 50) : 0;
    }
    /* holes */
    for (size_t i = 0; i < n; i++)
        if (rng_below(s, 25) == 0) mem_index_set_flags(c->idx, i, MEM_ROW_DELETED);
    mem_index_recount_graph(c->idx);
    mem_index_publish(c->idx, rng_below(s, 5) == 0 ? rng_below(s, n + 1) : n);
    c->t1 = ts;

    c->query = malloc(dim * sizeof(float));
    assert_non_null(c->query);
    unsigned qk = (unsigned)rng_below(s, 4);
    if (qk == 0 && n > 0) { /* a stored row: its copies tie at the top */
        memcpy(c->query, mem_index__vec(c->idx, rng_below(s, n)), dim * sizeof(float));
    } else if (qk == 1) { /* opposite a cluster: most similarities negative */
        for (size_t d = 0; d < dim; d++)
            c->query[d] = -centers[d];
    } else {
        random_unit(c->query, dim, s);
    }
    free(v);
    free(centers);
}

static mem_scan_params_t random_params(const corpus_t *c, uint64_t *s)
{
    mem_scan_params_t p = default_params(c->query, 1 + rng_below(s, 40), c->t1);
    if (rng_below(s, 10) == 0) p.k = 1 + rng_below(s, MEM_SCAN_MAX_K);
    int64_t span = c->t1 - c->t0 + 1;
    switch (rng_below(s, 4)) { /* origin: now, in the past, before everything, in the future */
    case 0:
        break;
    case 1:
        p.origin_ms = c->t0 + (int64_t)(rng_unit(s) * (double)span);
        break;
    case 2:
        p.origin_ms = c->t0 - (int64_t)rng_below(s, 100) * DAY_MS;
        break;
    default:
        p.origin_ms = c->t1 + (int64_t)rng_below(s, 100) * DAY_MS;
    }
    p.decay.kind = (mem_decay_kind_t)rng_below(s, 5);
    double hl[] = {0, 0.5, 3, 30, 90, 365};
    p.decay.half_life_s = hl[rng_below(s, 6)] * 86400.0;
    p.decay.shape = 0.3 + rng_unit(s) * 3.0;
    p.decay.offset_s = rng_below(s, 3) == 0 ? rng_unit(s) * 20 * 86400.0 : 0.0;
    double rb[] = {0, 1, 1, 0.5, rng_unit(s)};
    p.decay.recency_bias = rb[rng_below(s, 5)];
    double w[] = {0, 0, 0.3, 1, rng_unit(s)};
    p.coherence_weight = w[rng_below(s, 5)];
    if (rng_below(s, 4) == 0) p.since_ms = c->t0 + (int64_t)(rng_unit(s) * (double)span);
    if (rng_below(s, 4) == 0) p.until_ms = c->t0 + (int64_t)(rng_unit(s) * (double)span);
    if (rng_below(s, 5) == 0) p.source = (int)rng_below(s, 3);
    if (rng_below(s, 4) == 0) {
        p.has_min_score = true;
        p.min_score = rng_unit(s) * 1.2 - 0.4;
    }
    p.include_superseded = rng_below(s, 2);
    p.include_archived = rng_below(s, 2);
    return p;
}

/* A random row mask over n rows (a metadata filter's): sparse, half or nearly full. */
static uint64_t *random_mask(size_t n, uint64_t *s)
{
    uint64_t *m = calloc(n / 64 + 1, sizeof(*m));
    double density[] = {0.02, 0.5, 0.97, 0.0};
    double d = density[rng_below(s, 4)];
    for (size_t i = 0; i < n; i++)
        if (rng_unit(s) < d) m[i / 64] |= UINT64_C(1) << (i % 64);
    return m;
}

static void test_random_vs_reference(void **state)
{
    (void)state;
    mem_scan_hit_t *ref = malloc(MEM_SCAN_MAX_K * sizeof(*ref));
    mem_scan_hit_t *got = malloc(MEM_SCAN_MAX_K * sizeof(*got));
    mem_scan_hit_t *parts[3], *merged = malloc(MEM_SCAN_MAX_K * sizeof(*merged));
    for (int i = 0; i < 3; i++)
        parts[i] = malloc(MEM_SCAN_MAX_K * sizeof(*parts[i]));
    char why[256];
    size_t n_cases = 0, n_pruned = 0;
    for (unsigned corpus_i = 0; corpus_i < 300; corpus_i++) {
        uint64_t cs = seed * 1000003ull + corpus_i;
        uint64_t s = cs;
        corpus_t c;
        build_random_corpus(&c, &s);
        for (unsigned qi = 0; qi < 12; qi++) {
            if (qi > 0 && rng_below(&s, 3) == 0) random_unit(c.query, c.idx->dim, &s);
            mem_scan_params_t p = random_params(&c, &s);
            uint64_t *mask = NULL;
            size_t n_vis = mem_index_visible(c.idx);
            if (rng_below(&s, 3) == 0) p.row_mask = mask = random_mask(n_vis, &s);
            size_t n_ref, sc_ref;
            mem_scan_reference(c.idx, &p, ref, &n_ref, &sc_ref);
            /* the candidate path: only the masked rows, listed, give the same answer */
            size_t *rows = malloc((n_vis ? n_vis : 1) * sizeof(*rows)), n_rows = 0;
            for (size_t r = 0; r < n_vis; r++)
                if (!mask || (mask[r / 64] >> (r % 64) & 1)) rows[n_rows++] = r;
            for (int isa = 0; isa <= MEM_VEC_ISA_COUNT; isa++) {
                const mem_vec_ops_t *ops = table_at(isa);
                if (!ops) continue;
                size_t n_got, sc_got;
                mem_scan_rows(c.idx, ops, &p, rows, n_rows, got, &n_got, &sc_got);
                if (!same_result(ref, n_ref, got, n_got, isa == MEM_VEC_SCALAR, why, sizeof why) ||
                    sc_got > sc_ref) {
                    print_error("rows %s corpus %u query %u (MEM_TEST_SEED=%llu): %s scanned "
                                "%zu/%zu\n",
                                ops->name, corpus_i, qi, (unsigned long long)seed, why, sc_got,
                                sc_ref);
                    fail();
                }
            }
            free(rows);
            for (int isa = 0; isa <= MEM_VEC_ISA_COUNT; isa++) {
                const mem_vec_ops_t *ops = table_at(isa);
                if (!ops) continue;
                bool exact = isa == MEM_VEC_SCALAR;
                size_t n_got, sc_got;
                mem_scan_run(c.idx, ops, &p, got, &n_got, &sc_got);
                n_cases++;
                if (!same_result(ref, n_ref, got, n_got, exact, why, sizeof why) ||
                    sc_got > sc_ref) {
                    print_error("run %s corpus %u query %u (MEM_TEST_SEED=%llu): %s "
                                "scanned %zu/%zu\n",
                                ops->name, corpus_i, qi, (unsigned long long)seed, why, sc_got,
                                sc_ref);
                    fail();
                }
                if (sc_got < sc_ref) n_pruned++;
                /* split into 1..3 interleaved parts and merged */
                size_t n_parts = 1 + (size_t)rng_below(&s, 3), counts[3], sc_sum = 0;
                for (size_t pt = 0; pt < n_parts; pt++) {
                    size_t sc;
                    mem_scan_run_part(c.idx, ops, &p, pt, n_parts, parts[pt], &counts[pt], &sc);
                    sc_sum += sc;
                }
                size_t n_m;
                mem_scan_merge((const mem_scan_hit_t *const *)parts, counts, n_parts, p.k, merged,
                               &n_m);
                if (!same_result(ref, n_ref, merged, n_m, exact, why, sizeof why) ||
                    sc_sum > sc_ref) {
                    print_error("part+merge %s x%zu corpus %u query %u (MEM_TEST_SEED=%llu): %s\n",
                                ops->name, n_parts, corpus_i, qi, (unsigned long long)seed, why);
                    fail();
                }
            }
            free(mask);
        }
        mem_index_free(c.idx);
        free(c.query);
    }
    /* the pruning is exercised, not just the full scan */
    assert_true(n_cases >= 3000);
    if (!(n_pruned > n_cases / 50)) print_error("pruned %zu of %zu\n", n_pruned, n_cases);
    assert_true(n_pruned > n_cases / 50);
    free(ref);
    free(got);
    free(merged);
    for (int i = 0; i < 3; i++)
        free(parts[i]);
}

/* ---- hand-made cases ---------------------------------------------------------------- */

/* A corpus of n rows, 1 day apart, dim 4; row i's vector has cos sims[i] with e0. */
static mem_index_t *line_corpus(const double *sims, size_t n)
{
    mem_index_t *idx;
    assert_int_equal(mem_index_new(4, &idx), MEM_OK);
    for (size_t i = 0; i < n; i++) {
        float v[4] = {(float)sims[i], (float)sqrt(1.0 - sims[i] * sims[i]), 0, 0};
        append(idx, i, (int64_t)i * DAY_MS, v, 0, 0);
    }
    mem_index_publish(idx, n);
    return idx;
}

static const float e0[4] = {1, 0, 0, 0};

static void run_all(const mem_index_t *idx, const mem_scan_params_t *p, mem_scan_hit_t *out,
                    size_t *n_out)
{
    mem_scan_hit_t ref[64], got[64];
    size_t n_ref, sc, n_got;
    char why[256];
    mem_scan_reference(idx, p, ref, &n_ref, &sc);
    for (int isa = 0; isa <= MEM_VEC_ISA_COUNT; isa++) {
        const mem_vec_ops_t *ops = table_at(isa);
        if (!ops) continue;
        mem_scan_run(idx, ops, p, got, &n_got, &sc);
        if (!same_result(ref, n_ref, got, n_got, true, why, sizeof why)) {
            print_error("%s: %s\n", ops->name, why);
            fail();
        }
    }
    memcpy(out, ref, n_ref * sizeof(*ref));
    *n_out = n_ref;
}

static void test_decay_families_rank(void **state)
{
    (void)state;
    /* old row 0 is the best match; row 9 (9 days newer) a bit worse */
    double sims[10] = {0.9, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.8};
    mem_index_t *idx = line_corpus(sims, 10);
    mem_scan_hit_t h[64];
    size_t n;
    mem_scan_params_t p = default_params(e0, 2, 9 * DAY_MS);
    run_all(idx, &p, h, &n); /* no decay: plain cosine */
    assert_int_equal(n, 2);
    assert_int_equal(h[0].pos, 0);
    assert_int_equal(h[1].pos, 9);
    assert_true(fabs(h[0].score - 0.9) < 1e-6);
    mem_decay_kind_t kinds[4] = {MEM_DECAY_EXPONENTIAL, MEM_DECAY_LINEAR, MEM_DECAY_GAUSSIAN,
                                 MEM_DECAY_WEIBULL};
    for (int k = 0; k < 4; k++) {
        p.decay.kind = kinds[k];
        p.decay.half_life_s = 6 * 86400.0; /* row 0 is 9 days old */
        run_all(idx, &p, h, &n);
        assert_int_equal(h[0].pos, 9);
        assert_true(fabs(h[0].score - 0.8) < 1e-6);
        assert_true(h[0].decay == 1.0);
        assert_int_equal(h[1].pos, 0);
        assert_true(h[1].score < 0.9 * 0.4 && h[1].score > 0.1);
    }
    /* decay none ignores the half-life */
    p.decay.kind = MEM_DECAY_NONE;
    run_all(idx, &p, h, &n);
    assert_int_equal(h[0].pos, 0);
    /* offset: a 10-day grace period makes everything fresh again */
    p.decay.kind = MEM_DECAY_EXPONENTIAL;
    p.decay.offset_s = 10 * 86400.0;
    run_all(idx, &p, h, &n);
    assert_int_equal(h[0].pos, 0);
    assert_true(h[0].age_s == 0.0);
    mem_index_free(idx);
}

static void test_origin_in_the_past(void **state)
{
    (void)state;
    double sims[10] = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5};
    mem_index_t *idx = line_corpus(sims, 10);
    mem_scan_hit_t h[64];
    size_t n;
    mem_scan_params_t p = default_params(e0, 3, 4 * DAY_MS);
    p.decay.half_life_s = 86400.0;
    run_all(idx, &p, h, &n);
    /* two-sided age: row 4 (age 0), then rows 5 and 3 (age 1 day, seq breaks the tie) */
    assert_int_equal(n, 3);
    assert_int_equal(h[0].pos, 4);
    assert_int_equal(h[1].pos, 5);
    assert_int_equal(h[2].pos, 3);
    assert_true(h[1].score == h[2].score);
    assert_true(fabs(h[1].age_s - 86400.0) < 1e-9);
    mem_index_free(idx);
}

static void test_since_until_min_score(void **state)
{
    (void)state;
    double sims[600];
    for (int i = 0; i < 600; i++)
        sims[i] = 0.05 + 0.9 * (double)((i * 37) % 600) / 600.0;
    mem_index_t *idx = line_corpus(sims, 600);
    mem_scan_hit_t h[64];
    size_t n, sc;
    mem_scan_params_t p = default_params(e0, 5, 600 * DAY_MS);
    p.since_ms = 100 * DAY_MS;
    p.until_ms = 199 * DAY_MS;
    run_all(idx, &p, h, &n);
    assert_int_equal(n, 5);
    for (size_t i = 0; i < n; i++)
        assert_true(h[i].pos >= 100 && h[i].pos <= 199);
    /* blocks outside the range are not scored */
    mem_scan_run(idx, mem_vec_ops_for(mem_vec_best_isa()), &p, h, &n, &sc);
    assert_int_equal(sc, 100);
    p.since_ms = INT64_MIN;
    p.until_ms = INT64_MAX;
    p.has_min_score = true;
    p.min_score = 0.94;
    run_all(idx, &p, h, &n);
    assert_true(n >= 1);
    for (size_t i = 0; i < n; i++)
        assert_true(h[i].score >= 0.94);
    p.min_score = 2.0;
    run_all(idx, &p, h, &n);
    assert_int_equal(n, 0);
    mem_index_free(idx);
}

static void test_flags_and_source(void **state)
{
    (void)state;
    double sims[6] = {0.9, 0.8, 0.7, 0.6, 0.5, 0.4};
    mem_index_t *idx = line_corpus(sims, 6);
    mem_index_set_flags(idx, 0, MEM_ROW_SUPERSEDED);
    mem_index_set_flags(idx, 1, MEM_ROW_ARCHIVED);
    mem_index_set_flags(idx, 2, MEM_ROW_DELETED);
    MEM_INDEX_ROW(idx, 3, source) = 1;
    mem_scan_hit_t h[64];
    size_t n;
    mem_scan_params_t p = default_params(e0, 6, 6 * DAY_MS);
    run_all(idx, &p, h, &n);
    assert_int_equal(n, 3);
    assert_int_equal(h[0].pos, 3);
    p.include_superseded = true;
    run_all(idx, &p, h, &n);
    assert_int_equal(n, 4);
    assert_int_equal(h[0].pos, 0);
    p.include_archived = true;
    run_all(idx, &p, h, &n);
    assert_int_equal(n, 5); /* the deleted row never comes back */
    assert_int_equal(h[1].pos, 1);
    p.source = 1;
    run_all(idx, &p, h, &n);
    assert_int_equal(n, 1);
    assert_int_equal(h[0].pos, 3);
    p.source = 0;
    run_all(idx, &p, h, &n);
    assert_int_equal(n, 4);
    /* rows past n_visible are not read */
    p.source = -1;
    mem_index_publish(idx, 4);
    run_all(idx, &p, h, &n);
    assert_int_equal(n, 3);
    mem_index_free(idx);
}

static void test_ties_newest_first_across_blocks(void **state)
{
    (void)state;
    /* 1000 identical rows, same timestamp: equal scores, ordered by seq descending, and the
     * pruning must not drop a newer tie in a later-visited block */
    mem_index_t *idx;
    assert_int_equal(mem_index_new(4, &idx), MEM_OK);
    for (size_t i = 0; i < 1000; i++) {
        float v[4] = {0.7f, (float)sqrt(1.0 - 0.49), 0, 0};
        append(idx, i, 5 * DAY_MS, v, 0, 0);
    }
    mem_index_publish(idx, 1000);
    mem_scan_hit_t h[64];
    size_t n;
    mem_scan_params_t p = default_params(e0, 7, 5 * DAY_MS);
    p.decay.half_life_s = 86400.0;
    run_all(idx, &p, h, &n);
    assert_int_equal(n, 7);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(h[i].pos, 999 - i);
    /* origin far in the future: still ties, still newest first */
    p.origin_ms = 500 * DAY_MS;
    run_all(idx, &p, h, &n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(h[i].pos, 999 - i);
    mem_index_free(idx);
}

static void test_negative_similarities(void **state)
{
    (void)state;
    double sims[5] = {-0.9, -0.2, -0.5, -0.1, -0.7};
    mem_index_t *idx = line_corpus(sims, 5);
    mem_scan_hit_t h[64];
    size_t n;
    mem_scan_params_t p = default_params(e0, 3, 4 * DAY_MS);
    p.decay.half_life_s = 86400.0;
    run_all(idx, &p, h, &n);
    /* score = sim * f: the old, very negative rows are shrunk toward 0 */
    assert_int_equal(n, 3);
    assert_true(h[0].score <= 0 && h[0].score >= h[1].score && h[1].score >= h[2].score);
    mem_index_free(idx);
}

static void test_pruning_skips_old_blocks(void **state)
{
    (void)state;
    /* 4096 rows over ~4 years, 30-day half-life: the top 10 come from the newest blocks */
    mem_index_t *idx;
    uint64_t s = seed;
    assert_int_equal(mem_index_new(16, &idx), MEM_OK);
    for (size_t i = 0; i < 4096; i++) {
        float v[16];
        random_unit(v, 16, &s);
        append(idx, i, (int64_t)i * 8 * 3600 * 1000, v, 0, 0);
    }
    mem_index_publish(idx, 4096);
    float q[16];
    random_unit(q, 16, &s);
    mem_scan_params_t p = default_params(q, 10, 4096ll * 8 * 3600 * 1000);
    p.decay.half_life_s = 30 * 86400.0;
    mem_scan_hit_t ref[10], got[10];
    size_t n_ref, sc_ref, n_got, sc_got;
    char why[256];
    mem_scan_reference(idx, &p, ref, &n_ref, &sc_ref);
    mem_scan_run(idx, mem_vec_ops_for(MEM_VEC_SCALAR), &p, got, &n_got, &sc_got);
    assert_true(same_result(ref, n_ref, got, n_got, true, why, sizeof why));
    assert_int_equal(sc_ref, 4096);
    assert_true(sc_got <= 4096 / 4);
    mem_index_free(idx);
}

static void test_merge(void **state)
{
    (void)state;
    mem_scan_hit_t a[3] = {{.pos = 1, .seq = 1, .score = 0.9},
                           {.pos = 2, .seq = 2, .score = 0.5},
                           {.pos = 3, .seq = 3, .score = 0.1}};
    mem_scan_hit_t b[2] = {{.pos = 4, .seq = 4, .score = 0.9}, {.pos = 5, .seq = 5, .score = 0.4}};
    const mem_scan_hit_t *lists[3] = {a, b, NULL};
    size_t counts[3] = {3, 2, 0}, n;
    mem_scan_hit_t out[4];
    mem_scan_merge(lists, counts, 3, 4, out, &n);
    assert_int_equal(n, 4);
    assert_int_equal(out[0].pos, 4); /* tie at 0.9: higher seq first */
    assert_int_equal(out[1].pos, 1);
    assert_int_equal(out[2].pos, 2);
    assert_int_equal(out[3].pos, 5);
    mem_scan_merge(lists, counts, 3, 0, out, &n);
    assert_int_equal(n, 0);
}

/* ---- text and hybrid match ---------------------------------------------------------- */

/* A small vocabulary with inflections and shared trigrams, so stems, trigrams, repeats and
 * ties all occur. */
static const char *const text_vocab[] = {
    "password", "passwords", "rotate", "rotated",     "rotation", "deploy",   "deployed",
    "server",   "servers",   "Berlin", "berlin",      "café",     "cafe",     "résumé",
    "meeting",  "meetings",  "the",    "is",          "I",        "my",       "2024",
    "tokyo",    "東京",      "photo",  "photography", "japan",    "japanese", "x",
    "dog",      "dogs",      "garden", "gardening",   "run",      "running",  "ran",
};
#define N_TEXT_VOCAB (sizeof(text_vocab) / sizeof(text_vocab[0]))

static void random_text(char *buf, size_t cap, size_t max_words, uint64_t *s)
{
    size_t n = rng_below(s, max_words + 1), len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n; i++) {
        /* Zipf-like: early words far more frequent */
        size_t w = rng_below(s, 1 + rng_below(s, N_TEXT_VOCAB));
        const char *t = text_vocab[w];
        size_t tl = strlen(t);
        if (len + tl + 2 >= cap) break;
        memcpy(buf + len, t, tl);
        len += tl;
        buf[len++] = rng_below(s, 6) ? ' ' : ',';
        buf[len] = 0;
    }
}

/* The lexical index of a random corpus: row i gets a random text (or none), flags follow
 * the vector index's (inactive rows leave the statistics, holes are removed), and the
 * rows below n_visible are published. */
static mem_lexidx_t *build_random_lex(const mem_index_t *idx, mem_lextok_t *tk, uint64_t *s)
{
    mem_lexidx_t *lx;
    bool grams = rng_below(s, 2);
    assert_int_equal(mem_lexidx_new(grams, &lx), MEM_OK);
    mem_lexdoc_t doc = {0};
    char buf[512];
    size_t max_words = 1 + rng_below(s, 30);
    for (size_t i = 0; i < idx->n_rows; i++) {
        size_t pos;
        uint8_t f = MEM_INDEX_ROW(idx, i, flags);
        if (rng_below(s, 10) == 0) {
            assert_int_equal(mem_lexidx_append(lx, NULL, f == 0, &pos), MEM_OK);
        } else {
            random_text(buf, sizeof buf, max_words, s);
            assert_int_equal(mem_lexdoc_build(&doc, tk, buf, strlen(buf), grams), MEM_OK);
            assert_int_equal(mem_lexidx_append(lx, &doc, (f & ~MEM_ROW_DELETED) == 0, &pos),
                             MEM_OK);
        }
        assert_int_equal(pos, i);
        if (f & MEM_ROW_DELETED) mem_lexidx_remove(lx, i);
    }
    mem_lexidx_publish(lx, idx->n_visible);
    mem_lexdoc_deinit(&doc);
    return lx;
}

static void test_text_random_vs_reference(void **state)
{
    (void)state;
    mem_scan_hit_t *ref = malloc(MEM_SCAN_MAX_K * sizeof(*ref));
    mem_scan_hit_t *got = malloc(MEM_SCAN_MAX_K * sizeof(*got));
    mem_scan_hit_t *parts[3], *merged = malloc(MEM_SCAN_MAX_K * sizeof(*merged));
    for (int i = 0; i < 3; i++)
        parts[i] = malloc(MEM_SCAN_MAX_K * sizeof(*parts[i]));
    mem_lextok_t *tk;
    mem_lextok_opts_t o = MEM_LEXTOK_DEFAULTS;
    assert_int_equal(mem_lextok_new(&o, &tk), MEM_OK);
    char why[256], qtext[512];
    size_t n_cases = 0, n_pruned = 0, n_nonempty = 0;
    for (unsigned corpus_i = 0; corpus_i < 250; corpus_i++) {
        uint64_t s = seed * 7919ull + corpus_i;
        corpus_t c;
        build_random_corpus(&c, &s);
        mem_lexidx_t *lx = build_random_lex(c.idx, tk, &s);
        for (unsigned qi = 0; qi < 10; qi++) {
            mem_scan_params_t p = random_params(&c, &s);
            random_text(qtext, sizeof qtext, 1 + rng_below(&s, 6), &s);
            mem_lexparams_t lp = MEM_LEXPARAMS_DEFAULTS;
            double gw[] = {0, 0.5, 1, rng_unit(&s)}, k1[] = {0.9, 0, 1.2, 3.0}, b[] = {0.4, 0, 1};
            lp.gram_weight = gw[rng_below(&s, 4)];
            lp.k1 = k1[rng_below(&s, 4)];
            lp.b = b[rng_below(&s, 3)];
            mem_lexq_t q;
            assert_int_equal(mem_lexq_prepare(&q, lx, tk, qtext, strlen(qtext), &lp), MEM_OK);
            p.lex = lx;
            p.text = &q;
            p.match = rng_below(&s, 3) ? MEM_SCAN_MATCH_TEXT : MEM_SCAN_MATCH_HYBRID;
            p.text_weight = rng_below(&s, 2) ? 0.5 : rng_unit(&s);
            if (p.has_min_score && p.match == MEM_SCAN_MATCH_TEXT)
                p.min_score = rng_unit(&s) * 0.6 - 0.1;
            size_t n_ref, sc_ref;
            mem_scan_reference(c.idx, &p, ref, &n_ref, &sc_ref);
            n_nonempty += n_ref > 0;
            for (size_t i = 0; i < n_ref; i++) { /* the reference obeys the rules it checks */
                assert_true(p.match != MEM_SCAN_MATCH_TEXT || ref[i].text_score > 0.0);
                assert_true(ref[i].text_score >= 0.0 && ref[i].text_score <= 1.0);
                assert_true(ref[i].sim >= 0.0f && ref[i].sim <= 1.0f);
            }
            for (int isa = 0; isa <= MEM_VEC_ISA_COUNT; isa++) {
                const mem_vec_ops_t *ops = table_at(isa);
                if (!ops) continue;
                /* text scores never touch a SIMD kernel: bit-equal on every ISA */
                bool exact = isa == MEM_VEC_SCALAR || p.match == MEM_SCAN_MATCH_TEXT;
                size_t n_got, sc_got;
                mem_scan_run(c.idx, ops, &p, got, &n_got, &sc_got);
                n_cases++;
                if (!same_result(ref, n_ref, got, n_got, exact, why, sizeof why) ||
                    sc_got > sc_ref) {
                    print_error("%s run %s corpus %u query %u \"%s\" (MEM_TEST_SEED=%llu): %s "
                                "scanned %zu/%zu\n",
                                p.match == MEM_SCAN_MATCH_TEXT ? "text" : "hybrid", ops->name,
                                corpus_i, qi, qtext, (unsigned long long)seed, why, sc_got, sc_ref);
                    fail();
                }
                for (size_t i = 0; i < n_got; i++)
                    if (got[i].text_score != ref[i].text_score && got[i].pos == ref[i].pos)
                        fail_msg("text_score of pos %zu differs", got[i].pos);
                if (sc_got < sc_ref) n_pruned++;
                size_t n_parts = 1 + (size_t)rng_below(&s, 3), counts[3], n_m;
                for (size_t pt = 0; pt < n_parts; pt++) {
                    size_t sc;
                    mem_scan_run_part(c.idx, ops, &p, pt, n_parts, parts[pt], &counts[pt], &sc);
                }
                mem_scan_merge((const mem_scan_hit_t *const *)parts, counts, n_parts, p.k, merged,
                               &n_m);
                if (!same_result(ref, n_ref, merged, n_m, exact, why, sizeof why)) {
                    print_error("part+merge %s x%zu corpus %u query %u (MEM_TEST_SEED=%llu): %s\n",
                                ops->name, n_parts, corpus_i, qi, (unsigned long long)seed, why);
                    fail();
                }
            }
            mem_lexq_deinit(&q);
        }
        mem_lexidx_free(lx);
        mem_index_free(c.idx);
        free(c.query);
    }
    mem_lextok_free(tk);
    assert_true(n_cases >= 2500);
    assert_true(n_nonempty > n_cases / 10);
    if (!(n_pruned > n_cases / 50)) print_error("pruned %zu of %zu\n", n_pruned, n_cases);
    assert_true(n_pruned > n_cases / 50);
    free(ref);
    free(got);
    free(merged);
    for (int i = 0; i < 3; i++)
        free(parts[i]);
}

/* A decayed text query visits the newest blocks only, as the vector scan does; with no
 * decay, the per-block maxima skip the blocks that lack the query's rare term. */
static void test_text_pruning_skips_blocks(void **state)
{
    (void)state;
    mem_index_t *idx;
    mem_lexidx_t *lx;
    mem_lextok_t *tk;
    mem_lextok_opts_t o = MEM_LEXTOK_DEFAULTS;
    assert_int_equal(mem_lextok_new(&o, &tk), MEM_OK);
    assert_int_equal(mem_index_new(4, &idx), MEM_OK);
    assert_int_equal(mem_lexidx_new(false, &lx), MEM_OK);
    mem_lexdoc_t doc = {0};
    float v[4] = {1, 0, 0, 0};
    char buf[128];
    for (size_t i = 0; i < 4096; i++) {
        /* every row mentions the password; one row in 97 also rotates it, the last block
         * holds the only "kubernetes" rows */
        snprintf(buf, sizeof buf, "password %s %s filler%zu", i % 97 == 0 ? "rotation" : "",
                 i >= 4096 - 256 && i % 7 == 0 ? "kubernetes" : "", i % 13);
        append(idx, i, (int64_t)i * 8 * 3600 * 1000, v, 0, 0);
        size_t pos;
        assert_int_equal(mem_lexdoc_build(&doc, tk, buf, strlen(buf), false), MEM_OK);
        assert_int_equal(mem_lexidx_append(lx, &doc, true, &pos), MEM_OK);
    }
    idx->n_visible = 4096;
    mem_lexidx_publish(lx, 4096);
    const char *queries[] = {"password rotation", "kubernetes password", "rotate passwords"};
    mem_lexparams_t lp = MEM_LEXPARAMS_DEFAULTS;
    for (int qi = 0; qi < 3; qi++) {
        for (int decayed = 0; decayed < 2; decayed++) {
            mem_lexq_t q;
            assert_int_equal(mem_lexq_prepare(&q, lx, tk, queries[qi], strlen(queries[qi]), &lp),
                             MEM_OK);
            mem_scan_params_t p = default_params(NULL, 10, 4096ll * 8 * 3600 * 1000);
            p.match = MEM_SCAN_MATCH_TEXT;
            p.lex = lx;
            p.text = &q;
            p.decay.half_life_s = decayed ? 30 * 86400.0 : 0.0;
            mem_scan_hit_t ref[10], got[10];
            size_t n_ref, sc_ref, n_got, sc_got;
            char why[256];
            mem_scan_reference(idx, &p, ref, &n_ref, &sc_ref);
            mem_scan_run(idx, mem_vec_ops_for(MEM_VEC_SCALAR), &p, got, &n_got, &sc_got);
            if (!same_result(ref, n_ref, got, n_got, true, why, sizeof why))
                fail_msg("%s decayed %d: %s", queries[qi], decayed, why);
            assert_int_equal(n_ref, 10);
            assert_int_equal(sc_ref, 4096); /* every row holds "password" */
            /* undecayed, only the query whose rare term sits in one block can skip blocks */
            if ((decayed || qi == 1) && !(sc_got <= 4096 / 4))
                fail_msg("%s decayed %d: scanned %zu", queries[qi], decayed, sc_got);
            mem_lexq_deinit(&q);
        }
    }
    /* a query no row matches scans nothing and answers nothing */
    mem_lexq_t q;
    assert_int_equal(mem_lexq_prepare(&q, lx, tk, "zebra", 5, &lp), MEM_OK);
    mem_scan_params_t p = default_params(NULL, 10, 0);
    p.match = MEM_SCAN_MATCH_TEXT;
    p.lex = lx;
    p.text = &q;
    mem_scan_hit_t got[10];
    size_t n_got, sc_got;
    mem_scan_run(idx, mem_vec_ops_for(MEM_VEC_SCALAR), &p, got, &n_got, &sc_got);
    assert_int_equal(n_got, 0);
    assert_int_equal(sc_got, 0);
    mem_lexq_deinit(&q);
    mem_lexdoc_deinit(&doc);
    mem_lexidx_free(lx);
    mem_index_free(idx);
    mem_lextok_free(tk);
}

/* ---- the work budget ------------------------------------------------------------------ */

/* One budgeted scan: mem_scan_rows over the listed rows when rows, else mem_scan_run. */
static bool run_budget(const corpus_t *c, const mem_vec_ops_t *ops, mem_scan_params_t p,
                       size_t budget, const size_t *rows, size_t n_rows, mem_scan_hit_t *got,
                       size_t *n_got)
{
    size_t sc;
    p.work_budget = budget;
    *n_got = 99999; /* must be overwritten either way */
    return rows ? mem_scan_rows(c->idx, ops, &p, rows, n_rows, got, n_got, &sc)
                : mem_scan_run(c->idx, ops, &p, got, n_got, &sc);
}

/* A budget only stops a scan, never changes it: with any budget >= the scan's work the
 * answer is the reference's (bit-equal on the scalar kernel); with less, false and no hits.
 * The smallest budget that suffices is found by bisection and both sides are checked. */
static void test_budget_vs_reference(void **state)
{
    (void)state;
    mem_scan_hit_t *ref = malloc(MEM_SCAN_MAX_K * sizeof(*ref));
    mem_scan_hit_t *got = malloc(MEM_SCAN_MAX_K * sizeof(*got));
    mem_lextok_t *tk;
    mem_lextok_opts_t o = MEM_LEXTOK_DEFAULTS;
    assert_int_equal(mem_lextok_new(&o, &tk), MEM_OK);
    char why[256], qtext[256];
    size_t n_cases = 0, n_cut = 0, n_over = 0;
    for (unsigned corpus_i = 0; corpus_i < 80; corpus_i++) {
        uint64_t s = seed * 104729ull + corpus_i;
        corpus_t c;
        build_random_corpus(&c, &s);
        mem_lexidx_t *lx = build_random_lex(c.idx, tk, &s);
        size_t n_vis = mem_index_visible(c.idx), full = n_vis * (c.idx->dim + MEM_SCAN_ROW_WORK);
        for (unsigned qi = 0; qi < 6; qi++) {
            mem_scan_params_t p = random_params(&c, &s);
            mem_lexq_t q = {0};
            bool text = rng_below(&s, 3) == 0;
            if (text) {
                random_text(qtext, sizeof qtext, 1 + rng_below(&s, 4), &s);
                mem_lexparams_t lp = MEM_LEXPARAMS_DEFAULTS;
                assert_int_equal(mem_lexq_prepare(&q, lx, tk, qtext, strlen(qtext), &lp), MEM_OK);
                p.lex = lx;
                p.text = &q;
                p.match = rng_below(&s, 2) ? MEM_SCAN_MATCH_TEXT : MEM_SCAN_MATCH_HYBRID;
                p.text_weight = 0.5;
            }
            size_t *rows = NULL, n_rows = 0;
            if (rng_below(&s, 3) == 0) { /* the candidate path, over every other row */
                rows = malloc((n_vis ? n_vis : 1) * sizeof(*rows));
                for (size_t r = 0; r < n_vis; r += 2)
                    rows[n_rows++] = r;
                uint64_t *m = calloc(n_vis / 64 + 1, sizeof(*m));
                for (size_t r = 0; r < n_vis; r += 2)
                    m[r / 64] |= UINT64_C(1) << (r % 64);
                p.row_mask = m; /* the reference sees the same rows */
            }
            size_t n_ref, sc_ref;
            mem_scan_reference(c.idx, &p, ref, &n_ref, &sc_ref);
            const uint64_t *mask = p.row_mask;
            if (rows) p.row_mask = NULL; /* mem_scan_rows takes the rows as listed */
            for (int isa = 0; isa <= MEM_VEC_ISA_COUNT; isa++) {
                const mem_vec_ops_t *ops = table_at(isa);
                if (!ops) continue;
                bool exact = isa == MEM_VEC_SCALAR || p.match == MEM_SCAN_MATCH_TEXT;
                size_t n_got;
                n_cases++;
                /* no scan reads more than every visible row */
                if (!run_budget(&c, ops, p, full ? full : 1, rows, n_rows, got, &n_got) ||
                    !same_result(ref, n_ref, got, n_got, exact, why, sizeof why)) {
                    print_error("budget=all %s corpus %u query %u (MEM_TEST_SEED=%llu): %s\n",
                                ops->name, corpus_i, qi, (unsigned long long)seed, why);
                    fail();
                }
                size_t lo = 0, hi = full ? full : 1; /* lo fails (or is 0), hi suffices */
                while (hi - lo > 1) {
                    size_t mid = lo + (hi - lo) / 2;
                    if (run_budget(&c, ops, p, mid, rows, n_rows, got, &n_got))
                        hi = mid;
                    else
                        lo = mid;
                }
                if (!run_budget(&c, ops, p, hi, rows, n_rows, got, &n_got) ||
                    !same_result(ref, n_ref, got, n_got, exact, why, sizeof why)) {
                    print_error("budget=%zu (least) %s corpus %u query %u: %s\n", hi, ops->name,
                                corpus_i, qi, why);
                    fail();
                }
                if (hi > 1) {
                    n_over++;
                    if (run_budget(&c, ops, p, hi - 1, rows, n_rows, got, &n_got) || n_got != 0)
                        fail_msg("budget %zu < work %zu: ran or returned %zu hits", hi - 1, hi,
                                 n_got);
                }
                if (hi < full) n_cut++;
                size_t b = 1 + rng_below(&s, full ? full : 1); /* any budget: one or the other */
                bool within = run_budget(&c, ops, p, b, rows, n_rows, got, &n_got);
                if (within != (b >= hi) || (!within && n_got != 0) ||
                    (within && !same_result(ref, n_ref, got, n_got, exact, why, sizeof why)))
                    fail_msg("budget %zu, work %zu: within=%d n=%zu", b, hi, within, n_got);
            }
            free(rows);
            free((void *)mask);
            if (text) mem_lexq_deinit(&q);
        }
        mem_lexidx_free(lx);
        mem_index_free(c.idx);
        free(c.query);
    }
    mem_lextok_free(tk);
    /* the pruned scans need less than the whole namespace, and budgets do stop scans */
    if (!(n_cut > n_cases / 20 && n_over > n_cases / 2))
        print_error("cases %zu cut %zu over %zu\n", n_cases, n_cut, n_over);
    assert_true(n_cut > n_cases / 20);
    assert_true(n_over > n_cases / 2);
    free(ref);
    free(got);
}

/* Tiny vectors do not stretch a budget: a row costs dim + MEM_SCAN_ROW_WORK, so a budget
 * that 2 x dim per row would have covered many times over stops a full scan at dim 4. */
static void test_budget_counts_rows_at_small_dim(void **state)
{
    enum { N = 4096 };
    double *sims = malloc(N * sizeof(*sims));
    for (size_t i = 0; i < N; i++)
        sims[i] = (double)(i % 97) / 97.0; /* no decay: every block may hold the best */
    mem_index_t *idx = line_corpus(sims, N);
    mem_scan_params_t p = default_params(e0, 10, (int64_t)N * DAY_MS);
    mem_scan_hit_t hits[10];
    size_t n_hits = 1, n_scanned;
    p.work_budget = (size_t)N * 4 * 8; /* eight times the components of every row */
    assert_false(mem_scan_run(idx, mem_vec_ops_for(MEM_VEC_SCALAR), &p, hits, &n_hits, &n_scanned));
    assert_int_equal(n_hits, 0);
    p.work_budget = (size_t)N * (4 + MEM_SCAN_ROW_WORK); /* every row at its full cost */
    assert_true(mem_scan_run(idx, mem_vec_ops_for(MEM_VEC_SCALAR), &p, hits, &n_hits, &n_scanned));
    assert_int_equal(n_hits, 10);
    mem_index_free(idx);
    free(sims);
}

int main(int argc, char **argv)
{
    const char *env = getenv("MEM_TEST_SEED");
    seed = env ? strtoull(env, NULL, 10) : 20260906ull;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_vs_reference),
        cmocka_unit_test(test_decay_families_rank),
        cmocka_unit_test(test_origin_in_the_past),
        cmocka_unit_test(test_since_until_min_score),
        cmocka_unit_test(test_flags_and_source),
        cmocka_unit_test(test_ties_newest_first_across_blocks),
        cmocka_unit_test(test_negative_similarities),
        cmocka_unit_test(test_pruning_skips_old_blocks),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_text_random_vs_reference),
        cmocka_unit_test(test_text_pruning_skips_blocks),
        cmocka_unit_test(test_budget_vs_reference),
        cmocka_unit_test(test_budget_counts_rows_at_small_dim),
    };
    if (argc > 1) cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
