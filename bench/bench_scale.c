/* bench_scale.c - BENCH.md section 3 (in-process part): how retrieval cost grows
 * SPDX-License-Identifier: MIT
 *
 * Seeded clustered unit vectors (64 clusters), timestamps spread in order over one year,
 * N in {10k, 100k, 1M} x D in {128, 384, 768}. For each: exact retrieve latency p50/p95
 * (K = 10) on 1 and 2 threads with half_life 0 and 30 days (pruning on), the scanned
 * fraction, the read floor (one pass over the vectors, 1 and 2 threads) and the ratio,
 * memory per segment, and the incremental graph cost per insert (mem_graph_link on a
 * sample) and per 1000-row batch (mem_graph_link_batch; also without the int8 skip, the
 * plain f32 tiles, for N <= 100k). The pruned results are checked against mem_scan_reference on a
 * few queries. 1M x 768 (3 GB) runs only with BENCH_FULL=1; BENCH_SCALE_MAX_N caps N (e.g. 100000).
 * Writes bench/results/scale.json. Start-up (reload from SQLite) is storage's bench.
 */
#define MEM_BENCH_WITH_INDEX
#include <math.h>

#include "bench/bench_util.h"
#include "core/err.h"
#include "core/graph.h"
#include "core/scan.h"

#define N_QUERIES 24
#define K         10

typedef struct row {
    size_t n, dim;
    double build_s, bytes_per_seg, floor1_us, floor2_us;
    bench_stats_t s[2][2]; /* [half_life 0 / 30d][1 / 2 threads] */
    double scanned[2];
    double link_ms;
    double batch_ms;     /* mem_graph_link_batch of 1000 fresh rows */
    double batch_f32_ms; /* the same without the int8 skip (N <= 100k) */
    int exact;
} row_t;

static mem_scan_params_t params(const float *q, int half_life_30d)
{
    mem_scan_params_t p = {
        .query = q,
        .k = K,
        .origin_ms = BENCH_T0_MS + BENCH_YEAR_MS,
        .decay = {.kind = MEM_DECAY_EXPONENTIAL,
                  .half_life_s = half_life_30d ? 30.0 * 86400 : 0,
                  .shape = 1,
                  .offset_s = 0,
                  .recency_bias = 1},
        .coherence_weight = 0,
        .since_ms = INT64_MIN,
        .until_ms = INT64_MAX,
        .source = -1,
    };
    return p;
}

static void run_one(row_t *row, size_t n, size_t dim, const mem_vec_ops_t *ops,
                    bench_worker_t *worker)
{
    bench_corpus_t corpus;
    bench_corpus_init(&corpus, dim, 1000003ull * n + dim);
    uint64_t t0 = bench_now_ns();
    mem_index_t *idx = bench_corpus_index(&corpus, n);
    float *v = malloc(dim * sizeof(float));
    row->build_s = (double)(bench_now_ns() - t0) / 1e9;
    row->n = n;
    row->dim = dim;
    row->bytes_per_seg = bench_index_bytes_per_row(idx);

    float *queries = malloc(N_QUERIES * dim * sizeof(float));
    for (size_t q = 0; q < N_QUERIES; q++)
        bench_corpus_vec(&corpus, queries + q * dim);

    size_t passes = n >= 1000000 ? 5 : n >= 100000 ? 15 : 100;
    uint64_t *ns = malloc((passes > N_QUERIES ? passes : N_QUERIES) * sizeof(uint64_t));
    volatile float sink = 0;
    static bench_part_job_t jobs[2];
    sink += bench_read_pass(idx, ops, 0, 1);
    for (size_t r = 0; r < passes; r++) {
        uint64_t a = bench_now_ns();
        sink += bench_read_pass(idx, ops, 0, 1);
        ns[r] = bench_now_ns() - a;
    }
    row->floor1_us = bench_stats(ns, passes).p50_us;
    for (size_t r = 0; r < passes; r++) {
        uint64_t a = bench_now_ns();
        sink += bench_read2(worker, jobs, idx, ops);
        ns[r] = bench_now_ns() - a;
    }
    row->floor2_us = bench_stats(ns, passes).p50_us;

    mem_scan_hit_t hits[K], ref[K];
    size_t nh, sc, n_ref;
    size_t n_q = n >= 1000000 ? 8 : N_QUERIES;
    /* queries interleaved with floor passes, so both see the same machine load */
    uint64_t *fl = malloc(2 * n_q * sizeof(uint64_t));
    for (int hl = 0; hl < 2; hl++) {
        size_t scanned = 0;
        for (size_t q = 0; q < n_q; q++) {
            mem_scan_params_t p = params(queries + q * dim, hl);
            uint64_t a = bench_now_ns();
            sink += bench_read_pass(idx, ops, 0, 1);
            uint64_t b = bench_now_ns();
            mem_scan_run(idx, ops, &p, hits, &nh, &sc);
            ns[q] = bench_now_ns() - b;
            fl[hl * n_q + q] = b - a;
            scanned += sc;
        }
        row->s[hl][0] = bench_stats(ns, n_q);
        row->scanned[hl] = (double)scanned / (double)(n_q * n);
        for (size_t q = 0; q < n_q; q++) {
            mem_scan_params_t p = params(queries + q * dim, hl);
            uint64_t a = bench_now_ns();
            bench_scan2(worker, jobs, idx, ops, &p, hits, &sc);
            ns[q] = bench_now_ns() - a;
        }
        row->s[hl][1] = bench_stats(ns, n_q);
    }
    row->floor1_us = bench_stats(fl, 2 * n_q).p50_us;
    free(fl);
    (void)sink;
    /* exactness spot check: pruned 1-thread and 2-thread vs the scalar reference */
    row->exact = 1;
    for (size_t q = 0; q < 2; q++)
        for (int hl = 0; hl < 2; hl++) {
            mem_scan_params_t p = params(queries + q * dim, hl);
            mem_scan_reference(idx, &p, ref, &n_ref, &sc);
            mem_scan_run(idx, ops, &p, hits, &nh, &sc);
            for (size_t i = 0; i < nh; i++)
                if (nh != n_ref || fabs(hits[i].score - ref[i].score) > 1e-5 ||
                    (hits[i].pos != ref[i].pos && fabs(hits[i].score - ref[i].score) > 1e-6))
                    row->exact = 0;
            nh = bench_scan2(worker, jobs, idx, ops, &p, hits, &sc);
            for (size_t i = 0; i < nh; i++)
                if (nh != n_ref || fabs(hits[i].score - ref[i].score) > 1e-5 ||
                    (hits[i].pos != ref[i].pos && fabs(hits[i].score - ref[i].score) > 1e-6))
                    row->exact = 0;
        }
    /* incremental graph maintenance: one link = one scan of the namespace */
    size_t n_link = n >= 1000000 ? 3 : 8;
    for (size_t i = 0; i < n_link; i++) {
        size_t pos = (size_t)(bench_rng(&corpus.seed) % n);
        uint64_t a = bench_now_ns();
        mem_graph_link(idx, pos, 0.55f, ops, NULL, NULL);
        ns[i] = bench_now_ns() - a;
    }
    row->link_ms = bench_stats(ns, n_link).mean_us / 1e3;
    /* batch graph maintenance: 1000 fresh rows linked at once (each block read once) */
    enum { BATCH = 1000 };
    mem_vec_ops_t f32_only = *ops;
    f32_only.dot_rows_i8 = NULL;
    for (int variant = 0; variant < 2; variant++) {
        if (variant == 1 && n > 100000) break;
        size_t first = idx->n_rows;
        for (size_t i = 0; i < BATCH; i++) {
            char id[24];
            int len = snprintf(id, sizeof id, "b%d-%zu", variant, i);
            bench_corpus_vec(&corpus, v);
            size_t pos;
            if (mem_index_append(idx, id, (size_t)len, BENCH_T0_MS + BENCH_YEAR_MS,
                                 (int64_t)(n + i) + 1, v, 0, 0, &pos) != MEM_OK)
                exit(1);
        }
        uint64_t a = bench_now_ns();
        if (mem_graph_link_batch(idx, first, BATCH, 0.55f, variant ? &f32_only : ops, NULL, NULL) !=
            MEM_OK)
            exit(1);
        double ms = (double)(bench_now_ns() - a) / 1e6;
        if (variant)
            row->batch_f32_ms = ms;
        else
            row->batch_ms = ms;
    }
    free(ns);
    free(queries);
    free(v);
    bench_corpus_free(&corpus);
    mem_index_free(idx);
}

int main(void)
{
    const mem_vec_ops_t *ops = bench_ops();
    int full = getenv("BENCH_FULL") && atoi(getenv("BENCH_FULL")) == 1;
    size_t max_n =
        getenv("BENCH_SCALE_MAX_N") ? strtoull(getenv("BENCH_SCALE_MAX_N"), NULL, 10) : 1000000;
    static const size_t ns_[] = {10000, 100000, 1000000};
    static const size_t ds[] = {128, 384, 768};
    row_t rows[9];
    size_t n_rows = 0;
    bench_worker_t worker;
    bench_worker_start(&worker);
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 3; j++) {
            if (ns_[i] > max_n || (ns_[i] == 1000000 && ds[j] == 768 && !full)) continue;
            memset(&rows[n_rows], 0, sizeof(rows[n_rows]));
            run_one(&rows[n_rows], ns_[i], ds[j], ops, &worker);
            n_rows++;
        }
    bench_worker_stop(&worker);

    bench_print_machine("scale (BENCH.md section 3, in-process)", ops);
    printf("%-8s %-4s | %-9s %-9s | hl=0: %-8s %-8s %-6s %-8s | hl=30d: %-8s %-8s %-7s %-6s | "
           "%-7s %-6s %-8s %-7s %-8s %-5s\n",
           "N", "D", "floor1us", "floor2us", "p50 us", "p95 us", "xfloor", "2T p50", "p50 us",
           "p95 us", "scanned", "2T p50", "B/seg", "linkms", "batch1k", "ms/ins", "f32batch",
           "exact");
    for (size_t i = 0; i < n_rows; i++) {
        row_t *r = &rows[i];
        printf("%-8zu %-4zu | %-9.0f %-9.0f | %-14.0f %-8.0f %-6.2f %-8.0f | %-16.0f %-8.0f "
               "%-7.3f %-6.0f | %-7.0f %-6.2f %-8.1f %-7.3f %-8.1f %-5s\n",
               r->n, r->dim, r->floor1_us, r->floor2_us, r->s[0][0].p50_us, r->s[0][0].p95_us,
               r->s[0][0].p50_us / r->floor1_us, r->s[0][1].p50_us, r->s[1][0].p50_us,
               r->s[1][0].p95_us, r->scanned[1], r->s[1][1].p50_us, r->bytes_per_seg, r->link_ms,
               r->batch_ms, r->batch_ms / 1000.0, r->batch_f32_ms, r->exact ? "yes" : "NO");
    }
    FILE *f = fopen("bench/results/scale.json", "w");
    if (!f) {
        perror("bench/results/scale.json");
        return 0;
    }
    fprintf(f, "{\n");
    bench_json_machine(f, ops);
    fprintf(f, ",\n  \"k\": %d, \"full\": %s,\n  \"results\": [\n", K, full ? "true" : "false");
    for (size_t i = 0; i < n_rows; i++) {
        row_t *r = &rows[i];
        fprintf(f,
                "    {\"n\": %zu, \"dim\": %zu, \"floor_us\": %.1f, \"floor_2threads_us\": %.1f, "
                "\"hl0\": {\"p50_us\": %.1f, \"p95_us\": %.1f, \"floor_ratio\": %.3f, "
                "\"two_threads_p50_us\": %.1f, \"two_threads_p95_us\": %.1f, "
                "\"two_threads_floor_ratio\": %.3f, \"scanned_fraction\": %.4f}, "
                "\"hl30d\": {\"p50_us\": %.1f, \"p95_us\": %.1f, \"floor_ratio\": %.3f, "
                "\"two_threads_p50_us\": %.1f, \"two_threads_p95_us\": %.1f, "
                "\"scanned_fraction\": %.4f}, "
                "\"bytes_per_segment\": %.0f, \"graph_link_ms_per_insert\": %.3f, "
                "\"graph_link_batch1000_ms\": %.2f, \"graph_link_batch_ms_per_insert\": %.4f, "
                "\"graph_link_batch1000_f32_ms\": %.2f, "
                "\"build_s\": %.2f, \"identical_to_reference\": %s}%s\n",
                r->n, r->dim, r->floor1_us, r->floor2_us, r->s[0][0].p50_us, r->s[0][0].p95_us,
                r->s[0][0].p50_us / r->floor1_us, r->s[0][1].p50_us, r->s[0][1].p95_us,
                r->s[0][1].p50_us / r->floor2_us, r->scanned[0], r->s[1][0].p50_us,
                r->s[1][0].p95_us, r->s[1][0].p50_us / r->floor1_us, r->s[1][1].p50_us,
                r->s[1][1].p95_us, r->scanned[1], r->bytes_per_seg, r->link_ms, r->batch_ms,
                r->batch_ms / 1000.0, r->batch_f32_ms, r->build_s, r->exact ? "true" : "false",
                i + 1 < n_rows ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    fclose(f);
    return 0;
}
