/* fault_alloc.c - the allocator hooks of the fault build: which allocation fails, and when
 * SPDX-License-Identifier: MIT
 *
 * See fault.h for the policy. Linked into every FLAVOR=fault binary (unit tests and mnemod)
 * with -Wl,--wrap=malloc,... so each call our objects make lands in __wrap_X, which either
 * fails (NULL, errno ENOMEM) or calls the real allocator. The libraries whose allocations
 * our code relies on failing cleanly get the same policy through their own hooks: jansson
 * (every JSON value the API builds or parses) and SQLite (every statement, page and
 * result). libuv, libmicrohttpd and libcurl are left alone: their allocations happen in
 * their own threads or at handle set-up, and what they do on failure is theirs to test.
 */
#include "tests/fault/fault.h"

#include <errno.h>
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#define NOINSTR __attribute__((no_instrument_function))

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void *__real_aligned_alloc(size_t align, size_t n);
FILE *__real_open_memstream(char **buf, size_t *len);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
void *__wrap_aligned_alloc(size_t align, size_t n);
FILE *__wrap_open_memstream(char **buf, size_t *len);
void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

/* How many of mnemod's own (instrumented) functions are on this thread's stack. */
static __thread int fault_depth;

static atomic_int fault_armed;
static atomic_long fault_counted;
static atomic_long fault_failed;
static long fault_fail_at; /* fail exactly the Nth counted allocation (0: none) */
static long fault_every;   /* daemon mode: fail every Kth (0: none) */
static bool fault_daemon;  /* MEM_FAULT_EVERY or MEM_FAULT_AT was set: report at exit */
static bool fault_stack;   /* MEM_FAULT_STACK=1: print the stack of each injected failure */

NOINSTR void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)fn;
    (void)site;
    fault_depth++;
}

NOINSTR void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)fn;
    (void)site;
    fault_depth--;
}

/* The one decision: does this allocation fail? */
static NOINSTR bool fault_now(void)
{
    if (fault_depth <= 0 || !atomic_load_explicit(&fault_armed, memory_order_relaxed)) return false;
    long n = atomic_fetch_add(&fault_counted, 1) + 1;
    if ((fault_fail_at > 0 && n == fault_fail_at) || (fault_every > 0 && n % fault_every == 0)) {
        atomic_fetch_add(&fault_failed, 1);
        if (fault_stack) { /* MEM_FAULT_STACK=1: where the failure was injected */
            fprintf(stderr, "mnemod-fault: allocation %ld fails here:\n", n);
            __sanitizer_print_stack_trace();
        }
        return true;
    }
    return false;
}

NOINSTR void mem_fault_arm(long fail_at)
{
    fault_fail_at = fail_at;
    atomic_store(&fault_counted, 0);
    atomic_store(&fault_failed, 0);
    atomic_store(&fault_armed, 1);
}

NOINSTR void mem_fault_disarm(void)
{
    atomic_store(&fault_armed, 0);
}
NOINSTR long mem_fault_counted(void)
{
    return atomic_load(&fault_counted);
}
NOINSTR long mem_fault_failed(void)
{
    return atomic_load(&fault_failed);
}

NOINSTR void *__wrap_malloc(size_t n)
{
    if (fault_now()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_malloc(n);
}

NOINSTR void *__wrap_calloc(size_t n, size_t size)
{
    if (fault_now()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_calloc(n, size);
}

NOINSTR void *__wrap_realloc(void *p, size_t n)
{
    if (fault_now()) { /* the old block stays valid, as with a real failure */
        errno = ENOMEM;
        return NULL;
    }
    return __real_realloc(p, n);
}

NOINSTR char *__wrap_strdup(const char *s)
{
    if (fault_now()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_strdup(s);
}

NOINSTR void *__wrap_aligned_alloc(size_t align, size_t n)
{
    if (fault_now()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_aligned_alloc(align, n);
}

NOINSTR FILE *__wrap_open_memstream(char **buf, size_t *len)
{
    if (fault_now()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_open_memstream(buf, len);
}

/* jansson: json_set_alloc_funcs takes a malloc and a free. */
static NOINSTR void *fault_json_malloc(size_t n)
{
    return fault_now() ? NULL : __real_malloc(n);
}
static NOINSTR void fault_json_free(void *p)
{
    free(p);
}

/* SQLite: wrap its default allocator, so SQLITE_NOMEM comes from the same policy. */
static sqlite3_mem_methods sqlite_default;
static NOINSTR void *fault_sqlite_malloc(int n)
{
    return fault_now() ? NULL : sqlite_default.xMalloc(n);
}
static NOINSTR void *fault_sqlite_realloc(void *p, int n)
{
    return fault_now() ? NULL : sqlite_default.xRealloc(p, n);
}

static NOINSTR void fault_on_sigusr2(int sig)
{
    (void)sig;
    int was = atomic_fetch_xor(&fault_armed, 1);
    static const char on[] = "mnemod-fault: armed\n", off[] = "mnemod-fault: disarmed\n";
    ssize_t w = was ? write(2, off, sizeof off - 1) : write(2, on, sizeof on - 1);
    (void)w;
}

static NOINSTR long env_long(const char *name)
{
    const char *s = getenv(name);
    return s && *s ? strtol(s, NULL, 10) : 0;
}

static NOINSTR void fault_report(void)
{
    fprintf(stderr, "mnemod-fault: counted=%ld failed=%ld\n", mem_fault_counted(),
            mem_fault_failed());
}

/* Priority 101: before the constructors of mnemod's own objects, so one that installs its
 * own jansson allocator (embedder/wire.c counts failures) replaces these hooks; that
 * allocator calls malloc from our code, which the wrap still fails. */
__attribute__((constructor(101))) static NOINSTR void fault_init(void)
{
    /* a process a test forks (a server killed mid-write, say) runs without faults: only the
     * process the driver armed reports on them */
    pthread_atfork(NULL, NULL, mem_fault_disarm);
    json_set_alloc_funcs(fault_json_malloc, fault_json_free);
    if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &sqlite_default) == SQLITE_OK) {
        sqlite3_mem_methods m = sqlite_default;
        m.xMalloc = fault_sqlite_malloc;
        m.xRealloc = fault_sqlite_realloc;
        if (sqlite3_config(SQLITE_CONFIG_MALLOC, &m) != SQLITE_OK)
            fprintf(stderr, "mnemod-fault: SQLITE_CONFIG_MALLOC refused\n");
    }
    fault_stack = env_long("MEM_FAULT_STACK") > 0;
    /* daemon mode */
    fault_every = env_long("MEM_FAULT_EVERY");
    fault_fail_at = env_long("MEM_FAULT_AT");
    if (fault_every <= 0 && fault_fail_at <= 0) return;
    fault_daemon = true;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fault_on_sigusr2;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR2, &sa, NULL);
    if (env_long("MEM_FAULT_ARMED") > 0) atomic_store(&fault_armed, 1);
    atexit(fault_report);
}
