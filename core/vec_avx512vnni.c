/* vec_avx512vnni.c - AVX-512 VNNI int8 pre-filter kernel (x86-64)
 * SPDX-License-Identifier: MIT
 *
 * ISA: AVX-512F/BW/VL + VNNI, built with -mavx512f -mavx512vl -mavx512bw -mavx512vnni
 * for this file only (mk/engine.mk). vec_dispatch.c hands out the table that uses it only
 * when __builtin_cpu_supports("avx512vnni").
 * vpdpbusd multiplies the rows' biased u8 bytes by the query's s8 codes, four at a time,
 * into int32 lanes: exact. The lanes are summed in int32 and the bias is taken off as
 * 128 * sum(q) (the query is zero past len, so padding bytes do not count).
 */
#include "core/vec.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <stdint.h>

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

static inline __m256i reduce8_i32(__m512i a0, __m512i a1, __m512i a2, __m512i a3, __m512i a4,
                                  __m512i a5, __m512i a6, __m512i a7)
{
    const __m512i a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
#define PS(x) _mm512_castsi512_ps(x)
#define SI(x) _mm512_castps_si512(x)
    __m512i ab = _mm512_add_epi32(SI(_mm512_unpacklo_ps(PS(a[0]), PS(a[1]))),
                                  SI(_mm512_unpackhi_ps(PS(a[0]), PS(a[1]))));
    __m512i cd = _mm512_add_epi32(SI(_mm512_unpacklo_ps(PS(a[2]), PS(a[3]))),
                                  SI(_mm512_unpackhi_ps(PS(a[2]), PS(a[3]))));
    __m512i ef = _mm512_add_epi32(SI(_mm512_unpacklo_ps(PS(a[4]), PS(a[5]))),
                                  SI(_mm512_unpackhi_ps(PS(a[4]), PS(a[5]))));
    __m512i gh = _mm512_add_epi32(SI(_mm512_unpacklo_ps(PS(a[6]), PS(a[7]))),
                                  SI(_mm512_unpackhi_ps(PS(a[6]), PS(a[7]))));
    __m512i lo = _mm512_add_epi32(SI(_mm512_shuffle_ps(PS(ab), PS(cd), _MM_SHUFFLE(1, 0, 1, 0))),
                                  SI(_mm512_shuffle_ps(PS(ab), PS(cd), _MM_SHUFFLE(3, 2, 3, 2))));
    __m512i hi = _mm512_add_epi32(SI(_mm512_shuffle_ps(PS(ef), PS(gh), _MM_SHUFFLE(1, 0, 1, 0))),
                                  SI(_mm512_shuffle_ps(PS(ef), PS(gh), _MM_SHUFFLE(3, 2, 3, 2))));
    __m512i x2 = _mm512_shuffle_i32x4(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
    __m512i y2 = _mm512_shuffle_i32x4(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
    __m512i s = _mm512_add_epi32(x2, y2);
    __m512i t = _mm512_shuffle_i32x4(s, s, _MM_SHUFFLE(3, 1, 2, 0));
    return _mm256_add_epi32(_mm512_castsi512_si256(t), _mm512_extracti64x4_epi64(t, 1));
#undef PS
#undef SI
}

void mem_vec_dot_rows_i8_avx512vnni(const int8_t *restrict q, const uint8_t *restrict rows,
                                    size_t n_rows, size_t len, size_t stride, float q_scale,
                                    const float *restrict row_scale, const float *restrict row_err,
                                    float err_scale, float slack, float *restrict out)
{
    /* sum(q) with the same instruction: ones (u8) times the codes (s8) */
    __m512i qs_acc = _mm512_setzero_si512();
    const __m512i ones = _mm512_set1_epi8(1);
    size_t i = 0;
    for (; i + 64 <= len; i += 64)
        qs_acc = _mm512_dpbusd_epi32(qs_acc, ones, _mm512_loadu_si512(q + i));
    if (i < len)
        qs_acc = _mm512_dpbusd_epi32(
            qs_acc, ones, _mm512_maskz_loadu_epi8(((__mmask64)1 << (len - i)) - 1, q + i));
    int32_t qsum = _mm512_reduce_add_epi32(qs_acc);
    size_t rem = len % 64;
    __mmask64 tail = rem ? (((__mmask64)1 << rem) - 1) : 0;
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
            __m256i dots =
                reduce8_i32(ROW(0), ROW(1), ROW(2), ROW(3), ROW(4), ROW(5), ROW(6), ROW(7));
#undef ROW
            __m256 sums = _mm256_cvtepi32_ps(_mm256_sub_epi32(dots, bias));
            __m256 scale = _mm256_mul_ps(qs, _mm256_loadu_ps(row_scale + r));
            __m256 err = _mm256_fmadd_ps(es, _mm256_loadu_ps(row_err + r), sl);
            _mm256_storeu_ps(out + r, _mm256_fmadd_ps(scale, sums, err));
        }
    }
    for (; r < n_rows; r += 8) {
        size_t nr = n_rows - r < 8 ? n_rows - r : 8;
        __m512i acc[8];
        for (size_t j = 0; j < 8; j++)
            acc[j] =
                j < nr ? row_vnni(q, rows + (r + j) * stride, len, tail) : _mm512_setzero_si512();
        __m256 sums = _mm256_cvtepi32_ps(_mm256_sub_epi32(
            reduce8_i32(acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]), bias));
        __mmask8 m = (__mmask8)((1u << nr) - 1u);
        __m256 scale = _mm256_mul_ps(qs, _mm256_maskz_loadu_ps(m, row_scale + r));
        __m256 err = _mm256_fmadd_ps(es, _mm256_maskz_loadu_ps(m, row_err + r), sl);
        _mm256_mask_storeu_ps(out + r, m, _mm256_fmadd_ps(scale, sums, err));
    }
}
#endif
