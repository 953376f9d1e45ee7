/* log.c - line formatting for the one logger: items, escaping, truncation
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. A line is built in a fixed buffer (no allocation, so an out-of-memory condition
 * can still be logged) and handed to the writer whole, which writes it with one write(2).
 * Room for the closing of the line is always kept back, so a cut line is still one valid
 * line: a value that does not fit is cut at a character boundary and truncated=1 closes
 * the line. mem_log() walks its format item by item: the key is copied, each conversion of
 * the value is rendered by vsnprintf on its own, and the whole value is then escaped.
 */
#include "core/log.h"

#include <stdio.h>
#include <string.h>

#include "core/timefmt.h"

/* Kept free at the end of the buffer for the closing: ` truncated=1` or
 * `,"truncated":"1"`, then `}` and '\n'. */
#define RESERVE 24

static const char *const LEVEL_NAMES[] = {"debug", "info", "warn", "error"};

const char *mem_log_level_name(mem_log_level_t level)
{
    return (unsigned)level < 4 ? LEVEL_NAMES[level] : "error";
}

bool mem_log_enabled(const mem_log_t *lg, mem_log_level_t level)
{
    return lg && lg->write && level >= lg->level;
}

static size_t room(const mem_log_line_t *ln)
{
    return ln->len + RESERVE < sizeof(ln->buf) ? sizeof(ln->buf) - RESERVE - ln->len : 0;
}

static void put(mem_log_line_t *ln, const char *s, size_t n)
{
    if (n > room(ln)) {
        ln->truncated = true;
        return;
    }
    memcpy(ln->buf + ln->len, s, n);
    ln->len += n;
}

/* Length of the valid UTF-8 sequence at p (n bytes left), 0 when p starts none. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    size_t len = p[0] < 0x80           ? 1
                 : (p[0] >> 5) == 0x6  ? 2
                 : (p[0] >> 4) == 0xE  ? 3
                 : (p[0] >> 3) == 0x1E ? 4
                                       : 0;
    if (len == 0 || len > n) return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xC0) != 0x80) return 0;
    if (len == 2 && p[0] < 0xC2) return 0; /* overlong */
    if (len == 3 && ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] >= 0xA0))) return 0;
    if (len == 4 &&
        (p[0] > 0xF4 || (p[0] == 0xF0 && p[1] < 0x90) || (p[0] == 0xF4 && p[1] >= 0x90)))
        return 0;
    return len;
}

/* A text value needs quotes unless it is non-empty printable ASCII without ' ', '"', '='
 * and '\\'. */
static bool needs_quotes(const char *v, size_t n)
{
    if (n == 0) return true;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c <= 0x20 || c >= 0x7F || c == '"' || c == '=' || c == '\\') return true;
    }
    return false;
}

/* Escape v into the line: one character (or escape) at a time, so a value cut short never
 * ends inside an escape or a multi-byte character. */
static void put_escaped(mem_log_line_t *ln, const char *v, size_t n, bool json)
{
    const unsigned char *p = (const unsigned char *)v;
    size_t i = 0;
    while (i < n && !ln->truncated) {
        char esc[8];
        const char *out = esc;
        size_t len;
        unsigned char c = p[i];
        size_t seq = utf8_seq(p + i, n - i);
        if (c == '"' || c == '\\') {
            esc[0] = '\\', esc[1] = (char)c, len = 2;
        } else if (c == '\n') {
            memcpy(esc, "\\n", 2), len = 2;
        } else if (c == '\r') {
            memcpy(esc, "\\r", 2), len = 2;
        } else if (c == '\t') {
            memcpy(esc, "\\t", 2), len = 2;
        } else if (c < 0x20 || c == 0x7F) {
            len = (size_t)snprintf(esc, sizeof(esc), json ? "\\u%04x" : "\\x%02x", c);
        } else if (seq == 0) { /* not UTF-8: the byte's value, readable in both formats */
            len = (size_t)snprintf(esc, sizeof(esc), json ? "\\\\x%02x" : "\\x%02x", c);
        } else {
            out = (const char *)p + i, len = seq;
        }
        if (len > room(ln)) {
            ln->truncated = true;
            break;
        }
        memcpy(ln->buf + ln->len, out, len);
        ln->len += len;
        i += seq ? seq : 1;
    }
}

static void put_key(mem_log_line_t *ln, const char *key, size_t klen)
{
    if (ln->json) {
        put(ln, ",\"", 2);
        put_escaped(ln, key, klen, true);
        put(ln, "\":", 2);
    } else {
        put(ln, " ", 1);
        put_escaped(ln, key, klen, false);
        put(ln, "=", 1);
    }
}

static void put_value(mem_log_line_t *ln, const char *v, size_t n)
{
    bool quote = ln->json || needs_quotes(v, n);
    if (quote) put(ln, "\"", 1);
    put_escaped(ln, v, n, ln->json);
    if (quote) ln->buf[ln->len++] = '"'; /* always fits: RESERVE holds it */
}

void mem_log_line_begin(mem_log_line_t *ln, bool json, int64_t now_ms, mem_log_level_t level,
                        const char *event)
{
    char ts[40];
    mem_time_format_rfc3339(now_ms, ts, sizeof(ts));
    ln->len = 0;
    ln->json = json;
    ln->truncated = false;
    const char *lvl = mem_log_level_name(level);
    if (json) {
        put(ln, "{\"ts\":\"", 7);
        put(ln, ts, strlen(ts));
        put(ln, "\",\"level\":\"", 11);
        put(ln, lvl, strlen(lvl));
        put(ln, "\",\"event\":\"", 11);
        put_escaped(ln, event, strlen(event), true);
        put(ln, "\"", 1);
    } else {
        put(ln, "ts=", 3);
        put(ln, ts, strlen(ts));
        put(ln, " level=", 7);
        put(ln, lvl, strlen(lvl));
        put(ln, " event=", 7);
        put_escaped(ln, event, strlen(event), false);
    }
}

void mem_log_line_add(mem_log_line_t *ln, const char *key, const char *value, size_t len)
{
    if (ln->truncated) return;
    size_t before = ln->len;
    put_key(ln, key, strlen(key));
    if (room(ln) < 2) ln->truncated = true;
    if (ln->truncated) { /* not even the key fits: drop the item */
        ln->len = before;
        return;
    }
    put_value(ln, value ? value : "", value ? len : 0);
}

size_t mem_log_line_end(mem_log_line_t *ln)
{
    /* RESERVE bytes are free whatever happened before */
    if (ln->truncated) {
        const char *t = ln->json ? ",\"truncated\":\"1\"" : " truncated=1";
        memcpy(ln->buf + ln->len, t, strlen(t));
        ln->len += strlen(t);
    }
    if (ln->json) ln->buf[ln->len++] = '}';
    ln->buf[ln->len++] = '\n';
    return ln->len;
}

void mem_log_line_write(const mem_log_t *lg, const mem_log_line_t *ln)
{
    if (lg && lg->write) lg->write(lg->ud, ln->buf, ln->len);
}

/* ---- the format walker ---- */

/* Render one conversion spec (spec[0..n), starting with '%') with its arguments. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static size_t render_one(char *out, size_t cap, const char *spec, size_t n, va_list *ap)
{
    char f[32];
    if (n >= sizeof(f)) return 0;
    memcpy(f, spec, n);
    f[n] = '\0';
    char conv = spec[n - 1];
    /* '*' width or precision take an int each, before the value */
    int stars[2], n_stars = 0;
    for (size_t i = 1; i + 1 < n; i++)
        if (spec[i] == '*' && n_stars < 2) stars[n_stars++] = va_arg(*ap, int);
    /* length modifier: the characters before conv that are one of hlLqjzt */
    const char *lm = spec + n - 1;
    while (lm > spec && strchr("hlLqjzt", lm[-1]))
        lm--;
    size_t lml = (size_t)(spec + n - 1 - lm);
    int r = 0;
#define FMT(v)                                                                                     \
    (n_stars == 2   ? snprintf(out, cap, f, stars[0], stars[1], v)                                 \
     : n_stars == 1 ? snprintf(out, cap, f, stars[0], v)                                           \
                    : snprintf(out, cap, f, v))
    switch (conv) {
    case 'd':
    case 'i':
        if (lml == 2 && lm[0] == 'l')
            r = FMT(va_arg(*ap, long long));
        else if (lml == 1 && lm[0] == 'l')
            r = FMT(va_arg(*ap, long));
        else if (lml == 1 && (lm[0] == 'z' || lm[0] == 't'))
            r = FMT(va_arg(*ap, ptrdiff_t));
        else if (lml == 1 && lm[0] == 'j')
            r = FMT(va_arg(*ap, intmax_t));
        else
            r = FMT(va_arg(*ap, int));
        break;
    case 'u':
    case 'x':
    case 'X':
    case 'o':
        if (lml == 2 && lm[0] == 'l')
            r = FMT(va_arg(*ap, unsigned long long));
        else if (lml == 1 && lm[0] == 'l')
            r = FMT(va_arg(*ap, unsigned long));
        else if (lml == 1 && (lm[0] == 'z' || lm[0] == 't'))
            r = FMT(va_arg(*ap, size_t));
        else if (lml == 1 && lm[0] == 'j')
            r = FMT(va_arg(*ap, uintmax_t));
        else
            r = FMT(va_arg(*ap, unsigned int));
        break;
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A':
        if (lml == 1 && lm[0] == 'L')
            r = FMT(va_arg(*ap, long double));
        else
            r = FMT(va_arg(*ap, double));
        break;
    case 'c':
        r = FMT(va_arg(*ap, int));
        break;
    case 's': {
        const char *s = va_arg(*ap, const char *);
        r = FMT(s ? s : "(null)");
        break;
    }
    case 'p':
        r = FMT(va_arg(*ap, void *));
        break;
    default:
        r = 0;
    }
#undef FMT
    if (r < 0) return 0;
    return (size_t)r < cap ? (size_t)r : cap - 1;
}
#pragma GCC diagnostic pop

/* Length of the conversion spec at s ('%' included), 0 when s is not one. */
static size_t spec_len(const char *s)
{
    size_t i = 1;
    while (s[i] && strchr("-+ #0", s[i]))
        i++;
    while (s[i] == '*' || (s[i] >= '0' && s[i] <= '9'))
        i++;
    if (s[i] == '.') {
        i++;
        while (s[i] == '*' || (s[i] >= '0' && s[i] <= '9'))
            i++;
    }
    while (s[i] && strchr("hlLqjzt", s[i]))
        i++;
    if (!s[i] || !strchr("diuxXofFeEgGaAcsp", s[i])) return 0;
    return i + 1;
}

void mem_log_v(const mem_log_t *lg, mem_log_level_t level, const char *event, const char *fmt,
               va_list ap)
{
    if (!mem_log_enabled(lg, level)) return;
    mem_log_line_t ln;
    mem_log_line_begin(&ln, lg->json, lg->now_ms ? lg->now_ms() : 0, level, event);
    va_list aq;
    va_copy(aq, ap);
    const char *p = fmt;
    char value[MEM_LOG_LINE_MAX];
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p) break;
        const char *key = p;
        while (*p && *p != '=' && *p != ' ')
            p++;
        size_t klen = (size_t)(p - key);
        if (*p != '=') { /* a word without a value: log it as a key with an empty value */
            char k[64];
            snprintf(k, sizeof(k), "%.*s", (int)(klen < 63 ? klen : 63), key);
            mem_log_line_add(&ln, k, "", 0);
            continue;
        }
        p++;
        /* a value in double quotes in the format may hold spaces: `msg="two words %s"` */
        char stop = *p == '"' ? '"' : ' ';
        if (stop == '"') p++;
        size_t vlen = 0;
        while (*p && *p != stop) {
            if (*p == '%' && p[1] == '%') {
                if (vlen + 1 < sizeof(value)) value[vlen++] = '%';
                p += 2;
            } else if (*p == '%') {
                size_t sl = spec_len(p);
                if (!sl) { /* not a conversion we know: keep the text */
                    if (vlen + 1 < sizeof(value)) value[vlen++] = *p;
                    p++;
                    continue;
                }
                vlen += render_one(value + vlen, sizeof(value) - vlen, p, sl, &aq);
                p += sl;
            } else {
                if (vlen + 1 < sizeof(value)) value[vlen++] = *p;
                p++;
            }
        }
        if (stop == '"' && *p == '"') p++;
        char k[64];
        snprintf(k, sizeof(k), "%.*s", (int)(klen < 63 ? klen : 63), key);
        mem_log_line_add(&ln, k, value, vlen);
    }
    va_end(aq);
    mem_log_line_end(&ln);
    mem_log_line_write(lg, &ln);
}

void mem_log(const mem_log_t *lg, mem_log_level_t level, const char *event, const char *fmt, ...)
{
    if (!mem_log_enabled(lg, level)) return;
    va_list ap;
    va_start(ap, fmt);
    mem_log_v(lg, level, event, fmt, ap);
    va_end(ap);
}
