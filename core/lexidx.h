/* lexidx.h - the lexical index of one namespace: terms, exact statistics, BM25 (SPEC section 6)
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Rows are the vector index's rows: the same positions, appended in the same
 * (time) order, a row without text included (it has no terms), so the time blocks of
 * MEM_LEXIDX_BLOCK_ROWS rows are the vector index's blocks and one set of block bounds
 * prunes both [PISA, tantivy: block-max indexes]. Per term: a posting list (row, term
 * frequency) in position order, cut at the block boundaries, each block piece with the
 * largest term frequency and the smallest row length in it, so a query bounds the BM25
 * contribution of every term in every block without reading its postings. Per row: its
 * length and its (term, frequency) list, which makes the statistics exact when a row
 * leaves or enters them, and is the scalar reference's data.
 *
 * Two fields, each with its own terms and statistics:
 *   words  the tokenizer's terms (core/lextok.h: folded, stop words out, stemmed)
 *   grams  the character trigrams of each word, with "^" and "$" marking its edges
 *          ("^ru", "run", "un$" for "run"; one, "^a$", for a one-letter word), counted as
 *          often as the word occurs. They give partial credit to forms the stemmer does
 *          not join ("japan"/"japanes", "photo"/"photographi") and to typos.
 *
 * Statistics (what idf and the average length are computed from) describe the active
 * rows: published (committed), with text, neither superseded, archived nor deleted: the
 * memory a default retrieve searches. N = how many, df(t) = how many of them hold t,
 * total = the sum of their lengths. They do not depend on a query's filters, so a row's
 * score is the same whatever else is visible, top-K is exact and min_score means the same
 * everywhere.
 *
 * Relevance. Per field, Lucene's BM25Similarity (idf = ln(1 + (N - df + 0.5) / (df + 0.5)),
 * term score idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))) divided by its maximum, the
 * sum of the query terms' idf (what an unbounded repetition of every query term would
 * score), then the two fields blended:
 *
 *   bm25n_f(d) = sum over t in Q_f, tf(t, d) > 0, of  idf(t) / S_f * tf / (tf + k1 * (1 - b + b *
 * dl_f(d) / avgdl_f)) text(d)    = (1 - g) * bm25n_words(d) + g * bm25n_grams(d)   if d holds a
 * word of Q = 0                                                otherwise
 *
 * Q_f = the query's distinct terms in field f (words, or the trigrams of its words), S_f =
 * the sum of their idf, avgdl_f = total_f / N (1 when N = 0), dl_f(d) = the row's terms in
 * field f, repeats counted, g = gram_weight. A row is a candidate only when it holds a
 * query word: trigrams refine the ranking of the rows a word finds, they do not find rows
 * of their own (that costs nothing in quality, docs/retrieval.md, and keeps the cost of a
 * query that of its words). text(d) is in [0, 1]: near 1 when d holds every query term
 * many times (1 with k1 = 0); a query term no active row holds (df 0) still counts in S_f.
 * Terms of a query beyond MEM_LEXIDX_QUERY_TERMS distinct ones per field are ignored;
 * term frequencies count up to 65535.
 *
 * Not thread-safe: the owner (storage/) guards it with the vector index's lock; scans
 * only read.
 */
#ifndef MEM_CORE_LEXIDX_H
#define MEM_CORE_LEXIDX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/index.h"
#include "core/lextok.h"

#define MEM_LEXIDX_BLOCK_ROWS  MEM_INDEX_BLOCK_ROWS
#define MEM_LEXIDX_QUERY_TERMS 1024 /* distinct terms of a query that count */

enum mem_lexidx_field { MEM_LEXIDX_WORDS = 0, MEM_LEXIDX_GRAMS = 1, MEM_LEXIDX_N_FIELDS = 2 };

/* Relevance parameters (docs/retrieval.md has the table that chose them). k1 in [0, 10],
 * b in [0, 1], gram_weight in [0, 1]. */
typedef struct mem_lexparams {
    double k1;          /* term-frequency saturation: 0 = a term counts once however often */
    double b;           /* length normalisation: 0 = none, 1 = full */
    double gram_weight; /* share of the trigram field in text(d); 0 = words only */
} mem_lexparams_t;
/* k1 0.9, b 0.4: Anserini's defaults (and the development reference's); no trigrams (they
 * add as much as the built-in embedder's cosine in hybrid match, at a cost: see
 * docs/retrieval.md). */
#define MEM_LEXPARAMS_DEFAULTS ((mem_lexparams_t){.k1 = 0.9, .b = 0.4, .gram_weight = 0.0})

/* ---- a tokenised row: what the writer builds before taking the index lock ---- */

typedef struct mem_lexdoc_field {
    size_t n_terms; /* distinct terms */
    uint32_t len;   /* terms counted with repeats: the row's dl in this field */
    /* private: term i is _bytes[_off[i] .. _off[i + 1]), seen _tf[i] times */
    char *_bytes;
    uint32_t *_off, *_tf;
    size_t _cap_bytes, _cap_off, _cap_tf;
    uint32_t *_slots; /* open-addressing map term -> i + 1 */
    size_t _cap_slots;
} mem_lexdoc_field_t;

typedef struct mem_lexdoc {
    mem_lexdoc_field_t f[MEM_LEXIDX_N_FIELDS];
} mem_lexdoc_t;

/* Tokenise text[0..len) with tk into doc (zero-initialised or reused: it is reset first),
 * with the trigrams of its words when grams. MEM_OK, MEM_ENOMEM. */
int mem_lexdoc_build(mem_lexdoc_t *doc, mem_lextok_t *tk, const char *text, size_t len, bool grams);
void mem_lexdoc_deinit(mem_lexdoc_t *doc);

/* ---- the index ---- */

typedef struct mem_lexidx mem_lexidx_t;

typedef struct mem_lexidx_stats {
    size_t n_rows;                           /* positions, holes and unpublished rows included */
    size_t n_published;                      /* positions whose rows may be in the statistics */
    uint64_t n_docs;                         /* N */
    uint64_t total_len[MEM_LEXIDX_N_FIELDS]; /* sum of dl over the N rows */
    size_t n_terms[MEM_LEXIDX_N_FIELDS];     /* distinct terms appended (kept until a vacuum) */
    size_t n_postings[MEM_LEXIDX_N_FIELDS];  /* (term, row) pairs, holes too until a vacuum */
    size_t bytes;                            /* heap memory held */
} mem_lexidx_stats_t;

/* An empty index; grams: keep the trigram field too (else its weight counts as 0 and a row
 * costs only its words). MEM_OK or MEM_ENOMEM. */
int mem_lexidx_new(bool grams, mem_lexidx_t **out);
bool mem_lexidx_has_grams(const mem_lexidx_t *lx);
void mem_lexidx_free(mem_lexidx_t *lx);
void mem_lexidx_get_stats(const mem_lexidx_t *lx, mem_lexidx_stats_t *out);
/* df of the term term[0..len) of field (a tokenizer term or a trigram), 0 when unknown. */
uint32_t mem_lexidx_df(const mem_lexidx_t *lx, int field, const char *term, size_t len);

/* Append the row at position n_rows with doc's terms (NULL: a row without text). active:
 * the row is neither superseded nor archived. It enters the statistics when published.
 * Writes the position to *pos. MEM_OK, MEM_ENOMEM (nothing changed). */
int mem_lexidx_append(mem_lexidx_t *lx, const mem_lexdoc_t *doc, bool active, size_t *pos);
/* Rows below n (<= n_rows) are committed: the active ones with text enter the statistics. */
void mem_lexidx_publish(mem_lexidx_t *lx, size_t n);
/* A row became active or inactive (superseded, archived, or back). */
void mem_lexidx_set_active(mem_lexidx_t *lx, size_t pos, bool active);
/* A row was deleted (a hole): it leaves the statistics for good. */
void mem_lexidx_remove(mem_lexidx_t *lx, size_t pos);
/* Build *out: old without its deleted rows, positions renumbered as mem_index_vacuum does
 * (the k-th non-deleted row of old is row k), every row published. old must have no
 * unpublished rows, else MEM_EINVAL. MEM_OK, MEM_ENOMEM. */
int mem_lexidx_vacuum(const mem_lexidx_t *old, mem_lexidx_t **out);

/* ---- queries ---- */

/* A query prepared against the index's current statistics: the terms, their weights and
 * the BM25 constants. Valid while the index is not changed (the caller's read lock). */
typedef struct mem_lexq_field {
    size_t n;       /* distinct query terms in the field */
    uint32_t *term; /* n term ids; UINT32_MAX for a term the index does not hold */
    double *w;      /* n weights: field weight * idf / S_f */
    double sat_a;   /* k1 * (1 - b) */
    double sat_c;   /* k1 * b / avgdl_f */
} mem_lexq_field_t;

typedef struct mem_lexq {
    mem_lexq_field_t f[MEM_LEXIDX_N_FIELDS];
    mem_lexparams_t params; /* as given */
    double gram_bound;      /* >= the trigram part of any row's text(d) */
    /* private: query trigram lookup (term id -> index) */
    uint32_t *_gram_key, *_gram_idx;
    size_t _gram_cap;
} mem_lexq_t;

/* Tokenise text with tk and weigh its terms and trigrams against lx. *q is freed with
 * mem_lexq_deinit (also after a failure). MEM_OK, MEM_ENOMEM. */
int mem_lexq_prepare(mem_lexq_t *q, const mem_lexidx_t *lx, mem_lextok_t *tk, const char *text,
                     size_t len, const mem_lexparams_t *params);
void mem_lexq_deinit(mem_lexq_t *q);
/* Distinct query words the index holds (0: no row can match a word). */
size_t mem_lexq_known_terms(const mem_lexq_t *q);

/* text(d) of row pos, read from the row's own term lists: the scalar reference. */
double mem_lexidx_score_row(const mem_lexidx_t *lx, const mem_lexq_t *q, size_t pos);

/* Upper bounds per block: ub[b] >= text(d) for every row d of block b (b < n_blocks), 0
 * for a block that holds no query word (no candidate); blocks are (n_rows + BLOCK_ROWS -
 * 1) / BLOCK_ROWS. ub has room for n_blocks. */
void mem_lexidx_block_bounds(const mem_lexidx_t *lx, const mem_lexq_t *q, double *ub,
                             size_t n_blocks);
/* The candidates of block b (rows holding a query word) whose text(d) can be >= need:
 * rows[0..*n) (offsets in the block, ascending) with their text scores (equal, bit for bit,
 * to mem_lexidx_score_row); a candidate is left out only when its bound is below need
 * (-HUGE_VAL: every candidate). rows and scores have room for MEM_LEXIDX_BLOCK_ROWS;
 * scores is indexed by offset. Reads q only: parts of one scan may share it. */
void mem_lexidx_score_block(const mem_lexidx_t *lx, const mem_lexq_t *q, size_t b, double need,
                            uint32_t *rows, size_t *n, double *scores);

#endif
