/* bench_graph.c - the coherence graph's link search, kernel variants side by side
 * SPDX-License-Identifier: MIT
 *
 * The seeded clustered corpus of BENCH.md section 3 at dim 384 (bench_ingest's), N rows
 * (default 100000, BENCH_GRAPH_N) that are members of the graph, and 1000 fresh rows whose
 * edges mem_graph_link_find looks for: every fresh row against every member and the other
 * fresh rows, the linker's work for one batch. The members are marked linked without their
 * degrees (the find reads vectors, sketches and membership, never degrees), so the set-up
 * costs no O(N^2) pass. Variants, timed in turns under the same load (median of 3):
 *   - tile: the int8 bound over tiles of fresh rows x member rows (the table's tile_i8
 *     kernel), exact f32 dots for the pairs it keeps (dot_rows_at, eight at a time);
 *   - per-query int8: the same bound through dot_rows_i8, one fresh row at a time, and
 *     the kept pairs' dots one dot_rows call each (the search before the tiles);
 *   - f32 only: no bound, every pair's f32 dot.
 * All three must find the same edges (checked). Wall and CPU time (median of 3); the CPU
 * time is what a shared machine does not blur. Writes bench/results/graph.json.
 */
#define MEM_BENCH_WITH_INDEX
#include <time.h>

#include "bench/bench_util.h"
#include "core/err.h"
#include "core/graph.h"
#include "core/index_int.h"

#define DIM   384
#define FRESH 1000
#define REPS  3

enum { V_TILE, V_QUERY, V_F32, N_VARIANTS };
static const char *const variant_name[N_VARIANTS] = {"tile", "per-query int8", "f32 only"};
static const char *const variant_key[N_VARIANTS] = {"tile", "per_query_i8", "f32_only"};

/* CPU seconds of this thread: on a shared machine, what the search itself costs. */
static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(void)
{
    const char *env = getenv("BENCH_GRAPH_N");
    size_t n = env ? (size_t)strtoull(env, NULL, 10) : 100000;
    const mem_vec_ops_t *ops = bench_ops();
    bench_print_machine("graph (link search, 1000 fresh rows)", ops);
    bench_corpus_t c;
    bench_corpus_init(&c, DIM, 20261201);
    mem_index_t *idx = bench_corpus_index(&c, n + FRESH);
    for (size_t p = 0; p < n; p++) /* members; degrees are not read by the find */
        MEM_INDEX_ROW(idx, p, linked) = 1;
    idx->n_linked = n;

    mem_vec_ops_t var[N_VARIANTS] = {*ops, *ops, *ops};
    var[V_QUERY].tile_i8 = NULL; /* the search as it was before the tiles */
    var[V_QUERY].dot_rows_at = NULL;
    var[V_F32].dot_rows_i8 = NULL;
    var[V_F32].tile_i8 = NULL;
    uint64_t ns[N_VARIANTS][REPS], cpu_ns[N_VARIANTS][REPS];
    uint64_t edges[N_VARIANTS];
    for (int rep = 0; rep < REPS; rep++)
        for (int k = 0; k < N_VARIANTS; k++) {
            int v = (k + rep) % N_VARIANTS; /* turns: no variant always runs first */
            mem_graph_delta_t d;
            double c0 = thread_cpu_s();
            uint64_t t0 = bench_now_ns();
            if (mem_graph_link_find(idx, n, FRESH, 0.55f, &var[v], &d) != MEM_OK) return 1;
            ns[v][rep] = bench_now_ns() - t0;
            cpu_ns[v][rep] = (uint64_t)((thread_cpu_s() - c0) * 1e9);
            edges[v] = d.edges;
            mem_graph_delta_free(&d);
        }
    int same = edges[V_TILE] == edges[V_QUERY] && edges[V_TILE] == edges[V_F32];
    double pairs = (double)FRESH * (double)n + (double)FRESH * (FRESH - 1) / 2.0;
    double ms[N_VARIANTS], cpu_ms[N_VARIANTS];
    printf("%zu members x %d fresh rows at dim %d: %llu edges (%s in every variant)\n", n, FRESH,
           DIM, (unsigned long long)edges[V_TILE], same ? "the same" : "NOT the same");
    printf("%-16s %10s %10s %14s %16s %12s\n", "variant", "ms", "CPU ms", "rows/CPU s",
           "pairs/CPU s", "CPU vs tile");
    for (int v = 0; v < N_VARIANTS; v++) {
        ms[v] = bench_stats(ns[v], REPS).p50_us / 1e3;
        cpu_ms[v] = bench_stats(cpu_ns[v], REPS).p50_us / 1e3;
    }
    for (int v = 0; v < N_VARIANTS; v++)
        printf("%-16s %10.1f %10.1f %14.0f %16.3g %11.2fx\n", variant_name[v], ms[v], cpu_ms[v],
               FRESH / (cpu_ms[v] / 1e3), pairs / (cpu_ms[v] / 1e3), cpu_ms[v] / cpu_ms[V_TILE]);

    FILE *f = fopen("bench/results/graph.json", "w");
    if (f) {
        fprintf(f, "{\n  \"suite\": \"graph\",\n");
        bench_json_machine(f, ops);
        fprintf(f,
                ",\n  \"members\": %zu, \"fresh\": %d, \"dim\": %d, \"edges\": %llu, "
                "\"same_edges\": %s",
                n, FRESH, DIM, (unsigned long long)edges[V_TILE], same ? "true" : "false");
        for (int v = 0; v < N_VARIANTS; v++)
            fprintf(f,
                    ",\n  \"%s\": {\"ms\": %.2f, \"cpu_ms\": %.2f, \"rows_per_cpu_s\": %.0f, "
                    "\"pairs_per_cpu_s\": %.4g}",
                    variant_key[v], ms[v], cpu_ms[v], FRESH / (cpu_ms[v] / 1e3),
                    pairs / (cpu_ms[v] / 1e3));
        fprintf(f, "\n}\n");
        fclose(f);
    }
    bench_corpus_free(&c);
    mem_index_free(idx);
    return same ? 0 : 1;
}
