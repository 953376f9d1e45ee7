/* spin.h - bounded busy-waiting: what a thread does for a few microseconds before it sleeps
 * SPDX-License-Identifier: MIT
 *
 * Waking a thread that sleeps on a futex costs tens of microseconds on a VM (the futex, an
 * IPI, a halted vCPU coming back), as much as the work it is woken for. A thread that
 * expects something soon (the next job of a burst, a part that ends about with its own)
 * watches for it a little while first. The spin is bounded by time, never by a count,
 * because a pause lasts from 10 to 150 cycles depending on the CPU. core/ reads no clock:
 * the caller passes its own. Generic: this header includes only the C library.
 */
#ifndef MEM_CORE_SPIN_H
#define MEM_CORE_SPIN_H

#include <stdbool.h>
#include <stdint.h>

/* A monotonic clock in nanoseconds. */
typedef uint64_t (*mem_spin_clock_fn)(void);

typedef struct mem_spin {
    mem_spin_clock_fn now_ns;
    uint64_t t0_ns;     /* when the spin began */
    uint64_t budget_ns; /* how long it may last */
    unsigned n;         /* pauses so far */
} mem_spin_t;

/* Start a spin of at most budget_ns (0: mem_spin_more says false at once). */
void mem_spin_begin(mem_spin_t *sp, uint64_t budget_ns, mem_spin_clock_fn now_ns);
/* Pause the CPU once (the spinning hyperthread yields its core's resources) and say
 * whether the budget allows another look: false once budget_ns has passed. The clock is
 * read every MEM_SPIN_CLOCK_EVERY pauses. The caller checks its condition between calls:
 *     for (mem_spin_begin(&sp, B, now); !ready() && mem_spin_more(&sp);) {} */
bool mem_spin_more(mem_spin_t *sp);
#define MEM_SPIN_CLOCK_EVERY 32u

/* Whether a wait should start with a spin, learned from how the last ones went. A spin pays
 * when what it waits for comes within it, and costs its whole budget of CPU when it does
 * not, so the gate opens while spins catch and closes after a run of spins that ran out.
 * One long gap among short ones must not close it (a client that comes back 150 to 400 us
 * after each answer straddles a 200 us spin), so it keeps a credit: each caught wait adds
 * one (at most credit_max), each spin that ran out takes one, and the gate is open while
 * credit is left. Closed, it still opens for one spin every probe_every waits (the gap a
 * blocking wait sees includes the waiter's own wake-up, which can be longer than the gap
 * itself), and a blocking wait whose gap was within the spin counts as caught. What a
 * client whose gaps are all longer than the spin costs is bounded: credit_max spins, then
 * one in probe_every. The gate starts closed: no spin before a short gap was seen. */
typedef struct mem_spin_gate {
    uint64_t spin_ns;      /* the spin's budget; 0: never open */
    unsigned credit;       /* spins that may still run out before the gate closes */
    unsigned credit_max;   /* at least 1 */
    unsigned probe_every;  /* at least 1 */
    unsigned closed_waits; /* waits since the gate closed or last probed */
} mem_spin_gate_t;

void mem_spin_gate_init(mem_spin_gate_t *g, uint64_t spin_ns, unsigned credit_max,
                        unsigned probe_every);
/* A wait begins: true when it should spin first (at most g->spin_ns). */
bool mem_spin_gate_open(mem_spin_gate_t *g);
/* How the wait ended: caught (what it waited for came during the spin) or ran out. */
void mem_spin_gate_spun(mem_spin_gate_t *g, bool caught);
/* A wait that did not spin ended gap_ns after it began. */
void mem_spin_gate_waited(mem_spin_gate_t *g, uint64_t gap_ns);
/* The spinner lost its CPU to another task during a spin: the machine is busy, its vCPUs do
 * not halt (so the spin saves no wake-up), and spinning only takes a core the others need:
 * the gate closes (probes go on). */
void mem_spin_gate_preempted(mem_spin_gate_t *g);

#endif
