/* vec_scalar.c - reference kernels: the specification every ISA is tested against
 * SPDX-License-Identifier: MIT
 *
 * Summation order: left to right in float, one accumulator.
 */
#include "core/vec.h"

#include <float.h>
#include <math.h>

float mem_vec_dot_f32_scalar(const float *a, const float *b, size_t n)
{
    float acc = 0.0f;
    for (size_t i = 0; i < n; i++)
        acc += a[i] * b[i];
    return acc;
}

void mem_vec_dot_rows_f32_scalar(const float *q, const float *rows, size_t n_rows, size_t dim,
                                 size_t stride, float *out)
{
    for (size_t r = 0; r < n_rows; r++)
        out[r] = mem_vec_dot_f32_scalar(q, rows + r * stride, dim);
}

void mem_vec_dot_rows_i8_scalar(const int8_t *q, const uint8_t *rows, size_t n_rows, size_t len,
                                size_t stride, float q_scale, const float *row_scale,
                                const float *row_err, float err_scale, float slack, float *out)
{
    for (size_t r = 0; r < n_rows; r++) {
        const uint8_t *x = rows + r * stride;
        int32_t acc = 0;
        for (size_t i = 0; i < len; i++)
            acc += (int32_t)q[i] * ((int32_t)x[i] - 128);
        out[r] = q_scale * row_scale[r] * (float)acc + err_scale * row_err[r] + slack;
    }
}

void mem_vec_dot_rows_at_scalar(const float *q, const float *rows, const uint32_t *idx, size_t n,
                                size_t dim, size_t stride, float *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = mem_vec_dot_f32_scalar(q, rows + (size_t)idx[i] * stride, dim);
}

void mem_vec_tile_i8_scalar(const int8_t *q, size_t n_q, size_t q_stride, const uint8_t *rows,
                            size_t n_rows, size_t stride, size_t len, const float *q_scale,
                            const float *q_err, const float *q_slack, const float *row_scale,
                            const float *row_err, float threshold, uint64_t *keep, uint64_t *sure)
{
    for (size_t i = 0; i < n_q; i++) {
        const int8_t *qi = q + i * q_stride;
        uint64_t k = 0, u = 0;
        for (size_t j = 0; j < n_rows; j++) {
            const uint8_t *x = rows + j * stride;
            int32_t acc = 0;
            for (size_t e = 0; e < len; e++)
                acc += (int32_t)qi[e] * ((int32_t)x[e] - 128);
            float a = q_scale[i] * row_scale[j] * (float)acc, b = q_err[i] * row_err[j];
            k |= (uint64_t) !(a + b + q_slack[i] < threshold) << j;
            u |= (uint64_t)(a - b - q_slack[i] >= threshold) << j;
        }
        keep[i] = k;
        sure[i] = u;
    }
}

#define QUANT_ROUNDER 12582912.0f /* 1.5 * 2^23 */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0 || defined(__FAST_MATH__)
#error "mem_vec_quantize_i8 rounds with float sums: it needs IEEE float arithmetic in float"
#endif

void mem_vec_quantize_i8(const float *x, size_t n, int8_t *codes, float *scale, float *err)
{
    float m = 0.0f;
    for (size_t i = 0; i < n; i++)
        m = fabsf(x[i]) > m ? fabsf(x[i]) : m;
    float s = m > 0.0f ? m / 127.0f : 1.0f;
    float inv = m > 0.0f ? 127.0f / m : 0.0f;
    double e2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        /* any nearby code will do: the error below is measured from the code chosen. This
         * is nearbyintf's code (round to nearest, ties to even) without its libm call, on
         * every element of every insert and query: |x * inv| <= 127 + an ulp, and adding
         * 1.5 * 2^23 leaves no fraction bits, so the float sum is that rounding, and
         * subtracting it back is exact (the sign of a zero differs, which no code shows).
         * The product is a statement of its own: within one expression a compiler may fuse
         * it with the sum (clang does, where FMA is the baseline), rounding it no more. */
        float scaled = x[i] * inv;
        float c = (scaled + QUANT_ROUNDER) - QUANT_ROUNDER;
        c = c > 127.0f ? 127.0f : c < -127.0f ? -127.0f : c;
        codes[i] = (int8_t)c;
        double d = (double)x[i] - (double)s * (double)c;
        e2 += d * d;
    }
    *scale = s;
    /* round up: the bound must hold after the float conversion */
    float e = (float)(sqrt(e2) * (1.0 + 1e-6));
    *err = nextafterf(e, HUGE_VALF);
}

void mem_vec_quantize_u8(const float *x, size_t n, uint8_t *codes, float *scale, float *err)
{
    mem_vec_quantize_i8(x, n, (int8_t *)(void *)codes, scale, err);
    for (size_t i = 0; i < n; i++)
        codes[i] = (uint8_t)((int)(int8_t)codes[i] + 128);
}

float mem_vec_sum_f32_scalar(const float *x, size_t n)
{
    float acc = 0.0f;
    for (size_t i = 0; i < n; i++)
        acc += x[i];
    return acc;
}

size_t mem_vec_select_ge_scalar(const float *x, size_t n, float cut, uint32_t *idx_out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        idx_out[k] = (uint32_t)i; /* branch-free: written always, kept when selected */
        k += x[i] >= cut;
    }
    return k;
}

double mem_vec_dot_f64_scalar(const float *a, const float *b, size_t n)
{
    double acc = 0.0;
    for (size_t i = 0; i < n; i++)
        acc += (double)a[i] * (double)b[i];
    return acc;
}

float mem_vec_norm_ub(const float *x, size_t n)
{
    /* Each square is exact in double (24-bit mantissas), the left-to-right sum of n
     * non-negative terms is within (n - 1) * 2^-53 of its value relatively and the square
     * root adds 2^-53: (n + 2) * DBL_EPSILON covers both, then round up to float. */
    double ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (double)x[i] * (double)x[i];
    if (!isfinite(ss)) return HUGE_VALF;
    double ub = sqrt(ss) * (1.0 + (double)(n + 2) * DBL_EPSILON);
    return nextafterf((float)ub, HUGE_VALF);
}

int mem_vec_normalize(float *v, size_t n)
{
    double ss = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i])) return -1;
        ss += (double)v[i] * (double)v[i];
    }
    if (!(ss > 0.0) || !isfinite(ss)) return -1;
    double inv = 1.0 / sqrt(ss);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)((double)v[i] * inv);
    return 0;
}
