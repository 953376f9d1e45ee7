/* test_core_meta.c - the metadata value index: mem_meta_eval equals a brute force over pairs
 * SPDX-License-Identifier: MIT
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/err.h"
#include "core/meta.h"
#include "tests/unit/test_util.h"

static uint64_t seed;

static size_t below(uint64_t *s, size_t n)
{
    return (size_t)(rng_next(s) % n);
}

static const char *const PATHS[] = {"user", "prio", "tags", "a.b", "a", "x.y.z", "flag", "nul"};
static const char *const STRS[] = {"ana", "bob", "", "zoe", "Ana", "ana ", "b"};

static mem_meta_val_t random_val(uint64_t *s)
{
    mem_meta_val_t v = {0};
    switch (below(s, 6)) {
    case 0:
        v.type = MEM_META_NULL;
        break;
    case 1:
        v.type = MEM_META_BOOL;
        v.b = below(s, 2);
        break;
    case 2:
    case 3:
        v.type = MEM_META_NUM;
        v.num = (double)below(s, 7) - 2.0 + (below(s, 3) == 0 ? 0.5 : 0.0);
        if (below(s, 10) == 0) v.num = -0.0;
        break;
    case 4:
        v.type = MEM_META_STR;
        v.str = STRS[below(s, sizeof(STRS) / sizeof(STRS[0]))];
        v.len = strlen(v.str);
        break;
    default:
        v.type = MEM_META_CONTAINER;
    }
    return v;
}

#define MAXP 8
typedef struct row {
    mem_meta_pair_t pairs[MAXP];
    size_t n;
} row_t;

static void random_row(row_t *r, uint64_t *s)
{
    r->n = below(s, MAXP + 1);
    for (size_t i = 0; i < r->n; i++) {
        const char *p = PATHS[below(s, sizeof(PATHS) / sizeof(PATHS[0]))];
        r->pairs[i].path = p;
        r->pairs[i].path_len = strlen(p);
        r->pairs[i].val = random_val(s);
        if (r->pairs[i].val.type == MEM_META_CONTAINER && below(s, 2)) r->pairs[i].val.type = 1;
    }
}

static void random_filter(mem_meta_cond_t *conds, mem_meta_val_t vals[][4], mem_meta_filter_t *f,
                          uint64_t *s)
{
    f->n_conds = 1 + below(s, 3);
    for (size_t k = 0; k < f->n_conds; k++) {
        mem_meta_cond_t *c = &conds[k];
        const char *p = PATHS[below(s, sizeof(PATHS) / sizeof(PATHS[0]))];
        c->path = p;
        c->path_len = strlen(p);
        c->op = (mem_meta_op_t)below(s, MEM_META_EXISTS + 1);
        c->vals = vals[k];
        c->n_vals = 1;
        for (int i = 0; i < 4; i++) {
            vals[k][i] = random_val(s);
            if (vals[k][i].type == MEM_META_CONTAINER)
                vals[k][i].type = MEM_META_STR, vals[k][i].str = "ana", vals[k][i].len = 3;
        }
        if (c->op == MEM_META_IN || c->op == MEM_META_NIN) c->n_vals = below(s, 5);
        if (c->op == MEM_META_EXISTS) vals[k][0].b = below(s, 2);
    }
    f->conds = conds;
}

static void test_eval_equals_brute_force(void **state)
{
    (void)state;
    enum { N = 300 };
    for (int round = 0; round < 40; round++) {
        uint64_t s = seed * 7919u + (uint64_t)round;
        mem_meta_t *m;
        assert_int_equal(mem_meta_new(&m), MEM_OK);
        static row_t rows[N + 1];
        memset(rows, 0, sizeof(rows));
        int64_t max_seq = 1 + (int64_t)below(&s, N);
        for (int64_t seq = 1; seq <= max_seq; seq++) {
            random_row(&rows[seq], &s);
            assert_int_equal(mem_meta_set(m, seq, rows[seq].pairs, rows[seq].n), MEM_OK);
        }
        /* changes: replace some rows' values, clear others (a patch, a delete) */
        for (int i = 0; i < 40; i++) {
            int64_t seq = 1 + (int64_t)below(&s, (size_t)max_seq);
            if (below(&s, 3) == 0) {
                mem_meta_clear(m, seq);
                rows[seq].n = 0;
            } else {
                random_row(&rows[seq], &s);
                assert_int_equal(mem_meta_set(m, seq, rows[seq].pairs, rows[seq].n), MEM_OK);
            }
        }
        size_t want_pairs = 0;
        for (int64_t seq = 1; seq <= max_seq; seq++)
            want_pairs += rows[seq].n;
        assert_int_equal(mem_meta_count(m), want_pairs);
        for (int q = 0; q < 60; q++) {
            mem_meta_cond_t conds[4];
            mem_meta_val_t vals[4][4];
            mem_meta_filter_t f;
            random_filter(conds, vals, &f, &s);
            uint64_t *bits;
            size_t n_match;
            int64_t upto = below(&s, 4) == 0 ? max_seq / 2 : max_seq;
            assert_int_equal(mem_meta_eval(m, &f, upto, &bits, &n_match), MEM_OK);
            size_t cnt = 0;
            for (int64_t seq = 0; seq <= upto; seq++) {
                bool want = seq > 0 && mem_meta_match_pairs(rows[seq].pairs, rows[seq].n, &f);
                bool got = bits[seq / 64] >> (seq % 64) & 1;
                if (want != got) {
                    print_error("round %d query %d seq %lld: got %d want %d (MEM_TEST_SEED=%llu)\n",
                                round, q, (long long)seq, got, want, (unsigned long long)seed);
                    fail();
                }
                cnt += want;
            }
            assert_int_equal(n_match, cnt);
            free(bits);
        }
        mem_meta_free(m);
    }
}

static void test_semantics(void **state)
{
    (void)state;
    mem_meta_t *m;
    assert_int_equal(mem_meta_new(&m), MEM_OK);
    mem_meta_pair_t r1[] = {{"user", 4, {.type = MEM_META_STR, .str = "ana", .len = 3}},
                            {"tags", 4, {.type = MEM_META_CONTAINER}},
                            {"tags", 4, {.type = MEM_META_STR, .str = "x", .len = 1}},
                            {"tags", 4, {.type = MEM_META_STR, .str = "y", .len = 1}},
                            {"p", 1, {.type = MEM_META_NUM, .num = 2}}};
    mem_meta_pair_t r2[] = {{"user", 4, {.type = MEM_META_STR, .str = "bob", .len = 3}},
                            {"p", 1, {.type = MEM_META_NUM, .num = 7.5}}};
    assert_int_equal(mem_meta_set(m, 1, r1, 5), MEM_OK);
    assert_int_equal(mem_meta_set(m, 2, r2, 2), MEM_OK);
    /* seq 3 has no metadata */
    struct {
        mem_meta_cond_t c;
        uint64_t want; /* bits of seqs 1..3 */
    } cases[] = {
        {{"user", 4, MEM_META_EQ, &(mem_meta_val_t){.type = MEM_META_STR, .str = "ana", .len = 3},
          1},
         1 << 1},
        {{"user", 4, MEM_META_NE, &(mem_meta_val_t){.type = MEM_META_STR, .str = "ana", .len = 3},
          1},
         1 << 2 | 1 << 3},
        {{"tags", 4, MEM_META_EQ, &(mem_meta_val_t){.type = MEM_META_STR, .str = "y", .len = 1}, 1},
         1 << 1},
        {{"p", 1, MEM_META_GTE, &(mem_meta_val_t){.type = MEM_META_NUM, .num = 2}, 1},
         1 << 1 | 1 << 2},
        {{"p", 1, MEM_META_GT, &(mem_meta_val_t){.type = MEM_META_NUM, .num = 2}, 1}, 1 << 2},
        {{"p", 1, MEM_META_LT, &(mem_meta_val_t){.type = MEM_META_STR, .str = "z", .len = 1}, 1},
         0}, /* a number never compares with a string */
        {{"tags", 4, MEM_META_EXISTS, &(mem_meta_val_t){.b = true}, 1}, 1 << 1},
        {{"tags", 4, MEM_META_EXISTS, &(mem_meta_val_t){.b = false}, 1}, 1 << 2 | 1 << 3},
        {{"nope", 4, MEM_META_NE, &(mem_meta_val_t){.type = MEM_META_NULL}, 1},
         1 << 1 | 1 << 2 | 1 << 3},
        {{"user", 4, MEM_META_GT, &(mem_meta_val_t){.type = MEM_META_STR, .str = "anb", .len = 3},
          1},
         1 << 2},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mem_meta_filter_t f = {&cases[i].c, 1};
        uint64_t *bits;
        size_t n;
        assert_int_equal(mem_meta_eval(m, &f, 3, &bits, &n), MEM_OK);
        if ((bits[0] & 0xe) != cases[i].want) {
            print_error("case %zu: bits %llx want %llx\n", i, (unsigned long long)bits[0],
                        (unsigned long long)cases[i].want);
            fail();
        }
        free(bits);
    }
    /* a patch moves a seq between postings */
    mem_meta_pair_t r1b[] = {{"user", 4, {.type = MEM_META_STR, .str = "bob", .len = 3}}};
    assert_int_equal(mem_meta_set(m, 1, r1b, 1), MEM_OK);
    mem_meta_filter_t f = {&cases[0].c, 1};
    uint64_t *bits;
    size_t n;
    assert_int_equal(mem_meta_eval(m, &f, 3, &bits, &n), MEM_OK);
    assert_int_equal(n, 0);
    free(bits);
    mem_meta_free(m);
}

int main(int argc, char **argv)
{
    const char *e = getenv("MEM_TEST_SEED");
    seed = e ? strtoull(e, NULL, 10) : 20260906u;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eval_equals_brute_force),
        cmocka_unit_test(test_semantics),
    };
    if (argc > 1) cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
