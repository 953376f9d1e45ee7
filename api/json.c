/* json.c - JSON text <-> json_t for request and response bodies, numbers without a json_t each
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. jansson's parser allocates a json_t per number and reads each through strtod:
 * for a 384-float embedding that is most of a request's cost. This reader accepts and
 * refuses exactly what json_loadb(JSON_REJECT_DUPLICATES) does (the fuzz target
 * tests/fuzz/fuzz_json.c compares the two) and builds the same tree, except that an array
 * of numbers standing where the caller says an embedding goes ("embedding",
 * "segments[].embedding", ...) is parsed straight into float32 (correctly rounded, one
 * step, core/num.h) and kept as one vector node: a jansson string holding a tag that no
 * JSON string can contain (its first byte is NUL, which both this reader and jansson
 * refuse in strings) and the floats. Anything else at such a place (an empty array, a
 * non-number, a value beyond float32, more than MEM_API_MAX_DIM elements) is parsed as
 * plain JSON, so decoders report it as before.
 *
 * The writer is the other half: compact JSON in insertion order, strings escaped as
 * jansson escapes them, reals written once as their shortest round-trip decimal
 * (core/num.h), vector nodes as arrays of shortest float32 decimals.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "core/jstr.h"
#include "core/num.h"

/* jansson's JSON_PARSER_MAX_DEPTH, counted as it counts (every value, leaves too), so the
 * same bodies are refused. */
#define JSON_MAX_DEPTH 2048
/* Levels of the path kept for matching embedding places (patterns are shallower). */
#define PATH_DEPTH 8

static const char VEC_TAG[4] = {'\0', 'f', '3', '2'};
_Static_assert(sizeof(VEC_TAG) == sizeof(float), "the tag takes one float's room");

/* ---- vector nodes ---- */

json_t *mem_api__vec_node(const float *v, size_t n)
{
    size_t len = sizeof(VEC_TAG) + n * sizeof(float);
    char stack[sizeof(VEC_TAG) + 64 * sizeof(float)];
    char *buf = len <= sizeof(stack) ? stack : malloc(len);
    if (!buf) return NULL;
    memcpy(buf, VEC_TAG, sizeof(VEC_TAG));
    if (n) memcpy(buf + sizeof(VEC_TAG), v, n * sizeof(float));
    json_t *j = json_stringn_nocheck(buf, len);
    if (buf != stack) free(buf);
    return j;
}

bool mem_api__vec_node_get(const json_t *j, float *dst, size_t *n)
{
    if (!json_is_string(j)) return false;
    size_t len = json_string_length(j);
    const char *s = json_string_value(j);
    if (len < sizeof(VEC_TAG) || (len - sizeof(VEC_TAG)) % sizeof(float) ||
        memcmp(s, VEC_TAG, sizeof(VEC_TAG)) != 0)
        return false;
    *n = (len - sizeof(VEC_TAG)) / sizeof(float);
    if (dst && *n) memcpy(dst, s + sizeof(VEC_TAG), *n * sizeof(float));
    return true;
}

/* ---- reader ---- */

/* A parsed string: in the input (no escapes) or at an offset of the scratch buffer (which
 * may move while later strings are parsed). */
typedef struct str {
    const char *in;
    size_t off, len;
} str_t;

typedef struct level {
    bool is_index;
    str_t key;
} level_t;

typedef struct rd {
    const char *s, *p, *end;
    const char *const *vec_paths;
    level_t path[PATH_DEPTH]; /* the place of the value being parsed */
    int path_n;               /* may exceed PATH_DEPTH: deeper levels are not kept */
    char *buf;                /* unescaped strings; keys stay reserved until their value ends */
    size_t buf_n, buf_cap;
    float *vec; /* vec[0] holds VEC_TAG, then up to MEM_API_MAX_DIM floats: a node's bytes */
    const char *err_at, *err_msg;
    bool oom;
} rd_t;

static const char *str_ptr(const rd_t *r, const str_t *s)
{
    return s->in ? s->in : r->buf + s->off;
}

static int fail(rd_t *r, const char *at, const char *msg)
{
    r->err_at = at;
    r->err_msg = msg;
    return MEM_EJSON;
}

static int oom(rd_t *r)
{
    r->oom = true;
    return MEM_ENOMEM;
}

#define HOT_WS static inline __attribute__((always_inline))

HOT_WS const char *ws_end(const char *p, const char *end);

static void skip_ws(rd_t *r)
{
    r->p = ws_end(r->p, r->end);
}

static bool buf_reserve(rd_t *r, size_t more)
{
    if (r->buf_n + more <= r->buf_cap) return true;
    size_t cap = r->buf_cap ? r->buf_cap : 256;
    while (cap < r->buf_n + more)
        cap *= 2;
    char *b = realloc(r->buf, cap);
    if (!b) return false;
    r->buf = b;
    r->buf_cap = cap;
    return true;
}

/* Length of the valid UTF-8 sequence at p (first byte >= 0x80), 0 if invalid: no
 * overlongs, no surrogates, nothing above U+10FFFF. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0], v;
    size_t n;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2, v = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, v = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, v = c & 0x07;
    else
        return 0;
    if ((size_t)(end - p) < n) return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (p[i] & 0x3F);
    }
    if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    if ((n == 3 && v < 0x800) || (n == 4 && v < 0x10000)) return 0;
    return n;
}

/* The string at r->p (at its '"'). Escaped strings are unescaped into the scratch buffer
 * at its end; the caller releases that space by resetting r->buf_n. */
static int parse_string(rd_t *r, str_t *out)
{
    const char *start = r->p + 1, *p = start, *end = r->end;
    while (p < end) { /* the common case: plain ASCII, no escapes */
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
        p++;
    }
    if (p < end && *p == '"') {
        *out = (str_t){start, 0, (size_t)(p - start)};
        r->p = p + 1;
        return MEM_OK;
    }
    /* general case: copy what was scanned, then go on byte by byte */
    size_t off = r->buf_n, n = (size_t)(p - start);
    /* unescaping never makes a string longer than its JSON text (+1: never a NULL buffer) */
    if (!buf_reserve(r, (size_t)(end - start) + 1)) return oom(r);
    char *o = r->buf + off;
    memcpy(o, start, n);
    for (;;) {
        if (p >= end) return fail(r, p, "premature end of input in a string");
        unsigned char c = (unsigned char)*p;
        if (c == '"') break;
        if (c < 0x20) return fail(r, p, "control character in a string");
        if (c >= 0x80) {
            size_t l = utf8_len((const unsigned char *)p, (const unsigned char *)end);
            if (!l) return fail(r, p, "invalid UTF-8 in a string");
            memcpy(o + n, p, l);
            n += l;
            p += l;
            continue;
        }
        if (c != '\\') {
            o[n++] = (char)c;
            p++;
            continue;
        }
        if (p + 1 >= end) return fail(r, p, "premature end of input in a string");
        mem_jstr_bad_t why;
        size_t w, used = mem_jstr_unescape(p, end, o + n, &w, &why);
        if (!used)
            return fail(r, p,
                        why == MEM_JSTR_SURROGATE ? "invalid Unicode escape (unpaired surrogate)"
                        : why == MEM_JSTR_NUL     ? "\\u0000 is not allowed"
                                                  : "invalid escape");
        p += used;
        n += w;
    }
    r->p = p + 1;
    r->buf_n = off + n;
    *out = (str_t){NULL, off, n};
    return MEM_OK;
}

/* Does the place being parsed match one of the embedding patterns? A pattern is keys
 * separated by '.', "[]" for any array index: "segments[].embedding", "context[]". */
static bool at_vec_place(const rd_t *r)
{
    if (!r->vec_paths || r->path_n > PATH_DEPTH) return false;
    for (const char *const *pat = r->vec_paths; *pat; pat++) {
        const char *q = *pat;
        int i = 0;
        for (; i < r->path_n && *q; i++) {
            const level_t *lv = &r->path[i];
            if (lv->is_index) {
                if (q[0] != '[' || q[1] != ']') break;
                q += 2;
            } else {
                if (*q == '.') q++;
                size_t l = strcspn(q, ".[");
                if (l != lv->key.len || memcmp(q, str_ptr(r, &lv->key), l) != 0) break;
                q += l;
            }
        }
        if (i == r->path_n && !*q) return true;
    }
    return false;
}

/* An integer token (no '.', no exponent) that jansson would refuse as too big for
 * json_int_t: such a body is invalid JSON even where a float32 could hold the value. Only
 * a token of 19 digits or more can be one; a real shows its '.' or 'e' early (an integer
 * part of 19 digits is rare), so most tokens are settled by their first bytes. */
static bool too_big_integer(const char *p, size_t len)
{
    bool neg = *p == '-';
    size_t digits = len - neg;
    if (digits < 19) return false;
    const char *d = p + neg;
    for (size_t i = 0; i < digits; i++)
        if (d[i] < '0' || d[i] > '9') return false; /* '.', 'e' or 'E': a real */
    if (digits > 19) return true;
    return memcmp(d, neg ? "9223372036854775808" : "9223372036854775807", 19) > 0;
}

HOT_WS const char *ws_end(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

/* Does a list that mem_num_parse_f32_list read hold an integer jansson would refuse? */
static bool list_has_too_big_integer(const char *p, const char *end)
{
    for (;;) {
        float f;
        size_t used;
        if (mem_num_parse_f32(p, (size_t)(end - p), &f, &used) != MEM_OK) return false;
        if (too_big_integer(p, used)) return true;
        p = ws_end(p + used, end);
        if (p == end || *p != ',') return false;
        p = ws_end(p + 1, end);
    }
}

/* At '[' of an embedding place: 1..MAX_DIM numbers that fit a float32 become a vector
 * node. false (r->p unchanged) for anything else, which the caller parses as JSON. */
static bool try_vec(rd_t *r, int depth, json_t **out)
{
    if (depth + 1 > JSON_MAX_DEPTH) return false;
    const char *p = ws_end(r->p + 1, r->end), *end = r->end;
    if (p < end && *p == ']') return false;
    size_t n, used;
    bool long_integer;
    if (mem_num_parse_f32_list(p, (size_t)(end - p), r->vec + 1, MEM_API_MAX_DIM, &n, &used,
                               &long_integer) != MEM_OK ||
        p + used == end || p[used] != ']' || (long_integer && list_has_too_big_integer(p, end)))
        return false;
    if (!(*out = json_stringn_nocheck((const char *)r->vec, (1 + n) * sizeof(float)))) {
        r->oom = true;
        return false;
    }
    r->p = p + used + 1;
    return true;
}

static int parse_value(rd_t *r, int depth, json_t **out);

static int parse_array(rd_t *r, int depth, json_t **out)
{
    if (at_vec_place(r) && try_vec(r, depth, out)) return MEM_OK;
    if (r->oom) return MEM_ENOMEM;
    json_t *arr = json_array();
    if (!arr) return oom(r);
    r->p++;
    skip_ws(r);
    int rc = MEM_OK;
    if (r->p < r->end && *r->p == ']') {
        r->p++;
        *out = arr;
        return MEM_OK;
    }
    for (;;) {
        json_t *v = NULL;
        if (r->path_n < PATH_DEPTH) r->path[r->path_n] = (level_t){true, {NULL, 0, 0}};
        r->path_n++;
        rc = parse_value(r, depth + 1, &v);
        r->path_n--;
        if (rc != MEM_OK) goto out;
        if (json_array_append_new(arr, v)) {
            rc = oom(r);
            goto out;
        }
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            skip_ws(r);
            continue;
        }
        if (r->p < r->end && *r->p == ']') {
            r->p++;
            break;
        }
        rc = fail(r, r->p, "']' expected");
        goto out;
    }
out:
    if (rc != MEM_OK) {
        json_decref(arr);
        return rc;
    }
    *out = arr;
    return MEM_OK;
}

static int parse_object(rd_t *r, int depth, json_t **out)
{
    json_t *obj = json_object();
    if (!obj) return oom(r);
    int rc = MEM_OK;
    r->p++;
    skip_ws(r);
    if (r->p < r->end && *r->p == '}') {
        r->p++;
        *out = obj;
        return MEM_OK;
    }
    for (;;) {
        if (r->p >= r->end || *r->p != '"') {
            rc = fail(r, r->p, "string or '}' expected");
            goto out;
        }
        size_t mark = r->buf_n;
        str_t key;
        const char *key_at = r->p;
        if ((rc = parse_string(r, &key)) != MEM_OK) goto out;
        skip_ws(r);
        if (r->p >= r->end || *r->p != ':') {
            rc = fail(r, r->p, "':' expected");
            goto out;
        }
        r->p++;
        skip_ws(r);
        json_t *v = NULL;
        if (r->path_n < PATH_DEPTH) r->path[r->path_n] = (level_t){false, key};
        r->path_n++;
        rc = parse_value(r, depth + 1, &v);
        r->path_n--;
        if (rc != MEM_OK) goto out;
        const char *k = str_ptr(r, &key);
        if (json_object_getn(obj, k, key.len)) {
            json_decref(v);
            rc = fail(r, key_at, "duplicate object key");
            goto out;
        }
        if (json_object_setn_new_nocheck(obj, k, key.len, v)) {
            rc = oom(r);
            goto out;
        }
        r->buf_n = mark;
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            skip_ws(r);
            continue;
        }
        if (r->p < r->end && *r->p == '}') {
            r->p++;
            break;
        }
        rc = fail(r, r->p, "'}' expected");
        goto out;
    }
out:
    if (rc != MEM_OK) {
        json_decref(obj);
        return rc;
    }
    *out = obj;
    return MEM_OK;
}

static int parse_number(rd_t *r, json_t **out)
{
    const char *p = r->p;
    double d;
    size_t used;
    int rc = mem_num_parse_f64(p, (size_t)(r->end - p), &d, &used); /* used: also on ELIMIT */
    if (rc == MEM_EINVAL) return fail(r, p, "invalid number");
    bool integral = !memchr(p, '.', used) && !memchr(p, 'e', used) && !memchr(p, 'E', used);
    if (integral) { /* jansson keeps integers as json_int_t and refuses what does not fit */
        bool neg = *p == '-';
        uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        for (size_t i = neg; i < used; i++) {
            unsigned dig = (unsigned)(p[i] - '0');
            if (v > (limit - dig) / 10) return fail(r, p, "too big integer");
            v = v * 10 + dig;
        }
        int64_t x = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
        *out = json_integer((json_int_t)x);
    } else {
        if (rc == MEM_ELIMIT) return fail(r, p, "real number overflow");
        *out = json_real(d);
    }
    if (!*out) return oom(r);
    r->p = p + used;
    return MEM_OK;
}

static bool literal(rd_t *r, const char *word, size_t len)
{
    if ((size_t)(r->end - r->p) < len || memcmp(r->p, word, len) != 0) return false;
    r->p += len;
    return true;
}

static int parse_value(rd_t *r, int depth, json_t **out)
{
    if (depth > JSON_MAX_DEPTH) return fail(r, r->p, "maximum parsing depth reached");
    if (r->p >= r->end) return fail(r, r->p, "premature end of input");
    switch (*r->p) {
    case '{':
        return parse_object(r, depth, out);
    case '[':
        return parse_array(r, depth, out);
    case '"': {
        size_t mark = r->buf_n;
        str_t s;
        int rc = parse_string(r, &s);
        if (rc != MEM_OK) return rc;
        *out = json_stringn_nocheck(str_ptr(r, &s), s.len);
        r->buf_n = mark;
        return *out ? MEM_OK : oom(r);
    }
    case 't':
        if (!literal(r, "true", 4)) break;
        *out = json_true();
        return MEM_OK;
    case 'f':
        if (!literal(r, "false", 5)) break;
        *out = json_false();
        return MEM_OK;
    case 'n':
        if (!literal(r, "null", 4)) break;
        *out = json_null();
        return MEM_OK;
    default:
        if (*r->p == '-' || (*r->p >= '0' && *r->p <= '9')) return parse_number(r, out);
        break;
    }
    return fail(r, r->p, "invalid token");
}

int mem_api__json_parse(const char *text, size_t len, const char *const *vec_paths,
                        const char *what, json_t **out, mem_err_t *err)
{
    rd_t r;
    memset(&r, 0, sizeof(r));
    r.s = r.p = text ? text : "";
    r.end = r.s + (text ? len : 0);
    r.vec_paths = vec_paths;
    json_t *root = NULL;
    int rc;
    float vec[1 + MEM_API_MAX_DIM]; /* 16 KiB of stack: no allocation per embedding */
    memcpy(vec, VEC_TAG, sizeof(VEC_TAG));
    r.vec = vec;
    skip_ws(&r);
    if (r.p >= r.end || (*r.p != '{' && *r.p != '[')) {
        rc = fail(&r, r.p,
                  r.p >= r.end ? "empty input, '[' or '{' expected" : "'[' or '{' expected");
        goto out;
    }
    if ((rc = parse_value(&r, 1, &root)) != MEM_OK) goto out;
    skip_ws(&r);
    if (r.p != r.end) {
        json_decref(root);
        root = NULL;
        rc = fail(&r, r.p, "end of file expected");
    }
out:
    free(r.buf);
    if (rc == MEM_ENOMEM) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    if (rc != MEM_OK) {
        int line = 1, col = 1;
        for (const char *p = r.s; p < r.err_at; p++) {
            if (*p == '\n') {
                line++;
                col = 1;
            } else if (((unsigned char)*p & 0xC0) != 0x80) {
                col++;
            }
        }
        return mem_err_set(err, MEM_EJSON, "%s%sinvalid JSON at line %d column %d: %s",
                           what ? what : "", what ? ": " : "", line, col, r.err_msg);
    }
    *out = root;
    return MEM_OK;
}

/* ---- writer ---- */

typedef mem_api__jw_t wr_t; /* oom: an allocation failed, or a value could not be written */

static bool w_room(wr_t *w, size_t more)
{
    if (w->oom) return false;
    if (w->n + more <= w->cap) return true;
    size_t cap = w->cap ? w->cap : 1024;
    while (cap < w->n + more)
        cap *= 2;
    char *b = realloc(w->b, cap);
    if (!b) {
        w->oom = true;
        return false;
    }
    w->b = b;
    w->cap = cap;
    return true;
}

static void w_put(wr_t *w, const char *s, size_t n)
{
    if (!w_room(w, n)) return;
    memcpy(w->b + w->n, s, n);
    w->n += n;
}

static void w_char(wr_t *w, char c)
{
    if (!w_room(w, 1)) return;
    w->b[w->n++] = c;
}

/* A string as jansson writes it: '"', '\\' and control characters escaped (\b \f \n \r
 * \t, else \u00XX), everything else (UTF-8, '/') as it is. */
static void w_string(wr_t *w, const char *s, size_t len)
{
    if (!w_room(w, len + 2)) return;
    w->b[w->n++] = '"';
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        w_put(w, s + run, i - run);
        run = i + 1;
        char esc[8];
        const char *e = esc;
        size_t el = 2;
        switch (c) {
        case '"':
            e = "\\\"";
            break;
        case '\\':
            e = "\\\\";
            break;
        case '\b':
            e = "\\b";
            break;
        case '\f':
            e = "\\f";
            break;
        case '\n':
            e = "\\n";
            break;
        case '\r':
            e = "\\r";
            break;
        case '\t':
            e = "\\t";
            break;
        default:
            snprintf(esc, sizeof(esc), "\\u%04X", c);
            el = 6;
        }
        w_put(w, e, el);
    }
    w_put(w, s + run, len - run);
    w_char(w, '"');
}

/* v in decimal into out (room for 20 digits and the sign); returns the length. */
static size_t fmt_i64(int64_t v, char *out)
{
    char tmp[24];
    size_t n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t len = 0;
    if (v < 0) out[len++] = '-';
    while (n)
        out[len++] = tmp[--n];
    return len;
}

static void w_vec(wr_t *w, const char *bytes, size_t n)
{
    if (!w_room(w, 2 + n * MEM_NUM_FMT_MAX)) return;
    char *o = w->b + w->n;
    *o++ = '[';
    for (size_t i = 0; i < n; i++) {
        float f;
        memcpy(&f, bytes + i * sizeof(float), sizeof(f));
        if (i) *o++ = ',';
        o += mem_num_fmt_f32(f, o);
    }
    *o++ = ']';
    w->n = (size_t)(o - w->b);
}

static void w_value(wr_t *w, const json_t *j)
{
    char num[MEM_NUM_FMT_MAX];
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        w_char(w, '{');
        bool first = true;
        for (void *it = json_object_iter((json_t *)j); it;
             it = json_object_iter_next((json_t *)j, it)) {
            if (!first) w_char(w, ',');
            first = false;
            w_string(w, json_object_iter_key(it), json_object_iter_key_len(it));
            w_char(w, ':');
            w_value(w, json_object_iter_value(it));
        }
        w_char(w, '}');
        break;
    }
    case JSON_ARRAY: {
        w_char(w, '[');
        for (size_t i = 0; i < json_array_size(j); i++) {
            if (i) w_char(w, ',');
            w_value(w, json_array_get(j, i));
        }
        w_char(w, ']');
        break;
    }
    case JSON_STRING: {
        const char *s = json_string_value(j);
        size_t len = json_string_length(j);
        if (len >= sizeof(VEC_TAG) && (len - sizeof(VEC_TAG)) % sizeof(float) == 0 &&
            memcmp(s, VEC_TAG, sizeof(VEC_TAG)) == 0)
            w_vec(w, s + sizeof(VEC_TAG), (len - sizeof(VEC_TAG)) / sizeof(float));
        else
            w_string(w, s, len);
        break;
    }
    case JSON_INTEGER:
        w_put(w, num, fmt_i64((int64_t)json_integer_value(j), num));
        break;
    case JSON_REAL:
        w_put(w, num, mem_num_fmt_f64(json_real_value(j), num));
        break;
    case JSON_TRUE:
        w_put(w, "true", 4);
        break;
    case JSON_FALSE:
        w_put(w, "false", 5);
        break;
    case JSON_NULL:
        w_put(w, "null", 4);
        break;
    }
}

char *mem_api__dump(const json_t *j)
{
    wr_t w = {NULL, 0, 0, false};
    if (j) w_value(&w, j);
    w_char(&w, '\0');
    if (w.oom) {
        free(w.b);
        return NULL;
    }
    return w.b;
}

/* ---- the writer for answers built without a json_t tree ---- */

void mem_api__jw_raw(mem_api__jw_t *w, const char *s, size_t len)
{
    w_put(w, s, len);
}

/* Text read back from storage is untrusted: like json_string, refuse what is not UTF-8. */
void mem_api__jw_str(mem_api__jw_t *w, const char *s)
{
    if (!s) {
        w->oom = true;
        return;
    }
    size_t len = strlen(s);
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        if (*p < 0x80) {
            p++;
            continue;
        }
        size_t l = utf8_len(p, end);
        if (!l) {
            w->oom = true;
            return;
        }
        p += l;
    }
    w_string(w, s, len);
}

void mem_api__jw_i64(mem_api__jw_t *w, int64_t v)
{
    char num[24];
    w_put(w, num, fmt_i64(v, num));
}

/* json_real refuses NaN and infinities, and so does this. */
void mem_api__jw_f64(mem_api__jw_t *w, double x)
{
    char num[MEM_NUM_FMT_MAX];
    if (!isfinite(x)) {
        w->oom = true;
        return;
    }
    w_put(w, num, mem_num_fmt_f64(x, num));
}

void mem_api__jw_value(mem_api__jw_t *w, const json_t *j)
{
    if (!j) {
        w->oom = true;
        return;
    }
    w_value(w, j);
}

char *mem_api__jw_finish(mem_api__jw_t *w, size_t *len)
{
    w_char(w, '\0');
    if (w->oom) {
        free(w->b);
        w->b = NULL;
        return NULL;
    }
    if (len) *len = w->n - 1;
    char *b = w->b;
    w->b = NULL;
    return b;
}
