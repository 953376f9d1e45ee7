/* b64.c - strict base64 and little-endian float32 vectors (see b64.h)
 * SPDX-License-Identifier: MIT
 */
#include "core/b64.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char ALPHABET[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

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

/* Decode the checked group of 4 symbols at u (pad '=' among them) into o; bytes written. */
static size_t group(const unsigned char *u, size_t pad, unsigned char *o)
{
    uint32_t v = (uint32_t)sextet(u[0]) << 18 | (uint32_t)sextet(u[1]) << 12;
    if (pad < 2) v |= (uint32_t)sextet(u[2]) << 6;
    if (pad < 1) v |= (uint32_t)sextet(u[3]);
    o[0] = (unsigned char)(v >> 16);
    if (pad == 2) return 1;
    o[1] = (unsigned char)(v >> 8);
    if (pad == 1) return 2;
    o[2] = (unsigned char)v;
    return 3;
}

int mem_b64_decode(const char *s, size_t len, void *dst, size_t *n_out, const char *field,
                   mem_err_t *err)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t pad;
    int rc = check(u, len, &pad, field, err);
    if (rc != MEM_OK) return rc;
    unsigned char *o = dst;
    size_t n = 0;
    for (size_t i = 0; i < len; i += 4)
        n += group(u + i, i + 4 == len ? pad : 0, o + n);
    *n_out = n;
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
    size_t pad;
    int rc = check(u, len, &pad, field, err);
    if (rc != MEM_OK) return rc;
    size_t bytes = len / 4 * 3 - pad;
    if (bytes % 4)
        return b64_fail(err, field,
                        "base64 holds %zu bytes, not a whole number of float32 (4 bytes each)",
                        bytes);
    if (bytes / 4 > max) return b64_fail(err, field, "base64 holds more than %zu float32", max);
    /* 16 symbols make 12 bytes, 3 floats: decode in such groups, no byte buffer */
    size_t n = 0;
    for (size_t i = 0; i < len; i += 16) {
        unsigned char buf[12];
        size_t got = 0;
        for (size_t j = i; j < i + 16 && j < len; j += 4)
            got += group(u + j, j + 4 == len ? pad : 0, buf + got);
        for (size_t j = 0; j + 4 <= got; j += 4) {
            uint32_t b = (uint32_t)buf[j] | (uint32_t)buf[j + 1] << 8 | (uint32_t)buf[j + 2] << 16 |
                         (uint32_t)buf[j + 3] << 24;
            memcpy(&dst[n++], &b, sizeof(b));
        }
    }
    *n_out = n;
    return MEM_OK;
}
