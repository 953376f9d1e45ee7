/* latency_inproc.c - the in-process half of bench/http/latency.py (not a suite of its own)
 * SPDX-License-Identifier: MIT
 *
 *   latency_inproc tcd DIR           the tcd corpus (bench/data/tcd), temporal variant
 *   latency_inproc scale N DIM DIR   the clustered corpus of the scale suite, 30-day half-life
 *
 * Builds the same core index the server builds from the same rows (normalised at ingest),
 * writes what the driver needs to load the server and ask it the same queries into DIR
 * (corpus.f32: the rows as given, ts.txt: one Unix-ms timestamp per row, queries.f32,
 * params.json: k, half_life_s, origin_ms, ids prefix), then answers commands on stdin so
 * that its runs interleave with the HTTP runs under the same machine load:
 *   run R    every query R times through mem_scan_run (one thread), one JSON line:
 *            {"p50_us":..., "p95_us":..., "mean_us":..., "queries":..., "scanned":...}
 *   ids Q    the ids of query Q's top K, space-separated, for the driver's sanity check
 *   quit
 */
#define MEM_BENCH_WITH_INDEX
#include "bench/bench_util.h"
#include "core/err.h"
#include "core/scan.h"

#define K 10

typedef struct setup {
    mem_index_t *idx;
    float *queries; /* normalised */
    size_t n_queries, dim;
    double half_life_s;
    int64_t origin_ms;
} setup_t;

static float *load(const char *path, size_t n, size_t dim)
{
    FILE *f = fopen(path, "rb");
    float *v = malloc(n * dim * sizeof(float));
    if (!f || !v || fread(v, sizeof(float), n * dim, f) != n * dim) {
        fprintf(stderr, "latency_inproc: cannot read %s (run from the repository root)\n", path);
        exit(1);
    }
    fclose(f);
    return v;
}

static void dump(const char *dir, const char *name, const void *p, size_t bytes)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, bytes, f) != bytes || fclose(f) != 0) {
        fprintf(stderr, "latency_inproc: cannot write %s\n", path);
        exit(1);
    }
}

static void build(setup_t *s, const float *rows, const int64_t *ts, size_t n, const char *prefix,
                  const char *dir)
{
    float *v = malloc(s->dim * sizeof(float));
    char *txt = malloc(n * 24 + 1);
    size_t o = 0;
    if (!v || !txt || mem_index_new(s->dim, &s->idx) != MEM_OK) exit(1);
    for (size_t i = 0; i < n; i++) {
        char id[24];
        int len = snprintf(id, sizeof id, "%s%zu", prefix, i);
        size_t pos;
        memcpy(v, rows + i * s->dim, s->dim * sizeof(float));
        if (mem_vec_normalize(v, s->dim) != 0 ||
            mem_index_append(s->idx, id, (size_t)len, ts[i], (int64_t)i + 1, v, 0, 0, &pos) !=
                MEM_OK)
            exit(1);
        o += (size_t)snprintf(txt + o, 24, "%lld\n", (long long)ts[i]);
    }
    mem_index_publish(s->idx, mem_index_rows(s->idx));
    dump(dir, "corpus.f32", rows, n * s->dim * sizeof(float));
    dump(dir, "ts.txt", txt, o);
    dump(dir, "queries.f32", s->queries, s->n_queries * s->dim * sizeof(float));
    char params[256];
    int pl = snprintf(params, sizeof params,
                      "{\"n\": %zu, \"dim\": %zu, \"queries\": %zu, \"k\": %d, \"half_life_s\": "
                      "%.1f, \"origin_ms\": %lld, \"id_prefix\": \"%s\"}\n",
                      n, s->dim, s->n_queries, K, s->half_life_s, (long long)s->origin_ms, prefix);
    dump(dir, "params.json", params, (size_t)pl);
    for (size_t q = 0; q < s->n_queries; q++)
        mem_vec_normalize(s->queries + q * s->dim, s->dim);
    free(v);
    free(txt);
}

static mem_scan_params_t params(const setup_t *s, const float *q)
{
    mem_scan_params_t p = {
        .query = q,
        .k = K,
        .origin_ms = s->origin_ms,
        .decay = {.kind = MEM_DECAY_EXPONENTIAL,
                  .half_life_s = s->half_life_s,
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

int main(int argc, char **argv)
{
    const mem_vec_ops_t *ops = bench_ops();
    setup_t s = {0};
    if (argc == 3 && strcmp(argv[1], "tcd") == 0) {
        enum { N = 5000, NQ = 200, DIM = 128 };
        s.dim = DIM;
        s.n_queries = NQ;
        s.half_life_s = 300000; /* BENCH.md section 1, time unit = seconds */
        s.origin_ms = 1000000ll * 1000;
        float *rows = load("bench/data/tcd/corpus.f32", N, DIM);
        s.queries = load("bench/data/tcd/queries.f32", NQ, DIM);
        int64_t *ts = malloc(N * sizeof(int64_t));
        for (size_t i = 0; i < N; i++)
            ts[i] = (int64_t)(200 * i) * 1000;
        build(&s, rows, ts, N, "m", argv[2]);
        free(rows);
        free(ts);
    } else if (argc == 5 && strcmp(argv[1], "scale") == 0) {
        size_t n = strtoull(argv[2], NULL, 10), dim = strtoull(argv[3], NULL, 10);
        if (n == 0 || dim == 0 || dim > 4096) return 2;
        bench_corpus_t c;
        bench_corpus_init(&c, dim, 1000003ull * n + dim); /* the scale suite's corpus */
        float *rows = malloc(n * dim * sizeof(float));
        int64_t *ts = malloc(n * sizeof(int64_t));
        if (!rows || !ts) return 1;
        for (size_t i = 0; i < n; i++) {
            bench_corpus_vec(&c, rows + i * dim);
            ts[i] = BENCH_T0_MS + (int64_t)((double)i * BENCH_YEAR_MS / (double)n);
        }
        s.dim = dim;
        s.n_queries = 64;
        s.queries = malloc(s.n_queries * dim * sizeof(float));
        for (size_t q = 0; q < s.n_queries; q++)
            bench_corpus_vec(&c, s.queries + q * dim);
        s.half_life_s = 30.0 * 86400;
        s.origin_ms = BENCH_T0_MS + BENCH_YEAR_MS;
        build(&s, rows, ts, n, "s", argv[4]);
        free(rows);
        free(ts);
    } else {
        fprintf(stderr, "usage: latency_inproc tcd DIR | latency_inproc scale N DIM DIR\n");
        return 2;
    }
    printf("ready\n");
    fflush(stdout);
    char line[128];
    mem_scan_hit_t hits[K];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "run ", 4) == 0) {
            size_t reps = strtoull(line + 4, NULL, 10), n_all = reps * s.n_queries, n = 0;
            uint64_t *ns = malloc((n_all ? n_all : 1) * sizeof(uint64_t)), scanned_all = 0;
            for (size_t r = 0; r < reps; r++)
                for (size_t q = 0; q < s.n_queries; q++) {
                    mem_scan_params_t p = params(&s, s.queries + q * s.dim);
                    size_t nh, scanned;
                    uint64_t t0 = bench_now_ns();
                    mem_scan_run(s.idx, ops, &p, hits, &nh, &scanned);
                    ns[n++] = bench_now_ns() - t0;
                    scanned_all += scanned;
                }
            bench_stats_t st = bench_stats(ns, n);
            printf("{\"p50_us\": %.2f, \"p95_us\": %.2f, \"mean_us\": %.2f, \"queries\": %zu, "
                   "\"scanned\": %.1f, \"kernel\": \"%s\"}\n",
                   st.p50_us, st.p95_us, st.mean_us, n, n ? (double)scanned_all / (double)n : 0,
                   ops->name);
            free(ns);
        } else if (strncmp(line, "ids ", 4) == 0) {
            size_t q = strtoull(line + 4, NULL, 10), nh = 0, scanned;
            if (q < s.n_queries) {
                mem_scan_params_t p = params(&s, s.queries + q * s.dim);
                mem_scan_run(s.idx, ops, &p, hits, &nh, &scanned);
            }
            for (size_t i = 0; i < nh; i++)
                printf("%s%s", i ? " " : "", mem_index_id(s.idx, hits[i].pos));
            printf("\n");
        } else if (strncmp(line, "quit", 4) == 0) {
            break;
        }
        fflush(stdout);
    }
    return 0;
}
