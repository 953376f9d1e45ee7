/* util.c - the request's arena, clocks, timestamps, durations, UUIDv7 and the embedder bridge
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Request timestamps and durations are parsed here, at the JSON boundary: SPEC
 * section 3 accepts RFC 3339 with a zone or offset, or Unix seconds; durations are seconds
 * or a number with one unit (s, m, h, d, w). Parsing works on (ptr, len) slices and never
 * calls the C library's locale- or zone-dependent functions.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "api/api_int.h"
#include "core/embed.h"
#include "core/timefmt.h"

/* ---- the request's arena (core/arena.h) ---- */

void *mem_api__palloc(mem_api__pool_t *pool, size_t size)
{
    return mem_arena_alloc(pool, size);
}

char *mem_api__pstrndup(mem_api__pool_t *pool, const char *s, size_t len)
{
    return mem_arena_strndup(pool, s, len);
}

void mem_api__pool_free(mem_api__pool_t *pool)
{
    mem_arena_free(pool);
}

mem_api__state_t *mem_api__state(mem_api_resp_t *resp)
{
    if (!resp->_state) resp->_state = calloc(1, sizeof(mem_api__state_t));
    return resp->_state;
}

void mem_api__fail_call(mem_api_resp_t *resp, int rc, mem_err_t *err)
{
    if (err->code == MEM_OK) err->code = rc;
    mem_api_error(resp, err);
}

mem_api__state_t *mem_api__handler_begin(const mem_api_ctx_t *ctx, mem_api_resp_t *resp,
                                         const char *ns, mem_store_ns_stats_t *stats, bool *exists)
{
    mem_api__state_t *st = mem_api__state(resp);
    if (!st) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    if (!stats) return st;
    mem_err_t err;
    mem_err_clear(&err);
    bool held = false;
    int rc = st->inline_try ? mem_store_ns_stats_try(ctx->store, ns, stats, &held, &err)
                            : mem_store_ns_stats(ctx->store, ns, stats, &err);
    if (held) { /* a write holds the namespace: the loop does not wait (resp untouched) */
        st->inline_why = MEM_API_INLINE_LOCKED;
        return NULL;
    }
    if (exists) *exists = rc == MEM_OK;
    if (rc == MEM_OK || (exists && rc == MEM_ENOTFOUND)) {
        if (rc != MEM_OK) memset(stats, 0, sizeof(*stats));
        return st;
    }
    mem_api__fail_call(resp, rc, &err);
    return NULL;
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
 * core/timefmt.h is the implementation; these adapt it to the decoders' needs. */

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

/* ---- query strings ---- */

void mem_api__query_init(mem_api__query_t *q, const char *query)
{
    memset(q, 0, sizeof(*q));
    q->p = query ? query : "";
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Percent-decode s[0..len) into out (cap bytes with the NUL): length or -1. A '+' is a
 * space, as in every form-encoded query (what URLSearchParams, Python's urlencode and
 * HTML forms write for one; a '+' itself comes as %2B). */
static long query_decode(const char *s, size_t len, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '+') {
            c = ' ';
        } else if (c == '%') {
            if (i + 2 >= len) return -1;
            int hi = hex_digit(s[i + 1]), lo = hex_digit(s[i + 2]);
            if (hi < 0 || lo < 0) return -1;
            c = (char)(hi * 16 + lo);
            i += 2;
        }
        if (c == '\0' || o + 1 >= cap) return -1;
        out[o++] = c;
    }
    out[o] = '\0';
    return (long)o;
}

int mem_api__query_next(mem_api__query_t *q, mem_err_t *err)
{
    while (*q->p == '&')
        q->p++;
    if (!*q->p) return 0;
    size_t l = strcspn(q->p, "&");
    const char *eq = memchr(q->p, '=', l);
    size_t kl = eq ? (size_t)(eq - q->p) : l;
    long k = query_decode(q->p, kl, q->key, sizeof(q->key));
    if (k <= 0) {
        q->p += l;
        return mem_err_field(err, MEM_EINVAL, "query",
                             "query: a parameter name is empty, too long or badly encoded");
    }
    q->has_val = eq != NULL;
    long v = 0;
    if (eq && (v = query_decode(eq + 1, l - kl - 1, q->val, sizeof(q->val))) < 0) {
        q->p += l;
        return mem_err_field(err, MEM_EINVAL, q->key, "%s: value too long or badly encoded",
                             q->key);
    }
    if (!eq) q->val[0] = '\0';
    q->val_len = (size_t)v;
    q->p += l;
    return 1;
}

/* ---- UUIDv7 (RFC 9562): 48-bit ms, version 7, 74 random bits ---- */

/* Random bytes for the ids a thread makes, from one getrandom per UUID7_POOL of them
 * instead of a system call per id (a single insert's id is made on the event loop). Each
 * byte is used once and then cleared, so ids stay as unpredictable as getrandom's output. */
#define UUID7_POOL 512
static _Thread_local struct {
    uint8_t b[UUID7_POOL];
    size_t used; /* bytes of b already handed out (UUID7_POOL: empty) */
} uuid7_rand = {.used = UUID7_POOL};

/* n bytes (n <= UUID7_POOL) of getrandom output into out; false when the kernel gives none. */
static bool uuid7_random(uint8_t *out, size_t n)
{
    if (uuid7_rand.used + n > UUID7_POOL) {
        size_t got = 0;
        while (got < UUID7_POOL) {
            ssize_t r = getrandom(uuid7_rand.b + got, UUID7_POOL - got, 0);
            /* over 256 bytes a signal may interrupt it (and before the pool is ready any
             * call): asked again, never the clock-mixed fallback */
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += (size_t)r;
        }
        if (got < UUID7_POOL) return false; /* still empty: the next id asks again */
        uuid7_rand.used = 0;
    }
    memcpy(out, uuid7_rand.b + uuid7_rand.used, n);
    memset(uuid7_rand.b + uuid7_rand.used, 0, n);
    uuid7_rand.used += n;
    return true;
}

void mem_api__uuid7(int64_t ms, char out[37])
{
    uint8_t b[16];
    /* the first 6 bytes are the clock's; without an entropy source the random ones are still
     * unique enough with the clock mixed in */
    if (!uuid7_random(b + 6, 10)) {
        uint64_t x = (uint64_t)ms ^ ((uint64_t)(uintptr_t)b << 16) ^ (uint64_t)clock();
        for (size_t i = 0; i < sizeof(b); i++) {
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

int mem_api__embed(const char *text, size_t len, float *out, size_t dim)
{
    return mem_embed_text(text, len, out, dim, NULL);
}

const char *mem_api__embedder_id(const mem_api_ctx_t *ctx)
{
    return ctx->embedder_id ? ctx->embedder_id : MEM_EMBED_NAME;
}

size_t mem_api__embedder_dim(const mem_api_ctx_t *ctx)
{
    if (!ctx->embedder_remote) return ctx->cfg->embed_dim;
    return ctx->embedder_dim ? ctx->embedder_dim(ctx->embedder_ud) : 0;
}

mem_api__text_match_t mem_api__text_match(const mem_api_ctx_t *ctx, const mem_store_ns_stats_t *s)
{
    mem_api__vec_kind_t kind = mem_api__ns_vec_kind(s);
    mem_api__text_match_t m;
    /* measured on the development set: docs/retrieval.md */
    switch (ctx->cfg->match) {
    case MEM_CFG_MATCH_VECTOR:
        m.match = MEM_SCAN_MATCH_VECTOR;
        break;
    case MEM_CFG_MATCH_TEXT:
        m.match = MEM_SCAN_MATCH_TEXT;
        break;
    case MEM_CFG_MATCH_HYBRID:
        m.match = MEM_SCAN_MATCH_HYBRID;
        break;
    default: /* client vectors were not made from text: their cosine to an embedded query
                means nothing */
        m.match = kind == MEM_API_VEC_CLIENT ? MEM_SCAN_MATCH_TEXT : MEM_SCAN_MATCH_HYBRID;
    }
    m.text_weight = ctx->cfg->text_weight >= 0.0   ? ctx->cfg->text_weight
                    : kind == MEM_API_VEC_PROVIDER ? MEM_SCAN_TEXT_WEIGHT_SEMANTIC
                                                   : MEM_SCAN_TEXT_WEIGHT_BUILTIN;
    return m;
}

mem_api__vec_kind_t mem_api__ns_vec_kind(const mem_store_ns_stats_t *s)
{
    if (!s->embedder[0]) return MEM_API_VEC_CLIENT;
    if (strncmp(s->embedder, "builtin", 7) == 0) return MEM_API_VEC_BUILTIN;
    return MEM_API_VEC_PROVIDER;
}

int mem_api__embedder_match(const mem_api_ctx_t *ctx, const mem_store_ns_stats_t *s,
                            const char *field, mem_err_t *err)
{
    const char *id = mem_api__embedder_id(ctx);
    if (s && s->embedder[0] && strcmp(s->embedder, id) != 0)
        return mem_err_field(err, MEM_EMISMATCH, field,
                             "namespace %s holds vectors made by %.100s; text cannot be embedded "
                             "for it with %.100s (send an embedding)",
                             s->name, s->embedder, id);
    return MEM_OK;
}

int mem_api__embed_check(const mem_api_ctx_t *ctx, const mem_store_ns_stats_t *s, const char *field,
                         mem_err_t *err)
{
    const char *id = mem_api__embedder_id(ctx);
    size_t edim = mem_api__embedder_dim(ctx);
    if (!s) return MEM_OK;
    int rc = mem_api__embedder_match(ctx, s, field, err);
    if (rc != MEM_OK) return rc;
    if (edim && s->dim != edim)
        return mem_err_field(err, MEM_EDIM, field,
                             "%s: the embedder (%.100s) makes %zu floats but the namespace has "
                             "dim %zu; send an embedding",
                             field, id, edim, s->dim);
    return MEM_OK;
}
