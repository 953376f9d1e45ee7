/* jstr.c - one escape of a JSON string decoded to UTF-8
 * SPDX-License-Identifier: MIT
 */
#include "core/jstr.h"

#include <stdbool.h>
#include <string.h>

/* The value of the 4 hex digits at p (p + 4 <= end checked by the caller), or -1. */
static long hex4(const char *p)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

static size_t put_utf8(char *o, unsigned long cp)
{
    unsigned char *u = (unsigned char *)o;
    if (cp < 0x80) {
        u[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        u[0] = (unsigned char)(0xC0 | cp >> 6);
        u[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        u[0] = (unsigned char)(0xE0 | cp >> 12);
        u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    u[0] = (unsigned char)(0xF0 | cp >> 18);
    u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    u[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

static size_t refuse(mem_jstr_bad_t *why, mem_jstr_bad_t bad)
{
    *why = bad;
    return 0;
}

size_t mem_jstr_unescape(const char *p, const char *end, char *out, size_t *n_out,
                         mem_jstr_bad_t *why)
{
    if (end - p < 2) return refuse(why, MEM_JSTR_ESCAPE);
    char one;
    switch (p[1]) {
    case '"':
    case '\\':
    case '/':
        one = p[1];
        break;
    case 'b':
        one = '\b';
        break;
    case 'f':
        one = '\f';
        break;
    case 'n':
        one = '\n';
        break;
    case 'r':
        one = '\r';
        break;
    case 't':
        one = '\t';
        break;
    case 'u': {
        long cp = end - p >= 6 ? hex4(p + 2) : -1;
        if (cp < 0) return refuse(why, MEM_JSTR_ESCAPE);
        size_t used = 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) { /* a high surrogate needs its low half */
            long lo = end - p >= 12 && p[6] == '\\' && p[7] == 'u' ? hex4(p + 8) : -1;
            if (lo < 0xDC00 || lo > 0xDFFF) return refuse(why, MEM_JSTR_SURROGATE);
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            used = 12;
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return refuse(why, MEM_JSTR_SURROGATE);
        } else if (cp == 0) {
            return refuse(why, MEM_JSTR_NUL);
        }
        *n_out = put_utf8(out, (unsigned long)cp);
        return used;
    }
    default:
        return refuse(why, MEM_JSTR_ESCAPE);
    }
    out[0] = one;
    *n_out = 1;
    return 2;
}

size_t mem_jstr_sanitize(const char *s, char *out, size_t cap)
{
    size_t o = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p && o + 5 < cap) {
        size_t len = *p < 0x80         ? 1
                     : (*p >> 5) == 6  ? 2
                     : (*p >> 4) == 14 ? 3
                     : (*p >> 3) == 30 ? 4
                                       : 0;
        bool ok = len > 0;
        for (size_t i = 1; ok && i < len; i++)
            ok = (p[i] & 0xC0) == 0x80;
        if (ok && len == 2 && *p < 0xC2) ok = false;                  /* overlong */
        if (ok && len == 3 && *p == 0xE0 && p[1] < 0xA0) ok = false;  /* overlong */
        if (ok && len == 3 && *p == 0xED && p[1] >= 0xA0) ok = false; /* surrogate */
        if (ok && len == 4 &&
            (*p > 0xF4 || (*p == 0xF0 && p[1] < 0x90) || (*p == 0xF4 && p[1] >= 0x90)))
            ok = false; /* range */
        if (!ok) {
            out[o++] = '?';
            p++;
            continue;
        }
        memcpy(out + o, p, len);
        o += len;
        p += len;
    }
    out[o] = '\0';
    return o;
}
