/* vec.h - vector kernels: one ops table per ISA, chosen once at start-up
 * SPDX-License-Identifier: MIT
 *
 * The unit of dispatch is a batch (one query against a block of rows), so the indirect
 * call is paid once per block and the query stays in registers. Kernels never allocate
 * or fail, accept n == 0 and unaligned pointers, and handle their own tails.
 * vec_scalar.c is the reference every other ISA is tested against.
 */
#ifndef MEM_CORE_VEC_H
#define MEM_CORE_VEC_H

#include <stddef.h>
#include <stdint.h>

typedef enum mem_vec_isa {
    MEM_VEC_SCALAR = 0,
    MEM_VEC_AVX2,
    MEM_VEC_AVX512,
    MEM_VEC_NEON,
    MEM_VEC_ISA_COUNT
} mem_vec_isa_t;

typedef float (*mem_vec_dot_fn)(const float *a, const float *b, size_t n);
/* out[r] = dot(q, rows + r * stride) for r < n_rows; stride >= dim, in floats. */
typedef void (*mem_vec_dot_rows_fn)(const float *q, const float *rows, size_t n_rows, size_t dim,
                                    size_t stride, float *out);

/* out[i] = dot(q, rows + idx[i] * stride) for i < n, each bit-equal to dot_rows' score of
 * that row (the graph's exact pass over the pairs its int8 bound keeps, a few scattered
 * rows of a chunk). */
typedef void (*mem_vec_dot_rows_at_fn)(const float *q, const float *rows, const uint32_t *idx,
                                       size_t n, size_t dim, size_t stride, float *out);

/* Writes to idx_out the indices i < n (ascending) with x[i] >= cut (false for NaN);
 * returns how many. idx_out has room for n. Used by the scan to keep only the rows of a
 * block whose similarity can still enter the top K. */
typedef size_t (*mem_vec_select_ge_fn)(const float *x, size_t n, float cut, uint32_t *idx_out);

/* Sum of n floats: a pure read pass at full width (the benches' memory floor). */
typedef float (*mem_vec_sum_fn)(const float *x, size_t n);

/* int8 pre-filter: for each row r < n_rows, with I_r = sum_{i < len} q[i] * (row_r[i] - 128)
 * (exact, in integers; rows hold codes biased by 128, len is a multiple of 16 and q is
 * zero-padded to it, so the rows' padding bytes do not count),
 * out[r] = q_scale * row_scale[r] * I_r + err_scale * row_err[r] + slack (in float).
 * With the scales and errors of mem_vec_quantize_i8 this is an upper bound on the f32
 * dot (see scan.c). */
typedef void (*mem_vec_dot_rows_i8_fn)(const int8_t *q, const uint8_t *rows, size_t n_rows,
                                       size_t len, size_t stride, float q_scale,
                                       const float *row_scale, const float *row_err,
                                       float err_scale, float slack, float *out);

/* The int8 pre-filter over a tile, for the coherence graph: n_q queries (codes at
 * q + i * q_stride, zero-padded to len) against n_rows <= 64 rows laid out as for
 * dot_rows_i8. With I_ij the exact integer dot of dot_rows_i8 and, in float,
 * ub_ij = q_scale[i] * row_scale[j] * I_ij + q_err[i] * row_err[j] + q_slack[i],
 * bit j of keep[i] is set unless ub_ij < threshold (a NaN keeps the pair), and bit j of
 * sure[i] when lb_ij >= threshold, lb_ij = q_scale[i] * row_scale[j] * I_ij - q_err[i] *
 * row_err[j] - q_slack[i] (the same bound from below; a NaN is not sure). The few float
 * roundings may come in any order (a caller's slack covers them); every keep[i] and
 * sure[i] is written, bits at and above n_rows are 0. */
typedef void (*mem_vec_tile_i8_fn)(const int8_t *q, size_t n_q, size_t q_stride,
                                   const uint8_t *rows, size_t n_rows, size_t stride, size_t len,
                                   const float *q_scale, const float *q_err, const float *q_slack,
                                   const float *row_scale, const float *row_err, float threshold,
                                   uint64_t *keep, uint64_t *sure);

typedef struct mem_vec_ops {
    mem_vec_isa_t isa;
    const char *name; /* "scalar", "avx2", "avx512", "neon" */
    mem_vec_dot_fn dot;
    mem_vec_dot_rows_fn dot_rows;
    mem_vec_select_ge_fn select_ge;     /* added by the engine; NULL = use the scalar one */
    mem_vec_sum_fn sum;                 /* added by the engine */
    mem_vec_dot_rows_i8_fn dot_rows_i8; /* added by the engine; NULL = no int8 pre-filter */
    mem_vec_tile_i8_fn tile_i8;         /* NULL = the graph loops over dot_rows_i8 */
    mem_vec_dot_rows_at_fn dot_rows_at; /* NULL = the graph calls dot_rows row by row */
} mem_vec_ops_t;

/* The table for isa, or NULL when this host cannot run it (or it was not compiled in). */
const mem_vec_ops_t *mem_vec_ops_for(mem_vec_isa_t isa);
/* The best ISA this host runs. */
mem_vec_isa_t mem_vec_best_isa(void);
/* Parse "scalar", "avx2", "avx512", "neon"; returns 0 on success, -1 otherwise. */
int mem_vec_isa_parse(const char *name, mem_vec_isa_t *out);
/* Choose the process-wide table once, before threads start (the one allowed global).
 * Returns 0, or -1 when the host cannot run isa (the table is then left unchanged). */
int mem_vec_init(mem_vec_isa_t isa);
/* The chosen table (scalar until mem_vec_init succeeds). */
const mem_vec_ops_t *mem_vec_ops(void);

/* The per-ISA tables (defined only where compiled in: vec_avx2.c, vec_avx512.c on x86-64,
 * vec_neon.c on aarch64). Use mem_vec_ops_for, which checks that the host can run them. */
extern const mem_vec_ops_t mem_vec_ops_avx2_table;
extern const mem_vec_ops_t mem_vec_ops_avx512_table;
extern const mem_vec_ops_t mem_vec_ops_avx512vnni_table; /* avx512 + the VNNI int8 kernel */
extern const mem_vec_ops_t mem_vec_ops_neon_table;

/* Scalar reference kernels (exported for tests and for the ISA files' tails). */
float mem_vec_dot_f32_scalar(const float *a, const float *b, size_t n);
void mem_vec_dot_rows_f32_scalar(const float *q, const float *rows, size_t n_rows, size_t dim,
                                 size_t stride, float *out);
void mem_vec_dot_rows_i8_scalar(const int8_t *q, const uint8_t *rows, size_t n_rows, size_t len,
                                size_t stride, float q_scale, const float *row_scale,
                                const float *row_err, float err_scale, float slack, float *out);
void mem_vec_dot_rows_at_scalar(const float *q, const float *rows, const uint32_t *idx, size_t n,
                                size_t dim, size_t stride, float *out);
void mem_vec_tile_i8_scalar(const int8_t *q, size_t n_q, size_t q_stride, const uint8_t *rows,
                            size_t n_rows, size_t stride, size_t len, const float *q_scale,
                            const float *q_err, const float *q_slack, const float *row_scale,
                            const float *row_err, float threshold, uint64_t *keep, uint64_t *sure);
/* Symmetric int8 codes of x (n floats): scale = max|x| / 127 (1 for a zero vector),
 * codes[i] = round(x[i] / scale), and *err >= || x - scale * codes ||_2 (rounded up).
 * Writes n codes. */
void mem_vec_quantize_i8(const float *x, size_t n, int8_t *codes, float *scale, float *err);
/* The same codes biased by 128 (byte = code + 128), the rows' format. */
void mem_vec_quantize_u8(const float *x, size_t n, uint8_t *codes, float *scale, float *err);
/* AVX-512 VNNI variants of dot_rows_i8 and tile_i8 (vec_avx512vnni.c, x86-64 only); the
 * avx512 table uses them when the host has VNNI. */
void mem_vec_dot_rows_i8_avx512vnni(const int8_t *q, const uint8_t *rows, size_t n_rows, size_t len,
                                    size_t stride, float q_scale, const float *row_scale,
                                    const float *row_err, float err_scale, float slack, float *out);
void mem_vec_tile_i8_avx512vnni(const int8_t *q, size_t n_q, size_t q_stride, const uint8_t *rows,
                                size_t n_rows, size_t stride, size_t len, const float *q_scale,
                                const float *q_err, const float *q_slack, const float *row_scale,
                                const float *row_err, float threshold, uint64_t *keep,
                                uint64_t *sure);
float mem_vec_sum_f32_scalar(const float *x, size_t n);
size_t mem_vec_select_ge_scalar(const float *x, size_t n, float cut, uint32_t *idx_out);
/* The coherence graph's reference dot (core/graph.c): sum of (double)a[i] * (double)b[i],
 * left to right in double, whatever the ISA. */
double mem_vec_dot_f64_scalar(const float *a, const float *b, size_t n);
/* An upper bound on ||x||_2 (computed in double, rounded up to float); +inf when the sum of
 * squares is not finite. */
float mem_vec_norm_ub(const float *x, size_t n);
/* L2-normalise v in place (computed in double); returns 0, or -1 for a zero or
 * non-finite vector, which is left unchanged. */
int mem_vec_normalize(float *v, size_t n);

#endif
