/* test_core_arena.c - the per-request arena: alignment, zeroing, growth, big blocks, reset
 * SPDX-License-Identifier: MIT
 */
/* cmocka.h needs stdarg.h, stddef.h and setjmp.h first */
/* clang-format off */
#include <setjmp.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
/* clang-format on */

#include "core/arena.h"

static void test_alloc_aligned_zeroed_distinct(void **state)
{
    mem_arena_t a;
    mem_arena_init(&a);
    char *prev = NULL;
    size_t sizes[] = {1, 3, 8, 15, 16, 17, 100, 1000, 1023, 1024, 1025, 5000, 70000, 0, 7};
    for (int round = 0; round < 50; round++)
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            size_t n = sizes[i];
            unsigned char *p = mem_arena_alloc(&a, n);
            assert_non_null(p);
            assert_int_equal((uintptr_t)p % alignof(max_align_t), 0);
            for (size_t k = 0; k < n; k++)
                assert_int_equal(p[k], 0);
            memset(p, 0xAB, n ? n : 1); /* writes must not reach a neighbour */
            assert_true((char *)p != prev);
            prev = (char *)p;
        }
    assert_true(a.total >= 50 * (70000 + 5000));
    mem_arena_free(&a);
    assert_null(a.head);
    assert_int_equal(a.total, 0);
    /* usable again after free */
    int *x = mem_arena_alloc(&a, sizeof(int));
    assert_non_null(x);
    assert_int_equal(*x, 0);
    mem_arena_free(&a);
    mem_arena_free(NULL);
}

/* Every byte handed out stays intact while others are handed out after it. */
static void test_no_overlap(void **state)
{
    mem_arena_t a = {0};
    enum { N = 2000 };
    static unsigned char *ptr[N];
    static size_t len[N];
    for (int i = 0; i < N; i++) {
        len[i] = (size_t)(i * 37 % 3000) + (i % 97 == 0 ? 40000 : 0);
        ptr[i] = mem_arena_alloc(&a, len[i]);
        assert_non_null(ptr[i]);
        memset(ptr[i], i & 0xFF, len[i]);
    }
    for (int i = 0; i < N; i++)
        for (size_t k = 0; k < len[i]; k++)
            if (ptr[i][k] != (unsigned char)(i & 0xFF))
                fail_msg("block %d byte %zu overwritten", i, k);
    mem_arena_free(&a);
}

/* Blocks come back from the C library with what an earlier arena wrote in them: every
 * allocation is still zeroed (the arena zeroes what it hands out, not the block). */
static void test_zeroed_over_reused_memory(void **state)
{
    size_t sizes[] = {24, 1, 700, 3000, 16, 9000, 200, 40000, 5};
    for (int round = 0; round < 30; round++) {
        mem_arena_t a = {0};
        for (int rep = 0; rep < 20; rep++)
            for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                size_t n = sizes[i] + (size_t)rep;
                unsigned char *p = mem_arena_alloc(&a, n);
                assert_non_null(p);
                for (size_t k = 0; k < n; k++)
                    if (p[k] != 0) fail_msg("round %d size %zu: byte %zu is %d", round, n, k, p[k]);
                memset(p, 0xCD, n);
            }
        mem_arena_free(&a);
    }
}

static void test_strndup_and_limits(void **state)
{
    mem_arena_t a = {0};
    char *s = mem_arena_strndup(&a, "hello world", 5);
    assert_string_equal(s, "hello");
    char *e = mem_arena_strndup(&a, NULL, 0);
    assert_string_equal(e, "");
    assert_null(mem_arena_alloc(&a, SIZE_MAX));
    assert_null(mem_arena_alloc(&a, SIZE_MAX - 8));
    assert_null(mem_arena_strndup(&a, "x", SIZE_MAX));
    mem_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_aligned_zeroed_distinct),
        cmocka_unit_test(test_no_overlap),
        cmocka_unit_test(test_zeroed_over_reused_memory),
        cmocka_unit_test(test_strndup_and_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
