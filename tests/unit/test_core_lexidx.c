/* test_core_lexidx.c - the lexical index: terms and trigrams, statistics exact under every
 * write kind, BM25 equal to a brute-force oracle, block scorer and bounds, vacuum
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/err.h"
#include "core/lexidx.h"
#include "core/lextok.h"
#include "tests/unit/test_util.h"

static uint64_t seed;
static mem_lextok_t *tk;

/* ---- the oracle: everything recomputed from the texts ---------------------------------- */

#define MAX_TERMS 4096

typedef struct bag { /* distinct terms of one field of one row, with counts */
    char (*t)[24];
    uint32_t *tf;
    size_t n, cap;
    uint32_t len;
} bag_t;

static void bag_add(bag_t *b, const char *t, size_t len)
{
    assert_true(len < 24);
    b->len++;
    for (size_t i = 0; i < b->n; i++)
        if (strlen(b->t[i]) == len && memcmp(b->t[i], t, len) == 0) {
            b->tf[i]++;
            return;
        }
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 16;
        b->t = realloc(b->t, b->cap * sizeof(*b->t));
        b->tf = realloc(b->tf, b->cap * sizeof(*b->tf));
    }
    memcpy(b->t[b->n], t, len);
    b->t[b->n][len] = 0;
    b->tf[b->n++] = 1;
}

static int word_cb(const char *t, size_t len, void *ud)
{
    bag_t *b = ud;
    bag_add(b, t, len);
    return 0;
}

/* Trigrams of "^w$" over code points, a second implementation: a code point starts at
 * every byte that is not a UTF-8 continuation byte. */
static void add_grams(bag_t *g, const char *w, size_t len, uint32_t times)
{
    char buf[80];
    size_t n = 0, starts[80], k = 0;
    buf[n++] = '^';
    memcpy(buf + n, w, len);
    n += len;
    buf[n++] = '$';
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)buf[i] & 0xC0) != 0x80) starts[k++] = i;
    starts[k] = n;
    for (size_t i = 0; i + 3 <= k; i++)
        for (uint32_t x = 0; x < times; x++)
            bag_add(g, buf + starts[i], starts[i + 3] - starts[i]);
}

typedef struct orow {
    bool has_text, active, deleted;
    bag_t f[2];
} orow_t;

static bool grams_on = true; /* the index under test keeps the trigram field */

static void orow_set(orow_t *r, const char *text)
{
    memset(r, 0, sizeof(*r));
    if (!text) return;
    r->has_text = true;
    assert_int_equal(mem_lextok_run(tk, text, strlen(text), word_cb, &r->f[0]), 0);
    for (size_t i = 0; grams_on && i < r->f[0].n; i++)
        add_grams(&r->f[1], r->f[0].t[i], strlen(r->f[0].t[i]), r->f[0].tf[i]);
}

static void orow_free(orow_t *r)
{
    for (int f = 0; f < 2; f++) {
        free(r->f[f].t);
        free(r->f[f].tf);
    }
}

static uint32_t bag_tf(const bag_t *b, const char *t)
{
    for (size_t i = 0; i < b->n; i++)
        if (strcmp(b->t[i], t) == 0) return b->tf[i];
    return 0;
}

typedef struct oracle {
    orow_t *rows;
    size_t n, published;
} oracle_t;

static bool counted(const oracle_t *o, size_t i)
{
    const orow_t *r = &o->rows[i];
    return i < o->published && r->has_text && r->active && !r->deleted;
}

static double oracle_df(const oracle_t *o, int f, const char *t)
{
    double df = 0;
    for (size_t i = 0; i < o->n; i++)
        df += counted(o, i) && bag_tf(&o->rows[i].f[f], t) > 0;
    return df;
}

/* text(d) per the formula of lexidx.h, from scratch: the query's statistics first. */
typedef struct oquery {
    orow_t q;
    double *idf[2], sum_idf[2], avg[2], weight[2];
} oquery_t;

static void oquery_prepare(oquery_t *oq, const oracle_t *o, const char *query,
                           const mem_lexparams_t *lp)
{
    orow_set(&oq->q, query);
    double n_docs = 0, total[2] = {0, 0};
    for (size_t i = 0; i < o->n; i++)
        if (counted(o, i)) {
            n_docs++;
            total[0] += o->rows[i].f[0].len;
            total[1] += o->rows[i].f[1].len;
        }
    oq->weight[1] = grams_on ? lp->gram_weight : 0;
    oq->weight[0] = 1 - oq->weight[1];
    for (int f = 0; f < 2; f++) {
        oq->avg[f] = (n_docs > 0 && total[f] > 0) ? total[f] / n_docs : 1.0;
        oq->idf[f] = calloc(oq->q.f[f].n + 1, sizeof(double));
        oq->sum_idf[f] = 0;
        /* query terms count once each, so the bag's counts are ignored */
        for (size_t t = 0; t < oq->q.f[f].n; t++) {
            double df = oracle_df(o, f, oq->q.f[f].t[t]);
            oq->idf[f][t] = log(1 + (n_docs - df + 0.5) / (df + 0.5));
            oq->sum_idf[f] += oq->idf[f][t];
        }
    }
}

static double oquery_score(const oquery_t *oq, const oracle_t *o, const mem_lexparams_t *lp,
                           size_t pos)
{
    double s = 0;
    bool any_word = false; /* only rows holding a query word are candidates */
    for (size_t t = 0; t < oq->q.f[0].n; t++)
        any_word |= bag_tf(&o->rows[pos].f[0], oq->q.f[0].t[t]) > 0;
    if (!any_word) return 0;
    for (int f = 0; f < 2; f++) {
        if (!(oq->weight[f] > 0)) continue;
        for (size_t t = 0; t < oq->q.f[f].n; t++) {
            double tf = bag_tf(&o->rows[pos].f[f], oq->q.f[f].t[t]);
            if (tf == 0) continue;
            double dl = o->rows[pos].f[f].len;
            s += oq->weight[f] * oq->idf[f][t] / oq->sum_idf[f] * tf /
                 (tf + lp->k1 * (1 - lp->b + lp->b * dl / oq->avg[f]));
        }
    }
    return s;
}

static void oquery_free(oquery_t *oq)
{
    orow_free(&oq->q);
    free(oq->idf[0]);
    free(oq->idf[1]);
}

/* ---- checks ---------------------------------------------------------------------------- */

/* N, lengths, and df of the terms of every row (full) or of a few rows (a sample). */
static void check_stats(const mem_lexidx_t *lx, const oracle_t *o, bool full, const char *when)
{
    mem_lexidx_stats_t st;
    mem_lexidx_get_stats(lx, &st);
    uint64_t n_docs = 0, total[2] = {0, 0};
    for (size_t i = 0; i < o->n; i++)
        if (counted(o, i)) {
            n_docs++;
            total[0] += o->rows[i].f[0].len;
            total[1] += o->rows[i].f[1].len;
        }
    if (st.n_docs != n_docs || st.total_len[0] != total[0] || st.total_len[1] != total[1] ||
        st.n_rows != o->n)
        fail_msg("%s (seed %llu): N %llu/%llu, total %llu/%llu, %llu/%llu, rows %zu/%zu", when,
                 (unsigned long long)seed, (unsigned long long)st.n_docs,
                 (unsigned long long)n_docs, (unsigned long long)st.total_len[0],
                 (unsigned long long)total[0], (unsigned long long)st.total_len[1],
                 (unsigned long long)total[1], st.n_rows, o->n);
    assert_true(st.bytes > 0);
    /* df of every term any row holds */
    for (size_t i = 0; i < o->n; i++)
        for (int f = 0; f < 2; f++) {
            if (!full && i % (o->n / 4 + 1) != 0) continue;
            for (size_t t = 0; t < o->rows[i].f[f].n; t++) {
                const char *term = o->rows[i].f[f].t[t];
                uint32_t got = mem_lexidx_df(lx, f, term, strlen(term));
                if ((double)got != oracle_df(o, f, term))
                    fail_msg("%s (seed %llu): df(%d, %s) = %u, want %.0f", when,
                             (unsigned long long)seed, f, term, got, oracle_df(o, f, term));
            }
        }
}

/* Every row's score against the oracle; the block scorer against the row scorer (bit for
 * bit); the bounds above every score. Returns the number of rows scoring > 0. */
static size_t check_query(const mem_lexidx_t *lx, const oracle_t *o, const char *query,
                          const mem_lexparams_t *lp, const char *when)
{
    mem_lexq_t q;
    assert_int_equal(mem_lexq_prepare(&q, lx, tk, query, strlen(query), lp), MEM_OK);
    oquery_t oq;
    oquery_prepare(&oq, o, query, lp);
    size_t nb = (o->n + MEM_LEXIDX_BLOCK_ROWS - 1) / MEM_LEXIDX_BLOCK_ROWS, positive = 0;
    double *ub = calloc(nb + 1, sizeof(*ub));
    mem_lexidx_block_bounds(lx, &q, ub, nb);
    for (size_t b = 0; b < nb; b++) {
        uint32_t rows[MEM_LEXIDX_BLOCK_ROWS], rows2[MEM_LEXIDX_BLOCK_ROWS];
        double scores[MEM_LEXIDX_BLOCK_ROWS], scores2[MEM_LEXIDX_BLOCK_ROWS];
        size_t n, n2;
        mem_lexidx_score_block(lx, &q, b, -HUGE_VAL, rows, &n, scores);
        /* with a threshold, a row may be left out only when it scores below it */
        double need = 0.3 * ub[b];
        mem_lexidx_score_block(lx, &q, b, need, rows2, &n2, scores2);
        for (size_t i = 0, j = 0; i < n; i++) {
            if (j < n2 && rows2[j] == rows[i]) {
                assert_true(scores2[rows[i]] == scores[rows[i]]);
                j++;
            } else if (scores[rows[i]] >= need) {
                fail_msg("%s: row %u (%.17g) left out below need %.17g", when, rows[i],
                         scores[rows[i]], need);
            }
        }
        size_t next = 0;
        for (size_t r = 0; r < MEM_LEXIDX_BLOCK_ROWS; r++) {
            size_t pos = b * MEM_LEXIDX_BLOCK_ROWS + r;
            if (pos >= o->n) break;
            double got = mem_lexidx_score_row(lx, &q, pos);
            double want = oquery_score(&oq, o, lp, pos);
            if (!(fabs(got - want) <= 1e-12 * (1 + fabs(want))))
                fail_msg("%s (seed %llu): \"%s\" pos %zu: %.17g, oracle %.17g", when,
                         (unsigned long long)seed, query, pos, got, want);
            positive += got > 0;
            bool listed = next < n && rows[next] == r;
            if (listed) {
                if (scores[r] != got)
                    fail_msg("%s: block score of pos %zu %.17g != row score %.17g", when, pos,
                             scores[r], got);
                next++;
            } else if (got > 0) {
                fail_msg("%s: pos %zu scores %.17g but the block scorer skipped it", when, pos,
                         got);
            }
            if (got > ub[b])
                fail_msg("%s: pos %zu scores %.17g above its bound %.17g", when, pos, got, ub[b]);
        }
        assert_int_equal(next, n); /* every listed row was seen, in ascending order */
    }
    free(ub);
    oquery_free(&oq);
    mem_lexq_deinit(&q);
    return positive;
}

static const char *const vocab[] = {
    "password", "passwords", "rotate", "rotated",     "rotation", "deploy",   "deployed", "server",
    "Berlin",   "berlin",    "café",   "cafe",        "résumé",   "the",      "is",       "I",
    "2024",     "東京",      "photo",  "photography", "japan",    "japanese", "x",        "running",
};
#define N_VOCAB (sizeof(vocab) / sizeof(vocab[0]))

static void random_text(char *buf, size_t cap, uint64_t *s)
{
    size_t n = rng_next(s) % 12, len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n; i++) {
        const char *t = vocab[rng_next(s) % (1 + rng_next(s) % N_VOCAB)];
        size_t tl = strlen(t);
        if (len + tl + 2 >= cap) break;
        memcpy(buf + len, t, tl);
        len += tl;
        buf[len++] = ' ';
        buf[len] = 0;
    }
}

/* ---- tests ----------------------------------------------------------------------------- */

static void test_doc_terms_and_grams(void **state)
{
    mem_lexdoc_t doc = {0};
    const char *t = "Running runs, RAN run! the x";
    assert_int_equal(mem_lexdoc_build(&doc, tk, t, strlen(t), false), MEM_OK);
    assert_int_equal(doc.f[MEM_LEXIDX_WORDS].n_terms, 3);
    assert_int_equal(doc.f[MEM_LEXIDX_GRAMS].n_terms, 0);
    assert_int_equal(mem_lexdoc_build(&doc, tk, t, strlen(t), true), MEM_OK);
    const mem_lexdoc_field_t *w = &doc.f[MEM_LEXIDX_WORDS], *g = &doc.f[MEM_LEXIDX_GRAMS];
    assert_int_equal(w->n_terms, 3); /* run (3x), ran, x; "the" is a stop word */
    assert_int_equal(w->len, 5);
    /* grams: ^ru run un$ (3x each), ^ra ran an$, ^x$ */
    assert_int_equal(g->n_terms, 7);
    assert_int_equal(g->len, 3 * 3 + 3 + 1);
    /* rebuilding resets; empty text gives no terms */
    assert_int_equal(mem_lexdoc_build(&doc, tk, "", 0, true), MEM_OK);
    assert_int_equal(doc.f[0].n_terms, 0);
    assert_int_equal(doc.f[1].n_terms, 0);
    assert_int_equal(doc.f[0].len, 0);
    mem_lexdoc_deinit(&doc);
    mem_lexdoc_deinit(&doc); /* twice is fine */
}

static void test_bm25_by_hand(void **state)
{
    /* three rows, words only, k1 1.2 b 0.75: every number written out */
    mem_lexidx_t *lx;
    assert_int_equal(mem_lexidx_new(false, &lx), MEM_OK);
    const char *texts[] = {"alpha beta", "alpha alpha gamma delta", "beta"};
    mem_lexdoc_t doc = {0};
    for (size_t i = 0; i < 3; i++) {
        size_t pos;
        assert_int_equal(mem_lexdoc_build(&doc, tk, texts[i], strlen(texts[i]), false), MEM_OK);
        assert_int_equal(mem_lexidx_append(lx, &doc, true, &pos), MEM_OK);
        assert_int_equal(pos, i);
    }
    mem_lexidx_publish(lx, 3);
    mem_lexparams_t lp = {.k1 = 1.2, .b = 0.75, .gram_weight = 0};
    mem_lexq_t q;
    assert_int_equal(mem_lexq_prepare(&q, lx, tk, "alpha beta", 10, &lp), MEM_OK);
    double avg = 7.0 / 3.0;
    double idf_a = log(1 + (3 - 2 + 0.5) / (2 + 0.5)), idf_b = idf_a; /* both df 2 */
    double sum = idf_a + idf_b;
    double k0 = 1.2 * (1 - 0.75 + 0.75 * 2 / avg), k1 = 1.2 * (1 - 0.75 + 0.75 * 4 / avg),
           k2 = 1.2 * (1 - 0.75 + 0.75 * 1 / avg);
    double want0 = idf_a / sum * 1 / (1 + k0) + idf_b / sum * 1 / (1 + k0);
    double want1 = idf_a / sum * 2 / (2 + k1);
    double want2 = idf_b / sum * 1 / (1 + k2);
    assert_true(fabs(mem_lexidx_score_row(lx, &q, 0) - want0) < 1e-15);
    assert_true(fabs(mem_lexidx_score_row(lx, &q, 1) - want1) < 1e-15);
    assert_true(fabs(mem_lexidx_score_row(lx, &q, 2) - want2) < 1e-15);
    assert_int_equal(mem_lexq_known_terms(&q), 2);
    mem_lexq_deinit(&q);
    /* an unknown term still counts in the divisor: scores drop, order stays */
    assert_int_equal(mem_lexq_prepare(&q, lx, tk, "alpha beta zeta", 15, &lp), MEM_OK);
    double idf_z = log(1 + (3 + 0.5) / 0.5);
    assert_true(fabs(mem_lexidx_score_row(lx, &q, 0) - want0 * sum / (sum + idf_z)) < 1e-15);
    assert_int_equal(mem_lexq_known_terms(&q), 2);
    mem_lexq_deinit(&q);
    /* a query of stop words only has no terms: nothing scores */
    assert_int_equal(mem_lexq_prepare(&q, lx, tk, "what is it", 10, &lp), MEM_OK);
    assert_int_equal(q.f[0].n, 0);
    assert_true(mem_lexidx_score_row(lx, &q, 0) == 0.0);
    mem_lexq_deinit(&q);
    /* k1 = 0: a present term scores its whole weight */
    lp.k1 = 0;
    assert_int_equal(mem_lexq_prepare(&q, lx, tk, "alpha beta", 10, &lp), MEM_OK);
    assert_true(mem_lexidx_score_row(lx, &q, 0) == 1.0);
    mem_lexq_deinit(&q);
    mem_lexdoc_deinit(&doc);
    mem_lexidx_free(lx);
}

/* Random appends (with and without text, active or not), publications, supersedes and
 * their undoing, archives, deletes and vacuums: statistics and scores stay those of the
 * oracle after every step. */
static void test_statistics_under_every_write_kind(void **state)
{
    mem_lexdoc_t doc = {0};
    char buf[256];
    for (unsigned round = 0; round < 40; round++) {
        uint64_t s = seed * 31 + round;
        mem_lexidx_t *lx;
        grams_on = round % 3 != 2;
        assert_int_equal(mem_lexidx_new(grams_on, &lx), MEM_OK);
        assert_int_equal(mem_lexidx_has_grams(lx), grams_on);
        oracle_t o = {0};
        size_t cap = 0, steps = 20 + rng_next(&s) % (round % 4 == 0 ? 900 : 120);
        for (size_t step = 0; step < steps; step++) {
            unsigned op = (unsigned)(rng_next(&s) % 10);
            if (op < 5 || o.n == 0) { /* insert (import: possibly archived, without text) */
                if (o.n == cap) {
                    cap = cap ? cap * 2 : 64;
                    o.rows = realloc(o.rows, cap * sizeof(*o.rows));
                }
                bool with_text = rng_next(&s) % 8 != 0, active = rng_next(&s) % 6 != 0;
                random_text(buf, sizeof buf, &s);
                orow_set(&o.rows[o.n], with_text ? buf : NULL);
                o.rows[o.n].active = active;
                size_t pos;
                if (with_text)
                    assert_int_equal(mem_lexdoc_build(&doc, tk, buf, strlen(buf), grams_on),
                                     MEM_OK);
                assert_int_equal(mem_lexidx_append(lx, with_text ? &doc : NULL, active, &pos),
                                 MEM_OK);
                assert_int_equal(pos, o.n);
                o.n++;
            } else if (op < 7) { /* commit: publish a prefix */
                size_t upto = o.published + rng_next(&s) % (o.n - o.published + 1);
                mem_lexidx_publish(lx, upto);
                o.published = upto;
            } else if (op < 9) { /* supersede / archive, or back (a failed group's undo) */
                size_t pos = rng_next(&s) % o.n;
                bool active = rng_next(&s) % 3 == 0;
                mem_lexidx_set_active(lx, pos, active);
                o.rows[pos].active = active;
            } else { /* delete or purge */
                size_t pos = rng_next(&s) % o.n;
                mem_lexidx_remove(lx, pos);
                o.rows[pos].deleted = true;
            }
            if (step % 5 == 0 || step == steps - 1)
                check_stats(lx, &o, step == steps - 1, "after a write");
        }
        mem_lexparams_t lp = MEM_LEXPARAMS_DEFAULTS;
        for (int qi = 0; qi < 4; qi++) {
            random_text(buf, sizeof buf, &s);
            lp.gram_weight = qi == 0 ? 0.5 : qi == 1 ? 0.0 : qi == 2 ? 1.0 : 0.3;
            lp.b = qi == 3 ? 1.0 : 0.4;
            check_query(lx, &o, buf, &lp, "query");
        }
        /* vacuum: the same rows without the holes, everything published */
        mem_lexidx_t *vac;
        assert_int_equal(mem_lexidx_vacuum(lx, &vac), o.published == o.n ? MEM_OK : MEM_EINVAL);
        if (o.published != o.n) {
            mem_lexidx_publish(lx, o.n);
            o.published = o.n;
            assert_int_equal(mem_lexidx_vacuum(lx, &vac), MEM_OK);
        }
        oracle_t ov = {.rows = calloc(o.n + 1, sizeof(orow_t))};
        for (size_t i = 0; i < o.n; i++)
            if (!o.rows[i].deleted) ov.rows[ov.n++] = o.rows[i];
        ov.published = ov.n;
        check_stats(vac, &ov, true, "after a vacuum");
        mem_lexidx_stats_t a, b;
        mem_lexidx_get_stats(lx, &a);
        mem_lexidx_get_stats(vac, &b);
        assert_true(b.n_postings[0] <= a.n_postings[0] && b.n_postings[1] <= a.n_postings[1]);
        assert_true(b.n_terms[0] <= a.n_terms[0]);
        for (int qi = 0; qi < 3; qi++) {
            random_text(buf, sizeof buf, &s);
            mem_lexparams_t dp = MEM_LEXPARAMS_DEFAULTS;
            check_query(vac, &ov, buf, &dp, "query after a vacuum");
        }
        free(ov.rows);
        mem_lexidx_free(vac);
        for (size_t i = 0; i < o.n; i++)
            orow_free(&o.rows[i]);
        free(o.rows);
        mem_lexidx_free(lx);
    }
    mem_lexdoc_deinit(&doc);
}

static void test_query_term_cap_and_long_text(void **state)
{
    /* a row with 5000 distinct words; a query repeating 2000 distinct words: only the first
     * MEM_LEXIDX_QUERY_TERMS count */
    size_t cap = 5000 * 12;
    char *big = malloc(cap), *q = malloc(cap);
    size_t len = 0, ql = 0;
    for (int i = 0; i < 5000; i++) {
        len += (size_t)snprintf(big + len, cap - len, "w%d ", i);
        if (i < 2000) ql += (size_t)snprintf(q + ql, cap - ql, "w%d ", 1999 - i);
    }
    mem_lexidx_t *lx;
    assert_int_equal(mem_lexidx_new(true, &lx), MEM_OK);
    mem_lexdoc_t doc = {0};
    size_t pos;
    assert_int_equal(mem_lexdoc_build(&doc, tk, big, len, true), MEM_OK);
    assert_int_equal(doc.f[0].n_terms, 5000);
    assert_int_equal(mem_lexidx_append(lx, &doc, true, &pos), MEM_OK);
    mem_lexidx_publish(lx, 1);
    mem_lexparams_t lp = MEM_LEXPARAMS_DEFAULTS;
    lp.gram_weight = 0.5;
    mem_lexq_t lq;
    assert_int_equal(mem_lexq_prepare(&lq, lx, tk, q, ql, &lp), MEM_OK);
    assert_int_equal(lq.f[0].n, MEM_LEXIDX_QUERY_TERMS);
    assert_true(lq.f[1].n <= MEM_LEXIDX_QUERY_TERMS);
    double sc = mem_lexidx_score_row(lx, &lq, 0);
    assert_true(sc > 0 && sc <= 1);
    mem_lexq_deinit(&lq);
    mem_lexdoc_deinit(&doc);
    mem_lexidx_free(lx);
    free(big);
    free(q);
}

static int setup(void **state)
{
    mem_lextok_opts_t o = MEM_LEXTOK_DEFAULTS;
    return mem_lextok_new(&o, &tk);
}

static int teardown(void **state)
{
    mem_lextok_free(tk);
    return 0;
}

int main(int argc, char **argv)
{
    const char *env = getenv("MEM_TEST_SEED");
    seed = env ? strtoull(env, NULL, 10) : 20260908ull;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doc_terms_and_grams),
        cmocka_unit_test(test_bm25_by_hand),
        cmocka_unit_test(test_statistics_under_every_write_kind),
        cmocka_unit_test(test_query_term_cap_and_long_text),
    };
    if (argc > 1) cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, setup, teardown);
}
