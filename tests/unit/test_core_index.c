/* test_core_index.c - time-ordered blocks, id map, flags counts, holes, sources
 * SPDX-License-Identifier: MIT
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/err.h"
#include "core/index.h"

static void add(mem_index_t *idx, const char *id, int64_t ts, float x, uint16_t src, uint8_t flags,
                size_t want_pos)
{
    float v[20] = {0};
    v[0] = x;
    v[19] = 1.0f;
    size_t pos = 999999;
    assert_int_equal(
        mem_index_append(idx, id, strlen(id), ts, (int64_t)want_pos + 1, v, src, flags, &pos),
        MEM_OK);
    assert_int_equal(pos, want_pos);
}

static void test_new_rejects_bad_dim(void **state)
{
    (void)state;
    mem_index_t *idx = NULL;
    assert_int_equal(mem_index_new(0, &idx), MEM_EINVAL);
    assert_int_equal(mem_index_new(4097, &idx), MEM_EINVAL);
    assert_int_equal(mem_index_new(20, &idx), MEM_OK);
    assert_int_equal(idx->dim, 20);
    assert_int_equal(idx->stride, 32);
    mem_index_free(idx);
}

static void test_append_and_find(void **state)
{
    (void)state;
    mem_index_t *idx;
    assert_int_equal(mem_index_new(20, &idx), MEM_OK);
    char id[32];
    for (size_t i = 0; i < 3000; i++) {
        snprintf(id, sizeof id, "seg-%zu", i);
        add(idx, id, (int64_t)(i / 3) * 1000, (float)i, 0, 0, i);
    }
    assert_int_equal(idx->n_rows, 3000);
    assert_int_equal(idx->n_visible, 0); /* appends are not committed yet */
    assert_int_equal(idx->n_blocks, (3000 + MEM_INDEX_BLOCK_ROWS - 1) / MEM_INDEX_BLOCK_ROWS);
    assert_int_equal(idx->n_active, 3000);
    for (size_t i = 0; i < 3000; i += 7) {
        snprintf(id, sizeof id, "seg-%zu", i);
        assert_int_equal(mem_index_find(idx, id, strlen(id)), (long)i);
        assert_true(mem_index_vec(idx, i)[0] == (float)i);
        assert_true(mem_index_vec(idx, i)[19] == 1.0f);
        assert_string_equal(mem_index_id(idx, i), id);
        assert_int_equal(MEM_INDEX_ROW(idx, i, seq), (int64_t)i + 1);
        /* rows are 64-byte aligned */
        assert_int_equal((uintptr_t)mem_index_vec(idx, i) % 64, 0);
    }
    assert_int_equal(mem_index_find(idx, "seg-3000", 8), -1);
    assert_int_equal(mem_index_find(idx, "seg-1", 4), -1); /* prefix is not a match */
    /* block time ranges */
    mem_index_block_t *b1 = idx->blocks[1];
    assert_int_equal(b1->ts_min, (int64_t)(256 / 3) * 1000);
    assert_int_equal(b1->ts_max, (int64_t)(511 / 3) * 1000);
    assert_int_equal(b1->n_rows, 256);
    /* the clock ticks per insert */
    assert_int_equal(idx->clock, 3000);
    mem_index_free(idx);
}

static void test_flags_counts_and_holes(void **state)
{
    (void)state;
    mem_index_t *idx;
    assert_int_equal(mem_index_new(20, &idx), MEM_OK);
    add(idx, "a", 1, 1, 0, 0, 0);
    add(idx, "b", 2, 2, 0, MEM_ROW_SUPERSEDED, 1);
    add(idx, "c", 3, 3, 0, MEM_ROW_ARCHIVED, 2);
    add(idx, "d", 4, 4, 0, MEM_ROW_DELETED, 3); /* an append is never a hole */
    assert_int_equal(idx->n_active, 2);
    assert_int_equal(idx->n_superseded, 1);
    assert_int_equal(idx->n_archived, 1);
    assert_int_equal(idx->n_deleted, 0);
    mem_index_set_flags(idx, 0, MEM_ROW_SUPERSEDED);
    assert_int_equal(idx->n_active, 1);
    assert_int_equal(idx->n_superseded, 2);
    mem_index_set_flags(idx, 1, 0); /* restored */
    assert_int_equal(idx->n_active, 2);
    assert_int_equal(idx->n_superseded, 1);
    MEM_INDEX_ROW(idx, 3, degree) = 5;
    mem_index_set_flags(idx, 3, MEM_ROW_DELETED);
    assert_int_equal(idx->n_deleted, 1);
    assert_int_equal(idx->n_active, 1);
    assert_int_equal(mem_index_find(idx, "d", 1), -1);
    assert_null(mem_index_id(idx, 3));
    assert_int_equal(MEM_INDEX_ROW(idx, 3, degree), 0);
    /* a hole stays a hole, and keeps its position */
    mem_index_set_flags(idx, 3, 0);
    assert_int_equal(MEM_INDEX_ROW(idx, 3, flags), MEM_ROW_DELETED);
    assert_int_equal(idx->n_deleted, 1);
    assert_int_equal(idx->n_rows, 4);
    /* the id can be reused after delete */
    add(idx, "d", 5, 5, 0, 0, 4);
    assert_int_equal(mem_index_find(idx, "d", 1), 4);
    assert_int_equal(mem_index_find(idx, "c", 1), 2);
    mem_index_free(idx);
}

static void test_sources(void **state)
{
    (void)state;
    mem_index_t *idx;
    assert_int_equal(mem_index_new(4, &idx), MEM_OK);
    assert_int_equal(mem_index_source_intern(idx, NULL, 0), 0);
    assert_int_equal(mem_index_source_intern(idx, "", 0), 0);
    int a = mem_index_source_intern(idx, "slack", 5);
    int b = mem_index_source_intern(idx, "email", 5);
    assert_true(a > 0 && b > 0 && a != b);
    assert_int_equal(mem_index_source_intern(idx, "slack", 5), a);
    assert_int_equal(mem_index_source_find(idx, "email", 5), b);
    assert_int_equal(mem_index_source_find(idx, "emai", 4), 0);
    assert_int_equal(mem_index_source_find(idx, "web", 3), 0);
    assert_string_equal(mem_index_source_name(idx, (uint16_t)a), "slack");
    assert_null(mem_index_source_name(idx, 0));
    assert_null(mem_index_source_name(idx, 99));
    for (int i = 0; i < 40; i++) { /* growth */
        char s[16];
        int n = snprintf(s, sizeof s, "src%d", i);
        assert_int_equal(mem_index_source_intern(idx, s, (size_t)n), 3 + i);
    }
    assert_string_equal(mem_index_source_name(idx, 3), "src0");
    mem_index_free(idx);
}

static void test_recount_graph(void **state)
{
    (void)state;
    mem_index_t *idx;
    assert_int_equal(mem_index_new(20, &idx), MEM_OK);
    add(idx, "a", 1, 1, 0, 0, 0);
    add(idx, "b", 2, 1, 0, 0, 1);
    add(idx, "c", 3, 1, 0, 0, 2);
    add(idx, "d", 4, 1, 0, MEM_ROW_ARCHIVED, 3);
    MEM_INDEX_ROW(idx, 0, degree) = 2;
    MEM_INDEX_ROW(idx, 1, degree) = 1;
    MEM_INDEX_ROW(idx, 2, degree) = 1;
    MEM_INDEX_ROW(idx, 3, degree) = 9; /* not active: ignored */
    mem_index_recount_graph(idx);
    assert_int_equal(idx->graph_edges, 2);
    assert_int_equal(idx->max_degree, 2);
    mem_index_free(idx);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_rejects_bad_dim),    cmocka_unit_test(test_append_and_find),
        cmocka_unit_test(test_flags_counts_and_holes), cmocka_unit_test(test_sources),
        cmocka_unit_test(test_recount_graph),
    };
    if (argc > 1) cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
