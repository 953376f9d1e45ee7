/* test_cluster_json.c - the cluster's JSON texts while every jansson allocation fails in
 * turn: a placement entry is written whole (every node) or not at all, a text read back is
 * the text or out of memory (never "not JSON", never another value), and a text that is
 * not JSON is told apart. cluster/ is linked into the server only, so json.c is compiled in.
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

#include "cluster/json.c"

/* The allocator under the cluster's hook: fails the nth allocation once it is armed. Under
 * `make fault` (MEM_FAULT_UNIT) the driver fails them instead, and each loop runs once. */
static long fail_at, counted, n_failed;
static bool armed;

static void *failing_malloc(size_t n)
{
    if (armed && ++counted == fail_at) {
        n_failed++;
        return NULL;
    }
    return malloc(n);
}

static bool sweeps(void)
{
    return getenv("MEM_FAULT_UNIT") == NULL;
}

static void arm(long n)
{
    fail_at = n;
    counted = n_failed = 0;
    armed = true;
}

/* Stop; whether the armed allocation was reached. */
static bool disarm(void)
{
    armed = false;
    return n_failed > 0;
}

static const char *const NODES[] = {"node-alpha", "node-bravo-with-a-longer-name", "node-charlie",
                                    "node-delta", "node-echo-0123456789abcdefghijklmnopq"};
#define N_NODES (sizeof(NODES) / sizeof(NODES[0]))

static char *entry(void)
{
    return mem_cluster__entry_json("a-namespace-of-some-length", 3, NODES, N_NODES, "node-foxtrot",
                                   "node-charlie", true, 42);
}

static void test_entry_whole_or_nothing(void **state)
{
    (void)state;
    char *want = entry();
    assert_non_null(want);
    json_t *o = NULL;
    assert_int_equal(mem_cluster__json_parse(want, strlen(want), &o), MEM_OK);
    json_t *nodes = json_object_get(o, "nodes");
    assert_int_equal(json_array_size(nodes), N_NODES);
    for (size_t i = 0; i < N_NODES; i++)
        assert_string_equal(json_string_value(json_array_get(nodes, i)), NODES[i]);
    assert_string_equal(json_string_value(json_object_get(o, "join")), "node-foxtrot");
    assert_int_equal(json_integer_value(json_object_get(o, "epoch")), 42);
    json_decref(o);
    long nulls = 0;
    for (long n = sweeps() ? 1 : 0;; n++) {
        arm(n);
        char *got = entry();
        bool reached = disarm();
        if (got) {
            if (strcmp(got, want) != 0) print_error("allocation %ld: %s\n", n, got);
            assert_string_equal(got, want);
        } else {
            nulls++;
        }
        free(got);
        if (!reached) break;
    }
    assert_true(nulls > 3 || !sweeps());
    free(want);
}

static void test_parse_text_or_out_of_memory(void **state)
{
    (void)state;
    char *text = entry();
    assert_non_null(text);
    size_t len = strlen(text);
    json_t *want = NULL;
    assert_int_equal(mem_cluster__json_parse(text, len, &want), MEM_OK);
    long ooms = 0;
    for (long n = sweeps() ? 1 : 0;; n++) {
        json_t *got = NULL;
        arm(n);
        int rc = mem_cluster__json_parse(text, len, &got);
        bool reached = disarm();
        if (rc != MEM_OK && rc != MEM_ENOMEM) print_error("allocation %ld: %d\n", n, rc);
        assert_true(rc == MEM_OK || rc == MEM_ENOMEM);
        if (rc == MEM_OK) {
            assert_true(json_equal(got, want));
        } else {
            assert_null(got);
            ooms++;
        }
        json_decref(got);
        if (!reached) break;
    }
    assert_true(ooms > 3 || !sweeps());
    json_decref(want);
    free(text);
}

static void test_dump_whole_or_nothing(void **state)
{
    (void)state;
    /* a node record as the heartbeat writes it, many streams */
    json_t *o =
        json_pack("{s:s,s:s,s:I,s:b,s:s}", "id", "node-alpha", "address", "http://127.0.0.1:8080",
                  "heartbeat_ms", (json_int_t)1764700000000, "ready", 1, "health", "");
    json_t *ap = json_object();
    assert_non_null(o);
    assert_non_null(ap);
    for (int i = 0; i < 24; i++) {
        char name[32];
        snprintf(name, sizeof(name), "MNEMOD_LOG_%d", i);
        assert_int_equal(json_object_set_new(ap, name, json_integer(1000000 + i)), 0);
    }
    assert_int_equal(json_object_set_new(o, "applied", ap), 0);
    char *want = mem_cluster__json_dump(o);
    assert_non_null(want);
    for (long n = sweeps() ? 1 : 0;; n++) {
        arm(n);
        char *got = mem_cluster__json_dump(o);
        bool reached = disarm();
        if (got) assert_string_equal(got, want);
        free(got);
        if (!reached) break;
    }
    assert_null(mem_cluster__json_dump(NULL));
    free(want);
    json_decref(o);
}

static void test_not_json(void **state)
{
    (void)state;
    const char *bad[] = {"", "{\"ns\":", "{\"ns\":\"x\"} trailing", "\xff", "nul"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *o = (json_t *)1;
        assert_int_equal(mem_cluster__json_parse(bad[i], strlen(bad[i]), &o), MEM_EINVAL);
        assert_null(o);
    }
    /* a node name that is not UTF-8 cannot be written: no entry rather than one without it */
    const char *nodes[] = {"node-a", "node-\xff"};
    assert_null(mem_cluster__entry_json("ns", 0, nodes, 2, NULL, NULL, false, 1));
    assert_null(mem_cluster__json_strings(nodes, 2));
}

int main(void)
{
    if (sweeps()) {
        json_set_alloc_funcs(failing_malloc, free);
        mem_cluster__json_hook(); /* the cluster's hook over the failing allocator */
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entry_whole_or_nothing),
        cmocka_unit_test(test_parse_text_or_out_of_memory),
        cmocka_unit_test(test_dump_whole_or_nothing),
        cmocka_unit_test(test_not_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
