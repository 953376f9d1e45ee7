/* b64.c - strict base64 and little-endian float32 vectors (see b64.h)
 * SPDX-License-Identifier: MIT
 */
#include "core/b64.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char ALPHABET[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The decoding table: 0x40 | value for the 64 symbols, 0 for every other byte ('=' too),
 * so one AND over a group's four entries tells whether all four are symbols. */
#define SYM 0x40
static const unsigned char DECODE[256] = {
    ['A'] = 0x40 | 0,  ['B'] = 0x40 | 1,  ['C'] = 0x40 | 2,  ['D'] = 0x40 | 3,  ['E'] = 0x40 | 4,
    ['F'] = 0x40 | 5,  ['G'] = 0x40 | 6,  ['H'] = 0x40 | 7,  ['I'] = 0x40 | 8,  ['J'] = 0x40 | 9,
    ['K'] = 0x40 | 10, ['L'] = 0x40 | 11, ['M'] = 0x40 | 12, ['N'] = 0x40 | 13, ['O'] = 0x40 | 14,
    ['P'] = 0x40 | 15, ['Q'] = 0x40 | 16, ['R'] = 0x40 | 17, ['S'] = 0x40 | 18, ['T'] = 0x40 | 19,
    ['U'] = 0x40 | 20, ['V'] = 0x40 | 21, ['W'] = 0x40 | 22, ['X'] = 0x40 | 23, ['Y'] = 0x40 | 24,
    ['Z'] = 0x40 | 25, ['a'] = 0x40 | 26, ['b'] = 0x40 | 27, ['c'] = 0x40 | 28, ['d'] = 0x40 | 29,
    ['e'] = 0x40 | 30, ['f'] = 0x40 | 31, ['g'] = 0x40 | 32, ['h'] = 0x40 | 33, ['i'] = 0x40 | 34,
    ['j'] = 0x40 | 35, ['k'] = 0x40 | 36, ['l'] = 0x40 | 37, ['m'] = 0x40 | 38, ['n'] = 0x40 | 39,
    ['o'] = 0x40 | 40, ['p'] = 0x40 | 41, ['q'] = 0x40 | 42, ['r'] = 0x40 | 43, ['s'] = 0x40 | 44,
    ['t'] = 0x40 | 45, ['u'] = 0x40 | 46, ['v'] = 0x40 | 47, ['w'] = 0x40 | 48, ['x'] = 0x40 | 49,
    ['y'] = 0x40 | 50, ['z'] = 0x40 | 51, ['0'] = 0x40 | 52, ['1'] = 0x40 | 53, ['2'] = 0x40 | 54,
    ['3'] = 0x40 | 55, ['4'] = 0x40 | 56, ['5'] = 0x40 | 57, ['6'] = 0x40 | 58, ['7'] = 0x40 | 59,
    ['8'] = 0x40 | 60, ['9'] = 0x40 | 61, ['+'] = 0x40 | 62, ['/'] = 0x40 | 63};

/* 0..63, or -1 for anything else ('=' included). */
static int sextet(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

size_t mem_b64_encode(const void *src, size_t len, char *dst)
{
    const unsigned char *s = src;
    char *o = dst;
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        *o++ = ALPHABET[v >> 18];
        *o++ = ALPHABET[(v >> 12) & 63];
        *o++ = ALPHABET[(v >> 6) & 63];
        *o++ = ALPHABET[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < len ? (uint32_t)s[i + 1] << 8 : 0);
        *o++ = ALPHABET[v >> 18];
        *o++ = ALPHABET[(v >> 12) & 63];
        *o++ = i + 1 < len ? ALPHABET[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    return (size_t)(o - dst);
}

static int b64_fail(mem_err_t *err, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int b64_fail(mem_err_t *err, const char *field, const char *fmt, ...)
{
    char reason[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    if (field) return mem_err_field(err, MEM_EINVAL, field, "%s: %s", field, reason);
    return mem_err_set(err, MEM_EINVAL, "%s", reason);
}

/* Check the whole string; *pad gets the number of '=' at its end. */
static int check(const unsigned char *u, size_t len, size_t *pad_out, const char *field,
                 mem_err_t *err)
{
    if (len % 4) return b64_fail(err, field, "base64 length %zu is not a multiple of 4", len);
    size_t pad = len && u[len - 1] == '=' ? (len > 1 && u[len - 2] == '=' ? 2 : 1) : 0;
    for (size_t i = 0; i < len - pad; i++)
        if (sextet(u[i]) < 0) {
            if (u[i] == '=') return b64_fail(err, field, "base64 padding '=' at offset %zu", i);
            return b64_fail(err, field, "invalid base64 character at offset %zu", i);
        }
    if (pad) { /* the bits the last symbol carries beyond the last byte must be zero */
        int last = sextet(u[len - pad - 1]);
        if (last & (pad == 2 ? 0xf : 0x3))
            return b64_fail(err, field, "base64 padding leaves nonzero bits at offset %zu",
                            len - pad - 1);
    }
    *pad_out = pad;
    return MEM_OK;
}

/* Decode n whole groups of 4 symbols at u into o (3 bytes each); false when a byte of them is
 * not a symbol (o is then partly written). */
static bool groups(const unsigned char *u, size_t n, unsigned char *o)
{
    unsigned all = SYM;
    for (size_t g = 0; g < n; g++, u += 4, o += 3) {
        unsigned a = DECODE[u[0]], b = DECODE[u[1]], c = DECODE[u[2]], d = DECODE[u[3]];
        all &= a & b & c & d;
        uint32_t v = (uint32_t)(a & 63) << 18 | (uint32_t)(b & 63) << 12 | (uint32_t)(c & 63) << 6 |
                     (uint32_t)(d & 63);
        o[0] = (unsigned char)(v >> 16);
        o[1] = (unsigned char)(v >> 8);
        o[2] = (unsigned char)v;
    }
    return all == SYM;
}

/* Decode u[0..len) (len a multiple of 4, pad '=' at its end) into o: len / 4 * 3 - pad
 * bytes. false when it is not canonical base64; check() then says why. */
static bool decode_all(const unsigned char *u, size_t len, size_t pad, unsigned char *o)
{
    size_t whole = len / 4 - (pad ? 1 : 0);
    if (!groups(u, whole, o)) return false;
    if (!pad) return true;
    const unsigned char *t = u + 4 * whole;
    unsigned a = DECODE[t[0]], b = DECODE[t[1]], c = pad == 1 ? DECODE[t[2]] : SYM;
    if (!(a & b & c & SYM)) return false;
    uint32_t v = (uint32_t)(a & 63) << 18 | (uint32_t)(b & 63) << 12 | (uint32_t)(c & 63) << 6;
    if (v & (pad == 2 ? 0xffffu : 0xffu)) return false; /* bits beyond the last byte */
    o += 3 * whole;
    o[0] = (unsigned char)(v >> 16);
    if (pad == 1) o[1] = (unsigned char)(v >> 8);
    return true;
}

/* The '=' at the end of a string whose length is a multiple of 4. */
static size_t pad_of(const unsigned char *u, size_t len)
{
    return len && u[len - 1] == '=' ? (len > 1 && u[len - 2] == '=' ? 2 : 1) : 0;
}

/* s is not canonical base64: the error check() finds (it always finds one). */
static int refuse(const unsigned char *u, size_t len, const char *field, mem_err_t *err)
{
    size_t pad;
    int rc = check(u, len, &pad, field, err);
    return rc != MEM_OK ? rc : b64_fail(err, field, "invalid base64");
}

int mem_b64_decode(const char *s, size_t len, void *dst, size_t *n_out, const char *field,
                   mem_err_t *err)
{
    const unsigned char *u = (const unsigned char *)s;
    if (len % 4) return refuse(u, len, field, err);
    size_t pad = pad_of(u, len);
    if (!decode_all(u, len, pad, dst)) return refuse(u, len, field, err);
    *n_out = len / 4 * 3 - pad;
    return MEM_OK;
}

size_t mem_b64_encode_f32le(const float *v, size_t n, char *dst)
{
    /* three floats (12 bytes) make 16 characters: encode in such groups, no scratch */
    unsigned char buf[12];
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        size_t k = n - i < 3 ? n - i : 3;
        for (size_t j = 0; j < k; j++) {
            uint32_t b;
            memcpy(&b, &v[i + j], sizeof(b));
            buf[4 * j] = (unsigned char)b;
            buf[4 * j + 1] = (unsigned char)(b >> 8);
            buf[4 * j + 2] = (unsigned char)(b >> 16);
            buf[4 * j + 3] = (unsigned char)(b >> 24);
        }
        o += mem_b64_encode(buf, 4 * k, dst + o);
    }
    return o;
}

int mem_b64_decode_f32le(const char *s, size_t len, float *dst, size_t max, size_t *n_out,
                         const char *field, mem_err_t *err)
{
    const unsigned char *u = (const unsigned char *)s;
    if (len % 4) return refuse(u, len, field, err);
    size_t pad = pad_of(u, len), bytes = len / 4 * 3 - pad;
    if (bytes % 4 || bytes / 4 > max) {
        size_t p; /* a bad character is the first thing to report */
        int rc = check(u, len, &p, field, err);
        if (rc != MEM_OK) return rc;
        if (bytes % 4)
            return b64_fail(err, field,
                            "base64 holds %zu bytes, not a whole number of float32 (4 bytes each)",
                            bytes);
        return b64_fail(err, field, "base64 holds more than %zu float32", max);
    }
    /* the bytes go straight into dst: they are the floats' little-endian bytes */
    if (!decode_all(u, len, pad, (unsigned char *)dst)) return refuse(u, len, field, err);
    size_t n = bytes / 4;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    for (size_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, &dst[i], sizeof(b));
        b = __builtin_bswap32(b);
        memcpy(&dst[i], &b, sizeof(b));
    }
#endif
    *n_out = n;
    return MEM_OK;
}
