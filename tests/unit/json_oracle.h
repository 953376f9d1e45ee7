/* json_oracle.h - api/json.c's reader checked against jansson (unit test and fuzz target)
 * SPDX-License-Identifier: MIT
 *
 * json_oracle_check parses with json_loadb(JSON_REJECT_DUPLICATES) and with
 * mem_api__json_parse (REST embedding places): both must accept or both refuse, and the
 * trees must be equal, a vector node standing for jansson's array of the same numbers
 * (each the float32 nearest the decimal; jansson's double may be a float32 halfway point
 * that the decimal was just off, where rounding twice lands on the other neighbour).
 * One deliberate difference: jansson drops a raw NUL byte that follows a number or a
 * literal (its lexer "ungets" the byte, and NUL marks its lookahead buffer as empty), so
 * it takes "[1\0]" for "[1]"; this reader refuses any raw NUL outside a string too.
 * json_oracle_random_doc writes seeded random documents for it.
 */
#ifndef MEM_TESTS_UNIT_JSON_ORACLE_H
#define MEM_TESTS_UNIT_JSON_ORACLE_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api/api_int.h"

static inline int json_oracle_same(const json_t *mine, const json_t *theirs)
{
    size_t n;
    if (mem_api__vec_node_get(mine, NULL, &n)) {
        if (!json_is_array(theirs) || json_array_size(theirs) != n || n > MEM_API_MAX_DIM) return 0;
        float *v = malloc((n ? n : 1) * sizeof(float));
        int same = v != NULL;
        if (v) mem_api__vec_node_get(mine, v, &n);
        for (size_t i = 0; same && i < n; i++) {
            const json_t *x = json_array_get(theirs, i);
            if (!json_is_number(x)) {
                same = 0;
                break;
            }
            double d = json_number_value(x);
            float rounded_twice = (float)d;
            if (v[i] == rounded_twice && signbit(v[i]) == signbit(rounded_twice)) continue;
            /* d halfway between FLT_MAX and 2^128 rounds to infinity as a double, while the
             * decimal may lie a hair below it */
            if (isinf(rounded_twice) && fabsf(v[i]) == FLT_MAX && fabs(d) == 0x1.ffffffp127)
                continue;
            if (((double)v[i] + (double)rounded_twice) / 2 != d) same = 0;
        }
        free(v);
        return same;
    }
    if (json_typeof(mine) != json_typeof(theirs)) return 0;
    switch (json_typeof(mine)) {
    case JSON_OBJECT: {
        if (json_object_size(mine) != json_object_size(theirs)) return 0;
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)mine, k, v)
        {
            const json_t *w = json_object_get(theirs, k);
            if (!w || !json_oracle_same(v, w)) return 0;
        }
        return 1;
    }
    case JSON_ARRAY:
        if (json_array_size(mine) != json_array_size(theirs)) return 0;
        for (size_t i = 0; i < json_array_size(mine); i++)
            if (!json_oracle_same(json_array_get(mine, i), json_array_get(theirs, i))) return 0;
        return 1;
    case JSON_REAL: { /* both correctly rounded: the same bits, sign of zero included */
        double a = json_real_value(mine), b = json_real_value(theirs);
        return memcmp(&a, &b, sizeof(a)) == 0;
    }
    default:
        return json_equal(mine, theirs);
    }
}

static inline const char *json_oracle_check(const char *s, size_t len)
{
    static const char *const REST[] = MEM_API_VEC_PATHS_REST;
    json_error_t jerr;
    json_t *theirs = json_loadb(s, len, JSON_REJECT_DUPLICATES, &jerr), *mine = NULL;
    mem_err_t err;
    mem_err_clear(&err);
    int rc = mem_api__json_parse(s, len, REST, "body", &mine, &err);
    const char *why = NULL;
    if (rc == MEM_ENOMEM)
        why = NULL; /* not a disagreement about the text */
    else if (!theirs && rc == MEM_OK)
        why = "accepted what jansson refuses";
    else if (theirs && rc != MEM_OK && !memchr(s, '\0', len))
        why = "refused what jansson accepts";
    else if (rc != MEM_OK && (err.code != MEM_EJSON || !strstr(err.msg, "body: invalid JSON")))
        why = "refused without an invalid JSON message";
    else if (theirs && mine && !json_oracle_same(mine, theirs))
        why = "tree differs from jansson's";
    json_decref(theirs);
    json_decref(mine);
    return why;
}

static inline uint64_t json_oracle_rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

typedef struct json_oracle_out {
    char *b;
    size_t n, cap;
} json_oracle_out_t;

static inline void json_oracle_put(json_oracle_out_t *o, const char *s)
{
    size_t l = strlen(s);
    if (o->n + l < o->cap) {
        memcpy(o->b + o->n, s, l);
        o->n += l;
    }
}

static inline void json_oracle_number(json_oracle_out_t *o, uint64_t *seed)
{
    char num[64];
    uint64_t r = json_oracle_rng(seed);
    switch (r % 6) {
    case 0:
        snprintf(num, sizeof(num), "%d", (int)(r >> 8) % 2000 - 1000);
        break;
    case 1:
        snprintf(num, sizeof(num), "%.*g", (int)(r >> 8) % 19 + 1,
                 ((double)(r >> 11) * 0x1p-53 - 0.5) * 2);
        break;
    case 2: {
        double x;
        uint64_t b = json_oracle_rng(seed);
        memcpy(&x, &b, sizeof(x));
        snprintf(num, sizeof(num), "%.17g", isfinite(x) ? x : 1.5);
        break;
    }
    case 3:
        snprintf(num, sizeof(num), "%de%d", (int)(r >> 8) % 100, (int)(r >> 20) % 100 - 50);
        break;
    case 4:
        snprintf(num, sizeof(num), "%lld", (long long)(json_oracle_rng(seed) >> (r % 64)));
        break;
    default:
        snprintf(num, sizeof(num), "-0.%06u", (unsigned)(r >> 12) % 1000000);
    }
    json_oracle_put(o, num);
}

static inline void json_oracle_string(json_oracle_out_t *o, uint64_t *seed)
{
    static const char *const parts[] = {"a",
                                        "embedding",
                                        "segments",
                                        "context",
                                        "x y",
                                        "\\n",
                                        "\\\"",
                                        "\\\\",
                                        "\\/",
                                        "\\u00e9",
                                        "\\ud83d\\ude00",
                                        "caf\xc3\xa9",
                                        "\xe2\x82\xac",
                                        "\\t",
                                        "metadata",
                                        "k"};
    json_oracle_put(o, "\"");
    for (int i = (int)(json_oracle_rng(seed) % 4); i > 0; i--)
        json_oracle_put(o, parts[json_oracle_rng(seed) % (sizeof(parts) / sizeof(parts[0]))]);
    json_oracle_put(o, "\"");
}

static inline void json_oracle_value(json_oracle_out_t *o, uint64_t *seed, int depth)
{
    uint64_t r = json_oracle_rng(seed);
    int kind = depth > 5 ? (int)(r % 4) : (int)(r % 8);
    switch (kind) {
    case 0:
        json_oracle_number(o, seed);
        break;
    case 1:
        json_oracle_string(o, seed);
        break;
    case 2:
        json_oracle_put(o, r & 256 ? "true" : r & 512 ? "false" : "null");
        break;
    case 3:
    case 4: { /* an array of numbers, as embeddings are */
        json_oracle_put(o, "[");
        for (int i = (int)(r >> 10) % 12; i >= 0; i--) {
            json_oracle_number(o, seed);
            if (i) json_oracle_put(o, r & 1024 ? "," : " , ");
        }
        json_oracle_put(o, "]");
        break;
    }
    case 5: {
        json_oracle_put(o, "[");
        for (int i = (int)(r >> 10) % 4; i > 0; i--) {
            json_oracle_value(o, seed, depth + 1);
            if (i > 1) json_oracle_put(o, ",");
        }
        json_oracle_put(o, "]");
        break;
    }
    default: {
        static const char *const keys[] = {"\"embedding\"",      "\"segments\"", "\"context\"",
                                           "\"metadata\"",       "\"a\"",        "\"b\"",
                                           "\"embed\\u0064ing\""};
        json_oracle_put(o, "{");
        for (int i = (int)(r >> 10) % 5; i > 0; i--) {
            if (r & 2048)
                json_oracle_put(o, keys[json_oracle_rng(seed) % 7]); /* duplicates happen */
            else
                json_oracle_string(o, seed);
            json_oracle_put(o, ":");
            json_oracle_value(o, seed, depth + 1);
            if (i > 1) json_oracle_put(o, ",");
        }
        json_oracle_put(o, "}");
    }
    }
}

/* A random document (an object or an array at the top) in buf; its length. */
static inline size_t json_oracle_random_doc(uint64_t *seed, char *buf, size_t cap)
{
    json_oracle_out_t o = {buf, 0, cap};
    if (json_oracle_rng(seed) & 1) {
        json_oracle_put(&o, "{\"embedding\":");
        json_oracle_value(&o, seed, 1);
        json_oracle_put(&o, ",\"segments\":[{\"embedding\":");
        json_oracle_value(&o, seed, 2);
        json_oracle_put(&o, "}],\"x\":");
        json_oracle_value(&o, seed, 1);
        json_oracle_put(&o, "}");
    } else {
        json_oracle_put(&o, "[");
        json_oracle_value(&o, seed, 1);
        json_oracle_put(&o, "]");
    }
    return o.n;
}

#endif
