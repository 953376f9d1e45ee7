/* vec_avx512_int.h - lane helpers shared by the AVX-512 kernel files (x86-64)
 * SPDX-License-Identifier: MIT
 *
 * Included only by vec_avx512.c and vec_avx512vnni.c, which are both compiled with the
 * AVX-512 flags (mk/engine.mk, Makefile); every helper is static inline, so each of those
 * files gets its own copy and no other file ever links an AVX-512 instruction.
 * reduce8 and reduce8_i32 apply the same shuffle tree (one to floats, one to int32 lanes),
 * so every kernel sums a row's lanes in the one order the file headers state.
 */
#ifndef MEM_CORE_VEC_AVX512_INT_H
#define MEM_CORE_VEC_AVX512_INT_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

/* The first rem lanes of a 16-float vector (rem in 0..16). */
static inline __mmask16 tail_mask(size_t rem)
{
    return (__mmask16)((1u << rem) - 1u);
}

/* The first rem bytes of a 64-byte vector (rem in 0..63). */
static inline __mmask64 tail_mask64(size_t rem)
{
    return ((__mmask64)1 << rem) - 1u;
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

/* Tree sum of eight vectors: element j of the result is the sum of a_j's 16 lanes. */
static inline __m256 reduce8(__m512 a0, __m512 a1, __m512 a2, __m512 a3, __m512 a4, __m512 a5,
                             __m512 a6, __m512 a7)
{
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

/* Integer version of reduce8 (same shuffles on the bit patterns, integer adds): exact. */
static inline __m256i reduce8_i32(const __m512i a[8])
{
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

/* The int8 kernels' last step for up to eight rows (nr in 1..8): dots are the rows' exact
 * integer products with the biased codes; out[j] = q_scale * row_scale[j] * (dots[j] -
 * bias) + err_scale * row_err[j] + slack. */
static inline void i8_bound8(__m256i dots, __m256i bias, __m256 qs, __m256 es, __m256 sl,
                             const float *row_scale, const float *row_err, float *out, size_t nr)
{
    __m256 sums = _mm256_cvtepi32_ps(_mm256_sub_epi32(dots, bias));
    __mmask8 m = (__mmask8)((1u << nr) - 1u);
    __m256 scale = _mm256_mul_ps(qs, _mm256_maskz_loadu_ps(m, row_scale));
    __m256 err = _mm256_fmadd_ps(es, _mm256_maskz_loadu_ps(m, row_err), sl);
    _mm256_mask_storeu_ps(out, m, _mm256_fmadd_ps(scale, sums, err));
}

#endif
