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
        qs_acc =
            _mm512_dpbusd_epi32(qs_acc, ones, _mm512_maskz_loadu_epi8(tail_mask64(len - i), q + i));
    int32_t qsum = _mm512_reduce_add_epi32(qs_acc);
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
#endif
