/* vec_avx2.c - AVX2 + FMA kernels (x86-64)
 * SPDX-License-Identifier: MIT
 *
 * ISA: AVX2 + FMA, built with -mavx2 -mfma for this file only (STYLE section 7).
 * Summation order: 8 lanes accumulate element i into lane i % 8 with FMA (the tail is a
 * masked load, so no scalar loop), then the lanes are summed pairwise. dot uses two
 * chains (even and odd 8-float chunks) added before the lane reduction.
 * Error bound (tested): |result - exact| <= n * FLT_EPSILON * sum |a_i * b_i|.
 *
 * dot_rows handles eight rows at a time: one query load per eight FMAs, eight
 * independent chains (enough to hide FMA latency), and one hadd tree for the eight sums.
 * Every row, the last partial group included, is summed in the same order, so equal rows
 * score bit-equal; dot (two chains) may differ from dot_rows in the last bits.
 */
#include "core/vec.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <stdint.h>

static const int32_t mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

static inline __m256i tail_mask(size_t rem)
{
    return _mm256_loadu_si256((const __m256i *)(const void *)(mask_table + 8 - rem));
}

static inline float hsum8(__m256 v)
{
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s4 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    s4 = _mm_add_ss(s4, _mm_movehdup_ps(s4));
    return _mm_cvtss_f32(s4);
}

static float dot_avx2(const float *restrict a, const float *restrict b, size_t n)
{
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
    }
    if (i + 8 <= n) {
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
        i += 8;
    }
    if (i < n) {
        __m256i m = tail_mask(n - i);
        acc1 = _mm256_fmadd_ps(_mm256_maskload_ps(a + i, m), _mm256_maskload_ps(b + i, m), acc1);
    }
    return hsum8(_mm256_add_ps(acc0, acc1));
}

/* Eight dot products with one summation order per row (whichever slot it sits in), so
 * equal rows get bit-equal scores and ties stay ties. */
static inline __m256 dot8_avx2(const float *restrict q, const float *const x[8], size_t full,
                               size_t rem, __m256i m)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(),
           a3 = _mm256_setzero_ps(), a4 = _mm256_setzero_ps(), a5 = _mm256_setzero_ps(),
           a6 = _mm256_setzero_ps(), a7 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i < full; i += 8) {
        __m256 qv = _mm256_loadu_ps(q + i);
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x[0] + i), qv, a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(x[1] + i), qv, a1);
        a2 = _mm256_fmadd_ps(_mm256_loadu_ps(x[2] + i), qv, a2);
        a3 = _mm256_fmadd_ps(_mm256_loadu_ps(x[3] + i), qv, a3);
        a4 = _mm256_fmadd_ps(_mm256_loadu_ps(x[4] + i), qv, a4);
        a5 = _mm256_fmadd_ps(_mm256_loadu_ps(x[5] + i), qv, a5);
        a6 = _mm256_fmadd_ps(_mm256_loadu_ps(x[6] + i), qv, a6);
        a7 = _mm256_fmadd_ps(_mm256_loadu_ps(x[7] + i), qv, a7);
    }
    if (rem) {
        __m256 qv = _mm256_maskload_ps(q + i, m);
        a0 = _mm256_fmadd_ps(_mm256_maskload_ps(x[0] + i, m), qv, a0);
        a1 = _mm256_fmadd_ps(_mm256_maskload_ps(x[1] + i, m), qv, a1);
        a2 = _mm256_fmadd_ps(_mm256_maskload_ps(x[2] + i, m), qv, a2);
        a3 = _mm256_fmadd_ps(_mm256_maskload_ps(x[3] + i, m), qv, a3);
        a4 = _mm256_fmadd_ps(_mm256_maskload_ps(x[4] + i, m), qv, a4);
        a5 = _mm256_fmadd_ps(_mm256_maskload_ps(x[5] + i, m), qv, a5);
        a6 = _mm256_fmadd_ps(_mm256_maskload_ps(x[6] + i, m), qv, a6);
        a7 = _mm256_fmadd_ps(_mm256_maskload_ps(x[7] + i, m), qv, a7);
    }
    /* h0123 = [s0 s1 s2 s3 (lanes 0-3) | s0 s1 s2 s3 (lanes 4-7)] */
    __m256 h0123 = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
    __m256 h4567 = _mm256_hadd_ps(_mm256_hadd_ps(a4, a5), _mm256_hadd_ps(a6, a7));
    return _mm256_add_ps(_mm256_permute2f128_ps(h0123, h4567, 0x20),
                         _mm256_permute2f128_ps(h0123, h4567, 0x31));
}

static void dot_rows_avx2(const float *restrict q, const float *restrict rows, size_t n_rows,
                          size_t dim, size_t stride, float *restrict out)
{
    size_t full = dim & ~(size_t)7;
    size_t rem = dim - full;
    __m256i m = tail_mask(rem);
    size_t r = 0;
    for (; r + 8 <= n_rows; r += 8) {
        const float *x[8];
        for (int j = 0; j < 8; j++)
            x[j] = rows + (r + (size_t)j) * stride;
        _mm256_storeu_ps(out + r, dot8_avx2(q, x, full, rem, m));
    }
    if (r < n_rows) {
        const float *x[8];
        float tmp[8];
        for (size_t j = 0; j < 8; j++)
            x[j] = rows + (r + j < n_rows ? r + j : n_rows - 1) * stride;
        _mm256_storeu_ps(tmp, dot8_avx2(q, x, full, rem, m));
        for (size_t j = 0; r + j < n_rows; j++)
            out[r + j] = tmp[j];
    }
}

static size_t select_ge_avx2(const float *restrict x, size_t n, float cut,
                             uint32_t *restrict idx_out)
{
    __m256 c = _mm256_set1_ps(cut);
    size_t k = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        unsigned m = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i), c, _CMP_GE_OQ));
        while (m) {
            idx_out[k++] = (uint32_t)(i + (size_t)__builtin_ctz(m));
            m &= m - 1;
        }
    }
    for (; i < n; i++) {
        idx_out[k] = (uint32_t)i;
        k += x[i] >= cut;
    }
    return k;
}

static float sum_avx2(const float *restrict x, size_t n)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(),
           a3 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
        a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + i + 8));
        a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + i + 16));
        a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + i + 24));
    }
    for (; i + 8 <= n; i += 8)
        a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
    if (i < n)
        a1 = _mm256_add_ps(a1, _mm256_maskload_ps(x + i, tail_mask(n - i)));
    return hsum8(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
}

const mem_vec_ops_t mem_vec_ops_avx2_table = {
    .isa = MEM_VEC_AVX2,
    .name = "avx2",
    .dot = dot_avx2,
    .dot_rows = dot_rows_avx2,
    .select_ge = select_ge_avx2,
    .sum = sum_avx2,
};
#endif
