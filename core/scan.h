/* scan.h - scored top-K retrieval over an index (SPEC section 4)
 * SPDX-License-Identifier: MIT
 *
 * score = sim * ((1 - w) * t + w * gate), t = (1 - rb) + rb * decay(age), gate =
 * degree / max_degree. Results are ordered by score descending, ties by seq descending.
 * sim is what the match mode says (SPEC section 6):
 *   vector  sim = cos(query, row)
 *   text    sim = text(row), the normalised BM25 of core/lexidx.h, in [0, 1]; only rows
 *           holding at least one query term or trigram are candidates
 *   hybrid  sim = tw * text(row) + (1 - tw) * max(0, cos(query, row)), in [0, 1]
 *           (tw = text_weight; every row is a candidate)
 * mem_scan_reference is the oracle: a plain scalar loop over every visible row, no
 * pruning. mem_scan_run must return the same ids with scores within 1e-5.
 */
#ifndef MEM_CORE_SCAN_H
#define MEM_CORE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/decay.h"
#include "core/index.h"
#include "core/lexidx.h"
#include "core/vec.h"

#define MEM_SCAN_MAX_K 1000

/* Hybrid's text weight by default: with the built-in embedder, whose cosine is a weak
 * character-level signal, the measured best (docs/retrieval.md); with a provider's
 * semantic vectors, an even blend. */
#define MEM_SCAN_TEXT_WEIGHT_BUILTIN  0.9
#define MEM_SCAN_TEXT_WEIGHT_SEMANTIC 0.5

typedef enum mem_scan_match {
    MEM_SCAN_MATCH_VECTOR = 0,
    MEM_SCAN_MATCH_TEXT,
    MEM_SCAN_MATCH_HYBRID,
} mem_scan_match_t;

typedef struct mem_scan_params {
    const float *query;      /* dim floats, L2-normalised (unused by text) */
    size_t k;                /* 1..MEM_SCAN_MAX_K */
    int64_t origin_ms;       /* decay counts from here (Unix ms) */
    mem_decay_t decay;       /* family, half-life, shape, offset, recency bias */
    double coherence_weight; /* [0, 1] */
    int64_t since_ms;        /* inclusive; INT64_MIN when absent */
    int64_t until_ms;        /* inclusive; INT64_MAX when absent */
    int source;              /* -1 any, else the interned source id that must match (0 = none) */
    bool has_min_score;
    double min_score;
    bool include_superseded;
    bool include_archived;
    mem_scan_match_t match;  /* vector (the zero value), text or hybrid */
    const mem_lexidx_t *lex; /* text, hybrid: the lexical index, rows at idx's positions */
    const mem_lexq_t *text;  /* text, hybrid: the query prepared against lex */
    double text_weight;      /* hybrid: the text's share tw, in [0, 1] */
    /* NULL: every row; else only the rows whose bit pos is set (bit pos % 64 of word pos / 64,
     * n_visible bits): a metadata filter, applied inside the scan like the others */
    const uint64_t *row_mask;
    /* 0: no limit. Else a bound on the scan's work, in vector components: every visible
     * row of each block the scan enters counts dim + MEM_SCAN_ROW_WORK (scored,
     * sketch-skipped or filtered out alike). A scan that would exceed it stops before the block
     * that would, and returns false with no hits: nothing it found is an answer; run it again
     * without a budget for the exact one. A scan that fits returns true and exactly the unbounded
     * answer. */
    size_t work_budget;
} mem_scan_params_t;

/* What a row costs a budgeted scan besides its dim components (decay, bounds, the heap),
 * in components: without it a namespace of tiny vectors would let a budget cover millions
 * of rows. About what one row's fixed work takes, measured against the kernels' speed per
 * component at dim 384 (AVX2, int8 pre-filter). */
#define MEM_SCAN_ROW_WORK 128u

typedef struct mem_scan_hit {
    size_t pos; /* position in the index */
    int64_t seq;
    double score;
    float sim;           /* what the match mode says (above) */
    double text_score;   /* text, hybrid: text(row); vector: 0 */
    double vector_score; /* vector, hybrid: cos(query, row); text: 0 */
    double decay;        /* d */
    double gate;
    double age_s;
} mem_scan_hit_t;

/* Fill hits (room for p->k) with the top-K in result order; *n_hits results,
 * *n_scanned rows scored. Reads only rows < idx->n_visible. Never fails. */
void mem_scan_reference(const mem_index_t *idx, const mem_scan_params_t *p, mem_scan_hit_t *hits,
                        size_t *n_hits, size_t *n_scanned);
/* Same answer, fast: ops' kernels, fused decay/gate/top-K, block pruning. false: over
 * p->work_budget (no hits); always true without a budget. */
bool mem_scan_run(const mem_index_t *idx, const mem_vec_ops_t *ops, const mem_scan_params_t *p,
                  mem_scan_hit_t *hits, size_t *n_hits, size_t *n_scanned);
/* Parallel-friendly split: the same scan restricted to the blocks b with
 * b % n_parts == part (interleaved, so every part holds new and old blocks and prunes as
 * well as the whole). hits (room for p->k) gets that part's top-K in result order;
 * mem_scan_merge of the n_parts lists equals mem_scan_run. Parts share nothing: run them
 * on different threads with their own hits arrays.
 * When it pays: a part costs a thread hand-off (~10-30 us through the libuv pool, a
 * few us to an already-spinning thread) and prunes a little less (its K-th score rises
 * more slowly). Split only when one scan is long compared with the hand-off, about
 * n_visible * dim >= 1M (8k rows at dim 128, 2.7k at dim 384, ~100 us and more), and the
 * pool has idle threads; never under load, where it only adds queueing. Measured on 2
 * cores with a spinning helper thread: tcd (5000 x 128) 1.4-1.5x (bench/README.md). */
bool mem_scan_run_part(const mem_index_t *idx, const mem_vec_ops_t *ops, const mem_scan_params_t *p,
                       size_t part, size_t n_parts, mem_scan_hit_t *hits, size_t *n_hits,
                       size_t *n_scanned);
/* The same answer as mem_scan_reference restricted to the rows pos[0..n) (ascending, each
 * < n_visible): for a selective filter whose few candidate rows are known, so the rest of
 * the namespace is never read. Rows are visited block by block in order of the blocks'
 * bounds and pruned as mem_scan_run prunes; each row visited that passes the filters is
 * scored exactly (the f32 kernel of ops, as mem_scan_run does); *n_scanned counts them.
 * p->work_budget counts dim + MEM_SCAN_ROW_WORK per listed row of each block entered (text and
 * hybrid: as mem_scan_run counts); false: over it, no hits. */
bool mem_scan_rows(const mem_index_t *idx, const mem_vec_ops_t *ops, const mem_scan_params_t *p,
                   const size_t *pos, size_t n, mem_scan_hit_t *hits, size_t *n_hits,
                   size_t *n_scanned);
/* Merge n_lists lists, each sorted in result order, into the top k (out has room for k). */
void mem_scan_merge(const mem_scan_hit_t *const *lists, const size_t *counts, size_t n_lists,
                    size_t k, mem_scan_hit_t *out, size_t *n_out);
/* Result order: 1 when a ranks before b. */
bool mem_scan_hit_before(const mem_scan_hit_t *a, const mem_scan_hit_t *b);

#endif
