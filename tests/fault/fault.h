/* fault.h - allocation-failure injection for the fault build (`make fault`)
 * SPDX-License-Identifier: MIT
 *
 * Owns: tests/fault/ (the allocator hooks, the unit-suite driver, the daemon mode).
 * Linked only into FLAVOR=fault binaries; no production source includes this header.
 *
 * Every allocation our code makes goes through the hooks: malloc, calloc, realloc, strdup,
 * aligned_alloc and open_memstream by `-Wl,--wrap=`, jansson's by json_set_alloc_funcs and
 * SQLite's by SQLITE_CONFIG_MALLOC. An allocation is *counted* only while a function of
 * mnemod's own code is on the calling thread's stack (the library objects are compiled with
 * -finstrument-functions, which keeps that depth), so a test's own fixtures and jansson
 * calls never fail. A counted allocation fails when the policy says so:
 *
 *   unit mode    the driver (fault_cmocka.c) fails exactly the Nth counted allocation of one
 *                test, for N = 1, 2, ... until a run ends without reaching N;
 *   daemon mode  MEM_FAULT_EVERY=K fails every Kth counted allocation and
 *                MEM_FAULT_AT=N only the Nth, while armed: from the start with
 *                MEM_FAULT_ARMED=1, otherwise each SIGUSR2 toggles arming (so a test
 *                can start the daemon cleanly, inject, stop, then check it recovered).
 *                At exit it prints `mnemod-fault: counted=C failed=F` on stderr.
 */
#ifndef MEM_TESTS_FAULT_FAULT_H
#define MEM_TESTS_FAULT_FAULT_H

#include <stdbool.h>

/* Start counting from zero; fail the fail_at-th counted allocation (0: fail none). */
void mem_fault_arm(long fail_at);
/* Stop counting and failing. */
void mem_fault_disarm(void);
/* Counted allocations and injected failures since the last mem_fault_arm. */
long mem_fault_counted(void);
long mem_fault_failed(void);

#endif
