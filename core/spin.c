/* spin.c - bounded busy-waiting (see spin.h)
 * SPDX-License-Identifier: MIT
 */
#include "core/spin.h"

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

void mem_spin_begin(mem_spin_t *sp, uint64_t budget_ns, mem_spin_clock_fn now_ns)
{
    sp->now_ns = now_ns;
    sp->budget_ns = budget_ns;
    sp->n = 0;
    sp->t0_ns = budget_ns ? now_ns() : 0;
}

bool mem_spin_more(mem_spin_t *sp)
{
    if (sp->budget_ns == 0) return false;
    cpu_relax();
    if (++sp->n % MEM_SPIN_CLOCK_EVERY != 0) return true;
    return sp->now_ns() - sp->t0_ns <= sp->budget_ns;
}
