/* pool.h - the request worker pool: threads of the server's own that run request jobs off
 * the loop, and the batched path that hands completions back to the loop
 * SPDX-License-Identifier: MIT
 *
 * Owns its worker threads, the job queue, the completion list and the loop's wake-up for
 * it (an eventfd watched by a uv_poll_t). server/loop.c is its only user: it queues a
 * request's steps here instead of on libuv's pool, and the store's writer hands its
 * completions back through mem_srv_pool_complete. A job is the caller's (embedded in its
 * request); the pool only links it while it is queued or listed.
 */
#ifndef MEM_SERVER_POOL_H
#define MEM_SERVER_POOL_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

typedef struct mem_srv_pool mem_srv_pool_t;
typedef struct mem_srv_pool_job mem_srv_pool_job_t;

typedef void (*mem_srv_pool_fn)(mem_srv_pool_job_t *job);

struct mem_srv_pool_job {
    mem_srv_pool_fn work; /* runs on a worker thread */
    mem_srv_pool_fn done; /* then runs on the loop thread */
    mem_srv_pool_job_t *_next;
};

/* Called on the loop thread once per batch of completions, after the last one's done
 * (the loop runs MHD once for the whole batch instead of once per request). */
typedef void (*mem_srv_pool_batch_fn)(void *ud);

/* Idle workers that spin at the same time: one finds the next job of a burst awake; the
 * others sleep at once, so that on a small machine idle threads do not take the cores
 * from the loop, the writer and the busy workers. */
#define MEM_SRV_POOL_SPINNERS 1

/* Counters for tests and /metrics; read with relaxed atomics, so only roughly current. */
typedef struct mem_srv_pool_stats {
    uint64_t jobs;        /* jobs run by the workers */
    uint64_t completions; /* done callbacks run on the loop */
    uint64_t wakeups;     /* eventfd writes: completions that found the loop not looking */
    uint64_t batches;     /* drains of the completion list that delivered something */
    uint64_t sleeps;      /* a worker blocked on the queue's condition (its spin ran out) */
    uint64_t spins;       /* an idle worker began to spin (jobs were coming closer than it) */
} mem_srv_pool_stats_t;

/* Loop thread: start n_workers threads (fewer if the system refuses more, at least one)
 * and the wake-up handle on loop. spin_ns: how long an idle worker watches the queue
 * before it sleeps (0: it sleeps at once), while jobs come closer together than that; at
 * most MEM_SRV_POOL_SPINNERS watch at a time.
 * batch_cb may be NULL. Returns 0 with *out set, or -1 (no memory, no eventfd, not one
 * thread) with nothing left behind. */
int mem_srv_pool_new(uv_loop_t *loop, size_t n_workers, uint64_t spin_ns,
                     mem_srv_pool_batch_fn batch_cb, void *ud, mem_srv_pool_t **out);
/* Loop thread: run job->work on a worker, then job->done on the loop. Never fails and
 * never blocks (the queue is a list through the jobs). */
void mem_srv_pool_submit(mem_srv_pool_t *pool, mem_srv_pool_job_t *job);
/* Any thread: list job for the loop, which runs job->done. The loop is woken (one eventfd
 * write) only when it is not already going to look at the list, so the completions of a
 * burst share one wake-up. */
void mem_srv_pool_complete(mem_srv_pool_t *pool, mem_srv_pool_job_t *job);
/* Loop thread: run the done callbacks listed so far (the wake-up handler calls it; the loop
 * may call it when it knows a completion is near). Returns how many ran. */
size_t mem_srv_pool_drain(mem_srv_pool_t *pool);
/* Jobs queued or running on a worker right now (any thread; a relaxed read). */
size_t mem_srv_pool_busy(const mem_srv_pool_t *pool);
void mem_srv_pool_stats(const mem_srv_pool_t *pool, mem_srv_pool_stats_t *st);
/* Loop thread: the queued and running jobs finish, the workers end, the completions still
 * listed run, and the wake-up handle is closed (the pool is freed in its close callback:
 * run the loop once more before uv_loop_close). NULL-safe. */
void mem_srv_pool_close(mem_srv_pool_t *pool);

#endif
