/* util.c - request pool, clocks, timestamps, durations, UUIDv7 and the embedder bridge
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Request timestamps and durations are parsed here, at the JSON boundary: SPEC
 * section 3 accepts RFC 3339 with a zone or offset, or Unix seconds; durations are seconds
 * or a number with one unit (s, m, h, d, w). Parsing works on (ptr, len) slices and never
 * calls the C library's locale- or zone-dependent functions.
 */
#include "api/api_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#if defined(__has_include)
#if __has_include("core/embed.h")
#include "core/embed.h"
#define HAVE_CORE_EMBED 1
#endif
#endif

/* ---- pool ---- */

typedef struct pool_block {
    struct pool_block *next;
    max_align_t _align[]; /* payload follows */
} pool_block_t;

void *mem_api__palloc(mem_api__pool_t *pool, size_t size)
{
    if (size > SIZE_MAX - sizeof(pool_block_t))
        return NULL;
    pool_block_t *b = calloc(1, sizeof(pool_block_t) + (size ? size : 1));
    if (!b)
        return NULL;
    b->next = pool->head;
    pool->head = b;
    return b->_align;
}

char *mem_api__pstrndup(mem_api__pool_t *pool, const char *s, size_t len)
{
    if (len == SIZE_MAX)
        return NULL;
    char *p = mem_api__palloc(pool, len + 1);
    if (p && len)
        memcpy(p, s, len);
    return p;
}

void mem_api__pool_free(mem_api__pool_t *pool)
{
    pool_block_t *b = pool->head;
    while (b) {
        pool_block_t *next = b->next;
        free(b);
        b = next;
    }
    pool->head = NULL;
}

mem_api__state_t *mem_api__state(mem_api_resp_t *resp)
{
    if (!resp->_state)
        resp->_state = calloc(1, sizeof(mem_api__state_t));
    return resp->_state;
}

double mem_api__mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double mem_api__took_ms(double t0_s)
{
    double ms = (mem_api__mono_s() - t0_s) * 1000.0;
    if (ms < 0)
        ms = 0;
    return round(ms * 1000.0) / 1000.0;
}

/* ---- civil time (proleptic Gregorian, no libc zone handling) ---- */

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = (unsigned)(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static int digits(const char *s, size_t n, unsigned *out)
{
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    *out = v;
    return 0;
}

static unsigned days_in_month(unsigned y, unsigned m)
{
    static const unsigned dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : dm[m - 1];
}

int mem_api__rfc3339_parse(const char *s, size_t len, int64_t *ms)
{
    unsigned y, mo, d, h, mi, sec, frac_ms = 0;
    /* YYYY-MM-DDTHH:MM:SS is 19 bytes; a zone follows */
    if (len < 20 || digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) || s[7] != '-' ||
        digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
        digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &mi) || s[16] != ':' ||
        digits(s + 17, 2, &sec))
        return -1;
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 ||
        sec > 59)
        return -1;
    size_t i = 19;
    if (s[i] == '.') {
        size_t nd = 0;
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, nd++)
            if (nd < 3)
                frac_ms = frac_ms * 10 + (unsigned)(s[i] - '0');
        if (nd == 0)
            return -1;
        for (; nd < 3; nd++)
            frac_ms *= 10;
    }
    if (i >= len)
        return -1; /* no zone: SPEC says invalid */
    int64_t off_s = 0;
    if ((s[i] == 'Z' || s[i] == 'z') && i + 1 == len) {
        off_s = 0;
    } else if ((s[i] == '+' || s[i] == '-') && i + 6 == len) {
        unsigned oh, om;
        if (digits(s + i + 1, 2, &oh) || s[i + 3] != ':' || digits(s + i + 4, 2, &om) || oh > 23 ||
            om > 59)
            return -1;
        off_s = (int64_t)oh * 3600 + om * 60;
        if (s[i] == '-')
            off_s = -off_s;
    } else {
        return -1;
    }
    int64_t days = days_from_civil(y, mo, d);
    int64_t secs = days * 86400 + (int64_t)h * 3600 + mi * 60 + sec - off_s;
    *ms = secs * 1000 + frac_ms;
    return 0;
}

void mem_api__ts_format(int64_t ms, char out[32])
{
    int64_t secs = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    int64_t msr = ms - secs * 1000;
    int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
    int64_t sod = secs - days * 86400;
    int64_t y;
    unsigned m, d;
    civil_from_days(days, &y, &m, &d);
    char buf[96];
    int l = snprintf(buf, sizeof(buf), "%04lld-%02u-%02uT%02u:%02u:%02u.%03uZ", (long long)y, m,
                     d, (unsigned)(sod / 3600), (unsigned)(sod % 3600 / 60),
                     (unsigned)(sod % 60), (unsigned)msr);
    if (l < 0 || l > 31)
        l = 0; /* outside years 0..9999: cannot happen for decoded input */
    memcpy(out, buf, (size_t)l);
    out[l] = '\0';
}

/* Year 0001-01-01 .. 9999-12-31 in Unix seconds: the range RFC 3339 can print. */
#define TS_MIN_S (-62135596800.0)
#define TS_MAX_S (253402300799.0)

int mem_api__decode_ts(const json_t *v, const char *field, int64_t *ms, mem_err_t *err)
{
    if (json_is_string(v)) {
        int64_t t;
        if (mem_api__rfc3339_parse(json_string_value(v), json_string_length(v), &t) != 0)
            return mem_err_field(err, MEM_EINVAL, field,
                                 "%s: expected an RFC 3339 timestamp with a zone or offset "
                                 "(\"2026-07-31T09:30:00Z\") or Unix seconds",
                                 field);
        *ms = t;
        return MEM_OK;
    }
    if (json_is_number(v)) {
        double x = json_number_value(v);
        if (!isfinite(x) || x < TS_MIN_S || x > TS_MAX_S)
            return mem_err_field(err, MEM_EINVAL, field,
                                 "%s: Unix seconds out of range (years 1 to 9999)", field);
        /* Truncate to the millisecond; the small bias absorbs binary representation error
         * (1785490200.123 is stored as ...122.99999). */
        *ms = json_is_integer(v) ? (int64_t)json_integer_value(v) * 1000
                                 : (int64_t)floor(x * 1000.0 + 1e-4);
        return MEM_OK;
    }
    return mem_err_field(err, MEM_EINVAL, field,
                         "%s: expected an RFC 3339 timestamp string or Unix seconds", field);
}

#define DUR_MAX_S 1e11 /* about 3000 years */

int mem_api__decode_duration(const json_t *v, const char *field, double *s, mem_err_t *err)
{
    double x;
    if (json_is_number(v)) {
        x = json_number_value(v);
    } else if (json_is_string(v)) {
        const char *str = json_string_value(v);
        size_t len = json_string_length(v);
        size_t i = 0, nd = 0;
        bool dot = false;
        char buf[40];
        for (; i < len && ((str[i] >= '0' && str[i] <= '9') || (str[i] == '.' && !dot)); i++) {
            if (str[i] == '.')
                dot = true;
            else
                nd++;
        }
        if (nd == 0 || i + 1 != len || i >= sizeof(buf))
            return mem_err_field(err, MEM_EINVAL, field,
                                 "%s: expected seconds or a duration like \"90d\", \"36h\", "
                                 "\"15m\", \"30s\", \"2w\"",
                                 field);
        memcpy(buf, str, i);
        buf[i] = '\0';
        double unit;
        switch (str[i]) {
        case 's':
            unit = 1;
            break;
        case 'm':
            unit = 60;
            break;
        case 'h':
            unit = 3600;
            break;
        case 'd':
            unit = 86400;
            break;
        case 'w':
            unit = 7 * 86400;
            break;
        default:
            return mem_err_field(err, MEM_EINVAL, field,
                                 "%s: unknown unit '%c' (use s, m, h, d or w)", field, str[i]);
        }
        x = strtod(buf, NULL) * unit;
    } else {
        return mem_err_field(err, MEM_EINVAL, field,
                             "%s: expected seconds or a duration string like \"90d\"", field);
    }
    if (!isfinite(x) || x < 0 || x > DUR_MAX_S)
        return mem_err_field(err, MEM_EINVAL, field, "%s: must be between 0 and %g seconds", field,
                             DUR_MAX_S);
    *s = x;
    return MEM_OK;
}

/* ---- UUIDv7 (RFC 9562): 48-bit ms, version 7, 74 random bits ---- */

void mem_api__uuid7(int64_t ms, char out[37])
{
    uint8_t b[16];
    size_t got = 0;
    while (got < sizeof(b)) {
        ssize_t r = getrandom(b + got, sizeof(b) - got, 0);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got < sizeof(b)) { /* no entropy source: still unique enough with the clock mixed in */
        uint64_t x = (uint64_t)ms ^ ((uint64_t)(uintptr_t)&got << 16) ^ (uint64_t)clock();
        for (size_t i = got; i < sizeof(b); i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            b[i] = (uint8_t)(x >> 56);
        }
    }
    uint64_t t = ms < 0 ? 0 : (uint64_t)ms & 0xFFFFFFFFFFFFull;
    for (int i = 0; i < 6; i++)
        b[i] = (uint8_t)(t >> (40 - 8 * i));
    b[6] = (uint8_t)(0x70 | (b[6] & 0x0F));
    b[8] = (uint8_t)(0x80 | (b[8] & 0x3F));
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[o++] = '-';
        out[o++] = hex[b[i] >> 4];
        out[o++] = hex[b[i] & 15];
    }
    out[o] = '\0';
}

/* ---- the built-in embedder ---- */

#ifdef HAVE_CORE_EMBED
int mem_api__embed(const char *text, size_t len, float *out, size_t dim)
{
    return mem_embed_text(text, len, out, dim);
}
#else
/* Stand-in until core/embed.c lands: hashed lowercase words and character trigrams,
 * signed, L2-normalised. Deterministic and lexical, like the real one. */
static uint32_t fnv1a(const unsigned char *p, size_t n, uint32_t h)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

static void add_feature(float *out, size_t dim, const unsigned char *p, size_t n, uint32_t seed,
                        float w)
{
    uint32_t h = fnv1a(p, n, seed);
    out[h % dim] += (h & 0x80000000u) ? -w : w;
}

int mem_api__embed(const char *text, size_t len, float *out, size_t dim)
{
    unsigned char word[64];
    size_t wl = 0;
    memset(out, 0, dim * sizeof(float));
    for (size_t i = 0; i <= len; i++) {
        unsigned char c = i < len ? (unsigned char)text[i] : ' ';
        bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                     c >= 0x80;
        if (alnum) {
            if (c >= 'A' && c <= 'Z')
                c = (unsigned char)(c - 'A' + 'a');
            if (wl < sizeof(word))
                word[wl++] = c;
            continue;
        }
        if (wl) {
            add_feature(out, dim, word, wl, 2166136261u, 1.0f);
            unsigned char pad[66];
            pad[0] = '^';
            memcpy(pad + 1, word, wl);
            pad[wl + 1] = '$';
            for (size_t j = 0; j + 3 <= wl + 2; j++)
                add_feature(out, dim, pad + j, 3, 0x9747b28cu, 0.5f);
            wl = 0;
        }
    }
    return mem_vec_normalize(out, dim) == 0 ? MEM_OK : MEM_EINVAL;
}
#endif
