/* bench_ingest.c - acknowledged ingest through the store, and the graph's catch-up
 * SPDX-License-Identifier: MIT
 *
 * In process, the store as the server runs it (durable: synchronous=FULL, WAL, the writer
 * thread, the graph's linker thread), on the seeded clustered corpus of BENCH.md section 3
 * at dim 384 (vectors already decoded: the JSON parse is the API's, measured by
 * bench_num and over HTTP by bench/http). It times:
 *   - batches of 1000 into an empty namespace and into one already holding N (default
 *     100000, BENCH_INGEST_N): segments acknowledged per second (submit to done callback,
 *     one batch at a time, as a client that waits for each 201 would see it);
 *   - durable single inserts at concurrency 32 (32 threads, each waiting for its ack
 *     before sending the next) into the N namespace;
 *   - the coherence graph catching up: rows linked per second by the linker, reported
 *     separately (acks never wait for it), and the first 8 batches' wait until an exact
 *     stats read could answer; after the load of N, the catch-up alone (rows per second
 *     of the linker's batches and per CPU second).
 * Writes bench/results/ingest.json.
 */
#define MEM_BENCH_WITH_INDEX
#include <pthread.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "core/err.h"
#include "storage/store.h"
#include "storage/store_int.h" /* mem_store__linker_pause: the writer's own rate */

#define DIM      384
#define BATCH    1000
#define BATCHES  20
#define SINGLE_C 32

static mem_store_t *open_store(const char *path)
{
    mem_store_opts_t o = {.path = path,
                          .sync_full = true,
                          .coherence_threshold = 0.55f,
                          .max_namespaces = 10,
                          .max_queue = 100000,
                          .ops = bench_ops(),
                          .graph_wait_ms = 3600000};
    mem_store_t *st = NULL;
    mem_err_t err;
    if (mem_store_open(&o, &st, &err) != MEM_OK) {
        fprintf(stderr, "open %s: %s\n", path, err.msg);
        exit(1);
    }
    return st;
}

typedef struct batch {
    mem_store_seg_in_t segs[BATCH];
    mem_store_seg_out_t outs[BATCH];
    float vecs[BATCH][DIM];
    mem_store_op_t op;
} batch_t;

static int64_t next_ts = BENCH_T0_MS;

static void fill(batch_t *b, const char *ns, bench_corpus_t *c, size_t first, size_t n)
{
    memset(&b->op, 0, sizeof(b->op));
    for (size_t i = 0; i < n; i++) {
        memset(&b->segs[i], 0, sizeof(b->segs[i]));
        snprintf(b->segs[i].id, sizeof(b->segs[i].id), "%s-%zu", ns, first + i);
        b->segs[i].ts_given = true;
        b->segs[i].ts_ms = next_ts++;
        b->segs[i].text = "a memory of about this length, as agents write them";
        b->segs[i].text_len = strlen(b->segs[i].text);
        bench_corpus_vec(c, b->vecs[i]);
        b->segs[i].vec = b->vecs[i];
    }
    b->op.kind = MEM_STORE_OP_INSERT;
    snprintf(b->op.ns, sizeof(b->op.ns), "%s", ns);
    b->op.dim = DIM;
    b->op.now_ms = BENCH_T0_MS + BENCH_YEAR_MS;
    b->op.segs = b->segs;
    b->op.outs = b->outs;
    b->op.n_segs = n;
    b->op.batch = n > 1;
}

typedef struct waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
} waiter_t;

static void on_done(mem_store_op_t *op, void *ud)
{
    waiter_t *w = ud;
    pthread_mutex_lock(&w->mu);
    w->done = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* Submit and wait for the acknowledgement; the time it took, in ns. */
static uint64_t run_acked(mem_store_t *st, mem_store_op_t *op)
{
    waiter_t w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    uint64_t t0 = bench_now_ns();
    if (mem_store_submit(st, op, on_done, &w) != MEM_OK) exit(1);
    pthread_mutex_lock(&w.mu);
    while (!w.done)
        pthread_cond_wait(&w.cv, &w.mu);
    pthread_mutex_unlock(&w.mu);
    uint64_t dt = bench_now_ns() - t0;
    if (op->rc != MEM_OK) {
        fprintf(stderr, "insert: %s\n", op->err.msg);
        exit(1);
    }
    return dt;
}

/* CPU seconds of the whole process so far. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct phase {
    double acked_per_s; /* segments acknowledged per second */
    double batch_p50_ms, batch_p95_ms;
    double graph_rows_per_s; /* the linker's rate over the phase (linked or unlinked rows) */
    double graph_lag_s;      /* from the last ack until an exact stats read answered */
} phase_t;

static void graph_counts(mem_store_t *st, uint64_t *rows, double *secs)
{
    mem_store_metrics_t m;
    mem_store_get_metrics(st, &m);
    *rows = m.graph_rows;
    *secs = m.graph_seconds;
}

/* BENCH_INGEST_ALONE=1: the graph's linker is paused while acks are timed (the writer's own
 * rate: the ceiling of what the graph leaves it on a loaded machine). */
static bool alone;

static phase_t batches(mem_store_t *st, const char *ns, bench_corpus_t *c, size_t first, batch_t *b)
{
    phase_t ph = {0};
    uint64_t ns_batch[BATCHES], total = 0, r0, r1;
    double s0, s1;
    graph_counts(st, &r0, &s0);
    if (alone) mem_store__linker_pause(st, true);
    for (size_t i = 0; i < BATCHES; i++) {
        fill(b, ns, c, first + i * BATCH, BATCH);
        ns_batch[i] = run_acked(st, &b->op);
        total += ns_batch[i];
    }
    if (alone) mem_store__linker_pause(st, false);
    uint64_t t0 = bench_now_ns();
    mem_store_ns_stats_t s;
    mem_err_t err;
    if (mem_store_ns_stats_exact(st, ns, &s, &err) != MEM_OK) {
        fprintf(stderr, "stats: %s\n", err.msg);
        exit(1);
    }
    ph.graph_lag_s = (double)(bench_now_ns() - t0) / 1e9;
    graph_counts(st, &r1, &s1);
    bench_stats_t bs = bench_stats(ns_batch, BATCHES);
    ph.acked_per_s = (double)(BATCHES * BATCH) / ((double)total / 1e9);
    ph.batch_p50_ms = bs.p50_us / 1e3;
    ph.batch_p95_ms = bs.p95_us / 1e3;
    ph.graph_rows_per_s = s1 > s0 ? (double)(r1 - r0) / (s1 - s0) : 0;
    return ph;
}

typedef struct single_ctx {
    mem_store_t *st;
    bench_corpus_t corpus;
    int tid;
    size_t n;
    uint64_t *lat;
} single_ctx_t;

static void *single_main(void *arg)
{
    single_ctx_t *s = arg;
    batch_t *b = malloc(sizeof(*b));
    for (size_t i = 0; i < s->n; i++) {
        char ns_id[16];
        snprintf(ns_id, sizeof(ns_id), "big");
        fill(b, ns_id, &s->corpus, 0, 1);
        snprintf(b->segs[0].id, sizeof(b->segs[0].id), "single-%d-%zu", s->tid, i);
        b->segs[0].ts_given = false; /* "now": concurrent writers, no ordering to arrange */
        s->lat[i] = run_acked(s->st, &b->op);
    }
    free(b);
    return NULL;
}

int main(void)
{
    const char *env = getenv("BENCH_INGEST_N");
    size_t big_n = env ? (size_t)strtoull(env, NULL, 10) : 100000;
    big_n = big_n / BATCH * BATCH;
    const mem_vec_ops_t *ops = bench_ops();
    bench_print_machine("ingest", ops);
    char dir[] = "/tmp/mnemod-bench-ingest-XXXXXX", path[128];
    if (!mkdtemp(dir)) return 1;
    snprintf(path, sizeof(path), "%s/bench.db", dir);
    mem_store_t *st = open_store(path);
    bench_corpus_t c;
    bench_corpus_init(&c, DIM, 20261201);
    batch_t *b = malloc(sizeof(*b));

    const char *alone_env = getenv("BENCH_INGEST_ALONE");
    alone = alone_env && *alone_env == '1';
    phase_t empty = batches(st, "empty", &c, 0, b);
    printf("into an empty namespace: %8.0f segments/s acknowledged (batch p50 %.1f ms, p95 "
           "%.1f ms); graph %8.0f rows/s, caught up %.2f s after the last ack\n",
           empty.acked_per_s, empty.batch_p50_ms, empty.batch_p95_ms, empty.graph_rows_per_s,
           empty.graph_lag_s);

    /* the big namespace: loaded, then its graph caught up, then measured */
    uint64_t t0 = bench_now_ns();
    for (size_t i = 0; i < big_n; i += BATCH) {
        fill(b, "big", &c, i, BATCH);
        run_acked(st, &b->op);
    }
    double load_s = (double)(bench_now_ns() - t0) / 1e9;
    mem_store_ns_stats_t s;
    mem_err_t err;
    uint64_t r0, r1;
    double s0, s1;
    graph_counts(st, &r0, &s0);
    t0 = bench_now_ns();
    double cpu0 = cpu_s();
    if (mem_store_ns_stats_exact(st, "big", &s, &err) != MEM_OK) {
        fprintf(stderr, "stats: %s\n", err.msg);
        return 1;
    }
    double catch_s = (double)(bench_now_ns() - t0) / 1e9, catch_cpu_s = cpu_s() - cpu0;
    graph_counts(st, &r1, &s1);
    /* the catch-up: the rows the linker took after the last ack, per second of its batches
     * and per second of CPU (only the linker runs then: robust to a busy machine, where
     * its lower priority leaves it whatever the other processes do not take) */
    double catch_rows_per_s = s1 > s0 ? (double)(r1 - r0) / (s1 - s0) : 0;
    double catch_rows_per_cpu_s = catch_cpu_s > 0 ? (double)(r1 - r0) / catch_cpu_s : 0;
    printf("loaded %zu segments in %.1f s (%.0f/s acknowledged); graph caught up %.1f s later "
           "(%zu edges; catch-up %.0f rows/s, %.0f rows per CPU second)\n",
           big_n, load_s, (double)big_n / load_s, catch_s, (size_t)s.graph_edges, catch_rows_per_s,
           catch_rows_per_cpu_s);

    phase_t full = batches(st, "big", &c, big_n, b);
    printf("into one holding %zu:  %8.0f segments/s acknowledged (batch p50 %.1f ms, p95 "
           "%.1f ms); graph %8.0f rows/s, caught up %.2f s after the last ack\n",
           big_n, full.acked_per_s, full.batch_p50_ms, full.batch_p95_ms, full.graph_rows_per_s,
           full.graph_lag_s);

    /* durable single inserts, 32 at a time */
    size_t per = 200;
    single_ctx_t ctx[SINGLE_C];
    pthread_t th[SINGLE_C];
    uint64_t *lat = malloc(SINGLE_C * per * sizeof(*lat));
    if (alone) mem_store__linker_pause(st, true);
    t0 = bench_now_ns();
    for (int i = 0; i < SINGLE_C; i++) {
        ctx[i] = (single_ctx_t){.st = st, .tid = i, .n = per, .lat = lat + (size_t)i * per};
        bench_corpus_init(&ctx[i].corpus, DIM, 7000 + (uint64_t)i);
        pthread_create(&th[i], NULL, single_main, &ctx[i]);
    }
    for (int i = 0; i < SINGLE_C; i++)
        pthread_join(th[i], NULL);
    double single_s = (double)(bench_now_ns() - t0) / 1e9;
    if (alone) mem_store__linker_pause(st, false);
    bench_stats_t ls = bench_stats(lat, SINGLE_C * per);
    double single_rate = (double)(SINGLE_C * per) / single_s;
    printf("single inserts, concurrency %d, into %zu: %8.0f/s acknowledged (p50 %.2f ms, p95 "
           "%.2f ms)\n",
           SINGLE_C, big_n, single_rate, ls.p50_us / 1e3, ls.p95_us / 1e3);
    mem_store_metrics_t m;
    mem_store_get_metrics(st, &m);

    FILE *f = fopen("bench/results/ingest.json", "w");
    if (f) {
        fprintf(f, "{\n");
        bench_json_machine(f, ops);
        fprintf(f,
                ",\n  \"dim\": %d, \"batch\": %d, \"batches\": %d,\n"
                "  \"empty\": {\"acked_per_s\": %.0f, \"batch_p50_ms\": %.2f, \"batch_p95_ms\": "
                "%.2f, \"graph_rows_per_s\": %.0f, \"graph_lag_s\": %.3f},\n"
                "  \"load\": {\"n\": %zu, \"acked_per_s\": %.0f, \"graph_catch_up_s\": %.2f, "
                "\"graph_catch_up_rows\": %llu, \"graph_catch_up_rows_per_s\": %.0f, "
                "\"graph_catch_up_rows_per_cpu_s\": %.0f},\n"
                "  \"full\": {\"n\": %zu, \"acked_per_s\": %.0f, \"batch_p50_ms\": %.2f, "
                "\"batch_p95_ms\": %.2f, \"graph_rows_per_s\": %.0f, \"graph_lag_s\": %.3f},\n"
                "  \"single_c32\": {\"per_s\": %.0f, \"p50_ms\": %.3f, \"p95_ms\": %.3f},\n"
                "  \"graph\": {\"batches\": %llu, \"rows\": %llu, \"seconds\": %.2f}\n}\n",
                DIM, BATCH, BATCHES, empty.acked_per_s, empty.batch_p50_ms, empty.batch_p95_ms,
                empty.graph_rows_per_s, empty.graph_lag_s, big_n, (double)big_n / load_s, catch_s,
                (unsigned long long)(r1 - r0), catch_rows_per_s, catch_rows_per_cpu_s, big_n,
                full.acked_per_s, full.batch_p50_ms, full.batch_p95_ms, full.graph_rows_per_s,
                full.graph_lag_s, single_rate, ls.p50_us / 1e3, ls.p95_us / 1e3,
                (unsigned long long)m.graph_batches, (unsigned long long)m.graph_rows,
                m.graph_seconds);
        fclose(f);
    }
    mem_store_close(st);
    free(b);
    free(lat);
    for (int i = 0; i < SINGLE_C; i++)
        bench_corpus_free(&ctx[i].corpus);
    bench_corpus_free(&c);
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return 0;
}
