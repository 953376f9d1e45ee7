/* test_core_index.c - time-ordered blocks, id map, flags counts, holes, sources
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
#include "core/index.h"
#include "core/index_int.h"
#include "core/scan.h"
#include "tests/unit/test_util.h"

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
        assert_true(mem_index__vec(idx, i)[0] == (float)i);
        assert_true(mem_index__vec(idx, i)[19] == 1.0f);
        assert_string_equal(mem_index_id(idx, i), id);
        assert_int_equal(MEM_INDEX_ROW(idx, i, seq), (int64_t)i + 1);
        /* rows are 64-byte aligned */
        assert_int_equal((uintptr_t)mem_index__vec(idx, i) % 64, 0);
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
    mem_index_restore_link(idx, 3, 5);
    mem_index_set_flags(idx, 3, MEM_ROW_DELETED);
    assert_int_equal(idx->n_deleted, 1);
    assert_int_equal(idx->n_active, 1);
    assert_int_equal(mem_index_find(idx, "d", 1), -1);
    assert_null(mem_index_id(idx, 3));
    /* the graph fields are the graph owner's: it unlinks the hole, flags do not */
    assert_int_equal(MEM_INDEX_ROW(idx, 3, degree), 5);
    assert_true(mem_index_linked(idx, 3));
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
    mem_index_restore_link(idx, 0, 2);
    mem_index_restore_link(idx, 1, 1);
    mem_index_restore_link(idx, 2, 1);
    MEM_INDEX_ROW(idx, 3, degree) = 9; /* not linked: ignored */
    mem_index_recount_graph(idx);
    assert_int_equal(idx->graph_edges, 2);
    assert_int_equal(idx->max_degree, 2);
    assert_int_equal(idx->n_linked, 3);
    mem_index_free(idx);
}

/* ---- vacuum: a copy without the holes answers every scan the same ---- */

static size_t vrng(uint64_t *s, size_t n)
{
    return (size_t)(rng_next(s) % n);
}

static void same_scan(const mem_index_t *a, const mem_index_t *b, const mem_vec_ops_t *ops,
                      const mem_scan_params_t *p)
{
    mem_scan_hit_t ha[64], hb[64];
    size_t na = 0, nb = 0, sa = 0, sb = 0;
    if (ops) {
        mem_scan_run(a, ops, p, ha, &na, &sa);
        mem_scan_run(b, ops, p, hb, &nb, &sb);
    } else {
        mem_scan_reference(a, p, ha, &na, &sa);
        mem_scan_reference(b, p, hb, &nb, &sb);
    }
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++) {
        assert_int_equal(ha[i].seq, hb[i].seq);
        assert_true(ha[i].score == hb[i].score);
        assert_true(ha[i].sim == hb[i].sim);
        assert_string_equal(mem_index_id(a, ha[i].pos), mem_index_id(b, hb[i].pos));
    }
}

static void test_vacuum_same_answers(void **state)
{
    (void)state;
    for (uint64_t round = 0; round < 12; round++) {
        uint64_t s = 0x5eed0000u + round;
        size_t dim = 1 + vrng(&s, 70), n = vrng(&s, 1500);
        mem_index_t *old;
        assert_int_equal(mem_index_new(dim, &old), MEM_OK);
        const char *srcs[3] = {"alpha", "beta", "gamma"};
        for (int k = 0; k < 3; k++)
            assert_int_equal(mem_index_source_intern(old, srcs[k], strlen(srcs[k])), k + 1);
        float *v = malloc(dim * sizeof(float));
        for (size_t i = 0; i < n; i++) {
            do {
                for (size_t d = 0; d < dim; d++)
                    v[d] = (float)((double)(rng_next(&s) >> 11) * 0x1.0p-52 - 1.0);
            } while (mem_vec_normalize(v, dim) != 0);
            char id[32];
            int len = snprintf(id, sizeof id, "r%zu", i);
            uint8_t fl = vrng(&s, 4) == 0 ? (uint8_t)(1 + vrng(&s, 2)) : 0;
            size_t pos;
            assert_int_equal(mem_index_append(old, id, (size_t)len, 1000 * (int64_t)i,
                                              (int64_t)i + 1, v, (uint16_t)vrng(&s, 4), fl, &pos),
                             MEM_OK);
            MEM_INDEX_ROW(old, pos, access_count) = (uint32_t)vrng(&s, 50);
            MEM_INDEX_ROW(old, pos, tick) = vrng(&s, 100000);
            if (fl == 0) MEM_INDEX_ROW(old, pos, degree) = (uint32_t)vrng(&s, 9);
        }
        free(v);
        mem_index_publish(old, mem_index_rows(old));
        int mode = (int)round % 3; /* few, most or all rows deleted */
        for (size_t i = 0; i < n; i++)
            if (vrng(&s, 10) < (mode == 0 ? 2u : mode == 1 ? 8u : 10u))
                mem_index_set_flags(old, i, MEM_ROW_DELETED);
        mem_index_recount_graph(old);
        old->clock = 123456789;

        mem_index_t *vac;
        mem_index_publish(old, old->n_rows ? old->n_rows - 1 : 0);
        if (old->n_rows) assert_int_equal(mem_index_vacuum(old, &vac), MEM_EINVAL);
        mem_index_publish(old, mem_index_rows(old));
        assert_int_equal(mem_index_vacuum(old, &vac), MEM_OK);
        assert_int_equal(vac->n_rows, old->n_rows - old->n_deleted);
        assert_int_equal(vac->n_visible, vac->n_rows);
        assert_int_equal(vac->n_deleted, 0);
        assert_int_equal(vac->n_active, old->n_active);
        assert_int_equal(vac->n_superseded, old->n_superseded);
        assert_int_equal(vac->n_archived, old->n_archived);
        assert_int_equal(vac->clock, old->clock);
        assert_int_equal(vac->graph_edges, old->graph_edges);
        assert_int_equal(vac->max_degree, old->max_degree);
        assert_int_equal(vac->dim, old->dim);
        assert_int_equal(vac->_deg_hist_cap, old->_deg_hist_cap);
        assert_memory_equal(vac->_deg_hist, old->_deg_hist,
                            old->_deg_hist_cap * sizeof(*old->_deg_hist));
        for (int k = 1; k <= 3; k++)
            assert_string_equal(mem_index_source_name(vac, (uint16_t)k), srcs[k - 1]);
        assert_null(mem_index_source_name(vac, 4));

        size_t np = 0;
        for (size_t p = 0; p < old->n_rows; p++) {
            if (MEM_INDEX_ROW(old, p, flags) & MEM_ROW_DELETED) {
                char id[32];
                int len = snprintf(id, sizeof id, "r%zu", p);
                assert_int_equal(mem_index_find(vac, id, (size_t)len), -1);
                continue;
            }
            const char *id = mem_index_id(old, p);
            assert_string_equal(mem_index_id(vac, np), id);
            assert_int_equal(mem_index_find(vac, id, strlen(id)), (long)np);
            assert_memory_equal(mem_index__vec(vac, np), mem_index__vec(old, p),
                                dim * sizeof(float));
            const mem_index_block_t *ob = mem_index__block_of(old, p);
            const mem_index_block_t *nb = mem_index__block_of(vac, np);
            size_t r = p % MEM_INDEX_BLOCK_ROWS, nr = np % MEM_INDEX_BLOCK_ROWS;
            assert_memory_equal(nb->q8 + nr * vac->stride, ob->q8 + r * old->stride, old->stride);
            assert_true(nb->q8_scale[nr] == ob->q8_scale[r]);
            assert_true(nb->q8_err[nr] == ob->q8_err[r]);
            assert_int_equal(nb->ts_ms[nr], ob->ts_ms[r]);
            assert_int_equal(nb->seq[nr], ob->seq[r]);
            assert_int_equal(nb->degree[nr], ob->degree[r]);
            assert_int_equal(nb->access_count[nr], ob->access_count[r]);
            assert_int_equal(nb->tick[nr], ob->tick[r]);
            assert_int_equal(nb->source[nr], ob->source[r]);
            assert_int_equal(nb->flags[nr], ob->flags[r]);
            np++;
        }
        assert_int_equal(np, vac->n_rows);

        /* scans: the reference and every kernel table, varied parameters */
        float *q = malloc(dim * sizeof(float));
        for (int qi = 0; qi < 6; qi++) {
            do {
                for (size_t d = 0; d < dim; d++)
                    q[d] = (float)((double)(rng_next(&s) >> 11) * 0x1.0p-52 - 1.0);
            } while (mem_vec_normalize(q, dim) != 0);
            mem_scan_params_t p = {
                .query = q,
                .k = 1 + vrng(&s, 64),
                .origin_ms = 1000 * (int64_t)n,
                .decay = {.kind = MEM_DECAY_EXPONENTIAL,
                          .half_life_s = qi % 2 ? 100.0 : 0,
                          .shape = 1,
                          .offset_s = 0,
                          .recency_bias = qi % 2 ? 0.7 : 1.0},
                .coherence_weight = qi % 3 ? 0.4 : 0,
                .since_ms = qi == 4 ? 1000 * (int64_t)(n / 3) : INT64_MIN,
                .until_ms = qi == 4 ? 1000 * (int64_t)(2 * n / 3) : INT64_MAX,
                .source = qi == 5 ? 2 : -1,
                .include_superseded = qi == 2,
                .include_archived = qi == 3,
            };
            same_scan(old, vac, NULL, &p);
            for (int t = 0; t <= MEM_VEC_ISA_COUNT; t++)
                if (table_at(t)) same_scan(old, vac, table_at(t), &p);
        }
        free(q);

        /* access statistics bumped after the copy reach it through the sync */
        for (size_t p = 0; p < old->n_rows; p++)
            if (!(MEM_INDEX_ROW(old, p, flags) & MEM_ROW_DELETED))
                MEM_INDEX_ROW(old, p, access_count) += 7, MEM_INDEX_ROW(old, p, tick) = p * 3;
        old->clock += 99;
        mem_index_vacuum_sync_access(vac, old);
        assert_int_equal(vac->clock, old->clock);
        np = 0;
        for (size_t p = 0; p < old->n_rows; p++) {
            if (MEM_INDEX_ROW(old, p, flags) & MEM_ROW_DELETED) continue;
            assert_int_equal(MEM_INDEX_ROW(vac, np, access_count),
                             MEM_INDEX_ROW(old, p, access_count));
            assert_int_equal(MEM_INDEX_ROW(vac, np, tick), p * 3);
            np++;
        }

        /* the copy keeps working: appends, flags, degrees */
        float w[70] = {0};
        w[0] = 1.0f;
        size_t pos;
        assert_int_equal(
            mem_index_append(vac, "fresh", 5, 1000 * (int64_t)n, (int64_t)n + 1, w, 0, 0, &pos),
            MEM_OK);
        assert_int_equal(pos, np);
        assert_int_equal(mem_index_find(vac, "fresh", 5), (long)np);
        if (np > 0) {
            mem_index_set_flags(vac, 0, MEM_ROW_DELETED);
            assert_null(mem_index_id(vac, 0));
        }
        mem_index_free(old);
        mem_index_free(vac);
    }
}

/* ---- huge-page slabs: blocks past MEM_INDEX_SLAB_FROM share 2 MiB aligned slabs ---- */

static void test_slabs(void **state)
{
    (void)state;
    enum { DIM = 384, N = 12 * MEM_INDEX_BLOCK_ROWS + 100 };
    uint64_t s = 0x51ab;
    mem_index_t *idx;
    assert_int_equal(mem_index_new(DIM, &idx), MEM_OK);
    float *v = malloc((size_t)N * DIM * sizeof(float));
    for (size_t i = 0; i < N; i++) {
        float *r = v + i * DIM;
        do {
            for (size_t d = 0; d < DIM; d++)
                r[d] = (float)((double)(rng_next(&s) >> 11) * 0x1.0p-52 - 1.0);
        } while (mem_vec_normalize(r, DIM) != 0);
        char id[32];
        int len = snprintf(id, sizeof id, "s%zu", i);
        size_t pos;
        assert_int_equal(mem_index_append(idx, id, (size_t)len, 1000 * (int64_t)i, (int64_t)i + 1,
                                          r, 0, 0, &pos),
                         MEM_OK);
    }
    mem_index_publish(idx, mem_index_rows(idx));
    /* the first blocks up to MEM_INDEX_SLAB_FROM bytes are their own, the rest in slabs */
    size_t piece = sizeof(mem_index_block_t) + MEM_INDEX_BLOCK_ROWS * idx->stride * 5;
    assert_true(idx->_n_plain >= 1 && idx->_n_plain < idx->n_blocks);
    assert_true(idx->_n_plain * piece >= MEM_INDEX_SLAB_FROM);
    assert_true((idx->_n_plain - 1) * piece < MEM_INDEX_SLAB_FROM);
    assert_true(idx->_n_slabs >= 2);
    for (size_t i = 0; i < idx->_n_slabs; i++)
        assert_int_equal((uintptr_t)idx->_slabs[i] % ((size_t)2 << 20), 0);
    /* nothing written later overlaps anything written before: every row reads back */
    for (size_t i = 0; i < N; i++) {
        char id[32];
        int len = snprintf(id, sizeof id, "s%zu", i);
        assert_int_equal(mem_index_find(idx, id, (size_t)len), (long)i);
        assert_memory_equal(mem_index__vec(idx, i), v + i * DIM, DIM * sizeof(float));
        assert_int_equal((uintptr_t)mem_index__vec(idx, i) % 64, 0);
        assert_int_equal(MEM_INDEX_ROW(idx, i, seq), (int64_t)i + 1);
        assert_int_equal(MEM_INDEX_ROW(idx, i, ts_ms), 1000 * (int64_t)i);
    }
    for (size_t b = 0; b < idx->n_blocks; b++)
        assert_int_equal((uintptr_t)idx->blocks[b]->q8 % 64, 0);
    /* a copy without a quarter of the rows puts other rows in slabs; same answers */
    for (size_t i = 0; i < N; i++)
        if (vrng(&s, 4) == 0) mem_index_set_flags(idx, i, MEM_ROW_DELETED);
    mem_index_t *vac;
    assert_int_equal(mem_index_vacuum(idx, &vac), MEM_OK);
    assert_true(vac->_n_plain < vac->n_blocks);
    for (int qi = 0; qi < 4; qi++) {
        const float *q = v + vrng(&s, N) * DIM;
        mem_scan_params_t p = {
            .query = q,
            .k = 10,
            .origin_ms = 1000 * (int64_t)N,
            .decay = {.kind = MEM_DECAY_EXPONENTIAL,
                      .half_life_s = qi % 2 ? 600.0 : 0,
                      .shape = 1,
                      .offset_s = 0,
                      .recency_bias = 1.0},
            .since_ms = INT64_MIN,
            .until_ms = INT64_MAX,
            .source = -1,
        };
        same_scan(idx, vac, NULL, &p);
        for (int t = 0; t <= MEM_VEC_ISA_COUNT; t++)
            if (table_at(t)) same_scan(idx, vac, table_at(t), &p);
    }
    free(v);
    mem_index_free(idx);
    mem_index_free(vac);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_rejects_bad_dim),
        cmocka_unit_test(test_append_and_find),
        cmocka_unit_test(test_flags_counts_and_holes),
        cmocka_unit_test(test_sources),
        cmocka_unit_test(test_recount_graph),
        cmocka_unit_test(test_vacuum_same_answers),
        cmocka_unit_test(test_slabs),
    };
    if (argc > 1) cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
