/* test_core_compact.c - retention policies on hand-made corpora with known answers
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off: cmocka needs the headers above first */
#include <cmocka.h>
/* clang-format on */

#include "core/compact.h"
#include "core/err.h"
#include "core/vec.h"

#define MAXN 64
#define MAXD 8

/* A small corpus: vectors stored inline, everything else defaulted (tick i+1, access 0). */
typedef struct corpus {
    size_t n, dim;
    float v[MAXN][MAXD];
    const float *ptr[MAXN];
    uint64_t tick[MAXN];
    uint32_t access[MAXN];
    float ctx[4 * MAXD];
    mem_compact_input_t in;
} corpus_t;

static void corpus_init(corpus_t *c, size_t n, size_t dim)
{
    memset(c, 0, sizeof(*c));
    c->n = n;
    c->dim = dim;
    for (size_t i = 0; i < n; i++) {
        c->ptr[i] = c->v[i];
        c->tick[i] = i + 1;
    }
    c->in = (mem_compact_input_t){.n = n,
                                  .dim = dim,
                                  .vecs = c->ptr,
                                  .tick = c->tick,
                                  .access = c->access,
                                  .context = NULL,
                                  .n_context = 0,
                                  .alpha = 1.0,
                                  .beta = 0.0,
                                  .gamma = 0.0,
                                  .dedup_threshold = 0.02};
}

static void set_vec(corpus_t *c, size_t i, double x0, double x1, double x2, double x3)
{
    double x[4] = {x0, x1, x2, x3};
    for (size_t d = 0; d < c->dim && d < 4; d++)
        c->v[i][d] = (float)x[d];
}

static void unit(corpus_t *c, size_t i, size_t axis)
{
    memset(c->v[i], 0, sizeof(c->v[i]));
    c->v[i][axis] = 1.0f;
}

/* Run a plan and compare with the expected kept indices (terminated by -1). */
static void expect_keep(mem_compact_policy_t p, const corpus_t *c, size_t target,
                        const int *expected)
{
    uint8_t keep[MAXN];
    mem_err_t err = {0};
    memset(keep, 0xAA, sizeof(keep));
    assert_int_equal(mem_compact_plan(p, &c->in, target, keep, &err), MEM_OK);
    uint8_t want[MAXN] = {0};
    for (const int *e = expected; *e >= 0; e++)
        want[*e] = 1;
    for (size_t i = 0; i < c->n; i++)
        if (keep[i] != want[i])
            fail_msg("%s target %zu: index %zu kept=%u, expected %u", mem_compact_policy_name(p),
                     target, i, keep[i], want[i]);
}

static void test_names(void **state)
{
    (void)state;
    for (int p = 0; p < MEM_COMPACT_POLICY_COUNT; p++) {
        mem_compact_policy_t got;
        const char *name = mem_compact_policy_name((mem_compact_policy_t)p);
        assert_non_null(name);
        assert_int_equal(mem_compact_policy_parse(name, &got), 0);
        assert_int_equal(got, p);
    }
    mem_compact_policy_t got;
    assert_int_equal(mem_compact_policy_parse("novelty", &got), 0);
    assert_int_equal(got, MEM_COMPACT_DEFAULT);
    assert_int_equal(mem_compact_policy_parse("Novelty", &got), -1);
    assert_int_equal(mem_compact_policy_parse("", &got), -1);
    assert_int_equal(mem_compact_policy_parse(NULL, &got), -1);
    assert_null(mem_compact_policy_name(MEM_COMPACT_POLICY_COUNT));
}

static void test_invalid_input(void **state)
{
    (void)state;
    corpus_t c;
    corpus_init(&c, 3, 2);
    for (size_t i = 0; i < 3; i++)
        unit(&c, i, i % 2);
    uint8_t keep[3];
    mem_err_t err = {0};
    c.in.beta = -0.1;
    assert_int_equal(mem_compact_plan(MEM_COMPACT_NOVELTY, &c.in, 1, keep, &err), MEM_EINVAL);
    assert_string_equal(err.field, "weights");
    c.in.beta = NAN;
    assert_int_equal(mem_compact_plan(MEM_COMPACT_NOVELTY, &c.in, 1, keep, &err), MEM_EINVAL);
    c.in.beta = 0.0;
    c.in.n_context = 1; /* context count without vectors */
    assert_int_equal(mem_compact_plan(MEM_COMPACT_NOVELTY, &c.in, 1, keep, &err), MEM_EINVAL);
    c.in.n_context = 0;
    c.in.dedup_threshold = -1;
    assert_int_equal(mem_compact_plan(MEM_COMPACT_DEDUP_GATED, &c.in, 1, keep, &err), MEM_EINVAL);
    c.in.dedup_threshold = 0.02;
    assert_int_equal(mem_compact_plan(MEM_COMPACT_POLICY_COUNT, &c.in, 1, keep, &err), MEM_EINVAL);
    assert_int_equal(mem_compact_plan(MEM_COMPACT_NOVELTY, &c.in, 1, keep, &err), MEM_OK);
    /* an empty input is fine and touches nothing */
    c.in.n = 0;
    assert_int_equal(mem_compact_plan(MEM_COMPACT_NOVELTY, &c.in, 5, NULL, &err), MEM_OK);
}

/* coherence_weighted: importance = a*recency + b*frequency + g*coherence. */
static void test_coherence_weighted(void **state)
{
    (void)state;
    corpus_t c;
    corpus_init(&c, 4, 2);
    set_vec(&c, 0, 1, 0, 0, 0);
    set_vec(&c, 1, 0, 1, 0, 0);
    set_vec(&c, 2, 0.6, 0.8, 0, 0);
    set_vec(&c, 3, -1, 0, 0, 0);
    c.tick[0] = 10; /* recency: (tick - 10) / 30 = 0, 1, 2/3, 1/3 */
    c.tick[1] = 40;
    c.tick[2] = 30;
    c.tick[3] = 20;
    c.access[0] = 4; /* frequency: 1, 0, 0.5, 0 */
    c.access[2] = 2;
    c.ctx[0] = 1.0f; /* context (1, 0): coherence 1, 0, 0.6, max(0, -1) = 0 */
    c.in.context = c.ctx;
    c.in.n_context = 1;
    /* recency only: 1 > 2 > 3 > 0 */
    expect_keep(MEM_COMPACT_COHERENCE_WEIGHTED, &c, 2, (int[]){1, 2, -1});
    /* frequency only: 0 (1) > 2 (0.5) > 1 = 3 (0): the tie goes to the lower index */
    c.in.alpha = 0, c.in.beta = 1;
    expect_keep(MEM_COMPACT_COHERENCE_WEIGHTED, &c, 3, (int[]){0, 1, 2, -1});
    /* coherence only, negative cosine clamped to 0: 0 > 2 > 1 = 3 */
    c.in.beta = 0, c.in.gamma = 1;
    expect_keep(MEM_COMPACT_COHERENCE_WEIGHTED, &c, 3, (int[]){0, 1, 2, -1});
    /* defaults: 0: .35 + .40 = .75; 1: .25; 2: .1667 + .175 + .24 = .5817; 3: .0833 */
    c.in.alpha = 0.25, c.in.beta = 0.35, c.in.gamma = 0.40;
    expect_keep(MEM_COMPACT_COHERENCE_WEIGHTED, &c, 2, (int[]){0, 2, -1});
    expect_keep(MEM_COMPACT_COHERENCE_WEIGHTED, &c, 3, (int[]){0, 1, 2, -1});
    /* no context: coherence is 0 for everyone */
    c.in.n_context = 0;
    c.in.alpha = 0, c.in.beta = 0, c.in.gamma = 1;
    expect_keep(MEM_COMPACT_COHERENCE_WEIGHTED, &c, 2, (int[]){0, 1, -1});
}

/* dedup_gated: recency is a counter that steps only on a real change. */
static void test_dedup_gated(void **state)
{
    (void)state;
    corpus_t c;
    corpus_init(&c, 5, 2);
    set_vec(&c, 0, 1, 0, 0, 0);
    set_vec(&c, 1, 1, 0.1, 0, 0);                                /* 1 - cos = 0.005: no step */
    set_vec(&c, 2, 0, 1, 0, 0);                                  /* step -> 1 */
    set_vec(&c, 3, 0.1, 1, 0, 0);                                /* no step */
    set_vec(&c, 4, 0, 1, 0, 0);                                  /* no step: counter 0 0 1 1 1 */
    expect_keep(MEM_COMPACT_DEDUP_GATED, &c, 1, (int[]){2, -1}); /* tie 2,3,4: lowest */
    expect_keep(MEM_COMPACT_DEDUP_GATED, &c, 3, (int[]){2, 3, 4, -1});
    expect_keep(MEM_COMPACT_DEDUP_GATED, &c, 4, (int[]){0, 2, 3, 4, -1});
    expect_keep(MEM_COMPACT_COHERENCE_WEIGHTED, &c, 1, (int[]){4, -1});
    /* a threshold below every change: each memory steps, so it is plain recency */
    c.in.dedup_threshold = 0.0;
    expect_keep(MEM_COMPACT_DEDUP_GATED, &c, 1, (int[]){4, -1});
}

/* structural_time: recency = cumulative |v_i - v_{i-1}| (+ coherence drops) / total. */
static void test_structural_time(void **state)
{
    (void)state;
    corpus_t c;
    corpus_init(&c, 4, 2);
    set_vec(&c, 0, 1, 0, 0, 0);
    set_vec(&c, 1, 0, 1, 0, 0); /* T = 0, r2, r2, r2: memories 1..3 tie */
    set_vec(&c, 2, 0, 1, 0, 0);
    set_vec(&c, 3, 0, 1, 0, 0);
    expect_keep(MEM_COMPACT_STRUCTURAL_TIME, &c, 2, (int[]){1, 2, -1});
    /* all identical: T = 0, recency all 0, ties to the lower index */
    for (size_t i = 0; i < 4; i++)
        set_vec(&c, i, 1, 0, 0, 0);
    expect_keep(MEM_COMPACT_STRUCTURAL_TIME, &c, 2, (int[]){0, 1, -1});
    /* a coherence drop counts as time: context (1,0), memory 2 turns away from it */
    set_vec(&c, 2, 0, 1, 0, 0);
    set_vec(&c, 3, 0, 1, 0, 0);
    c.ctx[0] = 1.0f;
    c.in.context = c.ctx;
    c.in.n_context = 1;
    /* T = 0, 0, r2 + 1, r2 + 1: 2 and 3 tie at the top */
    expect_keep(MEM_COMPACT_STRUCTURAL_TIME, &c, 1, (int[]){2, -1});
}

/* Trajectories along one axis: v_i = (x_i, 1), so |v_i - v_{i-1}| = |x_i - x_{i-1}|. */
static void line(corpus_t *c, const double *x, size_t n)
{
    corpus_init(c, n, 2);
    for (size_t i = 0; i < n; i++)
        set_vec(c, i, x[i], 1, 0, 0);
}

static void test_keyframe(void **state)
{
    (void)state;
    corpus_t c;
    const mem_compact_policy_t K = MEM_COMPACT_STRUCTURAL_KEYFRAME;
    /* evenly spread: T_i = i, B = 4: levels 0, 3, 6, 9 */
    line(&c, (double[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 10);
    expect_keep(K, &c, 4, (int[]){0, 3, 6, 9, -1});
    /* a level exactly between two memories goes to the earlier: levels 0, 1.5, 3 */
    line(&c, (double[]){0, 1, 2, 3}, 4);
    expect_keep(K, &c, 3, (int[]){0, 1, 3, -1});
    /* plateaus: the earliest memory of a plateau; levels 0, 5, 10 */
    line(&c, (double[]){0, 0, 0, 5, 5, 5, 10}, 7);
    expect_keep(K, &c, 3, (int[]){0, 3, 6, -1});
    /* a plateau at the end: the last level picks 2, the last index is forced in, one too
     * many: the earliest (0) is dropped */
    line(&c, (double[]){0, 4, 8, 8, 8}, 5);
    expect_keep(K, &c, 3, (int[]){1, 2, 4, -1});
    /* too few keyframes: T = 0,0,0,0,10, level 5 is a tie -> 0; picks {0, 4}; topped up by
     * beta*frequency + gamma*coherence, ties to the lower index */
    line(&c, (double[]){0, 0, 0, 0, 10}, 5);
    expect_keep(K, &c, 3, (int[]){0, 1, 4, -1});
    c.access[2] = 5;
    c.in.beta = 0.35;
    expect_keep(K, &c, 3, (int[]){0, 2, 4, -1});
    c.in.beta = 0.0; /* frequency has no weight: back to the lower index */
    expect_keep(K, &c, 3, (int[]){0, 1, 4, -1});
    /* budget >= n keeps everything; B < 2: 1 keeps the newest, 0 keeps nothing */
    line(&c, (double[]){0, 1, 5, 6}, 4);
    expect_keep(K, &c, 4, (int[]){0, 1, 2, 3, -1});
    expect_keep(K, &c, 9, (int[]){0, 1, 2, 3, -1});
    expect_keep(K, &c, 1, (int[]){3, -1});
    expect_keep(K, &c, 0, (int[]){-1});
    /* B = 2: first and last */
    expect_keep(K, &c, 2, (int[]){0, 3, -1});
    /* total structural time 0: evenly spaced (nearest to j(n-1)/(B-1), ties earliest) */
    line(&c, (double[]){3, 3, 3, 3, 3, 3, 3}, 7);
    expect_keep(K, &c, 3, (int[]){0, 3, 6, -1});
    line(&c, (double[]){3, 3, 3, 3, 3, 3}, 6);
    expect_keep(K, &c, 3, (int[]){0, 2, 5, -1});    /* level 2.5: tie -> 2 */
    expect_keep(K, &c, 4, (int[]){0, 2, 3, 5, -1}); /* levels 0, 5/3, 10/3, 5 */
}

/* novelty: heads (new information) first, echoes by frequency + coherence then newest,
 * and a restated head gives its place to the restatement. */
static void test_novelty_heads_and_echoes(void **state)
{
    (void)state;
    corpus_t c;
    corpus_init(&c, 12, 4);
    /* four topics, each a head followed by two echoes (1 - cos ~ 0.005) */
    for (size_t t = 0; t < 4; t++) {
        unit(&c, 3 * t, t);
        unit(&c, 3 * t + 1, t);
        c.v[3 * t + 1][(t + 1) % 4] = 0.1f;
        unit(&c, 3 * t + 2, t);
        c.v[3 * t + 2][(t + 2) % 4] = 0.1f;
    }
    /* recency only: the four heads, where coherence_weighted keeps the newest four */
    expect_keep(MEM_COMPACT_NOVELTY, &c, 4, (int[]){0, 3, 6, 9, -1});
    expect_keep(MEM_COMPACT_COHERENCE_WEIGHTED, &c, 4, (int[]){8, 9, 10, 11, -1});
    /* two heads: the newest two */
    expect_keep(MEM_COMPACT_NOVELTY, &c, 2, (int[]){6, 9, -1});
    /* more room: then the newest echoes */
    expect_keep(MEM_COMPACT_NOVELTY, &c, 6, (int[]){0, 3, 6, 9, 10, 11, -1});
    /* with a context on topic 1, its echoes come before newer ones */
    c.ctx[1] = 1.0f;
    c.in.context = c.ctx;
    c.in.n_context = 1;
    c.in.alpha = 0.25, c.in.beta = 0.35, c.in.gamma = 0.40;
    expect_keep(MEM_COMPACT_NOVELTY, &c, 6, (int[]){0, 3, 4, 5, 6, 9, -1});
}

/* With no echo and no restatement, novelty is exactly coherence_weighted. */
static void test_novelty_reduces_to_coherence_weighted(void **state)
{
    (void)state;
    corpus_t c;
    corpus_init(&c, 8, 8);
    for (size_t i = 0; i < 8; i++) {
        unit(&c, i, (i * 3) % 8);
        c.v[i][(i * 3 + 1) % 8] = 0.3f * (float)(i % 3);
        c.access[i] = (uint32_t)((i * 5) % 4);
    }
    c.ctx[2] = 1.0f;
    c.ctx[MAXD + 5] = 1.0f;
    c.in.context = c.ctx;
    c.in.n_context = 2;
    c.in.alpha = 0.25, c.in.beta = 0.35, c.in.gamma = 0.40;
    uint8_t a[8], b[8];
    for (size_t target = 0; target <= 8; target++) {
        assert_int_equal(mem_compact_plan(MEM_COMPACT_NOVELTY, &c.in, target, a, NULL), MEM_OK);
        assert_int_equal(mem_compact_plan(MEM_COMPACT_COHERENCE_WEIGHTED, &c.in, target, b, NULL),
                         MEM_OK);
        assert_memory_equal(a, b, 8);
    }
}

/* The rotated password: the old one was read often and matches the context as well as the
 * new one; coherence_weighted keeps the old one, novelty the new one. */
static void test_novelty_rotated_password(void **state)
{
    (void)state;
    corpus_t c;
    corpus_init(&c, 5, 6);
    /* 0: "db password is tulip" = e0 + 0.4 e1; 3: "db password is orchid" = e0 + 0.4 e4;
     * cos = 1 / 1.16 = 0.862: a restatement with changed content (not an echo) */
    set_vec(&c, 0, 1, 0.4, 0, 0);
    unit(&c, 1, 2);
    unit(&c, 2, 3);
    set_vec(&c, 3, 1, 0, 0, 0);
    c.v[3][4] = 0.4f;
    unit(&c, 4, 5);
    c.access[0] = 10;
    c.ctx[0] = 1.0f; /* the agent keeps asking about the password */
    c.in.context = c.ctx;
    c.in.n_context = 1;
    c.in.alpha = 0.25, c.in.beta = 0.35, c.in.gamma = 0.40;
    expect_keep(MEM_COMPACT_COHERENCE_WEIGHTED, &c, 1, (int[]){0, -1});
    expect_keep(MEM_COMPACT_NOVELTY, &c, 1, (int[]){3, -1});
    /* one eviction: novelty drops the outdated password, coherence_weighted the oldest
     * unrelated memory */
    expect_keep(MEM_COMPACT_COHERENCE_WEIGHTED, &c, 4, (int[]){0, 2, 3, 4, -1});
    expect_keep(MEM_COMPACT_NOVELTY, &c, 4, (int[]){1, 2, 3, 4, -1});
    /* also when the new password follows the old one directly */
    corpus_t d;
    corpus_init(&d, 3, 6);
    unit(&d, 0, 2);
    set_vec(&d, 1, 1, 0.4, 0, 0);
    set_vec(&d, 2, 1, 0, 0, 0);
    d.v[2][4] = 0.4f;
    d.access[1] = 10;
    d.in.alpha = 0.0, d.in.beta = 1.0; /* frequency only: the old one would win */
    expect_keep(MEM_COMPACT_COHERENCE_WEIGHTED, &d, 2, (int[]){0, 1, -1});
    expect_keep(MEM_COMPACT_NOVELTY, &d, 2, (int[]){0, 2, -1});
}

/* cos exactly at MEM_COMPACT_RESTATE_COS counts as a restatement (>=), just below does not. */
static void test_novelty_restate_threshold(void **state)
{
    (void)state;
    corpus_t c;
    corpus_init(&c, 3, 3);
    set_vec(&c, 0, 5, 0, 0, 0);
    set_vec(&c, 1, 0, 0, 1, 0);
    set_vec(&c, 2, 4, 3, 0, 0); /* cos(0, 2) = 20 / 25 = 0.8 exactly */
    c.access[0] = 5;
    c.in.alpha = 0.0, c.in.beta = 1.0;
    expect_keep(MEM_COMPACT_COHERENCE_WEIGHTED, &c, 2, (int[]){0, 1, -1});
    expect_keep(MEM_COMPACT_NOVELTY, &c, 2, (int[]){1, 2, -1});
    c.v[2][1] = 3.001f; /* cos just below 0.8: both are current */
    expect_keep(MEM_COMPACT_NOVELTY, &c, 2, (int[]){0, 1, -1});
}

/* Random corpora: every policy keeps exactly min(target, n), twice the same. */
static void test_exact_count_and_determinism(void **state)
{
    (void)state;
    uint64_t x = 88172645463325252ull;
    corpus_t c;
    for (size_t n = 1; n <= MAXN; n += 9) {
        corpus_init(&c, n, MAXD);
        for (size_t i = 0; i < n; i++) {
            for (size_t d = 0; d < MAXD; d++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                c.v[i][d] = (float)((double)(x >> 11) / 9007199254740992.0 - 0.5);
            }
            if (i % 3 == 1) /* some echoes */
                memcpy(c.v[i], c.v[i - 1], sizeof(c.v[i]));
            assert_int_equal(mem_vec_normalize(c.v[i], MAXD), 0);
            c.access[i] = (uint32_t)(x % 5);
        }
        memcpy(c.ctx, c.v[n / 2], sizeof(float) * MAXD);
        memcpy(c.ctx + MAXD, c.v[0], sizeof(float) * MAXD);
        c.in.context = c.ctx;
        c.in.n_context = 2;
        c.in.alpha = 0.25, c.in.beta = 0.35, c.in.gamma = 0.40;
        for (int p = 0; p < MEM_COMPACT_POLICY_COUNT; p++)
            for (size_t target = 0; target <= n + 2; target++) {
                uint8_t a[MAXN], b[MAXN];
                assert_int_equal(mem_compact_plan((mem_compact_policy_t)p, &c.in, target, a, NULL),
                                 MEM_OK);
                assert_int_equal(mem_compact_plan((mem_compact_policy_t)p, &c.in, target, b, NULL),
                                 MEM_OK);
                assert_memory_equal(a, b, n);
                size_t kept = 0;
                for (size_t i = 0; i < n; i++) {
                    assert_true(a[i] <= 1);
                    kept += a[i];
                }
                assert_int_equal(kept, target < n ? target : n);
            }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_invalid_input),
        cmocka_unit_test(test_coherence_weighted),
        cmocka_unit_test(test_dedup_gated),
        cmocka_unit_test(test_structural_time),
        cmocka_unit_test(test_keyframe),
        cmocka_unit_test(test_novelty_heads_and_echoes),
        cmocka_unit_test(test_novelty_reduces_to_coherence_weighted),
        cmocka_unit_test(test_novelty_rotated_password),
        cmocka_unit_test(test_novelty_restate_threshold),
        cmocka_unit_test(test_exact_count_and_determinism),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
