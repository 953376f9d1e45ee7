/* bench_num.c - numbers in and out: per-number and per-body costs, next to what they replace
 * SPDX-License-Identifier: MIT
 *
 * Per number: mem_num_parse_f32 against strtof, mem_num_fmt_f32 / _f64 against the
 * printf-and-read-back loop a JSON encoder needs without a shortest algorithm. Per body:
 * the 200 tcd queries (128 float32 each, written as a Python client writes them: the
 * shortest repr of each float32 widened to double, about 18 digits) as retrieve bodies,
 * parsed and decoded by mem_api__parse_body + mem_api__decode_vec against jansson's
 * json_loadb and a json_t per number; a retrieve answer with explain (10 results) and a
 * segment with a 384-float embedding written by mem_api__dump against json_dumps plus
 * the shortest-real retry loop. Same data, same run: the ratios are what to compare.
 * Writes bench/results/num.json.
 */
#include <float.h>

#include <jansson.h>

#include "api/api_int.h"
#include "bench/bench_util.h"
#include "core/num.h"

#define REPS 7

static double best_ns_per(uint64_t *ns, size_t reps, size_t per)
{
    uint64_t best = UINT64_MAX;
    for (size_t i = 0; i < reps; i++)
        best = ns[i] < best ? ns[i] : best;
    return (double)best / (double)per;
}

/* What api/encode.c did before core/num.c: shortest %.{p}g found by trying p = 1..17. */
static size_t retry_fmt(double x, char *out, size_t cap)
{
    int l = 0;
    if (x == floor(x) && fabs(x) < 1e15) {
        l = snprintf(out, cap, "%.1f", x);
    } else {
        for (int p = 1; p <= 17; p++) {
            l = snprintf(out, cap, "%.*g", p, x);
            if (strtod(out, NULL) == x) break;
        }
    }
    return (size_t)l;
}

static char *retry_dump(const json_t *j)
{
    /* jansson's text, then every real rewritten by the retry loop (the old mem_api__dump) */
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!s) return NULL;
    size_t len = strlen(s), o = 0;
    char *out = malloc(len * 2 + 64);
    bool in_str = false;
    for (size_t i = 0; i < len;) {
        char c = s[i];
        if (in_str) {
            out[o++] = c;
            i++;
            if (c == '\\')
                out[o++] = s[i++];
            else if (c == '"')
                in_str = false;
            continue;
        }
        if (c == '"') in_str = true;
        if (c == '-' || (c >= '0' && c <= '9')) {
            size_t tok = strspn(s + i, "0123456789+-.eE");
            char buf[64];
            memcpy(buf, s + i, tok < 63 ? tok : 63);
            buf[tok < 63 ? tok : 63] = '\0';
            if (strpbrk(buf, ".eE"))
                o += retry_fmt(strtod(buf, NULL), out + o, 40);
            else {
                memcpy(out + o, buf, tok);
                o += tok;
            }
            i += tok;
            continue;
        }
        out[o++] = c;
        i++;
    }
    out[o] = '\0';
    free(s);
    return out;
}

static float *load(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    float *v = malloc((size_t)sz);
    if (!v || fread(v, 1, (size_t)sz, f) != (size_t)sz) {
        free(v);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *n = (size_t)sz / sizeof(float);
    return v;
}

/* ---- embedding arrays as clients write them ---- */

enum { ARR_DIM = 384, ARR_N = 256, ARR_REPS = 15 };

typedef struct arr_shape {
    const char *name, *key; /* key: its name in num.json */
    const char *sep;
} arr_shape_t;

static const arr_shape_t SHAPES[] = {
    /* json.dumps(vec.tolist()) of float32: the shortest repr of the widened double */
    {"Python json.dumps of float32 (16-17 digits)", "python_repr", ", "},
    {"%.8g, as bench/http/ingest.py (8 digits)", "printf_8g", ","},
    {"shortest float32 (6-9 digits), as this server and JS clients write", "shortest_f32", ","},
};

/* A unit vector of gaussians, about what an embedder returns. */
static void gauss_vec(uint64_t *seed, float *v, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        double u = bench_unit(seed) + 1e-300, w = bench_unit(seed);
        double g = sqrt(-2 * log(u)) * cos(6.283185307179586 * w);
        v[i] = (float)g;
        sum += g * g;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(v[i] / sqrt(sum));
}

static size_t shape_num(int shape, float f, char *out)
{
    if (shape == 0) return retry_fmt((double)f, out, 40);
    if (shape == 1) return (size_t)snprintf(out, 40, "%.8g", (double)f);
    return mem_num_fmt_f32(f, out);
}

typedef struct arr_result {
    double parse_ns, list_ns, json_ns, strtof_ns, mb_s, bytes_per_number;
} arr_result_t;

/* One shape: ARR_N bodies {"embedding":[...]} of ARR_DIM numbers. Per number: the array
 * walked with mem_num_parse_f32 (what the body reader does at an embedding), the whole
 * body through mem_api__json_parse, and strtof on the same tokens. */
static arr_result_t bench_shape(int shape, uint64_t *seed)
{
    size_t cap = (size_t)ARR_N * (ARR_DIM * 28 + 64);
    char *text = malloc(cap);
    size_t *start = malloc((ARR_N + 1) * sizeof(size_t)), o = 0, num_bytes = 0;
    float v[ARR_DIM];
    for (size_t b = 0; b < ARR_N; b++) {
        gauss_vec(seed, v, ARR_DIM);
        start[b] = o;
        o += (size_t)sprintf(text + o, "{\"embedding\": [");
        for (size_t i = 0; i < ARR_DIM; i++) {
            if (i) o += (size_t)sprintf(text + o, "%s", SHAPES[shape].sep);
            size_t l = shape_num(shape, v[i], text + o);
            o += l;
            num_bytes += l;
        }
        o += (size_t)sprintf(text + o, "]}");
    }
    start[ARR_N] = o;
    uint64_t t[ARR_REPS];
    volatile float sink = 0;
    for (int r = 0; r < ARR_REPS; r++) {
        uint64_t t0 = bench_now_ns();
        for (size_t b = 0; b < ARR_N; b++) {
            const char *p = (const char *)memchr(text + start[b], '[', 32) + 1,
                       *end = text + start[b + 1];
            float out[ARR_DIM];
            for (size_t i = 0; i < ARR_DIM; i++) {
                while (*p == ' ')
                    p++;
                size_t used;
                if (mem_num_parse_f32(p, (size_t)(end - p), &out[i], &used) != MEM_OK) abort();
                p += used;
                while (*p == ' ')
                    p++;
                p++; /* ',' or ']' */
            }
            sink += out[ARR_DIM - 1];
        }
        t[r] = bench_now_ns() - t0;
    }
    arr_result_t res;
    res.parse_ns = best_ns_per(t, ARR_REPS, (size_t)ARR_N * ARR_DIM);
    for (int r = 0; r < ARR_REPS; r++) {
        uint64_t t0 = bench_now_ns();
        for (size_t b = 0; b < ARR_N; b++) {
            const char *p = (const char *)memchr(text + start[b], '[', 32) + 1;
            float out[ARR_DIM];
            size_t n, used;
            bool long_integer;
            if (mem_num_parse_f32_list(p, start[b + 1] - (size_t)(p - text), out, ARR_DIM, &n,
                                       &used, &long_integer) != MEM_OK ||
                n != ARR_DIM)
                abort();
            sink += out[ARR_DIM - 1];
        }
        t[r] = bench_now_ns() - t0;
    }
    res.list_ns = best_ns_per(t, ARR_REPS, (size_t)ARR_N * ARR_DIM);
    for (int r = 0; r < ARR_REPS; r++) {
        uint64_t t0 = bench_now_ns();
        for (size_t b = 0; b < ARR_N; b++) {
            json_t *root;
            if (mem_api__parse_body(text + start[b], start[b + 1] - start[b], &root, NULL) !=
                MEM_OK)
                abort();
            json_decref(root);
        }
        t[r] = bench_now_ns() - t0;
    }
    res.json_ns = best_ns_per(t, ARR_REPS, (size_t)ARR_N * ARR_DIM);
    for (int r = 0; r < 3; r++) {
        uint64_t t0 = bench_now_ns();
        for (size_t b = 0; b < ARR_N; b++) {
            const char *p = (const char *)memchr(text + start[b], '[', 32) + 1;
            for (size_t i = 0; i < ARR_DIM; i++) {
                char *e;
                sink += strtof(p, &e);
                p = e + strspn(e, ", ]");
            }
        }
        t[r] = bench_now_ns() - t0;
    }
    res.strtof_ns = best_ns_per(t, 3, (size_t)ARR_N * ARR_DIM);
    res.bytes_per_number = (double)num_bytes / ((double)ARR_N * ARR_DIM);
    res.mb_s = (double)(o - 0) / ((double)ARR_N * ARR_DIM * res.json_ns) * 1e3;
    (void)sink;
    free(text);
    free(start);
    return res;
}

int main(void)
{
    const mem_vec_ops_t *ops = bench_ops();
    bench_print_machine("num", ops);
    uint64_t seed = 42;
    /* ---- per number ---- */
    enum { N = 1 << 16 };
    char *text = malloc((size_t)N * 32 + 32);
    size_t *off = malloc((N + 1) * sizeof(size_t)), o = 0;
    float *vals = malloc(N * sizeof(float));
    for (size_t i = 0; i < N; i++) {
        vals[i] = (float)((bench_unit(&seed) - 0.5) * 0.4);
        off[i] = o;
        o += (size_t)snprintf(text + o, 32, "%.17g,", (double)vals[i]);
    }
    off[N] = o;
    memset(text + o, ' ', 32); /* numbers are parsed in place, followed by more text */
    uint64_t t[REPS];
    volatile float sink = 0;
    for (int r = 0; r < REPS; r++) {
        uint64_t t0 = bench_now_ns();
        for (size_t i = 0; i < N; i++) {
            float f;
            size_t used;
            mem_num_parse_f32(text + off[i], o + 32 - off[i], &f, &used);
            sink += f;
        }
        t[r] = bench_now_ns() - t0;
    }
    double parse_ns = best_ns_per(t, REPS, N);
    for (int r = 0; r < REPS; r++) {
        uint64_t t0 = bench_now_ns();
        for (size_t i = 0; i < N; i++) {
            char tmp[40];
            size_t l = off[i + 1] - off[i] - 1;
            memcpy(tmp, text + off[i], l);
            tmp[l] = '\0';
            sink += strtof(tmp, NULL);
        }
        t[r] = bench_now_ns() - t0;
    }
    double strtof_ns = best_ns_per(t, REPS, N);
    char buf[64];
    volatile size_t slen = 0;
    for (int r = 0; r < REPS; r++) {
        uint64_t t0 = bench_now_ns();
        for (size_t i = 0; i < N; i++)
            slen += mem_num_fmt_f32(vals[i], buf);
        t[r] = bench_now_ns() - t0;
    }
    double fmt32_ns = best_ns_per(t, REPS, N);
    for (int r = 0; r < REPS; r++) {
        uint64_t t0 = bench_now_ns();
        for (size_t i = 0; i < N; i++) {
            double d = (double)vals[i];
            for (int p = 6; p <= 9; p++) { /* the old float32 loop */
                snprintf(buf, sizeof buf, "%.*g", p, d);
                if ((float)strtod(buf, NULL) == vals[i]) break;
            }
            slen += retry_fmt(strtod(buf, NULL), buf, sizeof buf);
        }
        t[r] = bench_now_ns() - t0;
    }
    double retry32_ns = best_ns_per(t, REPS, N);
    double *dv = malloc(N * sizeof(double));
    for (size_t i = 0; i < N; i++)
        dv[i] = bench_unit(&seed) * 0.9 + 0.05; /* scores */
    for (int r = 0; r < REPS; r++) {
        uint64_t t0 = bench_now_ns();
        for (size_t i = 0; i < N; i++)
            slen += mem_num_fmt_f64(dv[i], buf);
        t[r] = bench_now_ns() - t0;
    }
    double fmt64_ns = best_ns_per(t, REPS, N);
    for (int r = 0; r < REPS; r++) {
        uint64_t t0 = bench_now_ns();
        for (size_t i = 0; i < N; i++)
            slen += retry_fmt(dv[i], buf, sizeof buf);
        t[r] = bench_now_ns() - t0;
    }
    double retry64_ns = best_ns_per(t, REPS, N);
    printf("per number        ns      reference ns   ratio\n");
    printf("parse f32   %9.1f %12.1f (strtof)     %5.2f\n", parse_ns, strtof_ns,
           parse_ns / strtof_ns);
    printf("print f32   %9.1f %12.1f (retry loop) %5.2f\n", fmt32_ns, retry32_ns,
           fmt32_ns / retry32_ns);
    printf("print f64   %9.1f %12.1f (retry loop) %5.2f\n", fmt64_ns, retry64_ns,
           fmt64_ns / retry64_ns);

    /* ---- embedding arrays ---- */
    enum { N_SHAPES = sizeof(SHAPES) / sizeof(SHAPES[0]) };
    arr_result_t shape_res[N_SHAPES];
    printf("embedding arrays (%d x %d), ns/number: mem_num_parse_f32 each, the list, the whole "
           "body (mem_api__parse_body), strtof; the body's MB/s\n",
           ARR_N, ARR_DIM);
    for (int k = 0; k < (int)N_SHAPES; k++) {
        shape_res[k] = bench_shape(k, &seed);
        printf("  %-66s %6.1f %6.1f %6.1f %6.1f %6.0f\n", SHAPES[k].name, shape_res[k].parse_ns,
               shape_res[k].list_ns, shape_res[k].json_ns, shape_res[k].strtof_ns,
               shape_res[k].mb_s);
    }

    /* ---- per body: the tcd queries as retrieve bodies ---- */
    size_t nq = 0;
    float *q = load("bench/data/tcd/queries.f32", &nq);
    size_t dim = 128, n_bodies = q ? nq / dim : 0;
    if (!q) { /* no corpus: synthetic queries of the same shape */
        n_bodies = 200;
        q = malloc(n_bodies * dim * sizeof(float));
        for (size_t i = 0; i < n_bodies * dim; i++)
            q[i] = (float)(bench_unit(&seed) * 2 - 1);
    }
    char **bodies = malloc(n_bodies * sizeof(char *));
    size_t *blen = malloc(n_bodies * sizeof(size_t)), total = 0;
    for (size_t b = 0; b < n_bodies; b++) {
        char *s = malloc(dim * 32 + 256);
        size_t l = (size_t)sprintf(s, "{\"embedding\":[");
        for (size_t i = 0; i < dim; i++) { /* a Python client: repr of the float32 widened */
            double d = (double)q[b * dim + i];
            char num[40];
            retry_fmt(d, num, sizeof num);
            l += (size_t)sprintf(s + l, "%s%s", i ? ", " : "", num);
        }
        l += (size_t)sprintf(s + l, "], \"k\": 10, \"half_life\": 300000, \"origin\": 1000000}");
        bodies[b] = s;
        blen[b] = l;
        total += l;
    }
    mem_api__pool_t pool = {NULL};
    uint64_t tn[REPS], tj[REPS];
    for (int r = 0; r < REPS; r++) {
        uint64_t t0 = bench_now_ns();
        for (size_t b = 0; b < n_bodies; b++) {
            json_t *root;
            float *vec;
            size_t d;
            if (mem_api__parse_body(bodies[b], blen[b], &root, NULL) != MEM_OK) abort();
            mem_api__decode_vec(&pool, json_object_get(root, "embedding"), "embedding", dim, &vec,
                                &d, NULL);
            sink += vec[0];
            json_decref(root);
        }
        tn[r] = bench_now_ns() - t0;
        mem_api__pool_free(&pool);
        t0 = bench_now_ns();
        for (size_t b = 0; b < n_bodies; b++) {
            json_t *root = json_loadb(bodies[b], blen[b], JSON_REJECT_DUPLICATES, NULL);
            const json_t *arr = json_object_get(root, "embedding");
            float *vec = mem_api__palloc(&pool, dim * sizeof(float));
            for (size_t i = 0; i < json_array_size(arr); i++)
                vec[i] = (float)json_number_value(json_array_get(arr, i));
            mem_vec_normalize(vec, dim);
            sink += vec[0];
            json_decref(root);
        }
        tj[r] = bench_now_ns() - t0;
        mem_api__pool_free(&pool);
    }
    double body_us = best_ns_per(tn, REPS, n_bodies) / 1e3,
           jansson_us = best_ns_per(tj, REPS, n_bodies) / 1e3;
    printf("retrieve body (%zu B, %zu floats): parse+decode %.2f us, jansson %.2f us, ratio %.3f\n",
           total / n_bodies, dim, body_us, jansson_us, body_us / jansson_us);

    /* ---- answers: a retrieve with explain, a segment with a 384-float embedding ---- */
    json_t *ans = json_object(), *res = json_array();
    for (int i = 0; i < 10; i++) {
        json_t *h = json_pack(
            "{s:s,s:i,s:f,s:s,s:s,s:f,s:f,s:f,s:f}", "id", "seg-0001234", "seq", 4000 + i, "score",
            bench_unit(&seed), "timestamp", "2026-07-31T09:30:00.000Z", "text", "a memory",
            "similarity", mem_num_f32_to_f64_shortest((float)bench_unit(&seed)), "decay",
            bench_unit(&seed), "gate", bench_unit(&seed), "age_seconds", bench_unit(&seed) * 1e6);
        json_array_append_new(res, h);
    }
    json_object_set_new(ans, "namespace", json_string("tcd"));
    json_object_set_new(ans, "took_ms", json_real(0.087));
    json_object_set_new(ans, "results", res);
    float emb[384];
    for (int i = 0; i < 384; i++)
        emb[i] = (float)(bench_unit(&seed) - 0.5) * 0.1f;
    json_t *seg_new = json_pack("{s:s,s:o}", "id", "x", "embedding", mem_api__vec_node(emb, 384));
    json_t *seg_old = json_pack("{s:s,s:[]}", "id", "x", "embedding");
    for (int i = 0; i < 384; i++)
        json_array_append_new(json_object_get(seg_old, "embedding"),
                              json_real(mem_num_f32_to_f64_shortest(emb[i])));
    uint64_t ta[REPS], tb[REPS], tc[REPS], td[REPS];
    enum { DUMPS = 200 };
    for (int r = 0; r < REPS; r++) {
        uint64_t t0 = bench_now_ns();
        for (int i = 0; i < DUMPS; i++)
            free(mem_api__dump(ans));
        ta[r] = bench_now_ns() - t0;
        t0 = bench_now_ns();
        for (int i = 0; i < DUMPS; i++)
            free(retry_dump(ans));
        tb[r] = bench_now_ns() - t0;
        t0 = bench_now_ns();
        for (int i = 0; i < DUMPS; i++)
            free(mem_api__dump(seg_new));
        tc[r] = bench_now_ns() - t0;
        t0 = bench_now_ns();
        for (int i = 0; i < DUMPS; i++)
            free(retry_dump(seg_old));
        td[r] = bench_now_ns() - t0;
    }
    double ans_us = best_ns_per(ta, REPS, DUMPS) / 1e3,
           ans_old_us = best_ns_per(tb, REPS, DUMPS) / 1e3,
           seg_us = best_ns_per(tc, REPS, DUMPS) / 1e3,
           seg_old_us = best_ns_per(td, REPS, DUMPS) / 1e3;
    printf("retrieve answer, explain, 10 results: write %.2f us, json_dumps+retry %.2f us, "
           "ratio %.3f\n",
           ans_us, ans_old_us, ans_us / ans_old_us);
    printf("segment with 384 floats: write %.2f us, json_dumps+retry %.2f us, ratio %.3f\n", seg_us,
           seg_old_us, seg_us / seg_old_us);
    json_decref(ans);
    json_decref(seg_new);
    json_decref(seg_old);

    /* ---- a retrieve's answer from its results: the tree and its dump, or text at once ---- */
    mem_store_result_t hits[10];
    memset(hits, 0, sizeof(hits));
    for (int i = 0; i < 10; i++) {
        char id[32];
        snprintf(id, sizeof id, "tcd-%d", 1000 + i);
        hits[i].id = strdup(id);
        hits[i].text = strdup("a memory of something said");
        hits[i].ts_ms = 1785490200000LL + i * 1000;
        hits[i].hit.seq = 4000 + i;
        hits[i].hit.score = bench_unit(&seed);
        hits[i].hit.sim = (float)bench_unit(&seed);
        hits[i].hit.decay = bench_unit(&seed);
        hits[i].hit.gate = bench_unit(&seed);
        hits[i].hit.vector_score = hits[i].hit.sim;
    }
    uint64_t te[REPS], tf[REPS];
    for (int r = 0; r < REPS; r++) {
        uint64_t t0 = bench_now_ns();
        for (int i = 0; i < DUMPS; i++) {
            json_t *tree = mem_api__enc_results("tcd", hits, 10, 5000, "avx2", 0.087, true,
                                                1000000000, MEM_SCAN_MATCH_VECTOR);
            free(mem_api__dump(tree));
            json_decref(tree);
        }
        te[r] = bench_now_ns() - t0;
        t0 = bench_now_ns();
        for (int i = 0; i < DUMPS; i++)
            free(mem_api__enc_results_text("tcd", hits, 10, 5000, "avx2", 0.087, true, 1000000000,
                                           MEM_SCAN_MATCH_VECTOR, NULL));
        tf[r] = bench_now_ns() - t0;
    }
    for (int i = 0; i < 10; i++) {
        free(hits[i].id);
        free(hits[i].text);
    }
    double enc_tree_us = best_ns_per(te, REPS, DUMPS) / 1e3,
           enc_text_us = best_ns_per(tf, REPS, DUMPS) / 1e3;
    printf("retrieve answer from 10 results, explain: text %.2f "
           "us, tree + dump %.2f us, ratio %.3f\n",
           enc_text_us, enc_tree_us, enc_text_us / enc_tree_us);

    FILE *f = fopen("bench/results/num.json", "w");
    if (f) {
        fprintf(f, "{\n");
        fprintf(
            f,
            "  \"parse_f32_ns\": %.1f, \"strtof_ns\": %.1f, \"parse_ratio\": %.3f,\n"
            "  \"print_f32_ns\": %.1f, \"print_f32_retry_ns\": %.1f, \"print_f32_ratio\": %.3f,\n"
            "  \"print_f64_ns\": %.1f, \"print_f64_retry_ns\": %.1f, \"print_f64_ratio\": %.3f,\n",
            parse_ns, strtof_ns, parse_ns / strtof_ns, fmt32_ns, retry32_ns, fmt32_ns / retry32_ns,
            fmt64_ns, retry64_ns, fmt64_ns / retry64_ns);
        fprintf(f,
                "  \"retrieve_body\": {\"bytes\": %zu, \"floats\": %zu, \"parse_decode_us\": %.2f, "
                "\"jansson_us\": %.2f, \"ratio\": %.3f},\n",
                total / n_bodies, dim, body_us, jansson_us, body_us / jansson_us);
        fprintf(f,
                "  \"retrieve_answer_explain\": {\"write_us\": %.2f, \"jansson_retry_us\": %.2f, "
                "\"ratio\": %.3f},\n",
                ans_us, ans_old_us, ans_us / ans_old_us);
        fprintf(f,
                "  \"segment_384\": {\"write_us\": %.2f, \"jansson_retry_us\": %.2f, \"ratio\": "
                "%.3f},\n",
                seg_us, seg_old_us, seg_us / seg_old_us);
        fprintf(f,
                "  \"retrieve_answer_from_results\": {\"text_us\": %.2f, \"tree_dump_us\": "
                "%.2f, \"ratio\": %.3f},\n",
                enc_text_us, enc_tree_us, enc_text_us / enc_tree_us);
        double load[1] = {-1};
        getloadavg(load, 1);
        fprintf(f, "  \"load_avg_1min\": %.2f,\n", load[0]);
        fprintf(f, "  \"embedding_arrays\": {\"dim\": %d", ARR_DIM);
        for (int k = 0; k < (int)N_SHAPES; k++)
            fprintf(f,
                    ",\n    \"%s\": {\"bytes_per_number\": %.1f, \"parse_ns\": %.1f, "
                    "\"list_ns\": %.1f, \"body_ns\": %.1f, \"strtof_ns\": %.1f, "
                    "\"body_mb_s\": %.0f}",
                    SHAPES[k].key, shape_res[k].bytes_per_number, shape_res[k].parse_ns,
                    shape_res[k].list_ns, shape_res[k].json_ns, shape_res[k].strtof_ns,
                    shape_res[k].mb_s);
        fprintf(f, "},\n");
        bench_json_machine(f, ops);
        fprintf(f, "\n}\n");
        fclose(f);
    }
    (void)sink;
    (void)slen;
    for (size_t b = 0; b < n_bodies; b++)
        free(bodies[b]);
    free(bodies);
    free(blen);
    free(q);
    free(text);
    free(off);
    free(vals);
    free(dv);
    return 0;
}
