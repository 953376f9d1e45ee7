/* test_core_timefmt.c - RFC 3339, Unix seconds, durations and sizes
 * SPDX-License-Identifier: MIT
 */
/* cmocka.h needs stdarg.h, stddef.h and setjmp.h first */
/* clang-format off */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
/* clang-format on */

#include "core/timefmt.h"

static int64_t ts_ok(const char *s)
{
    int64_t ms = 0x5555;
    mem_err_t err = {0};
    int rc = mem_time_parse_rfc3339(s, strlen(s), "timestamp", &ms, &err);
    if (rc != MEM_OK) fail_msg("expected %s to parse, got: %s", s, err.msg);
    return ms;
}

static void ts_bad(const char *s, const char *needle)
{
    int64_t ms = 0x5555;
    mem_err_t err = {0};
    int rc = mem_time_parse_rfc3339(s, strlen(s), "timestamp", &ms, &err);
    if (rc != MEM_EINVAL) fail_msg("expected %s to be rejected, got %lld", s, (long long)ms);
    assert_int_equal(ms, 0x5555); /* out-param untouched */
    assert_string_equal(err.field, "timestamp");
    assert_non_null(strstr(err.msg, "timestamp: "));
    if (needle && !strstr(err.msg, needle))
        fail_msg("message for %s lacks \"%s\": %s", s, needle, err.msg);
}

static void test_rfc3339_basic(void **state)
{
    (void)state;
    assert_int_equal(ts_ok("1970-01-01T00:00:00Z"), 0);
    assert_int_equal(ts_ok("2026-07-31T09:30:00Z"), 1785490200000LL);
    assert_int_equal(ts_ok("2026-07-31T11:30:00+02:00"), 1785490200000LL);
    assert_int_equal(ts_ok("2026-07-31T04:00:00-05:30"), 1785490200000LL);
    assert_int_equal(ts_ok("2026-07-31t09:30:00z"), 1785490200000LL);
    assert_int_equal(ts_ok("2026-07-31T09:30:00-00:00"), 1785490200000LL);
    assert_int_equal(ts_ok("2026-07-31T09:30:00+00:00"), 1785490200000LL);
    /* offset crossing a day and a year boundary */
    assert_int_equal(ts_ok("2027-01-01T01:00:00+02:00"), ts_ok("2026-12-31T23:00:00Z"));
    assert_int_equal(ts_ok("2026-12-31T22:00:00-23:59"), ts_ok("2027-01-01T21:59:00Z"));
}

static void test_rfc3339_fraction(void **state)
{
    (void)state;
    assert_int_equal(ts_ok("2026-07-31T09:30:00.5Z"), 1785490200500LL);
    assert_int_equal(ts_ok("2026-07-31T09:30:00.12Z"), 1785490200120LL);
    assert_int_equal(ts_ok("2026-07-31T09:30:00.123Z"), 1785490200123LL);
    assert_int_equal(ts_ok("2026-07-31T09:30:00.123999999999Z"), 1785490200123LL);
    assert_int_equal(ts_ok("2026-07-31T09:30:00.000000001Z"), 1785490200000LL);
    assert_int_equal(ts_ok("2026-07-31T09:30:00.9999+01:00"), 1785486600999LL);
    /* truncation toward the past before 1970 too */
    assert_int_equal(ts_ok("1969-12-31T23:59:59.9999Z"), -1);
    assert_int_equal(ts_ok("1969-12-31T23:59:59.0001Z"), -1000);
    ts_bad("2026-07-31T09:30:00.Z", "decimal point");
}

static void test_rfc3339_calendar(void **state)
{
    (void)state;
    assert_int_equal(ts_ok("2000-02-29T00:00:00Z"), 951782400000LL);
    assert_int_equal(ts_ok("2024-02-29T12:00:00Z") - ts_ok("2024-02-28T12:00:00Z"), 86400000LL);
    assert_int_equal(ts_ok("2024-03-01T00:00:00Z") - ts_ok("2024-02-29T00:00:00Z"), 86400000LL);
    assert_int_equal(ts_ok("1900-03-01T00:00:00Z") - ts_ok("1900-02-28T00:00:00Z"), 86400000LL);
    assert_int_equal(ts_ok("0000-01-01T00:00:00Z"), MEM_TIME_MIN_MS);
    assert_int_equal(ts_ok("9999-12-31T23:59:59.999Z"), MEM_TIME_MAX_MS);
    assert_int_equal(ts_ok("0000-02-29T00:00:00Z") - ts_ok("0000-02-28T00:00:00Z"), 86400000LL);
    ts_bad("2023-02-29T00:00:00Z", "day out of range");
    ts_bad("1900-02-29T00:00:00Z", "day out of range");
    ts_bad("2100-02-29T00:00:00Z", "day out of range");
    ts_bad("2026-04-31T00:00:00Z", "day out of range");
    ts_bad("2026-01-00T00:00:00Z", "day out of range");
    ts_bad("2026-00-10T00:00:00Z", "month out of range");
    ts_bad("2026-13-10T00:00:00Z", "month out of range");
    ts_bad("2026-01-10T24:00:00Z", "hour out of range");
    ts_bad("2026-01-10T23:60:00Z", "minute out of range");
    ts_bad("2026-12-31T23:59:60Z", "second out of range");
    ts_bad("2026-01-10T00:00:00+24:00", "offset out of range");
    ts_bad("2026-01-10T00:00:00+01:60", "offset out of range");
    /* in range in local time, out of range in UTC */
    ts_bad("0000-01-01T00:00:00+01:00", "out of range");
    ts_bad("9999-12-31T23:30:00-01:00", "out of range");
}

static void test_rfc3339_malformed(void **state)
{
    (void)state;
    ts_bad("2026-07-31T09:30:00", "no zone");
    ts_bad("2026-07-31T09:30:00.123", "no zone");
    ts_bad("2026-07-31", "without a time");
    ts_bad("2026-07-31 09:30:00Z", NULL);
    ts_bad("2026-07-31T09:30Z", NULL);
    ts_bad("2026-7-31T09:30:00Z", NULL);
    ts_bad("-2026-07-31T09:30:00Z", NULL);
    ts_bad("+2026-07-31T09:30:00Z", NULL);
    ts_bad("12026-07-31T09:30:00Z", NULL);
    ts_bad("2026-07-31T09:30:00ZZ", "after the zone");
    ts_bad("2026-07-31T09:30:00Z ", "after the zone");
    ts_bad(" 2026-07-31T09:30:00Z", NULL);
    ts_bad("2026-07-31T09:30:00+0200", "offset");
    ts_bad("2026-07-31T09:30:00+02", "offset");
    ts_bad("2026-07-31T09:30:00+02:00x", "after the zone");
    ts_bad("2026-07-31T09:30:00UTC", NULL);
    ts_bad("2026-07-31T09:30:00,5Z", NULL);
    ts_bad("", NULL);
    ts_bad("now", NULL);
    ts_bad("2026-07-31T0a:30:00Z", NULL);
}

static void test_rfc3339_slice_not_nul_terminated(void **state)
{
    (void)state;
    const char buf[] = "2026-07-31T09:30:00Zgarbage";
    int64_t ms = 0;
    assert_int_equal(mem_time_parse_rfc3339(buf, 20, NULL, &ms, NULL), MEM_OK);
    assert_int_equal(ms, 1785490200000LL);
    /* a truncated slice must not read past len */
    assert_int_equal(mem_time_parse_rfc3339(buf, 19, NULL, &ms, NULL), MEM_EINVAL);
    assert_int_equal(mem_time_parse_rfc3339(NULL, 0, NULL, &ms, NULL), MEM_EINVAL);
    mem_err_t err = {0};
    assert_int_equal(mem_time_parse_rfc3339_z("2026-07-31", NULL, &ms, &err), MEM_EINVAL);
    assert_string_equal(err.field, "");
    assert_null(strstr(err.msg, ": a date")); /* no field prefix */
    assert_int_equal(mem_time_parse_rfc3339_z("2026-07-31T09:30:00.250Z", NULL, &ms, NULL), MEM_OK);
    assert_int_equal(ms, 1785490200250LL);
}

static void fmt_is(int64_t ms, const char *want)
{
    char buf[MEM_TIME_RFC3339_BUFSZ];
    size_t n = mem_time_format_rfc3339(ms, buf, sizeof(buf));
    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
}

static void test_format(void **state)
{
    (void)state;
    fmt_is(0, "1970-01-01T00:00:00.000Z");
    fmt_is(1785490200000LL, "2026-07-31T09:30:00.000Z");
    fmt_is(1785490200123LL, "2026-07-31T09:30:00.123Z");
    fmt_is(-1, "1969-12-31T23:59:59.999Z");
    fmt_is(-1000, "1969-12-31T23:59:59.000Z");
    fmt_is(-86400000LL, "1969-12-31T00:00:00.000Z");
    fmt_is(951782400000LL, "2000-02-29T00:00:00.000Z");
    fmt_is(MEM_TIME_MIN_MS, "0000-01-01T00:00:00.000Z");
    fmt_is(MEM_TIME_MAX_MS, "9999-12-31T23:59:59.999Z");
    char buf[64] = "x";
    assert_int_equal(mem_time_format_rfc3339(MEM_TIME_MAX_MS + 1, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "");
    assert_int_equal(mem_time_format_rfc3339(MEM_TIME_MIN_MS - 1, buf, sizeof(buf)), 0);
    assert_int_equal(mem_time_format_rfc3339(0, buf, MEM_TIME_RFC3339_BUFSZ - 1), 0);
    assert_string_equal(buf, "");
}

static void test_round_trip(void **state)
{
    (void)state;
    /* every day boundary of 1999-2001 plus a spread of instants over the whole range */
    char buf[MEM_TIME_RFC3339_BUFSZ];
    int64_t start = ts_ok("1999-01-01T00:00:00Z");
    for (int64_t ms = start; ms < start + 3 * 366 * 86400000LL; ms += 86400000LL) {
        assert_int_equal(mem_time_format_rfc3339(ms, buf, sizeof(buf)), 24);
        assert_int_equal(ts_ok(buf), ms);
    }
    uint64_t x = 88172645463325252ULL;
    uint64_t span = (uint64_t)(MEM_TIME_MAX_MS - MEM_TIME_MIN_MS) + 1;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int64_t ms = MEM_TIME_MIN_MS + (int64_t)(x % span);
        assert_int_equal(mem_time_format_rfc3339(ms, buf, sizeof(buf)), 24);
        assert_int_equal(ts_ok(buf), ms);
    }
}

static void test_unix_seconds(void **state)
{
    (void)state;
    int64_t ms = 0;
    assert_int_equal(mem_time_from_unix_s(0, NULL, &ms, NULL), MEM_OK);
    assert_int_equal(ms, 0);
    assert_int_equal(mem_time_from_unix_s(1785490200.0, NULL, &ms, NULL), MEM_OK);
    assert_int_equal(ms, 1785490200000LL);
    assert_int_equal(mem_time_from_unix_s(1785490200.123, NULL, &ms, NULL), MEM_OK);
    assert_int_equal(ms, 1785490200123LL);
    assert_int_equal(mem_time_from_unix_s(1785490200.1239, NULL, &ms, NULL), MEM_OK);
    assert_int_equal(ms, 1785490200123LL);
    assert_int_equal(mem_time_from_unix_s(0.001, NULL, &ms, NULL), MEM_OK);
    assert_int_equal(ms, 1);
    assert_int_equal(mem_time_from_unix_s(-0.0005, NULL, &ms, NULL), MEM_OK);
    assert_int_equal(ms, -1);
    assert_int_equal(mem_time_from_unix_s(-1.5, NULL, &ms, NULL), MEM_OK);
    assert_int_equal(ms, -1500);
    assert_int_equal(mem_time_from_unix_s(253402300799.999, NULL, &ms, NULL), MEM_OK);
    assert_int_equal(ms, MEM_TIME_MAX_MS);
    assert_int_equal(mem_time_from_unix_s(-62167219200.0, NULL, &ms, NULL), MEM_OK);
    assert_int_equal(ms, MEM_TIME_MIN_MS);
    ms = 42;
    mem_err_t err = {0};
    assert_int_equal(mem_time_from_unix_s(NAN, "timestamp", &ms, &err), MEM_EINVAL);
    assert_string_equal(err.msg, "timestamp: not a finite number of seconds");
    assert_int_equal(mem_time_from_unix_s(INFINITY, NULL, &ms, NULL), MEM_EINVAL);
    assert_int_equal(mem_time_from_unix_s(-INFINITY, NULL, &ms, NULL), MEM_EINVAL);
    assert_int_equal(mem_time_from_unix_s(253402300800.0, NULL, &ms, NULL), MEM_EINVAL);
    assert_int_equal(mem_time_from_unix_s(-62167219200.001, NULL, &ms, NULL), MEM_EINVAL);
    assert_int_equal(mem_time_from_unix_s(1e300, NULL, &ms, NULL), MEM_EINVAL);
    assert_int_equal(mem_time_from_unix_s(-1e19, NULL, &ms, NULL), MEM_EINVAL);
    assert_int_equal(ms, 42);
}

static double dur_ok(const char *s, double bare)
{
    double v = -1;
    mem_err_t err = {0};
    if (mem_time_parse_duration(s, strlen(s), bare, "half_life", &v, &err) != MEM_OK)
        fail_msg("duration %s rejected: %s", s, err.msg);
    return v;
}

static void dur_bad(const char *s, const char *needle)
{
    double v = -1;
    mem_err_t err = {0};
    if (mem_time_parse_duration(s, strlen(s), 1, "half_life", &v, &err) != MEM_EINVAL)
        fail_msg("duration %s accepted as %g", s, v);
    assert_true(v == -1);
    assert_string_equal(err.field, "half_life");
    if (needle && !strstr(err.msg, needle))
        fail_msg("message for %s lacks \"%s\": %s", s, needle, err.msg);
}

static void test_duration(void **state)
{
    (void)state;
    assert_true(dur_ok("0", 1) == 0);
    assert_true(dur_ok("0", 86400) == 0);
    assert_true(dur_ok("30", 1) == 30);
    assert_true(dur_ok("90", 86400) == 90 * 86400.0);
    assert_true(dur_ok("1.5", 86400) == 1.5 * 86400);
    assert_true(dur_ok("30s", 86400) == 30);
    assert_true(dur_ok("15m", 1) == 900);
    assert_true(dur_ok("36h", 1) == 36 * 3600.0);
    assert_true(dur_ok("90d", 1) == 90 * 86400.0);
    assert_true(dur_ok("2w", 1) == 14 * 86400.0);
    assert_true(dur_ok("1.5h", 1) == 5400);
    assert_true(dur_ok("250ms", 1) == 0.25);
    assert_true(dur_ok("0d", 1) == 0);
    assert_true(dur_ok("7 d", 1) == 7 * 86400.0);
    assert_true(dur_ok("007s", 1) == 7);
    assert_true(fabs(dur_ok("0.1s", 1) - 0.1) < 1e-15);
    assert_true(dur_ok("10000w", 1) == 10000 * 604800.0);
    dur_bad("", "empty");
    dur_bad("-5s", "negative");
    dur_bad("-0", "negative");
    dur_bad("5x", "unknown duration unit");
    dur_bad("5 days", "unknown duration unit");
    dur_bad("5D", "unknown duration unit");
    dur_bad("5s5", "unknown duration unit");
    dur_bad("1h30m", "unknown duration unit");
    dur_bad("d", "not a duration");
    dur_bad(".5h", "not a duration");
    dur_bad("5.h", "not a duration");
    dur_bad("1e3", "unknown duration unit");
    dur_bad("+5s", "not a duration");
    dur_bad(" 5s", "not a duration");
    dur_bad("nan", "not a duration");
    dur_bad("inf", "not a duration");
    dur_bad("99999999999999999999999999d", "too large");
    dur_bad("600000000w", "too large");
    double v;
    assert_int_equal(mem_time_parse_duration_z("90d", 1, NULL, &v, NULL), MEM_OK);
    assert_true(v == 7776000);
    /* slice: only the first two bytes */
    assert_int_equal(mem_time_parse_duration("15m", 2, 1, NULL, &v, NULL), MEM_OK);
    assert_true(v == 15);
}

static void test_duration_number(void **state)
{
    (void)state;
    double v = -1;
    assert_int_equal(mem_time_check_duration_s(0, "offset", &v, NULL), MEM_OK);
    assert_true(v == 0);
    assert_int_equal(mem_time_check_duration_s(1.5, "offset", &v, NULL), MEM_OK);
    assert_true(v == 1.5);
    mem_err_t err = {0};
    assert_int_equal(mem_time_check_duration_s(-1, "offset", &v, &err), MEM_EINVAL);
    assert_string_equal(err.msg, "offset: a duration cannot be negative");
    assert_int_equal(mem_time_check_duration_s(NAN, "offset", &v, NULL), MEM_EINVAL);
    assert_int_equal(mem_time_check_duration_s(INFINITY, "offset", &v, NULL), MEM_EINVAL);
    assert_int_equal(mem_time_check_duration_s(1e20, "offset", &v, NULL), MEM_EINVAL);
    assert_true(v == 1.5);
}

static size_t size_ok(const char *s)
{
    size_t v = 12345;
    mem_err_t err = {0};
    if (mem_time_parse_size(s, strlen(s), "max_body", &v, &err) != MEM_OK)
        fail_msg("size %s rejected: %s", s, err.msg);
    return v;
}

static void size_bad(const char *s, const char *needle)
{
    size_t v = 12345;
    mem_err_t err = {0};
    if (mem_time_parse_size(s, strlen(s), "max_body", &v, &err) != MEM_EINVAL)
        fail_msg("size %s accepted as %zu", s, v);
    assert_int_equal(v, 12345);
    if (needle && !strstr(err.msg, needle))
        fail_msg("message for %s lacks \"%s\": %s", s, needle, err.msg);
}

static void test_size(void **state)
{
    (void)state;
    assert_int_equal(size_ok("0"), 0);
    assert_int_equal(size_ok("4096"), 4096);
    assert_int_equal(size_ok("4096B"), 4096);
    assert_int_equal(size_ok("16MiB"), 16u << 20);
    assert_int_equal(size_ok("16 MiB"), 16u << 20);
    assert_int_equal(size_ok("16mib"), 16u << 20);
    assert_int_equal(size_ok("16M"), 16u << 20);
    assert_int_equal(size_ok("1KiB"), 1024);
    assert_int_equal(size_ok("1k"), 1024);
    assert_int_equal(size_ok("2GiB"), 2ull << 30);
    assert_int_equal(size_ok("1TiB"), 1ull << 40);
    assert_int_equal(size_ok("1.5GiB"), 3ull << 29);
    assert_int_equal(size_ok("0.5KiB"), 512);
    assert_int_equal(size_ok("0.3KB"), 300);
    assert_int_equal(size_ok("1KB"), 1000);
    assert_int_equal(size_ok("16MB"), 16000000);
    assert_int_equal(size_ok("2GB"), 2000000000ull);
    assert_int_equal(size_ok("1.0000001KiB"), 1024);
    assert_int_equal(size_ok("18446744073709551615"), SIZE_MAX);
    size_bad("", "empty");
    size_bad("-1", "negative");
    size_bad("16 MiBs", "unknown size unit");
    size_bad("16Mi", "unknown size unit");
    size_bad("16 bytes", "unknown size unit");
    size_bad("MiB", "not a size");
    size_bad("0.5", "whole number");
    size_bad("1.5.5KiB", "unknown size unit");
    size_bad("18446744073709551616", "too large");
    size_bad("99999999999999999999999", "too large");
    size_bad("16777216TiB", "too large");
    size_t v;
    assert_int_equal(mem_time_parse_size_z("8KiB", NULL, &v, NULL), MEM_OK);
    assert_int_equal(v, 8192);
    assert_int_equal(mem_time_parse_size("8KiBxx", 4, NULL, &v, NULL), MEM_OK);
    assert_int_equal(v, 8192);
}

/* Mutated inputs: never a crash (ASan), never an out-of-range success, and whatever is
 * accepted formats and re-parses to the same instant. */
static void test_mutations(void **state)
{
    (void)state;
    static const char *const seeds[] = {"2026-07-31T11:30:00.123456+02:00",
                                        "2000-02-29T23:59:59.999Z", "90d", "1.5h", "16MiB"};
    static const char alphabet[] = "0123456789:-+.TtZz dhmswKMGiB\x00\xff";
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    char buf[64], out[MEM_TIME_RFC3339_BUFSZ];
    for (int iter = 0; iter < 200000; iter++) {
        const char *seed = seeds[iter % 5];
        size_t len = strlen(seed);
        memcpy(buf, seed, len);
        for (int m = 0; m < 1 + iter % 3; m++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            size_t at = (size_t)(x % len);
            switch ((x >> 20) % 3) {
            case 0: /* replace */
                buf[at] = alphabet[(x >> 32) % (sizeof(alphabet) - 1)];
                break;
            case 1: /* truncate */
                len = at;
                break;
            default: /* duplicate a byte */
                if (len + 1 < sizeof(buf)) {
                    memmove(buf + at + 1, buf + at, len - at);
                    len++;
                }
            }
            if (len == 0) break;
        }
        int64_t ms;
        if (mem_time_parse_rfc3339(buf, len, "t", &ms, NULL) == MEM_OK) {
            assert_true(ms >= MEM_TIME_MIN_MS && ms <= MEM_TIME_MAX_MS);
            assert_int_equal(mem_time_format_rfc3339(ms, out, sizeof(out)), 24);
            int64_t again;
            assert_int_equal(mem_time_parse_rfc3339_z(out, NULL, &again, NULL), MEM_OK);
            assert_int_equal(again, ms);
        }
        double d;
        if (mem_time_parse_duration(buf, len, 1, "d", &d, NULL) == MEM_OK)
            assert_true(d >= 0 && d <= MEM_TIME_MAX_DURATION_S);
        size_t sz;
        (void)mem_time_parse_size(buf, len, "s", &sz, NULL);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc3339_basic),
        cmocka_unit_test(test_rfc3339_fraction),
        cmocka_unit_test(test_rfc3339_calendar),
        cmocka_unit_test(test_rfc3339_malformed),
        cmocka_unit_test(test_rfc3339_slice_not_nul_terminated),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_unix_seconds),
        cmocka_unit_test(test_duration),
        cmocka_unit_test(test_duration_number),
        cmocka_unit_test(test_size),
        cmocka_unit_test(test_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
