/* num_oracle.h - core/num.c checked against glibc, shared by test_core_num and num-check
 * SPDX-License-Identifier: MIT
 *
 * glibc's strtof and strtod round correctly, and printf("%.*e") rounds the exact binary
 * value correctly; from those a reference for every answer of core/num.h follows:
 * - parsing: the same bits as strtof/strtod (MEM_ELIMIT where they give infinity);
 * - shortest: for n = 1, 2, ... the n-digit decimal nearest to x (printf) reads back as x,
 *   or, where the rounding interval is lopsided (x a power of two), its neighbour on the
 *   other side of x does; the first n where one does gives the answer's length and digits.
 * Each check returns NULL or a static description of the mismatch.
 */
#ifndef MEM_TESTS_UNIT_NUM_ORACLE_H
#define MEM_TESTS_UNIT_NUM_ORACLE_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/num.h"

static inline const char *num_oracle_check_parse(const char *s, size_t n)
{
    char z[512];
    if (n >= sizeof(z)) return "input too long for the oracle";
    memcpy(z, s, n);
    z[n] = '\0';
    double want64 = strtod(z, NULL), got64 = 0;
    float want32 = strtof(z, NULL), got32 = 0;
    size_t used = 0;
    int rc = mem_num_parse_f64(s, n, &got64, &used);
    if (isinf(want64)) {
        if (rc != MEM_ELIMIT) return "f64: expected MEM_ELIMIT (strtod overflows)";
    } else if (rc != MEM_OK || used != n || memcmp(&got64, &want64, sizeof(got64)) != 0) {
        return "f64: differs from strtod";
    }
    rc = mem_num_parse_f32(s, n, &got32, &used);
    if (isinf(want32)) {
        if (rc != MEM_ELIMIT) return "f32: expected MEM_ELIMIT (strtof overflows)";
    } else if (rc != MEM_OK || used != n || memcmp(&got32, &want32, sizeof(got32)) != 0) {
        return "f32: differs from strtof";
    }
    /* Inside a body the number is followed by more text, and the parsers read ahead in
     * 8-byte runs there: the same token with a separator and room behind it. */
    static const char SEP[] = ",] }\n\t:\"x";
    char padded[512 + 24];
    memcpy(padded, s, n);
    memset(padded + n, ' ', 24);
    padded[n] = SEP[n % (sizeof(SEP) - 1)];
    rc = mem_num_parse_f64(padded, n + 24, &got64, &used);
    if (isinf(want64) ? rc != MEM_ELIMIT || used != n
                      : rc != MEM_OK || used != n || memcmp(&got64, &want64, sizeof(got64)) != 0)
        return "f64 followed by text: differs from strtod";
    rc = mem_num_parse_f32(padded, n + 24, &got32, &used);
    if (isinf(want32) ? rc != MEM_ELIMIT || used != n
                      : rc != MEM_OK || used != n || memcmp(&got32, &want32, sizeof(got32)) != 0)
        return "f32 followed by text: differs from strtof";
    return NULL;
}

/* The reference shortest digits (no trailing zeros) and exponent of |x|. */
static inline void num_oracle_shortest(double x, int is_f32, uint64_t *digits, int *exp10)
{
    x = fabs(x);
    for (int n = 1; n <= 17; n++) {
        char b[64];
        snprintf(b, sizeof(b), "%.*e", n - 1, x);
        char *e = strchr(b, 'e');
        int ex = atoi(e + 1) - (n - 1);
        uint64_t v = 0;
        for (char *p = b; p < e; p++)
            if (*p >= '0' && *p <= '9') v = v * 10 + (uint64_t)(*p - '0');
        for (int k = 0; k < 3; k++) { /* nearest, then the neighbours */
            uint64_t w = k == 0 ? v : k == 1 ? v - 1 : v + 1;
            char c[64];
            snprintf(c, sizeof(c), "%llue%d", (unsigned long long)w, ex);
            int back = is_f32 ? (double)strtof(c, NULL) == x : strtod(c, NULL) == x;
            if (!back || w == 0) continue;
            int e10 = ex;
            while (w % 10 == 0) {
                w /= 10;
                e10++;
            }
            *digits = w;
            *exp10 = e10;
            return;
        }
    }
    *digits = 0;
    *exp10 = 0;
}

static inline const char *num_oracle_check_text(const char *txt, double x, int is_f32)
{
    if (!strpbrk(txt, ".e")) return "printed text lacks a '.' or an exponent";
    if (is_f32 ? (double)strtof(txt, NULL) != x : strtod(txt, NULL) != x)
        return "printed text does not read back";
    return NULL;
}

static inline const char *num_oracle_check_f64(double x)
{
    char out[MEM_NUM_FMT_MAX];
    size_t n = mem_num_fmt_f64(x, out);
    if (n != strlen(out)) return "fmt_f64: wrong length";
    const char *why = num_oracle_check_text(out, x, 0);
    if (why || x == 0) return why;
    uint64_t dg, want;
    int e, we;
    mem_num_shortest_f64(x, &dg, &e);
    num_oracle_shortest(x, 0, &want, &we);
    if (dg != want || e != we) return "shortest_f64: digits differ from the reference";
    return NULL;
}

static inline const char *num_oracle_check_f32(float x)
{
    char out[MEM_NUM_FMT_MAX], via[MEM_NUM_FMT_MAX];
    size_t n = mem_num_fmt_f32(x, out);
    if (n != strlen(out)) return "fmt_f32: wrong length";
    const char *why = num_oracle_check_text(out, (double)x, 1);
    if (why) return why;
    mem_num_fmt_f64(mem_num_f32_to_f64_shortest(x), via);
    if (strcmp(out, via) != 0) return "f32_to_f64_shortest prints differently";
    if (x == 0) return NULL;
    uint32_t dg;
    uint64_t want;
    int e, we;
    mem_num_shortest_f32(x, &dg, &e);
    num_oracle_shortest((double)x, 1, &want, &we);
    if (dg != want || e != we) return "shortest_f32: digits differ from the reference";
    return NULL;
}

#endif
