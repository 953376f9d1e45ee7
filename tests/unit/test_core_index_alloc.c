/* test_core_index_alloc.c - every failed allocation of an append leaves a sound index
 * SPDX-License-Identifier: MIT
 *
 * core/index.c is compiled into this test with its allocator calls routed through a
 * counter that fails the Nth one (SQLite's do_faultsim_test in miniature). For each N, a
 * run of appends that grows the block table, the id map and the blocks must see MEM_ENOMEM
 * at that one call and nothing else wrong: the append that failed changed nothing, a
 * retry succeeds, and every row reads back. Run under ASan this also proves no write goes
 * past a buffer that a failed grow left short.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Counted calls: the grows (calloc, realloc, aligned_alloc) or the id copies (malloc). */
static int fault_mallocs;         /* 1: count malloc only, 0: count the others only */
static long fault_countdown = -1; /* the counted call that fails is the one that hits 0 */
static long fault_calls;

static int fault_now(int is_malloc)
{
    if (is_malloc != fault_mallocs) return 0;
    fault_calls++;
    return fault_countdown >= 0 && fault_countdown-- == 0;
}
static void *fault_malloc(size_t n)
{
    return fault_now(1) ? NULL : malloc(n);
}
static void *fault_calloc(size_t n, size_t m)
{
    return fault_now(0) ? NULL : calloc(n, m);
}
static void *fault_realloc(void *p, size_t n)
{
    return fault_now(0) ? NULL : realloc(p, n);
}
static void *fault_aligned_alloc(size_t a, size_t n)
{
    return fault_now(0) ? NULL : aligned_alloc(a, n);
}

#define malloc        fault_malloc
#define calloc        fault_calloc
#define realloc       fault_realloc
#define aligned_alloc fault_aligned_alloc
#include "core/index.c" /* NOLINT: the unit under test, with the allocator above */
#undef malloc
#undef calloc
#undef realloc
#undef aligned_alloc

#define DIM    4
#define N_ROWS (17 * MEM_INDEX_BLOCK_ROWS + 3) /* past the first growth of the block table */

static void row_vec(size_t i, float v[DIM])
{
    for (int d = 0; d < DIM; d++)
        v[d] = (float)((i * 31 + (size_t)d * 7) % 13) - 6.0f;
    v[i % DIM] += 20.0f;
    assert_int_equal(mem_vec_normalize(v, DIM), 0);
}

/* Append every row; the failing call gets MEM_ENOMEM once and is retried. */
static void fill(mem_index_t *idx, long fail_at, int *failed)
{
    char id[32];
    float v[DIM];
    fault_countdown = fail_at;
    for (size_t i = 0; i < N_ROWS; i++) {
        int len = snprintf(id, sizeof id, "r%zu", i);
        row_vec(i, v);
        size_t pos = SIZE_MAX, rows = mem_index_rows(idx);
        int rc = mem_index_append(idx, id, (size_t)len, (int64_t)i, (int64_t)i + 1, v, 0, 0, &pos);
        if (rc == MEM_ENOMEM) {
            (*failed)++;
            assert_int_equal(mem_index_rows(idx), rows); /* nothing changed */
            assert_int_equal(mem_index_find(idx, id, (size_t)len), -1);
            rc = mem_index_append(idx, id, (size_t)len, (int64_t)i, (int64_t)i + 1, v, 0, 0, &pos);
        }
        assert_int_equal(rc, MEM_OK);
        assert_int_equal(pos, i);
    }
    fault_countdown = -1;
}

static void check_rows(const mem_index_t *idx)
{
    char id[32];
    float v[DIM];
    assert_int_equal(mem_index_rows(idx), N_ROWS);
    for (size_t i = 0; i < N_ROWS; i++) {
        int len = snprintf(id, sizeof id, "r%zu", i);
        row_vec(i, v);
        assert_int_equal(mem_index_find(idx, id, (size_t)len), (long)i);
        assert_string_equal(mem_index_id(idx, i), id);
        assert_memory_equal(mem_index_vec(idx, i), v, sizeof(v));
        assert_int_equal(mem_index_seq(idx, i), (int64_t)i + 1);
    }
}

/* Fail the k-th counted call after mem_index_new, for each k < total (every `step`-th). */
static long fail_each(int mallocs, long step)
{
    mem_index_t *idx;
    int failed = 0;
    fault_mallocs = mallocs;
    assert_int_equal(mem_index_new(DIM, &idx), MEM_OK);
    fault_calls = 0;
    fill(idx, -1, &failed);
    check_rows(idx);
    mem_index_free(idx);
    long total = fault_calls, runs = 0;
    for (long k = 0; k < total; k += step) {
        assert_int_equal(mem_index_new(DIM, &idx), MEM_OK);
        failed = 0;
        fill(idx, k, &failed);
        assert_int_equal(failed, 1);
        check_rows(idx);
        mem_index_free(idx);
        runs++;
    }
    return runs;
}

static void test_every_failed_grow(void **state)
{
    (void)state;
    /* every grow of the block table, the id map and the blocks themselves */
    assert_true(fail_each(0, 1) > 50);
}

static void test_failed_id_copies(void **state)
{
    (void)state;
    assert_true(fail_each(1, 97) > 40);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_failed_grow),
        cmocka_unit_test(test_failed_id_copies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
