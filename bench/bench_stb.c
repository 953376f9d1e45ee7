/* bench_stb.c - structural-time retention benchmark (BENCH.md section 2, ADR-346)
 * SPDX-License-Identifier: MIT
 *
 * For each of the 22 seeds: Experiment 1 (alpha, beta, gamma = 1, 0, 0, no context,
 * 360 -> 40: regime-shift survival and topic coverage) and Experiment 2 (defaults
 * .25/.35/.40, context = the regime vectors of topics 35..39, 360 -> 180: mean Recall@10 of
 * the 20 queries, truth = exact cosine top 10 over all 360, result = exact cosine top 10 over
 * the kept ones), for every policy through mem_compact_plan. Prints the 22-seed tables, the
 * seed-20260906 figures next to the published ones, and the compaction time per policy as
 * a ratio to coherence_weighted measured in the same run; writes bench/results/stb.json.
 *
 * Usage: bench_stb [data_dir (bench/data/stb)] [results.json (bench/results/stb.json)]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "core/compact.h"
#include "core/err.h"
#include "core/vec.h"

#define N_SEEDS   22
#define N_MEM     360
#define DIM       32
#define N_TOPICS  40
#define N_QUERIES 20
#define K         10
#define TIME_REPS 25

static const long seeds[N_SEEDS] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                    12, 13, 14, 15, 16, 17, 18, 19, 20, 42, 20260906};
#define PUBLISHED_SEED_IDX 21

/* BENCH.md section 2: published 22-seed rows (percent), in the order of seeds[]. */
static const double pub_b2_survival[N_SEEDS] = {50,  60, 42.5, 7.5,  22.5, 42.5, 17.5, 72.5,
                                                2.5, 45, 25,   5,    55,   37.5, 7.5,  52.5,
                                                25,  20, 20,   57.5, 2.5,  35};
static const double pub_b2_recall[N_SEEDS] = {100, 97.5, 100,  99.5, 97.5, 98,   96,   98,
                                              99,  99,   100,  96,   99,   96.5, 97.5, 98.5,
                                              99,  97,   99.5, 98,   96.5, 99.5};
static const double pub_cw_recall[N_SEEDS] = {97,  96.5, 99,   97,   98, 97.5, 99,  97,
                                              100, 96,   97.5, 98.5, 95, 98,   100, 99,
                                              98,  97,   96.5, 98.5, 98, 100};
static const double pub_dg_recall[N_SEEDS] = {97, 96.5, 99, 97, 98, 97.5, 99, 97,   100,  96, 97.5,
                                              97, 95,   98, 98, 98, 98,   97, 96.5, 98.5, 98, 100};
/* seed 20260906 (survival, recall; recall < 0 = not published) */
static const double pub_seed_survival[MEM_COMPACT_POLICY_COUNT] = {10.0, 12.5, 10.0, 35.0, -1};
static const double pub_seed_recall[MEM_COMPACT_POLICY_COUNT] = {100.0, 100.0, -1, 99.5, -1};

typedef struct result {
    double survival[N_SEEDS], coverage[N_SEEDS], recall[N_SEEDS];
    double *times_us; /* all timed plans, Exp 1 and Exp 2 */
    size_t n_times;
    double t_med, t_p95;
} result_t;

static float corpus[N_SEEDS][N_MEM * DIM];
static float queries[N_SEEDS][N_QUERIES * DIM];

static int load(const char *dir, long seed, const char *what, float *dst, size_t count)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/seed-%ld.%s.f32", dir, seed, what);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "bench_stb: cannot open %s\n", path);
        return -1;
    }
    size_t got = fread(dst, sizeof(float), count, f);
    fclose(f);
    if (got != count) {
        fprintf(stderr, "bench_stb: %s: expected %zu floats, got %zu\n", path, count, got);
        return -1;
    }
    return 0;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double cosd(const float *a, const float *b)
{
    double ab = 0, aa = 0, bb = 0;
    for (int d = 0; d < DIM; d++) {
        ab += (double)a[d] * b[d];
        aa += (double)a[d] * a[d];
        bb += (double)b[d] * b[d];
    }
    double c = ab / (sqrt(aa) * sqrt(bb));
    return c > 1 ? 1 : c < -1 ? -1 : c;
}

/* exact cosine top K among rows with allowed[i] (ties to the lower index) */
static void topk(const float *corp, const float *q, const uint8_t *allowed, size_t *out)
{
    double best[K];
    size_t n = 0;
    for (size_t i = 0; i < N_MEM; i++) {
        if (allowed && !allowed[i]) continue;
        double s = cosd(q, corp + i * DIM);
        if (n == K && !(s > best[K - 1])) continue;
        size_t j = n < K ? n++ : K - 1;
        while (j > 0 && s > best[j - 1]) {
            best[j] = best[j - 1];
            out[j] = out[j - 1];
            j--;
        }
        best[j] = s;
        out[j] = i;
    }
}

static int plan(mem_compact_policy_t p, const float *corp, int exp, uint8_t *keep)
{
    const float *vecs[N_MEM];
    uint64_t tick[N_MEM];
    uint32_t access[N_MEM];
    float ctx[5 * DIM];
    for (size_t i = 0; i < N_MEM; i++) {
        vecs[i] = corp + i * DIM;
        tick[i] = i + 1;
        access[i] = 0;
    }
    for (int c = 0; c < 5; c++)
        memcpy(ctx + c * DIM, corp + (size_t)(315 + 9 * c) * DIM, DIM * sizeof(float));
    mem_compact_input_t in = {
        .n = N_MEM,
        .dim = DIM,
        .vecs = vecs,
        .tick = tick,
        .access = access,
        .context = exp == 1 ? NULL : ctx,
        .n_context = exp == 1 ? 0 : 5,
        .alpha = exp == 1 ? 1.0 : 0.25,
        .beta = exp == 1 ? 0.0 : 0.35,
        .gamma = exp == 1 ? 0.0 : 0.40,
        .dedup_threshold = 0.02,
    };
    mem_err_t err = {0};
    int rc = mem_compact_plan(p, &in, exp == 1 ? 40 : 180, keep, &err);
    if (rc != MEM_OK) fprintf(stderr, "bench_stb: %s: %s\n", mem_compact_policy_name(p), err.msg);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double mean(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s / (double)n;
}
static double minv(const double *v, size_t n)
{
    double m = v[0];
    for (size_t i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

static void json_row(FILE *f, const char *key, const double *v, int last)
{
    fprintf(f, "      \"%s\": [", key);
    for (int s = 0; s < N_SEEDS; s++)
        fprintf(f, "%s%.4g", s ? ", " : "", v[s]);
    fprintf(f, "]%s\n", last ? "" : ",");
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "bench/data/stb";
    const char *out = argc > 2 ? argv[2] : "bench/results/stb.json";
    mem_vec_init(mem_vec_best_isa()); /* as the server does: novelty's restatement pass uses it */
    for (int s = 0; s < N_SEEDS; s++)
        if (load(dir, seeds[s], "corpus", corpus[s], N_MEM * DIM) ||
            load(dir, seeds[s], "queries", queries[s], N_QUERIES * DIM))
            return 1;

    static result_t res[MEM_COMPACT_POLICY_COUNT];
    uint8_t keep[N_MEM];
    for (int p = 0; p < MEM_COMPACT_POLICY_COUNT; p++) {
        result_t *r = &res[p];
        for (int s = 0; s < N_SEEDS; s++) {
            const float *corp = corpus[s];
            if (plan((mem_compact_policy_t)p, corp, 1, keep)) return 1;
            int surv = 0, cov = 0;
            for (int t = 0; t < N_TOPICS; t++) {
                surv += keep[9 * t];
                int any = 0;
                for (int m = 0; m < 9; m++)
                    any |= keep[9 * t + m];
                cov += any;
            }
            r->survival[s] = 100.0 * surv / N_TOPICS;
            r->coverage[s] = 100.0 * cov / N_TOPICS;
            if (plan((mem_compact_policy_t)p, corp, 2, keep)) return 1;
            int hit = 0;
            for (int q = 0; q < N_QUERIES; q++) {
                size_t truth[K], got[K];
                topk(corp, queries[s] + q * DIM, NULL, truth);
                topk(corp, queries[s] + q * DIM, keep, got);
                for (int a = 0; a < K; a++)
                    for (int b = 0; b < K; b++)
                        hit += truth[a] == got[b];
            }
            r->recall[s] = 100.0 * hit / (N_QUERIES * K);
        }
    }
    /* Timing: the policies interleaved round-robin so drift hits each alike. */
    for (int p = 0; p < MEM_COMPACT_POLICY_COUNT; p++) {
        res[p].times_us = malloc(TIME_REPS * N_SEEDS * 2 * sizeof(double));
        if (!res[p].times_us) return 1;
    }
    for (int rep = 0; rep < TIME_REPS; rep++)
        for (int s = 0; s < N_SEEDS; s++)
            for (int exp = 1; exp <= 2; exp++)
                for (int p = 0; p < MEM_COMPACT_POLICY_COUNT; p++) {
                    double t0 = now_us();
                    plan((mem_compact_policy_t)p, corpus[s], exp, keep);
                    res[p].times_us[res[p].n_times++] = now_us() - t0;
                }
    for (int p = 0; p < MEM_COMPACT_POLICY_COUNT; p++) {
        result_t *r = &res[p];
        qsort(r->times_us, r->n_times, sizeof(double), cmp_double);
        r->t_med = r->times_us[r->n_times / 2];
        r->t_p95 = r->times_us[(size_t)((double)r->n_times * 0.95)];
    }
    const double cw_med = res[MEM_COMPACT_COHERENCE_WEIGHTED].t_med;

    /* ---- tables ---- */
    printf("stb: structural-time retention, 22 seeds, %d memories x %d, Exp 1 360->40, Exp 2 "
           "360->180\n\n",
           N_MEM, DIM);
    printf("seed 20260906 vs published\n");
    printf("%-20s %10s %10s %10s %10s %9s\n", "policy", "surv %", "published", "recall %",
           "published", "coverage");
    int seed_ok = 1;
    for (int p = 0; p < MEM_COMPACT_POLICY_COUNT; p++) {
        const result_t *r = &res[p];
        char ps[16] = "-", pr[16] = "-";
        if (pub_seed_survival[p] >= 0) {
            snprintf(ps, sizeof(ps), "%.1f", pub_seed_survival[p]);
            seed_ok &= fabs(r->survival[PUBLISHED_SEED_IDX] - pub_seed_survival[p]) < 1e-9;
        }
        if (pub_seed_recall[p] >= 0) {
            snprintf(pr, sizeof(pr), "%.1f", pub_seed_recall[p]);
            seed_ok &= fabs(r->recall[PUBLISHED_SEED_IDX] - pub_seed_recall[p]) < 1e-9;
        }
        printf("%-20s %10.1f %10s %10.1f %10s %8.1f%%\n", mem_compact_policy_name(p),
               r->survival[PUBLISHED_SEED_IDX], ps, r->recall[PUBLISHED_SEED_IDX], pr,
               r->coverage[PUBLISHED_SEED_IDX]);
    }
    printf("published seed figures reproduced: %s\n\n", seed_ok ? "yes" : "NO");

    printf("%-22s", "seed");
    for (int s = 0; s < N_SEEDS; s++)
        printf(" %5ld", seeds[s] == 20260906 ? 906L : seeds[s]);
    printf(" | %6s %6s\n", "mean", "min");
    const char *what[3] = {"survival", "coverage", "recall"};
    for (int w = 0; w < 3; w++) {
        printf("-- Exp %d %s %%%s\n", w == 2 ? 2 : 1, what[w], w == 2 ? " (Recall@10)" : "");
        for (int p = 0; p < MEM_COMPACT_POLICY_COUNT; p++) {
            const double *v = w == 0 ? res[p].survival : w == 1 ? res[p].coverage : res[p].recall;
            printf("%-22s", mem_compact_policy_name(p));
            for (int s = 0; s < N_SEEDS; s++)
                printf(" %5.1f", v[s]);
            printf(" | %6.2f %6.1f\n", mean(v, N_SEEDS), minv(v, N_SEEDS));
        }
    }
    /* recall difference to coherence_weighted */
    double delta[MEM_COMPACT_POLICY_COUNT][N_SEEDS];
    printf("-- Exp 2 recall - coherence_weighted recall (pp)\n");
    for (int p = 0; p < MEM_COMPACT_POLICY_COUNT; p++) {
        printf("%-22s", mem_compact_policy_name(p));
        for (int s = 0; s < N_SEEDS; s++) {
            delta[p][s] = res[p].recall[s] - res[MEM_COMPACT_COHERENCE_WEIGHTED].recall[s];
            printf(" %+5.1f", delta[p][s]);
        }
        printf(" | %6.2f %6.1f\n", mean(delta[p], N_SEEDS), minv(delta[p], N_SEEDS));
    }
    /* the published 22-seed rows */
    int rows_ok[4] = {1, 1, 1, 1};
    for (int s = 0; s < N_SEEDS; s++) {
        rows_ok[0] &=
            fabs(res[MEM_COMPACT_STRUCTURAL_KEYFRAME].survival[s] - pub_b2_survival[s]) < 1e-9;
        rows_ok[1] &=
            fabs(res[MEM_COMPACT_STRUCTURAL_KEYFRAME].recall[s] - pub_b2_recall[s]) < 1e-9;
        rows_ok[2] &= fabs(res[MEM_COMPACT_COHERENCE_WEIGHTED].recall[s] - pub_cw_recall[s]) < 1e-9;
        rows_ok[3] &= fabs(res[MEM_COMPACT_DEDUP_GATED].recall[s] - pub_dg_recall[s]) < 1e-9;
    }
    printf("\npublished 22-seed rows reproduced: B2 survival %s, B2 recall %s, "
           "coherence_weighted recall %s, dedup_gated recall %s\n",
           rows_ok[0] ? "yes" : "NO", rows_ok[1] ? "yes" : "NO", rows_ok[2] ? "yes" : "NO",
           rows_ok[3] ? "yes" : "NO");

    const result_t *ours = &res[MEM_COMPACT_DEFAULT];
    int goal_mean = mean(ours->survival, N_SEEDS) >= 90.0;
    int goal_min = minv(ours->survival, N_SEEDS) >= 75.0;
    int goal_cov = minv(ours->coverage, N_SEEDS) >= 100.0;
    int goal_recall = minv(delta[MEM_COMPACT_DEFAULT], N_SEEDS) >= -1.0;
    int goal_time = ours->t_med <= 5.0 * cw_med;
    printf("goal (%s): mean survival >= 90 %%: %s, every seed >= 75 %%: %s, coverage 100 %%: %s, "
           "recall within 1 pp of coherence_weighted: %s, time <= 5x: %s\n\n",
           mem_compact_policy_name(MEM_COMPACT_DEFAULT), goal_mean ? "yes" : "NO",
           goal_min ? "yes" : "NO", goal_cov ? "yes" : "NO", goal_recall ? "yes" : "NO",
           goal_time ? "yes" : "NO");

    printf("compaction time per plan (n = 360, Exp 1 and Exp 2, %zu plans each)\n", res[0].n_times);
    printf("%-22s %10s %10s %12s\n", "policy", "median us", "p95 us", "vs coh_w");
    for (int p = 0; p < MEM_COMPACT_POLICY_COUNT; p++)
        printf("%-22s %10.1f %10.1f %11.2fx\n", mem_compact_policy_name(p), res[p].t_med,
               res[p].t_p95, res[p].t_med / cw_med);

    /* ---- JSON ---- */
    char cpu[256];
    bench_cpu_model(cpu, sizeof(cpu));
    mkdir("bench/results", 0755);
    FILE *f = fopen(out, "w");
    if (!f) {
        fprintf(stderr, "bench_stb: cannot write %s\n", out);
        return 1;
    }
    fprintf(f, "{\n  \"machine\": {\"cpu\": \"%s\", \"cores\": %ld, \"isa\": \"%s\"},\n", cpu,
            sysconf(_SC_NPROCESSORS_ONLN), mem_vec_ops()->name);
    fprintf(f, "  \"default_policy\": \"%s\",\n", mem_compact_policy_name(MEM_COMPACT_DEFAULT));
    fprintf(f, "  \"seeds\": [");
    for (int s = 0; s < N_SEEDS; s++)
        fprintf(f, "%s%ld", s ? ", " : "", seeds[s]);
    fprintf(f, "],\n  \"published_seed_20260906_reproduced\": %s,\n", seed_ok ? "true" : "false");
    fprintf(f, "  \"published_22_seed_rows_reproduced\": %s,\n",
            rows_ok[0] && rows_ok[1] && rows_ok[2] && rows_ok[3] ? "true" : "false");
    fprintf(f, "  \"goal_met\": %s,\n",
            goal_mean && goal_min && goal_cov && goal_recall && goal_time ? "true" : "false");
    fprintf(f, "  \"policies\": {\n");
    for (int p = 0; p < MEM_COMPACT_POLICY_COUNT; p++) {
        const result_t *r = &res[p];
        fprintf(f, "    \"%s\": {\n", mem_compact_policy_name(p));
        json_row(f, "exp1_survival_pct", r->survival, 0);
        json_row(f, "exp1_coverage_pct", r->coverage, 0);
        json_row(f, "exp2_recall_pct", r->recall, 0);
        json_row(f, "exp2_recall_delta_vs_coherence_weighted_pp", delta[p], 0);
        fprintf(f,
                "      \"exp1_survival_mean_pct\": %.4g, \"exp1_survival_min_pct\": %.4g,\n"
                "      \"exp1_coverage_min_pct\": %.4g, \"exp2_recall_mean_pct\": %.4g,\n"
                "      \"exp2_recall_min_delta_pp\": %.4g,\n"
                "      \"seed_20260906_survival_pct\": %.4g, \"seed_20260906_recall_pct\": %.4g,\n"
                "      \"time_us_median\": %.4g, \"time_us_p95\": %.4g, "
                "\"time_ratio_vs_coherence_weighted\": %.4g\n",
                mean(r->survival, N_SEEDS), minv(r->survival, N_SEEDS), minv(r->coverage, N_SEEDS),
                mean(r->recall, N_SEEDS), minv(delta[p], N_SEEDS), r->survival[PUBLISHED_SEED_IDX],
                r->recall[PUBLISHED_SEED_IDX], r->t_med, r->t_p95, r->t_med / cw_med);
        fprintf(f, "    }%s\n", p + 1 < MEM_COMPACT_POLICY_COUNT ? "," : "");
    }
    fprintf(f, "  }\n}\n");
    fclose(f);
    for (int p = 0; p < MEM_COMPACT_POLICY_COUNT; p++)
        free(res[p].times_us);
    return 0;
}
