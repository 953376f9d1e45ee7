/* test_core_b64.c - strict base64 and little-endian float32 vectors
 * SPDX-License-Identifier: MIT
 */
/* cmocka.h needs stdarg.h, stddef.h and setjmp.h first */
/* clang-format off */
#include <math.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
/* clang-format on */

#include "core/b64.h"
#include "tests/unit/test_util.h"

/* RFC 4648 section 10 */
static const char *const PLAIN[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
static const char *const CODED[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};

static void test_rfc_vectors(void **state)
{
    for (size_t i = 0; i < 7; i++) {
        char enc[16];
        size_t n = mem_b64_encode(PLAIN[i], strlen(PLAIN[i]), enc);
        assert_int_equal(n, strlen(CODED[i]));
        assert_int_equal(n, MEM_B64_LEN(strlen(PLAIN[i])));
        assert_memory_equal(enc, CODED[i], n);
        unsigned char dec[16];
        size_t got = 99;
        mem_err_t err;
        assert_int_equal(mem_b64_decode(CODED[i], strlen(CODED[i]), dec, &got, "x", &err), MEM_OK);
        assert_int_equal(got, strlen(PLAIN[i]));
        assert_memory_equal(dec, PLAIN[i], got);
    }
    /* every byte value */
    unsigned char all[256], back[256];
    char enc[MEM_B64_LEN(256)];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)i;
    size_t n = mem_b64_encode(all, 256, enc), got;
    assert_int_equal(mem_b64_decode(enc, n, back, &got, NULL, NULL), MEM_OK);
    assert_int_equal(got, 256);
    assert_memory_equal(all, back, 256);
}

static void bad(const char *s, const char *needle)
{
    unsigned char dec[64];
    size_t got = 12345;
    mem_err_t err;
    mem_err_clear(&err);
    if (mem_b64_decode(s, strlen(s), dec, &got, "embedding", &err) != MEM_EINVAL)
        fail_msg("\"%s\" was accepted", s);
    assert_int_equal(got, 12345); /* out-param untouched */
    assert_string_equal(err.field, "embedding");
    if (!strstr(err.msg, "embedding: ") || !strstr(err.msg, needle))
        fail_msg("\"%s\": message \"%s\" lacks \"%s\"", s, err.msg, needle);
}

static void test_malformed(void **state)
{
    bad("Zg=", "not a multiple of 4");
    bad("Zg", "not a multiple of 4");
    bad("Zm9vY", "not a multiple of 4");
    bad("Zm9v\n", "not a multiple of 4");
    bad("Zm9 ", "invalid base64 character at offset 3");
    bad("Zm9v Zm9", "invalid base64 character at offset 4");
    bad("Zm-v", "invalid base64 character at offset 2"); /* base64url is another alphabet */
    bad("Zm_v", "invalid base64 character at offset 2");
    bad("Zm9\xc3", "invalid base64 character at offset 3");
    bad("Z===", "padding '=' at offset 1");
    bad("====", "padding '=' at offset 0");
    bad("Zm=v", "padding '=' at offset 2");
    bad("Zg==Zg==", "padding '=' at offset 2");
    bad("Zh==", "nonzero bits at offset 1"); /* 'h' leaves bits the padding says are unused */
    bad("Zm9=", "nonzero bits at offset 2");
    /* the canonical forms of the same bytes pass */
    unsigned char dec[4];
    size_t got;
    assert_int_equal(mem_b64_decode("Zg==", 4, dec, &got, NULL, NULL), MEM_OK);
    assert_int_equal(mem_b64_decode("Zm8=", 4, dec, &got, NULL, NULL), MEM_OK);
    /* without a field the message is the bare reason */
    mem_err_t err;
    mem_err_clear(&err);
    assert_int_equal(mem_b64_decode("Zg=", 3, dec, &got, NULL, &err), MEM_EINVAL);
    assert_string_equal(err.field, "");
    assert_string_equal(err.msg, "base64 length 3 is not a multiple of 4");
}

static void test_f32_vectors(void **state)
{
    /* what Python prints for base64.b64encode(struct.pack('<3f', 0.5, 0.25, -1.5)) */
    float v[3] = {0.5f, 0.25f, -1.5f}, back[4] = {0};
    char enc[MEM_B64_LEN(12)];
    assert_int_equal(mem_b64_encode_f32le(v, 3, enc), 16);
    assert_memory_equal(enc, "AAAAPwAAgD4AAMC/", 16);
    size_t n;
    mem_err_t err;
    assert_int_equal(mem_b64_decode_f32le("AAAAPwAAgD4AAMC/", 16, back, 4, &n, "e", &err), MEM_OK);
    assert_int_equal(n, 3);
    assert_memory_equal(back, v, sizeof(v));
    assert_int_equal(mem_b64_decode_f32le("AACAPwAAAMA=", 12, back, 4, &n, "e", &err), MEM_OK);
    assert_true(n == 2 && back[0] == 1.0f && back[1] == -2.0f);
    /* byte counts that are not whole float32, too many floats, bad strings */
    mem_err_clear(&err);
    assert_int_equal(mem_b64_decode_f32le("AACAPwAA", 8, back, 4, &n, "e", &err), MEM_EINVAL);
    assert_non_null(strstr(err.msg, "6 bytes, not a whole number of float32"));
    assert_int_equal(mem_b64_decode_f32le("AACAPwA=", 8, back, 4, &n, "e", &err), MEM_EINVAL);
    assert_non_null(strstr(err.msg, "5 bytes"));
    assert_int_equal(mem_b64_decode_f32le("AAAAPwAAgD4AAMC/", 16, back, 2, &n, "e", &err),
                     MEM_EINVAL);
    assert_non_null(strstr(err.msg, "more than 2 float32"));
    assert_int_equal(mem_b64_decode_f32le("AAAAPwAAgD4AAMC", 15, back, 4, &n, "e", &err),
                     MEM_EINVAL);
    assert_int_equal(mem_b64_decode_f32le("AAAAPwAAgD4AAM*/", 16, back, 4, &n, "e", &err),
                     MEM_EINVAL);
    assert_non_null(strstr(err.msg, "offset 14"));
    assert_int_equal(mem_b64_decode_f32le("", 0, back, 4, &n, "e", &err), MEM_OK);
    assert_int_equal(n, 0);
    /* NaN and infinities come through; callers decide */
    float odd[2] = {NAN, -INFINITY};
    char e2[MEM_B64_LEN(8)];
    size_t l = mem_b64_encode_f32le(odd, 2, e2);
    assert_int_equal(mem_b64_decode_f32le(e2, l, back, 4, &n, "e", &err), MEM_OK);
    assert_true(n == 2 && isnan(back[0]) && isinf(back[1]) && back[1] < 0);
}

/* Random vectors of every length round-trip, and the bytes are little-endian whatever the
 * host: checked against an encoding of bytes assembled by shifts. */
static void test_f32_round_trip(void **state)
{
    uint64_t seed = 7;
    float v[40], back[40];
    unsigned char bytes[160];
    char a[MEM_B64_LEN(160)], b[MEM_B64_LEN(160)];
    for (size_t n = 0; n <= 40; n++) {
        for (size_t i = 0; i < n; i++) {
            uint32_t bits = (uint32_t)rng_next(&seed) & 0xbfffffffu; /* finite */
            memcpy(&v[i], &bits, sizeof(bits));
            for (int k = 0; k < 4; k++)
                bytes[4 * i + (size_t)k] = (unsigned char)(bits >> (8 * k));
        }
        size_t la = mem_b64_encode_f32le(v, n, a), lb = mem_b64_encode(bytes, 4 * n, b);
        assert_int_equal(la, MEM_B64_LEN(4 * n));
        assert_int_equal(la, lb);
        assert_memory_equal(a, b, la);
        size_t got;
        assert_int_equal(mem_b64_decode_f32le(a, la, back, 40, &got, NULL, NULL), MEM_OK);
        assert_int_equal(got, n);
        if (n) assert_memory_equal(v, back, n * sizeof(float));
    }
}

/* The scalar reference: symbol by symbol, as RFC 4648 describes it. false for anything that
 * is not canonical padded base64. */
static int ref_sextet(unsigned char c)
{
    const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *p = c ? strchr(a, c) : NULL;
    return p ? (int)(p - a) : -1;
}

static bool ref_decode(const char *s, size_t len, unsigned char *out, size_t *n)
{
    if (len % 4) return false;
    size_t pad = len && s[len - 1] == '=' ? (len > 1 && s[len - 2] == '=' ? 2 : 1) : 0;
    uint64_t bits = 0;
    int nbits = 0;
    *n = 0;
    for (size_t i = 0; i < len - pad; i++) {
        int v = ref_sextet((unsigned char)s[i]);
        if (v < 0) return false;
        bits = bits << 6 | (uint64_t)v;
        nbits += 6;
        if (nbits >= 8) {
            nbits -= 8;
            out[(*n)++] = (unsigned char)(bits >> nbits);
            bits &= (1u << nbits) - 1;
        }
    }
    return bits == 0; /* what padding leaves over must be zero bits */
}

/* Random valid encodings of random lengths, each damaged at one random place by a random
 * byte (or not at all): the decoder accepts exactly what the reference accepts and gives
 * the same bytes; as float32, the same floats (or refuses a count that is not whole). */
static void test_against_reference(void **state)
{
    uint64_t seed = 20261201;
    unsigned char plain[200], got[MEM_B64_LEN(200) / 4 * 3], want[MEM_B64_LEN(200) / 4 * 3];
    char enc[MEM_B64_LEN(200)];
    float fv[50], fw[50];
    for (int round = 0; round < 200000; round++) {
        size_t len = (size_t)(rng_next(&seed) % 200);
        for (size_t i = 0; i < len; i++)
            plain[i] = (unsigned char)rng_next(&seed);
        size_t el = mem_b64_encode(plain, len, enc);
        if (el && round % 4) {
            size_t at = (size_t)(rng_next(&seed) % el);
            uint64_t r = rng_next(&seed);
            enc[at] = r & 1 ? "=+/A9z\n -_"[(r >> 1) % 11] : (char)(r >> 8);
        }
        size_t n_ref = 0, n = 0;
        bool ok_ref = ref_decode(enc, el, want, &n_ref);
        mem_err_t err;
        int rc = mem_b64_decode(enc, el, got, &n, "e", &err);
        if ((rc == MEM_OK) != ok_ref) fail_msg("round %d: \"%.*s\" rc %d", round, (int)el, enc, rc);
        if (ok_ref) {
            assert_int_equal(n, n_ref);
            if (n) assert_memory_equal(got, want, n);
        } else {
            assert_int_equal(rc, MEM_EINVAL);
            assert_non_null(strstr(err.msg, "e: "));
        }
        size_t nf = 0;
        rc = mem_b64_decode_f32le(enc, el, fv, 50, &nf, "e", &err);
        if (ok_ref && n_ref % 4 == 0) {
            assert_int_equal(rc, MEM_OK);
            assert_int_equal(nf, n_ref / 4);
            for (size_t i = 0; i < nf; i++) {
                uint32_t b = (uint32_t)want[4 * i] | (uint32_t)want[4 * i + 1] << 8 |
                             (uint32_t)want[4 * i + 2] << 16 | (uint32_t)want[4 * i + 3] << 24;
                memcpy(&fw[i], &b, sizeof(b));
            }
            if (nf) assert_memory_equal(fv, fw, nf * sizeof(float));
        } else {
            assert_int_equal(rc, MEM_EINVAL);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc_vectors),       cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_f32_vectors),       cmocka_unit_test(test_f32_round_trip),
        cmocka_unit_test(test_against_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
