/* test_core_embed.c - the lexical embedder: determinism, norm, ranking, dims, errors
 * SPDX-License-Identifier: MIT
 */
/* cmocka.h needs stdarg.h, stddef.h and setjmp.h first */
/* clang-format off */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
/* clang-format on */

#include "core/embed.h"

#define DIM 256
/* sum of (i + 1) * v[i] for "hello" at dim 8, MEM_EMBED_VERSION 1 */
#define EXPECTED_HELLO_CHECKSUM 5.366563082

static void embed_ok(const char *text, float *out, size_t dim)
{
    mem_err_t err = {0};
    if (mem_embed_text(text, strlen(text), out, dim, &err) != MEM_OK)
        fail_msg("embedding \"%s\" failed: %s", text, err.msg);
}

static double norm(const float *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)v[i] * v[i];
    return sqrt(s);
}

static double cosine(const char *a, const char *b)
{
    float va[DIM], vb[DIM];
    embed_ok(a, va, DIM);
    embed_ok(b, vb, DIM);
    double s = 0;
    for (size_t i = 0; i < DIM; i++)
        s += (double)va[i] * vb[i];
    return s;
}

static void test_deterministic_and_normalised(void **state)
{
    (void)state;
    const char *texts[] = {"a", "hello world", "The database password was rotated on Monday",
                           "Zürich café 東京 naïve", "x1 y2 z3 42 1.5"};
    for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]); t++) {
        float a[DIM], b[DIM];
        memset(b, 0x7f, sizeof(b)); /* garbage in the output buffer must not matter */
        embed_ok(texts[t], a, DIM);
        embed_ok(texts[t], b, DIM);
        assert_memory_equal(a, b, sizeof(a));
        assert_true(fabs(norm(a, DIM) - 1.0) < 1e-6);
        for (size_t i = 0; i < DIM; i++)
            assert_true(isfinite(a[i]));
    }
}

static void test_known_vector_is_stable(void **state)
{
    (void)state;
    /* A fixed point: if the hash, weights or tokeniser change, stored embeddings of every
     * deployed namespace change meaning. Bump MEM_EMBED_VERSION and this value together. */
    float v[8];
    embed_ok("hello", v, 8);
    double checksum = 0;
    for (size_t i = 0; i < 8; i++)
        checksum += (double)v[i] * (double)(i + 1);
    float w[8];
    embed_ok("HELLO", w, 8);
    assert_memory_equal(v, w, sizeof(v));
    assert_int_equal(MEM_EMBED_VERSION, 1);
    assert_true(fabs(checksum - EXPECTED_HELLO_CHECKSUM) < 1e-5);
}

static void test_case_and_punctuation_insensitive(void **state)
{
    (void)state;
    assert_true(cosine("Hello, World!", "hello world") > 0.999999);
    assert_true(cosine("rotate-the-password", "rotate the password") > 0.999999);
    assert_true(cosine("  tabs\tand\nnewlines  ", "tabs and newlines") > 0.999999);
    /* a NUL byte separates words too */
    float a[DIM], b[DIM];
    embed_ok("alpha beta", b, DIM);
    assert_int_equal(mem_embed_text("alpha\0beta", 10, a, DIM, NULL), MEM_OK);
    assert_memory_equal(a, b, sizeof(a));
}

static void test_similar_beats_unrelated(void **state)
{
    (void)state;
    const char *q = "when was the database password rotated";
    double related = cosine(q, "the database password was rotated on Monday");
    double inflected = cosine(q, "rotating passwords for databases");
    double unrelated = cosine(q, "the cat sat on a warm mat in the garden");
    assert_true(related > 0.5);
    assert_true(related > unrelated + 0.3);
    assert_true(inflected > unrelated);
    /* word order does not matter (bag of words), a typo costs little */
    assert_true(cosine("host web01 decommissioned", "decommissioned host web01") > 0.999999);
    assert_true(cosine("decommissioned", "decomissioned") > 0.5);
    assert_true(cosine("decommissioned", "kubernetes") < 0.3);
    /* UTF-8 stays inside words: a shared non-ASCII word matches, different ones do not */
    assert_true(cosine("Zürich office", "zürich") > cosine("Zürich office", "zurich"));
    assert_true(cosine("東京", "東京") > 0.999999);
}

static void test_dims(void **state)
{
    (void)state;
    float big[MEM_EMBED_DIM_MAX];
    embed_ok("one dimension", big, 1);
    assert_true(fabs(big[0]) == 1.0f);
    embed_ok("max dimension", big, MEM_EMBED_DIM_MAX);
    assert_true(fabs(norm(big, MEM_EMBED_DIM_MAX) - 1.0) < 1e-6);
    const size_t dims[] = {2, 3, 7, 64, 384, 768, 1536};
    for (size_t d = 0; d < sizeof(dims) / sizeof(dims[0]); d++) {
        embed_ok("some words to spread around the buckets", big, dims[d]);
        assert_true(fabs(norm(big, dims[d]) - 1.0) < 1e-6);
    }
    float v[4] = {9, 9, 9, 9};
    mem_err_t err = {0};
    assert_int_equal(mem_embed_text("x", 1, v, 0, &err), MEM_EINVAL);
    assert_int_equal(mem_embed_text("x", 1, v, MEM_EMBED_DIM_MAX + 1, &err), MEM_EINVAL);
    assert_non_null(strstr(err.msg, "4096"));
    assert_true(v[0] == 9 && v[3] == 9);
}

static void test_cancellation_never_gives_zero(void **state)
{
    (void)state;
    /* With dim 1 every feature lands in bucket 0 with a +-1 sign; many texts cancel
     * exactly there. The result must still be a unit vector. */
    char text[64];
    for (int i = 0; i < 500; i++) {
        float v[1];
        int n = snprintf(text, sizeof(text), "w%d v%d", i, i * 7);
        assert_int_equal(mem_embed_text(text, (size_t)n, v, 1, NULL), MEM_OK);
        assert_true(fabs(v[0]) == 1.0f);
    }
}

static void test_nothing_to_embed(void **state)
{
    (void)state;
    const char *bad[] = {"", " ", "\t\n  ", "!!! ??? ...", "-- -- --", "\x01\x02"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        float v[DIM];
        v[0] = 42;
        mem_err_t err = {0};
        assert_int_equal(mem_embed_text(bad[i], strlen(bad[i]), v, DIM, &err), MEM_EINVAL);
        assert_string_equal(err.msg, "text: nothing to embed (no letters or digits)");
        assert_string_equal(err.field, "text");
        assert_true(v[0] == 42);
    }
    float v[DIM];
    assert_int_equal(mem_embed_text(NULL, 0, v, DIM, NULL), MEM_EINVAL);
    /* the length is honoured: the word after len is not seen */
    assert_int_equal(mem_embed_text("   word", 3, v, DIM, NULL), MEM_EINVAL);
    assert_int_equal(mem_embed_text("!", 1, v, DIM, NULL), MEM_EINVAL);
    assert_int_equal(mem_embed_text("!a", 2, v, DIM, NULL), MEM_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deterministic_and_normalised),
        cmocka_unit_test(test_known_vector_is_stable),
        cmocka_unit_test(test_case_and_punctuation_insensitive),
        cmocka_unit_test(test_similar_beats_unrelated),
        cmocka_unit_test(test_dims),
        cmocka_unit_test(test_cancellation_never_gives_zero),
        cmocka_unit_test(test_nothing_to_embed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
