/* metrics.c - request counters, latency histograms, store and namespace gauges
 * SPDX-License-Identifier: MIT
 */
#include "server/metrics.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Route labels are the router's fixed set (fewer than 20) and a route answers only statuses
 * of the API's fixed set (fewer than 30): both caps hold every one, so no request goes
 * uncounted; they are caps only so that the tables stay fixed arrays. */
#define MAX_ROUTES   32
#define MAX_STATUSES 32
#define N_BUCKETS    12

static const double bucket_s[N_BUCKETS] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                           0.05,   0.1,   0.25,   0.5,   1.0,  2.5};
static const double scan_buckets[] = {0.01, 0.05, 0.1, 0.2, 0.5, 0.8, 1.0};
#define N_SCAN_BUCKETS (sizeof(scan_buckets) / sizeof(scan_buckets[0]))

struct route_hist {
    char route[48];
    unsigned long long buckets[N_BUCKETS];
    unsigned long long count;
    double sum;
    int status[MAX_STATUSES]; /* the statuses this route answered, first seen first */
    unsigned long long status_count[MAX_STATUSES];
    size_t n_status;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct route_hist hists[MAX_ROUTES]; /* guarded by lock */
static size_t n_hists;
static unsigned long long scan_counts[N_SCAN_BUCKETS];
static unsigned long long scan_total;
static double scan_sum;
/* provider jobs: by outcome (ok, embedder_error, embedder_timeout, other), calls, retries */
static const char *const emb_results[] = {"ok", "embedder_error", "embedder_timeout", "other"};
static unsigned long long emb_jobs[4], emb_calls, emb_retries, emb_buckets[N_BUCKETS];
static double emb_seconds;

void mem_srv_metrics_observe(const char *route, int status, double seconds)
{
    pthread_mutex_lock(&lock);
    size_t i;
    for (i = 0; i < n_hists; i++)
        if (strcmp(hists[i].route, route) == 0) break;
    if (i == n_hists && n_hists < MAX_ROUTES) {
        snprintf(hists[i].route, sizeof(hists[i].route), "%s", route);
        n_hists++;
    }
    if (i < n_hists) {
        struct route_hist *h = &hists[i];
        for (size_t b = 0; b < N_BUCKETS; b++)
            if (seconds <= bucket_s[b]) h->buckets[b]++;
        h->count++;
        h->sum += seconds;
        size_t j;
        for (j = 0; j < h->n_status; j++)
            if (h->status[j] == status) break;
        if (j == h->n_status && j < MAX_STATUSES) h->status[h->n_status++] = status;
        if (j < h->n_status) h->status_count[j]++;
    }
    pthread_mutex_unlock(&lock);
}

static const char *const answer_kinds[] = {"retrieve", "segment", "write_ack", "insert_decode"};
static const char *const fallback_reasons[] = {"locked", "graph",    "budget",
                                               "sqlite", "embedder", "insert_locked"};
#define N_ANSWER_KINDS (sizeof(answer_kinds) / sizeof(answer_kinds[0]))
#define N_FALLBACKS    (sizeof(fallback_reasons) / sizeof(fallback_reasons[0]))
static unsigned long long answers[N_ANSWER_KINDS][2]; /* [kind][on_loop] */
static unsigned long long fallbacks[N_FALLBACKS];
static unsigned long long spins[2]; /* [caught] */
static unsigned long long spins_preempted;

static size_t name_at(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0) return i;
    return n;
}

void mem_srv_metrics_observe_answer(const char *kind, bool on_loop)
{
    size_t k = name_at(answer_kinds, N_ANSWER_KINDS, kind);
    if (k == N_ANSWER_KINDS) return;
    pthread_mutex_lock(&lock);
    answers[k][on_loop]++;
    pthread_mutex_unlock(&lock);
}

void mem_srv_metrics_observe_fallback(const char *reason)
{
    size_t r = name_at(fallback_reasons, N_FALLBACKS, reason);
    if (r == N_FALLBACKS) return;
    pthread_mutex_lock(&lock);
    fallbacks[r]++;
    pthread_mutex_unlock(&lock);
}

void mem_srv_metrics_observe_spin(bool caught)
{
    pthread_mutex_lock(&lock);
    spins[caught]++;
    pthread_mutex_unlock(&lock);
}

void mem_srv_metrics_observe_spin_preempted(void)
{
    pthread_mutex_lock(&lock);
    spins_preempted++;
    pthread_mutex_unlock(&lock);
}

void mem_srv_metrics_observe_scan(double fraction)
{
    pthread_mutex_lock(&lock);
    for (size_t b = 0; b < N_SCAN_BUCKETS; b++)
        if (fraction <= scan_buckets[b]) scan_counts[b]++;
    scan_total++;
    scan_sum += fraction;
    pthread_mutex_unlock(&lock);
}

void mem_srv_metrics_observe_embedder(int rc, size_t calls, size_t retries, double seconds)
{
    int r = rc == MEM_OK ? 0 : rc == MEM_EEMBED ? 1 : rc == MEM_EEMBEDTIME ? 2 : 3;
    pthread_mutex_lock(&lock);
    emb_jobs[r]++;
    emb_calls += calls;
    emb_retries += retries;
    emb_seconds += seconds;
    for (size_t b = 0; b < N_BUCKETS; b++)
        if (seconds <= bucket_s[b]) emb_buckets[b]++;
    pthread_mutex_unlock(&lock);
}

struct buf {
    char *p;
    size_t len, cap;
    bool failed;
};

__attribute__((format(printf, 2, 3))) static void put(struct buf *b, const char *fmt, ...)
{
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap + (size_t)n) * 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
}

/* Namespace names match [A-Za-z0-9_.-], so they need no escaping in label values. */
/* The request pool (server/pool.h): its workers, and the hand-off of completions to the
 * loop (pool jobs and the writer's acknowledgements alike). */
static void render_pool(struct buf *b, const mem_srv_pool_t *pool)
{
    mem_srv_pool_stats_t ps;
    mem_srv_pool_stats(pool, &ps);
    put(b,
        "# HELP mnemod_pool_jobs_total Request jobs run by the pool's workers.\n"
        "# TYPE mnemod_pool_jobs_total counter\nmnemod_pool_jobs_total %llu\n"
        "# HELP mnemod_pool_busy Request jobs queued or running on a worker.\n"
        "# TYPE mnemod_pool_busy gauge\nmnemod_pool_busy %zu\n"
        "# HELP mnemod_pool_completions_total Completions handed back to the event loop (pool "
        "jobs and write acknowledgements).\n"
        "# TYPE mnemod_pool_completions_total counter\nmnemod_pool_completions_total %llu\n"
        "# HELP mnemod_pool_wakeups_total Completions that had to wake the event loop.\n"
        "# TYPE mnemod_pool_wakeups_total counter\nmnemod_pool_wakeups_total %llu\n"
        "# HELP mnemod_pool_batches_total Batches of completions the event loop ran.\n"
        "# TYPE mnemod_pool_batches_total counter\nmnemod_pool_batches_total %llu\n"
        "# HELP mnemod_pool_spins_total Times an idle worker watched the queue before sleeping.\n"
        "# TYPE mnemod_pool_spins_total counter\nmnemod_pool_spins_total %llu\n"
        "# HELP mnemod_pool_sleeps_total Times an idle worker went to sleep.\n"
        "# TYPE mnemod_pool_sleeps_total counter\nmnemod_pool_sleeps_total %llu\n",
        (unsigned long long)ps.jobs, mem_srv_pool_busy(pool), (unsigned long long)ps.completions,
        (unsigned long long)ps.wakeups, (unsigned long long)ps.batches,
        (unsigned long long)ps.spins, (unsigned long long)ps.sleeps);
}

char *mem_srv_metrics_render(mem_store_t *st, const mem_srv_pool_t *pool, const char *kernel,
                             size_t *len)
{
    struct buf b = {.p = malloc(4096), .cap = 4096};
    if (!b.p) return NULL;
    b.p[0] = '\0';
    pthread_mutex_lock(&lock);
    put(&b, "# HELP mnemod_http_requests_total HTTP requests by route and status.\n"
            "# TYPE mnemod_http_requests_total counter\n");
    for (size_t i = 0; i < n_hists; i++)
        for (size_t j = 0; j < hists[i].n_status; j++)
            put(&b, "mnemod_http_requests_total{route=\"%s\",status=\"%d\"} %llu\n", hists[i].route,
                hists[i].status[j], hists[i].status_count[j]);
    put(&b, "# HELP mnemod_http_request_duration_seconds Time from request to reply.\n"
            "# TYPE mnemod_http_request_duration_seconds histogram\n");
    for (size_t i = 0; i < n_hists; i++) {
        for (size_t k = 0; k < N_BUCKETS; k++)
            put(&b, "mnemod_http_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %llu\n",
                hists[i].route, bucket_s[k], hists[i].buckets[k]);
        put(&b, "mnemod_http_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %llu\n",
            hists[i].route, hists[i].count);
        put(&b, "mnemod_http_request_duration_seconds_sum{route=\"%s\"} %.9f\n", hists[i].route,
            hists[i].sum);
        put(&b, "mnemod_http_request_duration_seconds_count{route=\"%s\"} %llu\n", hists[i].route,
            hists[i].count);
    }
    put(&b, "# HELP mnemod_retrieve_scanned_fraction Segments scored / segments stored.\n"
            "# TYPE mnemod_retrieve_scanned_fraction histogram\n");
    for (size_t k = 0; k < N_SCAN_BUCKETS; k++)
        put(&b, "mnemod_retrieve_scanned_fraction_bucket{le=\"%g\"} %llu\n", scan_buckets[k],
            scan_counts[k]);
    put(&b, "mnemod_retrieve_scanned_fraction_bucket{le=\"+Inf\"} %llu\n", scan_total);
    put(&b, "mnemod_retrieve_scanned_fraction_sum %.9f\n", scan_sum);
    put(&b, "mnemod_retrieve_scanned_fraction_count %llu\n", scan_total);
    put(&b, "# HELP mnemod_answers_total Retrieves, segment reads and write acknowledgements "
            "by where they were answered, and inserts by where they were decoded: on the "
            "event loop or by a pool worker.\n"
            "# TYPE mnemod_answers_total counter\n");
    for (size_t k = 0; k < N_ANSWER_KINDS; k++)
        for (int w = 1; w >= 0; w--)
            put(&b, "mnemod_answers_total{kind=\"%s\",where=\"%s\"} %llu\n", answer_kinds[k],
                w ? "loop" : "pool", answers[k][w]);
    put(&b,
        "# HELP mnemod_inline_fallbacks_total Retrieves and inserts tried on the event "
        "loop that went to the pool, by reason.\n# TYPE mnemod_inline_fallbacks_total counter\n");
    for (size_t r = 0; r < N_FALLBACKS; r++)
        put(&b, "mnemod_inline_fallbacks_total{reason=\"%s\"} %llu\n", fallback_reasons[r],
            fallbacks[r]);
    put(&b, "# HELP mnemod_loop_spins_total Spins of the event loop after an answer (see "
            "--loop-spin-us), by whether the next request came within the spin.\n"
            "# TYPE mnemod_loop_spins_total counter\n");
    put(&b, "mnemod_loop_spins_total{outcome=\"caught\"} %llu\n", spins[1]);
    put(&b, "mnemod_loop_spins_total{outcome=\"ran_out\"} %llu\n", spins[0]);
    put(&b, "mnemod_loop_spins_total{outcome=\"preempted\"} %llu\n", spins_preempted);
    unsigned long long emb_total = 0;
    for (size_t r = 0; r < 4; r++)
        emb_total += emb_jobs[r];
    if (emb_total) { /* only a server with a provider has these */
        put(&b, "# HELP mnemod_embedder_requests_total Requests whose text went to the "
                "embedding provider, by outcome.\n# TYPE mnemod_embedder_requests_total counter\n");
        for (size_t r = 0; r < 4; r++)
            put(&b, "mnemod_embedder_requests_total{result=\"%s\"} %llu\n", emb_results[r],
                emb_jobs[r]);
        put(&b,
            "# HELP mnemod_embedder_calls_total Calls made to the embedding provider, retries "
            "included.\n# TYPE mnemod_embedder_calls_total counter\nmnemod_embedder_calls_total "
            "%llu\n# HELP mnemod_embedder_retries_total Provider calls retried after a 429, a "
            "5xx or a failed connection.\n# TYPE mnemod_embedder_retries_total counter\n"
            "mnemod_embedder_retries_total %llu\n",
            emb_calls, emb_retries);
        put(&b, "# HELP mnemod_embedder_duration_seconds Time a request waited for the "
                "provider.\n# TYPE mnemod_embedder_duration_seconds histogram\n");
        for (size_t k = 0; k < N_BUCKETS; k++)
            put(&b, "mnemod_embedder_duration_seconds_bucket{le=\"%g\"} %llu\n", bucket_s[k],
                emb_buckets[k]);
        put(&b,
            "mnemod_embedder_duration_seconds_bucket{le=\"+Inf\"} %llu\n"
            "mnemod_embedder_duration_seconds_sum %.9f\nmnemod_embedder_duration_seconds_count "
            "%llu\n",
            emb_total, emb_seconds, emb_total);
    }
    pthread_mutex_unlock(&lock);

    if (pool) render_pool(&b, pool);
    put(&b,
        "# HELP mnemod_scan_kernel The SIMD kernel in use.\n# TYPE mnemod_scan_kernel gauge\n"
        "mnemod_scan_kernel{kernel=\"%s\"} 1\n",
        kernel);
    put(&b,
        "# HELP mnemod_ready 1 once the store is loaded.\n# TYPE mnemod_ready gauge\n"
        "mnemod_ready %d\n",
        st ? 1 : 0);
    if (st) {
        mem_store_metrics_t m;
        mem_store_get_metrics(st, &m);
        static const double commit_ms[8] = {0.5, 1, 2, 5, 10, 25, 50, 100};
        put(&b,
            "# HELP mnemod_writer_queue_depth Write records waiting for the writer.\n"
            "# TYPE mnemod_writer_queue_depth gauge\nmnemod_writer_queue_depth %zu\n",
            m.queue_depth);
        put(&b,
            "# HELP mnemod_writer_ops_total Write records executed.\n"
            "# TYPE mnemod_writer_ops_total counter\nmnemod_writer_ops_total %llu\n",
            (unsigned long long)m.ops);
        put(&b,
            "# HELP mnemod_fsyncs_total Transactions committed (one fsync each with "
            "sync=full).\n# TYPE mnemod_fsyncs_total counter\nmnemod_fsyncs_total %llu\n",
            (unsigned long long)m.commits);
        put(&b,
            "# HELP mnemod_group_waits_total Groups the writer waited to fill (--group-wait-us), "
            "and those it started at the deadline.\n# TYPE mnemod_group_waits_total counter\n"
            "mnemod_group_waits_total{ended=\"filled\"} %llu\n"
            "mnemod_group_waits_total{ended=\"deadline\"} %llu\n",
            (unsigned long long)(m.group_waits - m.group_wait_timeouts),
            (unsigned long long)m.group_wait_timeouts);
        put(&b,
            "# HELP mnemod_scans_split_total Retrieves split across scan helpers.\n"
            "# TYPE mnemod_scans_split_total counter\nmnemod_scans_split_total %llu\n",
            (unsigned long long)m.scans_split);
        put(&b,
            "# HELP mnemod_scan_parts_helped_total Scan parts run by a helper thread.\n"
            "# TYPE mnemod_scan_parts_helped_total counter\n"
            "mnemod_scan_parts_helped_total %llu\n",
            (unsigned long long)m.scan_parts_helped);
        put(&b,
            "# HELP mnemod_graph_behind Namespaces whose coherence graph has not caught up.\n"
            "# TYPE mnemod_graph_behind gauge\nmnemod_graph_behind %zu\n"
            "# HELP mnemod_graph_batches_total Batches the coherence graph applied.\n"
            "# TYPE mnemod_graph_batches_total counter\nmnemod_graph_batches_total %llu\n"
            "# HELP mnemod_graph_rows_total Rows the coherence graph linked or unlinked.\n"
            "# TYPE mnemod_graph_rows_total counter\nmnemod_graph_rows_total %llu\n"
            "# HELP mnemod_graph_seconds_total Time the coherence graph spent catching up.\n"
            "# TYPE mnemod_graph_seconds_total counter\nmnemod_graph_seconds_total %g\n",
            m.graph_behind, (unsigned long long)m.graph_batches, (unsigned long long)m.graph_rows,
            m.graph_seconds);
        put(&b,
            "# HELP mnemod_text_cache_hits_total Retrieve hits whose texts came from memory.\n"
            "# TYPE mnemod_text_cache_hits_total counter\nmnemod_text_cache_hits_total %llu\n"
            "# HELP mnemod_text_cache_misses_total Retrieve hits whose texts came from SQLite.\n"
            "# TYPE mnemod_text_cache_misses_total counter\n"
            "mnemod_text_cache_misses_total %llu\n"
            "# HELP mnemod_text_cache_evictions_total Texts dropped from memory to make room.\n"
            "# TYPE mnemod_text_cache_evictions_total counter\n"
            "mnemod_text_cache_evictions_total %llu\n"
            "# HELP mnemod_text_cache_entries Segments whose texts are held in memory.\n"
            "# TYPE mnemod_text_cache_entries gauge\nmnemod_text_cache_entries %zu\n"
            "# HELP mnemod_text_cache_bytes Memory the texts cache holds (of --text-cache).\n"
            "# TYPE mnemod_text_cache_bytes gauge\nmnemod_text_cache_bytes %zu\n",
            (unsigned long long)m.text_cache_hits, (unsigned long long)m.text_cache_misses,
            (unsigned long long)m.text_cache_evictions, m.text_cache_entries, m.text_cache_bytes);
        put(&b, "# HELP mnemod_commit_duration_seconds Group-commit latency.\n"
                "# TYPE mnemod_commit_duration_seconds histogram\n");
        for (size_t k = 0; k < 8; k++)
            put(&b, "mnemod_commit_duration_seconds_bucket{le=\"%g\"} %llu\n",
                commit_ms[k] / 1000.0, (unsigned long long)m.commit_buckets[k]);
        put(&b,
            "mnemod_commit_duration_seconds_bucket{le=\"+Inf\"} %llu\n"
            "mnemod_commit_duration_seconds_sum %.9f\nmnemod_commit_duration_seconds_count "
            "%llu\n",
            (unsigned long long)m.commits, m.commit_seconds_sum, (unsigned long long)m.commits);
        mem_store_ns_stats_t *ns = NULL;
        size_t n = 0;
        if (mem_store_ns_list(st, &ns, &n, NULL) == MEM_OK) {
            put(&b,
                "# HELP mnemod_namespaces Namespaces stored.\n# TYPE mnemod_namespaces "
                "gauge\nmnemod_namespaces %zu\n",
                n);
            put(&b, "# HELP mnemod_segments Segments stored, not archived.\n"
                    "# TYPE mnemod_segments gauge\n");
            for (size_t i = 0; i < n; i++)
                put(&b, "mnemod_segments{namespace=\"%s\"} %llu\n", ns[i].name,
                    (unsigned long long)ns[i].count);
            put(&b, "# HELP mnemod_segments_archived Segments archived by compaction.\n"
                    "# TYPE mnemod_segments_archived gauge\n");
            for (size_t i = 0; i < n; i++)
                put(&b, "mnemod_segments_archived{namespace=\"%s\"} %llu\n", ns[i].name,
                    (unsigned long long)ns[i].archived);
            put(&b, "# HELP mnemod_graph_edges Coherence-graph edges.\n"
                    "# TYPE mnemod_graph_edges gauge\n");
            for (size_t i = 0; i < n; i++)
                put(&b, "mnemod_graph_edges{namespace=\"%s\"} %llu\n", ns[i].name,
                    (unsigned long long)ns[i].graph_edges);
            free(ns);
        }
    }
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    *len = b.len;
    return b.p;
}
