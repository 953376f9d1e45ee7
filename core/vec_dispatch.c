/* vec_dispatch.c - CPU detection and the process-wide kernel table
 * SPDX-License-Identifier: MIT
 *
 * The ISA is decided at run time (__builtin_cpu_supports also checks that the OS saves
 * the wide registers), never from the build machine's flags.
 */
#include "core/vec.h"

#include <string.h>

static const mem_vec_ops_t scalar_ops = {
    .isa = MEM_VEC_SCALAR,
    .name = "scalar",
    .dot = mem_vec_dot_f32_scalar,
    .dot_rows = mem_vec_dot_rows_f32_scalar,
    .select_ge = mem_vec_select_ge_scalar,
    .sum = mem_vec_sum_f32_scalar,
    .dot_rows_i8 = mem_vec_dot_rows_i8_scalar,
    .tile_i8 = mem_vec_tile_i8_scalar,
    .dot_rows_at = mem_vec_dot_rows_at_scalar,
};

/* The one mutable global core/ allows: written once by mem_vec_init before threads start. */
static const mem_vec_ops_t *chosen_ops = &scalar_ops;

static const char *const isa_names[MEM_VEC_ISA_COUNT] = {"scalar", "avx2", "avx512", "neon"};

const mem_vec_ops_t *mem_vec_ops_for(mem_vec_isa_t isa)
{
    switch (isa) {
    case MEM_VEC_SCALAR:
        return &scalar_ops;
#if defined(__x86_64__) || defined(__i386__)
    case MEM_VEC_AVX2:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
                   ? &mem_vec_ops_avx2_table
                   : NULL;
    case MEM_VEC_AVX512:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                       __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                       __builtin_cpu_supports("fma")
                   ? (__builtin_cpu_supports("avx512vnni") ? &mem_vec_ops_avx512vnni_table
                                                           : &mem_vec_ops_avx512_table)
                   : NULL;
#endif
#if defined(__aarch64__)
    case MEM_VEC_NEON:
        return &mem_vec_ops_neon_table;
#endif
    default:
        return NULL;
    }
}

mem_vec_isa_t mem_vec_best_isa(void)
{
    for (int isa = MEM_VEC_ISA_COUNT - 1; isa > MEM_VEC_SCALAR; isa--)
        if (mem_vec_ops_for((mem_vec_isa_t)isa)) return (mem_vec_isa_t)isa;
    return MEM_VEC_SCALAR;
}

int mem_vec_isa_parse(const char *name, mem_vec_isa_t *out)
{
    for (int i = 0; i < MEM_VEC_ISA_COUNT; i++)
        if (strcmp(name, isa_names[i]) == 0) {
            *out = (mem_vec_isa_t)i;
            return 0;
        }
    return -1;
}

int mem_vec_init(mem_vec_isa_t isa)
{
    const mem_vec_ops_t *ops = mem_vec_ops_for(isa);
    if (!ops) return -1;
    chosen_ops = ops;
    return 0;
}

const mem_vec_ops_t *mem_vec_ops(void)
{
    return chosen_ops;
}
