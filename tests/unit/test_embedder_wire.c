/* test_embedder_wire.c - the provider wire protocol: request bodies, answers, error words,
 * Retry-After (embedder/wire.c, embedder/provider.c)
 * SPDX-License-Identifier: MIT
 */
/* cmocka.h needs stdarg.h, stddef.h and setjmp.h first */
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
#include <jansson.h>

#include "embedder/embedder.h"

static void test_encode(void **state)
{
    (void)state;
    const char *texts[] = {"plain", "quote \" and \\ and \n",
                           "caf\xc3\xa9 \xe6\x9d\xb1\xe4\xba\xac", ""};
    size_t lens[] = {5, 19, 12, 0};
    size_t len = 0;
    char *body = mem_emb_encode("text-embedding-3-small", texts, lens, 4, &len);
    assert_non_null(body);
    assert_int_equal(len, strlen(body));
    json_error_t jerr;
    json_t *j = json_loads(body, 0, &jerr);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "model")), "text-embedding-3-small");
    json_t *in = json_object_get(j, "input");
    assert_int_equal(json_array_size(in), 4);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(json_string_length(json_array_get(in, i)), lens[i]);
        assert_memory_equal(json_string_value(json_array_get(in, i)), texts[i], lens[i]);
    }
    assert_int_equal(json_object_size(j), 2); /* model and input, nothing else */
    assert_true(strncmp(body, "{\"model\":", 9) == 0);
    json_decref(j);
    free(body);
    /* lengths, not NULs, delimit; invalid UTF-8 cannot be sent */
    const char *bad[] = {"ok\xff"};
    size_t bad_len[] = {3};
    assert_null(mem_emb_encode("m", bad, bad_len, 1, &len));
    const char *part[] = {"abcdef"};
    size_t part_len[] = {3};
    body = mem_emb_encode("m", part, part_len, 1, &len);
    assert_string_equal(body, "{\"model\":\"m\",\"input\":[\"abc\"]}");
    free(body);
}

/* Decode body for n inputs; returns rc, *out (caller frees) and *dim. */
static int dec(const char *body, size_t n, size_t want, float **out, size_t *dim, mem_err_t *err)
{
    *out = NULL;
    *dim = 0;
    mem_err_clear(err);
    return mem_emb_decode(body, strlen(body), n, want, out, dim, err);
}

static void expect_fail(const char *body, size_t n, size_t want, const char *needle)
{
    float *v;
    size_t d;
    mem_err_t err;
    int rc = dec(body, n, want, &v, &d, &err);
    if (rc != MEM_EEMBED) fail_msg("expected MEM_EEMBED for %s, got %d", body, rc);
    assert_null(v);
    if (!strstr(err.msg, needle)) fail_msg("message lacks \"%s\": %s", needle, err.msg);
    assert_true(strncmp(err.msg, "embedder: ", 10) == 0);
}

static void test_decode_good(void **state)
{
    (void)state;
    float *v;
    size_t d;
    mem_err_t err;
    /* the OpenAI shape, with extra fields */
    assert_int_equal(dec("{\"object\":\"list\",\"data\":[{\"object\":\"embedding\",\"index\":0,"
                         "\"embedding\":[0.5,-1,2e-3]},{\"object\":\"embedding\",\"index\":1,"
                         "\"embedding\":[1,2,3]}],\"model\":\"m\",\"usage\":{\"total_tokens\":4}}",
                         2, 0, &v, &d, &err),
                     MEM_OK);
    assert_int_equal(d, 3);
    float want[6] = {0.5f, -1.0f, 2e-3f, 1, 2, 3};
    assert_memory_equal(v, want, sizeof(want));
    free(v);
    /* out of order by index; the expected dimension */
    assert_int_equal(dec("{\"data\":[{\"index\":1,\"embedding\":[3,4]},{\"index\":0,"
                         "\"embedding\":[1,2]}]}",
                         2, 2, &v, &d, &err),
                     MEM_OK);
    float w2[4] = {1, 2, 3, 4};
    assert_memory_equal(v, w2, sizeof(w2));
    free(v);
    /* no index at all: the inputs' order */
    assert_int_equal(
        dec("{\"data\":[{\"embedding\":[3]},{\"embedding\":[4]}]}", 2, 0, &v, &d, &err), MEM_OK);
    assert_true(v[0] == 3 && v[1] == 4 && d == 1);
    free(v);
    /* base64 of little-endian float32 (1.0, -2.5) */
    assert_int_equal(
        dec("{\"data\":[{\"index\":0,\"embedding\":\"AACAPwAAIMA=\"}]}", 1, 0, &v, &d, &err),
        MEM_OK);
    assert_int_equal(d, 2);
    assert_true(v[0] == 1.0f && v[1] == -2.5f);
    free(v);
    /* mixed forms in one answer */
    assert_int_equal(dec("{\"data\":[{\"index\":0,\"embedding\":\"AACAPwAAIMA=\"},{\"index\":1,"
                         "\"embedding\":[5,6]}]}",
                         2, 0, &v, &d, &err),
                     MEM_OK);
    assert_true(v[2] == 5 && v[3] == 6);
    free(v);
    /* the widest dimension */
    static char big[4096 * 4 + 64];
    size_t o = (size_t)snprintf(big, sizeof(big), "{\"data\":[{\"embedding\":[1");
    for (int i = 1; i < 4096; i++)
        o += (size_t)snprintf(big + o, sizeof(big) - o, ",0");
    snprintf(big + o, sizeof(big) - o, "]}]}");
    assert_int_equal(dec(big, 1, 0, &v, &d, &err), MEM_OK);
    assert_int_equal(d, 4096);
    free(v);
}

static void test_decode_bad(void **state)
{
    (void)state;
    expect_fail("", 1, 0, "not JSON");
    expect_fail("{\"data\":[{\"embedding\":[1,", 1, 0, "not JSON");
    expect_fail("<html>502 Bad Gateway</html>", 1, 0, "not JSON");
    expect_fail("[]", 1, 0, "no \"data\" array");
    expect_fail("{\"data\":{}}", 1, 0, "no \"data\" array");
    expect_fail("{\"embeddings\":[[1,2]]}", 1, 0, "no \"data\" array");
    expect_fail("{\"data\":[]}", 1, 0, "answered 0 embeddings for 1 inputs");
    expect_fail("{\"data\":[{\"embedding\":[1]},{\"embedding\":[2]}]}", 1, 0,
                "answered 2 embeddings for 1 inputs");
    expect_fail("{\"data\":[7]}", 1, 0, "not an object (data[0])");
    expect_fail("{\"data\":[{\"index\":0}]}", 1, 0, "no embedding array (data[0])");
    expect_fail("{\"data\":[{\"index\":0,\"embedding\":null}]}", 1, 0, "no embedding array");
    expect_fail("{\"data\":[{\"index\":0,\"embedding\":[]}]}", 1, 0, "embedding of 0 floats");
    expect_fail("{\"data\":[{\"index\":0,\"embedding\":[1,\"2\"]}]}", 1, 0,
                "not a finite float (data[0].embedding[1])");
    expect_fail("{\"data\":[{\"index\":0,\"embedding\":[1,1e300]}]}", 1, 0, "not a finite float");
    expect_fail("{\"data\":[{\"index\":0,\"embedding\":[[1]]}]}", 1, 0, "not a finite float");
    /* indexes: out of range, negative, not an integer, twice, present on some only */
    expect_fail("{\"data\":[{\"index\":1,\"embedding\":[1]}]}", 1, 0, "invalid index");
    expect_fail("{\"data\":[{\"index\":-1,\"embedding\":[1]}]}", 1, 0, "invalid index");
    expect_fail("{\"data\":[{\"index\":\"0\",\"embedding\":[1]}]}", 1, 0, "invalid index");
    expect_fail("{\"data\":[{\"index\":0.0,\"embedding\":[1]}]}", 1, 0, "invalid index");
    expect_fail("{\"data\":[{\"index\":0,\"embedding\":[1]},{\"index\":0,\"embedding\":[2]}]}", 2,
                0, "index 0 twice");
    expect_fail("{\"data\":[{\"index\":0,\"embedding\":[1]},{\"embedding\":[2]}]}", 2, 0,
                "missing or invalid index (data[1]");
    expect_fail("{\"data\":[{\"embedding\":[1]},{\"index\":1,\"embedding\":[2]}]}", 2, 0,
                "missing or invalid index (data[1]");
    /* dimensions: inconsistent, or not the expected one */
    expect_fail("{\"data\":[{\"embedding\":[1,2]},{\"embedding\":[3]}]}", 2, 0,
                "answered 1 floats per vector where 2 were expected (data[1])");
    expect_fail("{\"data\":[{\"embedding\":[1,2]}]}", 1, 3,
                "answered 2 floats per vector where 3 were expected (data[0])");
    static char wide[4097 * 2 + 64];
    size_t o = (size_t)snprintf(wide, sizeof(wide), "{\"data\":[{\"embedding\":[1");
    for (int i = 1; i < 4097; i++)
        o += (size_t)snprintf(wide + o, sizeof(wide) - o, ",0");
    snprintf(wide + o, sizeof(wide) - o, "]}]}");
    expect_fail(wide, 1, 0, "embedding of 4097 floats");
    /* base64: bad length, alphabet, padding, byte count, non-finite values */
    expect_fail("{\"data\":[{\"embedding\":\"AACAPw\"}]}", 1, 0, "not the base64");
    expect_fail("{\"data\":[{\"embedding\":\"AACA*w==\"}]}", 1, 0, "not the base64");
    expect_fail("{\"data\":[{\"embedding\":\"AA==AACA\"}]}", 1, 0, "not the base64");
    expect_fail("{\"data\":[{\"embedding\":\"AACA\"}]}", 1, 0, "not the base64"); /* 3 bytes */
    expect_fail("{\"data\":[{\"embedding\":\"AACAPwAAIMB=\"}]}", 1, 0,
                "not the base64"); /* pad bits */
    expect_fail("{\"data\":[{\"embedding\":\"\"}]}", 1, 0, "not the base64");
    expect_fail("{\"data\":[{\"embedding\":\"AADAfw==\"}]}", 1, 0, "not a finite float"); /* NaN */
    expect_fail("{\"data\":[{\"embedding\":\"AADAfwAAgD8=\"}]}", 1, 0, "not a finite float");
    expect_fail("{\"data\":[{\"embedding\":\"AACAfw==\"}]}", 1, 0, "not a finite float"); /* inf */
    expect_fail("{\"data\":[{\"embedding\":\"AACAfwAAgD8=\"}]}", 1, 0,
                "not a finite float (data[0].embedding[0])");
}

static void words(const char *body, const char *want)
{
    char out[64];
    memset(out, 'x', sizeof(out));
    mem_emb_error_text(body, strlen(body), out, sizeof(out));
    assert_string_equal(out, want);
}

static void test_error_text(void **state)
{
    (void)state;
    words("{\"error\":{\"message\":\"Incorrect API key provided: sk-abc.\",\"type\":"
          "\"invalid_request_error\"}}",
          "Incorrect API key provided: sk-abc.");
    words("{\"error\":\"model \\\"nomic\\\" not found, try pulling it first\"}",
          "model \"nomic\" not found, try pulling it first");
    words(
        "{\"object\":\"error\",\"message\":\"too long\",\"type\":\"BadRequestError\",\"code\":400}",
        "too long");
    words("{\"detail\":\"Not Found\"}", "Not Found");
    words("{\"error\":{\"code\":503}}", "");
    words("{}", "");
    words("", "");
    words("upstream connect error\nsecond line", "upstream connect error");
    words("{\"error\":\"tab\\tand\\n\\nnew lines  and \\u00e9 \\u0001\"}",
          "tab and new lines and ?? ?"); /* printable ASCII, runs of space squeezed */
    words("{\"error\":\"0123456789012345678901234567890123456789012345678901234567890123456789\"}",
          "012345678901234567890123456789012345678901234567890123456789012");
    char one[1] = {'x'};
    mem_emb_error_text("{\"error\":\"abc\"}", 15, one, 1);
    assert_int_equal(one[0], '\0');
    /* a body that is not NUL-terminated is read within its length only */
    char raw[4] = {'a', 'b', 'c', 'd'};
    char out[16];
    mem_emb_error_text(raw, 2, out, sizeof(out));
    assert_string_equal(out, "ab");
}

static void test_retry_after(void **state)
{
    (void)state;
    assert_true(mem_emb_retry_after("5", 0) == 5.0);
    assert_true(mem_emb_retry_after(" 7 \r\n", 0) == 7.0);
    assert_true(mem_emb_retry_after("0", 0) == 0.0);
    assert_true(mem_emb_retry_after("99999999999", 0) >= 1e9);
    /* an HTTP date, in the future and in the past */
    double now = 1445412480.0; /* Wed, 21 Oct 2015 07:28:00 GMT */
    assert_true(mem_emb_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now) == 30.0);
    assert_true(mem_emb_retry_after("Wed, 21 Oct 2015 07:27:00 GMT\r\n", now) == 0.0);
    assert_true(mem_emb_retry_after("soon", now) < 0);
    assert_true(mem_emb_retry_after("", now) < 0);
    assert_true(mem_emb_retry_after("-3", now) < 0);
    assert_true(mem_emb_retry_after("1.5", now) < 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode),      cmocka_unit_test(test_decode_good),
        cmocka_unit_test(test_decode_bad),  cmocka_unit_test(test_error_text),
        cmocka_unit_test(test_retry_after),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
