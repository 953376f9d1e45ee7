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

static void dot_rows_avx2(const float *restrict q, const float *restrict rows, size_t n_rows,
                          size_t dim, size_t stride, float *restrict out)
{
    size_t full = dim & ~(size_t)7;
    size_t rem = dim - full;
    __m256i m = tail_mask(rem);
    size_t r = 0;
    for (; r + 8 <= n_rows; r += 8) {
        const float *x = rows + r * stride;
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(),
               a3 = _mm256_setzero_ps(), a4 = _mm256_setzero_ps(), a5 = _mm256_setzero_ps(),
               a6 = _mm256_setzero_ps(), a7 = _mm256_setzero_ps();
        size_t i = 0;
        for (; i < full; i += 8) {
            __m256 qv = _mm256_loadu_ps(q + i);
            a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), qv, a0);
            a1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + stride + i), qv, a1);
            a2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 2 * stride + i), qv, a2);
            a3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 3 * stride + i), qv, a3);
            a4 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 4 * stride + i), qv, a4);
            a5 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 5 * stride + i), qv, a5);
            a6 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 6 * stride + i), qv, a6);
            a7 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 7 * stride + i), qv, a7);
        }
        if (rem) {
            __m256 qv = _mm256_maskload_ps(q + i, m);
            a0 = _mm256_fmadd_ps(_mm256_maskload_ps(x + i, m), qv, a0);
            a1 = _mm256_fmadd_ps(_mm256_maskload_ps(x + stride + i, m), qv, a1);
            a2 = _mm256_fmadd_ps(_mm256_maskload_ps(x + 2 * stride + i, m), qv, a2);
            a3 = _mm256_fmadd_ps(_mm256_maskload_ps(x + 3 * stride + i, m), qv, a3);
            a4 = _mm256_fmadd_ps(_mm256_maskload_ps(x + 4 * stride + i, m), qv, a4);
            a5 = _mm256_fmadd_ps(_mm256_maskload_ps(x + 5 * stride + i, m), qv, a5);
            a6 = _mm256_fmadd_ps(_mm256_maskload_ps(x + 6 * stride + i, m), qv, a6);
            a7 = _mm256_fmadd_ps(_mm256_maskload_ps(x + 7 * stride + i, m), qv, a7);
        }
        /* h0123 = [s0 s1 s2 s3 (lanes 0-3) | s0 s1 s2 s3 (lanes 4-7)] */
        __m256 h0123 = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
        __m256 h4567 = _mm256_hadd_ps(_mm256_hadd_ps(a4, a5), _mm256_hadd_ps(a6, a7));
        __m256 res = _mm256_add_ps(_mm256_permute2f128_ps(h0123, h4567, 0x20),
                                   _mm256_permute2f128_ps(h0123, h4567, 0x31));
        _mm256_storeu_ps(out + r, res);
    }
    for (; r < n_rows; r++)
        out[r] = dot_avx2(q, rows + r * stride, dim);
}

const mem_vec_ops_t mem_vec_ops_avx2_table = {
    .isa = MEM_VEC_AVX2,
    .name = "avx2",
    .dot = dot_avx2,
    .dot_rows = dot_rows_avx2,
};
#endif
