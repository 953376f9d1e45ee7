/* test_core_jstr.c - one JSON string escape decoded to UTF-8, against its definition
 * SPDX-License-Identifier: MIT
 */
/* cmocka.h needs stdarg.h, stddef.h and setjmp.h first */
/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
/* clang-format on */

#include "core/jstr.h"
#include "tests/unit/test_util.h"

/* Decode the escape s (the whole string); returns the bytes it spans, out/n_out as given. */
static size_t dec(const char *s, char *out, size_t *n_out, mem_jstr_bad_t *why)
{
    return mem_jstr_unescape(s, s + strlen(s), out, n_out, why);
}

static void test_short_escapes(void **state)
{
    (void)state;
    static const char *const in[] = {"\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"};
    static const char want[] = {'"', '\\', '/', '\b', '\f', '\n', '\r', '\t'};
    for (size_t i = 0; i < 8; i++) {
        char out[MEM_JSTR_UTF8_MAX] = {0};
        size_t n = 99;
        mem_jstr_bad_t why;
        assert_int_equal(dec(in[i], out, &n, &why), 2);
        assert_int_equal(n, 1);
        assert_int_equal(out[0], want[i]);
    }
}

/* Every code point U+0001..U+10FFFF but the surrogates, as \uXXXX (or a pair), against a
 * UTF-8 encoding written out from its definition (RFC 3629 section 3). */
static void test_every_code_point(void **state)
{
    (void)state;
    for (unsigned long cp = 1; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF) continue;
        char esc[16];
        if (cp < 0x10000)
            snprintf(esc, sizeof(esc), "\\u%04lX", cp);
        else
            snprintf(esc, sizeof(esc), "\\u%04lx\\u%04lx", 0xD800 + ((cp - 0x10000) >> 10),
                     0xDC00 + ((cp - 0x10000) & 0x3FF));
        unsigned char want[4];
        size_t wn = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        if (wn == 1) {
            want[0] = (unsigned char)cp;
        } else {
            for (size_t k = wn - 1; k > 0; k--)
                want[k] = (unsigned char)(0x80 | ((cp >> (6 * (wn - 1 - k))) & 0x3F));
            want[0] = (unsigned char)((0xF00 >> wn) | (cp >> (6 * (wn - 1))));
        }
        char out[MEM_JSTR_UTF8_MAX];
        size_t n = 0;
        mem_jstr_bad_t why;
        size_t used = dec(esc, out, &n, &why);
        if (used != strlen(esc) || n != wn || memcmp(out, want, wn) != 0)
            fail_msg("U+%04lX (%s): used %zu, %zu bytes", cp, esc, used, n);
    }
}

static void test_refused(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        mem_jstr_bad_t why;
    } cases[] = {
        {"\\", MEM_JSTR_ESCAPE},
        {"\\x", MEM_JSTR_ESCAPE},
        {"\\u", MEM_JSTR_ESCAPE},
        {"\\u12", MEM_JSTR_ESCAPE},
        {"\\u12G4", MEM_JSTR_ESCAPE},
        {"\\U0041", MEM_JSTR_ESCAPE},
        {"\\u0000", MEM_JSTR_NUL},
        {"\\uDC00", MEM_JSTR_SURROGATE},
        {"\\uD800", MEM_JSTR_SURROGATE},
        {"\\uD800\\u0041", MEM_JSTR_SURROGATE},
        {"\\uD800\\uD800", MEM_JSTR_SURROGATE},
        {"\\uD800\\uDC0", MEM_JSTR_SURROGATE},
        {"\\uDBFFx\\uDFFF", MEM_JSTR_SURROGATE},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[MEM_JSTR_UTF8_MAX] = {'k', 'k', 'k', 'k'};
        size_t n = 99;
        mem_jstr_bad_t why = (mem_jstr_bad_t)-1;
        if (dec(cases[i].in, out, &n, &why) != 0) fail_msg("%s was decoded", cases[i].in);
        assert_int_equal(why, cases[i].why);
        assert_int_equal(n, 99); /* nothing written on a refusal */
        assert_memory_equal(out, "kkkk", 4);
    }
}

/* The escape is read up to end only, and what follows it is not part of it. */
static void test_bounded_by_end(void **state)
{
    (void)state;
    const char *s = "\\u0041BCD\\n";
    char out[MEM_JSTR_UTF8_MAX];
    size_t n;
    mem_jstr_bad_t why;
    assert_int_equal(mem_jstr_unescape(s, s + 6, out, &n, &why), 6);
    assert_int_equal(n, 1);
    assert_int_equal(out[0], 'A');
    assert_int_equal(mem_jstr_unescape(s, s + 5, out, &n, &why), 0);
    assert_int_equal(why, MEM_JSTR_ESCAPE);
    const char *pair = "\\uD83D\\uDE00";
    assert_int_equal(mem_jstr_unescape(pair, pair + 11, out, &n, &why), 0);
    assert_int_equal(why, MEM_JSTR_SURROGATE);
    assert_int_equal(mem_jstr_unescape(pair, pair + 12, out, &n, &why), 12);
    assert_int_equal(n, 4);
    assert_memory_equal(out, "\xF0\x9F\x98\x80", 4);
}

/* Valid UTF-8 passes, each byte that does not start a complete valid sequence becomes '?',
 * and the copy stops before a character that would leave fewer than 5 bytes of out. */
static void test_sanitize(void **state)
{
    (void)state;
    char out[64];
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"", ""},
        {"plain ascii", "plain ascii"},
        {"caf\xc3\xa9 \xe6\x9d\xb1 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe6\x9d\xb1 \xf0\x9f\x98\x80"},
        {"a\xff"
         "b",
         "a?b"},
        {"\xc3", "?"},                /* cut mid-character */
        {"\xc0\xaf", "??"},           /* overlong 2-byte */
        {"\xe0\x80\xaf", "???"},      /* overlong 3-byte */
        {"\xed\xa0\x80", "???"},      /* surrogate */
        {"\xf4\x90\x80\x80", "????"}, /* above U+10FFFF */
        {"\xf5\x80\x80\x80", "????"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t n = mem_jstr_sanitize(cases[i].in, out, sizeof(out));
        assert_string_equal(out, cases[i].want);
        assert_int_equal(n, strlen(cases[i].want));
    }
    char small[8]; /* room for 2 bytes: o + 5 < 8 */
    assert_int_equal(mem_jstr_sanitize("abcdef", small, sizeof(small)), 3);
    assert_string_equal(small, "abc");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_escapes), cmocka_unit_test(test_every_code_point),
        cmocka_unit_test(test_refused),       cmocka_unit_test(test_bounded_by_end),
        cmocka_unit_test(test_sanitize),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
