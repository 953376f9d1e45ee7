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

/* dot_rows over listed rows: the same row_acc and reduce8 tree, eight listed rows at a time
 * (their chains interleave, as in a full pass). */
static void dot_rows_at_avx2(const float *restrict q, const float *restrict rows,
                             const uint32_t *restrict idx, size_t n, size_t dim, size_t stride,
                             float *restrict out)
{
    __m256 acc[8];
    for (size_t r = 0; r < n; r += 8) {
        float tmp[8];
        for (size_t j = 0; j < 8; j++)
            acc[j] = r + j < n ? row_acc(q, rows + (size_t)idx[r + j] * stride, dim)
                               : _mm256_setzero_ps();
        _mm256_storeu_ps(tmp,
                         reduce8(acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]));
        for (size_t j = 0; j < 8 && r + j < n; j++)
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

static inline __m256i load_half(const void *p)
{
    return _mm256_inserti128_si256(_mm256_setzero_si256(), _mm_loadu_si128((const __m128i *)p), 0);
}

static inline __m256i hsum8_epi32(__m256i a0, __m256i a1, __m256i a2, __m256i a3, __m256i a4,
                                  __m256i a5, __m256i a6, __m256i a7)
{
    __m256i h0 = _mm256_hadd_epi32(_mm256_hadd_epi32(a0, a1), _mm256_hadd_epi32(a2, a3));
    __m256i h1 = _mm256_hadd_epi32(_mm256_hadd_epi32(a4, a5), _mm256_hadd_epi32(a6, a7));
    return _mm256_add_epi32(_mm256_permute2x128_si256(h0, h1, 0x20),
                            _mm256_permute2x128_si256(h0, h1, 0x31));
}

/* Four rows' int8 dots against the query (the sign trick of the tile below: |c| times q
 * with c's sign, exact in int16 pairs, widened to int32 by vpmaddwd with ones). Four rows
 * per pass is the measured best: eight accumulators spill with the trick's temporaries. */
static inline void i8_rows4(const int8_t *q, const uint8_t *const *x, size_t len, __m256i *a)
{
    const __m256i flip = _mm256_set1_epi8((char)0x80), ones = _mm256_set1_epi16(1);
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
#define I8_STEP(a, xv)                                                                             \
    do {                                                                                           \
        __m256i c = _mm256_xor_si256(xv, flip);                                                    \
        a = _mm256_add_epi32(                                                                      \
            a, _mm256_madd_epi16(                                                                  \
                   _mm256_maddubs_epi16(_mm256_abs_epi8(c), _mm256_sign_epi8(qv, c)), ones));      \
    } while (0)
    for (; i + 32 <= len; i += 32) {
        const __m256i qv = _mm256_loadu_si256((const __m256i *)(const void *)(q + i));
        I8_STEP(a0, _mm256_loadu_si256((const __m256i *)(const void *)(x[0] + i)));
        I8_STEP(a1, _mm256_loadu_si256((const __m256i *)(const void *)(x[1] + i)));
        I8_STEP(a2, _mm256_loadu_si256((const __m256i *)(const void *)(x[2] + i)));
        I8_STEP(a3, _mm256_loadu_si256((const __m256i *)(const void *)(x[3] + i)));
    }
    if (i < len) { /* a half step: the query's high 16 bytes are zero, so they add nothing */
        const __m256i qv = load_half(q + i);
        I8_STEP(a0, load_half(x[0] + i));
        I8_STEP(a1, load_half(x[1] + i));
        I8_STEP(a2, load_half(x[2] + i));
        I8_STEP(a3, load_half(x[3] + i));
    }
#undef I8_STEP
    a[0] = a0, a[1] = a1, a[2] = a2, a[3] = a3;
}

/* The int8 pre-filter, eight rows at a time (two passes of four): the eight int32 dots come
 * out of one hadd tree and the affine bound is one vector expression. A last group of
 * fewer than eight rows repeats its first row in the unused slots, which are computed and
 * never stored. */
static void dot_rows_i8_avx2(const int8_t *restrict q, const uint8_t *restrict rows, size_t n_rows,
                             size_t len, size_t stride, float q_scale,
                             const float *restrict row_scale, const float *restrict row_err,
                             float err_scale, float slack, float *restrict out)
{
    const __m256 qs = _mm256_set1_ps(q_scale), es = _mm256_set1_ps(err_scale),
                 sl = _mm256_set1_ps(slack);
    for (size_t r = 0; r < n_rows; r += 8) {
        size_t nr = n_rows - r < 8 ? n_rows - r : 8;
        const uint8_t *x[8];
        for (size_t j = 0; j < 8; j++)
            x[j] = rows + (r + (j < nr ? j : 0)) * stride;
        __m256i a[8];
        i8_rows4(q, x, len, a);
        i8_rows4(q, x + 4, len, a + 4);
        __m256 sums =
            _mm256_cvtepi32_ps(hsum8_epi32(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]));
        __m256i m = tail_mask(nr);
        __m256 scale = _mm256_mul_ps(qs, _mm256_maskload_ps(row_scale + r, m));
        __m256 err = _mm256_fmadd_ps(es, _mm256_maskload_ps(row_err + r, m), sl);
        _mm256_maskstore_ps(out + r, m, _mm256_fmadd_ps(scale, sums, err));
    }
}

/* Tile of the int8 pre-filter: 4 queries x 2 rows per step, eight int32 accumulators in
 * registers. Products without widening (vpmaddubsw, unsigned x signed bytes): the row's
 * code c = byte - 128 enters as |c| (unsigned) and the query byte takes c's sign, so each
 * pair of products is at most 2 * 128 * 127 < 2^15 (exact, no saturation); vpmaddwd with
 * ones widens the pairs to int32. A zero query byte (the padding) contributes 0. len is a
 * multiple of 16: a last half step runs on the low 128 bits with the high ones zero. */

#define TILE_STEP(w, a0, a1)                                                                       \
    do {                                                                                           \
        a0 = _mm256_add_epi32(                                                                     \
            a0, _mm256_madd_epi16(_mm256_maddubs_epi16(b0, _mm256_sign_epi8(w, s0)), ones));       \
        a1 = _mm256_add_epi32(                                                                     \
            a1, _mm256_madd_epi16(_mm256_maddubs_epi16(b1, _mm256_sign_epi8(w, s1)), ones));       \
    } while (0)

static void tile_i8_avx2(const int8_t *restrict q, size_t n_q, size_t q_stride,
                         const uint8_t *restrict rows, size_t n_rows, size_t stride, size_t len,
                         const float *restrict q_scale, const float *restrict q_err,
                         const float *restrict q_slack, const float *restrict row_scale,
                         const float *restrict row_err, float threshold, uint64_t *restrict keep,
                         uint64_t *restrict sure)
{
    const __m256i ones = _mm256_set1_epi16(1), bias = _mm256_set1_epi8((char)0x80);
    const __m256 thr = _mm256_set1_ps(threshold);
    for (size_t i0 = 0; i0 < n_q; i0 += 4) {
        size_t qi[4]; /* a short last group repeats its last query; its bits are dropped */
        for (size_t t = 0; t < 4; t++)
            qi[t] = i0 + t < n_q ? i0 + t : n_q - 1;
        const int8_t *q0 = q + qi[0] * q_stride, *q1 = q + qi[1] * q_stride,
                     *q2 = q + qi[2] * q_stride, *q3 = q + qi[3] * q_stride;
        /* lanes (2t, 2t + 1) belong to query t */
        const __m256 qs =
            _mm256_setr_ps(q_scale[qi[0]], q_scale[qi[0]], q_scale[qi[1]], q_scale[qi[1]],
                           q_scale[qi[2]], q_scale[qi[2]], q_scale[qi[3]], q_scale[qi[3]]);
        const __m256 qe = _mm256_setr_ps(q_err[qi[0]], q_err[qi[0]], q_err[qi[1]], q_err[qi[1]],
                                         q_err[qi[2]], q_err[qi[2]], q_err[qi[3]], q_err[qi[3]]);
        const __m256 ql =
            _mm256_setr_ps(q_slack[qi[0]], q_slack[qi[0]], q_slack[qi[1]], q_slack[qi[1]],
                           q_slack[qi[2]], q_slack[qi[2]], q_slack[qi[3]], q_slack[qi[3]]);
        uint64_t k0 = 0, k1 = 0, k2 = 0, k3 = 0, u0 = 0, u1 = 0, u2 = 0, u3 = 0;
        for (size_t j = 0; j < n_rows; j += 2) {
            size_t j1 = j + 1 < n_rows ? j + 1 : j;
            const uint8_t *x0 = rows + j * stride, *x1 = rows + j1 * stride;
            __m256i a00 = _mm256_setzero_si256(), a01 = a00, a10 = a00, a11 = a00, a20 = a00,
                    a21 = a00, a30 = a00, a31 = a00;
            size_t i = 0;
            for (; i + 32 <= len; i += 32) {
                __m256i s0 = _mm256_xor_si256(
                    _mm256_loadu_si256((const __m256i *)(const void *)(x0 + i)), bias);
                __m256i s1 = _mm256_xor_si256(
                    _mm256_loadu_si256((const __m256i *)(const void *)(x1 + i)), bias);
                __m256i b0 = _mm256_abs_epi8(s0), b1 = _mm256_abs_epi8(s1);
                TILE_STEP(_mm256_loadu_si256((const __m256i *)(const void *)(q0 + i)), a00, a01);
                TILE_STEP(_mm256_loadu_si256((const __m256i *)(const void *)(q1 + i)), a10, a11);
                TILE_STEP(_mm256_loadu_si256((const __m256i *)(const void *)(q2 + i)), a20, a21);
                TILE_STEP(_mm256_loadu_si256((const __m256i *)(const void *)(q3 + i)), a30, a31);
            }
            if (i < len) { /* 16 bytes left */
                __m256i s0 = _mm256_xor_si256(load_half(x0 + i), bias);
                __m256i s1 = _mm256_xor_si256(load_half(x1 + i), bias);
                __m256i b0 = _mm256_abs_epi8(s0), b1 = _mm256_abs_epi8(s1);
                TILE_STEP(load_half(q0 + i), a00, a01);
                TILE_STEP(load_half(q1 + i), a10, a11);
                TILE_STEP(load_half(q2 + i), a20, a21);
                TILE_STEP(load_half(q3 + i), a30, a31);
            }
            __m256 dots = _mm256_cvtepi32_ps(hsum8_epi32(a00, a01, a10, a11, a20, a21, a30, a31));
            __m256 rs, re; /* lanes (2t, 2t + 1) = rows j, j1 */
            if (j1 != j) {
                rs = _mm256_castpd_ps(
                    _mm256_broadcast_sd((const double *)(const void *)(row_scale + j)));
                re = _mm256_castpd_ps(
                    _mm256_broadcast_sd((const double *)(const void *)(row_err + j)));
            } else {
                rs = _mm256_set1_ps(row_scale[j]);
                re = _mm256_set1_ps(row_err[j]);
            }
            __m256 a = _mm256_mul_ps(_mm256_mul_ps(qs, rs), dots), b = _mm256_mul_ps(qe, re);
            __m256 ub = _mm256_add_ps(_mm256_add_ps(a, b), ql);
            __m256 lb = _mm256_sub_ps(_mm256_sub_ps(a, b), ql);
            uint64_t m = (uint64_t)_mm256_movemask_ps(_mm256_cmp_ps(ub, thr, _CMP_NLT_UQ));
            uint64_t v = (uint64_t)_mm256_movemask_ps(_mm256_cmp_ps(lb, thr, _CMP_GE_OQ));
            if (j1 == j) { /* no second row */
                m &= 0x55;
                v &= 0x55;
            }
            k0 |= (m & 3) << j;
            k1 |= ((m >> 2) & 3) << j;
            k2 |= ((m >> 4) & 3) << j;
            k3 |= ((m >> 6) & 3) << j;
            u0 |= (v & 3) << j;
            u1 |= ((v >> 2) & 3) << j;
            u2 |= ((v >> 4) & 3) << j;
            u3 |= ((v >> 6) & 3) << j;
        }
        keep[i0] = k0;
        sure[i0] = u0;
        if (i0 + 1 < n_q) keep[i0 + 1] = k1, sure[i0 + 1] = u1;
        if (i0 + 2 < n_q) keep[i0 + 2] = k2, sure[i0 + 2] = u2;
        if (i0 + 3 < n_q) keep[i0 + 3] = k3, sure[i0 + 3] = u3;
    }
}
#undef TILE_STEP

const mem_vec_ops_t mem_vec_ops_avx2_table = {
    .isa = MEM_VEC_AVX2,
    .name = "avx2",
    .dot = dot_avx2,
    .dot_rows = dot_rows_avx2,
    .select_ge = select_ge_avx2,
    .sum = sum_avx2,
    .dot_rows_i8 = dot_rows_i8_avx2,
    .tile_i8 = tile_i8_avx2,
    .dot_rows_at = dot_rows_at_avx2,
};
#endif
