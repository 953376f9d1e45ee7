/* pool.c - the request worker pool and the batched hand-off back to the loop
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. On a VM, waking a thread that sleeps costs tens of microseconds (futex, IPI, a
 * halted vCPU), and a request used to pay four of them: loop -> libuv worker -> loop
 * (uv_async) -> writer -> loop. Two rules cut them:
 *   - Jobs: a FIFO list under `mu`. A worker that finds it empty watches it for spin_ns
 *     before it sleeps on `work_cv` (at most MEM_SRV_POOL_SPINNERS at a time), so the next
 *     job of a burst finds a worker awake and submitting it costs a lock, no wake-up. It
 *     spins only while the queue's last empty spell was shorter than spin_ns: jobs further
 *     apart (one client at a time) would not be caught, only burn a core. The
 *     submitter signals a sleeper only when the queued jobs outnumber the spinning workers.
 *     A spinning worker holds nothing: no lock, no job.
 *   - Completions: a FIFO list under `done_mu`, and `signalled`: set by the first
 *     completion after the loop last found the list empty, which alone writes the eventfd;
 *     later ones only append. The loop (uv_poll_t on the eventfd) drains the list until it
 *     finds it empty under the lock, and only then clears `signalled`, so completions that
 *     arrive while it runs done callbacks cost no write and no second wake-up. The eventfd
 *     is ours rather than a uv_async_t: libuv 1.44's uv_async_send leaves the handle
 *     "busy" across its write, and a sender preempted there makes the loop spin with
 *     sched_yield until it runs again (milliseconds on a loaded 2-core machine).
 * Locks are leaves: no callback runs under either.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "server/pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "core/spin.h"

struct mem_srv_pool {
    uv_loop_t *loop;
    uv_poll_t wake; /* readable once efd was written */
    int efd;
    mem_srv_pool_batch_fn batch_cb;
    void *ud;
    uint64_t spin_ns;
    /* the job queue */
    pthread_mutex_t mu;
    pthread_cond_t work_cv;
    mem_srv_pool_job_t *q_head, *q_tail; /* mu */
    size_t n_queued;                     /* written under mu, read by spinners (atomic) */
    unsigned n_spinning, n_asleep;       /* mu */
    uint64_t empty_since_ns;             /* mu: when a worker took the last queued job */
    uint64_t last_gap_ns;                /* mu: how long the queue then stayed empty */
    int stop;                            /* written under mu, read by spinners (atomic) */
    size_t busy;                         /* atomic: jobs queued or running */
    /* the completion list */
    pthread_mutex_t done_mu;
    mem_srv_pool_job_t *d_head, *d_tail; /* done_mu */
    bool signalled;                      /* done_mu: the loop is going to look */
    pthread_t *threads;
    size_t n_threads;
    mem_srv_pool_stats_t stats; /* atomic counters */
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void count(uint64_t *c)
{
    __atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

static void *worker_main(void *arg)
{
    mem_srv_pool_t *pool = arg;
    pthread_mutex_lock(&pool->mu);
    for (;;) {
        if (!pool->q_head && !pool->stop && pool->spin_ns &&
            pool->n_spinning < MEM_SRV_POOL_SPINNERS && pool->last_gap_ns <= pool->spin_ns) {
            /* the next job of a burst comes without a wake-up; when jobs come further apart
             * than the spin (one client at a time), it would only burn a core */
            pool->n_spinning++;
            pthread_mutex_unlock(&pool->mu);
            count(&pool->stats.spins);
            mem_spin_t sp;
            for (mem_spin_begin(&sp, pool->spin_ns, now_ns);
                 !__atomic_load_n(&pool->n_queued, __ATOMIC_ACQUIRE) &&
                 !__atomic_load_n(&pool->stop, __ATOMIC_ACQUIRE) && mem_spin_more(&sp);) {
            }
            pthread_mutex_lock(&pool->mu);
            pool->n_spinning--;
        }
        while (!pool->q_head && !pool->stop) {
            pool->n_asleep++;
            count(&pool->stats.sleeps);
            pthread_cond_wait(&pool->work_cv, &pool->mu);
            pool->n_asleep--;
        }
        mem_srv_pool_job_t *job = pool->q_head;
        if (!job) break; /* stopping, and nothing left queued */
        pool->q_head = job->_next;
        if (!pool->q_head) {
            pool->q_tail = NULL;
            pool->empty_since_ns = now_ns();
        }
        __atomic_store_n(&pool->n_queued, pool->n_queued - 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&pool->mu);
        job->work(job);
        count(&pool->stats.jobs);
        /* before the completion is listed: a loop that has run every done sees busy 0 */
        __atomic_sub_fetch(&pool->busy, 1, __ATOMIC_RELEASE);
        mem_srv_pool_complete(pool, job);
        pthread_mutex_lock(&pool->mu);
    }
    pthread_mutex_unlock(&pool->mu);
    return NULL;
}

static void on_wake(uv_poll_t *h, int status, int events)
{
    mem_srv_pool_t *pool = h->data;
    uint64_t n;
    /* resets the counter; EAGAIN when a drain already took what woke us */
    while (read(pool->efd, &n, sizeof(n)) < 0 && errno == EINTR) {
    }
    mem_srv_pool_drain(pool);
}

static void pool_free(mem_srv_pool_t *pool)
{
    if (pool->efd >= 0) close(pool->efd);
    pthread_mutex_destroy(&pool->mu);
    pthread_mutex_destroy(&pool->done_mu);
    pthread_cond_destroy(&pool->work_cv);
    free(pool->threads);
    free(pool);
}

static void on_closed(uv_handle_t *h)
{
    pool_free(h->data);
}

static void stop_workers(mem_srv_pool_t *pool)
{
    pthread_mutex_lock(&pool->mu);
    __atomic_store_n(&pool->stop, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&pool->work_cv);
    pthread_mutex_unlock(&pool->mu);
    for (size_t i = 0; i < pool->n_threads; i++)
        pthread_join(pool->threads[i], NULL);
    pool->n_threads = 0;
}

int mem_srv_pool_new(uv_loop_t *loop, size_t n_workers, uint64_t spin_ns,
                     mem_srv_pool_batch_fn batch_cb, void *ud, mem_srv_pool_t **out)
{
    if (n_workers == 0) n_workers = 1;
    mem_srv_pool_t *pool = calloc(1, sizeof(*pool));
    if (!pool) return -1;
    pool->loop = loop;
    pool->batch_cb = batch_cb;
    pool->ud = ud;
    pool->spin_ns = spin_ns;
    pthread_mutex_init(&pool->mu, NULL);
    pthread_mutex_init(&pool->done_mu, NULL);
    pthread_cond_init(&pool->work_cv, NULL);
    pool->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    pool->threads = calloc(n_workers, sizeof(*pool->threads));
    if (pool->efd < 0 || !pool->threads) goto fail;
    for (size_t i = 0; i < n_workers; i++) {
        if (pthread_create(&pool->threads[i], NULL, worker_main, pool) != 0) break;
        pthread_setname_np(pool->threads[i], "mnemod-worker"); /* ps, top, perf -t */
        pool->n_threads++;
    }
    if (pool->n_threads == 0) goto fail;
    if (uv_poll_init(loop, &pool->wake, pool->efd) != 0) {
        stop_workers(pool);
        goto fail;
    }
    pool->wake.data = pool;
    uv_poll_start(&pool->wake, UV_READABLE, on_wake);
    *out = pool;
    return 0;
fail:
    pool_free(pool);
    return -1;
}

void mem_srv_pool_submit(mem_srv_pool_t *pool, mem_srv_pool_job_t *job)
{
    job->_next = NULL;
    __atomic_add_fetch(&pool->busy, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&pool->mu);
    if (pool->q_tail)
        pool->q_tail->_next = job;
    else
        pool->q_head = job;
    if (pool->q_head == job) pool->last_gap_ns = now_ns() - pool->empty_since_ns;
    pool->q_tail = job;
    size_t queued = pool->n_queued + 1;
    __atomic_store_n(&pool->n_queued, queued, __ATOMIC_RELEASE);
    /* a spinning worker takes one job each; only the rest need a sleeper woken */
    if (pool->n_asleep > 0 && queued > pool->n_spinning) pthread_cond_signal(&pool->work_cv);
    pthread_mutex_unlock(&pool->mu);
}

void mem_srv_pool_complete(mem_srv_pool_t *pool, mem_srv_pool_job_t *job)
{
    job->_next = NULL;
    pthread_mutex_lock(&pool->done_mu);
    if (pool->d_tail)
        pool->d_tail->_next = job;
    else
        pool->d_head = job;
    pool->d_tail = job;
    bool wake = !pool->signalled;
    pool->signalled = true;
    pthread_mutex_unlock(&pool->done_mu);
    if (!wake) return;
    count(&pool->stats.wakeups);
    uint64_t one = 1;
    /* cannot fail but by EINTR: the counter is far from its limit, the loop reads it */
    while (write(pool->efd, &one, sizeof(one)) < 0 && errno == EINTR) {
    }
}

size_t mem_srv_pool_drain(mem_srv_pool_t *pool)
{
    size_t n = 0;
    for (;;) {
        pthread_mutex_lock(&pool->done_mu);
        mem_srv_pool_job_t *list = pool->d_head;
        pool->d_head = pool->d_tail = NULL;
        if (!list) pool->signalled = false; /* from now on a completion wakes us */
        pthread_mutex_unlock(&pool->done_mu);
        if (!list) break;
        while (list) {
            mem_srv_pool_job_t *job = list;
            list = job->_next; /* read first: done may free the job */
            job->done(job);
            n++;
        }
    }
    if (n == 0) return 0;
    __atomic_add_fetch(&pool->stats.completions, n, __ATOMIC_RELAXED);
    count(&pool->stats.batches);
    if (pool->batch_cb) pool->batch_cb(pool->ud);
    return n;
}

size_t mem_srv_pool_busy(const mem_srv_pool_t *pool)
{
    return __atomic_load_n(&pool->busy, __ATOMIC_ACQUIRE);
}

void mem_srv_pool_stats(const mem_srv_pool_t *pool, mem_srv_pool_stats_t *st)
{
    st->jobs = __atomic_load_n(&pool->stats.jobs, __ATOMIC_RELAXED);
    st->completions = __atomic_load_n(&pool->stats.completions, __ATOMIC_RELAXED);
    st->wakeups = __atomic_load_n(&pool->stats.wakeups, __ATOMIC_RELAXED);
    st->batches = __atomic_load_n(&pool->stats.batches, __ATOMIC_RELAXED);
    st->sleeps = __atomic_load_n(&pool->stats.sleeps, __ATOMIC_RELAXED);
    st->spins = __atomic_load_n(&pool->stats.spins, __ATOMIC_RELAXED);
}

void mem_srv_pool_close(mem_srv_pool_t *pool)
{
    if (!pool) return;
    stop_workers(pool); /* the workers run what is queued first */
    mem_srv_pool_drain(pool);
    uv_poll_stop(&pool->wake);
    uv_close((uv_handle_t *)&pool->wake, on_closed);
}
