/* test_util.h - helpers shared by the kernel and scan tests
 * SPDX-License-Identifier: MIT
 */
#ifndef MEM_TESTS_UNIT_TEST_UTIL_H
#define MEM_TESTS_UNIT_TEST_UTIL_H

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

#endif
