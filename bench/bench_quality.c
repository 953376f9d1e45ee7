/* bench_quality.c - retrieval quality on memdev: text, vector and hybrid match against BM25
 * SPDX-License-Identifier: MIT
 *
 * Loads bench/data/memdev (LongMemEval_S user turns: 291 conversations, one question each,
 * see its README), builds one namespace per conversation exactly as the server does (core
 * index with the built-in embedder's vectors, lexical index), asks each question at its
 * asked_at through mem_scan_run and scores the top 10 against the labelled evidence:
 *   R@k    fraction of the question's evidence segments in the top k, averaged
 *   All@k  1 when all of them are in the top k
 * per category, micro (over questions) and macro (over categories). A same-run scalar BM25
 * (the README's protocol: k1 0.9, b 0.4, lowercased Unicode letter/digit runs, NLTK stop
 * words, zero scores not retrieved, ties to the earlier segment, no decay) is the reference
 * every variant is compared with. Writes bench/results/quality.json.
 *
 * Env: BENCH_QUALITY_DIR (default bench/data/memdev).
 */
#include <math.h>
#include <utf8proc.h>

#include <jansson.h>

#include "bench/bench_util.h"
#include "core/embed.h"
#include "core/err.h"
#include "core/index.h"
#include "core/lexidx.h"
#include "core/lextok.h"
#include "core/scan.h"
#include "core/timefmt.h"

#define K_MAX   10
#define DAY_S   86400.0
#define N_CATS  6
#define EMB_DIM MEM_EMBED_DIM_DEFAULT

static const char *const cat_names[N_CATS] = {
    "knowledge-update",          "multi-session",       "single-session-assistant",
    "single-session-preference", "single-session-user", "temporal-reasoning"};
/* The README's reference figures (bm25_ref.py), R@5 and R@10 per category, then micro. */
static const double readme_r5[N_CATS + 1] = {0.922, 0.587, 0.600, 0.494, 0.906, 0.691, 0.744};
static const double readme_r10[N_CATS + 1] = {0.987, 0.745, 0.800, 0.578, 0.969, 0.782, 0.839};

typedef struct seg {
    char *id, *text;
    int64_t ts_ms;
} seg_t;

typedef struct conv {
    char *name;
    seg_t *segs;
    size_t n, cap;
    /* its question */
    char *question;
    int cat;
    int64_t asked_ms;
    char **ev;
    size_t n_ev;
    /* built once */
    mem_index_t *idx;
    mem_lexidx_t *lex[4]; /* per tokenizer configuration */
} conv_t;

static conv_t *convs;
static size_t n_convs, cap_convs;

static char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d) exit(1);
    return d;
}

static conv_t *conv_get(const char *name)
{
    for (size_t i = n_convs; i-- > 0;) /* the corpus is grouped by conversation */
        if (strcmp(convs[i].name, name) == 0) return &convs[i];
    if (n_convs == cap_convs) {
        cap_convs = cap_convs ? cap_convs * 2 : 512;
        convs = realloc(convs, cap_convs * sizeof(*convs));
        if (!convs) exit(1);
    }
    conv_t *c = &convs[n_convs++];
    memset(c, 0, sizeof(*c));
    c->name = xstrdup(name);
    c->cat = -1;
    return c;
}

static int64_t parse_ts(const char *s)
{
    int64_t ms;
    if (mem_time_parse_rfc3339_z(s, "timestamp", &ms, NULL) != MEM_OK) {
        fprintf(stderr, "bench_quality: bad timestamp %s\n", s);
        exit(1);
    }
    return ms;
}

static void load(const char *dir)
{
    char path[1024], *line = NULL;
    size_t cap = 0;
    snprintf(path, sizeof path, "%s/corpus.jsonl", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "bench_quality: cannot open %s (run from the repository root)\n", path);
        exit(1);
    }
    while (getline(&line, &cap, f) > 0) {
        json_t *o = json_loads(line, 0, NULL);
        if (!o) exit(1);
        conv_t *c = conv_get(json_string_value(json_object_get(o, "conv")));
        if (c->n == c->cap) {
            c->cap = c->cap ? c->cap * 2 : 256;
            c->segs = realloc(c->segs, c->cap * sizeof(*c->segs));
            if (!c->segs) exit(1);
        }
        seg_t *s = &c->segs[c->n++];
        s->id = xstrdup(json_string_value(json_object_get(o, "id")));
        s->text = xstrdup(json_string_value(json_object_get(o, "text")));
        s->ts_ms = parse_ts(json_string_value(json_object_get(o, "timestamp")));
        json_decref(o);
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/queries.jsonl", dir);
    f = fopen(path, "r");
    if (!f) exit(1);
    while (getline(&line, &cap, f) > 0) {
        json_t *o = json_loads(line, 0, NULL);
        if (!o) exit(1);
        conv_t *c = conv_get(json_string_value(json_object_get(o, "conv")));
        c->question = xstrdup(json_string_value(json_object_get(o, "question")));
        const char *cat = json_string_value(json_object_get(o, "category"));
        for (int i = 0; i < N_CATS; i++)
            if (strcmp(cat, cat_names[i]) == 0) c->cat = i;
        c->asked_ms = parse_ts(json_string_value(json_object_get(o, "asked_at")));
        json_t *ev = json_object_get(o, "evidence");
        c->n_ev = json_array_size(ev);
        c->ev = calloc(c->n_ev, sizeof(*c->ev));
        for (size_t i = 0; i < c->n_ev; i++)
            c->ev[i] = xstrdup(json_string_value(json_array_get(ev, i)));
        json_decref(o);
    }
    fclose(f);
    free(line);
}

/* ---- the reference: bm25_ref.py in C ------------------------------------------------ */

/* Python's [^\W_]+ over text.lower(): runs of Unicode letters and numbers. */
typedef struct ref_doc {
    char **terms; /* distinct */
    int *tf;
    size_t n, len;
} ref_doc_t;

static void ref_add(ref_doc_t *d, const char *t, size_t len)
{
    d->len++;
    for (size_t i = 0; i < d->n; i++)
        if (strlen(d->terms[i]) == len && memcmp(d->terms[i], t, len) == 0) {
            d->tf[i]++;
            return;
        }
    d->terms = realloc(d->terms, (d->n + 1) * sizeof(*d->terms));
    d->tf = realloc(d->tf, (d->n + 1) * sizeof(*d->tf));
    d->terms[d->n] = strndup(t, len);
    d->tf[d->n++] = 1;
}

static void ref_tokenize(const char *s, ref_doc_t *d)
{
    memset(d, 0, sizeof(*d));
    char word[4096];
    size_t wl = 0, len = strlen(s), i = 0;
    for (;;) {
        utf8proc_int32_t cp = -1;
        utf8proc_ssize_t n = i < len ? utf8proc_iterate((const utf8proc_uint8_t *)s + i,
                                                        (utf8proc_ssize_t)(len - i), &cp)
                                     : 0;
        bool word_char = false;
        if (n > 0) {
            utf8proc_category_t c = utf8proc_category(cp);
            word_char = (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO) ||
                        (c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO);
        }
        if (word_char && wl + 4 < sizeof(word)) {
            wl += (size_t)utf8proc_encode_char(utf8proc_tolower(cp), (utf8proc_uint8_t *)word + wl);
        } else if (!word_char && wl > 0) {
            if (!mem_lextok_is_stopword(word, wl)) ref_add(d, word, wl);
            wl = 0;
        }
        if (n <= 0 && i >= len) break;
        i += n > 0 ? (size_t)n : 1;
    }
}

static void ref_free(ref_doc_t *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->terms[i]);
    free(d->terms);
    free(d->tf);
}

/* Top k positions by the reference BM25 (k1 0.9, b 0.4); returns how many. */
static size_t ref_rank(const conv_t *c, size_t *top, size_t k)
{
    ref_doc_t *docs = calloc(c->n, sizeof(*docs)), q;
    double *score = calloc(c->n, sizeof(*score)), total = 0;
    for (size_t i = 0; i < c->n; i++) {
        ref_tokenize(c->segs[i].text, &docs[i]);
        total += (double)docs[i].len;
    }
    double n = (double)c->n, avg = total / n;
    ref_tokenize(c->question, &q);
    for (size_t t = 0; t < q.n; t++) {
        double df = 0;
        for (size_t i = 0; i < c->n; i++)
            for (size_t j = 0; j < docs[i].n; j++)
                if (strcmp(docs[i].terms[j], q.terms[t]) == 0) df++;
        double idf = log(1 + (n - df + 0.5) / (df + 0.5));
        for (size_t i = 0; i < c->n; i++)
            for (size_t j = 0; j < docs[i].n; j++)
                if (strcmp(docs[i].terms[j], q.terms[t]) == 0) {
                    double f = docs[i].tf[j];
                    score[i] +=
                        idf * f * 1.9 / (f + 0.9 * (1 - 0.4 + 0.4 * (double)docs[i].len / avg));
                }
    }
    size_t got = 0;
    for (size_t r = 0; r < k; r++) { /* selection: highest score, earlier segment on ties */
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < c->n; i++) {
            if (!(score[i] > 0)) continue;
            bool used = false;
            for (size_t u = 0; u < got; u++)
                used |= top[u] == i;
            if (!used && (best == SIZE_MAX || score[i] > score[best])) best = i;
        }
        if (best == SIZE_MAX) break;
        top[got++] = best;
    }
    for (size_t i = 0; i < c->n; i++)
        ref_free(&docs[i]);
    ref_free(&q);
    free(docs);
    free(score);
    return got;
}

/* ---- variants ------------------------------------------------------------------------- */

enum { TOK_STOP, TOK_STOP_STEM, TOK_STEM, TOK_PLAIN, N_TOKS };
static const mem_lextok_opts_t tok_opts[N_TOKS] = {
    {.stopwords = true, .stem = false},
    {.stopwords = true, .stem = true},
    {.stopwords = false, .stem = true},
    {.stopwords = false, .stem = false},
};
static mem_lextok_t *toks[N_TOKS];

typedef struct variant {
    const char *group; /* the table it belongs to */
    const char *name;
    bool reference;
    int tok;
    mem_scan_match_t match;
    double text_weight;
    mem_lexparams_t lex;
    double half_life_d;
    double origin_shift_d; /* ask this many days after asked_at (as_of later) */
    bool supersede;        /* knowledge-update: older evidence superseded by the newest */
    /* results */
    double r5[N_CATS], r10[N_CATS], all5[N_CATS], all10[N_CATS];
    int n[N_CATS];
    /* knowledge-update: is the newest evidence turn (the current fact) / an older one in
     * the top k */
    int ku_new1, ku_new5, ku_old5, ku_n;
} variant_t;

#define V(g, nm, tk, m, tw, k1_, b_, gw, hl)                                                       \
    {                                                                                              \
        .group = g, .name = nm, .tok = tk, .match = m, .text_weight = tw,                          \
        .lex = {.k1 = k1_, .b = b_, .gram_weight = gw}, .half_life_d = hl                          \
    }
#define TEXT   MEM_SCAN_MATCH_TEXT
#define VECTOR MEM_SCAN_MATCH_VECTOR
#define HYBRID MEM_SCAN_MATCH_HYBRID
#define TW     MEM_SCAN_TEXT_WEIGHT_BUILTIN
#define SS     TOK_STOP_STEM
static variant_t variants[] = {
    {.group = "reference",
     .name = "BM25 reference (k1 0.9, b 0.4, NLTK stop words)",
     .reference = true},
    /* text match, words: which tokenizer */
    V("tokenizer", "text: stop words", TOK_STOP, TEXT, 0, 0.9, 0.4, 0, 0),
    V("tokenizer", "text: stop words + stemming (default)", SS, TEXT, 0, 0.9, 0.4, 0, 0),
    V("tokenizer", "text: stemming, no stop words", TOK_STEM, TEXT, 0, 0.9, 0.4, 0, 0),
    V("tokenizer", "text: neither", TOK_PLAIN, TEXT, 0, 0.9, 0.4, 0, 0),
    /* BM25 parameters */
    V("bm25", "text k1 0.9 b 0.4 (Anserini's; default)", SS, TEXT, 0, 0.9, 0.4, 0, 0),
    V("bm25", "text k1 1.2 b 0.75 (Lucene's)", SS, TEXT, 0, 1.2, 0.75, 0, 0),
    V("bm25", "text k1 1.2 b 0.4", SS, TEXT, 0, 1.2, 0.4, 0, 0),
    V("bm25", "text k1 0.9 b 0.75", SS, TEXT, 0, 0.9, 0.75, 0, 0),
    /* match modes over the built-in embedder's vectors */
    V("match", "vector (built-in embedder, 256 dims)", SS, VECTOR, 0, 0.9, 0.4, 0, 0),
    /* the fusion weight, swept: how flat the optimum is */
    V("match", "hybrid text_weight 0.5", SS, HYBRID, 0.5, 0.9, 0.4, 0, 0),
    V("match", "hybrid text_weight 0.6", SS, HYBRID, 0.6, 0.9, 0.4, 0, 0),
    V("match", "hybrid text_weight 0.7", SS, HYBRID, 0.7, 0.9, 0.4, 0, 0),
    V("match", "hybrid text_weight 0.8", SS, HYBRID, 0.8, 0.9, 0.4, 0, 0),
    V("match", "hybrid text_weight 0.85", SS, HYBRID, 0.85, 0.9, 0.4, 0, 0),
    V("match", "hybrid text_weight 0.9 (default)", SS, HYBRID, 0.9, 0.9, 0.4, 0, 0),
    V("match", "hybrid text_weight 0.95", SS, HYBRID, 0.95, 0.9, 0.4, 0, 0),
    V("match", "hybrid text_weight 0.98", SS, HYBRID, 0.98, 0.9, 0.4, 0, 0),
    V("match", "hybrid text_weight 1 (text ranking)", SS, HYBRID, 1.0, 0.9, 0.4, 0, 0),
    V("match", "text", SS, TEXT, 0, 0.9, 0.4, 0, 0),
    /* the optional trigram field */
    V("trigrams", "text, gram_weight 0.3", SS, TEXT, 0, 0.9, 0.4, 0.3, 0),
    V("trigrams", "text, gram_weight 0.5", SS, TEXT, 0, 0.9, 0.4, 0.5, 0),
    V("trigrams", "text, gram_weight 0.7", SS, TEXT, 0, 0.9, 0.4, 0.7, 0),
    V("trigrams", "text, gram_weight 1", SS, TEXT, 0, 0.9, 0.4, 1.0, 0),
    V("trigrams", "hybrid 0.9, gram_weight 0.5", SS, HYBRID, TW, 0.9, 0.4, 0.5, 0),
    /* time, on the default (hybrid) */
    V("time", "hybrid, half_life 0 (default)", SS, HYBRID, TW, 0.9, 0.4, 0, 0),
    V("time", "hybrid, half_life 365d", SS, HYBRID, TW, 0.9, 0.4, 0, 365),
    V("time", "hybrid, half_life 90d", SS, HYBRID, TW, 0.9, 0.4, 0, 90),
    V("time", "hybrid, half_life 30d", SS, HYBRID, TW, 0.9, 0.4, 0, 30),
    {.group = "time",
     .name = "hybrid, half_life 90d, as_of asked_at + 365d",
     .tok = SS,
     .match = HYBRID,
     .text_weight = TW,
     .lex = {.k1 = 0.9, .b = 0.4},
     .half_life_d = 90,
     .origin_shift_d = 365},
    {.group = "time",
     .name = "hybrid, older KU evidence superseded",
     .tok = SS,
     .match = HYBRID,
     .text_weight = TW,
     .lex = {.k1 = 0.9, .b = 0.4},
     .supersede = true},
    V("time", "text, half_life 365d", SS, TEXT, 0, 0.9, 0.4, 0, 365),
};
#define N_VARIANTS (sizeof(variants) / sizeof(variants[0]))

static void build(conv_t *c)
{
    if (mem_index_new(EMB_DIM, &c->idx) != MEM_OK) exit(1);
    for (int t = 0; t < N_TOKS; t++)
        if (mem_lexidx_new(true, &c->lex[t]) != MEM_OK) exit(1);
    float vec[EMB_DIM];
    mem_lexdoc_t doc = {0};
    for (size_t i = 0; i < c->n; i++) {
        seg_t *s = &c->segs[i];
        size_t len = strlen(s->text), pos;
        if (mem_embed_text(s->text, len, vec, EMB_DIM, NULL) != MEM_OK) {
            memset(vec, 0, sizeof vec);
            vec[0] = 1;
        }
        if (mem_index_append(c->idx, s->id, strlen(s->id), s->ts_ms, (int64_t)i + 1, vec, 0, 0,
                             &pos) != MEM_OK)
            exit(1);
        for (int t = 0; t < N_TOKS; t++) {
            size_t lp;
            if (mem_lexdoc_build(&doc, toks[t], s->text, len, true) != MEM_OK ||
                mem_lexidx_append(c->lex[t], &doc, true, &lp) != MEM_OK || lp != pos)
                exit(1);
        }
    }
    mem_index_publish(c->idx, mem_index_rows(c->idx));
    for (int t = 0; t < N_TOKS; t++)
        mem_lexidx_publish(c->lex[t], c->n);
    mem_lexdoc_deinit(&doc);
}

/* Positions of the question's evidence; returns the newest (the latest fact). */
static size_t evidence_pos(const conv_t *c, size_t *pos)
{
    size_t newest = 0;
    for (size_t e = 0; e < c->n_ev; e++) {
        long p = mem_index_find(c->idx, c->ev[e], strlen(c->ev[e]));
        if (p < 0) exit(1);
        pos[e] = (size_t)p;
        if (pos[e] > newest) newest = pos[e];
    }
    return newest;
}

/* Knowledge-update questions as a client that marks updates would store them: the newest
 * evidence turn supersedes the older ones (on = false undoes it). */
static void supersede_old(conv_t *c, int tok, bool on)
{
    size_t pos[16];
    if (c->cat != 0 || c->n_ev < 2 || c->n_ev > 16) return;
    size_t newest = evidence_pos(c, pos);
    for (size_t e = 0; e < c->n_ev; e++) {
        if (pos[e] == newest) continue;
        mem_index_set_flags(c->idx, pos[e], on ? MEM_ROW_SUPERSEDED : 0);
        mem_lexidx_set_active(c->lex[tok], pos[e], !on);
    }
}

static size_t scan_rank(conv_t *c, const variant_t *v, const mem_vec_ops_t *ops, size_t *top,
                        size_t k)
{
    float q[EMB_DIM];
    if (mem_embed_text(c->question, strlen(c->question), q, EMB_DIM, NULL) != MEM_OK) exit(1);
    if (v->supersede) supersede_old(c, v->tok, true);
    mem_lexq_t lq;
    if (mem_lexq_prepare(&lq, c->lex[v->tok], toks[v->tok], c->question, strlen(c->question),
                         &v->lex) != MEM_OK)
        exit(1);
    mem_scan_params_t p = {
        .query = q,
        .k = k,
        .origin_ms = c->asked_ms + (int64_t)(v->origin_shift_d * DAY_S * 1000.0),
        .decay = {.kind = MEM_DECAY_EXPONENTIAL,
                  .half_life_s = v->half_life_d * DAY_S,
                  .shape = 1,
                  .recency_bias = 1.0},
        .since_ms = INT64_MIN,
        .until_ms = INT64_MAX,
        .source = -1,
        .match = v->match,
        .lex = c->lex[v->tok],
        .text = &lq,
        .text_weight = v->text_weight,
    };
    mem_scan_hit_t hits[K_MAX];
    size_t n, scanned;
    mem_scan_run(c->idx, ops, &p, hits, &n, &scanned);
    for (size_t i = 0; i < n; i++)
        top[i] = hits[i].pos;
    mem_lexq_deinit(&lq);
    if (v->supersede) supersede_old(c, v->tok, false);
    return n;
}

static void score(variant_t *v, const conv_t *c, const size_t *top, size_t n)
{
    size_t in5 = 0, in10 = 0;
    for (size_t e = 0; e < c->n_ev; e++)
        for (size_t i = 0; i < n; i++)
            if (strcmp(c->segs[top[i]].id, c->ev[e]) == 0) {
                in5 += i < 5;
                in10 += i < 10;
            }
    int k = c->cat;
    if (k == 0 && c->n_ev >= 2 && c->n_ev <= 16) {
        size_t pos[16], newest = evidence_pos(c, pos);
        bool old5 = false;
        for (size_t i = 0; i < n; i++) {
            if (top[i] == newest) {
                v->ku_new1 += i == 0;
                v->ku_new5 += i < 5;
            } else {
                for (size_t e = 0; e < c->n_ev; e++)
                    old5 |= i < 5 && top[i] == pos[e];
            }
        }
        v->ku_old5 += old5;
        v->ku_n++;
    }
    v->r5[k] += (double)in5 / (double)c->n_ev;
    v->r10[k] += (double)in10 / (double)c->n_ev;
    v->all5[k] += in5 == c->n_ev;
    v->all10[k] += in10 == c->n_ev;
    v->n[k]++;
}

typedef struct summary {
    double r5[N_CATS + 2], r10[N_CATS + 2], all5[N_CATS + 2],
        all10[N_CATS + 2]; /* + micro, macro */
} summary_t;

static summary_t summarise(const variant_t *v)
{
    summary_t s = {0};
    int total = 0;
    for (int k = 0; k < N_CATS; k++) {
        double n = v->n[k] ? v->n[k] : 1;
        s.r5[k] = v->r5[k] / n;
        s.r10[k] = v->r10[k] / n;
        s.all5[k] = v->all5[k] / n;
        s.all10[k] = v->all10[k] / n;
        s.r5[N_CATS] += v->r5[k];
        s.r10[N_CATS] += v->r10[k];
        s.all5[N_CATS] += v->all5[k];
        s.all10[N_CATS] += v->all10[k];
        s.r5[N_CATS + 1] += s.r5[k] / N_CATS;
        s.r10[N_CATS + 1] += s.r10[k] / N_CATS;
        s.all5[N_CATS + 1] += s.all5[k] / N_CATS;
        s.all10[N_CATS + 1] += s.all10[k] / N_CATS;
        total += v->n[k];
    }
    s.r5[N_CATS] /= total;
    s.r10[N_CATS] /= total;
    s.all5[N_CATS] /= total;
    s.all10[N_CATS] /= total;
    return s;
}

static const char *short_cat(int k)
{
    static const char *const s[N_CATS + 2] = {"KU",  "MS", "SSA",   "SSP",
                                              "SSU", "TR", "micro", "macro"};
    return s[k];
}

int main(void)
{
    const mem_vec_ops_t *ops = bench_ops();
    bench_print_machine("quality (memdev)", ops);
    const char *dir = getenv("BENCH_QUALITY_DIR");
    load(dir && *dir ? dir : "bench/data/memdev");
    for (int t = 0; t < N_TOKS; t++)
        if (mem_lextok_new(&tok_opts[t], &toks[t]) != MEM_OK) return 1;
    size_t n_segs = 0;
    uint64_t t0 = bench_now_ns();
    for (size_t i = 0; i < n_convs; i++) {
        build(&convs[i]);
        n_segs += convs[i].n;
    }
    double build_s = (double)(bench_now_ns() - t0) / 1e9;
    printf("%zu conversations, %zu segments, built in %.2f s\n", n_convs, n_segs, build_s);
    for (size_t i = 0; i < n_convs; i++) {
        conv_t *c = &convs[i];
        if (c->cat < 0) continue;
        mem_index_publish(c->idx, mem_index_rows(c->idx));
        for (size_t v = 0; v < N_VARIANTS; v++) {
            size_t top[K_MAX], n;
            n = variants[v].reference ? ref_rank(c, top, K_MAX)
                                      : scan_rank(c, &variants[v], ops, top, K_MAX);
            score(&variants[v], c, top, n);
        }
    }
    summary_t ref = summarise(&variants[0]);
    printf("reference R@10 (micro) %.3f, README %.3f; R@5 %.3f, README %.3f\n", ref.r10[N_CATS],
           readme_r10[N_CATS], ref.r5[N_CATS], readme_r5[N_CATS]);
    const char *group = "";
    for (size_t v = 0; v < N_VARIANTS; v++) {
        bool time = strcmp(variants[v].group, "time") == 0;
        if (strcmp(group, variants[v].group) != 0) {
            group = variants[v].group;
            printf("\n-- %s: R@10 per category, micro, macro; R@5 and All@10 micro%s\n", group,
                   time ? "; knowledge-update: newest evidence at rank 1 / in the top 5, an older "
                          "one in the top 5"
                        : "");
            printf("%-46s", "variant");
            for (int k = 0; k < N_CATS + 2; k++)
                printf(" %6s", short_cat(k));
            printf("    R@5 All@10%s\n", time ? "  new@1  new@5  old@5" : "");
        }
        summary_t s = summarise(&variants[v]);
        printf("%-46.46s", variants[v].name);
        for (int k = 0; k < N_CATS + 2; k++)
            printf(" %6.3f", s.r10[k]);
        printf(" %6.3f %6.3f", s.r5[N_CATS], s.all10[N_CATS]);
        if (time) {
            double kn = variants[v].ku_n ? variants[v].ku_n : 1;
            printf(" %6.3f %6.3f %6.3f", variants[v].ku_new1 / kn, variants[v].ku_new5 / kn,
                   variants[v].ku_old5 / kn);
        }
        printf("\n");
    }
    FILE *f = fopen("bench/results/quality.json.tmp", "w");
    if (!f) return 0;
    fprintf(f, "{\n  \"suite\": \"quality\",\n");
    bench_json_machine(f, ops);
    fprintf(f,
            ",\n  \"data\": \"memdev (LongMemEval_S user turns)\",\n  \"conversations\": %zu,\n"
            "  \"segments\": %zu,\n  \"build_s\": %.2f,\n  \"readme_reference\": {\"r5\": %.3f, "
            "\"r10\": %.3f},\n  \"variants\": [\n",
            n_convs, n_segs, build_s, readme_r5[N_CATS], readme_r10[N_CATS]);
    for (size_t v = 0; v < N_VARIANTS; v++) {
        const variant_t *x = &variants[v];
        summary_t s = summarise(x);
        fprintf(f, "    {\"group\": \"%s\", \"name\": \"%s\", \"per_category\": {", x->group,
                x->name);
        for (int k = 0; k < N_CATS + 2; k++)
            fprintf(f, "%s\"%s\": {\"r5\": %.4f, \"r10\": %.4f, \"all5\": %.4f, \"all10\": %.4f}",
                    k ? ", " : "",
                    k < N_CATS    ? cat_names[k]
                    : k == N_CATS ? "micro"
                                  : "macro",
                    s.r5[k], s.r10[k], s.all5[k], s.all10[k]);
        fprintf(f, "}");
        if (x->ku_n)
            fprintf(f,
                    ", \"knowledge_update\": {\"n\": %d, \"newest_at_1\": %d, \"newest_in_5\": "
                    "%d, \"older_in_5\": %d}",
                    x->ku_n, x->ku_new1, x->ku_new5, x->ku_old5);
        fprintf(f, "}%s\n", v + 1 < N_VARIANTS ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    fclose(f);
    rename("bench/results/quality.json.tmp", "bench/results/quality.json");
    return 0;
}
