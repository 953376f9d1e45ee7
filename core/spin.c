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

void mem_spin_gate_init(mem_spin_gate_t *g, uint64_t spin_ns, unsigned credit_max,
                        unsigned probe_every)
{
    g->spin_ns = spin_ns;
    g->credit = 0;
    g->credit_max = credit_max ? credit_max : 1;
    g->probe_every = probe_every ? probe_every : 1;
    g->closed_waits = 0;
}

bool mem_spin_gate_open(mem_spin_gate_t *g)
{
    if (g->spin_ns == 0) return false;
    if (g->credit > 0) return true;
    if (++g->closed_waits < g->probe_every) return false;
    g->closed_waits = 0;
    return true;
}

static void gate_caught(mem_spin_gate_t *g)
{
    if (g->credit < g->credit_max) g->credit++;
    g->closed_waits = 0;
}

void mem_spin_gate_spun(mem_spin_gate_t *g, bool caught)
{
    if (caught)
        gate_caught(g);
    else if (g->credit > 0)
        g->credit--;
}

void mem_spin_gate_waited(mem_spin_gate_t *g, uint64_t gap_ns)
{
    if (g->spin_ns && gap_ns <= g->spin_ns) gate_caught(g);
}

void mem_spin_gate_preempted(mem_spin_gate_t *g)
{
    g->credit = 0;
    g->closed_waits = 0;
}
