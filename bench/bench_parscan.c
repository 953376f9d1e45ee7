/* bench_parscan.c - a retrieve's scan split across the store's helper threads, or whole
 * SPDX-License-Identifier: MIT
 *
 * Times mem_store__scan (the scan mem_store_retrieve runs under the namespace's shared
 * lock) at concurrency 1 on seeded clustered corpora, timestamps over one year, K = 10,
 * half-life 0 and 30 days, with two stores: one helper and splitting off
 * (scan_split_min = 0), one helper and splitting forced (scan_split_min = 1, also when
 * the helper is asleep), and one with the server's defaults ("defaults": split from
 * 1M = n_visible * dim, from 64M when the helper is asleep). Queries rotate between the
 * three so all see the same machine. The split answers are checked
 * equal to the whole ones. Writes bench/results/parscan.json. BENCH_SCALE_MAX_N caps N.
 * BENCH_PARSCAN_GAP_US=G sleeps G us before each timed scan (sporadic retrieves: the
 * helper has gone to sleep by then); the default 0 times back-to-back retrieves.
 */
#define MEM_BENCH_WITH_INDEX
#include <math.h>

#include "bench/bench_util.h"
#include "core/err.h"
#include "core/scan.h"
#include "storage/store.h"
#include "storage/store_int.h"

#define K 10

static unsigned gap_us;

typedef struct prow {
    size_t n, dim;
    double whole_p50[2], split_p50[2], whole_p95[2], split_p95[2], auto_p50[2];
    int same;
} prow_t;

static mem_store_t *open_store(const char *path, size_t helpers, size_t split_min, size_t cold,
                               const mem_vec_ops_t *ops)
{
    mem_store_opts_t o = {.path = path,
                          .max_namespaces = 10,
                          .max_queue = 10,
                          .coherence_threshold = 0.9f,
                          .ops = ops,
                          .scan_helpers = helpers,
                          .scan_split_min = split_min,
                          .scan_split_min_cold = cold};
    mem_store_t *st = NULL;
    mem_err_t err;
    mem_err_clear(&err);
    if (mem_store_open(&o, &st, &err) != MEM_OK) {
        fprintf(stderr, "open %s: %s\n", path, err.msg);
        exit(1);
    }
    return st;
}

static void run_one(prow_t *row, size_t n, size_t dim, mem_store_t *whole, mem_store_t *split,
                    mem_store_t *autos, const mem_vec_ops_t *ops)
{
    bench_corpus_t corpus;
    bench_corpus_init(&corpus, dim, 7000003ull * n + dim);
    mem_index_t *idx = bench_corpus_index(&corpus, n);
    float *v = malloc(dim * sizeof(float));
    row->n = n;
    row->dim = dim;
    row->same = 1;
    size_t n_q = n >= 1000000 ? 15 : n >= 100000 ? 41 : 301;
    uint64_t *tw = malloc(n_q * sizeof(uint64_t)), *ts = malloc(n_q * sizeof(uint64_t));
    uint64_t *ta = malloc(n_q * sizeof(uint64_t));
    float *q = malloc(dim * sizeof(float));
    mem_scan_hit_t hw[K], hs[K];
    (void)ops;
    for (int hl = 0; hl < 2; hl++) {
        for (size_t r = 0; r < n_q + 2; r++) { /* two warm-up queries */
            bench_corpus_vec(&corpus, q);
            mem_scan_params_t p = {
                .query = q,
                .k = K,
                .origin_ms = BENCH_T0_MS + BENCH_YEAR_MS,
                .decay = {.kind = MEM_DECAY_EXPONENTIAL,
                          .half_life_s = hl ? 30.0 * 86400 : 0,
                          .shape = 1,
                          .recency_bias = 1},
                .since_ms = INT64_MIN,
                .until_ms = INT64_MAX,
                .source = -1,
            };
            size_t nw, sw, nsp, ssp;
            if (gap_us) usleep(gap_us);
            uint64_t a = bench_now_ns();
            mem_store__scan(whole, idx, &p, hw, &nw, &sw);
            uint64_t b = bench_now_ns();
            if (gap_us) usleep(gap_us);
            uint64_t b2 = bench_now_ns();
            mem_store__scan(split, idx, &p, hs, &nsp, &ssp);
            uint64_t c = bench_now_ns();
            if (gap_us) usleep(gap_us);
            uint64_t c2 = bench_now_ns();
            mem_store__scan(autos, idx, &p, hs, &nsp, &ssp);
            uint64_t c3 = bench_now_ns();
            if (nw != nsp) row->same = 0;
            for (size_t i = 0; i < nw && i < nsp; i++)
                if (hw[i].pos != hs[i].pos || hw[i].score != hs[i].score) row->same = 0;
            if (r >= 2) {
                tw[r - 2] = b - a;
                ts[r - 2] = c - b2;
                ta[r - 2] = c3 - c2;
            }
        }
        bench_stats_t sw_ = bench_stats(tw, n_q), ss_ = bench_stats(ts, n_q);
        row->whole_p50[hl] = sw_.p50_us;
        row->whole_p95[hl] = sw_.p95_us;
        row->split_p50[hl] = ss_.p50_us;
        row->split_p95[hl] = ss_.p95_us;
        row->auto_p50[hl] = bench_stats(ta, n_q).p50_us;
    }
    free(tw);
    free(ts);
    free(ta);
    free(q);
    free(v);
    bench_corpus_free(&corpus);
    mem_index_free(idx);
}

int main(void)
{
    const mem_vec_ops_t *ops = bench_ops();
    gap_us = getenv("BENCH_PARSCAN_GAP_US") ? (unsigned)atoi(getenv("BENCH_PARSCAN_GAP_US")) : 0;
    size_t max_n =
        getenv("BENCH_SCALE_MAX_N") ? strtoull(getenv("BENCH_SCALE_MAX_N"), NULL, 10) : 1000000;
    static const struct {
        size_t n, dim;
    } sizes[] = {{5000, 128},  {10000, 128},  {100000, 128},
                 {10000, 384}, {100000, 384}, {1000000, 128}};
    char dir[] = "/tmp/mnemod-parscan-XXXXXX", p1[64], p2[64], p3[64];
    if (!mkdtemp(dir)) return 0;
    snprintf(p1, sizeof p1, "%s/whole.db", dir);
    snprintf(p2, sizeof p2, "%s/split.db", dir);
    snprintf(p3, sizeof p3, "%s/auto.db", dir);
    /* whole: never split; split: always (asleep helper or not); auto: the server's
     * defaults, 1M and 64M (cold) */
    mem_store_t *whole = open_store(p1, 1, 0, 0, ops), *split = open_store(p2, 1, 1, 1, ops);
    mem_store_t *autos = open_store(p3, 1, 1u << 20, 0, ops);
    prow_t rows[6];
    size_t n_rows = 0;
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        if (sizes[i].n > max_n) continue;
        memset(&rows[n_rows], 0, sizeof(rows[n_rows]));
        run_one(&rows[n_rows++], sizes[i].n, sizes[i].dim, whole, split, autos, ops);
    }
    mem_store_metrics_t m;
    mem_store_get_metrics(split, &m);
    mem_store_close(whole);
    mem_store_close(split);
    mem_store_close(autos);
    const char *sfx[] = {"whole.db", "whole.db-wal", "whole.db-shm",
                         "split.db", "split.db-wal", "split.db-shm",
                         "auto.db",  "auto.db-wal",  "auto.db-shm"};
    for (size_t i = 0; i < 9; i++) {
        char p[96];
        snprintf(p, sizeof p, "%s/%s", dir, sfx[i]);
        unlink(p);
    }
    rmdir(dir);

    bench_print_machine("parscan (retrieve scan split across store helpers, concurrency 1)", ops);
    printf("p50 us; gap between scans %u us\n", gap_us);
    printf("%-8s %-4s | hl=0: %-9s %-9s %-7s %-9s | hl=30d: %-9s %-9s %-7s %-9s | %-5s\n", "N", "D",
           "whole", "split", "speedup", "defaults", "whole", "split", "speedup", "defaults",
           "same");
    for (size_t i = 0; i < n_rows; i++) {
        prow_t *r = &rows[i];
        printf("%-8zu %-4zu | %-15.1f %-9.1f %-7.2f %-9.1f | %-17.1f %-9.1f %-7.2f %-9.1f | %-5s\n",
               r->n, r->dim, r->whole_p50[0], r->split_p50[0], r->whole_p50[0] / r->split_p50[0],
               r->auto_p50[0], r->whole_p50[1], r->split_p50[1], r->whole_p50[1] / r->split_p50[1],
               r->auto_p50[1], r->same ? "yes" : "NO");
    }
    printf("split scans %llu, parts run by the helper %llu\n", (unsigned long long)m.scans_split,
           (unsigned long long)m.scan_parts_helped);
    FILE *f = fopen("bench/results/parscan.json", "w");
    if (!f) {
        perror("bench/results/parscan.json");
        return 0;
    }
    fprintf(f, "{\n");
    bench_json_machine(f, ops);
    fprintf(
        f,
        ",\n  \"k\": %d, \"helpers\": 1, \"concurrency\": 1, \"gap_us\": %u,\n  \"results\": [\n",
        K, gap_us);
    for (size_t i = 0; i < n_rows; i++) {
        prow_t *r = &rows[i];
        fprintf(f,
                "    {\"n\": %zu, \"dim\": %zu, "
                "\"hl0\": {\"whole_p50_us\": %.1f, \"split_p50_us\": %.1f, \"whole_p95_us\": %.1f, "
                "\"split_p95_us\": %.1f, \"defaults_p50_us\": %.1f}, "
                "\"hl30d\": {\"whole_p50_us\": %.1f, \"split_p50_us\": %.1f, "
                "\"whole_p95_us\": %.1f, \"split_p95_us\": %.1f, \"defaults_p50_us\": %.1f}, "
                "\"identical\": %s}%s\n",
                r->n, r->dim, r->whole_p50[0], r->split_p50[0], r->whole_p95[0], r->split_p95[0],
                r->auto_p50[0], r->whole_p50[1], r->split_p50[1], r->whole_p95[1], r->split_p95[1],
                r->auto_p50[1], r->same ? "true" : "false", i + 1 < n_rows ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    fclose(f);
    return 0;
}
