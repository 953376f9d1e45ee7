/* test_api_json.c - the JSON reader against jansson, vector nodes, and the writer
 * SPDX-License-Identifier: MIT
 *
 * The reader must accept exactly what json_loadb(JSON_REJECT_DUPLICATES) accepts and
 * build an equal tree; edge cases by hand, then seeded random documents and mutations of
 * them (tests/fuzz/fuzz_json.c does the same without end).
 */
/* cmocka.h needs stdarg.h, stddef.h and setjmp.h first */
/* clang-format off */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
/* clang-format on */

#include <jansson.h>

#include "api/api_int.h"
#include "core/timefmt.h"
#include "tests/unit/json_oracle.h"
#include "tests/unit/test_util.h"

static void same_as_jansson(const char *s, size_t len)
{
    const char *why = json_oracle_check(s, len);
    if (why) fail_msg("%s: %.*s", why, (int)(len > 200 ? 200 : len), s);
}

static void check(const char *s)
{
    same_as_jansson(s, strlen(s));
}

static void test_edge_cases(void **state)
{
    const char *docs[] = {
        "{}", "[]", " { } ", "\t[\n]\r\n", "{\"a\":1}", "[1,2,3]", "[[],[[]],{}]", "{\"\":0}",
        /* grammar errors */
        "", " ", "{", "[", "]", "}", "{]", "[}", "[1,]", "[,1]", "{\"a\"}", "{\"a\":}",
        "{\"a\":1,}", "{,}", "{1:2}", "{'a':1}", "[1 2]", "{\"a\":1 \"b\":2}", "[1]]", "[1] x",
        "[1]\x00", "\xef\xbb\xbf[1]", "[tru]", "[truex]", "[true]", "[false,null]", "[nul]",
        "[True]", "[NaN]", "[Infinity]", "[-Infinity]", "1", "\"a\"", "true", "null", "-1",
        /* numbers */
        "[0]", "[-0]", "[-0.0]", "[01]", "[-01]", "[1.]", "[.5]", "[-]", "[+1]", "[1e]", "[1e+]",
        "[1E5]", "[1e-5]", "[0.1e1]", "[1.5e308]", "[1e309]", "[-1e309]", "[1e-400]",
        "[9223372036854775807]", "[9223372036854775808]", "[-9223372036854775808]",
        "[-9223372036854775809]", "[99999999999999999999999]", "[1.0000000000000000000000001]",
        "[123456789012345678901234567890.5]", "[0x10]", "[1_000]",
        /* strings */
        "[\"\"]", "[\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"]", "[\"\\u0041\\u00e9\\u20AC\"]",
        "[\"\\ud83d\\ude00\"]", "[\"\\ud83d\"]", "[\"\\ude00\"]", "[\"\\ud83d\\u0041\"]",
        "[\"\\ud83dx\"]", "[\"\\u0000\"]", "[\"a\\u0000b\"]", "[\"\\u00\"]", "[\"\\uZZZZ\"]",
        "[\"\\x41\"]", "[\"\\'\"]", "[\"tab\there\"]", "[\"nl\nhere\"]", "[\"\x1f\"]", "[\"\x7f\"]",
        "[\"caf\xc3\xa9\"]", "[\"\xc3\"]", "[\"\xc0\x80\"]", "[\"\xc1\xbf\"]", "[\"\xe0\x80\x80\"]",
        "[\"\xed\xa0\x80\"]", "[\"\xef\xbf\xbf\"]", "[\"\xf0\x9f\x98\x80\"]",
        "[\"\xf4\x8f\xbf\xbf\"]", "[\"\xf4\x90\x80\x80\"]", "[\"\xf5\x80\x80\x80\"]", "[\"\xff\"]",
        "[\"\x80\"]", "[\"\xe2\x82\"]", "[\"unterminated", "[\"a\\", "{\"k\\u0000\":1}",
        /* objects and duplicate keys */
        "{\"a\":1,\"a\":2}", "{\"a\":1,\"\\u0061\":2}", "{\"a\":{\"a\":1},\"b\":{\"a\":2}}",
        "{\"a\":[{\"x\":1,\"x\":1}]}", "{\"caf\xc3\xa9\":1,\"caf\\u00e9\":2}",
        "{\"a\":1,\"b\":2,\"c\":[1,{\"d\":null}]}",
        /* embeddings where the reader makes vector nodes: the tree compares equal once
         * nodes are expanded, and the usual errors survive */
        "{\"embedding\":[1,2,3]}", "{\"embedding\":[]}", "{\"embedding\":[1,\"x\"]}",
        "{\"embedding\":[1e39]}", "{\"embedding\":[1e400]}", "{\"embedding\":[1,]}",
        "{\"embedding\":[ 1 , -0.5e-3 ,2 ]}", "{\"embedding\":[1 2]}", "{\"embedding\":[01]}",
        "{\"segments\":[{\"embedding\":[0.1,0.2]},{\"embedding\":[3]}]}",
        "{\"context\":[[1,2],[3,4],\"AAAA\"]}", "{\"metadata\":{\"embedding\":[1,2]}}",
        "{\"embedding\":{\"embedding\":[1]}}", "{\"embedding\":[[1]]}",
        "{\"embedding\":[1,123456789012345678901234]}", "{\"embedding\":[9223372036854775807]}",
        "{\"embedding\":[9223372036854775808]}", "{\"embedding\":[-9223372036854775808]}",
        "{\"embedding\":[-9223372036854775809]}", "{\"embedding\":[12345678901234567890.0]}"};
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
        check(docs[i]);
    /* inputs with NUL bytes inside, not just at the end */
    same_as_jansson("[\"a\0b\"]", 7);
    same_as_jansson("[1]\0", 4);
    same_as_jansson("{\"a\0\":1}", 8);
}

/* jansson counts depth per value, leaves included, and refuses beyond 2048. */
static void test_depth(void **state)
{
    size_t depths[] = {1, 2, 1000, 2046, 2047, 2048, 2049, 2050, 5000};
    char *s = malloc(6 * 5000 + 16);
    for (size_t k = 0; k < sizeof(depths) / sizeof(depths[0]); k++) {
        for (int leaf = 0; leaf < 2; leaf++) {
            size_t d = depths[k], o = 0;
            for (size_t i = 0; i < d; i++)
                s[o++] = '[';
            if (leaf) s[o++] = '1';
            for (size_t i = 0; i < d; i++)
                s[o++] = ']';
            same_as_jansson(s, o);
            o = 0; /* objects too */
            for (size_t i = 0; i < d; i++)
                o += (size_t)sprintf(s + o, "{\"a\":");
            s[o++] = leaf ? '1' : '0';
            for (size_t i = 0; i < d; i++)
                s[o++] = '}';
            if (d <= 1000) same_as_jansson(s, o);
        }
    }
    free(s);
}

/* Seeded random documents, then byte mutations of each: accept/refuse and trees agree. */
static void test_random_documents(void **state)
{
    const char *env = getenv("MEM_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : 20260731, seed0 = seed;
    char *doc = malloc(1 << 16);
    for (int i = 0; i < 3000; i++) {
        size_t n = json_oracle_random_doc(&seed, doc, 1 << 15);
        const char *why = json_oracle_check(doc, n);
        if (why)
            fail_msg("seed %llu doc %d: %s: %.*s", (unsigned long long)seed0, i, why, (int)n, doc);
        for (int m = 0; m < 4 && n; m++) {
            size_t at = rng_next(&seed) % n;
            char saved = doc[at];
            static const char bytes[] = "{}[]\",:\\01e.-+ \x80\xc3\x00nu";
            doc[at] = bytes[rng_next(&seed) % (sizeof(bytes) - 1)];
            why = json_oracle_check(doc, n);
            if (why)
                fail_msg("seed %llu doc %d mutation at %zu: %s: %.*s", (unsigned long long)seed0, i,
                         at, why, (int)n, doc);
            doc[at] = saved;
        }
    }
    free(doc);
}

static void test_vector_nodes(void **state)
{
    static const char *const REST[] = MEM_API_VEC_PATHS_REST;
    static const char *const MCP[] = MEM_API_VEC_PATHS_MCP;
    json_t *j;
    mem_err_t err;
    float v[8];
    size_t n;
    const char *doc = "{\"embedding\":[0.5, -1, 3e-2],\"segments\":[{\"embedding\":[1]},"
                      "{\"embedding\":[2,3]}],\"context\":[[4],[5,6]],\"metadata\":{\"embedding\":"
                      "[7]},\"x\":{\"embedding\":[8]}}";
    assert_int_equal(mem_api__json_parse(doc, strlen(doc), REST, "body", &j, &err), MEM_OK);
    assert_true(mem_api__vec_node_get(json_object_get(j, "embedding"), v, &n));
    assert_true(n == 3 && v[0] == 0.5f && v[1] == -1.0f && v[2] == 0.03f);
    const json_t *segs = json_object_get(j, "segments");
    assert_true(
        mem_api__vec_node_get(json_object_get(json_array_get(segs, 1), "embedding"), v, &n));
    assert_true(n == 2 && v[1] == 3.0f);
    assert_true(mem_api__vec_node_get(json_array_get(json_object_get(j, "context"), 1), v, &n));
    assert_true(n == 2 && v[0] == 5.0f);
    /* elsewhere arrays stay JSON */
    assert_true(json_is_array(json_object_get(json_object_get(j, "metadata"), "embedding")));
    assert_true(json_is_array(json_object_get(json_object_get(j, "x"), "embedding")));
    /* the writer prints nodes as arrays of shortest float32 */
    char *out = mem_api__dump(json_object_get(j, "embedding"));
    assert_string_equal(out, "[0.5,-1.0,0.03]");
    free(out);
    json_decref(j);
    /* MCP places */
    doc = "{\"params\":{\"arguments\":{\"embedding\":[1,2],\"context\":[[3]]}},\"embedding\":[4]}";
    assert_int_equal(mem_api__json_parse(doc, strlen(doc), MCP, NULL, &j, &err), MEM_OK);
    const json_t *args = json_object_get(json_object_get(j, "params"), "arguments");
    assert_true(mem_api__vec_node_get(json_object_get(args, "embedding"), NULL, &n) && n == 2);
    assert_true(mem_api__vec_node_get(json_array_get(json_object_get(args, "context"), 0), v, &n));
    assert_true(json_is_array(json_object_get(j, "embedding")));
    json_decref(j);
    /* a key with escapes still matches; nodes are float32 rounded once */
    doc = "{\"embed\\u0064ing\":[1.0000000596046447755]}";
    assert_int_equal(mem_api__json_parse(doc, strlen(doc), REST, NULL, &j, &err), MEM_OK);
    assert_true(mem_api__vec_node_get(json_object_get(j, "embedding"), v, &n));
    assert_true(n == 1 && v[0] == 0x1.000002p0f);
    json_decref(j);
    /* what cannot be a node stays JSON: empty, too long, beyond float32, not numbers */
    char *big = malloc(3 * (MEM_API_MAX_DIM + 1) + 32);
    size_t o = (size_t)sprintf(big, "{\"embedding\":[");
    for (int i = 0; i <= MEM_API_MAX_DIM; i++)
        o += (size_t)sprintf(big + o, "%s1", i ? "," : "");
    o += (size_t)sprintf(big + o, "]}");
    assert_int_equal(mem_api__json_parse(big, o, REST, NULL, &j, &err), MEM_OK);
    assert_true(json_is_array(json_object_get(j, "embedding")));
    assert_int_equal(json_array_size(json_object_get(j, "embedding")), MEM_API_MAX_DIM + 1);
    json_decref(j);
    big[o - 4] = ' '; /* exactly MEM_API_MAX_DIM: a node */
    big[o - 3] = ' ';
    assert_int_equal(mem_api__json_parse(big, o, REST, NULL, &j, &err), MEM_OK);
    assert_true(mem_api__vec_node_get(json_object_get(j, "embedding"), NULL, &n));
    assert_int_equal(n, MEM_API_MAX_DIM);
    json_decref(j);
    free(big);
    const char *plain[] = {"{\"embedding\":[]}", "{\"embedding\":[1e39]}",
                           "{\"embedding\":[1,null]}", "{\"embedding\":[[1]]}"};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(mem_api__json_parse(plain[i], strlen(plain[i]), REST, NULL, &j, &err),
                         MEM_OK);
        assert_true(json_is_array(json_object_get(j, "embedding")));
        json_decref(j);
    }
    /* errors name the place */
    mem_err_clear(&err);
    assert_int_equal(mem_api__json_parse("{\n \"a\": [1,,2]}", 15, REST, "body", &j, &err),
                     MEM_EJSON);
    assert_non_null(strstr(err.msg, "body: invalid JSON at line 2 column 10: invalid token"));
    /* a string can never look like a node: NUL is refused in strings */
    json_t *f32 = json_string("f32");
    assert_false(mem_api__vec_node_get(f32, NULL, &n));
    json_decref(f32);
}

/* Without reals the writer's text is jansson's compact text; reals read back exactly. */
static void test_writer(void **state)
{
    const char *docs[] = {"{}",
                          "[]",
                          "{\"a\":[1,2,{\"b\":null}],\"c\":true,\"d\":false}",
                          "[\"\\u0001\\u001f\\b\\f\\n\\r\\t\\\"\\\\/\\u007f\"]",
                          "[\"caf\xc3\xa9 \xf0\x9f\x98\x80 \\u2028\"]",
                          "{\"z\":1,\"a\":2,\"m\":3,\"\\u0001x\":4}",
                          "[\"nul\\u0000in\"]",
                          "[-9223372036854775808,9223372036854775807,0,-1]"};
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        json_t *j = json_loads(docs[i], JSON_ALLOW_NUL, NULL);
        assert_non_null(j);
        char *mine = mem_api__dump(j);
        assert_non_null(mine);
        char *theirs = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
        assert_non_null(theirs);
        assert_string_equal(mine, theirs);
        free(mine);
        free(theirs);
        json_decref(j);
    }
    uint64_t seed = 99;
    for (int i = 0; i < 2000; i++) {
        uint64_t r = rng_next(&seed);
        double x;
        memcpy(&x, &r, sizeof(x));
        if (!isfinite(x)) continue;
        json_t *a = json_pack("[f]", x);
        char *s = mem_api__dump(a);
        json_t *back = json_loads(s, 0, NULL);
        assert_non_null(back);
        assert_true(json_real_value(json_array_get(back, 0)) == x);
        free(s);
        json_decref(back);
        json_decref(a);
    }
}

/* A random string of at most max bytes: ASCII, escapes, controls, UTF-8 (bad with bad). */
static char *rand_str(uint64_t *seed, size_t max, bool bad)
{
    static const char *const parts[] = {"a",
                                        "Z",
                                        "0",
                                        " ",
                                        "\"",
                                        "\\",
                                        "/",
                                        "\n",
                                        "\t",
                                        "\x01",
                                        "\x1f",
                                        "\x7f",
                                        "caf\xc3\xa9",
                                        "\xe2\x80\xa8",
                                        "\xf0\x9f\x98\x80",
                                        "{",
                                        "}",
                                        ","};
    char *s = malloc(max * 4 + 8);
    size_t n = 0, k = rng_next(seed) % (max + 1);
    for (size_t i = 0; i < k; i++) {
        const char *p = parts[rng_next(seed) % (sizeof(parts) / sizeof(parts[0]))];
        memcpy(s + n, p, strlen(p));
        n += strlen(p);
    }
    if (bad) s[n++] = (char)0xC0; /* an overlong lead byte: never valid UTF-8 */
    s[n] = '\0';
    return s;
}

static double rand_real(uint64_t *seed)
{
    switch (rng_next(seed) % 4) {
    case 0:
        return (double)(rng_next(seed) % 2000) / 1000.0 - 1.0;
    case 1:
        return (double)(float)((double)(rng_next(seed) % 100000) / 7.0);
    case 2:
        return 0.0;
    default: {
        uint64_t r = rng_next(seed);
        double x;
        memcpy(&x, &r, sizeof(x));
        return isfinite(x) ? x : 1e-300;
    }
    }
}

/* Results built here, string by string (mem_store_results_free is for the store's own). */
static void results_free(mem_store_result_t *res, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(res[i].id);
        free(res[i].text);
        free(res[i].source);
        free(res[i].metadata);
    }
    free(res);
}

/* The retrieve answer written straight out is byte for byte the tree's dump, and fails
 * (NULL) exactly where the tree cannot be built. */
static void test_results_text(void **state)
{
    (void)state;
    static const char *const metas[] = {"{\"k\":\"v\",\"n\":[1,2.5,null]}", "{}", "not json",
                                        "{\"nested\":{\"a\":true}}", "[1,2]"};
    uint64_t seed = 4242;
    for (int round = 0; round < 3000; round++) {
        size_t n = rng_next(&seed) % 6;
        bool bad = round % 97 == 5, nonfinite = round % 89 == 7;
        mem_store_result_t *res = calloc(n ? n : 1, sizeof(*res));
        for (size_t i = 0; i < n; i++) {
            mem_store_result_t *r = &res[i];
            r->id = rand_str(&seed, 6, bad && i == 0);
            r->hit.seq = (int64_t)(rng_next(&seed) % 1000000000000ull) - 1000;
            r->hit.score = nonfinite && i == n - 1 ? INFINITY : rand_real(&seed);
            r->hit.sim = (float)fmod(rand_real(&seed), 3e38); /* finite as a float too */
            r->hit.decay = rand_real(&seed);
            r->hit.gate = rand_real(&seed);
            r->hit.text_score = rand_real(&seed);
            r->hit.vector_score = fmod(rand_real(&seed), 3e38);
            uint64_t t = rng_next(&seed);
            r->ts_ms = t % 7 == 0   ? MEM_TIME_MAX_MS + 1 /* out of range: written as "" */
                       : t % 7 == 1 ? -(int64_t)(t % 100000000000ull)
                                    : (int64_t)(t % 4000000000000ull);
            if (rng_next(&seed) % 3) r->text = rand_str(&seed, 12, false);
            if (rng_next(&seed) % 2) r->source = rand_str(&seed, 4, false);
            if (rng_next(&seed) % 2)
                r->metadata = strdup(metas[rng_next(&seed) % (sizeof(metas) / sizeof(metas[0]))]);
        }
        bool explain = rng_next(&seed) % 2;
        mem_scan_match_t match = (mem_scan_match_t)(rng_next(&seed) % 3);
        const char *kernel = round % 5 ? "avx2" : NULL;
        double took = (double)(rng_next(&seed) % 100000) / 1000.0;
        size_t scanned = rng_next(&seed) % 100000;
        int64_t origin = (int64_t)(rng_next(&seed) % 4000000000000ull);
        json_t *tree =
            mem_api__enc_results("ns-1", res, n, scanned, kernel, took, explain, origin, match);
        char *want = tree ? mem_api__dump(tree) : NULL;
        size_t len = 0;
        char *got = mem_api__enc_results_text("ns-1", res, n, scanned, kernel, took, explain,
                                              origin, match, &len);
        if (!want) {
            assert_null(got);
            assert_true(bad || nonfinite);
        } else {
            assert_non_null(got);
            assert_string_equal(got, want);
            assert_int_equal(len, strlen(want));
        }
        free(want);
        free(got);
        json_decref(tree);
        results_free(res, n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edge_cases),       cmocka_unit_test(test_depth),
        cmocka_unit_test(test_random_documents), cmocka_unit_test(test_vector_nodes),
        cmocka_unit_test(test_writer),           cmocka_unit_test(test_results_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
