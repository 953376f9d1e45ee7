/* vec_avx512.c - AVX-512F kernels (x86-64)
 * SPDX-License-Identifier: MIT
 *
 * ISA: AVX-512F (+VL/DQ/BW allowed by the per-file flags; only F is used), built with
 * -mavx512f -mavx512vl -mavx512bw -mavx512dq -mfma for this file only (STYLE section 7).
 * Summation order: 16 lanes accumulate element i into lane i % 16 with FMA (the tail is a
 * masked load, so no scalar loop), then the lanes are summed pairwise. dot uses two
 * chains (even and odd 16-float chunks) added before the lane reduction.
 * Error bound (tested): |result - exact| <= n * FLT_EPSILON * sum |a_i * b_i|.
 *
 * dot_rows handles eight rows at a time: the query chunk is loaded once per eight rows,
 * the eight accumulators are independent FMA chains, and the eight horizontal sums are
 * done together by a transpose-and-add tree that ends in one 8-float store. dot_rows
 * sums every row in the same order (one chain, then the tree), the last partial group
 * included, so equal rows score bit-equal; dot (two chains) may differ from it in the
 * last bits.
 */
#include "core/vec.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <stdint.h>

static inline __mmask16 tail_mask(size_t rem)
{
    return (__mmask16)((1u << rem) - 1u);
}

static inline float hsum16(__m512 v)
{
    __m256 s8 = _mm256_add_ps(_mm512_castps512_ps256(v),
                              _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    s4 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    s4 = _mm_add_ss(s4, _mm_movehdup_ps(s4));
    return _mm_cvtss_f32(s4);
}

/* Sums of four vectors, per 128-bit lane: lane L of the result holds
 * [sum4(a.L), sum4(b.L), sum4(c.L), sum4(d.L)]. */
static inline __m512 lane_sums4(__m512 a, __m512 b, __m512 c, __m512 d)
{
    __m512 ab = _mm512_add_ps(_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b));
    __m512 cd = _mm512_add_ps(_mm512_unpacklo_ps(c, d), _mm512_unpackhi_ps(c, d));
    /* ab lane: a0+a2, b0+b2, a1+a3, b1+b3 */
    return _mm512_add_ps(_mm512_shuffle_ps(ab, cd, _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_ps(ab, cd, _MM_SHUFFLE(3, 2, 3, 2)));
}

static float dot_avx512(const float *restrict a, const float *restrict b, size_t n)
{
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc0);
        acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), acc1);
    }
    if (i + 16 <= n) {
        acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc0);
        i += 16;
    }
    if (i < n) {
        __mmask16 m = tail_mask(n - i);
        acc1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), acc1);
    }
    return hsum16(_mm512_add_ps(acc0, acc1));
}

/* Eight dot products with one summation order per row (whichever slot it sits in), so
 * equal rows get bit-equal scores and ties stay ties. */
static inline __m256 dot8_avx512(const float *restrict q, const float *const x[8], size_t full,
                                 __mmask16 m)
{
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(),
           a3 = _mm512_setzero_ps(), a4 = _mm512_setzero_ps(), a5 = _mm512_setzero_ps(),
           a6 = _mm512_setzero_ps(), a7 = _mm512_setzero_ps();
    size_t i = 0;
    for (; i < full; i += 16) {
        __m512 qv = _mm512_loadu_ps(q + i);
        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(x[0] + i), qv, a0);
        a1 = _mm512_fmadd_ps(_mm512_loadu_ps(x[1] + i), qv, a1);
        a2 = _mm512_fmadd_ps(_mm512_loadu_ps(x[2] + i), qv, a2);
        a3 = _mm512_fmadd_ps(_mm512_loadu_ps(x[3] + i), qv, a3);
        a4 = _mm512_fmadd_ps(_mm512_loadu_ps(x[4] + i), qv, a4);
        a5 = _mm512_fmadd_ps(_mm512_loadu_ps(x[5] + i), qv, a5);
        a6 = _mm512_fmadd_ps(_mm512_loadu_ps(x[6] + i), qv, a6);
        a7 = _mm512_fmadd_ps(_mm512_loadu_ps(x[7] + i), qv, a7);
    }
    if (m) {
        __m512 qv = _mm512_maskz_loadu_ps(m, q + i);
        a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x[0] + i), qv, a0);
        a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x[1] + i), qv, a1);
        a2 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x[2] + i), qv, a2);
        a3 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x[3] + i), qv, a3);
        a4 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x[4] + i), qv, a4);
        a5 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x[5] + i), qv, a5);
        a6 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x[6] + i), qv, a6);
        a7 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x[7] + i), qv, a7);
    }
    /* lo: lane L holds [s0 s1 s2 s3] partial sums of lane L, hi: [s4 s5 s6 s7] */
    __m512 lo = lane_sums4(a0, a1, a2, a3), hi = lane_sums4(a4, a5, a6, a7);
    /* x2 = [lo.L0 lo.L2 hi.L0 hi.L2], y2 = [lo.L1 lo.L3 hi.L1 hi.L3] */
    __m512 x2 = _mm512_shuffle_f32x4(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
    __m512 y2 = _mm512_shuffle_f32x4(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
    __m512 s = _mm512_add_ps(x2, y2); /* [lo(L0+L1) lo(L2+L3) hi(L0+L1) hi(L2+L3)] */
    __m512 t = _mm512_shuffle_f32x4(s, s, _MM_SHUFFLE(3, 1, 2, 0)); /* [loA hiA loB hiB] */
    return _mm256_add_ps(_mm512_castps512_ps256(t),
                         _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(t), 1)));
}

static void dot_rows_avx512(const float *restrict q, const float *restrict rows, size_t n_rows,
                            size_t dim, size_t stride, float *restrict out)
{
    size_t full = dim & ~(size_t)15;
    __mmask16 m = tail_mask(dim - full);
    size_t r = 0;
    for (; r + 8 <= n_rows; r += 8) {
        const float *x[8];
        for (int j = 0; j < 8; j++)
            x[j] = rows + (r + (size_t)j) * stride;
        _mm256_storeu_ps(out + r, dot8_avx512(q, x, full, m));
    }
    if (r < n_rows) {
        const float *x[8];
        float tmp[8];
        for (size_t j = 0; j < 8; j++)
            x[j] = rows + (r + j < n_rows ? r + j : n_rows - 1) * stride;
        _mm256_storeu_ps(tmp, dot8_avx512(q, x, full, m));
        for (size_t j = 0; r + j < n_rows; j++)
            out[r + j] = tmp[j];
    }
}

static size_t select_ge_avx512(const float *restrict x, size_t n, float cut,
                               uint32_t *restrict idx_out)
{
    __m512 c = _mm512_set1_ps(cut);
    __m512i iv = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i step = _mm512_set1_epi32(16);
    size_t k = 0, i = 0;
    for (; i + 16 <= n; i += 16) {
        __mmask16 m = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + i), c, _CMP_GE_OQ);
        _mm512_mask_compressstoreu_epi32(idx_out + k, m, iv);
        k += (size_t)__builtin_popcount((unsigned)m);
        iv = _mm512_add_epi32(iv, step);
    }
    if (i < n) {
        __mmask16 t = tail_mask(n - i);
        __mmask16 m = _mm512_mask_cmp_ps_mask(t, _mm512_maskz_loadu_ps(t, x + i), c, _CMP_GE_OQ);
        _mm512_mask_compressstoreu_epi32(idx_out + k, m, iv);
        k += (size_t)__builtin_popcount((unsigned)m);
    }
    return k;
}

static float sum_avx512(const float *restrict x, size_t n)
{
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(),
           a3 = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        a0 = _mm512_add_ps(a0, _mm512_loadu_ps(x + i));
        a1 = _mm512_add_ps(a1, _mm512_loadu_ps(x + i + 16));
        a2 = _mm512_add_ps(a2, _mm512_loadu_ps(x + i + 32));
        a3 = _mm512_add_ps(a3, _mm512_loadu_ps(x + i + 48));
    }
    for (; i + 16 <= n; i += 16)
        a0 = _mm512_add_ps(a0, _mm512_loadu_ps(x + i));
    if (i < n)
        a1 = _mm512_add_ps(a1, _mm512_maskz_loadu_ps(tail_mask(n - i), x + i));
    return hsum16(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

const mem_vec_ops_t mem_vec_ops_avx512_table = {
    .isa = MEM_VEC_AVX512,
    .name = "avx512",
    .dot = dot_avx512,
    .dot_rows = dot_rows_avx512,
    .select_ge = select_ge_avx512,
    .sum = sum_avx512,
};
#endif
