/* util.c - request pool, clocks, timestamps, durations, UUIDv7 and the embedder bridge
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Request timestamps and durations are parsed here, at the JSON boundary: SPEC
 * section 3 accepts RFC 3339 with a zone or offset, or Unix seconds; durations are seconds
 * or a number with one unit (s, m, h, d, w). Parsing works on (ptr, len) slices and never
 * calls the C library's locale- or zone-dependent functions.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "api/api_int.h"

#if defined(__has_include)
#if __has_include("core/embed.h")
#include "core/embed.h"
#define HAVE_CORE_EMBED 1
#endif
#if __has_include("core/timefmt.h")
#include "core/timefmt.h"
#define HAVE_CORE_TIMEFMT 1
#endif
#endif

/* ---- pool ---- */

typedef struct pool_block {
    struct pool_block *next;
    max_align_t _align[]; /* payload follows */
} pool_block_t;

void *mem_api__palloc(mem_api__pool_t *pool, size_t size)
{
    if (size > SIZE_MAX - sizeof(pool_block_t)) return NULL;
    pool_block_t *b = calloc(1, sizeof(pool_block_t) + (size ? size : 1));
    if (!b) return NULL;
    b->next = pool->head;
    pool->head = b;
    return b->_align;
}

char *mem_api__pstrndup(mem_api__pool_t *pool, const char *s, size_t len)
{
    if (len == SIZE_MAX) return NULL;
    char *p = mem_api__palloc(pool, len + 1);
    if (p && len) memcpy(p, s, len);
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
    if (!resp->_state) resp->_state = calloc(1, sizeof(mem_api__state_t));
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
    if (ms < 0) ms = 0;
    return round(ms * 1000.0) / 1000.0;
}

/* ---- timestamps and durations ----
 * core/timefmt.h (config helper) is the implementation; until it is in the tree, a local
 * copy with the same rules is compiled instead. */

#ifdef HAVE_CORE_TIMEFMT
static int ts_parse(const char *s, size_t len, const char *field, int64_t *ms, mem_err_t *err)
{
    return mem_time_parse_rfc3339(s, len, field, ms, err);
}

static int ts_from_unix(double secs, const char *field, int64_t *ms, mem_err_t *err)
{
    return mem_time_from_unix_s(secs, field, ms, err);
}

void mem_api__ts_format(int64_t ms, char out[32])
{
    mem_time_format_rfc3339(ms, out, 32);
}

static int dur_parse(const char *s, size_t len, const char *field, double *out, mem_err_t *err)
{
    return mem_time_parse_duration(s, len, 1.0, field, out, err);
}

static int dur_check(double x, const char *field, double *out, mem_err_t *err)
{
    return mem_time_check_duration_s(x, field, out, err);
}

int mem_api__rfc3339_parse(const char *s, size_t len, int64_t *ms)
{
    return mem_time_parse_rfc3339(s, len, NULL, ms, NULL) == MEM_OK ? 0 : -1;
}
#else
#define TIME_MIN_MS    (-62167219200000LL) /* 0000-01-01T00:00:00.000Z */
#define TIME_MAX_MS    253402300799999LL   /* 9999-12-31T23:59:59.999Z */
#define MAX_DURATION_S 315576000000.0

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
        if (s[i] < '0' || s[i] > '9') return -1;
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
        digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') || digits(s + 11, 2, &h) ||
        s[13] != ':' || digits(s + 14, 2, &mi) || s[16] != ':' || digits(s + 17, 2, &sec))
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 59)
        return -1;
    size_t i = 19;
    if (s[i] == '.') {
        size_t nd = 0;
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, nd++)
            if (nd < 3) frac_ms = frac_ms * 10 + (unsigned)(s[i] - '0');
        if (nd == 0) return -1;
        for (; nd < 3; nd++)
            frac_ms *= 10;
    }
    if (i >= len) return -1; /* no zone: SPEC says invalid */
    int64_t off_s = 0;
    if ((s[i] == 'Z' || s[i] == 'z') && i + 1 == len) {
        off_s = 0;
    } else if ((s[i] == '+' || s[i] == '-') && i + 6 == len) {
        unsigned oh, om;
        if (digits(s + i + 1, 2, &oh) || s[i + 3] != ':' || digits(s + i + 4, 2, &om) || oh > 23 ||
            om > 59)
            return -1;
        off_s = (int64_t)oh * 3600 + om * 60;
        if (s[i] == '-') off_s = -off_s;
    } else {
        return -1;
    }
    int64_t days = days_from_civil(y, mo, d);
    int64_t t = (days * 86400 + (int64_t)h * 3600 + mi * 60 + sec - off_s) * 1000 + frac_ms;
    if (t < TIME_MIN_MS || t > TIME_MAX_MS) return -1;
    *ms = t;
    return 0;
}

static int ts_parse(const char *s, size_t len, const char *field, int64_t *ms, mem_err_t *err)
{
    if (mem_api__rfc3339_parse(s, len, ms) != 0)
        return mem_err_field(err, MEM_EINVAL, field,
                             "%s: expected an RFC 3339 timestamp with a zone or offset", field);
    return MEM_OK;
}

static int ts_from_unix(double secs, const char *field, int64_t *ms, mem_err_t *err)
{
    if (!isfinite(secs) || secs * 1000.0 < (double)TIME_MIN_MS ||
        secs * 1000.0 > (double)TIME_MAX_MS)
        return mem_err_field(err, MEM_EINVAL, field, "%s: Unix seconds out of range", field);
    double us = round(secs * 1e6);
    *ms = (int64_t)floor(us / 1000.0);
    return MEM_OK;
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
    int l = snprintf(buf, sizeof(buf), "%04lld-%02u-%02uT%02u:%02u:%02u.%03uZ", (long long)y, m, d,
                     (unsigned)(sod / 3600), (unsigned)(sod % 3600 / 60), (unsigned)(sod % 60),
                     (unsigned)msr);
    if (l < 0 || l > 31 || ms < TIME_MIN_MS || ms > TIME_MAX_MS) l = 0;
    memcpy(out, buf, (size_t)l);
    out[l] = '\0';
}

static int dur_check(double x, const char *field, double *out, mem_err_t *err)
{
    if (!isfinite(x) || x < 0 || x > MAX_DURATION_S)
        return mem_err_field(err, MEM_EINVAL, field, "%s: must be between 0 and %g seconds", field,
                             MAX_DURATION_S);
    *out = x;
    return MEM_OK;
}

static int dur_parse(const char *str, size_t len, const char *field, double *out, mem_err_t *err)
{
    size_t i = 0, nd = 0;
    bool dot = false;
    char buf[40];
    for (; i < len && ((str[i] >= '0' && str[i] <= '9') || (str[i] == '.' && !dot)); i++) {
        if (str[i] == '.')
            dot = true;
        else
            nd++;
    }
    if (nd == 0 || i >= sizeof(buf)) goto bad;
    memcpy(buf, str, i);
    buf[i] = '\0';
    size_t u = i;
    while (u < len && str[u] == ' ')
        u++;
    double unit;
    size_t ul = len - u;
    const char *us = str + u;
    if (ul == 0 && u == i)
        unit = 1;
    else if (ul == 2 && memcmp(us, "ms", 2) == 0)
        unit = 0.001;
    else if (ul == 1 && *us == 's')
        unit = 1;
    else if (ul == 1 && *us == 'm')
        unit = 60;
    else if (ul == 1 && *us == 'h')
        unit = 3600;
    else if (ul == 1 && *us == 'd')
        unit = 86400;
    else if (ul == 1 && *us == 'w')
        unit = 7 * 86400;
    else
        goto bad;
    return dur_check(strtod(buf, NULL) * unit, field, out, err);
bad:
    return mem_err_field(err, MEM_EINVAL, field,
                         "%s: expected seconds or a duration like \"90d\", \"36h\", \"15m\", "
                         "\"30s\", \"2w\"",
                         field);
}
#endif

int mem_api__decode_ts(const json_t *v, const char *field, int64_t *ms, mem_err_t *err)
{
    if (json_is_string(v))
        return ts_parse(json_string_value(v), json_string_length(v), field, ms, err);
    if (json_is_integer(v)) {
        json_int_t x = json_integer_value(v);
        if (x < -62167219200LL || x > 253402300799LL)
            return mem_err_field(err, MEM_EINVAL, field, "%s: Unix seconds out of range", field);
        *ms = (int64_t)x * 1000;
        return MEM_OK;
    }
    if (json_is_real(v)) return ts_from_unix(json_real_value(v), field, ms, err);
    return mem_err_field(err, MEM_EINVAL, field,
                         "%s: expected an RFC 3339 timestamp string or Unix seconds", field);
}

int mem_api__decode_duration(const json_t *v, const char *field, double *s, mem_err_t *err)
{
    if (json_is_number(v)) return dur_check(json_number_value(v), field, s, err);
    if (json_is_string(v))
        return dur_parse(json_string_value(v), json_string_length(v), field, s, err);
    return mem_err_field(err, MEM_EINVAL, field,
                         "%s: expected seconds or a duration string like \"90d\"", field);
}

/* ---- UUIDv7 (RFC 9562): 48-bit ms, version 7, 74 random bits ---- */

void mem_api__uuid7(int64_t ms, char out[37])
{
    uint8_t b[16];
    size_t got = 0;
    while (got < sizeof(b)) {
        ssize_t r = getrandom(b + got, sizeof(b) - got, 0);
        if (r <= 0) break;
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
        if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
        out[o++] = hex[b[i] >> 4];
        out[o++] = hex[b[i] & 15];
    }
    out[o] = '\0';
}

/* ---- the built-in embedder ---- */

#ifdef HAVE_CORE_EMBED
int mem_api__embed(const char *text, size_t len, float *out, size_t dim)
{
    return mem_embed_text(text, len, out, dim, NULL);
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
        bool alnum =
            (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
        if (alnum) {
            if (c >= 'A' && c <= 'Z') c = (unsigned char)(c - 'A' + 'a');
            if (wl < sizeof(word)) word[wl++] = c;
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
