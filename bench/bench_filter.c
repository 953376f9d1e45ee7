/* bench_filter.c - filtered retrieval: a selective and an unselective metadata filter
 * SPDX-License-Identifier: MIT
 *
 * A clustered corpus (bench_util.h) of N segments x dim 384 whose metadata carries a "user"
 * (1 % of the segments are user "u0", the rest spread over 9 users) and a "shard" (0 or 1:
 * half the segments each). Per query: the plan of storage/ (mem_meta_plan: postings ->
 * bitset -> candidate rows, or a row mask) and the scan it picks, timed together, next to
 * the unfiltered scan. The selective filter must not cost a scan of the namespace's vectors:
 * its `scanned` is the number of matching rows. Writes bench/results/filter.json.
 * Env: BENCH_FILTER_N (default 200000).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEM_BENCH_WITH_INDEX
#include "bench/bench_util.h"
#include "core/err.h"
#include "core/index.h"
#include "core/meta.h"
#include "core/scan.h"

#define DIM     384
#define QUERIES 60
#define K       10

typedef struct run {
    const char *name;
    bench_stats_t st;
    double scanned;
    double matched_fraction;
} run_t;

static run_t measure(const char *name, const mem_index_t *idx, const mem_meta_t *meta,
                     const mem_meta_filter_t *f, bench_corpus_t *c, const mem_vec_ops_t *ops)
{
    uint64_t ns[QUERIES];
    float q[DIM];
    mem_scan_hit_t hits[K];
    double scanned = 0, matched = 0;
    for (int i = 0; i < QUERIES; i++) {
        bench_corpus_vec(c, q);
        mem_scan_params_t p = {.query = q,
                               .k = K,
                               .origin_ms = BENCH_T0_MS + BENCH_YEAR_MS,
                               .decay = {.kind = MEM_DECAY_EXPONENTIAL,
                                         .half_life_s = 30 * 86400.0,
                                         .shape = 1,
                                         .recency_bias = 1.0},
                               .since_ms = INT64_MIN,
                               .until_ms = INT64_MAX,
                               .source = -1};
        size_t n_hits = 0, n_scanned = 0;
        uint64_t t0 = bench_now_ns();
        if (f) {
            uint64_t *mask = NULL;
            size_t *cand = NULL, n_cand = 0;
            int plan = mem_meta_plan(meta, idx, f, 16, &p, &mask, &cand, &n_cand);
            if (plan == 1)
                mem_scan_rows(idx, ops, &p, cand, n_cand, hits, &n_hits, &n_scanned);
            else if (plan == 2)
                mem_scan_run(idx, ops, &p, hits, &n_hits, &n_scanned);
            else
                exit(1);
            matched += plan == 1 ? (double)n_cand : -1;
            free(mask);
            free(cand);
        } else {
            mem_scan_run(idx, ops, &p, hits, &n_hits, &n_scanned);
        }
        ns[i] = bench_now_ns() - t0;
        scanned += (double)n_scanned;
    }
    run_t r = {name, bench_stats(ns, QUERIES), scanned / QUERIES, matched / QUERIES};
    return r;
}

int main(void)
{
    const char *e = getenv("BENCH_FILTER_N");
    size_t n = e ? strtoull(e, NULL, 10) : 200000;
    const mem_vec_ops_t *ops = bench_ops();
    bench_print_machine("filter", ops);
    bench_corpus_t c;
    bench_corpus_init(&c, DIM, 42);
    mem_index_t *idx = bench_corpus_index(&c, n);
    mem_meta_t *meta;
    if (mem_meta_new(&meta) != MEM_OK) return 1;
    uint64_t rs = 7;
    static const char *const users[10] = {"u0", "u1", "u2", "u3", "u4",
                                          "u5", "u6", "u7", "u8", "u9"};
    for (size_t i = 0; i < n; i++) {
        int u = bench_unit(&rs) < 0.01 ? 0 : 1 + (int)(bench_rng(&rs) % 9);
        mem_meta_pair_t pr[2] = {
            {"user", 4, {.type = MEM_META_STR, .str = users[u], .len = strlen(users[u])}},
            {"shard", 5, {.type = MEM_META_NUM, .num = (double)(i % 2)}}};
        if (mem_meta_set(meta, (int64_t)i + 1, pr, 2) != MEM_OK) return 1;
    }
    mem_meta_val_t v_u0 = {.type = MEM_META_STR, .str = "u0", .len = 2};
    mem_meta_val_t v_s0 = {.type = MEM_META_NUM, .num = 0};
    mem_meta_cond_t c_sel = {"user", 4, MEM_META_EQ, &v_u0, 1};
    mem_meta_cond_t c_uns = {"shard", 5, MEM_META_EQ, &v_s0, 1};
    mem_meta_filter_t f_sel = {&c_sel, 1}, f_uns = {&c_uns, 1};
    run_t runs[3] = {measure("none", idx, meta, NULL, &c, ops),
                     measure("selective_1pct", idx, meta, &f_sel, &c, ops),
                     measure("unselective_50pct", idx, meta, &f_uns, &c, ops)};
    FILE *out = fopen("bench/results/filter.json", "w");
    if (out) {
        fprintf(out, "{\n  ");
        bench_json_machine(out, ops);
        fprintf(out, ",\n  \"n\": %zu, \"dim\": %d, \"k\": %d, \"half_life_days\": 30,\n", n, DIM,
                K);
        fprintf(out, "  \"results\": [\n");
    }
    printf("%-18s %10s %10s %10s %12s\n", "filter", "p50_us", "p95_us", "mean_us", "scanned");
    for (int i = 0; i < 3; i++) {
        printf("%-18s %10.1f %10.1f %10.1f %12.0f\n", runs[i].name, runs[i].st.p50_us,
               runs[i].st.p95_us, runs[i].st.mean_us, runs[i].scanned);
        if (out)
            fprintf(
                out,
                "    {\"filter\": \"%s\", \"p50_us\": %.1f, \"p95_us\": %.1f, \"mean_us\": %.1f,"
                " \"scanned\": %.0f}%s\n",
                runs[i].name, runs[i].st.p50_us, runs[i].st.p95_us, runs[i].st.mean_us,
                runs[i].scanned, i < 2 ? "," : "");
    }
    if (out) {
        fprintf(out, "  ]\n}\n");
        fclose(out);
    }
    mem_meta_free(meta);
    mem_index_free(idx);
    bench_corpus_free(&c);
    return 0;
}
