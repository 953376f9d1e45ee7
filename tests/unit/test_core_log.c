/* test_core_log.c - log lines: formats, escaping of hostile values, truncation, levels
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

#include "core/log.h"

static char got[2 * MEM_LOG_LINE_MAX];
static size_t got_len;
static int n_lines;

static void capture(void *ud, const char *line, size_t len)
{
    assert_true(len < sizeof(got));
    memcpy(got, line, len);
    got[len] = '\0';
    got_len = len;
    n_lines++;
}

static int64_t fixed_clock(void)
{
    return 1785490200123; /* 2026-07-31T09:30:00.123Z */
}

static mem_log_t make(bool json)
{
    got[0] = '\0';
    got_len = 0;
    n_lines = 0;
    return (mem_log_t){
        .level = MEM_LOG_INFO, .json = json, .now_ms = fixed_clock, .write = capture};
}

static void test_text_line(void **state)
{
    mem_log_t lg = make(false);
    mem_log(&lg, MEM_LOG_INFO, "request", "id=%s status=%d ms=%.3f n=%zu big=%llu neg=%lld", "abc",
            200, 1.5, (size_t)7, 18446744073709551615ull, -5ll);
    assert_string_equal(got, "ts=2026-07-31T09:30:00.123Z level=info event=request id=abc "
                             "status=200 ms=1.500 n=7 big=18446744073709551615 neg=-5\n");
}

static void test_json_line(void **state)
{
    mem_log_t lg = make(true);
    mem_log(&lg, MEM_LOG_WARN, "request", "id=%s status=%d", "abc", 503);
    assert_string_equal(got, "{\"ts\":\"2026-07-31T09:30:00.123Z\",\"level\":\"warn\",\"event\":"
                             "\"request\",\"id\":\"abc\",\"status\":\"503\"}\n");
}

/* The values a client controls: quotes, newlines, spaces, control bytes, invalid UTF-8. */
static const char HOSTILE[] = "/a\"b\nts=x level=error event=forged c d\xff\x01\xc3\xa9\\";

static void test_text_escapes_hostile_values(void **state)
{
    mem_log_t lg = make(false);
    mem_log(&lg, MEM_LOG_INFO, "request", "path=%s", HOSTILE);
    assert_string_equal(got, "ts=2026-07-31T09:30:00.123Z level=info event=request "
                             "path=\"/a\\\"b\\nts=x level=error event=forged c d\\xff\\x01\xc3\xa9"
                             "\\\\\"\n");
    /* one line, whatever the value held */
    assert_ptr_equal(strchr(got, '\n'), got + got_len - 1);
}

static void test_json_escapes_hostile_values(void **state)
{
    mem_log_t lg = make(true);
    mem_log(&lg, MEM_LOG_INFO, "request", "path=%s", HOSTILE);
    assert_string_equal(got, "{\"ts\":\"2026-07-31T09:30:00.123Z\",\"level\":\"info\",\"event\":"
                             "\"request\",\"path\":\"/a\\\"b\\nts=x level=error event=forged c "
                             "d\\\\xff\\u0001\xc3\xa9\\\\\"}\n");
    assert_ptr_equal(strchr(got, '\n'), got + got_len - 1);
}

static void test_plain_values_stay_bare_others_quoted(void **state)
{
    mem_log_t lg = make(false);
    mem_log(&lg, MEM_LOG_INFO, "e", "a=%s b=%s c=%s d=%s", "plain-1.2:x/y", "", "k=v", "tab\there");
    assert_string_equal(got,
                        "ts=2026-07-31T09:30:00.123Z level=info event=e a=plain-1.2:x/y b=\"\" "
                        "c=\"k=v\" d=\"tab\\there\"\n");
}

static void test_literal_quoted_values_and_conversions(void **state)
{
    mem_log_t lg = make(false);
    mem_log(&lg, MEM_LOG_INFO, "e", "msg=\"two words %d\" path=\"%s\" pct=50%% hex=%x c=%c s=%.*s",
            3, "p q", 255, 'z', 3, "abcdef");
    assert_string_equal(got, "ts=2026-07-31T09:30:00.123Z level=info event=e msg=\"two words 3\" "
                             "path=\"p q\" pct=50% hex=ff c=z s=abc\n");
    mem_log(&lg, MEM_LOG_INFO, "e", "%s", "x");
    assert_non_null(strstr(got, " event=e"));
}

static void test_levels_and_null_logger(void **state)
{
    mem_log_t lg = make(false);
    mem_log(&lg, MEM_LOG_DEBUG, "e", "a=1");
    assert_int_equal(n_lines, 0);
    assert_false(mem_log_enabled(&lg, MEM_LOG_DEBUG));
    assert_true(mem_log_enabled(&lg, MEM_LOG_ERROR));
    mem_log(NULL, MEM_LOG_ERROR, "e", "a=1");
    assert_false(mem_log_enabled(NULL, MEM_LOG_ERROR));
    lg.write = NULL;
    mem_log(&lg, MEM_LOG_ERROR, "e", "a=1");
    assert_int_equal(n_lines, 0);
    assert_string_equal(mem_log_level_name(MEM_LOG_WARN), "warn");
}

/* Every byte before the closing quote is a complete UTF-8 sequence or an escape. */
static void assert_cut_cleanly(const char *line, size_t len, const char *tail)
{
    size_t tl = strlen(tail);
    assert_true(len <= MEM_LOG_LINE_MAX);
    assert_true(len > tl);
    assert_memory_equal(line + len - tl, tail, tl);
    const unsigned char *p = (const unsigned char *)line;
    for (size_t i = 0; i < len;) {
        size_t n = p[i] < 0x80 ? 1 : (p[i] >> 5) == 6 ? 2 : (p[i] >> 4) == 14 ? 3 : 4;
        for (size_t j = 1; j < n; j++)
            assert_int_equal(p[i + j] & 0xC0, 0x80);
        i += n;
    }
}

static void test_long_values_are_cut_at_a_character(void **state)
{
    static char big[3 * MEM_LOG_LINE_MAX];
    for (size_t i = 0; i + 2 < sizeof(big); i += 2)
        memcpy(big + i, "\xc3\xa9", 2); /* e-acute, two bytes each */
    big[sizeof(big) - 1] = '\0';
    for (int off = 0; off < 4; off++) {
        mem_log_t lg = make(false);
        mem_log(&lg, MEM_LOG_INFO, "e", "pad=%.*s v=%s after=1", off, "xyz", big);
        assert_cut_cleanly(got, got_len, "\" truncated=1\n");
        assert_null(strstr(got, "after=1"));
        lg = make(true);
        mem_log(&lg, MEM_LOG_INFO, "e", "pad=%.*s v=%s after=1", off, "xyz", big);
        assert_cut_cleanly(got, got_len, "\",\"truncated\":\"1\"}\n");
    }
    /* escapes are never split either: a value of quotes */
    static char quotes[MEM_LOG_LINE_MAX];
    memset(quotes, '"', sizeof(quotes) - 1);
    quotes[sizeof(quotes) - 1] = '\0';
    mem_log_t lg = make(false);
    mem_log(&lg, MEM_LOG_INFO, "e", "v=%s", quotes);
    const char *end = strstr(got, "\" truncated=1\n");
    assert_non_null(end);
    size_t backslashes = 0;
    for (const char *p = end - 1; *p == '"' || *p == '\\'; p--)
        if (*p == '\\') backslashes++;
    /* the run before the closing quote is \" pairs: an even number of characters */
    const char *v = strstr(got, "v=\"") + 3;
    assert_int_equal((size_t)(end - v) % 2, 0);
    assert_int_equal(backslashes * 2, (size_t)(end - v));
}

static void test_line_builder(void **state)
{
    mem_log_t lg = make(true);
    mem_log_line_t ln;
    mem_log_line_begin(&ln, true, 0, MEM_LOG_ERROR, "ev\"il");
    mem_log_line_add(&ln, "bin", "a\0b", 3);
    mem_log_line_add(&ln, "none", NULL, 0);
    mem_log_line_end(&ln);
    mem_log_line_write(&lg, &ln);
    assert_string_equal(got, "{\"ts\":\"1970-01-01T00:00:00.000Z\",\"level\":\"error\",\"event\":"
                             "\"ev\\\"il\",\"bin\":\"a\\u0000b\",\"none\":\"\"}\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_line),
        cmocka_unit_test(test_json_line),
        cmocka_unit_test(test_text_escapes_hostile_values),
        cmocka_unit_test(test_json_escapes_hostile_values),
        cmocka_unit_test(test_plain_values_stay_bare_others_quoted),
        cmocka_unit_test(test_literal_quoted_values_and_conversions),
        cmocka_unit_test(test_levels_and_null_logger),
        cmocka_unit_test(test_long_values_are_cut_at_a_character),
        cmocka_unit_test(test_line_builder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
