/* test_core_vec.c - every ISA the host runs against a double reference (STYLE section 7)
 * SPDX-License-Identifier: MIT
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/vec.h"
#include "tests/unit/test_util.h"

static uint64_t seed;

static float rng_float(uint64_t *s) /* uniform in [-1, 1) */
{
    return (float)((double)(rng_next(s) >> 11) * 0x1.0p-53 * 2.0 - 1.0);
}

static const size_t lengths[] = {0,  1,  3,  7,  8,   9,   15,  16,  17,  31,   32,
                                 33, 63, 64, 65, 127, 128, 129, 384, 768, 1536, 4099};

enum fill { FILL_RANDOM, FILL_ZERO, FILL_LARGE, FILL_MIXED };

static void fill(float *v, size_t n, enum fill kind, uint64_t *s)
{
    for (size_t i = 0; i < n; i++) {
        switch (kind) {
        case FILL_ZERO:
            v[i] = 0.0f;
            break;
        case FILL_LARGE:
            v[i] = rng_float(s) * 1.0e15f;
            break;
        case FILL_MIXED:
            v[i] = (i % 3 == 0) ? 0.0f : rng_float(s) * ((i % 2) ? 1.0e3f : 1.0e-3f);
            break;
        default:
            v[i] = rng_float(s);
        }
    }
}

static void check_close(const char *isa, const char *what, size_t n, size_t off, float got,
                        const float *a, const float *b)
{
    double exact = 0.0, mag = 0.0;
    for (size_t i = 0; i < n; i++) {
        exact += (double)a[i] * (double)b[i];
        mag += fabs((double)a[i] * (double)b[i]);
    }
    double bound = (double)(n ? n : 1) * FLT_EPSILON * mag;
    if (!(fabs((double)got - exact) <= bound)) {
        print_error("%s %s n=%zu off=%zu: got %.9g want %.9g (bound %.3g) seed=%llu\n", isa, what,
                    n, off, (double)got, exact, bound, (unsigned long long)seed);
        fail();
    }
}

static void test_dot_every_isa(void **state)
{
    (void)state;
    size_t max = 4099 + 8;
    float *a = malloc(max * sizeof(float)), *b = malloc(max * sizeof(float));
    assert_non_null(a);
    assert_non_null(b);
    int ran = 0;
    for (int isa = 0; isa <= MEM_VEC_ISA_COUNT; isa++) {
        const mem_vec_ops_t *ops = table_at(isa);
        if (!ops) continue;
        ran++;
        assert_int_equal(ops->isa, isa < MEM_VEC_ISA_COUNT ? isa : MEM_VEC_AVX512);
        uint64_t s = seed;
        for (size_t li = 0; li < sizeof(lengths) / sizeof(lengths[0]); li++)
            for (size_t off = 0; off <= 3; off += 3)
                for (int k = FILL_RANDOM; k <= FILL_MIXED; k++) {
                    size_t n = lengths[li];
                    fill(a + off, n, (enum fill)k, &s);
                    fill(b + off, n, k == FILL_ZERO ? FILL_RANDOM : (enum fill)k, &s);
                    check_close(ops->name, "dot", n, off, ops->dot(a + off, b + off, n), a + off,
                                b + off);
                }
    }
    assert_true(ran >= 1);
    free(a);
    free(b);
}

static void test_dot_rows_every_isa(void **state)
{
    (void)state;
    size_t row_counts[] = {0, 1, 7, 8, 9, 17, 33};
    for (int isa = 0; isa <= MEM_VEC_ISA_COUNT; isa++) {
        const mem_vec_ops_t *ops = table_at(isa);
        if (!ops) continue;
        uint64_t s = seed ^ (uint64_t)isa;
        for (size_t li = 0; li < sizeof(lengths) / sizeof(lengths[0]); li++) {
            size_t dim = lengths[li];
            if (dim > 1536) continue;
            for (size_t off = 0; off <= 3; off += 3) {
                /* stride = dim rounded up to 16 (as the index does) and an odd stride */
                size_t strides[2] = {(dim + 15) & ~(size_t)15, dim + 5};
                for (int si = 0; si < 2; si++) {
                    size_t stride = strides[si];
                    for (size_t ri = 0; ri < sizeof(row_counts) / sizeof(row_counts[0]); ri++) {
                        size_t nr = row_counts[ri];
                        float *q = malloc((dim + off + 1) * sizeof(float));
                        float *rows = malloc((nr * stride + off + 1) * sizeof(float));
                        float *out = malloc((nr + 1) * sizeof(float));
                        assert_non_null(q);
                        assert_non_null(rows);
                        assert_non_null(out);
                        fill(q + off, dim, FILL_RANDOM, &s);
                        fill(rows + off, nr * stride, FILL_RANDOM, &s);
                        out[nr] = 12345.0f; /* sentinel: no write past n_rows */
                        ops->dot_rows(q + off, rows + off, nr, dim, stride, out);
                        for (size_t r = 0; r < nr; r++)
                            check_close(ops->name, "dot_rows", dim, off, out[r], q + off,
                                        rows + off + r * stride);
                        assert_true(out[nr] == 12345.0f);
                        free(q);
                        free(rows);
                        free(out);
                    }
                }
            }
        }
    }
}

static void test_dot_rows_equal_rows_equal_scores(void **state)
{
    (void)state;
    /* a row scores the same in any slot of a group and in the last partial group */
    size_t dims[] = {1, 17, 128, 129};
    for (int isa = 0; isa <= MEM_VEC_ISA_COUNT; isa++) {
        const mem_vec_ops_t *ops = table_at(isa);
        if (!ops) continue;
        uint64_t s = seed + 99;
        for (size_t di = 0; di < 4; di++) {
            size_t dim = dims[di], nr = 21;
            float q[129], rows[21 * 129], out[21];
            fill(q, dim, FILL_RANDOM, &s);
            fill(rows, dim, FILL_RANDOM, &s);
            for (size_t r = 1; r < nr; r++)
                memcpy(rows + r * dim, rows, dim * sizeof(float));
            ops->dot_rows(q, rows, nr, dim, dim, out);
            if (isa != MEM_VEC_NEON) /* x86 kernels: dot uses dot_rows' order too */
                assert_true(ops->dot(rows, q, dim) == out[0]);
            for (size_t r = 1; r < nr; r++)
                if (out[r] != out[0]) {
                    print_error("%s dim=%zu row %zu: %.9g != %.9g\n", ops->name, dim, r,
                                (double)out[r], (double)out[0]);
                    fail();
                }
        }
    }
}

static void test_select_ge_every_isa(void **state)
{
    (void)state;
    float x[67];
    uint32_t got[67];
    uint64_t s = seed + 5;
    for (int isa = 0; isa <= MEM_VEC_ISA_COUNT; isa++) {
        const mem_vec_ops_t *ops = table_at(isa);
        if (!ops) continue;
        assert_non_null(ops->select_ge);
        for (size_t n = 0; n <= 67; n++) {
            fill(x, n, FILL_RANDOM, &s);
            if (n > 5) x[5] = NAN;   /* never selected */
            if (n > 9) x[9] = 0.25f; /* equal to the cut: selected */
            size_t k = ops->select_ge(x, n, 0.25f, got);
            size_t want = 0;
            for (size_t i = 0; i < n; i++)
                if (x[i] >= 0.25f) {
                    assert_true(want < k);
                    assert_int_equal(got[want], i);
                    want++;
                }
            assert_int_equal(k, want);
        }
    }
}

static void test_sum_every_isa(void **state)
{
    (void)state;
    float *x = malloc((4099 + 3) * sizeof(float)), *ones = malloc((4099 + 3) * sizeof(float));
    assert_non_null(x);
    assert_non_null(ones);
    for (size_t i = 0; i < 4099 + 3; i++)
        ones[i] = 1.0f;
    for (int isa = 0; isa <= MEM_VEC_ISA_COUNT; isa++) {
        const mem_vec_ops_t *ops = table_at(isa);
        if (!ops) continue;
        assert_non_null(ops->sum);
        uint64_t s = seed + 11;
        for (size_t li = 0; li < sizeof(lengths) / sizeof(lengths[0]); li++)
            for (size_t off = 0; off <= 3; off += 3) {
                size_t n = lengths[li];
                fill(x + off, n, FILL_RANDOM, &s);
                check_close(ops->name, "sum", n, off, ops->sum(x + off, n), x + off, ones);
            }
    }
    free(x);
    free(ones);
}

static void test_dot_rows_i8_every_isa(void **state)
{
    (void)state;
    /* exact integer dot of biased u8 rows with s8 queries, then the affine bound */
    size_t lens[] = {16, 32, 48, 64, 80, 128, 384, 784, 1536, 4096};
    uint64_t s = seed + 17;
    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
        size_t len = lens[li], stride = len + 16, nr = 19;
        int8_t *q = malloc(len);
        uint8_t *rows = malloc(nr * stride);
        float rs[19], re[19], out[20];
        assert_non_null(q);
        assert_non_null(rows);
        for (size_t i = 0; i < len; i++)
            q[i] = (int8_t)((int)(rng_next(&s) % 255) - 127);
        if (len >= 32) /* extremes */
            q[0] = 127, q[1] = -127;
        for (size_t i = 0; i < nr * stride; i++)
            rows[i] = (uint8_t)(1 + rng_next(&s) % 255);
        for (size_t r = 0; r < nr; r++) {
            rs[r] = 1e-3f * (float)(1 + r);
            re[r] = 1e-4f * (float)r;
        }
        for (int isa = 0; isa <= MEM_VEC_ISA_COUNT; isa++) {
            const mem_vec_ops_t *ops = table_at(isa);
            if (!ops || !ops->dot_rows_i8) continue;
            out[nr] = 777.0f;
            ops->dot_rows_i8(q, rows, nr, len, stride, 0.5f, rs, re, 2.0f, 0.25f, out);
            assert_true(out[nr] == 777.0f);
            for (size_t r = 0; r < nr; r++) {
                long long dotq = 0;
                for (size_t i = 0; i < len; i++)
                    dotq += (long long)q[i] * ((long long)rows[r * stride + i] - 128);
                double want = 0.5 * (double)rs[r] * (double)dotq + 2.0 * (double)re[r] + 0.25;
                if (!(fabs((double)out[r] - want) <= 1e-6 * (1.0 + fabs(want)))) {
                    print_error("%s i8 len=%zu row %zu: %.9g want %.9g\n", ops->name, len, r,
                                (double)out[r], want);
                    fail();
                }
            }
        }
        free(q);
        free(rows);
    }
}

/* The int8 tile of the coherence graph: exact integer dots (unit scales, no error terms,
 * thresholds on an exact dot: the tie keeps; the dot's one rounding to float is the
 * kernels' too), then the affine bound against a double
 * reference (only pairs within 1e-5 of the threshold may go either way), on every shape
 * of tile: queries and rows not multiples of the kernel's blocks, lengths with a half
 * step, 0 or 64 rows. */
static long long tile_ref_dot(const int8_t *q, const uint8_t *x, size_t len)
{
    long long d = 0;
    for (size_t i = 0; i < len; i++)
        d += (long long)q[i] * ((long long)x[i] - 128);
    return d;
}

static void test_tile_i8_every_isa(void **state)
{
    (void)state;
    static const size_t lens[] = {16, 32, 48, 128, 144, 384, 400, 1040};
    static const size_t nqs[] = {0, 1, 3, 4, 5, 9, 13};
    static const size_t nrs[] = {0, 1, 2, 7, 33, 63, 64};
    uint64_t s = seed + 29;
    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
        size_t len = lens[li], stride = len + 16, q_stride = len + 32, dim = len - 5;
        int8_t *q = calloc(13 * q_stride, 1);
        uint8_t *rows = malloc(64 * stride);
        float qs[13], qe[13], ql[13], one[64], zero[64], rs[64], re[64];
        uint64_t keep[14], sure[14];
        assert_non_null(q);
        assert_non_null(rows);
        for (size_t i = 0; i < 13; i++) {
            for (size_t d = 0; d < dim; d++) /* zero-padded beyond dim, as the graph pads */
                q[i * q_stride + d] = (int8_t)((int)(rng_next(&s) % 255) - 127);
            qs[i] = 1e-6f * (float)(1 + i);
            qe[i] = 1e-2f * (float)i;
            ql[i] = 0.01f * (float)(i % 3);
        }
        q[0] = 127, q[1] = -127;         /* extremes */
        for (size_t d = 0; d < dim; d++) /* query 2 is the worst case against row 0 */
            q[2 * q_stride + d] = -127;
        for (size_t i = 0; i < 64 * stride; i++) /* byte 0 is code -128: padding and worst case */
            rows[i] = (uint8_t)(rng_next(&s) % 256);
        memset(rows, 0, stride);
        for (size_t r = 0; r < 64; r++) {
            one[r] = 1.0f;
            zero[r] = 0.0f;
            rs[r] = 1e-3f * (float)(1 + r);
            re[r] = 1e-2f * (float)r;
        }
        for (int isa = 0; isa <= MEM_VEC_ISA_COUNT; isa++) {
            const mem_vec_ops_t *ops = table_at(isa);
            if (!ops || !ops->tile_i8) continue;
            for (size_t a = 0; a < sizeof(nqs) / sizeof(nqs[0]); a++)
                for (size_t b = 0; b < sizeof(nrs) / sizeof(nrs[0]); b++) {
                    size_t nq = nqs[a], nr = nrs[b];
                    /* exact: the threshold is one pair's dot, ties keep */
                    float thr = nq && nr ? (float)tile_ref_dot(q + (nq - 1) * q_stride,
                                                               rows + (nr / 2) * stride, len)
                                         : 0.0f;
                    keep[nq] = sure[nq] = 0xabcdef;
                    ops->tile_i8(q, nq, q_stride, rows, nr, stride, len, one, zero, zero, one, zero,
                                 thr, keep, sure);
                    assert_true(keep[nq] == 0xabcdef && sure[nq] == 0xabcdef);
                    for (size_t i = 0; i < nq; i++) {
                        uint64_t w = 0;
                        for (size_t j = 0; j < nr; j++)
                            w |= (uint64_t)((float)tile_ref_dot(q + i * q_stride, rows + j * stride,
                                                                len) >= thr)
                                 << j;
                        if (keep[i] != w || sure[i] != w) { /* no error terms: lb == ub */
                            print_error("%s tile len=%zu nq=%zu nr=%zu q %zu: %llx / %llx want "
                                        "%llx\n",
                                        ops->name, len, nq, nr, i, (unsigned long long)keep[i],
                                        (unsigned long long)sure[i], (unsigned long long)w);
                            fail();
                        }
                    }
                    /* the affine bounds, from above and from below */
                    float thr2 = 0.05f;
                    ops->tile_i8(q, nq, q_stride, rows, nr, stride, len, qs, qe, ql, rs, re, thr2,
                                 keep, sure);
                    for (size_t i = 0; i < nq; i++)
                        for (size_t j = 0; j < nr; j++) {
                            double dq =
                                (double)qs[i] * (double)rs[j] *
                                (double)tile_ref_dot(q + i * q_stride, rows + j * stride, len);
                            double e = (double)qe[i] * (double)re[j] + (double)ql[i];
                            double ub = dq + e, lb = dq - e;
                            if (fabs(ub - (double)thr2) > 1e-5 * (1.0 + fabs(ub)) &&
                                ((keep[i] >> j) & 1) != (ub >= (double)thr2)) {
                                print_error("%s tile bound len=%zu q %zu row %zu: ub %.9g\n",
                                            ops->name, len, i, j, ub);
                                fail();
                            }
                            if (fabs(lb - (double)thr2) > 1e-5 * (1.0 + fabs(lb)) &&
                                ((sure[i] >> j) & 1) != (lb >= (double)thr2)) {
                                print_error("%s tile bound len=%zu q %zu row %zu: lb %.9g\n",
                                            ops->name, len, i, j, lb);
                                fail();
                            }
                        }
                }
        }
        free(q);
        free(rows);
    }
}

static void test_quantize(void **state)
{
    (void)state;
    uint64_t s = seed + 23;
    float x[300];
    int8_t c[300];
    uint8_t u[300];
    for (size_t n = 1; n <= 300; n += 37) {
        for (size_t i = 0; i < n; i++)
            x[i] = rng_float(&s);
        float scale, err, scale2, err2;
        mem_vec_quantize_i8(x, n, c, &scale, &err);
        mem_vec_quantize_u8(x, n, u, &scale2, &err2);
        assert_true(scale == scale2 && err == err2);
        double e2 = 0;
        for (size_t i = 0; i < n; i++) {
            assert_true(c[i] >= -127 && c[i] <= 127);
            assert_int_equal((int)u[i], (int)c[i] + 128);
            double d = (double)x[i] - (double)scale * c[i];
            assert_true(fabs(d) <= (double)scale * 0.5000001);
            e2 += d * d;
        }
        assert_true(sqrt(e2) <= (double)err);
    }
    float z[4] = {0};
    float scale, err;
    mem_vec_quantize_i8(z, 4, c, &scale, &err);
    assert_true(scale == 1.0f && c[0] == 0 && err >= 0.0f);
}

/* mem_vec_quantize_i8 as it was written first, with libm's rounding: the codes, scale and
 * error must stay these bit for bit (stored rows and queries are quantized by both). */
static void quantize_libm(const float *x, size_t n, int8_t *codes, float *scale, float *err)
{
    float m = 0.0f;
    for (size_t i = 0; i < n; i++)
        m = fabsf(x[i]) > m ? fabsf(x[i]) : m;
    float s = m > 0.0f ? m / 127.0f : 1.0f, inv = m > 0.0f ? 127.0f / m : 0.0f;
    double e2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        float c = nearbyintf(x[i] * inv);
        c = c > 127.0f ? 127.0f : c < -127.0f ? -127.0f : c;
        codes[i] = (int8_t)c;
        double d = (double)x[i] - (double)s * (double)c;
        e2 += d * d;
    }
    *scale = s;
    *err = nextafterf((float)(sqrt(e2) * (1.0 + 1e-6)), HUGE_VALF);
}

static void test_quantize_rounding(void **state)
{
    (void)state;
    float x[1024], scale, err, rs, re;
    int8_t c[1024], rc[1024];
    /* scale 1: every half-way point from -126.5 to 126.5 (ties to even), and their
     * neighbours one ulp either side */
    size_t n = 0;
    x[n++] = 127.0f;
    for (int k = -127; k <= 126; k++) {
        float h = (float)k + 0.5f;
        x[n++] = h;
        x[n++] = nextafterf(h, 1e9f);
        x[n++] = nextafterf(h, -1e9f);
    }
    mem_vec_quantize_i8(x, n, c, &scale, &err);
    quantize_libm(x, n, rc, &rs, &re);
    assert_true(scale == 1.0f && rs == 1.0f && err == re);
    assert_memory_equal(c, rc, n);
    assert_true(c[1] == -126 && c[4] == -126 && c[7] == -124); /* -126.5, -125.5, -124.5 */
    /* random vectors of every scale, with exact zeros and the extremes */
    uint64_t s = seed + 29;
    for (int round = 0; round < 2000; round++) {
        n = (size_t)(rng_next(&s) % 512) + 1;
        float mag = ldexpf(1.0f, (int)(rng_next(&s) % 60) - 30);
        for (size_t i = 0; i < n; i++) {
            uint64_t r = rng_next(&s);
            x[i] = r % 17 == 0 ? 0.0f : rng_float(&s) * mag;
            if (r % 29 == 0) x[i] = -x[i];
        }
        mem_vec_quantize_i8(x, n, c, &scale, &err);
        quantize_libm(x, n, rc, &rs, &re);
        if (scale != rs || err != re || memcmp(c, rc, n) != 0)
            fail_msg("seed %llu round %d: the codes differ from libm's rounding",
                     (unsigned long long)seed, round);
    }
}

static void test_scalar_is_reference_order(void **state)
{
    (void)state;
    /* The scalar kernel sums left to right in float: the reference other code relies on. */
    float a[3] = {1.0e8f, 1.0f, -1.0e8f}, b[3] = {1.0f, 1.0f, 1.0f};
    assert_true(mem_vec_dot_f32_scalar(a, b, 3) == 0.0f);
    float out[1];
    mem_vec_dot_rows_f32_scalar(b, a, 1, 3, 3, out);
    assert_true(out[0] == 0.0f);
}

static void test_dispatch(void **state)
{
    (void)state;
    mem_vec_isa_t isa;
    assert_int_equal(mem_vec_isa_parse("scalar", &isa), 0);
    assert_int_equal(isa, MEM_VEC_SCALAR);
    assert_int_equal(mem_vec_isa_parse("avx2", &isa), 0);
    assert_int_equal(isa, MEM_VEC_AVX2);
    assert_int_equal(mem_vec_isa_parse("avx512", &isa), 0);
    assert_int_equal(isa, MEM_VEC_AVX512);
    assert_int_equal(mem_vec_isa_parse("neon", &isa), 0);
    assert_int_equal(isa, MEM_VEC_NEON);
    assert_int_equal(mem_vec_isa_parse("sse", &isa), -1);
    assert_int_equal(mem_vec_isa_parse("", &isa), -1);

    assert_non_null(mem_vec_ops_for(MEM_VEC_SCALAR));
    assert_null(mem_vec_ops_for(MEM_VEC_ISA_COUNT));
    mem_vec_isa_t best = mem_vec_best_isa();
    assert_non_null(mem_vec_ops_for(best));
    for (int i = best + 1; i < MEM_VEC_ISA_COUNT; i++)
        assert_null(mem_vec_ops_for((mem_vec_isa_t)i));
#if defined(__x86_64__)
    assert_null(mem_vec_ops_for(MEM_VEC_NEON));
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
        assert_int_equal(best, MEM_VEC_AVX512);
#endif
    /* init switches the table; an ISA the host lacks leaves it unchanged */
    assert_int_equal(mem_vec_init(MEM_VEC_SCALAR), 0);
    assert_ptr_equal(mem_vec_ops(), mem_vec_ops_for(MEM_VEC_SCALAR));
    assert_int_equal(mem_vec_init(best), 0);
    assert_ptr_equal(mem_vec_ops(), mem_vec_ops_for(best));
    assert_string_equal(mem_vec_ops()->name, best == MEM_VEC_SCALAR   ? "scalar"
                                             : best == MEM_VEC_AVX2   ? "avx2"
                                             : best == MEM_VEC_AVX512 ? "avx512"
                                                                      : "neon");
    for (int i = 0; i < MEM_VEC_ISA_COUNT; i++)
        if (!mem_vec_ops_for((mem_vec_isa_t)i)) {
            assert_int_equal(mem_vec_init((mem_vec_isa_t)i), -1);
            assert_ptr_equal(mem_vec_ops(), mem_vec_ops_for(best));
        }
}

static void test_normalize(void **state)
{
    (void)state;
    float v[4] = {3.0f, 0.0f, 4.0f, 0.0f};
    assert_int_equal(mem_vec_normalize(v, 4), 0);
    assert_true(fabsf(v[0] - 0.6f) < 1e-7f && fabsf(v[2] - 0.8f) < 1e-7f);
    float z[3] = {0};
    assert_int_equal(mem_vec_normalize(z, 3), -1);
    float nf[2] = {1.0f, NAN};
    assert_int_equal(mem_vec_normalize(nf, 2), -1);
    assert_true(nf[0] == 1.0f);
}

int main(int argc, char **argv)
{
    const char *env = getenv("MEM_TEST_SEED");
    seed = env ? strtoull(env, NULL, 10) : 20260906ull;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dot_every_isa),
        cmocka_unit_test(test_dot_rows_every_isa),
        cmocka_unit_test(test_dot_rows_equal_rows_equal_scores),
        cmocka_unit_test(test_select_ge_every_isa),
        cmocka_unit_test(test_sum_every_isa),
        cmocka_unit_test(test_dot_rows_i8_every_isa),
        cmocka_unit_test(test_tile_i8_every_isa),
        cmocka_unit_test(test_quantize),
        cmocka_unit_test(test_quantize_rounding),
        cmocka_unit_test(test_scalar_is_reference_order),
        cmocka_unit_test(test_dispatch),
        cmocka_unit_test(test_normalize),
    };
    if (argc > 1) cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
