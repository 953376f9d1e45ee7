/* test_cluster_jsoncut.c - min_seq is cut out of a body byte-exactly; anything unusual is
 * passed through untouched for api/ to judge. Compiled in (cluster/ is server-only).
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

#include "cluster/jsoncut.c"

static int cut(const char *in, char *out, const char **val, size_t *vlen)
{
    size_t out_len = 0, off = 0;
    int rc = mem_cluster_json_cut(in, strlen(in), "min_seq", out, &out_len, &off, vlen);
    if (rc == MEM_CLUSTER_JSON_FOUND) {
        out[out_len] = '\0';
        *val = in + off;
    }
    return rc;
}

static void expect_cut(const char *in, const char *want, const char *want_val)
{
    char out[512];
    const char *val = NULL;
    size_t vlen = 0;
    assert_int_equal(cut(in, out, &val, &vlen), MEM_CLUSTER_JSON_FOUND);
    assert_string_equal(out, want);
    assert_int_equal(vlen, strlen(want_val));
    assert_memory_equal(val, want_val, vlen);
}

static void expect_rc(const char *in, int rc)
{
    char out[512];
    const char *val;
    size_t vlen;
    assert_int_equal(cut(in, out, &val, &vlen), rc);
}

static void test_cut_positions(void **state)
{
    expect_cut("{\"min_seq\":7}", "{}", "7");
    expect_cut("{\"min_seq\":7,\"k\":3}", "{\"k\":3}", "7");
    expect_cut("{\"k\":3,\"min_seq\":7}", "{\"k\":3}", "7");
    expect_cut("{\"a\":1,\"min_seq\":12,\"b\":[1,{\"min_seq\":2}]}",
               "{\"a\":1,\"b\":[1,{\"min_seq\":2}]}", "12");
    expect_cut(" { \"min_seq\" : 0 , \"k\" : 1 } ", " { \"k\" : 1 } ", "0");
    expect_cut("{\"k\": \"min_seq\", \"min_seq\": 5}", "{\"k\": \"min_seq\"}", "5");
    expect_cut("{\"min\\u005fseq\":5,\"x\":\"a\\\"b\"}", "{\"x\":\"a\\\"b\"}", "5");
    /* the value is returned raw: api-level validation is the caller's (u64 below) */
    expect_cut("{\"min_seq\":\"7\"}", "{}", "\"7\"");
    expect_cut("{\"min_seq\":-1}", "{}", "-1");
}

/* Every other byte is kept: duplicates of other keys stay for decode.c to refuse. */
static void test_rest_untouched(void **state)
{
    expect_cut("{\"k\":1,\"k\":2,\"min_seq\":3}", "{\"k\":1,\"k\":2}", "3");
    expect_cut("{\"e\":1e400,\"min_seq\":3,\"t\":\"\\u00e9\"}", "{\"e\":1e400,\"t\":\"\\u00e9\"}",
               "3");
}

static void test_not_cut(void **state)
{
    expect_rc("{\"min_seq\":1,\"min_seq\":2}", MEM_CLUSTER_JSON_DUPLICATE);
    expect_rc("{\"min_seq\":1,\"min\\u005Fseq\":2}", MEM_CLUSTER_JSON_DUPLICATE);
    expect_rc("{}", MEM_CLUSTER_JSON_ABSENT);
    expect_rc("{\"k\":{\"min_seq\":1}}", MEM_CLUSTER_JSON_ABSENT);
    expect_rc("[{\"min_seq\":1}]", MEM_CLUSTER_JSON_ABSENT);
    expect_rc("", MEM_CLUSTER_JSON_ABSENT);
    expect_rc("{\"min_seq\":1", MEM_CLUSTER_JSON_ABSENT);   /* unterminated */
    expect_rc("{\"min_seq\":1,}", MEM_CLUSTER_JSON_ABSENT); /* trailing comma */
    expect_rc("{\"min_seq\" 1}", MEM_CLUSTER_JSON_ABSENT);  /* no colon */
    expect_rc("{\"min_seq\":}", MEM_CLUSTER_JSON_ABSENT);   /* no value */
    expect_rc("{\"a\":\"x}", MEM_CLUSTER_JSON_ABSENT);      /* unterminated string */
    expect_rc("{\"a\":[1,2}", MEM_CLUSTER_JSON_ABSENT);     /* unbalanced */
    expect_rc("{\"min_seqx\":1}", MEM_CLUSTER_JSON_ABSENT);
    expect_rc("{\"min\\nseq\":1}", MEM_CLUSTER_JSON_ABSENT);
    /* every truncation of a valid body: no crash, found only when whole */
    const char *full = "{\"a\":[1,\"]\"],\"min_seq\":42,\"b\":{\"c\":\"\\\\\"}}";
    char buf[128], out[128];
    for (size_t n = 0; n < strlen(full); n++) {
        memcpy(buf, full, n);
        size_t ol, off, vl;
        assert_int_equal(mem_cluster_json_cut(buf, n, "min_seq", out, &ol, &off, &vl),
                         MEM_CLUSTER_JSON_ABSENT);
    }
}

static void test_u64(void **state)
{
    uint64_t v = 9;
    assert_int_equal(mem_cluster_json_u64("0", 1, &v), 0);
    assert_true(v == 0);
    assert_int_equal(mem_cluster_json_u64("1234567890123456789", 19, &v), 0);
    assert_true(v == 1234567890123456789ull);
    assert_int_equal(mem_cluster_json_u64("12345678901234567890", 20, &v), -1);
    assert_int_equal(mem_cluster_json_u64("-1", 2, &v), -1);
    assert_int_equal(mem_cluster_json_u64("1.0", 3, &v), -1);
    assert_int_equal(mem_cluster_json_u64("1e3", 3, &v), -1);
    assert_int_equal(mem_cluster_json_u64("01", 2, &v), -1);
    assert_int_equal(mem_cluster_json_u64("\"7\"", 3, &v), -1);
    assert_int_equal(mem_cluster_json_u64("", 0, &v), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cut_positions),
        cmocka_unit_test(test_rest_untouched),
        cmocka_unit_test(test_not_cut),
        cmocka_unit_test(test_u64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
