/* vec_avx512vnni.c - AVX-512 VNNI int8 pre-filter kernel (x86-64)
 * SPDX-License-Identifier: MIT
 *
 * ISA: AVX-512F/BW/VL + VNNI, built with -mavx512f -mavx512vl -mavx512bw -mavx512vnni
 * for this file only (mk/engine.mk). vec_dispatch.c hands out the table that uses it only
 * when __builtin_cpu_supports("avx512vnni").
 * vpdpbusd multiplies the rows' biased u8 bytes by the query's s8 codes, four at a time,
 * into int32 lanes: exact. The lanes are summed in int32 and the bias is taken off as
 * 128 * sum(q) (the query is zero past len, so padding bytes do not count).
 *
 * The graph's tile kernel (tile_i8) scores 4 queries x 4 rows per step: sixteen int32
 * accumulators in registers, each 64-byte step loads the four rows and the four queries
 * once (eight loads for sixteen vpdpbusd, where one query at a time against the rows
 * loads twice per vpdpbusd), and the sixteen sums come out of one reduction into a single
 * vector, where the bounds of all sixteen pairs are computed and compared at once.
 */
#include "core/vec.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <stdint.h>

#include "core/vec_avx512_int.h"

static inline __m512i row_vnni(const int8_t *restrict q, const uint8_t *restrict x, size_t len,
                               __mmask64 tail)
{
    __m512i acc = _mm512_setzero_si512();
    size_t i = 0;
    for (; i + 64 <= len; i += 64)
        acc = _mm512_dpbusd_epi32(acc, _mm512_loadu_si512(x + i), _mm512_loadu_si512(q + i));
    if (i < len)
        acc = _mm512_dpbusd_epi32(acc, _mm512_maskz_loadu_epi8(tail, x + i),
                                  _mm512_maskz_loadu_epi8(tail, q + i));
    return acc;
}

/* sum(q[0..len)) of one query, exact (ones times the codes). */
static inline int32_t qsum_vnni(const int8_t *restrict q, size_t len)
{
    __m512i acc = _mm512_setzero_si512();
    const __m512i ones = _mm512_set1_epi8(1);
    size_t i = 0;
    for (; i + 64 <= len; i += 64)
        acc = _mm512_dpbusd_epi32(acc, ones, _mm512_loadu_si512(q + i));
    if (i < len)
        acc = _mm512_dpbusd_epi32(acc, ones, _mm512_maskz_loadu_epi8(tail_mask64(len - i), q + i));
    return _mm512_reduce_add_epi32(acc);
}

void mem_vec_dot_rows_i8_avx512vnni(const int8_t *restrict q, const uint8_t *restrict rows,
                                    size_t n_rows, size_t len, size_t stride, float q_scale,
                                    const float *restrict row_scale, const float *restrict row_err,
                                    float err_scale, float slack, float *restrict out)
{
    int32_t qsum = qsum_vnni(q, len);
    __mmask64 tail = tail_mask64(len % 64);
    const __m256i bias = _mm256_set1_epi32(128 * qsum);
    const __m256 qs = _mm256_set1_ps(q_scale), es = _mm256_set1_ps(err_scale),
                 sl = _mm256_set1_ps(slack);
    size_t r = 0;
    if (len == 128) { /* common dim 128 path: query in two registers, fully unrolled */
        __m512i q0 = _mm512_loadu_si512(q), q1 = _mm512_loadu_si512(q + 64);
        for (; r + 8 <= n_rows; r += 8) {
            const uint8_t *x = rows + r * stride;
#define ROW(j)                                                                                     \
    _mm512_dpbusd_epi32(                                                                           \
        _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_loadu_si512(x + (j)*stride), q0),       \
        _mm512_loadu_si512(x + (j)*stride + 64), q1)
            const __m512i acc[8] = {ROW(0), ROW(1), ROW(2), ROW(3), ROW(4), ROW(5), ROW(6), ROW(7)};
#undef ROW
            i8_bound8(reduce8_i32(acc), bias, qs, es, sl, row_scale + r, row_err + r, out + r, 8);
        }
    }
    for (; r < n_rows; r += 8) {
        size_t nr = n_rows - r < 8 ? n_rows - r : 8;
        __m512i acc[8];
        for (size_t j = 0; j < 8; j++)
            acc[j] =
                j < nr ? row_vnni(q, rows + (r + j) * stride, len, tail) : _mm512_setzero_si512();
        i8_bound8(reduce8_i32(acc), bias, qs, es, sl, row_scale + r, row_err + r, out + r, nr);
    }
}

/* One 64-byte step (or the masked tail) of the 4 x 4 block: rows x0..x3 against queries
 * q0..q3, query t's four sums in a<t>0..a<t>3. Named accumulators (not an array), so they
 * stay in registers. */
#define QUERY_STEP(w, a0, a1, a2, a3)                                                              \
    do {                                                                                           \
        a0 = _mm512_dpbusd_epi32(a0, r0, w);                                                       \
        a1 = _mm512_dpbusd_epi32(a1, r1, w);                                                       \
        a2 = _mm512_dpbusd_epi32(a2, r2, w);                                                       \
        a3 = _mm512_dpbusd_epi32(a3, r3, w);                                                       \
    } while (0)
#define TILE_STEP(ld, off)                                                                         \
    do {                                                                                           \
        __m512i r0 = ld(x0 + (off)), r1 = ld(x1 + (off)), r2 = ld(x2 + (off)),                     \
                r3 = ld(x3 + (off));                                                               \
        QUERY_STEP(ld(q0 + (off)), a00, a01, a02, a03);                                            \
        QUERY_STEP(ld(q1 + (off)), a10, a11, a12, a13);                                            \
        QUERY_STEP(ld(q2 + (off)), a20, a21, a22, a23);                                            \
        QUERY_STEP(ld(q3 + (off)), a30, a31, a32, a33);                                            \
    } while (0)
#define LOAD_FULL(p) _mm512_loadu_si512((const void *)(p))
#define LOAD_TAIL(p) _mm512_maskz_loadu_epi8(tail, (const void *)(p))

void mem_vec_tile_i8_avx512vnni(const int8_t *restrict q, size_t n_q, size_t q_stride,
                                const uint8_t *restrict rows, size_t n_rows, size_t stride,
                                size_t len, const float *restrict q_scale,
                                const float *restrict q_err, const float *restrict q_slack,
                                const float *restrict row_scale, const float *restrict row_err,
                                float threshold, uint64_t *restrict keep, uint64_t *restrict sure)
{
    const __m512 thr = _mm512_set1_ps(threshold);
    const __mmask64 tail = tail_mask64(len % 64);
    /* lane 4 * t + j: query t, row j */
    const __m512i lane_q = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    const __m512i lane_r = _mm512_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3);
    for (size_t i0 = 0; i0 < n_q; i0 += 4) {
        size_t qi[4]; /* a short last group repeats its last query; its bits are dropped */
        for (size_t t = 0; t < 4; t++)
            qi[t] = i0 + t < n_q ? i0 + t : n_q - 1;
        const int8_t *q0 = q + qi[0] * q_stride, *q1 = q + qi[1] * q_stride,
                     *q2 = q + qi[2] * q_stride, *q3 = q + qi[3] * q_stride;
        const __m512i qsum = _mm512_permutexvar_epi32(
            lane_q, _mm512_setr_epi32(qsum_vnni(q0, len), qsum_vnni(q1, len), qsum_vnni(q2, len),
                                      qsum_vnni(q3, len), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
        const __m512i bias = _mm512_slli_epi32(qsum, 7); /* 128 * sum(q) */
        const __m128 qs4 = _mm_setr_ps(q_scale[qi[0]], q_scale[qi[1]], q_scale[qi[2]],
                                       q_scale[qi[3]]),
                     qe4 = _mm_setr_ps(q_err[qi[0]], q_err[qi[1]], q_err[qi[2]], q_err[qi[3]]),
                     ql4 = _mm_setr_ps(q_slack[qi[0]], q_slack[qi[1]], q_slack[qi[2]],
                                       q_slack[qi[3]]);
        const __m512 qs = _mm512_permutexvar_ps(lane_q, _mm512_castps128_ps512(qs4));
        const __m512 qe = _mm512_permutexvar_ps(lane_q, _mm512_castps128_ps512(qe4));
        const __m512 ql = _mm512_permutexvar_ps(lane_q, _mm512_castps128_ps512(ql4));
        uint64_t k[4] = {0, 0, 0, 0}, u[4] = {0, 0, 0, 0};
        for (size_t j = 0; j < n_rows; j += 4) {
            size_t rj[4]; /* a short last group repeats its last row; its bits are dropped */
            for (size_t t = 0; t < 4; t++)
                rj[t] = j + t < n_rows ? j + t : n_rows - 1;
            const uint8_t *x0 = rows + rj[0] * stride, *x1 = rows + rj[1] * stride,
                          *x2 = rows + rj[2] * stride, *x3 = rows + rj[3] * stride;
            __m512i a00 = _mm512_setzero_si512(), a01 = a00, a02 = a00, a03 = a00, a10 = a00,
                    a11 = a00, a12 = a00, a13 = a00, a20 = a00, a21 = a00, a22 = a00, a23 = a00,
                    a30 = a00, a31 = a00, a32 = a00, a33 = a00;
            size_t i = 0;
            for (; i + 64 <= len; i += 64)
                TILE_STEP(LOAD_FULL, i);
            if (i < len) TILE_STEP(LOAD_TAIL, i);
            const __m512i lo[8] = {a00, a01, a02, a03, a10, a11, a12, a13},
                          hi[8] = {a20, a21, a22, a23, a30, a31, a32, a33};
            __m512i dots =
                _mm512_inserti64x4(_mm512_castsi256_si512(reduce8_i32(lo)), reduce8_i32(hi), 1);
            __m512 d = _mm512_cvtepi32_ps(_mm512_sub_epi32(dots, bias));
            const __m128 rs4 = _mm_setr_ps(row_scale[rj[0]], row_scale[rj[1]], row_scale[rj[2]],
                                           row_scale[rj[3]]),
                         re4 = _mm_setr_ps(row_err[rj[0]], row_err[rj[1]], row_err[rj[2]],
                                           row_err[rj[3]]);
            __m512 rs = _mm512_permutexvar_ps(lane_r, _mm512_castps128_ps512(rs4));
            __m512 re = _mm512_permutexvar_ps(lane_r, _mm512_castps128_ps512(re4));
            /* the same roundings, in the same order, as the scalar tile */
            __m512 pa = _mm512_mul_ps(_mm512_mul_ps(qs, rs), d), pb = _mm512_mul_ps(qe, re);
            __m512 ub = _mm512_add_ps(_mm512_add_ps(pa, pb), ql);
            __m512 lb = _mm512_sub_ps(_mm512_sub_ps(pa, pb), ql);
            uint64_t m = _mm512_cmp_ps_mask(ub, thr, _CMP_NLT_UQ);
            uint64_t v = _mm512_cmp_ps_mask(lb, thr, _CMP_GE_OQ);
            uint64_t valid = n_rows - j >= 4 ? 0xf : ((uint64_t)1 << (n_rows - j)) - 1;
            for (int t = 0; t < 4; t++) {
                k[t] |= ((m >> (4 * t)) & valid) << j;
                u[t] |= ((v >> (4 * t)) & valid) << j;
            }
        }
        for (size_t t = 0; t < 4 && i0 + t < n_q; t++) {
            keep[i0 + t] = k[t];
            sure[i0 + t] = u[t];
        }
    }
}
#undef TILE_STEP
#undef QUERY_STEP
#undef LOAD_FULL
#undef LOAD_TAIL
#endif
