/* vec_avx512.c - AVX-512F kernels (x86-64)
 * SPDX-License-Identifier: MIT
 *
 * ISA: AVX-512F (+VL/DQ/BW allowed by the per-file flags; only F is used), built with
 * -mavx512f -mavx512vl -mavx512bw -mavx512dq -mfma for this file only (STYLE section 7).
 * Summation order: 16 lanes accumulate element i into lane i % 16 with FMA in two chains
 * (even and odd 16-float chunks; the tail is a masked load, so no scalar loop), the
 * chains are added, then the 16 lanes are summed by a fixed tree. dot and dot_rows use
 * the same order, so they agree bit for bit.
 * Error bound (tested): |result - exact| <= n * FLT_EPSILON * sum |a_i * b_i|.
 *
 * dot_rows reads the rows in memory order (one row at a time: the hardware prefetcher
 * sees a single stream, which measured ~10 % faster than interleaving eight rows), and
 * reduces eight rows' accumulators together with a transpose-and-add tree ending in one
 * 8-float store. dim 128 keeps the query in registers. Every row, the last partial group
 * included, is summed in the same order, so equal rows score bit-equal.
 */
#include "core/vec.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <stdint.h>

#include "core/vec_avx512_int.h"

/* One row's lane accumulator: chain 0 takes the even 16-float chunks, chain 1 the odd
 * ones; a last full chunk goes to chain 0, the masked tail to chain 1. */
static inline __m512 row_acc(const float *restrict q, const float *restrict x, size_t dim)
{
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 32 <= dim; i += 32) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(q + i), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(q + i + 16), s1);
    }
    if (i + 16 <= dim) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(q + i), s0);
        i += 16;
    }
    if (i < dim) {
        __mmask16 m = tail_mask(dim - i);
        s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, q + i), s1);
    }
    return _mm512_add_ps(s0, s1);
}

/* row_acc for dim == 128 with the query held in eight registers (same order). */
static inline __m512 row_acc128(const __m512 qv[8], const float *restrict x)
{
    __m512 s0 = _mm512_mul_ps(_mm512_loadu_ps(x), qv[0]);
    __m512 s1 = _mm512_mul_ps(_mm512_loadu_ps(x + 16), qv[1]);
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + 32), qv[2], s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + 48), qv[3], s1);
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + 64), qv[4], s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + 80), qv[5], s1);
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + 96), qv[6], s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + 112), qv[7], s1);
    return _mm512_add_ps(s0, s1);
}

static float dot_avx512(const float *restrict a, const float *restrict b, size_t n)
{
    __m512 z = _mm512_setzero_ps();
    return _mm_cvtss_f32(_mm256_castps256_ps128(reduce8(row_acc(b, a, n), z, z, z, z, z, z, z)));
}

static void dot_rows_avx512(const float *restrict q, const float *restrict rows, size_t n_rows,
                            size_t dim, size_t stride, float *restrict out)
{
    size_t r = 0;
    __m512 acc[8];
    if (dim == 128) {
        __m512 qv[8];
        for (int c = 0; c < 8; c++)
            qv[c] = _mm512_loadu_ps(q + 16 * c);
        for (; r + 8 <= n_rows; r += 8) {
            for (size_t j = 0; j < 8; j++)
                acc[j] = row_acc128(qv, rows + (r + j) * stride);
            _mm256_storeu_ps(
                out + r, reduce8(acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]));
        }
    } else {
        for (; r + 8 <= n_rows; r += 8) {
            for (size_t j = 0; j < 8; j++)
                acc[j] = row_acc(q, rows + (r + j) * stride, dim);
            _mm256_storeu_ps(
                out + r, reduce8(acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]));
        }
    }
    if (r < n_rows) { /* the last partial group: same order, unused slots are zero */
        float tmp[8];
        for (size_t j = 0; j < 8; j++)
            acc[j] =
                r + j < n_rows ? row_acc(q, rows + (r + j) * stride, dim) : _mm512_setzero_ps();
        _mm256_storeu_ps(tmp,
                         reduce8(acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]));
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
    /* Register compress + plain store: a compress straight to memory is microcoded and
     * slow on some cores (AMD Zen 4). A full chunk writes 16 slots from k; k <= i and
     * i + 16 <= n, so it stays inside idx_out's n slots. */
    for (; i + 16 <= n; i += 16) {
        __mmask16 m = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + i), c, _CMP_GE_OQ);
        if (m) {
            _mm512_storeu_si512((void *)(idx_out + k), _mm512_maskz_compress_epi32(m, iv));
            k += (size_t)__builtin_popcount((unsigned)m);
        }
        iv = _mm512_add_epi32(iv, step);
    }
    if (i < n) {
        __mmask16 t = tail_mask(n - i);
        __mmask16 m = _mm512_mask_cmp_ps_mask(t, _mm512_maskz_loadu_ps(t, x + i), c, _CMP_GE_OQ);
        unsigned pc = (unsigned)__builtin_popcount((unsigned)m);
        _mm512_mask_storeu_epi32(idx_out + k, tail_mask(pc), _mm512_maskz_compress_epi32(m, iv));
        k += pc;
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
    if (i < n) a1 = _mm512_add_ps(a1, _mm512_maskz_loadu_ps(tail_mask(n - i), x + i));
    return hsum16(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

/* Biased u8 rows: bytes widened to int16, pairs multiplied by the int16 query and added
 * (vpmaddwd) into int32 lanes, exact; the bias is taken off once per row as 128 * sum(q).
 * len is a multiple of 16. */
static inline __m512i row_u8(const int16_t *restrict q16, const uint8_t *restrict x, size_t len)
{
    __m512i acc = _mm512_setzero_si512();
    size_t i = 0;
    for (; i + 32 <= len; i += 32) {
        __m512i xv =
            _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)(x + i)));
        acc = _mm512_add_epi32(acc, _mm512_madd_epi16(xv, _mm512_loadu_si512(q16 + i)));
    }
    if (i < len) {
        __m256i xv = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(x + i)));
        __m256i p =
            _mm256_madd_epi16(xv, _mm256_loadu_si256((const __m256i *)(const void *)(q16 + i)));
        acc = _mm512_add_epi32(acc, _mm512_zextsi256_si512(p));
    }
    return acc;
}

static void dot_rows_i8_avx512(const int8_t *restrict q, const uint8_t *restrict rows,
                               size_t n_rows, size_t len, size_t stride, float q_scale,
                               const float *restrict row_scale, const float *restrict row_err,
                               float err_scale, float slack, float *restrict out)
{
    int16_t q16[4096 + 32];
    int32_t qsum = 0;
    for (size_t i = 0; i < len; i += 16)
        _mm256_storeu_si256(
            (__m256i *)(void *)(q16 + i),
            _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(q + i))));
    for (size_t i = 0; i < len; i++)
        qsum += q[i];
    const __m256i bias = _mm256_set1_epi32(128 * qsum);
    const __m256 qs = _mm256_set1_ps(q_scale), es = _mm256_set1_ps(err_scale),
                 sl = _mm256_set1_ps(slack);
    for (size_t r = 0; r < n_rows; r += 8) {
        size_t nr = n_rows - r < 8 ? n_rows - r : 8;
        __m512i acc[8];
        for (size_t j = 0; j < 8; j++)
            acc[j] = j < nr ? row_u8(q16, rows + (r + j) * stride, len) : _mm512_setzero_si512();
        i8_bound8(reduce8_i32(acc), bias, qs, es, sl, row_scale + r, row_err + r, out + r, nr);
    }
}

/* The two AVX-512 tables differ only in the int8 kernel. */
#define AVX512_SHARED_KERNELS                                                                      \
    .isa = MEM_VEC_AVX512, .name = "avx512", .dot = dot_avx512, .dot_rows = dot_rows_avx512,       \
    .select_ge = select_ge_avx512, .sum = sum_avx512

const mem_vec_ops_t mem_vec_ops_avx512_table = {
    AVX512_SHARED_KERNELS,
    .dot_rows_i8 = dot_rows_i8_avx512,
};

/* For hosts that have AVX-512 VNNI. */
const mem_vec_ops_t mem_vec_ops_avx512vnni_table = {
    AVX512_SHARED_KERNELS,
    .dot_rows_i8 = mem_vec_dot_rows_i8_avx512vnni,
    .tile_i8 = mem_vec_tile_i8_avx512vnni,
};
#undef AVX512_SHARED_KERNELS
#endif
