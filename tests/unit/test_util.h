/* test_util.h - helpers shared by the kernel and scan tests: ISA tables, seeded randomness
 * SPDX-License-Identifier: MIT
 */
#ifndef MEM_TESTS_UNIT_TEST_UTIL_H
#define MEM_TESTS_UNIT_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "core/vec.h"

/* Every kernel table the host runs: one per ISA, plus the AVX-512 table without the VNNI
 * int8 kernel when dispatch hands out the VNNI one (so both int8 kernels are tested). */
static inline const mem_vec_ops_t *table_at(int i)
{
    if (i < MEM_VEC_ISA_COUNT) return mem_vec_ops_for((mem_vec_isa_t)i);
#if defined(__x86_64__)
    const mem_vec_ops_t *avx512 = mem_vec_ops_for(MEM_VEC_AVX512);
    if (avx512 && avx512 != &mem_vec_ops_avx512_table) return &mem_vec_ops_avx512_table;
#endif
    return NULL;
}

/* splitmix64: seeded, the seed printed by each test on failure. */
static inline uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double rng_unit(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) * 0x1.0p-53;
}

/* Uniform in [0, n), 0 for n == 0. */
static inline size_t rng_below(uint64_t *s, size_t n)
{
    return n ? (size_t)(rng_next(s) % n) : 0;
}

/* A random unit vector (components uniform in [-1, 1) before normalizing). */
static inline void random_unit(float *v, size_t dim, uint64_t *s)
{
    do {
        for (size_t i = 0; i < dim; i++)
            v[i] = (float)(rng_unit(s) * 2.0 - 1.0);
    } while (mem_vec_normalize(v, dim) != 0);
}

#endif
