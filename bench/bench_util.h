/* bench_util.h - shared helpers of the bench_* programs (timing, stats, machine, worker)
 * SPDX-License-Identifier: MIT
 *
 * Benches measure and never fail the build. Each writes bench/results/<suite>.json and
 * prints a table; run them with the repository root as the working directory.
 */
#ifndef MEM_BENCH_UTIL_H
#define MEM_BENCH_UTIL_H

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/vec.h"

static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int bench_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct bench_stats {
    double mean_us, p50_us, p95_us, min_us;
} bench_stats_t;

/* Sorts ns in place. */
static inline bench_stats_t bench_stats(uint64_t *ns, size_t n)
{
    bench_stats_t s = {0, 0, 0, 0};
    if (n == 0) return s;
    qsort(ns, n, sizeof(*ns), bench_cmp_u64);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (double)ns[i];
    s.mean_us = sum / (double)n / 1e3;
    s.p50_us = (double)ns[n / 2] / 1e3;
    s.p95_us = (double)ns[(n * 95) / 100 < n ? (n * 95) / 100 : n - 1] / 1e3;
    s.min_us = (double)ns[0] / 1e3;
    return s;
}

static inline uint64_t bench_rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static inline double bench_unit(uint64_t *s)
{
    return (double)(bench_rng(s) >> 11) * 0x1.0p-53;
}

/* The kernel table the server would pick: MNEMOD_SIMD if set and runnable, else the best. */
static inline const mem_vec_ops_t *bench_ops(void)
{
    const char *env = getenv("MNEMOD_SIMD");
    mem_vec_isa_t isa = mem_vec_best_isa();
    if (env && *env && mem_vec_isa_parse(env, &isa) != 0)
        fprintf(stderr, "MNEMOD_SIMD=%s unknown, using the best ISA\n", env);
    if (mem_vec_init(isa) != 0) mem_vec_init(mem_vec_best_isa());
    return mem_vec_ops();
}

static inline void bench_cpu_model(char *out, size_t len)
{
    snprintf(out, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ')
                    c++;
                c[strcspn(c, "\n")] = '\0';
                snprintf(out, len, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

/* "machine": {...} member (no trailing comma). */
static inline void bench_json_machine(FILE *f, const mem_vec_ops_t *ops)
{
    char cpu[256];
    bench_cpu_model(cpu, sizeof cpu);
    fprintf(f, "  \"machine\": {\"cpu\": \"%s\", \"cores\": %ld, \"isa\": \"%s\"}", cpu,
            sysconf(_SC_NPROCESSORS_ONLN), ops->name);
}

static inline void bench_print_machine(const char *suite, const mem_vec_ops_t *ops)
{
    char cpu[256];
    bench_cpu_model(cpu, sizeof cpu);
    printf("== %s  (cpu: %s, %ld cores, kernel: %s)\n", suite, cpu, sysconf(_SC_NPROCESSORS_ONLN),
           ops->name);
}

/* A persistent helper thread: the caller hands it one job at a time and spins until done.
 * Models a pool thread that is already awake (the best case of a libuv pool hand-off). */
typedef struct bench_worker {
    pthread_t th;
    atomic_uint_fast64_t posted, done;
    atomic_int stop;
    void (*fn)(void *);
    void *arg;
} bench_worker_t;

static void *bench_worker_main(void *p)
{
    bench_worker_t *w = p;
    uint64_t seen = 0;
    for (;;) {
        uint64_t cur;
        unsigned spins = 0;
        while ((cur = atomic_load_explicit(&w->posted, memory_order_acquire)) == seen) {
            if (atomic_load(&w->stop)) return NULL;
            if (++spins > 2000) /* shared machine: do not hog a core that others need */
                sched_yield();
        }
        seen = cur;
        w->fn(w->arg);
        atomic_store_explicit(&w->done, seen, memory_order_release);
    }
}

static inline void bench_worker_start(bench_worker_t *w)
{
    atomic_init(&w->posted, 0);
    atomic_init(&w->done, 0);
    atomic_init(&w->stop, 0);
    pthread_create(&w->th, NULL, bench_worker_main, w);
}

static inline void bench_worker_post(bench_worker_t *w, void (*fn)(void *), void *arg)
{
    w->fn = fn;
    w->arg = arg;
    atomic_fetch_add_explicit(&w->posted, 1, memory_order_release);
}

static inline void bench_worker_wait(bench_worker_t *w)
{
    uint64_t want = atomic_load(&w->posted);
    unsigned spins = 0;
    while (atomic_load_explicit(&w->done, memory_order_acquire) != want)
        if (++spins > 2000) sched_yield();
}

static inline void bench_worker_stop(bench_worker_t *w)
{
    atomic_store(&w->stop, 1);
    pthread_join(w->th, NULL);
}

#endif

#ifdef MEM_BENCH_WITH_INDEX
#include <malloc.h>

#include "core/err.h"
#include "core/index.h"
#include "core/index_int.h"
#include "core/scan.h"

/* Bytes of memory the index holds per segment (vectors, per-row columns, ids, id map). */
static inline double bench_index_bytes_per_row(const mem_index_t *idx)
{
    if (idx->n_rows == 0) return 0;
    size_t bytes = sizeof(*idx) + idx->cap_blocks * sizeof(mem_index_block_t *);
    bytes += idx->n_blocks * (sizeof(mem_index_block_t) +
                              MEM_INDEX_BLOCK_ROWS * idx->stride * sizeof(float) /* f32 rows */ +
                              MEM_INDEX_BLOCK_ROWS * idx->stride /* int8 sketch */);
    bytes += idx->_cap_slots * sizeof(uint32_t); /* the id map; the id pointers are in blocks */
    for (size_t p = 0; p < idx->n_rows; p++)
        if (MEM_INDEX_ROW(idx, p, ids)) /* + malloc header */
            bytes += malloc_usable_size(MEM_INDEX_ROW(idx, p, ids)) + 8;
    return (double)bytes / (double)idx->n_rows;
}

/* One read pass over the visible vectors (rows padded to stride, as the scan reads them),
 * restricted to blocks b % n_parts == part. Returns the sum so it is not optimised out. */
static inline float bench_read_pass(const mem_index_t *idx, const mem_vec_ops_t *ops, size_t part,
                                    size_t n_parts)
{
    float acc = 0;
    size_t nb = (idx->n_visible + MEM_INDEX_BLOCK_ROWS - 1) / MEM_INDEX_BLOCK_ROWS;
    for (size_t b = part; b < nb; b += n_parts) {
        size_t rows = idx->blocks[b]->n_rows;
        if (b * MEM_INDEX_BLOCK_ROWS + rows > idx->n_visible)
            rows = idx->n_visible - b * MEM_INDEX_BLOCK_ROWS;
        acc += ops->sum(idx->blocks[b]->vecs, rows * idx->stride);
    }
    return acc;
}

/* A scan split in two: part 1 on the worker, part 0 here, then merged. */
typedef struct bench_part_job {
    const mem_index_t *idx;
    const mem_vec_ops_t *ops;
    const mem_scan_params_t *p;
    size_t part, n_parts;
    mem_scan_hit_t hits[MEM_SCAN_MAX_K];
    size_t n_hits, scanned;
    float read_sum;
} bench_part_job_t;

static void bench_part_run(void *arg)
{
    bench_part_job_t *j = arg;
    mem_scan_run_part(j->idx, j->ops, j->p, j->part, j->n_parts, j->hits, &j->n_hits, &j->scanned);
}

static void bench_part_read(void *arg)
{
    bench_part_job_t *j = arg;
    j->read_sum = bench_read_pass(j->idx, j->ops, j->part, j->n_parts);
}

/* Two-thread scan: returns hits in out (room for p->k). */
static inline size_t bench_scan2(bench_worker_t *w, bench_part_job_t jobs[2],
                                 const mem_index_t *idx, const mem_vec_ops_t *ops,
                                 const mem_scan_params_t *p, mem_scan_hit_t *out, size_t *scanned)
{
    for (size_t t = 0; t < 2; t++) {
        jobs[t].idx = idx;
        jobs[t].ops = ops;
        jobs[t].p = p;
        jobs[t].part = t;
        jobs[t].n_parts = 2;
    }
    bench_worker_post(w, bench_part_run, &jobs[1]);
    bench_part_run(&jobs[0]);
    bench_worker_wait(w);
    const mem_scan_hit_t *lists[2] = {jobs[0].hits, jobs[1].hits};
    size_t counts[2] = {jobs[0].n_hits, jobs[1].n_hits}, n;
    mem_scan_merge(lists, counts, 2, p->k, out, &n);
    *scanned = jobs[0].scanned + jobs[1].scanned;
    return n;
}

static inline float bench_read2(bench_worker_t *w, bench_part_job_t jobs[2], const mem_index_t *idx,
                                const mem_vec_ops_t *ops)
{
    for (size_t t = 0; t < 2; t++) {
        jobs[t].idx = idx;
        jobs[t].ops = ops;
        jobs[t].part = t;
        jobs[t].n_parts = 2;
    }
    bench_worker_post(w, bench_part_read, &jobs[1]);
    bench_part_read(&jobs[0]);
    bench_worker_wait(w);
    return jobs[0].read_sum + jobs[1].read_sum;
}
/* The seeded clustered corpus of BENCH.md section 3: BENCH_CLUSTERS unit centres, members
 * drawn around them (cos ~0.6 to their centre whatever the dim), timestamps spread evenly
 * over one year from BENCH_T0_MS. One seed stream feeds centres, rows and queries. */
#define BENCH_CLUSTERS 64
#define BENCH_YEAR_MS  (365ll * 86400 * 1000)
#define BENCH_T0_MS    1700000000000ll

typedef struct bench_corpus {
    size_t dim;
    float *centers; /* BENCH_CLUSTERS * dim */
    double noise;   /* per coordinate */
    uint64_t seed;
} bench_corpus_t;

static inline void bench_corpus_init(bench_corpus_t *c, size_t dim, uint64_t seed)
{
    c->dim = dim;
    c->seed = seed;
    c->centers = malloc(BENCH_CLUSTERS * dim * sizeof(float));
    if (!c->centers) exit(1);
    for (size_t k = 0; k < BENCH_CLUSTERS; k++) {
        for (size_t d = 0; d < dim; d++)
            c->centers[k * dim + d] = (float)(bench_unit(&c->seed) - 0.5);
        mem_vec_normalize(c->centers + k * dim, dim);
    }
    c->noise = 1.6 / sqrt((double)dim);
}

/* One unit vector near a random centre. */
static inline void bench_corpus_vec(bench_corpus_t *c, float *v)
{
    const float *ctr = c->centers + (bench_rng(&c->seed) % BENCH_CLUSTERS) * c->dim;
    do {
        for (size_t d = 0; d < c->dim; d++) {
            /* sum of two uniforms: cheap, roughly bell-shaped noise */
            double u = bench_unit(&c->seed) + bench_unit(&c->seed) - 1.0;
            v[d] = ctr[d] + (float)(u * c->noise);
        }
    } while (mem_vec_normalize(v, c->dim) != 0);
}

/* A published index of n rows ("s0".., seq 1..n, timestamps over one year). */
static inline mem_index_t *bench_corpus_index(bench_corpus_t *c, size_t n)
{
    mem_index_t *idx;
    float *v = malloc(c->dim * sizeof(float));
    if (!v || mem_index_new(c->dim, &idx) != MEM_OK) exit(1);
    for (size_t i = 0; i < n; i++) {
        char id[24];
        int len = snprintf(id, sizeof id, "s%zu", i);
        bench_corpus_vec(c, v);
        size_t pos;
        if (mem_index_append(idx, id, (size_t)len,
                             BENCH_T0_MS + (int64_t)((double)i * BENCH_YEAR_MS / (double)n),
                             (int64_t)i + 1, v, 0, 0, &pos) != MEM_OK)
            exit(1);
    }
    mem_index_publish(idx, mem_index_rows(idx));
    free(v);
    return idx;
}

static inline void bench_corpus_free(bench_corpus_t *c)
{
    free(c->centers);
    c->centers = NULL;
}

#endif
