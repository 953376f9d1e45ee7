/* vec_neon.c - NEON kernels (aarch64, where NEON is baseline); empty elsewhere
 * SPDX-License-Identifier: MIT
 *
 * Summation order: dot: 4 lanes x 2 chains accumulate element i into lane i % 4 of chain
 * (i / 4) % 2 with FMA, the tail is a scalar loop added last. dot_rows: one chain per
 * row, four rows at a time, pairwise lane sums, scalar tail; every row (the last partial
 * group included) in the same order, so equal rows tie exactly. (dot and dot_rows may
 * differ in the last bits; the scan only uses dot_rows.)
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

/* Four rows with one summation order per row (whichever slot it sits in). */
static inline void dot4_neon(const float *restrict q, const float *const x[4], size_t dim,
                             float out[4])
{
    size_t full = dim & ~(size_t)3, i = 0;
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = vdupq_n_f32(0.0f), a2 = vdupq_n_f32(0.0f),
                a3 = vdupq_n_f32(0.0f);
    for (; i < full; i += 4) {
        float32x4_t qv = vld1q_f32(q + i);
        a0 = vfmaq_f32(a0, vld1q_f32(x[0] + i), qv);
        a1 = vfmaq_f32(a1, vld1q_f32(x[1] + i), qv);
        a2 = vfmaq_f32(a2, vld1q_f32(x[2] + i), qv);
        a3 = vfmaq_f32(a3, vld1q_f32(x[3] + i), qv);
    }
    float32x4_t s = vpaddq_f32(vpaddq_f32(a0, a1), vpaddq_f32(a2, a3));
    vst1q_f32(out, s);
    for (; i < dim; i++)
        for (int j = 0; j < 4; j++)
            out[j] += q[i] * x[j][i];
}

static void dot_rows_neon(const float *restrict q, const float *restrict rows, size_t n_rows,
                          size_t dim, size_t stride, float *restrict out)
{
    size_t r = 0;
    for (; r + 4 <= n_rows; r += 4) {
        const float *x[4] = {rows + r * stride, rows + (r + 1) * stride, rows + (r + 2) * stride,
                             rows + (r + 3) * stride};
        dot4_neon(q, x, dim, out + r);
    }
    if (r < n_rows) { /* the last partial group: same order, slots repeat the last row */
        const float *x[4];
        float t[4];
        for (size_t j = 0; j < 4; j++)
            x[j] = rows + (r + j < n_rows ? r + j : n_rows - 1) * stride;
        dot4_neon(q, x, dim, t);
        for (size_t j = 0; r + j < n_rows; j++)
            out[r + j] = t[j];
    }
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
