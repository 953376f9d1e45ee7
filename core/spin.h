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

#endif
