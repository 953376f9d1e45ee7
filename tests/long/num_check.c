/* num_check.c - the long campaign for core/num.c (make num-check; not part of make test)
 * SPDX-License-Identifier: MIT
 *
 *   num_check [N] [all]   N random inputs of each kind (default 10 million) against glibc,
 *                         as tests/unit/test_core_num.c checks a few thousand; with "all",
 *                         then every finite float32: its shortest text reads back as itself
 *                         (through core/num.h and through strtof) and no decimal with one
 *                         digit fewer does (about 15 minutes on one core).
 * Env: MEM_TEST_SEED. Exits 1 at the first mismatch, printing the input.
 */
#include "core/num.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/unit/num_oracle.h"
#include "tests/unit/test_util.h"

static int fail(const char *what, const char *input, const char *why)
{
    fprintf(stderr, "num-check: %s %s: %s\n", what, input, why);
    return 1;
}

static int random_inputs(uint64_t n, uint64_t seed)
{
    char s[160];
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = rng_next(&seed);
        double x;
        memcpy(&x, &r, sizeof(x));
        uint32_t b = (uint32_t)(r >> 32);
        float f;
        memcpy(&f, &b, sizeof(f));
        int len;
        const char *why;
        switch (i % 6) {
        case 0:
            if (!isfinite(x)) continue;
            len = snprintf(s, sizeof(s), "%.*g", (int)(r % 20) + 1, x);
            break;
        case 1:
            if (!isfinite(f)) continue;
            len = snprintf(s, sizeof(s), "%.*g", (int)(r % 12) + 1, (double)f);
            break;
        case 2: { /* near float32 halfway points, with digits to either side */
            uint32_t b2 = (b & 0x7f7fffffu) + 1, b1 = b & 0x7f7fffffu;
            float a, c;
            memcpy(&a, &b1, sizeof(a));
            memcpy(&c, &b2, sizeof(c));
            len = snprintf(s, sizeof(s), "%.*e", (int)(r % 45) + 5, ((double)a + (double)c) / 2);
            break;
        }
        case 3: { /* near double halfway points */
            if (!isfinite(x)) continue;
            double y = nextafter(x, INFINITY);
            len = snprintf(s, sizeof(s), "%.*e", (int)(r % 60) + 15, x / 2 + y / 2);
            break;
        }
        case 4:
            len = snprintf(s, sizeof(s), "%.*f", (int)(r % 14) + 5,
                           ((double)(r >> 11) * 0x1p-53 - 0.5) * 0.2);
            break;
        default: {
            int k = 0, nd = (int)(r % 40) + 1;
            for (int j = 0; j < nd; j++) /* JSON: no leading zero */
                s[k++] = (char)('0' + (j == 0 ? 1 + rng_next(&seed) % 9 : rng_next(&seed) % 10));
            len = k +
                  snprintf(s + k, sizeof(s) - (size_t)k, "e%d", (int)(rng_next(&seed) % 760) - 380);
        }
        }
        if ((why = num_oracle_check_parse(s, (size_t)len))) return fail("parse", s, why);
        if (isfinite(x) && (why = num_oracle_check_f64(x))) {
            snprintf(s, sizeof(s), "%.17g", x);
            return fail("print f64", s, why);
        }
        if (isfinite(f) && (why = num_oracle_check_f32(f))) {
            snprintf(s, sizeof(s), "%.9g", (double)f);
            return fail("print f32", s, why);
        }
        if (i % 1000000 == 999999) {
            printf("  %" PRIu64 " random inputs ok\n", i + 1);
            fflush(stdout);
        }
    }
    return 0;
}

/* Every finite float32: the text reads back, and no shorter decimal does. */
static int every_float(void)
{
    for (uint64_t b = 0; b <= UINT32_MAX; b++) {
        uint32_t bits = (uint32_t)b;
        float f;
        memcpy(&f, &bits, sizeof(f));
        if (!isfinite(f)) continue;
        char txt[MEM_NUM_FMT_MAX];
        mem_num_fmt_f32(f, txt);
        float back;
        size_t used;
        if (mem_num_parse_f32(txt, strlen(txt), &back, &used) != MEM_OK ||
            memcmp(&back, &f, sizeof(f)) != 0 || strtof(txt, NULL) != f)
            return fail("every float32", txt, "does not read back");
        if (f == 0) continue;
        uint32_t dg;
        int e;
        mem_num_shortest_f32(f, &dg, &e);
        if (dg >= 10) { /* the two decimals one digit shorter around it must not read back */
            for (uint32_t c = dg / 10; c <= dg / 10 + 1; c++) {
                char s[48];
                snprintf(s, sizeof(s), "%ue%d", c, e + 1);
                if (c && strtof(s, NULL) == fabsf(f))
                    return fail("every float32", txt, "a shorter decimal reads back");
            }
        }
        if ((b & 0x0fffffffu) == 0) {
            printf("  float32 bits up to 0x%08" PRIx32 " ok\n", bits);
            fflush(stdout);
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    const char *env = getenv("MEM_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("num-check: %" PRIu64 " random inputs of each kind, MEM_TEST_SEED=%" PRIu64 "\n", n,
           seed);
    if (random_inputs(n, seed)) return 1;
    if (argc > 2 && strcmp(argv[2], "all") == 0 && every_float()) return 1;
    printf("num-check: ok\n");
    return 0;
}
