/* test_core_num.c - correctly rounded parsing and shortest printing of float32 and doubles
 * SPDX-License-Identifier: MIT
 *
 * Edge cases by value, then seeded random inputs checked against glibc (strtof and strtod
 * are correctly rounded; printf rounds exactly): a fast subset here (MEM_TEST_SEED picks
 * the seed, printed on failure); `make num-check` runs millions, and every float32.
 */
/* cmocka.h needs stdarg.h, stddef.h and setjmp.h first */
/* clang-format off */
#include <float.h>
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

#include "core/num.h"
#include "tests/unit/num_oracle.h"
#include "tests/unit/test_util.h"

static uint64_t seed;

static uint32_t f32_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof(b));
    return b;
}

static uint64_t f64_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof(b));
    return b;
}

/* s followed by 32 spaces: inside a body the parsers read ahead in 8-byte words (the fast
 * path), at the very end of the input byte by byte (the general one); both are tested. */
static const char *padded(const char *s, char *buf, size_t cap)
{
    size_t n = strlen(s);
    assert_true(n + 33 <= cap);
    memcpy(buf, s, n);
    memset(buf + n, ' ', 32);
    buf[n + 32] = '\0';
    return buf;
}

/* s parses (whole) to exactly want, as float32 and as double, alone and followed by text. */
static void parses_to(const char *s, float want32, double want64)
{
    char buf[512];
    for (int pad = 0; pad < 2; pad++) {
        const char *in = pad ? padded(s, buf, sizeof(buf)) : s;
        float f = -7;
        double d = -7;
        size_t used = 0;
        if (mem_num_parse_f32(in, strlen(in), &f, &used) != MEM_OK || used != strlen(s) ||
            f32_bits(f) != f32_bits(want32))
            fail_msg("f32 %s (%s): got %.9g (used %zu), want %.9g", s, pad ? "padded" : "alone",
                     (double)f, used, (double)want32);
        if (mem_num_parse_f64(in, strlen(in), &d, &used) != MEM_OK || used != strlen(s) ||
            f64_bits(d) != f64_bits(want64))
            fail_msg("f64 %s (%s): got %.17g (used %zu), want %.17g", s, pad ? "padded" : "alone",
                     d, used, want64);
    }
}

static void refused(const char *s)
{
    char buf[512];
    for (int pad = 0; pad < 2; pad++) {
        const char *in = pad ? padded(s, buf, sizeof(buf)) : s;
        float f = -7;
        double d = -7;
        size_t used = 99;
        if (mem_num_parse_f32(in, strlen(in), &f, &used) != MEM_EINVAL)
            fail_msg("f32 %s: accepted as %.9g", in, (double)f);
        if (mem_num_parse_f64(in, strlen(in), &d, &used) != MEM_EINVAL)
            fail_msg("f64 %s: accepted as %.17g", in, d);
        assert_true(f == -7 && d == -7 && used == 99); /* out-params untouched */
    }
}

static void test_grammar(void **state)
{
    parses_to("0", 0.0f, 0.0);
    parses_to("-0", -0.0f, -0.0);
    parses_to("-0.0e+0", -0.0f, -0.0);
    parses_to("1", 1.0f, 1.0);
    parses_to("-1.5", -1.5f, -1.5);
    parses_to("1E2", 100.0f, 100.0);
    parses_to("1e-2", 0.01f, 0.01);
    parses_to("0.000123", 0.000123f, 0.000123);
    parses_to("123456789", 123456789.0f, 123456789.0);
    parses_to("10.50", 10.5f, 10.5);
    parses_to("0e999999999999999999999999", 0.0f, 0.0);
    parses_to("1e-99999999999999999999999", 0.0f, 0.0);
    parses_to("0.0000000000000000000000000000000000000000000000000000000000001e61", 1.0f, 1.0);
    const char *bad[] = {"",          "-",   "+1",  ".5",  "1.",   "1.e5", "1e",
                         "1e+",       "1e-", "-.5", "e5",  "NaN",  "nan",  "Infinity",
                         "-Infinity", "inf", " 1",  "--1", "\"1\""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        refused(bad[i]);
    /* a number is the longest valid prefix; the caller sees what follows */
    struct {
        const char *s;
        size_t used;
        double v;
    } pre[] = {{"01", 1, 0}, {"-012", 2, -0.0}, {"1.5.2", 3, 1.5}, {"1e5e3", 3, 1e5}, {"2,3", 1, 2},
               {"7]", 1, 7}, {"4 ", 1, 4},      {"1e2x", 3, 100},  {"0x10", 1, 0}};
    for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
        char buf[64];
        for (int pad = 0; pad < 2; pad++) {
            const char *in = pad ? padded(pre[i].s, buf, sizeof(buf)) : pre[i].s;
            double d;
            float f;
            size_t used;
            assert_int_equal(mem_num_parse_f64(in, strlen(in), &d, &used), MEM_OK);
            assert_int_equal(used, pre[i].used);
            assert_true(f64_bits(d) == f64_bits(pre[i].v));
            assert_int_equal(mem_num_parse_f32(in, strlen(in), &f, &used), MEM_OK);
            assert_int_equal(used, pre[i].used);
            assert_true(f32_bits(f) == f32_bits((float)pre[i].v));
        }
    }
    /* a slice, not a NUL-terminated string */
    float f;
    size_t used;
    assert_int_equal(mem_num_parse_f32("12345", 3, &f, &used), MEM_OK);
    assert_true(f == 123.0f && used == 3);
}

static void test_ranges(void **state)
{
    float f;
    double d;
    size_t used = 0;
    /* float32: the largest finite, and where rounding reaches infinity */
    parses_to("3.4028234663852886e38", FLT_MAX, 3.4028234663852886e38);
    assert_int_equal(mem_num_parse_f32("3.4028235e38", 12, &f, &used), MEM_OK);
    assert_true(f == FLT_MAX);
    /* halfway between FLT_MAX and 2^128 ties to even: infinity */
    const char *half = "340282356779733661637539395458142568448";
    assert_int_equal(mem_num_parse_f32(half, strlen(half), &f, &used), MEM_ELIMIT);
    assert_int_equal(used, strlen(half));
    const char *below = "340282356779733661637539395458142568447.999";
    assert_int_equal(mem_num_parse_f32(below, strlen(below), &f, &used), MEM_OK);
    assert_true(f == FLT_MAX);
    assert_int_equal(mem_num_parse_f32("1e39", 4, &f, &used), MEM_ELIMIT);
    assert_int_equal(mem_num_parse_f32("-3.5e38", 7, &f, &used), MEM_ELIMIT);
    assert_int_equal(mem_num_parse_f64("1e39", 4, &d, &used), MEM_OK);
    /* doubles */
    assert_int_equal(mem_num_parse_f64("1.7976931348623157e308", 22, &d, &used), MEM_OK);
    assert_true(d == DBL_MAX);
    assert_int_equal(mem_num_parse_f32("1.7976931348623157e308", 22, &f, &used), MEM_ELIMIT);
    assert_int_equal(mem_num_parse_f64("1.7976931348623158e308", 22, &d, &used), MEM_OK);
    assert_true(d == DBL_MAX);
    assert_int_equal(mem_num_parse_f64("1.7976931348623159e308", 22, &d, &used), MEM_ELIMIT);
    assert_int_equal(mem_num_parse_f64("1e400", 5, &d, &used), MEM_ELIMIT);
    assert_int_equal(mem_num_parse_f64("-1e400", 6, &d, &used), MEM_ELIMIT);
    /* subnormals and underflow to a signed zero */
    float tiny = 0x1p-149f;
    parses_to("1.401298464324817e-45", tiny, 1.401298464324817e-45);
    parses_to("1e-45", tiny, 1e-45);
    parses_to("7.1e-46", tiny, 7.1e-46);
    parses_to("7e-46", 0.0f, 7e-46);
    parses_to("-7e-46", -0.0f, -7e-46);
    /* exactly half the smallest float32 subnormal ties to even: zero */
    const char *fhalf = "7.00649232162408535461864791644958065640130970938257885878534141944895"
                        "541342930300743319094181060791015625e-46";
    assert_int_equal(mem_num_parse_f32(fhalf, strlen(fhalf), &f, &used), MEM_OK);
    assert_true(f == 0.0f && !signbit(f));
    parses_to("1.1754943508222875e-38", FLT_MIN, 1.1754943508222875e-38);
    parses_to("1.1754942106924411e-38", 0x1.fffffcp-127f, 1.1754942106924411e-38);
    assert_int_equal(mem_num_parse_f64("4.9406564584124654e-324", 23, &d, &used), MEM_OK);
    assert_true(d == 0x1p-1074);
    assert_int_equal(mem_num_parse_f64("2.4703282292062327e-324", 23, &d, &used), MEM_OK);
    assert_true(d == 0.0);
    assert_int_equal(mem_num_parse_f64("2.4703282292062328e-324", 23, &d, &used), MEM_OK);
    assert_true(d == 0x1p-1074);
    assert_int_equal(mem_num_parse_f64("2.2250738585072011e-308", 23, &d, &used), MEM_OK);
    assert_true(d == 0x0.fffffffffffffp-1022);
    assert_int_equal(mem_num_parse_f64("2.2250738585072012e-308", 23, &d, &used), MEM_OK);
    assert_true(d == DBL_MIN);
    assert_int_equal(mem_num_parse_f64("1e-400", 6, &d, &used), MEM_OK);
    assert_true(d == 0.0);
}

/* The exact decimal of (a + b) / 2 for doubles of the same decimal exponent, as
 * "d.ddd...e-XXX": printf writes both exactly, the digits are added and halved. */
static size_t midpoint(double a, double b, char *out, size_t cap)
{
    char sa[1300], sb[1300];
    snprintf(sa, sizeof(sa), "%.1150e", a);
    snprintf(sb, sizeof(sb), "%.1150e", b);
    const char *ea = strchr(sa, 'e'), *eb = strchr(sb, 'e');
    assert_string_equal(ea, eb);
    char da[1200], db[1200], sum[1202];
    size_t n = 0;
    for (const char *p = sa; p < ea; p++)
        if (*p != '.') da[n++] = *p;
    n = 0;
    for (const char *p = sb; p < eb; p++)
        if (*p != '.') db[n++] = *p;
    int carry = 0; /* sum = da + db, one digit longer */
    for (size_t i = n; i-- > 0;) {
        int v = (da[i] - '0') + (db[i] - '0') + carry;
        sum[i + 1] = (char)('0' + v % 10);
        carry = v / 10;
    }
    sum[0] = (char)('0' + carry);
    char half[1203];
    int rem = 0;
    for (size_t i = 0; i <= n; i++) { /* halve: exact, the last bit of sum is even */
        int v = rem * 10 + (sum[i] - '0');
        half[i] = (char)('0' + v / 2);
        rem = v % 2;
    }
    half[n + 1] = (char)('0' + rem * 5);
    size_t hl = n + 2;
    int exp10 = atoi(ea + 1);
    size_t start = half[0] == '0' ? 1 : 0; /* the sum had no carry: one leading zero */
    if (start == 0) exp10++;
    while (hl > start + 1 && half[hl - 1] == '0')
        hl--;
    int o = snprintf(out, cap, "%c.%.*se%d", half[start], (int)(hl - start - 1), half + start + 1,
                     exp10);
    assert_true(o > 0 && (size_t)o < cap);
    return (size_t)o;
}

/* 9 vs 17 digits, ties, and the double-rounding trap a float32 parser through double falls
 * into. */
static void test_rounding(void **state)
{
    parses_to("0.1", 0.1f, 0.1);
    parses_to("0.100000001490116119384765625", 0.1f, 0.100000001490116119384765625);
    parses_to("0.10000000149011612", 0.1f, 0.10000000149011612);
    parses_to("0.3", 0.3f, 0.3);
    parses_to("16777217", 16777216.0f, 16777217.0); /* 2^24 + 1: tie, to even */
    parses_to("16777219", 16777220.0f, 16777219.0); /* 2^24 + 3: tie, to even (up) */
    parses_to("9007199254740993", 9007199254740992.0f, 9007199254740992.0);
    parses_to("9007199254740995", 9007199254740996.0f, 9007199254740996.0);
    parses_to("1e23", 1e23f, 1e23);
    parses_to("8.589973e9", 8.589973e9f, 8.589973e9);
    /* 1 + 2^-24 is halfway between 1 and the next float32; a hair above it the float32 is
     * 1 + 2^-23. Through a double the hair is lost (the nearest double is the halfway
     * point itself) and the tie then goes to 1.0: rounding twice gives the wrong float. */
    const char *trap = "1.0000000596046447755";
    float f;
    size_t used;
    assert_int_equal(mem_num_parse_f32(trap, strlen(trap), &f, &used), MEM_OK);
    assert_true(f == 0x1.000002p0f);
    assert_true((float)strtod(trap, NULL) == 1.0f); /* what double rounding would give */
    assert_true(strtof(trap, NULL) == f);
    parses_to("1.000000059604644775390625", 1.0f, 1.000000059604644775390625); /* exact tie */
    parses_to("1.000000059604644775390626", 0x1.000002p0f, 1.000000059604644775390626);
    /* more digits than 19, deciding only far out */
    const char *long_tie = "1.00000005960464477539062500000000000000000000000000000000000001";
    assert_int_equal(mem_num_parse_f32(long_tie, strlen(long_tie), &f, &used), MEM_OK);
    assert_true(f == 0x1.000002p0f);
    double d;
    const char *dtie = "9007199254740993.00000000000000000000000000000000000000000000001";
    assert_int_equal(mem_num_parse_f64(dtie, strlen(dtie), &d, &used), MEM_OK);
    assert_true(d == 9007199254740994.0);
    const char *dtie0 = "9007199254740993.000000000000000000000000000000000000000000000000";
    assert_int_equal(mem_num_parse_f64(dtie0, strlen(dtie0), &d, &used), MEM_OK);
    assert_true(d == 9007199254740992.0);
    /* Halfway between the largest subnormal double and the smallest normal: 767
     * significant digits, a tie that goes to the even significand (the normal one). */
    char mid[1300];
    size_t ml = midpoint(0x0.fffffffffffffp-1022, 0x1p-1022, mid, sizeof(mid));
    assert_int_equal(mem_num_parse_f64(mid, ml, &d, &used), MEM_OK);
    assert_true(d == 0x1p-1022 && used == ml);
    assert_true(f64_bits(d) == f64_bits(strtod(mid, NULL)));
    /* one more nonzero digit past the 800 that are compared decides it the other way */
    char longer[2400];
    size_t e_at = strcspn(mid, "e");
    int lo = snprintf(longer, sizeof(longer), "%.*s", (int)e_at, mid);
    memset(longer + lo, '0', 900);
    lo += 900;
    lo += snprintf(longer + lo, sizeof(longer) - (size_t)lo, "1%s", mid + e_at);
    assert_int_equal(mem_num_parse_f64(longer, (size_t)lo, &d, &used), MEM_OK);
    assert_true(d == 0x1p-1022);
    ml = midpoint(0x1.0000000000001p0, 0x1.0000000000002p0, mid, sizeof(mid)); /* odd below */
    assert_int_equal(mem_num_parse_f64(mid, ml, &d, &used), MEM_OK);
    assert_true(d == 0x1.0000000000002p0);
    e_at = strcspn(mid, "e");
    lo = snprintf(longer, sizeof(longer), "%.*s", (int)e_at, mid);
    longer[lo - 1] = (char)(longer[lo - 1] - 1); /* a hair below the tie */
    memset(longer + lo, '9', 900);
    lo += 900;
    lo += snprintf(longer + lo, sizeof(longer) - (size_t)lo, "%s", mid + e_at);
    assert_int_equal(mem_num_parse_f64(longer, (size_t)lo, &d, &used), MEM_OK);
    assert_true(d == 0x1.0000000000001p0);
    /* float32 halfway points with 900 more digits: zeros keep the tie, a 1 breaks it */
    ml = midpoint((double)0x1.000002p0f, (double)0x1.000004p0f, mid, sizeof(mid));
    e_at = strcspn(mid, "e");
    lo = snprintf(longer, sizeof(longer), "%.*s", (int)e_at, mid);
    memset(longer + lo, '0', 900);
    lo += 900;
    int lz = lo + snprintf(longer + lo, sizeof(longer) - (size_t)lo, "%s", mid + e_at);
    assert_int_equal(mem_num_parse_f32(longer, (size_t)lz, &f, &used), MEM_OK);
    assert_true(f == 0x1.000004p0f); /* tie: to even */
    lz = lo + snprintf(longer + lo, sizeof(longer) - (size_t)lo, "3%s", mid + e_at);
    assert_int_equal(mem_num_parse_f32(longer, (size_t)lz, &f, &used), MEM_OK);
    assert_true(f == 0x1.000004p0f);
    ml = midpoint((double)0x1.000000p0f, (double)0x1.000002p0f, mid, sizeof(mid));
    e_at = strcspn(mid, "e");
    lo = snprintf(longer, sizeof(longer), "%.*s", (int)e_at, mid);
    memset(longer + lo, '0', 900);
    lo += 900;
    lz = lo + snprintf(longer + lo, sizeof(longer) - (size_t)lo, "%s", mid + e_at);
    assert_int_equal(mem_num_parse_f32(longer, (size_t)lz, &f, &used), MEM_OK);
    assert_true(f == 1.0f);
    lz = lo + snprintf(longer + lo, sizeof(longer) - (size_t)lo, "1%s", mid + e_at);
    assert_int_equal(mem_num_parse_f32(longer, (size_t)lz, &f, &used), MEM_OK);
    assert_true(f == 0x1.000002p0f);
}

/* The fast float32 path rounds a double within 3 ulps of the value, and leaves values
 * within a few ulps of a float32 halfway point to exact arithmetic: 19-digit decimals on
 * either side of halfway points, 0 to 12 double ulps away, and at every float32 binade. */
static void test_near_halfway(void **state)
{
    char s[64];
    uint64_t seed0 = seed;
    for (int i = 0; i < 3000; i++) {
        uint32_t b = (uint32_t)rng_next(&seed) & 0x7f7fffffu;
        if (i < 254) b = (uint32_t)(i + 1) << 23; /* the first float of each binade, and below */
        uint32_t b2 = b + 1;
        float a, c;
        memcpy(&a, &b, sizeof(a));
        memcpy(&c, &b2, sizeof(c));
        double mid = ((double)a + (double)c) / 2;
        if (i < 254) mid = ((double)a + (double)nextafterf(a, 0)) / 2;
        for (int k = -12; k <= 12; k++) {
            double x = mid;
            for (int j = 0; j < (k < 0 ? -k : k); j++)
                x = nextafter(x, k < 0 ? 0 : INFINITY);
            int n = snprintf(s, sizeof(s), "%.18e", x);
            const char *why = num_oracle_check_parse(s, (size_t)n);
            if (why) fail_msg("seed %llu: %s: %s", (unsigned long long)seed0, s, why);
        }
    }
}

/* A number list: separators with and without whitespace, where it stops, what it refuses,
 * and the same values as one number at a time. */
static void test_list(void **state)
{
    float out[8];
    size_t n, used;
    bool long_int;
    const char *ok = "1.5,-2e-3, 0 ,\t4\n,\r5e0]   ";
    assert_int_equal(mem_num_parse_f32_list(ok, strlen(ok), out, 8, &n, &used, &long_int), MEM_OK);
    assert_int_equal(n, 5);
    assert_true(ok[used] == ']' && !long_int);
    assert_true(out[0] == 1.5f && out[1] == -2e-3f && out[2] == 0 && out[3] == 4 && out[4] == 5);
    /* the end of the input ends the list too (the general path, byte by byte) */
    assert_int_equal(mem_num_parse_f32_list("7, 8", 4, out, 8, &n, &used, &long_int), MEM_OK);
    assert_true(n == 2 && used == 4 && out[1] == 8);
    assert_int_equal(mem_num_parse_f32_list("7 x", 3, out, 8, &n, &used, &long_int), MEM_OK);
    assert_true(n == 1 && used == 2);
    /* a number expected after a comma */
    const char *bad[] = {"1,]", "1, ,2", "1,+2", "1,.5", "1,NaN", "1,Infinity", "1,-", "1,"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char buf[64];
        for (int pad = 0; pad < 2; pad++) {
            const char *in = pad ? padded(bad[i], buf, sizeof(buf)) : bad[i];
            assert_int_equal(mem_num_parse_f32_list(in, strlen(in), out, 8, &n, &used, &long_int),
                             MEM_EINVAL);
            assert_int_equal(n, 1);
            size_t at = (size_t)(strchr(in, ',') + 1 - in); /* the failed number's place */
            assert_int_equal(used, at + strspn(in + at, " \t\r\n"));
        }
    }
    const char *big = "1, 1e39, 2]                        ";
    assert_int_equal(mem_num_parse_f32_list(big, strlen(big), out, 8, &n, &used, &long_int),
                     MEM_ELIMIT);
    assert_true(n == 1 && used == 3);
    const char *full = "1,2,3]                         ";
    assert_int_equal(mem_num_parse_f32_list(full, strlen(full), out, 3, &n, &used, &long_int),
                     MEM_OK);
    assert_int_equal(n, 3);
    assert_int_equal(mem_num_parse_f32_list(full, strlen(full), out, 2, &n, &used, &long_int),
                     MEM_ELIMIT);
    assert_true(n == 2 && used == 4);
    /* integers of 19 digits and more are flagged, reals of any length are not */
    const char *longs[] = {"1234567890123456789", "-12345678901234567890", "9223372036854775808"};
    for (size_t i = 0; i < sizeof(longs) / sizeof(longs[0]); i++) {
        char buf[96];
        snprintf(buf, sizeof(buf), "0.5, %s, 1]                        ", longs[i]);
        assert_int_equal(mem_num_parse_f32_list(buf, strlen(buf), out, 8, &n, &used, &long_int),
                         MEM_OK);
        assert_true(n == 3 && long_int);
    }
    const char *reals = "0.12345678901234567890, 1234567890123456789.0, 123456789012345678e1]  "
                        "                        ";
    assert_int_equal(mem_num_parse_f32_list(reals, strlen(reals), out, 8, &n, &used, &long_int),
                     MEM_OK);
    assert_true(n == 3 && !long_int);
    /* random lists of random shapes: the values of one number at a time */
    char text[4096];
    float many[64], one;
    uint64_t seed0 = seed;
    for (int round = 0; round < 300; round++) {
        size_t len = 0, count = (size_t)(rng_next(&seed) % 64) + 1;
        for (size_t i = 0; i < count; i++) {
            uint64_t r = rng_next(&seed);
            uint32_t b = (uint32_t)r & 0x7f7fffffu;
            float x;
            memcpy(&x, &b, sizeof(x));
            if (i) len += (size_t)snprintf(text + len, 8, "%s", r & 256 ? ", " : ",");
            len += (size_t)snprintf(text + len, 40, "%.*g", (int)(r >> 59) + 1,
                                    r & 512 ? (double)x : ((double)(r >> 11) * 0x1p-53 - 0.5));
        }
        len += (size_t)snprintf(text + len, 4, "]");
        assert_int_equal(mem_num_parse_f32_list(text, len, many, 64, &n, &used, &long_int), MEM_OK);
        if (n != count || text[used] != ']')
            fail_msg("seed %llu: %zu of %zu numbers in %s", (unsigned long long)seed0, n, count,
                     text);
        const char *p = text;
        for (size_t i = 0; i < n; i++) {
            size_t u;
            assert_int_equal(mem_num_parse_f32(p, (size_t)(text + len - p), &one, &u), MEM_OK);
            if (f32_bits(one) != f32_bits(many[i]))
                fail_msg("seed %llu: number %zu of %s", (unsigned long long)seed0, i, text);
            p += u;
            p += strspn(p, ", ");
        }
    }
}

/* Random inputs of every shape, against strtof and strtod. */
static void test_random_against_libc(void **state)
{
    char s[256];
    uint64_t seed0 = seed;
    for (int i = 0; i < 40000; i++) {
        uint64_t r = rng_next(&seed);
        int n;
        switch (i % 6) {
        case 0: { /* any double, 17 digits */
            double x;
            memcpy(&x, &r, sizeof(x));
            if (!isfinite(x)) continue;
            n = snprintf(s, sizeof(s), "%.17g", x);
            break;
        }
        case 1: { /* any float32, 1 to 12 digits */
            uint32_t b = (uint32_t)r;
            float x;
            memcpy(&x, &b, sizeof(x));
            if (!isfinite(x)) continue;
            n = snprintf(s, sizeof(s), "%.*g", (int)(r >> 40) % 12 + 1, (double)x);
            break;
        }
        case 2: { /* halfway between adjacent float32, 40 digits */
            uint32_t b = (uint32_t)r & 0x7f7fffffu, b2 = b + 1;
            float a, c;
            memcpy(&a, &b, sizeof(a));
            memcpy(&c, &b2, sizeof(c));
            n = snprintf(s, sizeof(s), "%.40e", ((double)a + (double)c) / 2);
            break;
        }
        case 5: { /* within a hair of a float32 halfway point, at most 19 digits: the
                   * inputs where a float32 read through a double could round wrongly */
            uint32_t b = (uint32_t)r & 0x7f7fffffu, b2 = b + 1;
            float a, c;
            memcpy(&a, &b, sizeof(a));
            memcpy(&c, &b2, sizeof(c));
            n = snprintf(s, sizeof(s), "%s%.*e", r >> 63 ? "-" : "", (int)(r >> 40) % 4 + 15,
                         ((double)a + (double)c) / 2);
            break;
        }
        case 3: { /* embedding-like: small, 6 to 19 digits */
            double x = ((double)(r >> 11) * 0x1p-53 - 0.5) * 0.3;
            n = snprintf(s, sizeof(s), "%.*f", (int)(r % 14) + 6, x);
            break;
        }
        default: { /* random digits and exponent */
            int k = 0, nd = (int)(r % 30) + 1;
            if (r & 64) s[k++] = '-';
            for (int j = 0; j < nd; j++)
                s[k++] = (char)('0' + (j == 0 ? 1 + rng_next(&seed) % 9 : rng_next(&seed) % 10));
            if (r & 128) {
                s[k++] = '.';
                for (int j = (int)(rng_next(&seed) % 25) + 1; j > 0; j--)
                    s[k++] = (char)('0' + rng_next(&seed) % 10);
            }
            n = k +
                snprintf(s + k, sizeof(s) - (size_t)k, "e%d", (int)(rng_next(&seed) % 700) - 350);
        }
        }
        const char *why = num_oracle_check_parse(s, (size_t)n);
        if (why) fail_msg("seed %llu: %s: %s", (unsigned long long)seed0, s, why);
    }
}

static void prints_as(double x, const char *want)
{
    char out[MEM_NUM_FMT_MAX];
    size_t n = mem_num_fmt_f64(x, out);
    if (strcmp(out, want) || n != strlen(want)) fail_msg("%.17g printed %s, want %s", x, out, want);
}

static void prints32_as(float x, const char *want)
{
    char out[MEM_NUM_FMT_MAX];
    size_t n = mem_num_fmt_f32(x, out);
    if (strcmp(out, want) || n != strlen(want))
        fail_msg("%.9g printed %s, want %s", (double)x, out, want);
}

static void test_print_forms(void **state)
{
    prints_as(0.0, "0.0");
    prints_as(-0.0, "-0.0");
    prints_as(1.0, "1.0");
    prints_as(-2.5, "-2.5");
    prints_as(100000.0, "100000.0");
    prints_as(123456789012345.0, "123456789012345.0");
    prints_as(1e15, "1e+15");
    prints_as(1234567890123456.0, "1234567890123456.0");
    prints_as(12345678901234568.0, "12345678901234568.0");
    prints_as(1e17, "1e+17");
    prints_as(0.1, "0.1");
    prints_as(0.0001, "0.0001");
    prints_as(0.00012, "0.00012");
    prints_as(1e-5, "1e-05");
    prints_as(1.5e-7, "1.5e-07");
    prints_as(123.456, "123.456");
    prints_as(1234567.891, "1234567.891");
    prints_as(1.5e300, "1.5e+300");
    prints_as(2.5e-300, "2.5e-300");
    prints_as(1e23, "1e+23");
    prints_as(DBL_MAX, "1.7976931348623157e+308");
    prints_as(DBL_MIN, "2.2250738585072014e-308");
    prints_as(0x1p-1074, "5e-324");       /* the shortest; two digits would be 4.9e-324 */
    prints_as(10 * 0x1p-1074, "5e-323");  /* likewise */
    prints_as(3 * 0x1p-1074, "1.5e-323"); /* here two digits are needed */
    prints_as(0.30000000000000004, "0.30000000000000004");
    prints_as(5e-324 * 3, "1.5e-323");
    prints_as(NAN, "null");
    prints_as(INFINITY, "null");
    prints_as(-INFINITY, "null");
    prints32_as(0.1f, "0.1");
    prints32_as(0.6f, "0.6");
    prints32_as(1.0f, "1.0");
    prints32_as(-0.0f, "-0.0");
    prints32_as(16777216.0f, "16777216.0");
    prints32_as(FLT_MAX, "3.4028235e+38");
    prints32_as(FLT_MIN, "1.1754944e-38");
    prints32_as(0x1p-149f, "1e-45");
    prints32_as(1e-7f, "1e-07");
    prints32_as(0.33333334f, "0.33333334");
    /* carried as a double, a float32 prints the same */
    assert_true(mem_num_f32_to_f64_shortest(0.1f) == 0.1);
    assert_true(mem_num_f32_to_f64_shortest(-0.6f) == -0.6);
    assert_true(mem_num_f32_to_f64_shortest(0x1p-149f) == 1e-45);
    assert_true(signbit(mem_num_f32_to_f64_shortest(-0.0f)));
    assert_true(isnan(mem_num_f32_to_f64_shortest(NAN)));
    uint64_t dg;
    int e;
    mem_num_shortest_f64(1e23, &dg, &e);
    assert_true(dg == 1 && e == 23);
    uint32_t dg32;
    mem_num_shortest_f32(1.5e10f, &dg32, &e);
    assert_true(dg32 == 15 && e == 9);
}

/* Random doubles and float32: the shortest digits agree with a printf-based search, the
 * printed text reads back as the same value, and a float32 printed via the double of its
 * shortest decimal prints the same. */
static void test_random_shortest(void **state)
{
    uint64_t seed0 = seed;
    for (int i = 0; i < 20000; i++) {
        uint64_t r = rng_next(&seed);
        double x;
        memcpy(&x, &r, sizeof(x));
        if (i % 4 == 1) x = ldexp((double)(r >> 11), (int)(r % 2100) - 1100); /* also powers */
        if (i % 4 == 2) x = (double)(r % 100000) / 1000.0;                    /* short ones */
        const char *why = isfinite(x) ? num_oracle_check_f64(x) : NULL;
        if (why) fail_msg("seed %llu: %.17g: %s", (unsigned long long)seed0, x, why);
        uint32_t b = (uint32_t)(r >> 32);
        if (i % 4 == 3) b &= 0xff800000u; /* powers of two: irregular spacing */
        float f;
        memcpy(&f, &b, sizeof(f));
        why = isfinite(f) ? num_oracle_check_f32(f) : NULL;
        if (why) fail_msg("seed %llu: %.9g: %s", (unsigned long long)seed0, (double)f, why);
    }
    /* every float32 subnormal with a short significand, and the smallest normals */
    for (uint32_t b = 1; b < 5000; b++) {
        float f;
        memcpy(&f, &b, sizeof(f));
        const char *why = num_oracle_check_f32(f);
        if (why) fail_msg("subnormal %u: %s", b, why);
        uint64_t b64 = b;
        double d;
        memcpy(&d, &b64, sizeof(d));
        why = num_oracle_check_f64(d);
        if (why) fail_msg("subnormal double %u: %s", b, why);
    }
}

int main(void)
{
    const char *env = getenv("MEM_TEST_SEED");
    seed = env ? strtoull(env, NULL, 10) : 20260731;
    printf("# MEM_TEST_SEED=%llu\n", (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grammar),     cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_rounding),    cmocka_unit_test(test_near_halfway),
        cmocka_unit_test(test_list),        cmocka_unit_test(test_random_against_libc),
        cmocka_unit_test(test_print_forms), cmocka_unit_test(test_random_shortest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
