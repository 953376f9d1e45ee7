/* vec_neon.c - NEON kernels (aarch64, where NEON is baseline); empty elsewhere
 * SPDX-License-Identifier: MIT
 *
 * Summation order: 4 lanes x 2 chains accumulate element i into lane i % 4 of chain
 * (i / 4) % 2 with FMA; the tail is a scalar loop added last.
 * Error bound: |result - exact| <= n * FLT_EPSILON * sum |a_i * b_i|.
 */
#include "core/vec.h"

#if defined(__aarch64__)
#include <arm_neon.h>

static float dot_neon(const float *restrict a, const float *restrict b, size_t n)
{
    float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        acc0 = vfmaq_f32(acc0, vld1q_f32(a + i), vld1q_f32(b + i));
        acc1 = vfmaq_f32(acc1, vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));
    }
    if (i + 4 <= n) {
        acc0 = vfmaq_f32(acc0, vld1q_f32(a + i), vld1q_f32(b + i));
        i += 4;
    }
    float acc = vaddvq_f32(vaddq_f32(acc0, acc1));
    for (; i < n; i++)
        acc += a[i] * b[i];
    return acc;
}

static void dot_rows_neon(const float *restrict q, const float *restrict rows, size_t n_rows,
                          size_t dim, size_t stride, float *restrict out)
{
    size_t r = 0;
    size_t full = dim & ~(size_t)3;
    for (; r + 4 <= n_rows; r += 4) {
        const float *x = rows + r * stride;
        float32x4_t a0 = vdupq_n_f32(0.0f), a1 = vdupq_n_f32(0.0f), a2 = vdupq_n_f32(0.0f),
                    a3 = vdupq_n_f32(0.0f);
        size_t i = 0;
        for (; i < full; i += 4) {
            float32x4_t qv = vld1q_f32(q + i);
            a0 = vfmaq_f32(a0, vld1q_f32(x + i), qv);
            a1 = vfmaq_f32(a1, vld1q_f32(x + stride + i), qv);
            a2 = vfmaq_f32(a2, vld1q_f32(x + 2 * stride + i), qv);
            a3 = vfmaq_f32(a3, vld1q_f32(x + 3 * stride + i), qv);
        }
        float32x4_t s = vpaddq_f32(vpaddq_f32(a0, a1), vpaddq_f32(a2, a3));
        float t[4];
        vst1q_f32(t, s);
        for (; i < dim; i++) {
            t[0] += q[i] * x[i];
            t[1] += q[i] * x[stride + i];
            t[2] += q[i] * x[2 * stride + i];
            t[3] += q[i] * x[3 * stride + i];
        }
        out[r] = t[0];
        out[r + 1] = t[1];
        out[r + 2] = t[2];
        out[r + 3] = t[3];
    }
    for (; r < n_rows; r++)
        out[r] = dot_neon(q, rows + r * stride, dim);
}

static float sum_neon(const float *restrict x, size_t n)
{
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = vdupq_n_f32(0.0f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        a0 = vaddq_f32(a0, vld1q_f32(x + i));
        a1 = vaddq_f32(a1, vld1q_f32(x + i + 4));
    }
    float acc = vaddvq_f32(vaddq_f32(a0, a1));
    for (; i < n; i++)
        acc += x[i];
    return acc;
}

const mem_vec_ops_t mem_vec_ops_neon_table = {
    .isa = MEM_VEC_NEON,
    .name = "neon",
    .dot = dot_neon,
    .dot_rows = dot_rows_neon,
    .select_ge = mem_vec_select_ge_scalar,
    .sum = sum_neon,
};
#endif
