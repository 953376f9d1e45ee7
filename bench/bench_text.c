/* bench_text.c - text retrieval speed: 100k conversational segments, exact top 10, one core
 * SPDX-License-Identifier: MIT
 *
 * Builds one namespace of N segments (default 100 000) from the memdev texts
 * (bench/data/memdev/corpus.jsonl, repeated in order with fresh timestamps, one every 10
 * minutes, so the namespace spans about two years), the way the writer does: built-in
 * embedding, vector index, tokenised row into the lexical index. Reports:
 *   - insert rate of the in-memory part (tokenise + embed + append, one thread), and of the
 *     lexical part alone (what start-up pays to rebuild the index from the stored texts);
 *   - memory per indexed segment, lexical index and vector index apart;
 *   - query latency (p50, p95) of the 291 memdev questions asked at the newest time, k 10,
 *     for text match with half_life 0 and 30 days, hybrid (the built-in namespaces' text
 *     weight) and vector match, and text with the optional trigram field; answers checked
 *     against the scalar reference on a sample.
 * Writes bench/results/text.json. Env: BENCH_TEXT_N (segments), BENCH_QUALITY_DIR,
 * BENCH_TEXT_CONFIG (run only the configuration of that index, for profiling).
 */
#define MEM_BENCH_WITH_INDEX
#include <jansson.h>

#include "bench/bench_util.h"
#include "core/embed.h"
#include "core/lexidx.h"
#include "core/lextok.h"
#include "core/scan.h"

#define DIM  MEM_EMBED_DIM_DEFAULT
#define K    10
#define REPS 5 /* passes over the questions per configuration */

static char **read_field(const char *path, const char *field, size_t max, size_t *n_out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "bench_text: cannot open %s (run from the repository root)\n", path);
        exit(1);
    }
    char **out = NULL, *line = NULL;
    size_t n = 0, cap = 0, lcap = 0;
    while (n < max && getline(&line, &lcap, f) > 0) {
        json_t *o = json_loads(line, 0, NULL);
        if (!o) exit(1);
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            out = realloc(out, cap * sizeof(*out));
            if (!out) exit(1);
        }
        out[n++] = strdup(json_string_value(json_object_get(o, field)));
        json_decref(o);
    }
    fclose(f);
    free(line);
    *n_out = n;
    return out;
}

typedef struct qcfg {
    const char *name;
    mem_scan_match_t match;
    double half_life_d;
    bool grams; /* the index with trigrams, gram_weight 0.5 */
    bench_stats_t st;
    double scanned_mean;
} qcfg_t;

int main(void)
{
    const mem_vec_ops_t *ops = bench_ops();
    bench_print_machine("text (100k conversational segments)", ops);
    const char *dir = getenv("BENCH_QUALITY_DIR");
    const char *n_env = getenv("BENCH_TEXT_N");
    size_t n = n_env && *n_env ? strtoull(n_env, NULL, 10) : 100000;
    char path[1024];
    snprintf(path, sizeof path, "%s/corpus.jsonl", dir && *dir ? dir : "bench/data/memdev");
    size_t n_texts, n_q;
    char **texts = read_field(path, "text", n, &n_texts);
    snprintf(path, sizeof path, "%s/queries.jsonl", dir && *dir ? dir : "bench/data/memdev");
    char **questions = read_field(path, "question", 100000, &n_q);

    mem_lextok_t *tk;
    mem_lextok_opts_t to = MEM_LEXTOK_DEFAULTS;
    mem_index_t *idx;
    mem_lexidx_t *lx, *lxg; /* the default index (words), and one with trigrams too */
    if (mem_lextok_new(&to, &tk) != MEM_OK || mem_index_new(DIM, &idx) != MEM_OK ||
        mem_lexidx_new(false, &lx) != MEM_OK || mem_lexidx_new(true, &lxg) != MEM_OK)
        return 1;
    const int64_t t0 = 1700000000000ll, step = 600000; /* one every 10 minutes */
    float vec[DIM];
    mem_lexdoc_t doc = {0};
    uint64_t lex_ns = 0, lexg_ns = 0, start = bench_now_ns();
    size_t text_bytes = 0;
    for (size_t i = 0; i < n; i++) {
        const char *t = texts[i % n_texts];
        size_t len = strlen(t), pos, lpos;
        text_bytes += len;
        char id[32];
        int il = snprintf(id, sizeof id, "s%zu", i);
        if (mem_embed_text(t, len, vec, DIM, NULL) != MEM_OK) {
            memset(vec, 0, sizeof vec);
            vec[0] = 1;
        }
        uint64_t l0 = bench_now_ns();
        if (mem_lexdoc_build(&doc, tk, t, len, false) != MEM_OK ||
            mem_lexidx_append(lx, &doc, true, &lpos) != MEM_OK)
            return 1;
        uint64_t l1 = bench_now_ns();
        lex_ns += l1 - l0;
        if (mem_index_append(idx, id, (size_t)il, t0 + (int64_t)i * step, (int64_t)i + 1, vec, 0, 0,
                             &pos) != MEM_OK ||
            pos != lpos)
            return 1;
        uint64_t l2 = bench_now_ns();
        if (mem_lexdoc_build(&doc, tk, t, len, true) != MEM_OK ||
            mem_lexidx_append(lxg, &doc, true, &lpos) != MEM_OK)
            return 1;
        lexg_ns += bench_now_ns() - l2;
    }
    mem_index_publish(idx, mem_index_rows(idx));
    mem_lexidx_publish(lx, n);
    mem_lexidx_publish(lxg, n);
    double total_s = (double)(bench_now_ns() - start - lexg_ns) / 1e9, lex_s = (double)lex_ns / 1e9,
           lexg_s = (double)lexg_ns / 1e9;
    mem_lexidx_stats_t ls, lsg;
    mem_lexidx_get_stats(lx, &ls);
    mem_lexidx_get_stats(lxg, &lsg);
    double lex_bpr = (double)ls.bytes / (double)n, lexg_bpr = (double)lsg.bytes / (double)n,
           vec_bpr = bench_index_bytes_per_row(idx);
    printf("%zu segments (%.0f bytes of text each on average)\n", n,
           (double)text_bytes / (double)n);
    printf("insert, in memory, one thread: %.0f segments/s (embed + vector index + lexical); "
           "lexical alone %.0f segments/s (with trigrams %.0f)\n",
           (double)n / total_s, (double)n / lex_s, (double)n / lexg_s);
    printf("memory per segment: lexical %.0f B (with trigrams %.0f B), vector index %.0f B; "
           "%zu word postings, %zu distinct words\n",
           lex_bpr, lexg_bpr, vec_bpr, ls.n_postings[0], ls.n_terms[0]);

    qcfg_t cfgs[] = {
        {.name = "text, half_life 0", .match = MEM_SCAN_MATCH_TEXT, .half_life_d = 0},
        {.name = "text, half_life 30d", .match = MEM_SCAN_MATCH_TEXT, .half_life_d = 30},
        {.name = "hybrid, half_life 0", .match = MEM_SCAN_MATCH_HYBRID, .half_life_d = 0},
        {.name = "hybrid, half_life 30d", .match = MEM_SCAN_MATCH_HYBRID, .half_life_d = 30},
        {.name = "vector, half_life 0", .match = MEM_SCAN_MATCH_VECTOR, .half_life_d = 0},
        {.name = "text+trigrams 0.5, half_life 0", .match = MEM_SCAN_MATCH_TEXT, .grams = true},
        {.name = "text+trigrams 0.5, half_life 30d",
         .match = MEM_SCAN_MATCH_TEXT,
         .half_life_d = 30,
         .grams = true},
    };
    size_t n_cfg = sizeof cfgs / sizeof cfgs[0];
    uint64_t *ns = malloc(n_q * REPS * sizeof(*ns));
    size_t mismatches = 0, checked = 0;
    const char *only = getenv("BENCH_TEXT_CONFIG");
    for (size_t c = 0; c < n_cfg; c++) {
        if (only && *only && (size_t)atoi(only) != c) continue;
        mem_lexparams_t lp = MEM_LEXPARAMS_DEFAULTS;
        if (cfgs[c].grams) lp.gram_weight = 0.5;
        const mem_lexidx_t *use = cfgs[c].grams ? lxg : lx;
        size_t m = 0;
        double scanned = 0;
        int reps = cfgs[c].grams ? 1 : REPS; /* the slow ones once */
        for (int rep = 0; rep < reps; rep++)
            for (size_t qi = 0; qi < n_q; qi++) {
                const char *q = questions[qi];
                float qv[DIM];
                uint64_t a = bench_now_ns();
                mem_lexq_t lq;
                if (mem_lexq_prepare(&lq, use, tk, q, strlen(q), &lp) != MEM_OK) return 1;
                if (cfgs[c].match != MEM_SCAN_MATCH_TEXT &&
                    mem_embed_text(q, strlen(q), qv, DIM, NULL) != MEM_OK)
                    return 1;
                mem_scan_params_t p = {
                    .query = qv,
                    .k = K,
                    .origin_ms = t0 + (int64_t)n * step,
                    .decay = {.kind = MEM_DECAY_EXPONENTIAL,
                              .half_life_s = cfgs[c].half_life_d * 86400.0,
                              .shape = 1,
                              .recency_bias = 1},
                    .since_ms = INT64_MIN,
                    .until_ms = INT64_MAX,
                    .source = -1,
                    .match = cfgs[c].match,
                    .lex = use,
                    .text = &lq,
                    .text_weight = MEM_SCAN_TEXT_WEIGHT_BUILTIN,
                };
                mem_scan_hit_t hits[K], ref[K];
                size_t nh, sc, nr, scr;
                mem_scan_run(idx, ops, &p, hits, &nh, &sc);
                ns[m++] = bench_now_ns() - a;
                scanned += (double)sc;
                if (rep == 0 && qi % 29 == 0) { /* exact: the answer is the reference's */
                    mem_scan_reference(idx, &p, ref, &nr, &scr);
                    checked++;
                    bool same = nr == nh;
                    for (size_t i = 0; same && i < nh; i++)
                        same =
                            hits[i].pos == ref[i].pos && fabs(hits[i].score - ref[i].score) < 1e-5;
                    mismatches += !same;
                }
                mem_lexq_deinit(&lq);
            }
        cfgs[c].st = bench_stats(ns, m);
        cfgs[c].scanned_mean = scanned / (double)m;
        printf("%-34s p50 %8.1f us  p95 %8.1f us  mean %8.1f us  scanned %8.0f rows\n",
               cfgs[c].name, cfgs[c].st.p50_us, cfgs[c].st.p95_us, cfgs[c].st.mean_us,
               cfgs[c].scanned_mean);
    }
    printf("answers checked against the scalar reference: %zu, different: %zu\n", checked,
           mismatches);

    /* a partial run (one configuration) does not replace the results of a full one */
    FILE *f = only && *only ? NULL : fopen("bench/results/text.json.tmp", "w");
    if (f) {
        fprintf(f, "{\n  \"suite\": \"text\",\n");
        bench_json_machine(f, ops);
        fprintf(f, ",\n  \"segments\": %zu,\n  \"text_bytes_mean\": %.0f,\n", n,
                (double)text_bytes / (double)n);
        fprintf(f,
                "  \"insert_per_s_in_memory\": %.0f,\n  \"lexical_index_per_s\": %.0f,\n"
                "  \"lexical_index_with_trigrams_per_s\": %.0f,\n",
                (double)n / total_s, (double)n / lex_s, (double)n / lexg_s);
        fprintf(f,
                "  \"bytes_per_segment\": {\"lexical\": %.0f, \"lexical_with_trigrams\": %.0f, "
                "\"vector_index\": %.0f},\n",
                lex_bpr, lexg_bpr, vec_bpr);
        fprintf(f, "  \"word_postings\": %zu,\n", ls.n_postings[0]);
        fprintf(f, "  \"queries\": %zu,\n  \"checked\": %zu,\n  \"mismatches\": %zu,\n", n_q,
                checked, mismatches);
        fprintf(f, "  \"latency\": [\n");
        for (size_t c = 0; c < n_cfg; c++)
            fprintf(f,
                    "    {\"config\": \"%s\", \"p50_us\": %.1f, \"p95_us\": %.1f, \"mean_us\": "
                    "%.1f, \"scanned_mean\": %.0f}%s\n",
                    cfgs[c].name, cfgs[c].st.p50_us, cfgs[c].st.p95_us, cfgs[c].st.mean_us,
                    cfgs[c].scanned_mean, c + 1 < n_cfg ? "," : "");
        fprintf(f, "  ]\n}\n");
        fclose(f);
        rename("bench/results/text.json.tmp", "bench/results/text.json");
    }
    mem_lexdoc_deinit(&doc);
    mem_lexidx_free(lx);
    mem_lexidx_free(lxg);
    mem_index_free(idx);
    mem_lextok_free(tk);
    return mismatches ? 1 : 0;
}
