/* sqlite_fault.h - fail the Nth SQLite allocation of one thread, in any build
 * SPDX-License-Identifier: MIT
 *
 * `make fault` fails every allocation in turn but takes hours, so the out-of-memory paths
 * that matter most are also swept by ordinary unit tests: sqlite_fault_install (first thing
 * in main, before any SQLite call) wraps SQLite's allocator (the fault build's hooks, when
 * they are installed, stay underneath); sqlite_fault_arm(n, writer) then counts the SQLite
 * allocations made on the calling thread (writer false) or on a store's writer thread
 * (writer true) and fails the nth one, once. A test loops n = 1, 2, ... over one operation
 * until a run ends with nothing failed: every allocation of that operation has failed once.
 * Under `make fault` (MEM_FAULT_UNIT set) the driver fails every allocation of the test in
 * turn already: a sweep there runs its operation once, from n = 0 (nothing fails).
 */
#ifndef MEM_TESTS_UNIT_SQLITE_FAULT_H
#define MEM_TESTS_UNIT_SQLITE_FAULT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "storage/store.h"

static sqlite3_mem_methods sqlite_fault_base;
static atomic_int sqlite_fault_on;
static atomic_long sqlite_fault_counted, sqlite_fault_failed;
static long sqlite_fault_at;
static bool sqlite_fault_writer;
static pthread_t sqlite_fault_thread;

static inline bool sqlite_fault_now(void)
{
    if (!atomic_load(&sqlite_fault_on)) return false;
    if (sqlite_fault_writer ? !mem_store_on_writer_thread()
                            : !pthread_equal(pthread_self(), sqlite_fault_thread))
        return false;
    if (atomic_fetch_add(&sqlite_fault_counted, 1) + 1 != sqlite_fault_at) return false;
    atomic_fetch_add(&sqlite_fault_failed, 1);
    return true;
}

static inline void *sqlite_fault_malloc(int n)
{
    return sqlite_fault_now() ? NULL : sqlite_fault_base.xMalloc(n);
}

static inline void *sqlite_fault_realloc(void *p, int n)
{
    return sqlite_fault_now() ? NULL : sqlite_fault_base.xRealloc(p, n);
}

/* 0, or -1 when SQLite was initialized already (then nothing is wrapped). */
static inline int sqlite_fault_install(void)
{
    if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &sqlite_fault_base) != SQLITE_OK) return -1;
    sqlite3_mem_methods m = sqlite_fault_base;
    m.xMalloc = sqlite_fault_malloc;
    m.xRealloc = sqlite_fault_realloc;
    return sqlite3_config(SQLITE_CONFIG_MALLOC, &m) == SQLITE_OK ? 0 : -1;
}

/* Does a sweep run (false under the fault driver)? Its first n: 1, or 0 (no failure). */
static inline bool sqlite_fault_sweeps(void)
{
    return getenv("MEM_FAULT_UNIT") == NULL;
}

/* Count from zero and fail the nth allocation (n >= 1; 0: none) of the calling thread, or of any
 * store writer thread when writer is true. */
static inline void sqlite_fault_arm(long n, bool writer)
{
    atomic_store(&sqlite_fault_on, 0);
    sqlite_fault_at = n;
    sqlite_fault_writer = writer;
    sqlite_fault_thread = pthread_self();
    atomic_store(&sqlite_fault_counted, 0);
    atomic_store(&sqlite_fault_failed, 0);
    atomic_store(&sqlite_fault_on, 1);
}

/* Stop; the number of allocations that failed since the arm (0 or 1). */
static inline long sqlite_fault_disarm(void)
{
    atomic_store(&sqlite_fault_on, 0);
    return atomic_load(&sqlite_fault_failed);
}

#endif
