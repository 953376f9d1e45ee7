/* fault_cmocka.c - drive a cmocka suite under allocation-failure injection
 * SPDX-License-Identifier: MIT
 *
 * Linked into the FLAVOR=fault unit tests with -Wl,--wrap=_cmocka_run_group_tests and
 * --wrap of cmocka's assertion functions. Without MEM_FAULT_UNIT in the environment the
 * suite runs as usual. With it, each test runs in its own forked child: first once with
 * nothing failing (it must pass and leak nothing; that run also counts A, the allocations
 * it makes), then for N = 1, 2, ... with exactly the Nth counted allocation failing, until
 * a run ends without reaching N (SQLite's do_faultsim_test discipline). A run is accepted
 * when the process neither crashed nor tripped a sanitizer, nothing leaked, and either the
 * test passed or its first failing assertion saw the out-of-memory error (MEM_ENOMEM or
 * HTTP 503) in a compared value. Otherwise the run is a finding:
 *
 *   crash       a signal, a sanitizer report or an abort (the log has the stack)
 *   timeout     no end within MEM_FAULT_TIMEOUT seconds (a lost wake-up on an error path)
 *   leak        LeakSanitizer found memory no one can reach (checked at the failing
 *               assertion, while the test's own locals are still on the stack)
 *   wrong       a compared value differs and neither side is the out-of-memory error: the
 *               failure was swallowed into a wrong answer or reported as another error
 *   unverified  a failure whose values the driver cannot see (assert_true, fail(), a NULL
 *               string): counted and listed, a finding only with MEM_FAULT_STRICT=1
 *
 * Environment: MEM_FAULT_UNIT=1 (on), MEM_FAULT_MAX_RUNS (runs per test; beyond it the N
 * are spread evenly, offset by MEM_FAULT_SEED), MEM_FAULT_TIMEOUT (seconds, default 120),
 * MEM_FAULT_LOGDIR (where the log of each finding is kept, default build/fault/logs),
 * MEM_FAULT_ONLY=N (run only N, keep its log: `MEM_FAULT_UNIT=1 MEM_FAULT_ONLY=20
 * MEM_FAULT_TESTS=test_rpc_errors build/fault/tests/unit/test_api_mcp` reproduces one
 * finding; MEM_FAULT_TESTS is a glob over the test names).
 */
#define _GNU_SOURCE
#include "tests/fault/fault.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sanitizer/lsan_interface.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/err.h"

typedef LargestIntegralType lit_t;

enum verdict { V_NONE, V_CLEAN, V_UNVERIFIED, V_WRONG, V_REAL };

/* What a child tells its parent (a MAP_SHARED page). */
typedef struct fault_result {
    long counted, failed;
    int verdict; /* of the first failing assertion */
    int leak;
    int done; /* the child reached its end (not killed) */
    int cm_failed;
    char where[256];
} fault_result_t;

static fault_result_t *R;

int __real__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
                                   const size_t num_tests, CMFixtureFunction group_setup,
                                   CMFixtureFunction group_teardown);
int __wrap__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
                                   const size_t num_tests, CMFixtureFunction group_setup,
                                   CMFixtureFunction group_teardown);
int __real_cmocka_set_test_filter(const char *pattern);
int __wrap_cmocka_set_test_filter(const char *pattern);

/* ------------------------------------------------------------------ assertion hooks */

static void noted(const char *file, int line, int verdict, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Assertions that passed since the injected failure (every assertion goes through a hook
 * below, which calls checked() once it has passed). */
static long checks_since_fault, faults_seen;
static void sync_faults(void)
{
    long f = mem_fault_failed();
    if (f != faults_seen) {
        faults_seen = f;
        checks_since_fault = 0;
    }
}
static void checked(void)
{
    sync_faults();
    if (faults_seen) checks_since_fault++;
}

/* The first failing assertion of a child: was it the injected failure? The test's frame is
 * still live here, so whatever the test holds is reachable and LeakSanitizer reports only
 * what the code under test dropped. */
static void noted(const char *file, int line, int verdict, const char *fmt, ...)
{
    if (!R || R->verdict != V_NONE) return;
    if (mem_fault_failed() == 0) verdict = V_REAL;
    sync_faults();
    /* a check whose values the driver cannot see is the injected error's when it is the
     * first check since the failure: the call it checks is the one that failed */
    if (verdict == V_UNVERIFIED && checks_since_fault == 0) verdict = V_CLEAN;
    R->verdict = verdict;
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(R->where, sizeof R->where, "%s:%d %s", file, line, what);
    if (verdict != V_REAL) R->leak = __lsan_do_recoverable_leak_check();
}

static int is_oom(lit_t v)
{
    return v == (lit_t)(intmax_t)MEM_ENOMEM || v == 503;
}
/* A text that names the out-of-memory answer: the wire code, the message, the status. */
static int says_oom(const char *s)
{
    return s && (strstr(s, "unavailable") || strstr(s, "out of memory") || strstr(s, "503"));
}

/* What the test printed last (fail_msg prints, then fails): a failure whose message shows
 * the 503 is the injected error, reported by a test helper. */
static char last_error[512];
void __real_print_error(const char *const fmt, ...);
void __wrap_print_error(const char *const fmt, ...) __attribute__((format(printf, 1, 2)));
void __wrap_print_error(const char *const fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    __real_print_error("%s", last_error);
}
static int int_verdict(lit_t a, lit_t b)
{
    return is_oom(a) || is_oom(b) ? V_CLEAN : V_WRONG;
}

#define WRAP(ret, name, params)                                                                    \
    ret __real_##name params;                                                                      \
    ret __wrap_##name params;                                                                      \
    ret __wrap_##name params

WRAP(void, _assert_true,
     (const lit_t result, const char *const expr, const char *const file, const int line))
{
    if (!result) noted(file, line, V_UNVERIFIED, "assert_true(%s)", expr);
    __real__assert_true(result, expr, file, line);
    checked();
}

WRAP(void, _assert_return_code,
     (const lit_t result, size_t rlen, const lit_t error, const char *const expr,
      const char *const file, const int line))
{
    intmax_t v = rlen == sizeof(int) ? (intmax_t)(int)result : (intmax_t)result;
    if (v < 0)
        noted(file, line, v == MEM_ENOMEM ? V_CLEAN : V_WRONG, "assert_return_code(%s) = %jd", expr,
              v);
    __real__assert_return_code(result, rlen, error, expr, file, line);
    checked();
}

WRAP(void, _assert_int_equal,
     (const lit_t a, const lit_t b, const char *const file, const int line))
{
    if (a != b) noted(file, line, int_verdict(a, b), "%jd != %jd", (intmax_t)a, (intmax_t)b);
    __real__assert_int_equal(a, b, file, line);
    checked();
}

WRAP(void, _assert_int_not_equal,
     (const lit_t a, const lit_t b, const char *const file, const int line))
{
    if (a == b) noted(file, line, int_verdict(a, b), "%jd == %jd", (intmax_t)a, (intmax_t)b);
    __real__assert_int_not_equal(a, b, file, line);
    checked();
}

WRAP(void, _assert_float_equal,
     (const float a, const float b, const float eps, const char *const file, const int line))
{
    float d = a > b ? a - b : b - a;
    if (!(d <= eps)) noted(file, line, V_WRONG, "%g != %g", (double)a, (double)b);
    __real__assert_float_equal(a, b, eps, file, line);
    checked();
}

void __real__fail(const char *const file, const int line);
void __wrap__fail(const char *const file, const int line);
void __wrap__fail(const char *const file, const int line)
{
    noted(file, line, says_oom(last_error) ? V_CLEAN : V_UNVERIFIED, "fail(): %.100s", last_error);
    __real__fail(file, line);
}

/* cmocka compares strings with strcmp: a NULL (what an allocation failure often returns)
 * would crash inside cmocka, so it is reported and failed here. */
WRAP(void, _assert_string_equal,
     (const char *const a, const char *const b, const char *const file, const int line))
{
    if (!a || !b) {
        noted(file, line, V_UNVERIFIED, "string_equal(%s, %s)", a ? a : "NULL", b ? b : "NULL");
        print_error("string is NULL\n");
        __real__fail(file, line);
    }
    if (strcmp(a, b) != 0)
        noted(file, line, says_oom(a) || says_oom(b) ? V_CLEAN : V_WRONG, "\"%.60s\" != \"%.60s\"",
              a, b);
    __real__assert_string_equal(a, b, file, line);
    checked();
}

WRAP(void, _assert_string_not_equal,
     (const char *const a, const char *const b, const char *file, const int line))
{
    if (!a || !b) {
        noted(file, line, V_UNVERIFIED, "string_not_equal(NULL)");
        print_error("string is NULL\n");
        __real__fail(file, line);
    }
    if (strcmp(a, b) == 0) noted(file, line, V_WRONG, "\"%.60s\" == \"%.60s\"", a, b);
    __real__assert_string_not_equal(a, b, file, line);
    checked();
}

WRAP(void, _assert_memory_equal,
     (const void *const a, const void *const b, const size_t size, const char *const file,
      const int line))
{
    if (!a || !b) {
        noted(file, line, V_UNVERIFIED, "memory_equal(NULL)");
        print_error("memory is NULL\n");
        __real__fail(file, line);
    }
    if (memcmp(a, b, size) != 0) noted(file, line, V_WRONG, "memory differs");
    __real__assert_memory_equal(a, b, size, file, line);
    checked();
}

WRAP(void, _assert_memory_not_equal,
     (const void *const a, const void *const b, const size_t size, const char *const file,
      const int line))
{
    if (!a || !b) {
        noted(file, line, V_UNVERIFIED, "memory_not_equal(NULL)");
        print_error("memory is NULL\n");
        __real__fail(file, line);
    }
    if (memcmp(a, b, size) == 0) noted(file, line, V_WRONG, "memory equal");
    __real__assert_memory_not_equal(a, b, size, file, line);
    checked();
}

WRAP(void, _assert_in_range,
     (const lit_t v, const lit_t lo, const lit_t hi, const char *const file, const int line))
{
    if (v < lo || v > hi)
        noted(file, line, is_oom(v) ? V_CLEAN : V_WRONG, "%jd not in [%jd, %jd]", (intmax_t)v,
              (intmax_t)lo, (intmax_t)hi);
    __real__assert_in_range(v, lo, hi, file, line);
    checked();
}

WRAP(void, _assert_not_in_range,
     (const lit_t v, const lit_t lo, const lit_t hi, const char *const file, const int line))
{
    if (v >= lo && v <= hi) noted(file, line, V_WRONG, "%jd in range", (intmax_t)v);
    __real__assert_not_in_range(v, lo, hi, file, line);
    checked();
}

WRAP(void, _assert_in_set,
     (const lit_t v, const lit_t values[], const size_t n, const char *const file, const int line))
{
    size_t i = 0;
    while (i < n && values[i] != v)
        i++;
    if (i == n) noted(file, line, is_oom(v) ? V_CLEAN : V_WRONG, "%jd not in set", (intmax_t)v);
    __real__assert_in_set(v, values, n, file, line);
    checked();
}

WRAP(void, _assert_not_in_set,
     (const lit_t v, const lit_t values[], const size_t n, const char *const file, const int line))
{
    size_t i = 0;
    while (i < n && values[i] != v)
        i++;
    if (i < n) noted(file, line, V_WRONG, "%jd in set", (intmax_t)v);
    __real__assert_not_in_set(v, values, n, file, line);
    checked();
}

/* ------------------------------------------------------------------ one child */

/* cmocka catches SIGSEGV & co. around each test and turns them into a failure; a crash in
 * the fault build must reach the sanitizer instead, so the trampolines put back the
 * handlers the process had (ASan's) before calling the test's own function. */
static const int crash_signals[] = {SIGFPE, SIGILL, SIGSEGV, SIGBUS, SIGSYS};
#define N_CRASH_SIGNALS (sizeof crash_signals / sizeof crash_signals[0])
static struct sigaction saved_sa[N_CRASH_SIGNALS];
static struct CMUnitTest cur;
static CMFixtureFunction cur_group_setup, cur_group_teardown;

static void restore_signals(void)
{
    for (size_t i = 0; i < N_CRASH_SIGNALS; i++)
        sigaction(crash_signals[i], &saved_sa[i], NULL);
}
static void tramp_test(void **state)
{
    restore_signals();
    cur.test_func(state);
}
static int tramp_setup(void **state)
{
    restore_signals();
    return cur.setup_func(state);
}
static int tramp_teardown(void **state)
{
    restore_signals();
    return cur.teardown_func(state);
}
static int tramp_group_setup(void **state)
{
    restore_signals();
    return cur_group_setup(state);
}
static int tramp_group_teardown(void **state)
{
    restore_signals();
    return cur_group_teardown(state);
}

static long env_long(const char *name, long dflt)
{
    const char *s = getenv(name);
    return s && *s ? strtol(s, NULL, 10) : dflt;
}

static char *filter_pattern;
int __wrap_cmocka_set_test_filter(const char *pattern)
{
    free(filter_pattern);
    filter_pattern = pattern ? strdup(pattern) : NULL;
    return __real_cmocka_set_test_filter(pattern);
}

/* fail_at < 0: nothing counted (the plain run); 0: counted, nothing fails. */
static void child(const char *group, const struct CMUnitTest *t, CMFixtureFunction gsetup,
                  CMFixtureFunction gteardown, long fail_at, const char *log)
{
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    alarm((unsigned)env_long("MEM_FAULT_TIMEOUT", 120));
    for (size_t i = 0; i < N_CRASH_SIGNALS; i++)
        sigaction(crash_signals[i], NULL, &saved_sa[i]);
    cur = *t;
    cur_group_setup = gsetup;
    cur_group_teardown = gteardown;
    struct CMUnitTest one = *t;
    one.test_func = tramp_test;
    one.setup_func = t->setup_func ? tramp_setup : NULL;
    one.teardown_func = t->teardown_func ? tramp_teardown : NULL;
    printf("mnemod-fault: %s/%s, failing counted allocation %ld\n", group, t->name, fail_at);
    fflush(stdout);
    if (fail_at >= 0) mem_fault_arm(fail_at);
    int n_failed = __real__cmocka_run_group_tests(group, &one, 1, gsetup ? tramp_group_setup : NULL,
                                                  gteardown ? tramp_group_teardown : NULL);
    mem_fault_disarm();
    R->counted = mem_fault_counted();
    R->failed = mem_fault_failed();
    R->cm_failed = n_failed;
    if (R->verdict == V_NONE && n_failed == 0) R->leak = __lsan_do_recoverable_leak_check();
    if (R->verdict == V_NONE && n_failed > 0) { /* a fixture failed without an assertion */
        R->verdict = R->failed ? V_UNVERIFIED : V_REAL;
        snprintf(R->where, sizeof R->where, "a fixture or the runner reported failure");
    }
    R->done = 1;
    fflush(stdout);
    fflush(stderr);
    _exit(0);
}

typedef struct stats {
    long runs, passed, clean, unverified, findings;
} stats_t;

static const char *const verdict_name[] = {"passed", "clean", "unverified", "wrong", "failed"};

/* Run one child; returns 1 when the run is a finding (its log is kept). */
static int run_one(const char *group, const struct CMUnitTest *t, CMFixtureFunction gsetup,
                   CMFixtureFunction gteardown, long fail_at, const char *logdir, stats_t *st,
                   bool strict)
{
    char log[1024];
    snprintf(log, sizeof log, "%s/%s.%s.%ld.log", logdir, program_invocation_short_name, t->name,
             fail_at);
    memset(R, 0, sizeof *R);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("mnemod-fault: fork");
        exit(2);
    }
    if (pid == 0) child(group, t, gsetup, gteardown, fail_at, log);
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    st->runs++;
    const char *finding = NULL;
    char why[128] = "";
    if (WIFSIGNALED(ws)) {
        finding = WTERMSIG(ws) == SIGALRM ? "timeout" : "crash";
        snprintf(why, sizeof why, "signal %d", WTERMSIG(ws));
    } else if (!R->done || WEXITSTATUS(ws) != 0) {
        finding = "crash";
        snprintf(why, sizeof why, "exit %d (sanitizer)", WEXITSTATUS(ws));
    } else if (R->leak) {
        finding = "leak";
    } else if (R->verdict == V_WRONG || R->verdict == V_REAL ||
               (strict && R->verdict == V_UNVERIFIED)) {
        finding = verdict_name[R->verdict];
    }
    if (R->done && !finding) {
        if (R->verdict == V_NONE) st->passed++;
        if (R->verdict == V_CLEAN) st->clean++;
        if (R->verdict == V_UNVERIFIED) {
            st->unverified++;
            printf("mnemod-fault: %s/%s N=%ld: unverified: %s\n", program_invocation_short_name,
                   t->name, fail_at, R->where);
        }
        if (!getenv("MEM_FAULT_ONLY")) unlink(log);
        return 0;
    }
    st->findings++;
    printf("mnemod-fault: FINDING %s/%s N=%ld: %s %s %s (log %s)\n", program_invocation_short_name,
           t->name, fail_at, finding, why, R->where, log);
    fflush(stdout);
    return 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int __wrap__cmocka_run_group_tests(const char *group, const struct CMUnitTest *const tests,
                                   const size_t num_tests, CMFixtureFunction gsetup,
                                   CMFixtureFunction gteardown)
{
    if (!getenv("MEM_FAULT_UNIT"))
        return __real__cmocka_run_group_tests(group, tests, num_tests, gsetup, gteardown);
    long max_runs = env_long("MEM_FAULT_MAX_RUNS", 0);
    long seed = env_long("MEM_FAULT_SEED", 1);
    bool strict = env_long("MEM_FAULT_STRICT", 0) > 0;
    long only = env_long("MEM_FAULT_ONLY", 0);
    const char *only_tests = getenv("MEM_FAULT_TESTS"); /* a glob over test names */
    const char *logdir = getenv("MEM_FAULT_LOGDIR");
    if (!logdir || !*logdir) logdir = "build/fault/logs";
    mkdir(logdir, 0755);
    R = mmap(NULL, sizeof *R, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (R == MAP_FAILED) {
        perror("mnemod-fault: mmap");
        return 1;
    }
    long total_findings = 0, total_runs = 0;
    for (size_t i = 0; i < num_tests; i++) {
        const struct CMUnitTest *t = &tests[i];
        if (filter_pattern && fnmatch(filter_pattern, t->name, 0) != 0) continue;
        if (only_tests && fnmatch(only_tests, t->name, 0) != 0) continue;
        stats_t st = {0};
        double t0 = now_s();
        if (only > 0) { /* one run, its log kept: for reproducing a finding */
            run_one(group, t, gsetup, gteardown, only, logdir, &st, strict);
            printf("mnemod-fault: %s/%s N=%ld: log %s/%s.%s.%ld.log\n",
                   program_invocation_short_name, t->name, only, logdir,
                   program_invocation_short_name, t->name, only);
            total_findings += st.findings;
            continue;
        }
        /* the counting run: nothing fails; it must pass and leak nothing */
        if (run_one(group, t, gsetup, gteardown, 0, logdir, &st, strict)) {
            total_findings++;
            continue;
        }
        long allocs = R->counted;
        long stride = max_runs > 0 && allocs > max_runs ? (allocs + max_runs - 1) / max_runs : 1;
        long first = 1 + (stride > 1 ? seed % stride : 0);
        for (long n = first;; n += stride) {
            run_one(group, t, gsetup, gteardown, n, logdir, &st, strict);
            if (R->done && R->failed == 0) break; /* ran to the end without reaching n */
            if (n > 4 * allocs + 100) break;      /* a test whose count keeps growing */
        }
        printf("mnemod-fault: %s/%s: %ld allocations, %ld runs (every %ld), %ld passed, %ld "
               "clean errors, %ld unverified, %ld findings, %.1f s\n",
               program_invocation_short_name, t->name, allocs, st.runs, stride, st.passed, st.clean,
               st.unverified, st.findings, now_s() - t0);
        fflush(stdout);
        total_findings += st.findings;
        total_runs += st.runs;
    }
    printf("mnemod-fault: %s: %ld runs, %ld findings\n", program_invocation_short_name, total_runs,
           total_findings);
    munmap(R, sizeof *R);
    R = NULL;
    return total_findings > 0;
}
