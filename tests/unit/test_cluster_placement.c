/* test_cluster_placement.c - rendezvous placement: deterministic, order-free, few moves when
 * nodes come and go, balanced. cluster/ is linked into the server only: compiled in here.
 * SPDX-License-Identifier: MIT
 */
/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
/* clang-format on */

#include "cluster/placement.c"

static const char *const six[] = {"node-1", "node-2", "node-3", "node-4", "node-5", "node-6"};

static void group(const char *ns, const char *const *nodes, size_t n, size_t r, char out[][16],
                  size_t *got)
{
    size_t idx[MEM_CLUSTER_PLACE_MAX];
    *got = mem_cluster_place(ns, nodes, n, r, idx);
    for (size_t i = 0; i < *got; i++)
        snprintf(out[i], 16, "%s", nodes[idx[i]]);
}

static bool in_group(char g[][16], size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(g[i], id) == 0) return true;
    return false;
}

/* The same answer whatever the order of the node list; distinct nodes; r capped. */
static void test_deterministic(void **state)
{
    const char *rev[6];
    for (int i = 0; i < 6; i++)
        rev[i] = six[5 - i];
    for (int k = 0; k < 200; k++) {
        char ns[32], a[7][16], b[7][16];
        snprintf(ns, sizeof(ns), "tenant-%d", k);
        size_t na, nb;
        group(ns, six, 6, 3, a, &na);
        group(ns, rev, 6, 3, b, &nb);
        assert_int_equal(na, 3);
        assert_int_equal(nb, 3);
        for (size_t i = 0; i < 3; i++)
            assert_string_equal(a[i], b[i]); /* same order too: the primary agrees */
        assert_string_not_equal(a[0], a[1]);
        assert_string_not_equal(a[1], a[2]);
        assert_string_not_equal(a[0], a[2]);
    }
    char g[7][16];
    size_t n;
    group("x", six, 2, 5, g, &n); /* fewer nodes than r */
    assert_int_equal(n, 2);
    const char *dup[] = {"a", "a", "b"};
    group("x", dup, 3, 3, g, &n); /* duplicates count once */
    assert_int_equal(n, 2);
    group("x", six, 0, 2, g, &n);
    assert_int_equal(n, 0);
    group("x", six, 6, 0, g, &n);
    assert_int_equal(n, 0);
    group("x", six, 6, 99, g, &n); /* capped */
    assert_int_equal(n, 6);
    /* the group of r is the prefix of the group of r + 1 */
    for (int k = 0; k < 100; k++) {
        char ns[32], a[7][16], b[7][16];
        snprintf(ns, sizeof(ns), "p%d", k);
        size_t na, nb;
        group(ns, six, 6, 2, a, &na);
        group(ns, six, 6, 4, b, &nb);
        assert_string_equal(a[0], b[0]);
        assert_string_equal(a[1], b[1]);
    }
    /* weights are a pure function of the two names */
    assert_true(mem_cluster_place_weight("a", "b") == mem_cluster_place_weight("a", "b"));
    assert_true(mem_cluster_place_weight("a", "b") != mem_cluster_place_weight("b", "a"));
    assert_true(mem_cluster_place_weight("ab", "") != mem_cluster_place_weight("a", "b"));
}

/* Adding a 7th node changes the group of about r/7 of the namespaces, only by bringing the
 * newcomer in; removing one changes only the groups it was in. */
static void test_minimal_moves(void **state)
{
    const char *seven[7];
    for (int i = 0; i < 6; i++)
        seven[i] = six[i];
    seven[6] = "node-7";
    const size_t N = 3000, R = 2;
    size_t changed = 0;
    for (size_t k = 0; k < N; k++) {
        char ns[32], a[7][16], b[7][16];
        snprintf(ns, sizeof(ns), "ns-%zu", k);
        size_t na, nb;
        group(ns, six, 6, R, a, &na);
        group(ns, seven, 7, R, b, &nb);
        size_t lost = 0;
        for (size_t i = 0; i < R; i++)
            lost += !in_group(b, nb, a[i]);
        if (lost) {
            changed++;
            assert_int_equal(lost, 1);              /* one holder gives way... */
            assert_true(in_group(b, nb, "node-7")); /* ...to the newcomer only */
        }
        /* removing node-3: only its groups change, by one node each */
        const char *five[5];
        size_t m = 0;
        for (int i = 0; i < 6; i++)
            if (strcmp(six[i], "node-3") != 0) five[m++] = six[i];
        char c[7][16];
        size_t nc;
        group(ns, five, 5, R, c, &nc);
        if (!in_group(a, na, "node-3")) {
            for (size_t i = 0; i < R; i++)
                assert_string_equal(a[i], c[i]);
        } else {
            size_t kept = 0;
            for (size_t i = 0; i < R; i++)
                kept += in_group(c, nc, a[i]);
            assert_int_equal(kept, R - 1);
        }
    }
    /* expected R/7 = 28.6 %; allow a wide band */
    double frac = (double)changed / (double)N;
    assert_true(frac > 0.22 && frac < 0.36);
}

/* Every node is in about R/N of the groups and is primary of about 1/N. */
static void test_balance(void **state)
{
    const size_t N = 6000, R = 2;
    size_t holds[6] = {0}, primary[6] = {0};
    for (size_t k = 0; k < N; k++) {
        char ns[32];
        snprintf(ns, sizeof(ns), "agent-%zu", k);
        size_t idx[MEM_CLUSTER_PLACE_MAX];
        size_t n = mem_cluster_place(ns, six, 6, R, idx);
        assert_int_equal(n, R);
        primary[idx[0]]++;
        for (size_t i = 0; i < n; i++)
            holds[idx[i]]++;
    }
    for (int i = 0; i < 6; i++) {
        double h = (double)holds[i] / (double)N, p = (double)primary[i] / (double)N;
        assert_true(h > 2.0 / 6 * 0.85 && h < 2.0 / 6 * 1.15);
        assert_true(p > 1.0 / 6 * 0.85 && p < 1.0 / 6 * 1.15);
    }
}

/* Load-aware placement: the least loaded nodes, the weight deciding among equals; filling
 * namespaces one by one keeps every node within one of the others. */
static void test_least_loaded(void **state)
{
    size_t loads[6] = {5, 1, 3, 1, 0, 9}, idx[MEM_CLUSTER_PLACE_MAX];
    size_t n = mem_cluster_place_least("x", six, loads, 6, 3, idx);
    assert_int_equal(n, 3);
    assert_int_equal(idx[0], 4);                                               /* load 0 */
    assert_true((idx[1] == 1 && idx[2] == 3) || (idx[1] == 3 && idx[2] == 1)); /* the two 1s */
    /* between equals the rendezvous weight decides, whatever the list order */
    size_t eq[6] = {0, 0, 0, 0, 0, 0};
    size_t a[MEM_CLUSTER_PLACE_MAX], b[MEM_CLUSTER_PLACE_MAX];
    const char *rev[6];
    for (int i = 0; i < 6; i++)
        rev[i] = six[5 - i];
    for (int k = 0; k < 50; k++) {
        char ns[16];
        snprintf(ns, sizeof(ns), "q%d", k);
        mem_cluster_place_least(ns, six, eq, 6, 2, a);
        mem_cluster_place(ns, six, 6, 2, b);
        assert_int_equal(a[0], b[0]);
        assert_int_equal(a[1], b[1]);
        mem_cluster_place_least(ns, rev, eq, 6, 2, b);
        assert_string_equal(six[a[0]], rev[b[0]]);
    }
    /* fill: 60 namespaces of 2 on 6 nodes -> 20 each */
    size_t fill[6] = {0};
    for (int k = 0; k < 60; k++) {
        char ns[16];
        snprintf(ns, sizeof(ns), "cap%02d", k);
        n = mem_cluster_place_least(ns, six, fill, 6, 2, idx);
        assert_int_equal(n, 2);
        assert_int_not_equal(idx[0], idx[1]);
        fill[idx[0]]++;
        fill[idx[1]]++;
        size_t lo = fill[0], hi = fill[0];
        for (int i = 1; i < 6; i++) {
            lo = fill[i] < lo ? fill[i] : lo;
            hi = fill[i] > hi ? fill[i] : hi;
        }
        assert_true(hi - lo <= 2);
    }
    for (int i = 0; i < 6; i++)
        assert_int_equal(fill[i], 20);
    assert_int_equal(mem_cluster_place_least("x", six, fill, 0, 2, idx), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_minimal_moves),
        cmocka_unit_test(test_balance),
        cmocka_unit_test(test_least_loaded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
