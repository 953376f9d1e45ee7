/* linker.c - the coherence graph, kept up in the background by one thread
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Ingest never waits for the graph (SPEC section 5). The writer commits rows and
 * flags and acknowledges; at each publish it tells the linker what changed (new rows are
 * those above g_rows; rows whose flags changed are listed) and bumps the namespace's
 * w_gen. The linker takes a namespace's pending work at once, decides each row against its
 * current flags (active and not linked: joins; linked and not active: leaves), finds the
 * edges WITHOUT the namespace lock (core/graph.h: it reads only vectors, sketches, seqs
 * and the graph fields, which it alone changes, while the writer may append), and applies
 * them under the exclusive lock in one short step; then g_gen covers what it took. Final
 * degrees depend only on the final membership, so a batch equals any order of single
 * changes. A read that needs the graph waits until g_gen reaches the w_gen it saw on
 * arrival (mem_store__graph_wait), at most opts.graph_wait_ms. A batch does a bounded amount
 * of work (opts.graph_batch_pairs row pairs): at a million rows, a few hundred rows at a
 * time, so the thread stops within seconds and what is left waits in the list.
 *
 * Persistence, in batches. SQLite keeps a checkpoint of the graph: graph_blocks holds, per
 * bucket of MEM_STORE__GRAPH_BUCKET seqs, the (seq, degree) of its linked rows. The linker
 * notes the buckets its batches touched and, at most MEM_STORE__GRAPH_CKPT_MS apart (and
 * when it runs out of work, and at shutdown), hands their new contents to the writer, which
 * writes them in its next group. Between batches the graph is consistent, so every
 * checkpoint is a graph of some membership; at start-up load.c restores it and lists as
 * pending every row whose membership differs from its flags. A deleted row takes its
 * vector with it, so the writer keeps the vector of every deleted row in graph_gone until
 * a checkpoint records that the graph let go of it: the start-up can still unlink a row
 * that was deleted after the last checkpoint.
 *
 * The stored graph records the edge rule (MEM_GRAPH_RULE) and threshold it was made with
 * (namespaces.graph_rule, graph_threshold). When they differ from the running ones, load.c
 * restores no degree: every active row is pending, the linker builds the graph again like
 * any catch-up (reads that need it wait), and the namespace's first checkpoint after the
 * load (restamp) drops every stored bucket, writes the buckets of the rows linked so far
 * and records the current rule and threshold, in one transaction. Every checkpoint is thus
 * a graph of some membership under the rule it records.
 */
#define _GNU_SOURCE /* gettid, for the thread's own scheduling policy */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/graph.h"
#include "storage/store_int.h"

struct mem_store__linker {
    mem_store_t *st;
    double last_ckpt;
};

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return MEM_OK;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *a = realloc(*p, c * size);
    if (!a) return MEM_ENOMEM;
    *p = a;
    *cap = c;
    return MEM_OK;
}

/* ---- the linker's CPU policy ----
 *
 * The graph's work yields the CPU to requests. While it makes progress and no read waits
 * for it, the linker runs SCHED_IDLE: a thread that wakes (the writer after its fsync, a
 * worker, the event loop) takes the linker's CPU at once instead of queueing behind a
 * tile of dot products, and on an idle machine the linker still runs flat out. When a read
 * (or mem_store_settle) waits for a graph, or the linker has work but has not stirred for
 * MEM_STORE__GRAPH_STARVE_MS (a machine saturated by other work), it competes again at
 * LINKER_NICE over the process's own nice value, so it never starves; it yields again once
 * nobody waits and it takes work again. Leaving SCHED_IDLE takes CAP_SYS_NICE or an
 * RLIMIT_NICE allowing that nice value (the systemd unit sets LimitNICE): where it cannot be
 * left, the linker never enters it and stays at LINKER_NICE. Both ask for a slice of
 * LINKER_SLICE_NS (honoured from Linux 6.12): a thread that wakes waits at most about that
 * long for the linker's CPU. A sandbox that forbids all of it leaves the linker at the
 * process's priority. Relative, never absolute: a server started with nice 19 must not see
 * its linker raised above its writer. */
#define LINKER_NICE     10
#define LINKER_SLICE_NS 100000ull

/* struct sched_attr as the kernel takes it (SCHED_ATTR_SIZE_VER0); glibc wraps none of it */
typedef struct linker_sched_attr {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
} linker_sched_attr_t;

static int set_policy(int tid, int policy, int nice)
{
    linker_sched_attr_t a = {
        .size = sizeof(a), .policy = (uint32_t)policy, .nice = nice, .runtime = LINKER_SLICE_NS};
    if (syscall(SYS_sched_setattr, tid, &a, 0) == 0) return 0;
    if (errno != EINVAL) return -1;
    a.runtime = 0; /* a kernel that knows no slice for this policy */
    return syscall(SYS_sched_setattr, tid, &a, 0) == 0 ? 0 : -1;
}

/* Whether a thread of this process at nice can enter SCHED_IDLE and leave it again (the
 * kernel asks for CAP_SYS_NICE or an RLIMIT_NICE allowing nice; a seccomp filter may forbid
 * the call): tried on a thread made for the test and joined before the linker starts (its
 * task may stay listed in /proc for a moment after the join). */
typedef struct idle_probe {
    int nice;
    bool ok;
} idle_probe_t;

static void *idle_probe_main(void *arg)
{
    idle_probe_t *p = arg;
    int tid = (int)gettid();
    p->ok = set_policy(tid, SCHED_OTHER, p->nice) == 0 &&
            set_policy(tid, SCHED_IDLE, p->nice) == 0 && set_policy(tid, SCHED_OTHER, p->nice) == 0;
    return NULL;
}

static bool can_leave_idle(int nice)
{
    idle_probe_t p = {nice, false};
    pthread_t th;
    if (pthread_create(&th, NULL, idle_probe_main, &p) != 0) return false;
    pthread_join(th, NULL);
    return p.ok;
}

/* Run the linker idle or competing (g_mu held); a refused change is not tried again. */
static void policy_locked(mem_store_t *st, bool idle)
{
    if (!st->g_can_idle || !st->g_tid || st->g_idle == idle) return;
    if (set_policy(st->g_tid, idle ? SCHED_IDLE : SCHED_OTHER, st->g_nice) == 0)
        st->g_idle = idle;
    else
        st->g_can_idle = false;
}

/* On the thread that starts the linker (whose nice value it inherits): the linker's nice
 * value, and whether it may idle. */
static void policy_probe(mem_store_t *st)
{
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, (id_t)gettid());
    bool known = errno == 0;
    nice = nice + LINKER_NICE > 19 ? 19 : nice + LINKER_NICE;
    bool can_idle = known && can_leave_idle(nice);
    pthread_mutex_lock(&st->g_mu);
    st->g_nice = known ? nice : INT_MIN; /* unknown: the linker's priority is left alone */
    st->g_can_idle = can_idle;
    pthread_mutex_unlock(&st->g_mu);
}

/* The linker's own start: its nice value and slice, then idle unless a read already waits. */
static void policy_start(mem_store_t *st)
{
    int tid = (int)gettid();
    pthread_mutex_lock(&st->g_mu);
    int nice = st->g_nice;
    pthread_mutex_unlock(&st->g_mu);
    bool set = nice != INT_MIN && set_policy(tid, SCHED_OTHER, nice) == 0;
    if (!set && nice != INT_MIN) set = setpriority(PRIO_PROCESS, (id_t)tid, nice) == 0;
    pthread_mutex_lock(&st->g_mu);
    st->g_tid = tid;
    st->g_idle = false;
    if (!set) st->g_can_idle = false;
    st->g_stirred_s = mono_s();
    policy_locked(st, st->g_waiters == 0);
    pthread_mutex_unlock(&st->g_mu);
}

/* A reader starts (or stops) waiting for a graph: while any waits the linker competes. */
static void waiter_locked(mem_store_t *st, bool arrives)
{
    if (arrives) {
        st->g_waiters++;
        policy_locked(st, false);
    } else {
        st->g_waiters--;
    }
}

/* A linker that has work but has not stirred for a while is starved: let it compete. */
static void starve_check_locked(mem_store_t *st)
{
    if (st->g_idle && st->g_qn && mono_s() - st->g_stirred_s > MEM_STORE__GRAPH_STARVE_MS / 1e3)
        policy_locked(st, false);
}

/* ---- the queue (under g_mu) ---- */

static void queue_locked(mem_store_t *st, mem_store_ns_t *ns)
{
    /* Once the linker is stopping nothing takes the queue (its exit already released it),
     * so a namespace the writer's last group reloads stays out: its graph work is found
     * again at the next start (load.c). */
    if (ns->g.queued || st->g_stop || __atomic_load_n(&ns->dropped, __ATOMIC_ACQUIRE)) return;
    /* An intrusive list, never an allocation: a namespace that failed to be queued would
     * stay behind until its next write, and reads needing its graph would time out. */
    __atomic_add_fetch(&ns->refs, 1, __ATOMIC_ACQ_REL);
    ns->g.queued = true;
    ns->g.q_next = NULL;
    if (!st->g_qn) st->g_stirred_s = mono_s(); /* work after none: the starvation clock starts */
    if (st->g_qtail)
        st->g_qtail->g.q_next = ns;
    else
        st->g_qhead = ns;
    st->g_qtail = ns;
    st->g_qn++;
    pthread_cond_signal(&st->g_cv);
}

/* The first in (the caller holds g_mu and saw g_qn > 0); its reference passes to the caller. */
static mem_store_ns_t *dequeue_locked(mem_store_t *st)
{
    mem_store_ns_t *ns = st->g_qhead;
    st->g_qhead = ns->g.q_next;
    if (!st->g_qhead) st->g_qtail = NULL;
    st->g_qn--;
    ns->g.q_next = NULL;
    ns->g.queued = false;
    return ns;
}

/* Drop the queue and the references it holds (the linker's exit, or an open that failed
 * after loading queued namespaces but before the linker ran). */
static void release_queue(mem_store_t *st)
{
    pthread_mutex_lock(&st->g_mu);
    while (st->g_qn) {
        mem_store_ns_t *ns = dequeue_locked(st);
        mem_store__ns_release(ns);
    }
    pthread_mutex_unlock(&st->g_mu);
}

void mem_store__graph_adopt(mem_store_t *st, mem_store_ns_t *ns)
{
    if (!ns->coherence) return;
    pthread_mutex_lock(&st->g_mu);
    if (ns->g.w_gen > ns->g.g_gen || ns->g.n_pend) queue_locked(st, ns);
    pthread_mutex_unlock(&st->g_mu);
}

void mem_store__graph_publish(mem_store_t *st, mem_store_ns_t *ns)
{
    mem_store_graph_t *g = &ns->g;
    if (!ns->coherence || !g->w_changed) return;
    pthread_mutex_lock(&st->g_mu);
    g->w_gen++;
    size_t n = g->n_w_flagged;
    if (n && grow((void **)&g->pend, &g->cap_pend, g->n_pend + n, sizeof(*g->pend)) != MEM_OK) {
        g->rescan = true; /* no room for the list: the next batch looks at every row */
    } else if (n) {
        memcpy(g->pend + g->n_pend, g->w_flagged, n * sizeof(*g->pend));
        g->n_pend += n;
    }
    queue_locked(st, ns);
    starve_check_locked(st);
    pthread_mutex_unlock(&st->g_mu);
    g->n_w_flagged = 0;
    g->w_changed = false;
}

void mem_store__graph_patches_free(mem_store_graph_t *g)
{
    for (size_t i = 0; i < g->n_w_patches; i++) {
        free(g->w_patches[i].pairs);
        free(g->w_patches[i].text);
    }
    g->n_w_patches = 0;
}

void mem_store__graph_free(mem_store_graph_t *g)
{
    free(g->pend);
    free(g->buckets);
    free(g->gone);
    free(g->w_flagged);
    free(g->w_later);
    mem_store__graph_patches_free(g);
    free(g->w_patches);
    memset(g, 0, sizeof(*g));
}

size_t mem_store__graph_behind(mem_store_t *st)
{
    size_t n = 0;
    pthread_rwlock_rdlock(&st->reg_lock);
    pthread_mutex_lock(&st->g_mu);
    for (size_t i = 0; i < st->n_nss; i++)
        n += st->nss[i]->coherence && st->nss[i]->g.g_gen < st->nss[i]->g.w_gen;
    starve_check_locked(st);
    pthread_mutex_unlock(&st->g_mu);
    pthread_rwlock_unlock(&st->reg_lock);
    return n;
}

void mem_store__graph_deadline(const mem_store_t *st, struct timespec *dl)
{
    clock_gettime(CLOCK_REALTIME, dl);
    uint64_t ns_add = (uint64_t)st->opts.graph_wait_ms * 1000000ull + (uint64_t)dl->tv_nsec;
    dl->tv_sec += (time_t)(ns_add / 1000000000ull);
    dl->tv_nsec = (long)(ns_add % 1000000000ull);
}

int mem_store__graph_wait(mem_store_t *st, mem_store_ns_t *ns, const struct timespec *dl,
                          mem_err_t *err)
{
    if (!ns->coherence) return MEM_OK;
    pthread_mutex_lock(&st->g_mu);
    uint64_t target = ns->g.w_gen;
    bool waits = ns->g.g_gen < target && !__atomic_load_n(&ns->dropped, __ATOMIC_ACQUIRE);
    if (waits) waiter_locked(st, true);
    while (ns->g.g_gen < target && !__atomic_load_n(&ns->dropped, __ATOMIC_ACQUIRE))
        if (pthread_cond_timedwait(&st->g_done_cv, &st->g_mu, dl) == ETIMEDOUT) break;
    if (waits) waiter_locked(st, false);
    bool ok = ns->g.g_gen >= target || __atomic_load_n(&ns->dropped, __ATOMIC_ACQUIRE);
    pthread_mutex_unlock(&st->g_mu);
    if (ok) return MEM_OK;
    int rc = mem_err_set(err, MEM_EBUSY,
                         "the coherence graph of %s is still catching up with recent writes "
                         "(waited %u ms); retry later",
                         ns->name, (unsigned)st->opts.graph_wait_ms);
    if (err) err->retry_after_s = 1;
    return rc;
}

/* ---- one batch ---- */

typedef struct touch_ctx {
    mem_store_graph_t *g;
    const mem_index_t *view;
    bool oom;
} touch_ctx_t;

/* mem_graph_touch_fn: the bucket of a row whose degree moved goes to the next checkpoint. */
static void touch_bucket(void *ud, size_t pos)
{
    touch_ctx_t *t = ud;
    mem_store_graph_t *g = t->g;
    uint64_t b = (uint64_t)mem_index_seq(t->view, pos) / MEM_STORE__GRAPH_BUCKET;
    if (g->n_buckets && g->buckets[g->n_buckets - 1] == b) return;
    if (grow((void **)&g->buckets, &g->cap_buckets, g->n_buckets + 1, sizeof(*g->buckets)) !=
        MEM_OK) {
        t->oom = true;
        return;
    }
    g->buckets[g->n_buckets++] = b;
}

static int push_gone(mem_store_graph_t *g, int64_t seq)
{
    if (grow((void **)&g->gone, &g->cap_gone, g->n_gone + 1, sizeof(*g->gone)) != MEM_OK)
        return MEM_ENOMEM;
    g->gone[g->n_gone++] = seq;
    return MEM_OK;
}

typedef struct rows {
    size_t *p;
    size_t n, cap;
} rows_t;

static int rows_push(rows_t *r, size_t pos)
{
    if (grow((void **)&r->p, &r->cap, r->n + 1, sizeof(*r->p)) != MEM_OK) return MEM_ENOMEM;
    r->p[r->n++] = pos;
    return MEM_OK;
}

/* Decide the candidate rows against their flags (shared lock held): joins, leaves (and, for
 * each deleted one, its index in leave: its kept vector can go once it is out), and the
 * deleted rows already out of the graph. */
static int decide(mem_store_graph_t *g, const mem_index_t *view, const size_t *cand, size_t n_cand,
                  size_t from, size_t to, rows_t *join, rows_t *leave, rows_t *leave_gone)
{
    int rc = MEM_OK;
    for (size_t i = 0; i < n_cand + (to - from) && rc == MEM_OK; i++) {
        size_t p = i < n_cand ? cand[i] : from + (i - n_cand);
        if (p >= to) continue;
        uint8_t f = mem_index_flags(view, p);
        bool linked = mem_index_linked(view, p);
        if (f == 0 && !linked) {
            rc = rows_push(join, p);
        } else if (f != 0 && linked) {
            if (f & MEM_ROW_DELETED) rc = rows_push(leave_gone, leave->n);
            if (rc == MEM_OK) rc = rows_push(leave, p);
        } else if ((f & MEM_ROW_DELETED) && !linked) {
            rc = push_gone(g, mem_index_seq(view, p));
        }
    }
    return rc;
}

/* How many of n_leave leaves and n_join joins one batch takes: every row costs one pass over
 * the namespace's rows, so a batch stays within opts.graph_batch_pairs row pairs (a few
 * seconds at most, whatever the size: the linker stops between batches, and a reader's wait
 * sees progress), at least MEM_STORE__GRAPH_MIN_ROWS rows, at most MEM_STORE__GRAPH_BATCH
 * joins. Leaves first: they free what compactions and deletes asked to free. */
static void batch_size(size_t pairs, size_t rows, size_t n_leave, size_t n_join, size_t *take_leave,
                       size_t *take_join)
{
    size_t budget = rows ? pairs / rows : MEM_STORE__GRAPH_BATCH;
    if (budget < MEM_STORE__GRAPH_MIN_ROWS) budget = MEM_STORE__GRAPH_MIN_ROWS;
    *take_leave = n_leave < budget ? n_leave : budget;
    budget -= *take_leave;
    if (budget > MEM_STORE__GRAPH_BATCH) budget = MEM_STORE__GRAPH_BATCH;
    *take_join = n_join < budget ? n_join : budget;
}

static void batch(mem_store__linker_t *lk, mem_store_ns_t *ns)
{
    mem_store_t *st = lk->st;
    mem_store_graph_t *g = &ns->g;
    pthread_mutex_lock(&st->g_mu);
    if (g->busy || __atomic_load_n(&ns->dropped, __ATOMIC_ACQUIRE)) { /* a vacuum requeues */
        pthread_mutex_unlock(&st->g_mu);
        return;
    }
    g->busy = true;
    if (g->rescan) g->g_rows = 0; /* decide every row again: decisions are idempotent */
    g->rescan = false;
    uint64_t gen = g->w_gen;
    size_t *cand = g->pend, n_cand = g->n_pend;
    g->pend = NULL;
    g->n_pend = g->cap_pend = 0;
    pthread_mutex_unlock(&st->g_mu);

    double t0 = mono_s();
    rows_t join = {0}, leave = {0}, leave_gone = {0};
    const mem_index_t *view = mem_store__read_lock(ns);
    size_t rows = mem_index_visible(view), from = g->g_rows < rows ? g->g_rows : rows;
    int rc = decide(g, view, cand, n_cand, from, rows, &join, &leave, &leave_gone);
    mem_store__read_unlock(ns);
    /* a batch's worth now; the rest goes back to the list */
    size_t n_leave, n_join;
    batch_size(st->opts.graph_batch_pairs, rows, leave.n, join.n, &n_leave, &n_join);
    view = mem_store__linker_view(lk, ns);
    mem_graph_delta_t du, dl;
    mem_graph_change_t ch = {
        .link = join.p, .n_link = n_join, .unlink = leave.p, .n_unlink = n_leave, .n_rows = rows};
    if (rc == MEM_OK)
        rc = mem_graph_change_find(view, &ch, st->opts.coherence_threshold, st->opts.ops, &du, &dl);
    touch_ctx_t tc = {g, view, false};
    if (rc == MEM_OK) {
        /* the exclusive lock covers the degree writes only; the rows they touched (the
         * deltas' rows, exactly what apply reports) go to the checkpoint after it */
        mem_index_t *idx = mem_store__linker_lock(lk, ns);
        int rc_u = mem_graph_apply(idx, &du, NULL, NULL);
        int rc_l = rc_u == MEM_OK ? mem_graph_apply(idx, &dl, NULL, NULL) : rc_u;
        mem_index_counts_t c;
        mem_index_counts(idx, &c);
        ns->pub_edges = c.graph_edges;
        ns->pub_max_degree = c.max_degree;
        if (rc_l == MEM_OK) g->g_rows = rows;
        mem_store__linker_unlock(lk, ns);
        for (size_t i = 0; rc_u == MEM_OK && i < du.n; i++)
            touch_bucket(&tc, du.pos[i]);
        for (size_t i = 0; rc_l == MEM_OK && i < dl.n; i++)
            touch_bucket(&tc, dl.pos[i]);
        rc = rc_l;
        mem_graph_delta_free(&du);
        mem_graph_delta_free(&dl);
    }
    for (size_t i = 0; rc == MEM_OK && i < leave_gone.n; i++)
        if (leave_gone.p[i] < n_leave)
            rc = push_gone(g, mem_index_seq(view, leave.p[leave_gone.p[i]]));
    if (tc.oom) g->ckpt_all = true; /* lost a bucket: the next checkpoint writes them all */
    double dt = mono_s() - t0;

    pthread_mutex_lock(&st->g_mu);
    g->busy = false;
    /* what is left (or everything, on a failure) is looked at again next time */
    size_t n_back = rc == MEM_OK ? (leave.n - n_leave) + (join.n - n_join) : n_cand;
    if (rc != MEM_OK) g->g_rows = from;
    if (n_back &&
        grow((void **)&g->pend, &g->cap_pend, g->n_pend + n_back, sizeof(*g->pend)) == MEM_OK) {
        size_t *to = g->pend + g->n_pend;
        if (rc != MEM_OK) {
            memcpy(to, cand, n_cand * sizeof(*to));
        } else {
            if (leave.n > n_leave) /* never memcpy from a NULL list, even for 0 bytes */
                memcpy(to, leave.p + n_leave, (leave.n - n_leave) * sizeof(*to));
            if (join.n > n_join)
                memcpy(to + (leave.n - n_leave), join.p + n_join, (join.n - n_join) * sizeof(*to));
        }
        g->n_pend += n_back;
    } else if (n_back) {
        g->g_rows = 0;
    }
    if (rc == MEM_OK && !n_back && gen > g->g_gen) g->g_gen = gen;
    st->g_batches++;
    st->g_stirred_s = mono_s();
    st->g_rows_done += rc == MEM_OK ? n_join + n_leave : 0;
    st->g_seconds += dt;
    if (g->w_gen > g->g_gen || g->n_pend) queue_locked(st, ns);
    pthread_cond_broadcast(&st->g_done_cv);
    pthread_mutex_unlock(&st->g_mu);
    free(cand);
    free(join.p);
    free(leave.p);
    free(leave_gone.p);
    if (rc != MEM_OK) { /* out of memory: let the rest of the process breathe */
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* ---- checkpoints ---- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void mem_store__ckpt_free(mem_store__ckpt_t *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n_buckets; i++)
        free(c->blob[i]);
    free(c->blob);
    free(c->blob_len);
    free(c->bucket);
    free(c->gone);
    mem_store__ns_release(c->ns);
    free(c);
}

/* The bucket's linked rows as (seq, degree) pairs, little-endian 8 + 4 bytes. */
static int bucket_blob(const mem_index_t *view, size_t rows, uint64_t b, unsigned char **out,
                       size_t *len)
{
    int64_t lo = (int64_t)(b * MEM_STORE__GRAPH_BUCKET), hi = lo + MEM_STORE__GRAPH_BUCKET;
    size_t p = mem_index_lower_seq(view, lo, rows);
    unsigned char *blob = NULL;
    size_t n = 0;
    for (; p < rows && mem_index_seq(view, p) < hi; p++) {
        if (!mem_index_linked(view, p)) continue;
        if (!blob && !(blob = malloc(MEM_STORE__GRAPH_BUCKET * 12))) return MEM_ENOMEM;
        uint64_t seq = (uint64_t)mem_index_seq(view, p);
        uint32_t deg = mem_index_degree(view, p);
        for (int k = 0; k < 8; k++)
            blob[n * 12 + (size_t)k] = (unsigned char)(seq >> (8 * k));
        for (int k = 0; k < 4; k++)
            blob[n * 12 + 8 + (size_t)k] = (unsigned char)(deg >> (8 * k));
        n++;
    }
    *out = blob;
    *len = n * 12;
    return MEM_OK;
}

/* ns's checkpoint (NULL when nothing changed, or on ENOMEM: tried again next time). */
static mem_store__ckpt_t *make_ckpt(mem_store__linker_t *lk, mem_store_ns_t *ns)
{
    mem_store_t *st = lk->st;
    mem_store_graph_t *g = &ns->g;
    pthread_mutex_lock(&st->g_mu);
    if (g->busy || __atomic_load_n(&ns->dropped, __ATOMIC_ACQUIRE)) {
        pthread_mutex_unlock(&st->g_mu);
        return NULL;
    }
    g->busy = true;
    pthread_mutex_unlock(&st->g_mu);
    const mem_index_t *view = mem_store__linker_view(lk, ns);
    size_t rows = g->g_rows;
    mem_store__ckpt_t *c = calloc(1, sizeof(*c));
    if (c && g->ckpt_all) { /* a lost note: every bucket the rows fall in */
        g->n_buckets = 0;
        touch_ctx_t tc = {g, view, false};
        for (size_t p = 0; p < rows && !tc.oom; p++)
            touch_bucket(&tc, p);
        if (!tc.oom) g->ckpt_all = false;
    }
    if (c && (g->n_buckets || g->n_gone || g->restamp)) {
        qsort(g->buckets, g->n_buckets, sizeof(*g->buckets), cmp_u64);
        size_t u = 0;
        for (size_t i = 0; i < g->n_buckets; i++)
            if (i == 0 || g->buckets[i] != g->buckets[i - 1]) g->buckets[u++] = g->buckets[i];
        c->bucket = malloc((u ? u : 1) * sizeof(*c->bucket));
        c->blob = calloc(u ? u : 1, sizeof(*c->blob));
        c->blob_len = calloc(u ? u : 1, sizeof(*c->blob_len));
        bool ok = c->bucket && c->blob && c->blob_len;
        for (size_t i = 0; ok && i < u; i++) {
            c->bucket[i] = g->buckets[i];
            ok = bucket_blob(view, rows, g->buckets[i], &c->blob[i], &c->blob_len[i]) == MEM_OK;
            c->n_buckets = i + 1;
        }
        if (ok) {
            c->gone = g->gone;
            c->n_gone = g->n_gone;
            c->restamp = g->restamp; /* with ckpt_all above: every bucket is in c */
            g->restamp = false;
            g->gone = NULL;
            g->n_gone = g->cap_gone = 0;
            g->n_buckets = 0;
            c->ns = ns;
            __atomic_add_fetch(&ns->refs, 1, __ATOMIC_ACQ_REL);
        } else {
            mem_store__ckpt_free(c); /* the lists stay: the next checkpoint tries again */
            c = NULL;
        }
    } else if (c) {
        free(c);
        c = NULL;
    }
    pthread_mutex_lock(&st->g_mu);
    g->busy = false;
    pthread_cond_broadcast(&st->g_done_cv);
    pthread_mutex_unlock(&st->g_mu);
    return c;
}

static void checkpoint_all(mem_store__linker_t *lk)
{
    mem_store_t *st = lk->st;
    pthread_rwlock_rdlock(&st->reg_lock);
    size_t n = st->n_nss, k = 0;
    mem_store_ns_t **held = malloc((n ? n : 1) * sizeof(*held));
    for (size_t i = 0; held && i < n; i++)
        if (st->nss[i]->coherence) {
            __atomic_add_fetch(&st->nss[i]->refs, 1, __ATOMIC_ACQ_REL);
            held[k++] = st->nss[i];
        }
    pthread_rwlock_unlock(&st->reg_lock);
    mem_store__ckpt_t *list = NULL, **tail = &list;
    for (size_t i = 0; held && i < k; i++) {
        mem_store__ckpt_t *c = make_ckpt(lk, held[i]);
        if (c) {
            *tail = c;
            tail = &c->next;
        }
        mem_store__ns_release(held[i]);
    }
    free(held);
    if (list) mem_store__ckpt_submit(st, list);
    lk->last_ckpt = mono_s();
}

/* ---- the thread ---- */

static void *linker_main(void *arg)
{
    mem_store__linker_t lk = {.st = arg, .last_ckpt = mono_s()};
    mem_store_t *st = lk.st;
    policy_start(st);
    for (;;) {
        pthread_mutex_lock(&st->g_mu);
        if ((!st->g_qn || st->g_paused) && !st->g_stop) {
            struct timespec dl;
            clock_gettime(CLOCK_REALTIME, &dl);
            dl.tv_sec += MEM_STORE__GRAPH_CKPT_MS / 1000;
            pthread_cond_timedwait(&st->g_cv, &st->g_mu, &dl);
        }
        bool stop = st->g_stop;
        uint64_t ckpt_req = st->ckpt_req;
        mem_store_ns_t *ns = NULL;
        if (!stop && st->g_qn && !st->g_paused) { /* first in, first out */
            ns = dequeue_locked(st);
            policy_locked(st, st->g_waiters == 0); /* it stirs: yield again unless awaited */
        }
        st->g_stirred_s = mono_s();
        bool idle = !st->g_qn || st->g_paused;
        pthread_mutex_unlock(&st->g_mu);
        if (stop) break;
        if (ns) {
            batch(&lk, ns);
            mem_store__ns_release(ns);
        }
        bool asked = ckpt_req != st->ckpt_done; /* read racily: confirmed under g_mu */
        if ((idle && !ns) || asked || mono_s() - lk.last_ckpt >= MEM_STORE__GRAPH_CKPT_MS / 1e3)
            checkpoint_all(&lk);
        if (asked) {
            pthread_mutex_lock(&st->g_mu);
            st->ckpt_done = ckpt_req;
            pthread_cond_broadcast(&st->g_done_cv);
            pthread_mutex_unlock(&st->g_mu);
        }
    }
    checkpoint_all(&lk); /* the writer writes it before it stops */
    release_queue(st);
    pthread_mutex_lock(&st->g_mu);
    st->g_tid = 0; /* nobody changes the policy of a thread id that may be reused */
    pthread_mutex_unlock(&st->g_mu);
    return NULL;
}

int mem_store__linker_start(mem_store_t *st, mem_err_t *err)
{
    policy_probe(st);
    if (pthread_create(&st->linker, NULL, linker_main, st) != 0)
        return mem_err_set(err, MEM_ESTORAGE, "cannot start the graph linker thread");
    pthread_setname_np(st->linker, "mnemod-graph");
    st->linker_started = true;
    return MEM_OK;
}

void mem_store__linker_pause(mem_store_t *st, bool paused)
{
    pthread_mutex_lock(&st->g_mu);
    st->g_paused = paused;
    pthread_cond_signal(&st->g_cv);
    pthread_mutex_unlock(&st->g_mu);
}

void mem_store__linker_stop(mem_store_t *st)
{
    if (!st) return;
    if (!st->linker_started) {
        release_queue(st);
        return;
    }
    pthread_mutex_lock(&st->g_mu);
    st->g_stop = true;
    /* the close waits for the batch it is in: idle, on a machine busy with other work, it
     * might not get the CPU to finish it for minutes, and the shutdown with it */
    policy_locked(st, false);
    pthread_cond_signal(&st->g_cv);
    pthread_cond_broadcast(&st->g_done_cv);
    pthread_mutex_unlock(&st->g_mu);
    pthread_join(st->linker, NULL);
    st->linker_started = false;
}

/* Namespaces whose graph holds changes no checkpoint has taken yet: a checkpoint that could
 * not be made keeps its lists for the next, and one the graph's owner (the linker, a
 * vacuum) is busy with counts as not taken. */
static size_t ckpt_pending(mem_store_t *st)
{
    size_t n = 0;
    pthread_rwlock_rdlock(&st->reg_lock);
    pthread_mutex_lock(&st->g_mu);
    for (size_t i = 0; i < st->n_nss; i++) {
        const mem_store_graph_t *g = &st->nss[i]->g;
        n += st->nss[i]->coherence && (g->busy || g->n_buckets || g->n_gone || g->ckpt_all);
    }
    pthread_mutex_unlock(&st->g_mu);
    pthread_rwlock_unlock(&st->reg_lock);
    return n;
}

/* One round: the graphs catch up, the linker makes its checkpoints, the writer writes them. */
static void settle_round(mem_store_t *st)
{
    pthread_mutex_lock(&st->g_mu);
    waiter_locked(st, true);
    pthread_mutex_unlock(&st->g_mu);
    while (st->linker_started && mem_store__graph_behind(st)) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_nsec += 50 * 1000000L;
        if (dl.tv_nsec >= 1000000000L) {
            dl.tv_sec++;
            dl.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&st->g_mu);
        pthread_cond_timedwait(&st->g_done_cv, &st->g_mu, &dl);
        pthread_mutex_unlock(&st->g_mu);
    }
    pthread_mutex_lock(&st->g_mu);
    waiter_locked(st, false);
    uint64_t mine = ++st->ckpt_req;
    pthread_cond_signal(&st->g_cv);
    while (st->linker_started && st->ckpt_done < mine)
        pthread_cond_wait(&st->g_done_cv, &st->g_mu);
    pthread_mutex_unlock(&st->g_mu);
    mem_store_sync(st);
}

int mem_store_settle(mem_store_t *st, mem_err_t *err)
{
    mem_store_sync(st);
    /* A group holding a checkpoint can fail (out of memory, a full disk): it rolls back and
     * reloads its namespaces from the last checkpoint, their graph behind again; a checkpoint
     * the linker could not make keeps its changes for the next. Either shows afterwards. */
    size_t behind = 0, pending = 0;
    for (int round = 0; round < MEM_STORE__SETTLE_ROUNDS; round++) {
        settle_round(st);
        if (!st->linker_started) return MEM_OK;
        behind = mem_store__graph_behind(st);
        pending = ckpt_pending(st);
        if (!behind && !pending) return MEM_OK;
    }
    return mem_err_set(err, MEM_ESTORAGE,
                       "graph checkpoint not written after %d tries: %zu graphs behind, %zu with "
                       "unwritten changes",
                       MEM_STORE__SETTLE_ROUNDS, behind, pending);
}
