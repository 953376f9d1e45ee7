/* vec_avx2.c - AVX2 + FMA kernels (x86-64)
 * SPDX-License-Identifier: MIT
 *
 * ISA: AVX2 + FMA, built with -mavx2 -mfma for this file only (STYLE section 7).
 * Summation order: 8 lanes accumulate element i into lane i % 8 with FMA in two chains
 * (even and odd 8-float chunks; the tail is a masked load, so no scalar loop), the chains
 * are added, then the lanes are summed by a fixed hadd tree. dot and dot_rows use the
 * same order, so they agree bit for bit.
 * Error bound (tested): |result - exact| <= n * FLT_EPSILON * sum |a_i * b_i|.
 *
 * dot_rows reads rows in memory order (one stream for the prefetcher) and reduces eight
 * rows together with one hadd tree. Every row, the last partial group included, is
 * summed in the same order, so equal rows score bit-equal.
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

/* Tree sum of eight vectors: element j of the result is the sum of a_j's 8 lanes. */
static inline __m256 reduce8(__m256 a0, __m256 a1, __m256 a2, __m256 a3, __m256 a4, __m256 a5,
                             __m256 a6, __m256 a7)
{
    /* h0123 = [s0 s1 s2 s3 (lanes 0-3) | s0 s1 s2 s3 (lanes 4-7)] */
    __m256 h0123 = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
    __m256 h4567 = _mm256_hadd_ps(_mm256_hadd_ps(a4, a5), _mm256_hadd_ps(a6, a7));
    return _mm256_add_ps(_mm256_permute2f128_ps(h0123, h4567, 0x20),
                         _mm256_permute2f128_ps(h0123, h4567, 0x31));
}

/* One row's lane accumulator: chain 0 takes the even 8-float chunks, chain 1 the odd
 * ones; a last full chunk goes to chain 0, the masked tail to chain 1. */
static inline __m256 row_acc(const float *restrict q, const float *restrict x, size_t dim)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= dim; i += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(q + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(q + i + 8), s1);
    }
    if (i + 8 <= dim) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(q + i), s0);
        i += 8;
    }
    if (i < dim) {
        __m256i m = tail_mask(dim - i);
        s1 = _mm256_fmadd_ps(_mm256_maskload_ps(x + i, m), _mm256_maskload_ps(q + i, m), s1);
    }
    return _mm256_add_ps(s0, s1);
}

static float dot_avx2(const float *restrict a, const float *restrict b, size_t n)
{
    __m256 z = _mm256_setzero_ps();
    return _mm_cvtss_f32(_mm256_castps256_ps128(reduce8(row_acc(b, a, n), z, z, z, z, z, z, z)));
}

static void dot_rows_avx2(const float *restrict q, const float *restrict rows, size_t n_rows,
                          size_t dim, size_t stride, float *restrict out)
{
    size_t r = 0;
    __m256 acc[8];
    for (; r + 8 <= n_rows; r += 8) {
        for (size_t j = 0; j < 8; j++)
            acc[j] = row_acc(q, rows + (r + j) * stride, dim);
        _mm256_storeu_ps(out + r,
                         reduce8(acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]));
    }
    if (r < n_rows) { /* the last partial group: same order, unused slots are zero */
        float tmp[8];
        for (size_t j = 0; j < 8; j++)
            acc[j] =
                r + j < n_rows ? row_acc(q, rows + (r + j) * stride, dim) : _mm256_setzero_ps();
        _mm256_storeu_ps(tmp,
                         reduce8(acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]));
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
        unsigned m =
            (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i), c, _CMP_GE_OQ));
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
    if (i < n) a1 = _mm256_add_ps(a1, _mm256_maskload_ps(x + i, tail_mask(n - i)));
    return hsum8(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
}

/* Biased u8 rows: bytes widened to int16, pairs multiplied by the int16 query and added
 * (vpmaddwd) into int32 lanes, exact; the bias is taken off as 128 * sum(q). len is a
 * multiple of 16. */
static void dot_rows_i8_avx2(const int8_t *restrict q, const uint8_t *restrict rows, size_t n_rows,
                             size_t len, size_t stride, float q_scale,
                             const float *restrict row_scale, const float *restrict row_err,
                             float err_scale, float slack, float *restrict out)
{
    int16_t q16[4096 + 32];
    for (size_t i = 0; i < len; i += 16)
        _mm256_storeu_si256(
            (__m256i *)(void *)(q16 + i),
            _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(q + i))));
    int32_t qsum = 0;
    for (size_t i = 0; i < len; i++)
        qsum += q[i];
    for (size_t r = 0; r < n_rows; r++) {
        const uint8_t *x = rows + r * stride;
        __m256i a = _mm256_setzero_si256();
        for (size_t i = 0; i < len; i += 16) {
            __m256i xv =
                _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(x + i)));
            a = _mm256_add_epi32(
                a, _mm256_madd_epi16(xv,
                                     _mm256_loadu_si256((const __m256i *)(const void *)(q16 + i))));
        }
        __m128i h = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
        h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(1, 0, 3, 2)));
        h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(2, 3, 0, 1)));
        int32_t dotq = _mm_cvtsi128_si32(h) - 128 * qsum;
        out[r] = q_scale * row_scale[r] * (float)dotq + err_scale * row_err[r] + slack;
    }
}

const mem_vec_ops_t mem_vec_ops_avx2_table = {
    .isa = MEM_VEC_AVX2,
    .name = "avx2",
    .dot = dot_avx2,
    .dot_rows = dot_rows_avx2,
    .select_ge = select_ge_avx2,
    .sum = sum_avx2,
    .dot_rows_i8 = dot_rows_i8_avx2,
};
#endif
