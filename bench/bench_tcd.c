/* bench_tcd.c - BENCH.md section 1: the temporal-coherence decay benchmark (ADR-211)
 * SPDX-License-Identifier: MIT
 *
 * Loads bench/data/tcd (5000 x 128 corpus, 200 queries), normalises at ingest like the
 * server, builds a core index (time unit = seconds: ts_ms = 200 * i * 1000, now = 1e6 s)
 * and the coherence graph (cos >= 0.55), then runs the three variants through
 * mem_scan_run: quality figures next to the published ones, speed against the machine's
 * read floor (one and two threads). Writes bench/results/tcd.json.
 */
#define MEM_BENCH_WITH_INDEX
#include <math.h>

#include "bench/bench_util.h"
#include "core/err.h"
#include "core/graph.h"
#include "core/scan.h"

#define N_CORPUS  5000
#define N_QUERIES 200
#define DIM       128
#define K         10

enum { FLAT, TEMPORAL, COHERENCE, N_VARIANTS };
static const char *const variant_names[N_VARIANTS] = {"flat", "temporal", "coherence"};
static const double published_us[N_VARIANTS] = {683, 701, 751};
static const size_t published_q0[N_VARIANTS][K] = {
    {3302, 3780, 2882, 2440, 882, 1920, 4160, 3942, 1962, 1400},
    {4882, 4742, 4982, 4782, 4918, 4978, 4958, 4902, 4938, 4962},
    {4882, 4742, 4782, 4982, 4918, 4682, 4978, 4902, 4958, 4938},
};

static float *load(const char *path, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "bench_tcd: cannot open %s (run from the repository root)\n", path);
        exit(1);
    }
    float *v = malloc(n * DIM * sizeof(float));
    if (!v || fread(v, sizeof(float), n * DIM, f) != n * DIM) {
        fprintf(stderr, "bench_tcd: short read on %s\n", path);
        exit(1);
    }
    fclose(f);
    return v;
}

static mem_scan_params_t params_for(int variant, const float *q)
{
    mem_scan_params_t p = {
        .query = q,
        .k = K,
        .origin_ms = 1000000ll * 1000,
        .decay = {.kind = MEM_DECAY_EXPONENTIAL,
                  .half_life_s = 0,
                  .shape = 1,
                  .offset_s = 0,
                  .recency_bias = 1},
        .coherence_weight = 0,
        .since_ms = INT64_MIN,
        .until_ms = INT64_MAX,
        .source = -1,
    };
    if (variant != FLAT) p.decay.half_life_s = 300000;
    if (variant == COHERENCE) p.coherence_weight = 0.3;
    return p;
}

int main(void)
{
    const mem_vec_ops_t *ops = bench_ops();
    float *corpus = load("bench/data/tcd/corpus.f32", N_CORPUS);
    float *queries = load("bench/data/tcd/queries.f32", N_QUERIES);
    mem_index_t *idx;
    if (mem_index_new(DIM, &idx) != MEM_OK) return 1;
    for (size_t i = 0; i < N_CORPUS; i++) {
        char id[16];
        int len = snprintf(id, sizeof id, "m%zu", i);
        size_t pos;
        if (mem_vec_normalize(corpus + i * DIM, DIM) != 0 ||
            mem_index_append(idx, id, (size_t)len, (int64_t)(200 * i) * 1000, (int64_t)i + 1,
                             corpus + i * DIM, 0, 0, &pos) != MEM_OK)
            return 1;
    }
    mem_index_publish(idx, mem_index_rows(idx));
    for (size_t q = 0; q < N_QUERIES; q++)
        mem_vec_normalize(queries + q * DIM, DIM);

    /* graph: median of 3 rebuilds */
    uint64_t gb[3];
    for (int r = 0; r < 3; r++) {
        uint64_t t0 = bench_now_ns();
        if (mem_graph_rebuild(idx, 0.55, ops) != MEM_OK) return 1;
        gb[r] = bench_now_ns() - t0;
    }
    bench_stats_t gbs = bench_stats(gb, 3);
    double graph_ms = gbs.p50_us / 1e3;
    double gate_sum = 0;
    for (size_t i = 0; i < N_CORPUS; i++)
        gate_sum += idx->max_degree ? (double)MEM_INDEX_ROW(idx, i, degree) / idx->max_degree : 0;
    double mean_gate = gate_sum / N_CORPUS;

    /* quality, and exactness against the reference */
    mem_scan_hit_t truth[K], hits[K], ref[K];
    double recall[N_VARIANTS] = {0}, recency[N_VARIANTS] = {0}, gate_top[N_VARIANTS] = {0};
    size_t q0[N_VARIANTS][K];
    size_t mismatches = 0, near_ties = 0, n, sc, n_ref;
    double scanned_frac[N_VARIANTS] = {0};
    for (size_t q = 0; q < N_QUERIES; q++) {
        const float *qv = queries + q * DIM;
        mem_scan_params_t pf = params_for(FLAT, qv);
        mem_scan_reference(idx, &pf, truth, &n, &sc);
        for (int v = 0; v < N_VARIANTS; v++) {
            mem_scan_params_t p = params_for(v, qv);
            mem_scan_run(idx, ops, &p, hits, &n, &sc);
            mem_scan_reference(idx, &p, ref, &n_ref, &sc);
            mem_scan_run(idx, ops, &p, hits, &n, &sc);
            scanned_frac[v] += (double)sc / N_CORPUS / N_QUERIES;
            if (n != n_ref) mismatches++;
            for (size_t i = 0; i < n && i < n_ref; i++) {
                if (fabs(hits[i].score - ref[i].score) > 1e-5)
                    mismatches++;
                else if (hits[i].pos != ref[i].pos) {
                    /* a near-tie the kernel's last-bit rounding may order either way */
                    if (fabs(hits[i].score - ref[i].score) <= 1e-6)
                        near_ties++;
                    else
                        mismatches++;
                }
            }
            size_t inter = 0;
            for (size_t i = 0; i < n; i++) {
                for (size_t j = 0; j < K; j++)
                    inter += hits[i].pos == truth[j].pos;
                recency[v] += (double)(200 * hits[i].pos) / 1e6 / K / N_QUERIES;
                gate_top[v] += hits[i].gate / K / N_QUERIES;
                if (q == 0) q0[v][i] = hits[i].pos;
            }
            recall[v] += (double)inter / K / N_QUERIES;
        }
    }

    /* speed. Shared machines are noisy, so every query is timed right next to a floor
     * pass (one read of the corpus vectors) and the ratios compare medians measured
     * under the same load: per rep and query, floor, the three variants, then the same
     * on two threads. */
    const size_t reps = 25, n_t = reps * N_QUERIES;
    uint64_t *ns = malloc(8 * n_t * sizeof(uint64_t));
    uint64_t *t_floor1 = ns, *t_floor2 = ns + n_t, *t_v1[N_VARIANTS], *t_v2[N_VARIANTS];
    for (int v = 0; v < N_VARIANTS; v++) {
        t_v1[v] = ns + (2 + (size_t)v) * n_t;
        t_v2[v] = ns + (5 + (size_t)v) * n_t;
    }
    volatile float sink = 0;
    bench_worker_t worker;
    bench_worker_start(&worker);
    static bench_part_job_t jobs[2];
    size_t mismatches2 = 0;
    for (size_t r = 0; r < reps + 1; r++) /* rep 0 warms up */
        for (size_t q = 0; q < N_QUERIES; q++) {
            size_t slot = r ? (r - 1) * N_QUERIES + q : 0;
            uint64_t t0 = bench_now_ns();
            sink += bench_read_pass(idx, ops, 0, 1);
            t_floor1[slot] = bench_now_ns() - t0;
            for (int v = 0; v < N_VARIANTS; v++) {
                mem_scan_params_t p = params_for(v, queries + q * DIM);
                t0 = bench_now_ns();
                mem_scan_run(idx, ops, &p, hits, &n, &sc);
                t_v1[v][slot] = bench_now_ns() - t0;
            }
            t0 = bench_now_ns();
            sink += bench_read2(&worker, jobs, idx, ops);
            t_floor2[slot] = bench_now_ns() - t0;
            for (int v = 0; v < N_VARIANTS; v++) {
                mem_scan_params_t p = params_for(v, queries + q * DIM);
                t0 = bench_now_ns();
                n = bench_scan2(&worker, jobs, idx, ops, &p, hits, &sc);
                t_v2[v][slot] = bench_now_ns() - t0;
                if (r == 0) {
                    mem_scan_run(idx, ops, &p, ref, &n_ref, &sc);
                    for (size_t i = 0; i < n; i++)
                        mismatches2 += n != n_ref || hits[i].pos != ref[i].pos;
                }
            }
        }
    bench_worker_stop(&worker);
    bench_stats_t floor1 = bench_stats(t_floor1, n_t), floor2 = bench_stats(t_floor2, n_t);
    bench_stats_t speed[N_VARIANTS], speed2[N_VARIANTS], refspeed[N_VARIANTS];
    for (int v = 0; v < N_VARIANTS; v++) {
        speed[v] = bench_stats(t_v1[v], n_t);
        speed2[v] = bench_stats(t_v2[v], n_t);
        for (size_t q = 0; q < N_QUERIES; q++) {
            mem_scan_params_t p = params_for(v, queries + q * DIM);
            uint64_t t0 = bench_now_ns();
            mem_scan_reference(idx, &p, hits, &n, &sc);
            ns[q] = bench_now_ns() - t0;
        }
        refspeed[v] = bench_stats(ns, N_QUERIES);
    }
    double bytes_per_seg = bench_index_bytes_per_row(idx);
    (void)sink;

    /* report */
    bench_print_machine("tcd (BENCH.md section 1)", ops);
    printf("quality                      measured      published\n");
    printf("graph edges                  %-13llu 590313\n", (unsigned long long)idx->graph_edges);
    printf("max degree                   %-13u 249\n", idx->max_degree);
    printf("mean gate                    %-13.3f 0.948\n", mean_gate);
    printf("flat recall@10               %-13.3f 1.000\n", recall[FLAT]);
    printf("temporal recall@10, recency  %.3f, %.3f  0.139, 0.962\n", recall[TEMPORAL],
           recency[TEMPORAL]);
    printf("coherence recall@10, gate    %.3f, %.3f  0.109, 0.971\n", recall[COHERENCE],
           gate_top[COHERENCE]);
    for (int v = 0; v < N_VARIANTS; v++) {
        int same = 1;
        printf("query 0 %-9s  ", variant_names[v]);
        for (int i = 0; i < K; i++) {
            printf(" %zu", q0[v][i]);
            same &= q0[v][i] == published_q0[v][i];
        }
        printf("  %s\n", same ? "(= published)" : "(DIFFERS from published)");
    }
    printf("identical to the scalar reference: %s (%zu mismatches, %zu near-tie swaps within "
           "1e-6); 2-thread split identical to 1 thread: %s\n",
           mismatches ? "NO" : "yes", mismatches, near_ties, mismatches2 ? "NO" : "yes");
    printf("\nspeed (us/query)   mean    p50    p95    q/s      x floor  scanned  2 threads p50"
           "  x floor2  vs published(p50)  reference(scalar) mean\n");
    printf("floor (read pass)  %-7.1f %-6.1f %-6.1f                                 %-6.1f\n",
           floor1.mean_us, floor1.p50_us, floor1.p95_us, floor2.p50_us);
    for (int v = 0; v < N_VARIANTS; v++)
        printf("%-18s %-7.1f %-6.1f %-6.1f %-8.0f %-8.2f %-8.3f %-14.1f %-9.2f %-13.1fx %.1f\n",
               variant_names[v], speed[v].mean_us, speed[v].p50_us, speed[v].p95_us,
               1e6 / speed[v].mean_us, speed[v].p50_us / floor1.p50_us, scanned_frac[v],
               speed2[v].p50_us, speed2[v].p50_us / floor2.p50_us,
               published_us[v] / speed[v].p50_us, refspeed[v].mean_us);
    printf("graph build %.1f ms (published 1387 ms, %.0fx); %.0f bytes/segment (%zu f32 vector, "
           "%zu int8 sketch)\n",
           graph_ms, 1387.0 / graph_ms, bytes_per_seg, idx->stride * sizeof(float),
           idx->stride + 8);

    FILE *f = fopen("bench/results/tcd.json", "w");
    if (!f) {
        perror("bench/results/tcd.json");
        return 0;
    }
    fprintf(f, "{\n");
    bench_json_machine(f, ops);
    fprintf(f, ",\n  \"graph_edges\": %llu, \"max_degree\": %u, \"mean_gate\": %.4f,\n",
            (unsigned long long)idx->graph_edges, idx->max_degree, mean_gate);
    fprintf(f,
            "  \"flat_recall10\": %.4f,\n  \"temporal_recall10\": %.4f, \"temporal_mean_recency\": "
            "%.4f,\n  \"coherence_recall10\": %.4f, \"coherence_mean_gate\": %.4f,\n",
            recall[FLAT], recall[TEMPORAL], recency[TEMPORAL], recall[COHERENCE],
            gate_top[COHERENCE]);
    for (int v = 0; v < N_VARIANTS; v++) {
        fprintf(f, "  \"query0_%s\": [", variant_names[v]);
        for (int i = 0; i < K; i++)
            fprintf(f, "%s%zu", i ? ", " : "", q0[v][i]);
        fprintf(f, "],\n");
    }
    fprintf(f,
            "  \"identical_to_reference\": %s, \"near_tie_swaps\": %zu, \"split_identical\": %s,\n",
            mismatches ? "false" : "true", near_ties, mismatches2 ? "false" : "true");
    fprintf(f, "  \"floor_us\": {\"mean\": %.2f, \"p50\": %.2f, \"p95\": %.2f},\n", floor1.mean_us,
            floor1.p50_us, floor1.p95_us);
    fprintf(f, "  \"floor_2threads_us\": {\"mean\": %.2f, \"p50\": %.2f, \"p95\": %.2f},\n",
            floor2.mean_us, floor2.p50_us, floor2.p95_us);
    for (int v = 0; v < N_VARIANTS; v++)
        fprintf(f,
                "  \"%s\": {\"mean_us\": %.2f, \"p50_us\": %.2f, \"p95_us\": %.2f, \"qps\": %.0f, "
                "\"floor_ratio\": %.3f, \"scanned_fraction\": %.4f, \"two_threads_p50_us\": %.2f, "
                "\"two_threads_mean_us\": %.2f, \"two_threads_floor_ratio\": %.3f, "
                "\"published_mean_us\": %.0f, \"speedup_vs_published_p50\": %.1f, "
                "\"reference_mean_us\": %.1f},\n",
                variant_names[v], speed[v].mean_us, speed[v].p50_us, speed[v].p95_us,
                1e6 / speed[v].mean_us, speed[v].p50_us / floor1.p50_us, scanned_frac[v],
                speed2[v].p50_us, speed2[v].mean_us, speed2[v].p50_us / floor2.p50_us,
                published_us[v], published_us[v] / speed[v].p50_us, refspeed[v].mean_us);
    fprintf(
        f,
        "  \"graph_build_ms\": %.2f, \"bytes_per_segment\": %.0f, \"vector_bytes_per_segment\": "
        "%zu\n}\n",
        graph_ms, bytes_per_seg, idx->stride * sizeof(float));
    fclose(f);
    free(ns);
    free(corpus);
    free(queries);
    mem_index_free(idx);
    return 0;
}
