/* test_server_pool.c - the request worker pool: every job runs once and its completion is
 * delivered once, after it; completions from other threads all arrive; wake-ups batch;
 * an idle worker within its spin takes the next job without sleeping; closing with jobs
 * queued runs them all and leaves the loop closable. The pool runs on a real libuv loop
 * (this thread is its loop thread).
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE /* server/pool.c, included below, names its threads */
/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
/* clang-format on */

#include "server/pool.c"

typedef struct tjob {
    mem_srv_pool_job_t job; /* first: the callbacks cast back */
    int ran;                /* atomic: work calls */
    int done;               /* loop thread: done calls */
    int ran_at_done;        /* ran as the done callback saw it */
    unsigned sleep_us;      /* work sleeps this long */
} tjob_t;

static size_t n_done_total;  /* loop thread */
static size_t n_batches_cb;  /* loop thread */
static size_t done_at_batch; /* n_done_total when the batch callback last ran */

static void tjob_work(mem_srv_pool_job_t *j)
{
    tjob_t *t = (tjob_t *)j;
    if (t->sleep_us) usleep(t->sleep_us);
    __atomic_add_fetch(&t->ran, 1, __ATOMIC_RELAXED);
}

static void tjob_done(mem_srv_pool_job_t *j)
{
    tjob_t *t = (tjob_t *)j;
    t->ran_at_done = __atomic_load_n(&t->ran, __ATOMIC_RELAXED);
    t->done++;
    n_done_total++;
}

static void on_batch(void *ud)
{
    n_batches_cb++;
    done_at_batch = n_done_total;
}

static void reset_counts(void)
{
    n_done_total = n_batches_cb = done_at_batch = 0;
}

static void on_guard(uv_timer_t *t)
{
}

/* Run the loop until want completions have been delivered (or give up after ~20 s). */
static void run_until(uv_loop_t *loop, size_t want)
{
    uv_timer_t guard; /* keeps uv_run from returning while the pool has nothing listed */
    uv_timer_init(loop, &guard);
    uv_timer_start(&guard, on_guard, 20000, 0);
    uint64_t t0 = uv_hrtime();
    while (n_done_total < want && uv_hrtime() - t0 < 20000000000ull)
        uv_run(loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&guard, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
}

static void close_pool(uv_loop_t *loop, mem_srv_pool_t *pool)
{
    mem_srv_pool_close(pool);
    uv_run(loop, UV_RUN_DEFAULT); /* the wake-up handle's close callback frees the pool */
    assert_int_equal(uv_loop_close(loop), 0);
}

static void test_jobs_run_once(void **state)
{
    enum { N = 20000 };
    uv_loop_t loop;
    uv_loop_init(&loop);
    reset_counts();
    mem_srv_pool_t *pool = NULL;
    assert_int_equal(mem_srv_pool_new(&loop, 4, 20000, on_batch, NULL, &pool), 0);
    tjob_t *jobs = calloc(N, sizeof(*jobs));
    assert_non_null(jobs);
    for (size_t i = 0; i < N; i++) {
        jobs[i].job.work = tjob_work;
        jobs[i].job.done = tjob_done;
        mem_srv_pool_submit(pool, &jobs[i].job);
    }
    run_until(&loop, N);
    assert_int_equal(n_done_total, N);
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(jobs[i].ran, 1);
        assert_int_equal(jobs[i].done, 1);
        assert_int_equal(jobs[i].ran_at_done, 1); /* work finished before done began */
    }
    mem_srv_pool_stats_t st;
    mem_srv_pool_stats(pool, &st);
    assert_int_equal(st.jobs, N);
    assert_int_equal(st.completions, N);
    assert_int_equal(mem_srv_pool_busy(pool), 0);
    /* the batch callback ran once per batch, after the batch's last done */
    assert_int_equal(n_batches_cb, st.batches);
    assert_int_equal(done_at_batch, N);
    assert_true(st.batches >= 1 && st.batches <= st.wakeups + 1);
    close_pool(&loop, pool);
    free(jobs);
}

typedef struct completer {
    mem_srv_pool_t *pool;
    tjob_t *jobs;
    size_t n;
} completer_t;

static void *complete_all(void *arg)
{
    completer_t *c = arg;
    for (size_t i = 0; i < c->n; i++)
        mem_srv_pool_complete(c->pool, &c->jobs[i].job);
    return NULL;
}

/* Completions from other threads (the store's writer does this) all arrive, once each. */
static void test_foreign_completions(void **state)
{
    enum { THREADS = 4, PER = 5000 };
    uv_loop_t loop;
    uv_loop_init(&loop);
    reset_counts();
    mem_srv_pool_t *pool = NULL;
    assert_int_equal(mem_srv_pool_new(&loop, 1, 0, on_batch, NULL, &pool), 0);
    tjob_t *jobs = calloc(THREADS * PER, sizeof(*jobs));
    assert_non_null(jobs);
    completer_t cs[THREADS];
    pthread_t th[THREADS];
    for (size_t t = 0; t < THREADS; t++) {
        for (size_t i = 0; i < PER; i++)
            jobs[t * PER + i].job.done = tjob_done;
        cs[t] = (completer_t){pool, jobs + t * PER, PER};
        assert_int_equal(pthread_create(&th[t], NULL, complete_all, &cs[t]), 0);
    }
    run_until(&loop, THREADS * PER);
    for (size_t t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    run_until(&loop, THREADS * PER);
    assert_int_equal(n_done_total, THREADS * PER);
    for (size_t i = 0; i < THREADS * PER; i++)
        assert_int_equal(jobs[i].done, 1);
    mem_srv_pool_stats_t st;
    mem_srv_pool_stats(pool, &st);
    assert_int_equal(st.completions, THREADS * PER);
    close_pool(&loop, pool);
    free(jobs);
}

/* Completions listed while the loop is not looking share one wake-up and one batch; the
 * first one after a drain wakes the loop again. */
static void test_wakeups_batch(void **state)
{
    enum { N = 100 };
    uv_loop_t loop;
    uv_loop_init(&loop);
    reset_counts();
    mem_srv_pool_t *pool = NULL;
    assert_int_equal(mem_srv_pool_new(&loop, 1, 0, on_batch, NULL, &pool), 0);
    tjob_t jobs[N + 1];
    memset(jobs, 0, sizeof(jobs));
    completer_t c = {pool, jobs, N};
    for (size_t i = 0; i <= N; i++)
        jobs[i].job.done = tjob_done;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, complete_all, &c), 0);
    pthread_join(th, NULL); /* the loop did not run meanwhile */
    mem_srv_pool_stats_t st;
    mem_srv_pool_stats(pool, &st);
    assert_int_equal(st.wakeups, 1);
    assert_int_equal(n_done_total, 0); /* nothing runs before the loop drains */
    run_until(&loop, N);
    mem_srv_pool_stats(pool, &st);
    assert_int_equal(n_done_total, N);
    assert_int_equal(st.batches, 1);
    assert_int_equal(n_batches_cb, 1);
    /* the loop found the list empty: the next completion wakes it again */
    completer_t one = {pool, jobs + N, 1};
    assert_int_equal(pthread_create(&th, NULL, complete_all, &one), 0);
    pthread_join(th, NULL);
    mem_srv_pool_stats(pool, &st);
    assert_int_equal(st.wakeups, 2);
    run_until(&loop, N + 1);
    assert_int_equal(jobs[N].done, 1);
    close_pool(&loop, pool);
}

/* Until the worker is idle: spinning or asleep, with nothing queued. A job submitted before
 * it looks is taken at once, neither spin nor sleep: the test waits so that each job meets
 * the state it is about. */
static void wait_worker_idle(mem_srv_pool_t *pool)
{
    for (;;) {
        pthread_mutex_lock(&pool->mu);
        bool idle = !pool->q_head && pool->n_spinning + pool->n_asleep == pool->n_threads;
        pthread_mutex_unlock(&pool->mu);
        if (idle) return;
        usleep(50);
    }
}

/* Jobs one after another, gap_us apart, each submitted once the worker is idle: a worker
 * within its spin takes each without sleeping; without a spin, or when the jobs come further
 * apart than the spin, it sleeps after every job. */
static void sequential_sleeps(uint64_t spin_ns, unsigned gap_us, uint64_t *sleeps_added,
                              uint64_t *spins_added)
{
    enum { N = 20 };
    uv_loop_t loop;
    uv_loop_init(&loop);
    reset_counts();
    mem_srv_pool_t *pool = NULL;
    assert_int_equal(mem_srv_pool_new(&loop, 1, spin_ns, NULL, NULL, &pool), 0);
    tjob_t jobs[N + 1];
    memset(jobs, 0, sizeof(jobs));
    for (size_t i = 0; i <= N; i++) {
        jobs[i].job.work = tjob_work;
        jobs[i].job.done = tjob_done;
    }
    /* the first two show the pool how far apart jobs come (the worker sleeps meanwhile) */
    mem_srv_pool_submit(pool, &jobs[0].job);
    run_until(&loop, 1);
    usleep(gap_us);
    wait_worker_idle(pool);
    mem_srv_pool_submit(pool, &jobs[1].job);
    run_until(&loop, 2);
    wait_worker_idle(pool); /* the spin or sleep after job 1 is in `before` */
    mem_srv_pool_stats_t st;
    mem_srv_pool_stats(pool, &st);
    uint64_t before = st.sleeps, spins_before = st.spins;
    for (size_t i = 2; i <= N; i++) {
        usleep(gap_us);
        mem_srv_pool_submit(pool, &jobs[i].job);
        run_until(&loop, i + 1);
        wait_worker_idle(pool);
    }
    mem_srv_pool_stats(pool, &st);
    *sleeps_added = st.sleeps - before;
    *spins_added = st.spins - spins_before;
    for (size_t i = 0; i <= N; i++)
        assert_int_equal(jobs[i].ran, 1);
    close_pool(&loop, pool);
}

static void test_spin_keeps_worker_awake(void **state)
{
    uint64_t with_spin, without, far_apart, spins, spins0, spins_far;
    /* a 2 s spin: the loop thread would have to be descheduled that long to miss it */
    sequential_sleeps(2000000000ull, 0, &with_spin, &spins);
    sequential_sleeps(0, 0, &without, &spins0);
    /* jobs 20 ms apart and a 2 ms spin: spinning would not catch them, so it does not spin */
    sequential_sleeps(2000000ull, 20000, &far_apart, &spins_far);
    /* one spin or one sleep after each of jobs 2..20 */
    assert_int_equal(with_spin, 0);
    assert_int_equal(spins, 19);
    assert_int_equal(without, 19);
    assert_int_equal(spins0, 0);
    assert_int_equal(far_apart, 19);
    assert_int_equal(spins_far, 0);
}

/* Closing with jobs queued and running: the workers finish them all, their completions run
 * in the close, and the loop then closes cleanly. */
static void test_close_with_jobs_in_flight(void **state)
{
    enum { N = 50 };
    uv_loop_t loop;
    uv_loop_init(&loop);
    reset_counts();
    mem_srv_pool_t *pool = NULL;
    assert_int_equal(mem_srv_pool_new(&loop, 2, 50000, on_batch, NULL, &pool), 0);
    tjob_t jobs[N];
    memset(jobs, 0, sizeof(jobs));
    for (size_t i = 0; i < N; i++) {
        jobs[i].job.work = tjob_work;
        jobs[i].job.done = tjob_done;
        jobs[i].sleep_us = 1000;
        mem_srv_pool_submit(pool, &jobs[i].job);
    }
    assert_true(mem_srv_pool_busy(pool) > 0);
    close_pool(&loop, pool);
    assert_int_equal(n_done_total, N);
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(jobs[i].ran, 1);
        assert_int_equal(jobs[i].done, 1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jobs_run_once),
        cmocka_unit_test(test_foreign_completions),
        cmocka_unit_test(test_wakeups_batch),
        cmocka_unit_test(test_spin_keeps_worker_awake),
        cmocka_unit_test(test_close_with_jobs_in_flight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
