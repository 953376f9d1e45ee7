/* test_storage_linker.c - the coherence graph off the write path: catch-up, waits, checkpoints
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE /* SCHED_IDLE */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* cmocka needs stdarg, stddef and setjmp first */
// clang-format off
#include <cmocka.h>
// clang-format on
#include <sqlite3.h>

#include "core/graph.h"
#include "core/scan.h"
#include "storage/store.h"
#include "storage/store_int.h"
#include "tests/unit/test_util.h"

#define STORE_FIXTURE_TAG "linker"
#include "tests/unit/store_fixture.h"

#define DIM   16
#define BATCH 250

static uint64_t seed = 20261201;

/* A vector near one of 6 centres (plenty of edges at 0.55). */
static void clustered(float *v, uint64_t *s, int cluster)
{
    for (int i = 0; i < DIM; i++) {
        double r = (double)(rng_next(s) >> 11) * 0x1.0p-53 - 0.5;
        v[i] = (float)(r * 0.9) + (i == cluster % DIM ? 2.0f : 0.0f) +
               (i == (cluster * 5 + 3) % DIM ? 1.0f : 0.0f);
    }
    assert_int_equal(mem_vec_normalize(v, DIM), 0);
}

/* A plain-cosine query for the k best (superseded and archived rows skipped). */
static mem_store_query_t plain_query(const float *q, size_t k)
{
    mem_store_query_t mq = {.q_dim = DIM};
    mq.scan.query = q;
    mq.scan.k = k;
    mq.scan.decay.kind = MEM_DECAY_NONE;
    mq.scan.since_ms = INT64_MIN;
    mq.scan.until_ms = INT64_MAX;
    return mq;
}

static float vecs[BATCH][DIM];
static mem_store_seg_in_t segs[BATCH];
static mem_store_seg_out_t outs[BATCH];

/* Insert n (<= BATCH) segments "<prefix><first + i>" at timestamps first + i, as one batch;
 * waits for the acknowledgement only. */
static int insert_batch(mem_store_t *st, const char *ns, const char *prefix, int first, int n,
                        uint64_t *s)
{
    mem_store_op_t op = {.kind = MEM_STORE_OP_INSERT,
                         .dim = DIM,
                         .now_ms = 1000000000,
                         .segs = segs,
                         .outs = outs,
                         .n_segs = (size_t)n,
                         .batch = true};
    snprintf(op.ns, sizeof(op.ns), "%s", ns);
    for (int i = 0; i < n; i++) {
        memset(&segs[i], 0, sizeof(segs[i]));
        snprintf(segs[i].id, sizeof(segs[i].id), "%s%d", prefix, first + i);
        segs[i].ts_given = true;
        segs[i].ts_ms = first + i;
        segs[i].text = "t";
        segs[i].text_len = 1;
        clustered(vecs[i], s, (int)(rng_next(s) % 6));
        segs[i].vec = vecs[i];
    }
    return store_fixture_run(st, &op);
}

static int simple(mem_store_t *st, mem_store_op_kind_t kind, const char *ns, const char *id,
                  size_t dim, bool no_graph)
{
    mem_store_op_t op = {.kind = kind, .dim = dim, .no_graph = no_graph, .now_ms = 1000000000};
    snprintf(op.ns, sizeof(op.ns), "%s", ns);
    if (id) snprintf(op.id, sizeof(op.id), "%s", id);
    return store_fixture_run(st, &op);
}

/* The namespace's graph against a from-scratch rebuild of its active rows. */
static void assert_graph_exact(mem_store_t *st, const char *name)
{
    store_fixture_graph_exact(st, name, 0.55f);
}

/* Right after acknowledged writes, the exact stats wait for the graph and equal a rebuild. */
static void test_exact_stats_after_bulk_insert(void **state)
{
    mem_store_opts_t o = store_fixture_opts();
    mem_store_t *st = store_fixture_open(&o);
    uint64_t s = seed;
    for (int b = 0; b < 6; b++)
        assert_int_equal(insert_batch(st, "g", "r", b * BATCH, BATCH, &s), MEM_OK);
    mem_store_ns_stats_t ex;
    assert_int_equal(mem_store_ns_stats_exact(st, "g", &ex, NULL), MEM_OK);
    assert_true(ex.coherence);
    assert_true(ex.graph_edges > 1000);
    assert_graph_exact(st, "g"); /* the stats read the same graph */
    /* deletes, supersedes (through a compaction that archives) follow too */
    for (int i = 0; i < 40; i++) {
        char id[16];
        snprintf(id, sizeof(id), "r%d", i * 7);
        assert_int_equal(simple(st, MEM_STORE_OP_DELETE, "g", id, 0, false), MEM_OK);
    }
    const char *ev[] = {"r3", "r5", "r11", "r13"};
    mem_store_op_t c = {.kind = MEM_STORE_OP_COMPACT, .ns = "g", .evict_ids = ev, .n_evict = 4};
    assert_int_equal(store_fixture_run(st, &c), MEM_OK);
    assert_int_equal(mem_store_ns_stats_exact(st, "g", &ex, NULL), MEM_OK);
    assert_graph_exact(st, "g");
    mem_store_metrics_t m;
    mem_store_get_metrics(st, &m);
    assert_true(m.graph_batches >= 1 && m.graph_rows >= 6 * BATCH);
    mem_store_close(st);
    /* and after a restart, from the checkpoint */
    st = store_fixture_open(&o);
    assert_int_equal(mem_store_ns_stats_exact(st, "g", &ex, NULL), MEM_OK);
    assert_graph_exact(st, "g");
    mem_store_close(st);
}

/* A read that needs the graph waits at most graph_wait_ms, then is MEM_EBUSY with a retry. */
static void test_wait_times_out(void **state)
{
    mem_store_opts_t o = store_fixture_opts();
    o.graph_wait_ms = 30;
    mem_store_t *st = store_fixture_open(&o);
    uint64_t s = seed + 1;
    assert_int_equal(insert_batch(st, "w", "r", 0, BATCH, &s), MEM_OK);
    assert_int_equal(mem_store_settle(st, NULL), MEM_OK);
    mem_store__linker_pause(st, true); /* the graph falls behind the next write */
    assert_int_equal(insert_batch(st, "w", "r", BATCH, BATCH, &s), MEM_OK);
    mem_store_ns_stats_t ex, plain;
    mem_err_t err;
    mem_err_clear(&err);
    assert_int_equal(mem_store_ns_stats_exact(st, "w", &ex, &err), MEM_EBUSY);
    assert_int_equal(err.retry_after_s, 1);
    assert_non_null(strstr(err.msg, "catching up"));
    /* the writes themselves were acknowledged and are visible; only the graph lags */
    assert_int_equal(mem_store_ns_stats(st, "w", &plain, NULL), MEM_OK);
    assert_int_equal(plain.count, 2 * BATCH);
    float q[DIM];
    clustered(q, &s, 2);
    mem_store_query_t mq = plain_query(q, 5);
    mem_store_result_t *res = NULL;
    size_t n = 0;
    assert_int_equal(mem_store_retrieve(st, "w", &mq, &res, &n, NULL, NULL, NULL), MEM_OK);
    mem_store_results_free(res, n); /* no graph needed: no wait */
    mq.scan.coherence_weight = 0.3;
    assert_int_equal(mem_store_retrieve(st, "w", &mq, &res, &n, NULL, NULL, NULL), MEM_EBUSY);
    mq.scan.coherence_weight = 0;
    mq.need_gates = true;
    assert_int_equal(mem_store_retrieve(st, "w", &mq, &res, &n, NULL, NULL, NULL), MEM_EBUSY);
    mem_store_compact_req_t req = {.policy = MEM_COMPACT_NOVELTY, .has_target = true};
    char **ev = NULL;
    size_t n_ev = 0, before = 0;
    assert_int_equal(mem_store_compact_plan(st, "w", &req, &ev, &n_ev, &before, NULL), MEM_EBUSY);
    /* an export carries no degrees: it never waits for the graph, and has every row */
    mem_store_export_t *x = NULL;
    assert_int_equal(mem_store_export_open(st, "w", &x, NULL), MEM_OK);
    mem_store_segment_t *seg = NULL;
    size_t n_exported = 0;
    int xrc;
    while ((xrc = mem_store_export_next(x, &seg, NULL)) == 1) {
        n_exported++;
        mem_store_segment_free(seg);
    }
    assert_int_equal(xrc, 0);
    assert_int_equal(n_exported, 2 * BATCH);
    mem_store_export_close(x);
    mem_store__linker_pause(st, false); /* it catches up: the same reads now succeed */
    /* (a wait of 30 ms is short for a slow machine) */
    assert_int_equal(mem_store_settle(st, NULL), MEM_OK);
    assert_int_equal(mem_store_ns_stats_exact(st, "w", &ex, NULL), MEM_OK);
    assert_graph_exact(st, "w");
    mem_store__linker_pause(st, true);
    assert_int_equal(insert_batch(st, "w", "r", 2 * BATCH, BATCH, &s), MEM_OK);
    mem_store_close(st); /* a paused linker does not keep the store from closing */
    o.graph_wait_ms = 60000;
    st = store_fixture_open(&o); /* the graph left behind is caught up after the restart */
    assert_int_equal(mem_store_ns_stats_exact(st, "w", &ex, NULL), MEM_OK);
    assert_graph_exact(st, "w");
    mem_store_close(st);
}

/* "coherence": false keeps no graph: no edges, no waits, coherence_weight > 0 refused. */
static void test_no_graph(void **state)
{
    mem_store_opts_t o = store_fixture_opts();
    mem_store_t *st = store_fixture_open(&o);
    assert_int_equal(simple(st, MEM_STORE_OP_NS_CREATE, "plain", NULL, DIM, true), MEM_OK);
    assert_int_equal(simple(st, MEM_STORE_OP_NS_CREATE, "plain", NULL, DIM, true), MEM_OK);
    assert_int_equal(simple(st, MEM_STORE_OP_NS_CREATE, "plain", NULL, DIM, false), MEM_EEXISTS);
    uint64_t s = seed + 2;
    assert_int_equal(insert_batch(st, "plain", "p", 0, BATCH, &s), MEM_OK);
    mem_store_ns_stats_t ex;
    assert_int_equal(mem_store_ns_stats_exact(st, "plain", &ex, NULL), MEM_OK);
    assert_false(ex.coherence);
    assert_int_equal(ex.graph_edges, 0);
    assert_int_equal(ex.max_degree, 0);
    assert_int_equal(ex.count, BATCH);
    float q[DIM];
    clustered(q, &s, 1);
    mem_store_query_t mq = plain_query(q, 5);
    mq.scan.coherence_weight = 0.5;
    mq.coherence_weight_given = true;
    mem_store_result_t *res = NULL;
    size_t n = 0;
    mem_err_t err;
    mem_err_clear(&err);
    assert_int_equal(mem_store_retrieve(st, "plain", &mq, &res, &n, NULL, NULL, &err), MEM_EINVAL);
    assert_string_equal(err.field, "coherence_weight");
    mq.coherence_weight_given = false; /* a configured default means nothing here */
    assert_int_equal(mem_store_retrieve(st, "plain", &mq, &res, &n, NULL, NULL, NULL), MEM_OK);
    assert_int_equal(n, 5);
    for (size_t i = 0; i < n; i++)
        assert_true(res[i].hit.gate == 0.0);
    mem_store_results_free(res, n);
    assert_int_equal(simple(st, MEM_STORE_OP_DELETE, "plain", "p7", 0, false), MEM_OK);
    mem_store_close(st);
    st = store_fixture_open(&o);
    assert_int_equal(mem_store_ns_stats_exact(st, "plain", &ex, NULL), MEM_OK);
    assert_false(ex.coherence);
    assert_int_equal(ex.count, BATCH - 1);
    mem_store_close(st);
    /* nothing of a graph is stored for it */
    assert_int_equal(store_fixture_sql_int(fx_dbpath, "SELECT (SELECT count(*) FROM graph_blocks) +"
                                                      " (SELECT count(*) FROM graph_gone)"),
                     0);
}

/* ---- a delete racing retrieves never shortens an answer ---- */

typedef struct racer {
    mem_store_t *st;
    int stop;
    int short_answers, missing_text, runs;
    int rc; /* the first failed retrieve's code (MEM_OK: none) */
} racer_t;

static void *retrieve_loop(void *arg)
{
    racer_t *r = arg;
    uint64_t s = seed + 99;
    while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
        float q[DIM];
        clustered(q, &s, (int)(rng_next(&s) % 6));
        mem_store_query_t mq = plain_query(q, 10);
        mem_store_result_t *res = NULL;
        size_t n = 0;
        int rc = mem_store_retrieve(r->st, "race", &mq, &res, &n, NULL, NULL, NULL);
        if (rc != MEM_OK) {
            int none = MEM_OK;
            __atomic_compare_exchange_n(&r->rc, &none, rc, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED);
            continue;
        }
        __atomic_add_fetch(&r->runs, 1, __ATOMIC_RELEASE);
        if (n != 10) __atomic_add_fetch(&r->short_answers, 1, __ATOMIC_RELAXED);
        for (size_t i = 0; i < n; i++)
            if (!res[i].text || strcmp(res[i].text, "t") != 0 || !res[i].id)
                __atomic_add_fetch(&r->missing_text, 1, __ATOMIC_RELAXED);
        mem_store_results_free(res, n);
    }
    return NULL;
}

static void test_delete_racing_retrieve(void **state)
{
    mem_store_opts_t o = store_fixture_opts();
    mem_store_t *st = store_fixture_open(&o);
    uint64_t s = seed + 3;
    for (int b = 0; b < 4; b++)
        assert_int_equal(insert_batch(st, "race", "d", b * BATCH, BATCH, &s), MEM_OK);
    racer_t r = {.st = st};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, retrieve_loop, &r), 0);
    /* the deletes start once the retrieves run (up to 60 s: a loaded machine may not have
     * scheduled them yet), or the race might not happen at all */
    for (int i = 0; i < 6000 && !__atomic_load_n(&r.runs, __ATOMIC_ACQUIRE); i++) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    assert_true(__atomic_load_n(&r.runs, __ATOMIC_ACQUIRE) > 0);
    for (int i = 0; i < 4 * BATCH - 50; i += 3) { /* most rows go, one by one */
        char id[16];
        snprintf(id, sizeof(id), "d%d", i);
        assert_int_equal(simple(st, MEM_STORE_OP_DELETE, "race", id, 0, false), MEM_OK);
    }
    __atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(r.rc, MEM_OK); /* a failed retrieve is an error, not a short answer */
    assert_true(r.runs > 0);
    assert_int_equal(r.short_answers, 0);
    assert_int_equal(r.missing_text, 0);
    mem_store_close(st);
}

/* ---- a crash between a delete and the next checkpoint ---- */

static void crash_child(void)
{
    mem_store_opts_t o = store_fixture_opts();
    mem_store_t *st = store_fixture_open(&o);
    uint64_t s = seed + 4;
    for (int b = 0; b < 3; b++)
        insert_batch(st, "c", "k", b * BATCH, BATCH, &s);
    if (mem_store_settle(st, NULL) != MEM_OK) /* the graph and its checkpoint hold every row */
        _exit(3);
    for (int i = 0; i < 120; i++) {
        char id[16];
        snprintf(id, sizeof(id), "k%d", i * 5);
        simple(st, MEM_STORE_OP_DELETE, "c", id, 0, false);
    }
    mem_store_sync(st); /* the deletes are committed; the graph may be anywhere */
    _exit(0);           /* no close: no last checkpoint */
}

static void test_crash_before_checkpoint(void **state)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) crash_child();
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    mem_store_opts_t o = store_fixture_opts();
    mem_store_t *st = store_fixture_open(&o);
    mem_store_ns_stats_t ex;
    assert_int_equal(mem_store_ns_stats_exact(st, "c", &ex, NULL), MEM_OK);
    assert_int_equal(ex.count, 3 * BATCH - 120);
    assert_graph_exact(st, "c"); /* the deleted rows' kept vectors let it unlink them */
    assert_int_equal(mem_store_settle(st, NULL), MEM_OK);
    mem_store_close(st);
    /* once the graph has let go of them, their vectors are gone too */
    assert_int_equal(store_fixture_sql_int(fx_dbpath, "SELECT count(*) FROM graph_gone"), 0);
    st = store_fixture_open(&o);
    assert_int_equal(mem_store_ns_stats_exact(st, "c", &ex, NULL), MEM_OK);
    assert_graph_exact(st, "c");
    mem_store_close(st);
}

/* ---- graph clean-up never runs on the writer ---- */

/* Whether the row named id is in ns's graph, read under the shared lock. */
static bool linked(mem_store_t *st, const char *ns_name, const char *id)
{
    mem_store_ns_t *ns = mem_store__ns_acquire(st, ns_name);
    assert_non_null(ns);
    const mem_index_t *v = mem_store__read_lock(ns);
    long pos = mem_index_find(v, id, strlen(id));
    bool in = pos >= 0 && mem_index_linked(v, (size_t)pos);
    mem_store__read_unlock(ns);
    mem_store__ns_release(ns);
    return in;
}

/* A big compaction and many deletes are acknowledged with the linker stopped: the writer
 * leaves every row's graph membership alone (unlinking is the linker's, in the background),
 * so an insert into an unrelated namespace right behind them is not held up by graph work.
 * Once the linker runs again, the graph equals a rebuild. */
static void test_cleanup_off_the_writer(void **state)
{
    mem_store_opts_t o = store_fixture_opts();
    mem_store_t *st = store_fixture_open(&o);
    uint64_t s = seed + 5;
    for (int b = 0; b < 8; b++)
        assert_int_equal(insert_batch(st, "big", "b", b * BATCH, BATCH, &s), MEM_OK);
    assert_int_equal(mem_store_settle(st, NULL), MEM_OK);
    assert_true(linked(st, "big", "b0") && linked(st, "big", "b1"));
    mem_store__linker_pause(st, true);
    enum { N_EVICT = 6 * BATCH };
    static char names[N_EVICT][16];
    static const char *ev[N_EVICT];
    for (int i = 0; i < N_EVICT; i++) {
        snprintf(names[i], sizeof(names[i]), "b%d", 2 * BATCH + i);
        ev[i] = names[i];
    }
    mem_store_op_t c = {
        .kind = MEM_STORE_OP_COMPACT, .ns = "big", .evict_ids = ev, .n_evict = N_EVICT};
    assert_int_equal(mem_store_submit(st, &c, NULL, NULL), MEM_OK);
    for (int i = 0; i < 2 * BATCH; i += 2) {
        char id[16];
        snprintf(id, sizeof(id), "b%d", i);
        assert_int_equal(simple(st, MEM_STORE_OP_DELETE, "big", id, 0, false), MEM_OK);
    }
    assert_int_equal(c.rc, MEM_OK);
    assert_int_equal(insert_batch(st, "other", "o", 0, 10, &s), MEM_OK);
    mem_store_ns_stats_t plain, ex;
    assert_int_equal(mem_store_ns_stats(st, "big", &plain, NULL), MEM_OK);
    assert_int_equal(plain.count, 8 * BATCH - BATCH - N_EVICT);
    /* the writer unlinked nothing: the evicted and the deleted rows' edges are still there */
    assert_true(linked(st, "big", names[0]) && linked(st, "big", names[N_EVICT - 1]));
    mem_store__linker_pause(st, false);
    assert_int_equal(mem_store_ns_stats_exact(st, "big", &ex, NULL), MEM_OK);
    assert_false(linked(st, "big", names[0]) || linked(st, "big", names[N_EVICT - 1]));
    assert_true(linked(st, "big", "b1"));
    assert_graph_exact(st, "big");
    assert_int_equal(mem_store_ns_stats_exact(st, "other", &ex, NULL), MEM_OK);
    assert_graph_exact(st, "other");
    mem_store_close(st);
}

/* ---- batches bounded by the work they do ---- */

/* With a budget of one row pair, every batch takes the minimum of rows: catch-up, deletes and
 * a compaction run in many small batches (the linker could stop between any two), leaves
 * put back in the list are taken later, and the graph still equals a rebuild. */
static void test_batches_bounded(void **state)
{
    mem_store_opts_t o = store_fixture_opts();
    o.graph_batch_pairs = 1;
    mem_store_t *st = store_fixture_open(&o);
    uint64_t s = seed + 6;
    mem_store_metrics_t m0, m1;
    mem_store_get_metrics(st, &m0);
    for (int b = 0; b < 6; b++)
        assert_int_equal(insert_batch(st, "s", "r", b * BATCH, BATCH, &s), MEM_OK);
    mem_store_ns_stats_t ex;
    assert_int_equal(mem_store_ns_stats_exact(st, "s", &ex, NULL), MEM_OK);
    mem_store_get_metrics(st, &m1);
    assert_true(m1.graph_batches - m0.graph_batches >= 6 * BATCH / MEM_STORE__GRAPH_MIN_ROWS);
    assert_graph_exact(st, "s");
    mem_store__linker_pause(st, true); /* so that the leaves pile up: more than one batch */
    enum { N_EVICT = 3 * MEM_STORE__GRAPH_MIN_ROWS + 5 };
    static char names[N_EVICT][16];
    static const char *ev[N_EVICT];
    for (int i = 0; i < N_EVICT; i++) {
        snprintf(names[i], sizeof(names[i]), "r%d", 3 * i + 1);
        ev[i] = names[i];
    }
    mem_store_op_t c = {
        .kind = MEM_STORE_OP_COMPACT, .ns = "s", .evict_ids = ev, .n_evict = N_EVICT};
    assert_int_equal(mem_store_submit(st, &c, NULL, NULL), MEM_OK);
    for (int i = 0; i < 2 * MEM_STORE__GRAPH_MIN_ROWS; i++) {
        char id[16];
        snprintf(id, sizeof(id), "r%d", 3 * i + 2);
        assert_int_equal(simple(st, MEM_STORE_OP_DELETE, "s", id, 0, false), MEM_OK);
    }
    assert_int_equal(c.rc, MEM_OK);
    assert_int_equal(insert_batch(st, "s", "r", 6 * BATCH, 100, &s), MEM_OK);
    mem_store__linker_pause(st, false);
    assert_int_equal(mem_store_ns_stats_exact(st, "s", &ex, NULL), MEM_OK);
    assert_int_equal(ex.count, 6 * BATCH + 100 - 2 * MEM_STORE__GRAPH_MIN_ROWS - N_EVICT);
    assert_graph_exact(st, "s");
    mem_store_close(st);
    st = store_fixture_open(&o); /* the checkpoint of the last of those batches */
    assert_int_equal(mem_store_ns_stats_exact(st, "s", &ex, NULL), MEM_OK);
    assert_graph_exact(st, "s");
    mem_store_close(st);
}

/* ---- the linker's priority ---- */

/* The kernel's flag of a task past the start of its exit (include/linux/sched.h). */
#define TASK_PF_EXITING 0x00000004u

/* The lowest nice value among this process's live threads (the most favoured one). A
 * thread that pthread_join has returned for is still listed in /proc/self/task until the
 * kernel has finished its exit (the join wakes at the exit's clearing of its thread id, the
 * task is unlisted later: on a loaded machine a previous test's linker at nice 10 can still
 * be there); such a task has PF_EXITING set, or vanishes while it is read: neither counts. */
static int lowest_nice(void)
{
    DIR *d = opendir("/proc/self/task");
    assert_non_null(d);
    int lowest = 100;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[300], buf[1024];
        snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue; /* a thread that just ended */
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        const char *p = strrchr(buf, ')');
        if (!p) continue; /* unlisted between the open and the read */
        /* after ") ": field 3 (state), then one space before each next field */
        const char *fields[20] = {0};
        const char *q = p + 2;
        for (int k = 3; k <= 19 && q; k++) {
            fields[k] = q;
            if ((q = strchr(q, ' '))) q++;
        }
        assert_non_null(fields[19]);
        unsigned flags = 0;
        int nice = 0;
        assert_int_equal(sscanf(fields[9], "%u", &flags), 1);
        assert_int_equal(sscanf(fields[19], "%d", &nice), 1);
        if (!(flags & TASK_PF_EXITING) && nice < lowest) lowest = nice;
    }
    closedir(d);
    return lowest;
}

/* The linker runs below the thread that opened the store, never above it: a server started
 * with nice 15 keeps its graph work at 19, not raised to an absolute 10. */
static void test_linker_nice_is_relative(void **state)
{
    int was = getpriority(PRIO_PROCESS, 0);
    if (was > 15) skip(); /* started above 15: nothing to compare */
    assert_int_equal(setpriority(PRIO_PROCESS, 0, 15), 0); /* this thread only (Linux) */
    mem_store_opts_t o = store_fixture_opts();
    mem_store_t *st = store_fixture_open(&o);
    uint64_t s = seed + 7;
    assert_int_equal(insert_batch(st, "n", "r", 0, BATCH, &s), MEM_OK);
    assert_int_equal(mem_store_settle(st, NULL), MEM_OK); /* the linker has run */
    assert_true(lowest_nice() >= 15);
    mem_store_close(st);
}

/* The linker's policy as the kernel reports it, and the store's note of it. */
static int linker_policy(mem_store_t *st, bool *idle_noted)
{
    pthread_mutex_lock(&st->g_mu);
    int tid = st->g_tid;
    *idle_noted = st->g_idle;
    pthread_mutex_unlock(&st->g_mu);
    assert_true(tid > 0);
    return sched_getscheduler(tid);
}

/* Poll (up to 10 s) until the linker runs under policy. */
static bool linker_policy_becomes(mem_store_t *st, int policy)
{
    bool noted;
    for (int i = 0; i < 1000; i++) {
        if (linker_policy(st, &noted) == policy && noted == (policy == SCHED_IDLE)) return true;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return false;
}

typedef struct waiting_read {
    mem_store_t *st;
    int rc;
} waiting_read_t;

static void *exact_stats(void *arg)
{
    waiting_read_t *w = arg;
    mem_store_ns_stats_t ex;
    w->rc = mem_store_ns_stats_exact(w->st, "y", &ex, NULL);
    return NULL;
}

/* The graph's work yields the CPU (SCHED_IDLE) while nobody waits for it; a read that waits
 * for the graph, or a linker with work that has not stirred for MEM_STORE__GRAPH_STARVE_MS,
 * makes it compete again (at its nice value), and it yields again once it takes work that
 * nobody waits for. Without the right to leave SCHED_IDLE it never enters it. */
static void test_linker_yields_unless_awaited(void **state)
{
    mem_store_opts_t o = store_fixture_opts();
    o.graph_wait_ms = 60000;
    mem_store_t *st = store_fixture_open(&o);
    uint64_t s = seed + 9;
    assert_int_equal(insert_batch(st, "y", "r", 0, BATCH, &s), MEM_OK);
    assert_int_equal(mem_store_settle(st, NULL), MEM_OK);
    pthread_mutex_lock(&st->g_mu);
    bool can_idle = st->g_can_idle;
    pthread_mutex_unlock(&st->g_mu);
    if (!can_idle) { /* no CAP_SYS_NICE, no RLIMIT_NICE: it stays at its nice value */
        bool noted;
        assert_int_equal(linker_policy(st, &noted), SCHED_OTHER);
        assert_false(noted);
        mem_store_close(st);
        skip();
    }
    /* the settle made it compete; the next work nobody waits for makes it yield */
    assert_int_equal(insert_batch(st, "y", "r", BATCH, BATCH, &s), MEM_OK);
    assert_true(linker_policy_becomes(st, SCHED_IDLE));

    /* a read that waits for the graph makes it compete, and gets an exact answer */
    mem_store__linker_pause(st, true);
    assert_int_equal(insert_batch(st, "y", "r", 2 * BATCH, BATCH, &s), MEM_OK);
    waiting_read_t w = {st, -1};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, exact_stats, &w), 0);
    assert_true(linker_policy_becomes(st, SCHED_OTHER));
    mem_store__linker_pause(st, false);
    pthread_join(th, NULL);
    assert_int_equal(w.rc, MEM_OK);
    assert_graph_exact(st, "y");

    /* starved: work queued, the linker has not stirred for longer than the bound */
    assert_int_equal(insert_batch(st, "y", "r", 3 * BATCH, BATCH, &s), MEM_OK);
    assert_true(linker_policy_becomes(st, SCHED_IDLE));
    mem_store__linker_pause(st, true);
    assert_int_equal(insert_batch(st, "y", "r", 4 * BATCH, BATCH, &s), MEM_OK);
    bool noted;
    assert_int_equal(linker_policy(st, &noted), SCHED_IDLE); /* not starved yet */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&st->g_mu);
    st->g_stirred_s =
        (double)now.tv_sec + (double)now.tv_nsec / 1e9 - 2.0 * MEM_STORE__GRAPH_STARVE_MS / 1e3;
    pthread_mutex_unlock(&st->g_mu);
    (void)mem_store__graph_behind(st); /* /metrics asks: it sees the starvation */
    assert_int_equal(linker_policy(st, &noted), SCHED_OTHER);
    assert_false(noted);
    mem_store__linker_pause(st, false);
    assert_true(linker_policy_becomes(st, SCHED_IDLE)); /* it took the work: yields again */
    assert_int_equal(mem_store_settle(st, NULL), MEM_OK);
    assert_graph_exact(st, "y");

    /* a close waits for the batch the linker is in: the stop makes it compete (idle, on a
     * machine busy with other work, the batch and the shutdown could take minutes) */
    assert_int_equal(insert_batch(st, "y", "r", 5 * BATCH, BATCH, &s), MEM_OK);
    assert_true(linker_policy_becomes(st, SCHED_IDLE));
    mem_store__linker_stop(st);
    pthread_mutex_lock(&st->g_mu);
    bool idle_at_stop = st->g_idle, still_can = st->g_can_idle;
    pthread_mutex_unlock(&st->g_mu);
    assert_false(idle_at_stop);
    assert_true(still_can); /* the kernel took the change */
    mem_store_close(st);
}

/* ---- a read waiting for the graph while its namespace is reloaded ---- */

typedef struct reload_read {
    mem_store_t *st;
    int stats_rc, gates_rc;
    mem_store_ns_stats_t stats;
    mem_store_result_t *res;
    size_t n;
} reload_read_t;

static void *stats_waiting(void *arg)
{
    reload_read_t *r = arg;
    r->stats_rc = mem_store_ns_stats_exact(r->st, "rl", &r->stats, NULL);
    return NULL;
}

static float gate_query[DIM];

static void *gates_waiting(void *arg)
{
    reload_read_t *r = arg;
    mem_store_query_t mq = plain_query(gate_query, 20);
    mq.need_gates = true;
    r->gates_rc = mem_store_retrieve(r->st, "rl", &mq, &r->res, &r->n, NULL, NULL, NULL);
    return NULL;
}

/* Reads that wait for a graph (the exact stats, the gates of a retrieve) while a failed
 * group reloads their namespace: the reload marks the copy they hold dropped, which ends
 * their wait on it, but that copy's graph never catches up (the linker skips dropped
 * copies). Their answers must come from the reloaded copy, once its graph has caught up:
 * the degrees and gates equal a rebuild's, not the old copy's graph of the first batch. */
static void test_wait_follows_reload(void **state)
{
    mem_store_opts_t o = store_fixture_opts();
    mem_store_t *st = store_fixture_open(&o);
    uint64_t s = seed + 10;
    assert_int_equal(insert_batch(st, "rl", "r", 0, BATCH, &s), MEM_OK);
    assert_int_equal(mem_store_settle(st, NULL), MEM_OK);
    mem_store_ns_stats_t first;
    assert_int_equal(mem_store_ns_stats_exact(st, "rl", &first, NULL), MEM_OK);
    mem_store__linker_pause(st, true); /* the graph stays behind the second batch */
    assert_int_equal(insert_batch(st, "rl", "r", BATCH, BATCH, &s), MEM_OK);
    clustered(gate_query, &s, 3);
    reload_read_t r = {.st = st, .stats_rc = -1, .gates_rc = -1};
    pthread_t th[2];
    assert_int_equal(pthread_create(&th[0], NULL, stats_waiting, &r), 0);
    assert_int_equal(pthread_create(&th[1], NULL, gates_waiting, &r), 0);
    bool both_wait = false; /* until both reads wait for the graph (up to 60 s) */
    for (int i = 0; i < 6000 && !both_wait; i++) {
        pthread_mutex_lock(&st->g_mu);
        both_wait = st->g_waiters == 2;
        pthread_mutex_unlock(&st->g_mu);
        struct timespec ts = {0, 10 * 1000000L};
        if (!both_wait) nanosleep(&ts, NULL);
    }
    assert_true(both_wait);
    /* a group that fails (the disk is full) and reloads "rl" from SQLite */
    mem_store_ns_t *old = mem_store__ns_acquire(st, "rl");
    assert_non_null(old);
    mem_store_set_max_page_count(st, 1); /* clamps to the current size */
    static char big[300000];
    memset(big, 'x', sizeof(big) - 1);
    mem_store_seg_in_t seg = {.id = "big", .text = big, .text_len = sizeof(big) - 1};
    float bv[DIM];
    clustered(bv, &s, 1);
    seg.vec = bv;
    mem_store_seg_out_t out;
    mem_store_op_t op = {.kind = MEM_STORE_OP_INSERT,
                         .ns = "rl",
                         .dim = DIM,
                         .now_ms = 1000000000,
                         .segs = &seg,
                         .outs = &out,
                         .n_segs = 1};
    assert_int_equal(store_fixture_run(st, &op), MEM_EFULL);
    mem_store_set_max_page_count(st, 0);
    mem_store_ns_t *fresh = mem_store__ns_acquire(st, "rl");
    assert_non_null(fresh);
    assert_true(fresh != old); /* reloaded: a new copy */
    assert_true(__atomic_load_n(&old->dropped, __ATOMIC_ACQUIRE));
    mem_store__ns_release(fresh);
    mem_store__ns_release(old);
    mem_store__linker_pause(st, false);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(r.stats_rc, MEM_OK);
    assert_int_equal(r.gates_rc, MEM_OK);
    /* what the reloaded copy's graph says once it caught up, and a rebuild of it */
    assert_int_equal(mem_store_settle(st, NULL), MEM_OK);
    assert_graph_exact(st, "rl");
    mem_store_ns_stats_t now;
    assert_int_equal(mem_store_ns_stats_exact(st, "rl", &now, NULL), MEM_OK);
    assert_int_equal(r.stats.count, 2 * BATCH);
    assert_true(now.graph_edges > first.graph_edges); /* the second batch adds edges */
    assert_int_equal(r.stats.graph_edges, now.graph_edges);
    assert_int_equal(r.stats.max_degree, now.max_degree);
    mem_store_query_t mq = plain_query(gate_query, 20);
    mq.need_gates = true;
    mem_store_result_t *res = NULL;
    size_t n = 0;
    assert_int_equal(mem_store_retrieve(st, "rl", &mq, &res, &n, NULL, NULL, NULL), MEM_OK);
    assert_int_equal(r.n, n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(r.res[i].id, res[i].id);
        assert_true(r.res[i].hit.gate == res[i].hit.gate);
    }
    mem_store_results_free(res, n);
    mem_store_results_free(r.res, r.n);
    mem_store_close(st);
}

/* ---- the WAL is checkpointed after the answers ---- */

typedef struct sizes {
    off_t db, wal;
} sizes_t;

static off_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? sb.st_size : 0;
}

static void note_sizes(mem_store_op_t *op, void *ud)
{
    sizes_t *z = ud;
    char wal[512];
    snprintf(wal, sizeof(wal), "%s-wal", fx_dbpath);
    z->db = file_size(fx_dbpath);
    z->wal = file_size(wal);
}

/* A group that fills the WAL with thousands of pages is answered before they are copied into
 * the database (SQLite's autocheckpoint would copy them inside COMMIT, so a big import's
 * answer waited for it); the checkpointer thread copies them right after. */
static void test_wal_checkpoint_after_answer(void **state)
{
    mem_store_opts_t o = store_fixture_opts();
    mem_store_t *st = store_fixture_open(&o);
    uint64_t s = seed + 8;
    assert_int_equal(insert_batch(st, "w", "r", 0, 1, &s), MEM_OK);
    mem_store_sync(st);
    off_t db0 = file_size(fx_dbpath);
    enum { TEXT = 24 * 1024 };
    char *text = malloc(TEXT);
    assert_non_null(text);
    for (size_t i = 0; i < TEXT; i++)
        text[i] = (char)('a' + (i * 7 + i / 5) % 26);
    mem_store_op_t op = {.kind = MEM_STORE_OP_INSERT,
                         .dim = DIM,
                         .now_ms = 1000000000,
                         .segs = segs,
                         .outs = outs,
                         .n_segs = BATCH,
                         .batch = true};
    snprintf(op.ns, sizeof(op.ns), "w");
    for (int i = 0; i < BATCH; i++) {
        memset(&segs[i], 0, sizeof(segs[i]));
        snprintf(segs[i].id, sizeof(segs[i].id), "big%d", i);
        segs[i].text = text;
        segs[i].text_len = TEXT; /* 250 x 24 KiB: about 1500 pages */
        clustered(vecs[i], &s, i % 6);
        segs[i].vec = vecs[i];
    }
    sizes_t z = {0};
    assert_int_equal(mem_store_submit(st, &op, note_sizes, &z), MEM_OK);
    mem_store_sync(st);
    assert_int_equal(op.rc, MEM_OK);
    assert_true(z.wal > (off_t)BATCH * TEXT);          /* the rows were in the WAL when answered */
    assert_true(z.db < db0 + (off_t)BATCH * TEXT / 4); /* and not yet in the database */
    for (int i = 0; i < 400 && file_size(fx_dbpath) <= db0 + (off_t)BATCH * TEXT / 2; i++) {
        struct timespec ts = {0, 25 * 1000 * 1000}; /* the checkpointer runs beside us */
        nanosleep(&ts, NULL);
    }
    assert_true(file_size(fx_dbpath) > db0 + (off_t)BATCH * TEXT / 2); /* copied since */
    free(text);
    mem_store_close(st);
}

/* A checkpoint the writer cannot write (the disk is full): settle tries again a few times,
 * then says so instead of returning with the graph behind; with room again it settles, and
 * the graph read back after a restart is exact. */
static void test_settle_reports_failed_checkpoint(void **state)
{
    mem_store_opts_t o = store_fixture_opts();
    mem_store_t *st = store_fixture_open(&o);
    uint64_t s = seed + 9;
    assert_int_equal(insert_batch(st, "f", "r", 0, BATCH, &s), MEM_OK);
    assert_int_equal(mem_store_settle(st, NULL), MEM_OK);
    mem_store__linker_pause(st, true); /* the next rows are linked only once the disk is full */
    for (int b = 1; b < 3; b++)
        assert_int_equal(insert_batch(st, "f", "r", b * BATCH, BATCH, &s), MEM_OK);
    mem_store_sync(st);
    mem_store_set_max_page_count(st, 1); /* clamps to the current size */
    mem_store__linker_pause(st, false);
    mem_err_t err;
    mem_err_clear(&err);
    assert_int_equal(mem_store_settle(st, &err), MEM_ESTORAGE);
    assert_non_null(strstr(err.msg, "graph checkpoint not written"));
    mem_store_set_max_page_count(st, 0);
    assert_int_equal(mem_store_settle(st, NULL), MEM_OK);
    assert_graph_exact(st, "f");
    mem_store_close(st);
    st = store_fixture_open(&o); /* from the checkpoint alone */
    mem_store_ns_stats_t ex;
    assert_int_equal(mem_store_ns_stats_exact(st, "f", &ex, NULL), MEM_OK);
    assert_int_equal(ex.count, 3 * BATCH);
    assert_graph_exact(st, "f");
    mem_store_close(st);
}

/* ---- the stored graph records its rule and threshold ---- */

/* The stored graph's record, read from the file: MEM_GRAPH_RULE and thr. */
static void assert_stamp(const char *ns, float thr)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_open(fx_dbpath, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT ifnull(graph_rule, -1), graph_threshold FROM"
                                        " namespaces WHERE name = ?",
                                        -1, &q, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(q, 1, ns, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(q, 0), MEM_GRAPH_RULE);
    assert_true(sqlite3_column_double(q, 1) == (double)thr);
    sqlite3_finalize(q);
    sqlite3_close(db);
}

/* Once the graph has caught up and is stored: it equals a rebuild at thr. */
static void settled_exact(mem_store_t *st, const char *ns, float thr)
{
    store_fixture_settle(st);
    store_fixture_graph_exact(st, ns, thr);
}

/* A store opened with o: n_batches of BATCH rows "r0".. into ns, the graph stored. */
static void fill(const mem_store_opts_t *o, const char *ns, int n_batches, uint64_t s)
{
    mem_store_t *st = store_fixture_open(o);
    for (int k = 0; k < n_batches; k++)
        assert_int_equal(insert_batch(st, ns, "r", k * BATCH, BATCH, &s), MEM_OK);
    settled_exact(st, ns, o->coherence_threshold);
    mem_store_close(st);
    assert_stamp(ns, o->coherence_threshold);
}

/* Deletes "r<from>", "r<from + step>", ... (n of them) from ns. */
static void delete_some(mem_store_t *st, const char *ns, int from, int step, int n)
{
    for (int i = 0; i < n; i++) {
        char id[16];
        snprintf(id, sizeof(id), "r%d", from + i * step);
        assert_int_equal(simple(st, MEM_STORE_OP_DELETE, ns, id, 0, false), MEM_OK);
    }
}

/* A restart with another threshold builds the graph again (it does not reuse the degrees
 * stored under the old one) and records the new threshold with the graph; deletes after it
 * leave degrees that a later start restores without calling the file damaged. */
static void test_threshold_change_rebuilds(void **state)
{
    mem_store_opts_t a = store_fixture_opts(), b = store_fixture_opts();
    b.coherence_threshold = 0.7f;
    fill(&a, "t", 3, seed ^ 0x5bd1e995u);
    mem_store_t *st = store_fixture_open(&a);
    mem_store_ns_stats_t at_a, at_b;
    assert_int_equal(mem_store_ns_stats_exact(st, "t", &at_a, NULL), MEM_OK);
    mem_store_close(st);

    st = store_fixture_open(&b); /* the stored degrees are 0.55's */
    assert_int_equal(mem_store_ns_stats_exact(st, "t", &at_b, NULL), MEM_OK);
    assert_true(at_b.graph_edges < at_a.graph_edges); /* a higher threshold, fewer edges */
    settled_exact(st, "t", 0.7f);
    mem_store_close(st);
    assert_stamp("t", 0.7f);

    st = store_fixture_open(&b); /* restored from 0.7's checkpoint */
    settled_exact(st, "t", 0.7f);
    delete_some(st, "t", 3, 7, 60);
    settled_exact(st, "t", 0.7f);
    mem_store_close(st);
    st = store_fixture_open(&b); /* no "damaged" refusal: the degrees are 0.7's */
    settled_exact(st, "t", 0.7f);
    mem_store_close(st);
    /* back to 0.55, deletes at once (the rebuild may not be stored yet), and a restart */
    st = store_fixture_open(&a);
    delete_some(st, "t", 500, 7, 30);
    settled_exact(st, "t", 0.55f);
    mem_store_close(st);
    st = store_fixture_open(&a);
    settled_exact(st, "t", 0.55f);
    mem_store_close(st);
    assert_stamp("t", 0.55f);
}

/* A stored graph made under another edge rule (an older mnemod's), or that records none (a
 * file of schema 4), is built again, whatever degrees it holds. */
static void test_other_rule_rebuilds(void **state)
{
    mem_store_opts_t o = store_fixture_opts(), low = store_fixture_opts();
    low.coherence_threshold = 0.3f;
    fill(&low, "u", 2, seed ^ 0x27d4eb2fu);
    /* the degrees are 0.3's; the record claims rule 1 at 0.55 */
    store_fixture_sql(fx_dbpath, "UPDATE namespaces SET graph_rule = 1, graph_threshold = 0.55");
    mem_store_t *st = store_fixture_open(&o);
    settled_exact(st, "u", 0.55f);
    mem_store_close(st);
    assert_stamp("u", 0.55f);
    /* no record at all, and the stored graph lies */
    store_fixture_sql(fx_dbpath, "UPDATE namespaces SET graph_rule = NULL, graph_threshold = NULL;"
                                 "UPDATE graph_blocks SET data = substr(data, 1, 12)");
    st = store_fixture_open(&o);
    settled_exact(st, "u", 0.55f);
    delete_some(st, "u", 1, 9, 20);
    settled_exact(st, "u", 0.55f);
    mem_store_close(st);
    st = store_fixture_open(&o);
    settled_exact(st, "u", 0.55f);
    mem_store_close(st);
    assert_stamp("u", 0.55f);
}

int main(void)
{
    const char *env = getenv("MEM_TEST_SEED");
    if (env) seed = strtoull(env, NULL, 10);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_threshold_change_rebuilds, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_other_rule_rebuilds, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_exact_stats_after_bulk_insert, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_wait_times_out, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_no_graph, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_delete_racing_retrieve, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_crash_before_checkpoint, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_cleanup_off_the_writer, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_batches_bounded, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_wal_checkpoint_after_answer, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_linker_yields_unless_awaited, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_wait_follows_reload, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_linker_nice_is_relative, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_settle_reports_failed_checkpoint, store_fixture_setup,
                                        store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
