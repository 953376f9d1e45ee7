/* scanpool.c - split one large scan across a few helper threads (issue 4, parallel scan)
 * SPDX-License-Identifier: MIT
 *
 * A retrieve already runs on a libuv worker thread, and libuv forbids uv_queue_work from
 * any thread but the loop's, so the store keeps a small pool of its own: opts.scan_helpers
 * pthreads, each waiting on its own slot. mem_store__scan splits a scan into parts
 * (mem_scan_run_part, blocks b % n_parts == part) only when it pays:
 *   - opts.scan_split_min > 0 and n_visible * dim >= scan_split_min, and
 *   - a helper is idle right now: helpers are taken with try-acquire semantics (pop from
 *     the idle list or nothing); a scan never waits for a helper, so under load, when
 *     every helper is busy, it runs whole on the calling thread as before;
 *   - and, when the idle helper is asleep (not within its short spin after a task),
 *     n_visible * dim >= opts.scan_split_min_cold (default 64 x scan_split_min): waking
 *     it costs tens of microseconds on a VM, which only a larger scan repays.
 * The calling thread runs part 0 itself, then collects the helpers' parts. A part that no
 * helper has picked up yet by then is taken back and run by the caller (the helper may be
 * descheduled; waiting for it would only add latency). The caller holds the namespace's
 * shared lock for the whole call, so every part reads the same committed rows; the
 * helpers take no lock of the index. The parts' top-K lists are merged with
 * mem_scan_merge, which gives the answer of mem_scan_run (same ids, order and scores).
 * Hand-offs: waking a sleeping thread costs tens of microseconds on a VM, as much as a
 * part of a mid-sized scan, so the caller spins (up to 100 us) for a part that is running
 * before it sleeps on the slot's condition, and a helper spins (up to 50 us) after a task
 * before it sleeps, so the next retrieve of a burst finds it awake.
 * `scanned` is the sum of the parts' counts: parts prune a little less than one whole
 * scan, so it may be slightly larger than the unsplit figure.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "core/spin.h"
#include "storage/store_int.h"

enum slot_state {
    SLOT_FREE,    /* on the idle list, or held by a caller with no task posted */
    SLOT_POSTED,  /* a task waits for the helper */
    SLOT_RUNNING, /* the helper runs it */
    SLOT_DONE,    /* results in hits / n_hits / n_scanned */
};

/* Spin budget before sleeping: a caller waiting for a running part, a helper waiting for
 * the next task. Waking a sleeping thread costs tens of microseconds on a VM (futex + IPI),
 * as much as a whole part of a mid-sized scan. */
#define SPIN_WAIT_NS 100000ull /* caller: a part is running, it ends about with ours */
#define SPIN_IDLE_NS 50000ull  /* helper: back-to-back retrieves */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

typedef struct scan_slot {
    pthread_mutex_t mu;
    pthread_cond_t work_cv; /* helper waits: a task posted, or stop */
    pthread_cond_t done_cv; /* caller waits: the task done */
    int state;              /* enum slot_state; atomic (read while spinning), written under mu */
    int asleep;             /* atomic: 1 while blocked on work_cv (or before its first task) */
    bool stop;
    pthread_t th;
    /* the task, set by the caller while it holds the slot */
    const mem_index_t *idx;
    const mem_vec_ops_t *ops;
    const mem_scan_params_t *p;
    size_t part, n_parts;
    mem_scan_hit_t *hits; /* MEM_SCAN_MAX_K */
    size_t n_hits, n_scanned;
} scan_slot_t;

struct mem_store__scanpool {
    pthread_mutex_t mu; /* the idle list */
    scan_slot_t **idle;
    size_t n_idle;
    scan_slot_t *slots;
    size_t n;                   /* helpers running */
    uint64_t n_split, n_helped; /* atomic counters */
};

static int get_state(scan_slot_t *s)
{
    return __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
}

static void set_state(scan_slot_t *s, int v) /* mu held */
{
    __atomic_store_n(&s->state, v, __ATOMIC_RELEASE);
}

static void *helper_main(void *arg)
{
    scan_slot_t *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (get_state(s) != SLOT_POSTED && !s->stop) {
            /* spin a little first: the next task of a burst comes without a wake-up */
            pthread_mutex_unlock(&s->mu);
            mem_spin_t sp;
            for (mem_spin_begin(&sp, SPIN_IDLE_NS, now_ns);
                 get_state(s) != SLOT_POSTED && mem_spin_more(&sp);) {
            }
            pthread_mutex_lock(&s->mu);
        }
        if (get_state(s) != SLOT_POSTED && !s->stop)
            __atomic_store_n(&s->asleep, 1, __ATOMIC_RELAXED);
        while (get_state(s) != SLOT_POSTED && !s->stop)
            pthread_cond_wait(&s->work_cv, &s->mu);
        if (get_state(s) != SLOT_POSTED) break; /* stop, and nothing posted */
        __atomic_store_n(&s->asleep, 0, __ATOMIC_RELAXED);
        set_state(s, SLOT_RUNNING);
        pthread_mutex_unlock(&s->mu);
        mem_scan_run_part(s->idx, s->ops, s->p, s->part, s->n_parts, s->hits, &s->n_hits,
                          &s->n_scanned);
        pthread_mutex_lock(&s->mu);
        set_state(s, SLOT_DONE); /* release: the results above are visible with it */
        pthread_cond_signal(&s->done_cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void slot_destroy(scan_slot_t *s)
{
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->work_cv);
    pthread_cond_destroy(&s->done_cv);
    free(s->hits);
}

int mem_store__scanpool_start(size_t n_helpers, mem_store__scanpool_t **out, mem_err_t *err)
{
    *out = NULL;
    if (n_helpers == 0) return MEM_OK;
    if (n_helpers > MEM_STORE_SCAN_HELPERS_MAX) n_helpers = MEM_STORE_SCAN_HELPERS_MAX;
    mem_store__scanpool_t *pool = calloc(1, sizeof(*pool));
    if (!pool) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    pool->slots = calloc(n_helpers, sizeof(*pool->slots));
    pool->idle = calloc(n_helpers, sizeof(*pool->idle));
    if (!pool->slots || !pool->idle) {
        free(pool->slots);
        free(pool->idle);
        free(pool);
        return mem_err_set(err, MEM_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&pool->mu, NULL);
    for (size_t i = 0; i < n_helpers; i++) {
        scan_slot_t *s = &pool->slots[i];
        s->hits = malloc(MEM_SCAN_MAX_K * sizeof(*s->hits));
        if (!s->hits) break;
        pthread_mutex_init(&s->mu, NULL);
        pthread_cond_init(&s->work_cv, NULL);
        pthread_cond_init(&s->done_cv, NULL);
        set_state(s, SLOT_FREE);
        s->asleep = 1;
        if (pthread_create(&s->th, NULL, helper_main, s) != 0) {
            slot_destroy(s);
            break;
        }
        pthread_setname_np(s->th, "mnemod-scan");
        pool->idle[pool->n_idle++] = s;
        pool->n++;
    }
    if (pool->n == 0) { /* not one thread: scans simply stay whole */
        pthread_mutex_destroy(&pool->mu);
        free(pool->slots);
        free(pool->idle);
        free(pool);
        return MEM_OK;
    }
    *out = pool;
    return MEM_OK;
}

void mem_store__scanpool_stop(mem_store__scanpool_t *pool)
{
    if (!pool) return;
    for (size_t i = 0; i < pool->n; i++) {
        scan_slot_t *s = &pool->slots[i];
        pthread_mutex_lock(&s->mu);
        s->stop = true;
        pthread_cond_signal(&s->work_cv);
        pthread_mutex_unlock(&s->mu);
    }
    for (size_t i = 0; i < pool->n; i++) {
        pthread_join(pool->slots[i].th, NULL);
        slot_destroy(&pool->slots[i]);
    }
    pthread_mutex_destroy(&pool->mu);
    free(pool->slots);
    free(pool->idle);
    free(pool);
}

void mem_store__scanpool_counts(mem_store__scanpool_t *pool, uint64_t *split, uint64_t *helped)
{
    *split = pool ? __atomic_load_n(&pool->n_split, __ATOMIC_RELAXED) : 0;
    *helped = pool ? __atomic_load_n(&pool->n_helped, __ATOMIC_RELAXED) : 0;
}

size_t mem_store__scanpool_size(const mem_store__scanpool_t *pool)
{
    return pool ? pool->n : 0;
}

/* Take up to want idle helpers, never waiting for one. */
static size_t try_acquire(mem_store__scanpool_t *pool, scan_slot_t **got, size_t want)
{
    size_t n = 0;
    pthread_mutex_lock(&pool->mu);
    while (n < want && pool->n_idle > 0)
        got[n++] = pool->idle[--pool->n_idle];
    pthread_mutex_unlock(&pool->mu);
    return n;
}

static void release(mem_store__scanpool_t *pool, scan_slot_t **got, size_t n)
{
    pthread_mutex_lock(&pool->mu);
    for (size_t i = 0; i < n; i++)
        pool->idle[pool->n_idle++] = got[i];
    pthread_mutex_unlock(&pool->mu);
}

void mem_store__scan(mem_store_t *st, const mem_index_t *idx, const mem_scan_params_t *p,
                     mem_scan_hit_t *hits, size_t *n_hits, size_t *n_scanned)
{
    mem_store__scanpool_t *pool = st->scanpool;
    const mem_vec_ops_t *ops = st->opts.ops;
    size_t min = st->opts.scan_split_min;
    size_t rows = mem_index_visible(idx), dim = mem_index_dim(idx);
    size_t nb = (rows + MEM_INDEX_BLOCK_ROWS - 1) / MEM_INDEX_BLOCK_ROWS;
    /* rows * dim: both are far below 2^32 in practice; saturate anyway */
    size_t work = dim && rows > SIZE_MAX / dim ? SIZE_MAX : rows * dim;
    if (!pool || min == 0 || work < min || nb < 2 || p->k > MEM_SCAN_MAX_K) {
        mem_scan_run(idx, ops, p, hits, n_hits, n_scanned);
        return;
    }
    /* extra parts: at most one per helper, per further block, per further `min` of work */
    size_t want = pool->n;
    if (want > nb - 1) want = nb - 1;
    if (want > work / min) want = work / min;
    scan_slot_t *got[MEM_STORE_SCAN_HELPERS_MAX];
    size_t n_got = want ? try_acquire(pool, got, want) : 0;
    /* a helper asleep costs a wake-up (tens of us on a VM): only for larger scans */
    size_t cold = st->opts.scan_split_min_cold ? st->opts.scan_split_min_cold
                  : min > SIZE_MAX / 64        ? SIZE_MAX
                                               : min * 64;
    if (n_got && work < cold) {
        scan_slot_t *cold_slots[MEM_STORE_SCAN_HELPERS_MAX];
        size_t n_awake = 0, n_cold = 0;
        for (size_t i = 0; i < n_got; i++) {
            if (__atomic_load_n(&got[i]->asleep, __ATOMIC_RELAXED))
                cold_slots[n_cold++] = got[i];
            else
                got[n_awake++] = got[i];
        }
        if (n_cold) release(pool, cold_slots, n_cold);
        n_got = n_awake;
    }
    mem_scan_hit_t *mine = n_got ? malloc(p->k * sizeof(*mine)) : NULL;
    if (!mine) { /* every helper busy (or no memory for part 0): the whole scan here */
        if (n_got) release(pool, got, n_got);
        mem_scan_run(idx, ops, p, hits, n_hits, n_scanned);
        return;
    }
    size_t n_parts = n_got + 1;
    for (size_t i = 0; i < n_got; i++) {
        scan_slot_t *s = got[i];
        pthread_mutex_lock(&s->mu);
        s->idx = idx;
        s->ops = ops;
        s->p = p;
        s->part = i + 1;
        s->n_parts = n_parts;
        set_state(s, SLOT_POSTED);
        pthread_cond_signal(&s->work_cv);
        pthread_mutex_unlock(&s->mu);
    }
    const mem_scan_hit_t *lists[MEM_STORE_SCAN_HELPERS_MAX + 1];
    size_t counts[MEM_STORE_SCAN_HELPERS_MAX + 1];
    size_t scanned = 0, sc = 0, helped = 0;
    mem_scan_run_part(idx, ops, p, 0, n_parts, mine, &counts[0], &sc);
    lists[0] = mine;
    scanned += sc;
    for (size_t i = 0; i < n_got; i++) {
        scan_slot_t *s = got[i];
        if (get_state(s) == SLOT_RUNNING) { /* it ends about with ours: spin, don't sleep */
            mem_spin_t sp;
            for (mem_spin_begin(&sp, SPIN_WAIT_NS, now_ns);
                 get_state(s) == SLOT_RUNNING && mem_spin_more(&sp);) {
            }
        }
        pthread_mutex_lock(&s->mu);
        bool take_back = get_state(s) == SLOT_POSTED; /* the helper has not started it */
        if (take_back) {
            set_state(s, SLOT_FREE);
        } else {
            while (get_state(s) != SLOT_DONE)
                pthread_cond_wait(&s->done_cv, &s->mu);
            set_state(s, SLOT_FREE);
            helped++;
        }
        pthread_mutex_unlock(&s->mu);
        if (take_back) /* s is ours again: run its part into its own buffer */
            mem_scan_run_part(idx, ops, p, s->part, n_parts, s->hits, &s->n_hits, &s->n_scanned);
        lists[i + 1] = s->hits;
        counts[i + 1] = s->n_hits;
        scanned += s->n_scanned;
    }
    mem_scan_merge(lists, counts, n_parts, p->k, hits, n_hits);
    *n_scanned = scanned;
    release(pool, got, n_got);
    free(mine);
    __atomic_add_fetch(&pool->n_split, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&pool->n_helped, helped, __ATOMIC_RELAXED);
}
